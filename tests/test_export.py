"""`bully-tui export`: SVG, Mermaid and ShiViz from transcripts of every algorithm, with
and without UUID ids; ShiViz's own checks, as a checker of ours (issue "See the causality")."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from playground.cli import main
from playground.export import SHIVIZ_REGEX, Filters, collect, to_mermaid, to_shiviz
from playground.transcript import load
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
