"""A headless run that never settles stops at --max-in-flight messages in flight, with its
transcript and summary whole (run/in_flight.py); a run that settles is not touched by the
bound; the progress line shows what is in flight. Every run here is in virtual time
(wiring.run_headless: trio's autojump MockClock): where a run stops is counted in
messages, never in seconds."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from playground.cli import main
from playground.core.config import ClusterConfig
from playground.core.engine import Engine, run_sync
from playground.record.reader import parse
from playground.run.in_flight import MAX_IN_FLIGHT, in_flight
from playground.run.progress import RunProgress
from protocol import ALGORITHMS

# The classic Bully with links that reorder never settles (docs/guide/bad-input.md): each
# late Election starts a round again, and what is in flight grows without end.
STORM = ["--headless", "--nodes", "20", "--reorder"]
BOUND = 3000


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_bound_stops_a_storm_with_its_transcript_and_summary_whole(capsys, tmp_path):
    path = tmp_path / "storm.jsonl"
    code, out, err = run(capsys, *STORM, "--max-in-flight", str(BOUND), "--transcript", str(path))
    assert code == 1
    summary = json.loads(out)  # one JSON line, whole
    stopped = summary["stopped"]
    assert stopped["reason"] == "max-in-flight" and stopped["max_in_flight"] == BOUND
    assert stopped["in_flight"] > BOUND and 0 < stopped["t"] < summary["until"] == 60
    assert err == (f"bully-tui: stopped at t={stopped['t']:g} s: {stopped['in_flight']:,} messages in flight, over the "
                   f"bound of {BOUND:,} (this run may never settle; a larger --max-in-flight raises it, 0 removes it); "
                   f"the transcript so far is in {path}\n")
    data = path.read_bytes()
    events = parse(data).events  # whole lines, every one valid
    assert data.endswith(b"\n") and events[-1].t <= stopped["t"]
    sends = sum(1 for e in events if type(e).__name__ == "SendEvent")
    assert sends == summary["messages"]["total"]  # the summary saw what the transcript holds, no more, no less
    assert main(["verify", str(path)]) == 0  # re-created event for event
    assert "identical" in capsys.readouterr().out


def test_the_bound_changes_nothing_before_it_stops_the_run(capsys, tmp_path):
    """The stopped run's transcript is the beginning of the same run without a bound, and
    a second stopped run stops at the same place."""
    stopped, again, unbounded = (tmp_path / name for name in ("a.jsonl", "b.jsonl", "c.jsonl"))
    code, out, _ = run(capsys, *STORM, "--max-in-flight", str(BOUND), "--transcript", str(stopped))
    t = json.loads(out)["stopped"]["t"]
    assert code == 1 and run(capsys, *STORM, "--max-in-flight", str(BOUND), "--transcript", str(again))[1] == out
    assert again.read_bytes() == stopped.read_bytes()
    code, out, err = run(capsys, *STORM, "--max-in-flight", "0", "--until", f"{t + 0.5:g}", "--transcript", str(unbounded))
    assert code == 0 and err == "" and "stopped" not in json.loads(out)
    whole, cut = unbounded.read_bytes(), stopped.read_bytes()
    assert len(whole) > len(cut) and whole.startswith(cut)


@pytest.mark.parametrize("args", [
    ["--nodes", "7", "--at", "20 crash 7", "--at", "40 recover 7"],
    ["--nodes", "30", "--delay", "1", "--algorithm", "garcia-molina", "--at", "10 crash 30"],
])
def test_a_run_that_settles_is_the_same_with_the_default_bound(capsys, tmp_path, args):
    bounded, unbounded = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    code, out, err = run(capsys, "--headless", *args, "--transcript", str(bounded))
    assert code == 0 and err == "" and "stopped" not in json.loads(out)
    assert run(capsys, "--headless", *args, "--max-in-flight", "0", "--transcript", str(unbounded)) == (0, out, "")
    assert bounded.read_bytes() == unbounded.read_bytes()


@pytest.mark.parametrize("value, says", [
    ("-3", "must be from 0 to"), ("abc", "must be a whole number, not 'abc'"), ("", "must be a whole number"),
    ("1.5", "must be a whole number"), ("1e6", "must be a whole number"), ("1_000", "must be a whole number"),
    ("٣", "must be a whole number"), ("1000000000001", "must be from 0 to 1000000000000"),
    ("9" * 5000, "a 5,000-digit number"),
])
def test_bad_bounds_are_one_line(capsys, tmp_path, value, says):
    path = tmp_path / "t.jsonl"
    code, out, err = run(capsys, *STORM, "--max-in-flight", value, "--transcript", str(path))
    assert (code, out) == (2, "") and err.startswith("bully-tui: error: --max-in-flight ") and says in err
    assert err.count("\n") == 1 and not path.exists()


@pytest.mark.parametrize("args, says", [
    (["--max-in-flight", "5"], "only applies with --headless"),
    (["--headless", "--real", "--max-in-flight", "5"], "only applies with --headless, in virtual time"),
    (["--headless", "--compare", "--max-in-flight", "5"], "does not use --max-in-flight"),
])
def test_the_bound_is_for_a_headless_run_in_virtual_time(capsys, args, says):
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "") and err.startswith("bully-tui: error: ") and says in err and err.count("\n") == 1


def test_progress_shows_messages_in_flight_and_the_bound_once_near(monkeypatch):
    clock = iter([0.0, 1.5] * 2)  # (each progress: made at 0 s, shown at 1.5 s)
    monkeypatch.setattr("playground.run.progress.time.monotonic", lambda: next(clock))
    engine = Engine(ALGORITHMS["classic"], range(1, 21), ClusterConfig(), 1)
    run_sync(engine, 0.2)  # the start-up's Elections are on their way
    flying = in_flight(engine.links)
    assert flying > 100
    far, near = io.StringIO(), io.StringIO()
    for out, bound in ((far, MAX_IN_FLIGHT), (near, flying + 1)):
        with RunProgress(engine, 60, Console(file=out, force_terminal=True, width=150), max_in_flight=bound) as progress:
            progress([])
    assert f"{flying:,} in flight · Ctrl-C stops" in far.getvalue()
    assert f"{flying:,} of {flying + 1:,} in flight" in near.getvalue()
