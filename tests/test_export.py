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
from playground.record.export import Filters, collect
from playground.record.mermaid_shiviz import SHIVIZ_REGEX, to_mermaid, to_shiviz
from playground.record.reader import load
from playground.record.svg import _lane_spans, to_svg
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
    assert sum(w.count("⚠") for w in words(out.read_text())) == violations


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


def shown_texts(svg: str | ET.Element) -> list[ET.Element]:
    """The texts, each once: not the stroked copies under some, their halos."""
    root = ET.fromstring(svg) if isinstance(svg, str) else svg
    halos = {id(t) for g in root.iter(f"{SVG}g") if g.get("class") == "halo" for t in g.iter(f"{SVG}text")}
    return [text for text in root.iter(f"{SVG}text") if id(text) not in halos]


def label_boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Every text's box, estimated from the SVG alone: DejaVu Sans Mono's 0.6 em a
    character (a whole em for the wide glyphs), the anchor, the font size (11 unless
    set), the baseline at y."""
    boxes = []
    for text in shown_texts(svg):
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


# A crowded instant: at t = 10 a node joins, one leaves, one crashes and recovers, one is
# elected; at 12 the same again, and the lanes of those that left are down.
CROWDED = ["--nodes", "6", "--at", "5 crash 4", "--at", "10 join", "--at", "10 leave 2", "--at", "10 crash 6",
           "--at", "10 recover 6", "--at", "12 crash 3", "--at", "12 recover 4", "--at", "12 join",
           "--at", "12 leave 1", "--until", "30"]


def exported(tmp_path, run: list[str], *options: str) -> str:
    """The SVG export of a headless run."""
    path, out = tmp_path / "t.jsonl", tmp_path / "t.svg"
    assert main(["--headless", *run, "--transcript", str(path), "--overwrite"]) == 0
    assert main(["export", str(path), "--format", "svg", "-o", str(out), "--overwrite", *options]) == 0
    return out.read_text()


def scenario(name: str) -> list[str]:
    return ["--scenario", str(SCENARIOS / f"{name}.scenario")]


def words(svg: str) -> list[str]:
    """Every text the SVG shows (not its tooltips)."""
    return ["".join(text.itertext()) for text in shown_texts(svg)]


@pytest.mark.parametrize("run", [scenario("classic-worst-case"), scenario("split-brain-short-timeout"), CROWDED],
                         ids=["classic-worst-case", "split-brain-short-timeout", "join-leave-crash-recover-at-once"])
def test_crowded_moments_get_room_and_labels_do_not_pile_up(tmp_path, run):
    """Wherever things happen at once (a broadcast, a storm, a crash and a state change
    at one instant, two violations beginning together, a join, a leave, a crash and a
    recovery together), a label goes only where it fits, the rest is in the tooltips:
    none overlaps another (244 of 359 and 116 of 188 did when the axis was time to
    scale and every label drawn), and all are inside the drawing (the legend's last
    words were cut off at its right edge)."""
    svg = exported(tmp_path, run)
    boxes = label_boxes(svg)
    assert len(boxes) > 100 and overlapping(boxes) == 0, (overlapping(boxes), len(boxes))
    width = float(ET.fromstring(svg).get("width"))
    assert all(0 <= x0 and x1 <= width for x0, _, x1, _, _ in boxes), [b for b in boxes if b[0] < 0 or b[2] > width]
    if run is not CROWDED:  # (a storm: some names went to their tooltips)
        assert sum("Election" == b[4] for b in boxes) < svg.count("<title>Election #")


def marked(svg: str, title: str) -> str:
    """The words of the lane's mark whose tooltip begins with `title` ("5 at 16s")."""
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if (g.findtext(f"{SVG}title") or "").startswith(title):
            return "".join(g.find(f"{SVG}text").itertext())
    raise AssertionError(f"no mark {title!r}")


