"""`bully-tui verify FILE`: a transcript's header and commands re-create every event."""

import json
from pathlib import Path

import pytest

from playground.cli import main
from protocol import ALGORITHMS

COMMANDS = ["--at", "20 crash 5", "--at", "21 elect 1", "--at", "30 recover 5", "--at", "31 timeout 3",
            "--at", "35 delay 0.2:0.8", "--at", "40 crash 2"]


def record(tmp_path, *args: str) -> str:
    path = str(tmp_path / "t.jsonl")
    assert main(["--headless", "--nodes", "5", "--until", "70", "--transcript", path, *args]) == 0
    return path


def verify(capsys, path: str) -> tuple[int, str, str]:
    code = main(["verify", path])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("ids", ["seq", "uuid"])
@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_every_algorithms_transcript_is_identical_when_re_created(tmp_path, capsys, algorithm, ids):
    path = record(tmp_path, "--algorithm", algorithm, "--ids", ids, *COMMANDS)
    capsys.readouterr()
    lines = open(path).read().count("\n") - 1
    code, out, err = verify(capsys, path)
    assert (code, out, err) == (0, f"{path}: identical, {lines:,} events\n", "")


def test_a_changed_field_is_named_with_its_line(tmp_path, capsys):
    path = record(tmp_path, *COMMANDS)
    capsys.readouterr()
    lines = open(path).read().splitlines()
    n = next(i for i, line in enumerate(lines) if i >= 100 and '"kind":"deliver"' in line)
    event = json.loads(lines[n])
    lines[n] = json.dumps({**event, "id": event["id"] + 1000}, separators=(",", ":"))
    open(path, "w").write("\n".join(lines) + "\n")
    code, _, err = verify(capsys, path)
    assert (code, err) == (1, f"bully-tui: different: {path} line {n + 1}: field 'id': the transcript has "
                              f"{event['id'] + 1000}, the re-run has {event['id']}\n")


def test_a_transcript_that_stops_early_is_the_re_runs_beginning(tmp_path, capsys):
    path = record(tmp_path)
    capsys.readouterr()
    lines = open(path).read().splitlines(keepends=True)
    open(path, "w").write("".join(lines[:200]))
    assert verify(capsys, path)[:2] == (0, f"{path}: identical, 199 events\n")


def test_malformed_or_old_or_missing_exits_2_with_one_line(tmp_path, capsys):
    path = record(tmp_path)
    capsys.readouterr()
    with open(path, "a") as f:
        f.write('{"seq": "x"}\n')
    code, _, err = verify(capsys, path)
    assert code == 2 and err.count("\n") == 1 and "line" in err
    old = tmp_path / "v2.jsonl"
    header = json.loads(open(path).readline())
    old.write_text(json.dumps({**header, "version": 2}) + "\n")
    code, _, err = verify(capsys, str(old))
    assert code == 2 and "is a version 2 transcript: verify re-creates runs of this program (versions 3 and 4)" in err
    assert verify(capsys, str(tmp_path / "none.jsonl"))[0] == 2
    assert main(["verify"]) == 2 and "usage: bully-tui verify FILE" in capsys.readouterr().err


V3_TRANSCRIPT = Path(__file__).parent / "transcripts" / "v3-classic-central.jsonl"  # recorded by 40fff26


def test_a_v3_transcript_is_re_created_without_the_rule_and_a_change_to_it_is_found(tmp_path, capsys):
    """Version 4 only added each line's rule: a run recorded as version 3 is re-created by
    this program, and compared with its lines as version 3 wrote them."""
    code, out, _ = verify(capsys, str(V3_TRANSCRIPT))
    assert code == 0 and "identical, 364 events" in out
    changed = tmp_path / "v3.jsonl"
    lines = V3_TRANSCRIPT.read_text().splitlines(keepends=True)
    n = next(k for k, line in enumerate(lines) if '"kind":"send"' in line and '"arrives"' in line)
    lines[n] = lines[n].replace('"arrives":', '"arrives":1', 1)
    changed.write_text("".join(lines))
    code, _, err = verify(capsys, str(changed))
    assert code == 1 and f"line {n + 1}: field 'arrives'" in err
