"""`bully-tui export`: SVG, Mermaid and ShiViz from transcripts of every algorithm, with
and without UUID ids; ShiViz's own checks, as a checker of ours (issue "See the causality")."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from playground.cli import main
from playground.record.export import SHIVIZ_REGEX, Filters, collect, to_mermaid, to_shiviz
from playground.record.reader import load
from protocol import ALGORITHMS

HOST_LINE = re.compile(r"(?P<host>\S*) (?P<clock>\{.*\})")


def shiviz_problems(text: str) -> list[str]:
    """What ShiViz would refuse in a log of its default format: a host missing from its
    own clock, a host's own entries not counting 1, 2, 3 with no gap, a clock naming a
    host that has no events, or more events of a host than it has."""
    lines = text.split("\n")
    if lines[0] != SHIVIZ_REGEX or lines[1] != "" or lines[-1] != "":
        return ["lines 1 and 2 are the default expression and an empty delimiter; the file ends with a newline"]
    body = lines[2:-1]
    if len(body) % 2:
        return ["an event line without its host line"]
    problems, own, clocks = [], Counter(), []
    for k in range(0, len(body), 2):
        match = HOST_LINE.fullmatch(body[k + 1])
        if match is None:
            problems.append(f"line {k + 4}: not `host {{clock}}`")
            continue
        host, clock = match["host"], json.loads(match["clock"])
        own[host] += 1
        if clock.get(host) != own[host]:
            problems.append(f"line {k + 4}: {host}'s own entry is {clock.get(host)}, its event number {own[host]}")
        clocks.append((k + 4, clock))
    for line, clock in clocks:
        for host, n in clock.items():
            if host not in own:
                problems.append(f"line {line}: names {host}, which has no events")
            elif n > own[host]:
                problems.append(f"line {line}: names event {n} of {host}, which has {own[host]}")
    return problems


def test_the_checker_finds_each_kind_of_problem():
    good = f"{SHIVIZ_REGEX}\n\na\nn1 {{\"n1\": 1}}\nb\nn2 {{\"n2\": 1, \"n1\": 1}}\n"
    assert shiviz_problems(good) == []
    assert "own entry" in shiviz_problems(good.replace('{"n1": 1}', '{"n1": 2}'))[0]  # a gap
    assert "own entry" in shiviz_problems(good.replace('{"n2": 1, "n1": 1}', '{"n1": 1}'))[0]  # not in its own clock
    assert "no events" in shiviz_problems(good.replace('"n1": 1}\n', '"n1": 1, "n9": 1}\n'))[0]
    assert "which has 1" in shiviz_problems(good.replace('"n2": 1, "n1": 1', '"n2": 1, "n1": 3'))[0]


def recorded(tmp_path, algorithm: str, ids: str = "seq", nodes: int = 5):
    path = tmp_path / f"{algorithm}-{ids}.jsonl"
    assert main(["--headless", "--algorithm", algorithm, "--ids", ids, "--nodes", str(nodes), "--until", "70",
                 "--at", "20 crash 5", "--at", "25 elect 1", "--at", "40 recover 5", "--transcript", str(path)]) == 0
    return path


@pytest.mark.parametrize("ids", ["seq", "uuid"])
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_format_from_every_algorithm(tmp_path, algorithm, ids):
    path = recorded(tmp_path, algorithm, ids)
    events = load(str(path)).events
    kinds = Counter(e.kind for e in events)
    diagram = collect(str(path))
    # ShiViz: its checks pass; one event per send, delivery and lane mark.
    shiviz = to_shiviz(diagram)
    assert shiviz_problems(shiviz) == []
    marks = kinds["state"] + kinds["crash"] + kinds["recover"] + kinds["start"]
    assert shiviz.count("\n") == 2 + 2 * (kinds["send"] + kinds["deliver"] + marks)
    # Mermaid: participants in id order, one arrow per message that arrived or was dropped.
    mermaid = to_mermaid(diagram).splitlines()
    assert mermaid[0] == "sequenceDiagram" and len([m for m in mermaid if "participant" in m]) == 5
    assert sum("->>" in m for m in mermaid) == kinds["deliver"] and sum("-x" in m for m in mermaid) == kinds["drop"]
    assert not any(";" in m or "#" in m for m in mermaid)
    # SVG: well-formed, one titled group per message, the violations as bands.
    out = tmp_path / "d.svg"
    assert main(["export", str(path), "--format", "svg", "-o", str(out)]) == 0
    root = ET.parse(out).getroot()
    groups = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "#" in (g.findtext("{http://www.w3.org/2000/svg}title") or "")]
    assert len(groups) == kinds["send"]
    violations = sum(1 for e in events if e.kind == "violation" and e.phase == "begin")
    assert out.read_text().count("⚠") == violations


def test_filters_keep_what_they_name(tmp_path, capsys):
    path = str(recorded(tmp_path, "classic"))
    ids = load(path).header.nodes
    two = collect(path, Filters(ranks=(1, 5)))
    assert two.ids == (ids[0], ids[4]) and two.flights
    assert all({f.src, f.dst} <= {ids[0], ids[4]} for f in two.flights)
    assert all(m.node in two.ids for m in two.marks)
    elections = collect(path, Filters(types=("election",)))  # any case
    assert {f.label for f in elections.flights} == {"Election"}
    window = collect(path, Filters(start=20, stop=30))
    assert window.flights and all(20 <= f.sent <= 30 for f in window.flights)
    assert shiviz_problems(to_shiviz(window)) == [] and shiviz_problems(to_shiviz(two)) == []
    assert main(["export", path, "--format", "mermaid", "--nodes", "1,5", "--types", "Coordinator"]) == 0
    printed = capsys.readouterr().out
    assert "n2->>n1: Coordinator" in printed and "Election" not in printed


@pytest.mark.parametrize("args, expected", [
    (["--format", "png"], "unknown --format 'png' (choose from: svg, mermaid, shiviz)"),
    (["--format", "svg", "--nodes", "1,9"], "--nodes: there is no node 9 (the transcript has 5, by rank 1 to 5)"),
    (["--format", "svg", "--nodes", "1,,2"], "--nodes must be a comma-separated list"),
    (["--format", "svg", "--types", "Ldr"], "--types: classic has no message 'Ldr' (its messages: Election, Answer"),
    (["--format", "svg", "--from", "nan"], "--from"),
    (["--format", "svg", "--from", "9", "--to", "3"], "--to (3) is before --from (9)"),
])
def test_bad_export_options_get_one_line(tmp_path, capsys, args, expected):
    path = str(recorded(tmp_path, "classic"))
    assert main(["export", path, *args]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1, err


def test_an_export_never_replaces_a_file_unasked_and_is_written_whole(tmp_path, capsys):
    path = str(recorded(tmp_path, "classic"))
    mine = tmp_path / "notes.md"
    mine.write_text("my notes")
    assert main(["export", path, "--format", "mermaid", "-o", str(mine)]) == 2
    assert "already exists" in capsys.readouterr().err and mine.read_text() == "my notes"
    assert main(["export", path, "--format", "mermaid", "-o", str(mine), "--overwrite"]) == 0
    assert mine.read_text().startswith("sequenceDiagram") and not list(tmp_path.glob(".bully-*"))
    assert main(["export", path, "--format", "svg", "-o", str(tmp_path)]) == 2  # a directory
    assert main(["export", str(tmp_path / "none.jsonl"), "--format", "svg"]) == 2


# --- a diagram a person can read ---------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"
SCENARIOS = Path(__file__).parent.parent / "scenarios"


def label_boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Every text's box, estimated from the SVG alone: DejaVu Sans Mono's 0.6 em a
    character (a whole em for the wide glyphs), the anchor, the font size (11 unless
    set), the baseline at y."""
    boxes = []
    for text in ET.fromstring(svg).iter(f"{SVG}text"):
        words = "".join(text.itertext())
        size = float(text.get("font-size", 11))
        width = sum(0.6 if ch.isascii() else 1.0 for ch in words) * size
        x, y = float(text.get("x")), float(text.get("y"))
        x0 = {"end": x - width, "middle": x - width / 2}.get(text.get("text-anchor"), x)
        boxes.append((x0, y - 0.8 * size, x0 + width, y + 0.2 * size, words))
    return boxes


