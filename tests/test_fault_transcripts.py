"""Runs with the model's assumptions broken (issue 33) in transcripts: the header keeps the
faults, a lost message reads as a drop, a copy as a duplicate and a second arrival, a
by-hand session as its commands; verify re-creates them, and bad input is one line."""

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from playground.cli import main
from playground.core.command_lines import parse_command
from playground.core.commands import (
    Crash,
    DeliverMessage,
    DropMessage,
    DuplicateMessage,
    EnterByHand,
    FireTimer,
    LeaveByHand,
)
from playground.core.config import ClusterConfig, Faults, to_us
from playground.core.engine import run_sync
from playground.core.faults import clock_rate
from playground.record.export import collect
from playground.record.mermaid_shiviz import to_mermaid, to_shiviz
from playground.record.reader import load
from playground.record.recorder import Recorder
from playground.record.transcript import Header
from playground.record.verify import verify
from playground.run.compare import compare
from tests.support import at, make_engine
from tests.test_export import shiviz_problems
from tests.test_timeline import JITTER, branch_of, on_asyncio, recorded, replay, settle, shows

FAULTS = ["--loss", "0.2", "--duplicate", "0.1", "--reorder", "--drift", "0.2"]


def headless(tmp_path, capsys, *args: str) -> str:
    path = str(tmp_path / "run.jsonl")
    assert main(["--headless", "--nodes", "5", "--until", "120", "--transcript", path, *args]) == 0
    capsys.readouterr()
    return path


