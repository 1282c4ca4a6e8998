"""The SVG export as renderers draw it: words on halos every renderer shows (cairosvg
ignores `paint-order`), a legend with each kind of line, a message cut by `--to` that
says when it arrives, a violation band whole across a quiet stretch cut short. The
renderer tests render to PNG with cairosvg and resvg, each skipped, saying why, where
it is not installed."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from playground.cli import main
from playground.record.export import Filters, collect
from playground.record.reader import load
from playground.record.svg import to_svg
from tests.test_export import SVG, exported, label_boxes, shown_texts

# Node 1 and 2 cut off at 5; 2 leads them until the heal at 30: an SLE1 band across a
# quiet stretch that is cut short (+18.666 s).
BAND_ACROSS_A_CUT = ["--nodes", "5", "--probe-interval", "0", "--at", "5 partition 1,2", "--at", "5 elect 1",
                     "--at", "30 heal", "--until", "40"]


def test_every_word_is_drawn_on_a_halo_that_every_renderer_draws(tmp_path):
    """Labels had their rim from `paint-order: stroke`, which cairosvg does not draw: it
    painted the paper's colour over the letters, and every label vanished. Now the words
    that lines pass under (right of the time column, below the lanes' names) have halos:
    the same words stroked in the paper's colour, drawn before them; no text is stroked
    itself."""
    svg = exported(tmp_path, ["--nodes", "4", "--at", "10 crash 4", "--at", "16 recover 4", "--until", "30"])
    assert "paint-order" not in svg and "<style" not in svg
    root = ET.fromstring(svg)
    background = root.find(f"{SVG}rect").get("fill")
    [group] = [g for g in root.iter(f"{SVG}g") if g.get("class") == "halo"]
    assert group.get("stroke") == background and float(group.get("stroke-width")) >= 2
    where = ("x", "y", "text-anchor", "font-size")

    def key(t):
        return tuple(t.get(a) for a in where), "".join(t.itertext())

    halos = [key(t) for t in group.iter(f"{SVG}text")]
    shown = shown_texts(root)
    assert all(t.get("stroke") is None for t in shown) and len(halos) > 30
    everything = list(root.iter())
    after = {key(t) for t in shown if everything.index(t) > everything.index(group)}
    assert set(halos) <= after  # each halo's words are drawn, over it
    names = [t for t in shown if t.get("font-weight") == "bold"]
    left = float(next(t for t in shown if t.text == "t (s)").get("x")) + 8
    below_the_names = [t for t in shown if float(t.get("y")) > float(names[0].get("y")) + 8
                       and float(t.get("x")) > left]  # where the lanes and arrows are
    assert below_the_names and all(key(t) in set(halos) for t in below_the_names)


def test_the_legend_has_each_kind_of_line_and_a_message_cut_by_to_says_when_it_arrives(tmp_path):
    """Dotted lines (a drop, a message cut by --to) were in no legend; a message sent
    before --to and delivered after was "in flight", though the transcript has its
    delivery. Now the legend shows a piece of each line, and the message says when it
    arrives (or is dropped), going as far as it got by the view's end."""
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--nodes", "4", "--delay", "1", "--probe-interval", "0", "--at", "10 crash 4",
                 "--at", "10 elect 1", "--until", "30", "--transcript", str(path)]) == 0
    diagram = collect(str(path), Filters(start=9, stop=11.5))
    assert diagram.stop == 11.5  # the view ends where the window does
    cut = [f for f in diagram.flights if f.ended is None]
    assert cut and all(f.later is not None and f.later[0] > 11.5 for f in cut)
    delivered = next(f for f in cut if not f.later[1])
    events = load(str(path)).events
    assert any(e.kind == "deliver" and e.id == delivered.id and e.t == delivered.later[0] for e in events)
    svg = to_svg(diagram)
    assert "in flight" not in svg
    assert f"#{delivered.id} " in svg and f"arrives at t={delivered.later[0]:g}s (after this view)" in svg
    root = ET.fromstring(svg)
    dotted = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray") == "2,3"]
    legend_y = {float(t.get("y")) for t in shown_texts(svg)
                if "".join(t.itertext()) in ("dropped: at a down node, or lost", "arrives after this view, or never")}
    assert len(legend_y) >= 1 and sum(float(line.get("y1")) + 4 in legend_y for line in dotted) == 2
    untold = collect(str(path), Filters(start=9))  # the whole run: what never arrived is told so
    assert all(f.later is None for f in untold.flights) and "in flight" not in to_svg(untold)