def test_a_lane_tells_a_recovery_and_the_state_it_comes_up_in_and_whom_it_follows(tmp_path):
    """A recovery at the instant its node reports a state showed the state only (the
    lane's last word), though the legend has ▲; and a state said "normal", not whom."""
    svg = exported(tmp_path, ["--nodes", "5", "--at", "10 crash 5", "--at", "10 elect 1", "--at", "16 recover 5",
                              "--until", "40"])
    assert marked(svg, "5 at 16s") == "▲● normal ★"  # (it leads: the ★ of the cards)
    assert marked(svg, "5 at 10s") == "✖ crashed"
    crowded = exported(tmp_path, CROWDED)
    assert marked(crowded, "6 at 10s") == "✖▲◆ election"  # crashed, recovered, electing: all at t = 10
    assert marked(crowded, "7 at 10s").startswith("▲● normal ")  # joined, and follows (or leads)


def test_times_are_told_to_the_millisecond_as_the_app_shows_them(tmp_path):
    shown = words(exported(tmp_path, ["--nodes", "5", "--at", "10 crash 5", "--until", "40"]))
    times = [w for w in shown if re.fullmatch(r"\d+\.\d+", w)]
    assert "0.000" in times and "10.000" in times and all(re.fullmatch(r"\d+\.\d{3}", t) for t in times)
    assert not [w for w in shown if re.search(r"\d\.\d{4}", w)]  # nothing like 0.566172s, nor +4.42235 s
    assert any(re.fullmatch(r"\+\d+(\.\d{1,3})? s", w) for w in shown)  # a quiet stretch cut short: +4.422 s


def test_commands_are_drawn_as_rows_at_their_instant(tmp_path):
    """A partition, a heal, a new T: what the app's `d` draws as a row of its own."""
    svg = exported(tmp_path, [*scenario("partition-classic"), "--at", "90 timeout 3", "--until", "100"])
    shown = words(svg)
    assert "scenario: partition 1 2 3" in shown and "scenario: heal" in shown and "at: timeout 3" in shown
    assert svg.count('stroke-dasharray="1,3"') == 3  # a dotted row across the lanes each
    crowded = words(exported(tmp_path, CROWDED))
    assert "at: join 7 · leave 2 · crash 6 · recover 6" in crowded  # one instant's, one row


def test_one_node_is_drawn_with_the_nodes_it_exchanged_messages_with(tmp_path):
    """The app's `D` with the log filtered to node 3 (`f`) passes that one node: it drew
    one lane and no arrow (the messages between 3 and 3). Now, as `d` draws it: 3's
    lane, the lanes of the nodes its messages went to or came from, and those messages;
    several nodes keep the messages between them."""
    path = tmp_path / "ring.jsonl"
    assert main(["--headless", "--algorithm", "ring", "--nodes", "7", "--until", "30", "--transcript", str(path)]) == 0
    one = collect(str(path), Filters(0, 30, (3,), (), detector=False))  # as the app's D makes it
    assert one.ids == (2, 3, 4) and one.flights and all(3 in (f.src, f.dst) for f in one.flights)
    assert {f.src for f in one.flights} == {2, 3, 4} and {m.node for m in one.marks} == {2, 3, 4}
    svg = to_svg(one)
    assert svg.count("<line x1") > len(one.flights) and svg.count("<title>Election #") > 0
    two = collect(str(path), Filters(ranks=(3, 4)))
    assert two.ids == (3, 4) and two.flights and all({f.src, f.dst} == {3, 4} for f in two.flights)


def test_a_lane_is_down_after_a_leave_as_after_a_crash(tmp_path):
    """`leave 2` then `crash 3`: both lanes dashed from then on (by the rule the app's
    `d` follows, core/events.py), and a newcomer's lane dashed until it joins."""
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--algorithm", "epoch-bully", "--nodes", "4", "--at", "5 leave 2", "--at", "8 crash 3",
                 "--at", "12 join", "--until", "20", "--transcript", str(path)]) == 0
    spans = _lane_spans(collect(str(path)))
    assert [(a, b, up) for a, b, up in spans[2]] == [(0, 5, True), (5, spans[2][-1][1], False)]
    assert spans[3][-1][0] == 8 and not spans[3][-1][2] and spans[1][-1][2] and spans[4][-1][2]
    assert [up for _, _, up in spans[5]] == [False, True] and spans[5][0][1] == 12
    late = collect(str(path), Filters(start=9))  # the window opens with 2 and 3 already down
    assert late.down == {2, 3, 5} and [up for _, _, up in _lane_spans(late)[3]] == [False]