def lines(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_the_header_keeps_only_the_faults_turned(tmp_path, capsys):
    header = lines(headless(tmp_path, capsys, "--loss", "0.3", "--drift", "0.1"))[0]
    assert header["faults"] == {"loss": 0.3, "drift": 0.1} and "faults" not in header["config"]
    assert "faults" not in lines(headless(tmp_path, capsys, "--overwrite"))[0]


def test_a_run_with_every_fault_verifies_replays_and_exports(tmp_path, capsys):
    path = headless(tmp_path, capsys, *FAULTS, "--at", "30 lossy 1 5 1", "--at", "60 lossy 1 5 0")
    kinds = [line["kind"] for line in lines(path)[1:]]
    assert "duplicate" in kinds
    assert any(line.get("reason") == "lost on the link" for line in lines(path)[1:])
    assert main(["verify", path]) == 0
    assert "identical" in capsys.readouterr().out
    for fmt in ("svg", "mermaid", "shiviz"):
        out = str(tmp_path / f"run.{fmt}")
        assert main(["export", path, "--format", fmt, "--output", out]) == 0, fmt
    capsys.readouterr()


def test_a_by_hand_session_is_saved_read_back_and_verified(tmp_path, capsys):
    engine, events = make_engine(5, ClusterConfig(), seed=3)
    run_sync(engine, 0.2)  # (the start-up's Elections in flight)
    for command in (EnterByHand(), "deliver", "duplicate", "drop", "fire", LeaveByHand()):
        if command == "fire":
            node, name = next((i, n) for i, h in engine.hosts.items() for n in h.timers)
            command = FireTimer(node, name)
        elif isinstance(command, str):
            flight = engine.links.flights()[-1]
            command = {"deliver": DeliverMessage, "drop": DropMessage, "duplicate": DuplicateMessage}[command](flight.id)
        engine.submit(command, "user", engine.now_us + 1)
        run_sync(engine, (engine.now_us + 1) / 1e6)
    run_sync(engine, 60)
    path = tmp_path / "hand.jsonl"
    with open(path, "wb") as f:
        Recorder(f, Header("classic", list(engine.ids), 3, ClusterConfig()))(events)
    back = load(str(path))
    commands = [(e.command, e.args) for e in back.events if e.kind == "command"]
    assert [name for name, _ in commands] == ["by-hand", "deliver", "duplicate", "drop", "fire", "by-clock"]
    assert commands[4][1] == (node, name)  # a timer's name, as it was
    assert any(e.kind == "drop" and e.reason == "dropped by hand" for e in back.events)
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()


def test_a_ring_timer_of_several_words_fired_by_hand_is_saved_verified_and_written_as_a_line(tmp_path, capsys):
    """The ring's hop timers are named "hop_wait K N": fired by hand, the command keeps the
    name, the transcript reads back and verifies, and the scenario line the exhaustive
    hunt writes for it (`fire 2 hop_wait 3 1`) is read as the same command."""
    engine, events = make_engine(3, ClusterConfig(), seed=1, algorithm="ring")
    engine.submit(EnterByHand(), "user", 0)
    run_sync(engine, 0.0)
    while not any(n.startswith("hop_wait ") for h in engine.hosts.values() for n in h.timers):
        engine.submit(DeliverMessage(engine.links.flights()[0].id), "user", engine.now_us + 1)
        run_sync(engine, (engine.now_us + 1) / 1e6)
    node, name = next((i, n) for i, h in engine.hosts.items() for n in h.timers if n.startswith("hop_wait "))
    engine.submit(FireTimer(node, name), "user", engine.now_us + 1)
    run_sync(engine, (engine.now_us + 1) / 1e6)
    path = tmp_path / "ring.jsonl"
    with open(path, "wb") as f:
        Recorder(f, Header("ring", list(engine.ids), 1, ClusterConfig()))(events)
    fired = [e.args for e in load(str(path)).events if e.kind == "command" and e.command == "fire"]
    assert fired == [(node, name)] and len(name.split()) == 3
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    assert parse_command(f"fire {node} {name}".split(), (1, 2, 3)) == FireTimer(node, name)


@pytest.mark.parametrize(("args", "error"), [
    (["--loss", "1.5"], "--loss must be a probability from 0 to 1, not 1.5"),
    (["--loss", "nan"], "--loss must be a finite number, not 'nan'"),
    (["--duplicate", "-0.1"], "--duplicate must be a probability from 0 to 1, not -0.1"),
    (["--drift", "1"], "--drift must be from 0 to below 1 (each clock runs at a rate in [1 - R, 1 + R]), not 1"),
    (["--drift", "-0.2"], "--drift must be from 0 to below 1"),
    (["--reorder", "--delay", "1"], ("--reorder: needs a delay range (MIN:MAX): with a constant delay of 1 s nothing "
                                     "can overtake")),
    (["--at", "5 lossy 1 9 0.5"], "--at '5 lossy 1 9 0.5': there is no node 9 (nodes are 1..5)"),
    (["--at", "5 lossy 1 2 2"], "probability must be a probability from 0 to 1, not 2"),
    (["--at", "5 fire 1 Election!"], "fire: a timer's name is a word such as election or probe (the ring's: hop_wait K N), not 'Election!'"),
    (["--real", "--reorder", "--delay", "0:1"], ("--real does not take --reorder: TCP hands each connection's messages "
                                                 "over in the order sent, so real links reorder nothing")),
])
def test_bad_faults_are_one_line(capsys, args, error):
    assert main(["--headless", "--nodes", "5", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bully-tui: error: ") and error in err, err


@pytest.mark.parametrize(("faults", "error"), [
    ({"loss": 2}, "field 'faults': loss must be a probability from 0 to 1, not 2"),
    ({"reorder": 1}, "field 'faults.reorder': expected true or false, got 1"),
    ({"drift": "x"}, "field 'faults.drift': expected a number, got \"x\""),
    ({"jitter": 1}, "field 'faults.jitter': not a fault (faults: loss, duplicate, reorder, drift)"),
    ({}, "field 'faults': expected an object of loss, duplicate, reorder, drift, got {}"),
    ({"reorder": True}, "field 'faults.reorder': --reorder needs a delay range"),
])
def test_a_header_with_bad_faults_is_refused_in_one_line(tmp_path, capsys, faults, error):
    path = headless(tmp_path, capsys, "--delay", "1")
    rows = lines(path)
    rows[0]["faults"] = faults
    path_bad = tmp_path / "bad.jsonl"
    path_bad.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["verify", str(path_bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"line 1: {error}" in err, err


def test_a_scenario_breaks_assumptions_with_set_lines(tmp_path, capsys):
    scenario = tmp_path / "lossy.scenario"
    scenario.write_text("# lossy\nset nodes 4\nset loss 0.25\nset reorder on\nset until 30\n10 lossy 1 2 1\n")
    path = str(tmp_path / "s.jsonl")
    assert main(["--headless", "--scenario", str(scenario), "--transcript", path]) == 0
    capsys.readouterr()
    assert lines(path)[0]["faults"] == {"loss": 0.25, "reorder": True}
    scenario.write_text("set reorder maybe\n")
    assert main(["--headless", "--scenario", str(scenario)]) == 2
    assert "lossy.scenario line 1: unknown reorder 'maybe' (choose from: on, off)" in capsys.readouterr().err


def test_a_message_given_by_hand_must_be_in_flight(tmp_path):
    engine, events = make_engine(4, ClusterConfig(), seed=1)
    run_sync(engine, 3)
    engine.submit(DeliverMessage(999_999), "user", engine.now_us + 1)
    run_sync(engine, 3.1)
    assert not [e for e in events if e.kind == "command"]
    assert to_us(3.1) > engine.now_us  # (the run went on)


def test_the_exports_draw_a_lost_message_as_lost_and_a_copy_as_a_second_arrival(tmp_path, capsys):
    path = headless(tmp_path, capsys, "--loss", "0.2", "--duplicate", "0.2", "--reorder")
    events = load(path).events
    kinds = Counter(e.kind for e in events)
    assert kinds["duplicate"] and any(e.kind == "drop" and e.reason == "lost on the link" for e in events)
    diagram = collect(path)
    copies = [f for f in diagram.flights if f.label.endswith("(copy)")]
    assert len(copies) == kinds["duplicate"] and len(diagram.flights) == kinds["send"] + kinds["duplicate"]
    for f in diagram.flights:  # each flight ends where the transcript says it arrived
        assert f.ended is None or f.ended == f.due or f.dropped
    shiviz = to_shiviz(diagram)
    assert shiviz_problems(shiviz) == []
    marks = kinds["state"] + kinds["start"]
    assert shiviz.count("\n") == 2 + 2 * (kinds["send"] + kinds["deliver"] + marks)  # a copy is no node's event
    mermaid = to_mermaid(diagram)
    assert mermaid.count("->>") == kinds["deliver"] and mermaid.count("-x") == kinds["drop"]
    assert "(dropped: lost on the link)" in mermaid and "(copy)" in mermaid
    out = tmp_path / "d.svg"
    assert main(["export", path, "--format", "svg", "-o", str(out)]) == 0
    titles = [g.findtext("{http://www.w3.org/2000/svg}title") or "" for g in ET.parse(out).getroot().iter(
        "{http://www.w3.org/2000/svg}g")]
    assert sum("#" in t for t in titles) == kinds["send"] + kinds["duplicate"]
    assert any("lost on the link" in t for t in titles) and any("(copy)" in t for t in titles)


@on_asyncio
async def test_a_run_with_faults_replays_any_instant_and_branches_with_its_faults(tmp_path):
    config = JITTER.with_faults(loss=0.2, duplicate=0.2, reorder=True, drift=0.3)
    path = recorded(tmp_path, config=config, commands=tuple(at("20 crash 5", "25 lossy 1 2 1", "30 recover 5")))
    timeline = replay(path)
    for _ in timeline.re_run(slice_seconds=0):
        pass
    last = timeline.history.instants - 1
    for instant in (last // 4, last // 2, last):
        timeline.seek(instant)
        assert shows(timeline, instant)
    assert timeline.state.settings.lossy == ((1, 2, 1),)
    timeline.seek(last // 2)
    try:
        await branch_of(timeline, Crash(4), timeline.branch_path())
        await settle(timeline, 10)
    finally:
        await timeline.close()
    branch = Path(timeline.history.path)
    assert json.loads(branch.read_text().splitlines()[0])["faults"] == {"loss": 0.2, "duplicate": 0.2, "reorder": True,
                                                                       "drift": 0.3}
    assert verify(str(branch)) > 0  # (raises if it differs)


def test_compare_runs_each_algorithm_again_with_the_faults_and_says_how_it_fared(capsys):
    constant = ClusterConfig(delay_min=1, delay_max=1)
    [lossless] = compare(constant, seed=1, sizes=(4,), algorithms=("classic",))
    [both] = compare(constant.with_faults(loss=0.4), seed=1, sizes=(4,), algorithms=("classic",))
    assert lossless.with_faults is None and replace(both, with_faults=None) == lossless  # the first run unchanged
    assert both.with_faults.messages != lossless.messages
    row = both.row()["with_faults"]
    assert set(row) == {"started_up", "detect", "agree", "messages", "violations"}
    assert main(["--headless", "--compare", "--nodes", "4", "--algorithm", "classic", "--loss", "0.4"]) == 0
    out = capsys.readouterr().out
    assert "the same run with loss 0.4" in out and "with faults: agree | msgs | violations |" in out
    assert main(["--headless", "--compare", "--mutex", "--loss", "0.1"]) == 2
    assert "--compare --mutex does not take --loss" in capsys.readouterr().err


def test_real_nodes_lose_copy_and_drift_on_their_own_links_and_tcp_reorders_nothing(tmp_path, capsys):
    """Each node draws for its own messages: a lost one is dropped by its sender as it
    goes, a copy is sent twice (two deliveries of one message at the receiver), and a
    drifting node's timers run at its clock's rate. Structure, not timing: what the
    merged transcript says, however fast the machine."""
    path = tmp_path / "real.jsonl"
    assert main(["--headless", "--real", "--nodes", "3", "--timeout", "1", "--probe-interval", "0.5", "--delay", "0.02",
                 "--until", "4", "--loss", "0.3", "--duplicate", "0.3", "--drift", "0.2", "--transcript", str(path)]) == 0
    capsys.readouterr()
    transcript = load(str(path))
    assert transcript.header.real and transcript.header.config.faults == Faults(loss=0.3, duplicate=0.3, drift=0.2)
    events = transcript.events
    sends = {e.id: e for e in events if e.kind == "send"}
    lost = [e for e in events if e.kind == "drop" and e.reason == "lost on the link"]
    copies = [e for e in events if e.kind == "duplicate"]
    assert lost and copies
    assert all(e.t == sends[e.id].t for e in lost)  # dropped by its sender, as it went
    delivered = Counter(e.id for e in events if e.kind == "deliver")
    assert any(delivered[c.id] == 2 for c in copies)  # a copy is a second arrival (unless its receiver went down)
    assert all(delivered[i] <= 1 for i in set(delivered) - {c.id for c in copies})
    rates = {node: clock_rate(1, node, 0.2) for node in (1, 2, 3)}
    probes = [e for e in events if e.kind == "timer_set" and e.name == "probe"]
    assert probes and all(abs((e.fires - e.t) - 0.5 / rates[e.node]) < 0.01 for e in probes)  # (the wall times')
    assert main(["node", "--id", "1", "--listen", "127.0.0.1:1", "--state-dir", str(tmp_path), "--reorder"]) == 2
    assert "unknown option --reorder" in capsys.readouterr().err


def test_a_by_hand_command_of_a_scenario_that_cannot_run_is_a_warning_and_not_recorded(tmp_path, capsys):
    path = tmp_path / "w.jsonl"
    assert main(["--headless", "--nodes", "3", "--until", "10", "--at", "5 deliver 99999", "--at", "6 fire 2 nope",
                 "--transcript", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        ("bully-tui: warning: at 5 s, deliver 99999: message 99999 is not in flight: it has arrived or been dropped, "
         "or was never sent; nothing done"),
        "bully-tui: warning: at 6 s, fire 2 nope: node 2 has no timer nope set; nothing done"]
    assert [r["command"] for r in json.loads(captured.out)["refused"]] == ["deliver 99999", "fire 2 nope"]
    assert not [e for e in load(str(path)).events if e.kind == "command"]
    assert main(["verify", str(path)]) == 0  # (a re-run refuses them alike)