def cut_gaps(root: ET.Element) -> list[ET.Element]:
    """The gaps that quiet stretches cut short draw across the lanes."""
    return [r for g in root.iter(f"{SVG}g") if "cut short" in (g.findtext(f"{SVG}title") or "") for r in g.iter(f"{SVG}rect")]


def test_a_violation_band_goes_whole_across_a_quiet_stretch_cut_short(tmp_path):
    """The gap that a cut ("+18.666 s") draws across the lanes chopped the red band in
    two. Now the band's tint is drawn again over the gap, between its edges."""
    svg = exported(tmp_path, BAND_ACROSS_A_CUT, "--from", "4")
    root = ET.fromstring(svg)
    error = next(r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("fill-opacity") == "0.10")
    rects = list(root.iter(f"{SVG}rect"))
    gaps = cut_gaps(root)
    bands = [r for r in rects if r.get("fill") == error and r.get("stroke") == error]
    assert gaps and bands

    def box(r):
        x, y = float(r.get("x")), float(r.get("y"))
        return x, y, x + float(r.get("width")), y + float(r.get("height"))

    crossed = 0
    for gap in gaps:
        g0, g1, g2, g3 = box(gap)
        for band in bands:
            b0, b1, _, b3 = box(band)
            if b1 < g1 and g3 < b3:  # the band runs through this gap: its tint is drawn over it, after it
                crossed += 1
                after = rects[rects.index(gap) + 1:]
                assert any(r.get("fill") == error and box(r)[0] <= g0 and box(r)[2] >= g2 and box(r)[1] <= g1
                           and box(r)[3] >= g3 for r in after), "the band is chopped by the gap"
                assert g0 > b0  # its left edge is not covered
    assert crossed


def rendered(svg: str, renderer: str):
    """The SVG as an image, by one renderer: skipped, saying why, where it is missing."""
    image = pytest.importorskip("PIL.Image", reason="Pillow is not installed: the rendered PNGs cannot be read here")
    try:
        if renderer == "cairosvg":
            import cairosvg
            png = cairosvg.svg2png(bytestring=svg.encode())
        else:
            import resvg_py
            png = bytes(resvg_py.svg_to_bytes(svg_string=svg))
    except (ImportError, OSError) as e:  # (cairosvg needs the cairo library too)
        package = "cairosvg" if renderer == "cairosvg" else "resvg-py"
        pytest.skip(f"{renderer} is not installed here ({e}): `pip install {package}` renders the export with it")
    return image.open(io.BytesIO(png)).convert("RGB")


def inked(picture, box, paper) -> int:
    """How many pixels in `box` are far from the paper's colour."""
    x0, y0, x1, y1 = (round(v) for v in box[:4])
    return sum(1 for x in range(x0, x1) for y in range(y0, y1)
               if sum(abs(a - b) for a, b in zip(picture.getpixel((x, y)), paper)) > 150)


@pytest.mark.parametrize("renderer", ["cairosvg", "resvg"])
def test_the_words_show_and_the_band_is_whole_in_each_renderer(tmp_path, renderer):
    """Rendered to PNG: words plain and on halos have ink where they are drawn (under
    cairosvg they had none: the paper's colour was painted over them), and inside the
    band, the gap of a cut has the band's tint, not the paper's."""
    svg = exported(tmp_path, BAND_ACROSS_A_CUT, "--from", "4")
    picture = rendered(svg, renderer)
    root = ET.fromstring(svg)
    paper = tuple(int(root.find(f"{SVG}rect").get("fill")[k:k + 2], 16) for k in (1, 3, 5))
    boxes = {b[4]: b for b in label_boxes(svg)}
    note = next(words for words in boxes if words.startswith("⚠ SLE1"))  # (on a halo)
    mark = next(words for words in boxes if "normal" in words)  # (a lane's, on a halo)
    for name in ("hover for details", "t (s)", note, mark):
        assert inked(picture, boxes[name], paper) > 10, (renderer, name)
    gap = cut_gaps(root)[0]
    x, y = float(gap.get("x")) + 20, float(gap.get("y")) + 6  # (between the first lanes, in the gap)
    above = picture.getpixel((round(x), round(y) - 20))  # the band, above the gap
    assert above != picture.getpixel((2, 2))  # (tinted: not the paper)
    assert sum(abs(a - b) for a, b in zip(picture.getpixel((round(x), round(y))), above)) < 12, renderer