def overlapping(boxes) -> int:
    """How many boxes overlap another."""
    hit = set()
    for i, (a0, b0, a1, b1, _) in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            c0, d0, c1, d1, _ = boxes[j]
            if a0 < c1 and c0 < a1 and b0 < d1 and d0 < b1:
                hit.update((i, j))
    return len(hit)


def test_the_estimate_sees_labels_on_top_of_each_other():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg"><text x="0" y="10">Coordinator</text>'
           '<text x="40" y="12">Coordinator</text><text x="0" y="40">alone</text></svg>')
    assert overlapping(label_boxes(svg)) == 2


@pytest.mark.parametrize("scenario", ["classic-worst-case", "split-brain-short-timeout"])
def test_crowded_moments_get_room_and_labels_do_not_pile_up(tmp_path, scenario):
    """Wherever things happen at once (a broadcast, a storm, a crash and a state change
    at one instant, two violations beginning together), a label goes only where it
    fits, the rest is in the tooltips: at most 2% of the labels overlap another (it was
    244 of 359 and 116 of 188 when the axis was time to scale and every label drawn)."""
    path, out = tmp_path / "t.jsonl", tmp_path / "t.svg"
    assert main(["--headless", "--scenario", str(SCENARIOS / f"{scenario}.scenario"), "--transcript", str(path)]) == 0
    assert main(["export", str(path), "--format", "svg", "-o", str(out)]) == 0
    boxes = label_boxes(out.read_text())
    assert len(boxes) > 100 and overlapping(boxes) <= 0.02 * len(boxes), (overlapping(boxes), len(boxes))
    kinds = Counter(e.kind for e in load(str(path)).events)
    assert sum("Election" == b[4] for b in boxes) < kinds["send"]  # some names went to their tooltips