def test_the_drawings_height_follows_the_events_not_the_time_span(tmp_path):
    """Two events 10^11 s apart (a legitimate run) draw as two instants and a cut that
    says how long it was, not as 10^11 seconds to scale (which ran out of memory)."""
    path, out = tmp_path / "far.jsonl", tmp_path / "far.svg"
    assert main(["--headless", "--nodes", "3", "--probe-interval", "0", "--at", "100000000000 elect 1",
                 "--until", "1e11", "--transcript", str(path)]) == 0
    assert main(["export", str(path), "--format", "svg", "-o", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert int(root.get("height")) < 2000 and "+99999999997.313 s" in words(out.read_text())


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
    monkeypatch.setattr("playground.record.mermaid_shiviz.SHIVIZ_ENTRIES", 1000)
    assert main(["export", path, "--format", "shiviz", "-o", str(tmp_path / "big.log")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "choose fewer with --nodes, --from and --to, or --types" in err
    assert not (tmp_path / "big.log").exists()
    assert main(["export", path, "--format", "shiviz", "--nodes", "1,2", "--to", "5", "-o", str(tmp_path / "few.log")]) == 0


def test_a_stay_in_the_critical_section_is_a_bar_on_its_lane_and_every_format_takes_cs_lines(tmp_path):
    path = tmp_path / "cs.jsonl"
    assert main(["--headless", "--scenario", "scenarios/mutex-central-leader-crash.scenario",
                 "--transcript", str(path)]) == 0
    diagram = collect(str(path))
    assert diagram.inside == [(2, 12.0, 72.0), (3, 42.0, 100.0)]  # (each holds it 60 s; the run ends at 100)
    assert [m.word for m in diagram.marks if m.kind == "cs" and m.node == 2] == ["wants CS", "in CS", "out of CS"]
    svg = to_svg(diagram)
    assert "2 in the critical section from 12s to 72s" in svg and "3 in the critical section from 42s to 100s" in svg
    assert shiviz_problems(to_shiviz(diagram)) == [] and "in CS" in to_svg(collect(str(path), Filters(start=30)))
    window = collect(str(path), Filters(start=30, stop=50))
    assert [(node, a) for node, a, _ in window.inside] == [(2, 30), (3, 42.0)]  # clipped to the window


def test_a_window_after_the_last_event_is_one_empty_instant(tmp_path):
    """`--from 1000` on a run that ended at 30 drew the lanes from 1000 back up to the
    last delivery before it (17 s), with a cut of "+983 s": deliveries before the window
    moved its end."""
    path = recorded(tmp_path, "classic")
    late = collect(str(path), Filters(start=1000))
    assert (late.start, late.stop) == (1000, 1000) and not late.flights and not late.marks
    shown = words(to_svg(late))
    assert [w for w in shown if re.fullmatch(r"\d+\.\d{3}", w)] == ["1000.000"] and not [w for w in shown if w[0] == "+"]


def test_every_format_says_the_rule_that_made_a_send_and_a_change_of_state(tmp_path):
    """Mermaid's arrows and notes and ShiViz's events name the rule's key; the SVG's tooltips
    its sentence too. A transcript from before rules (version 3) names none."""
    diagram = collect(str(recorded(tmp_path, "classic")))
    mermaid = to_mermaid(diagram)
    assert "    n1->>n2: Election · rule 1\n" in mermaid and "    Note over n1: election, leader none · rule 1\n" in mermaid
    assert "    n2->>n1: Answer · rule 4\n" in mermaid
    shiviz = to_shiviz(diagram)
    assert "t=0 send Election #0 to 2 · rule 1\n" in shiviz and "t=0 election, leader none · rule 1\n" in shiviz
    assert shiviz_problems(shiviz) == []
    svg = to_svg(diagram)
    assert "<title>Election #0 1→2, sent at 0s, delivered at 0.640891s; sent by rule 1: Start, or the failure detector fires: " in svg
    assert "election, leader none · rule 1: Start, or the failure detector fires: " in svg
    old = collect(str(Path(__file__).parent / "transcripts" / "v3-classic-central.jsonl"))
    assert not any(" · rule " in text or " · central " in text for text in (to_mermaid(old), to_shiviz(old)))
    assert "sent by" not in to_svg(old)