def test_the_drawings_height_follows_the_events_not_the_time_span(tmp_path):
    """Two events 10^11 s apart (a legitimate run) draw as two instants and a cut that
    says how long it was, not as 10^11 seconds to scale (which ran out of memory)."""
    path, out = tmp_path / "far.jsonl", tmp_path / "far.svg"
    assert main(["--headless", "--nodes", "3", "--probe-interval", "0", "--at", "100000000000 elect 1",
                 "--until", "1e11", "--transcript", str(path)]) == 0
    assert main(["export", str(path), "--format", "svg", "-o", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert int(root.get("height")) < 2000 and "+1e+11 s" in out.read_text()


def test_hidden_detector_traffic_stays_hidden(tmp_path):
    path = str(recorded(tmp_path, "classic"))
    kinds = {f.role for f in collect(path).flights}
    assert "detector" in kinds and "detector" not in {f.role for f in collect(path, Filters(detector=False)).flights}


def test_mermaid_tells_a_violation_after_the_events_of_its_instant(tmp_path):
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--scenario", str(SCENARIOS / "split-brain-short-timeout.scenario"),
                 "--transcript", str(path)]) == 0
    lines = to_mermaid(collect(str(path))).splitlines()
    first = next(i for i, line in enumerate(lines) if "⚠ split brain" in line)
    # the state change that made the second leader comes before the note that reports it
    assert any("leader 4" in line or "leader 5" in line for line in lines[first - 3:first])


def test_a_shiviz_log_too_big_to_draw_is_refused_with_a_way_to_narrow_it(tmp_path, capsys, monkeypatch):
    """Every ShiViz line carries its node's whole vector clock: events x nodes entries (a
    storm at N = 400 made a 4.2 GB file). Past a bound, one line says how to narrow it."""
    path = str(recorded(tmp_path, "classic"))
    monkeypatch.setattr("playground.record.export.SHIVIZ_ENTRIES", 1000)
    assert main(["export", path, "--format", "shiviz", "-o", str(tmp_path / "big.log")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "choose fewer with --nodes, --from and --to, or --types" in err
    assert not (tmp_path / "big.log").exists()
    assert main(["export", path, "--format", "shiviz", "--nodes", "1,2", "--to", "5", "-o", str(tmp_path / "few.log")]) == 0
