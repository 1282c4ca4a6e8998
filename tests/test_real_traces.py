"""A real node's trace and the merge of many (playground/real/traces.py, merge.py): nodes
run by hand merged into one transcript, watched live, a trace read as it grows, a damaged
or foreign line refused in one line, and the kept merge of a live view. Real processes
where a test needs them, each waited for with a deadline (tests/test_real_nodes.py)."""

from __future__ import annotations

import json

import pytest

from playground.cli import main
from playground.core.commands import Crash, Recover
from playground.core.config import ClusterConfig, InputError
from playground.real import merge as merge_module
from playground.real import state
from playground.real import traces as trace_files
from playground.real.cluster import RealCluster
from playground.real.wire import Address
from playground.record.reader import load
from playground.record.transcript import Header, header_line
from tests.test_real_nodes import (
    FAST,
    all_follow,
    free_port,
    leaders,
    merged_as_it_grows_as_all_at_once,
    progressing,
    wait_for,
)


def test_nodes_run_by_hand_are_merged_into_one_transcript_and_a_silent_kill_is_inferred(tmp_path, capsys, monkeypatch):
    """`bully-tui merge` reads only the nodes' own traces (no cluster logged the kill): a
    node that boots again was down since its last line."""
    with RealCluster((1, 2, 3), "epoch-bully", FAST, str(tmp_path)) as cluster:
        wait_for(cluster, all_follow(3, (1, 2, 3)), within=10)
        cluster.submit(Crash(3))
        wait_for(cluster, all_follow(2, (1, 2)), within=10)
        cluster.submit(Recover(3))
        wait_for(cluster, all_follow(3, (1, 2, 3)), within=10)
    merged_as_it_grows_as_all_at_once(cluster, tmp_path, monkeypatch, logged=False, skew={1: 0.4, 3: -0.25})
    folders = [str(tmp_path / str(i)) for i in (1, 2, 3)]
    out = tmp_path / "hand.jsonl"
    assert main(["merge", *folders, "-o", str(out)]) == 0
    events = load(str(out)).events
    downs = [(e.kind, e.node) for e in events if e.kind in ("crash", "recover") and e.node == 3]
    assert downs[:2] == [("crash", 3), ("recover", 3)]
    assert [e.leader for e in events if e.kind == "agreement"][-1] == 3
    capsys.readouterr()
    assert main(["merge", *folders[:2], "-o", str(tmp_path / "x.jsonl")]) == 2
    assert capsys.readouterr().err == "bully-tui: error: the traces of nodes 3 are missing (give every node's folder)\n"
    assert main(["merge", str(tmp_path), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "no node's trace in it" in capsys.readouterr().err
    trace = tmp_path / "2" / "trace.jsonl"
    lines = trace.read_text().splitlines()
    for bad, says in ((('{"seq": 0, "t": 1, "kind": "send", "src": 2, "dst": 1, "id": "5", "msg": {}, "arrives": 0, '
                        '"lamport": 1}'), "line 3: field 'id': expected int, got \"5\""),
                      ("[1, 2]", "line 3: not a node's trace line ([1, 2])"), ("{", "line 3: not JSON")):
        trace.write_text("\n".join([*lines[:2], bad, *lines[2:]]) + "\n")
        assert main(["merge", *folders, "-o", str(tmp_path / "x.jsonl")]) == 2
        assert capsys.readouterr().err == f"bully-tui: error: {trace} {says}\n"
    assert not (tmp_path / "x.jsonl").exists()


def test_a_state_file_or_a_boot_line_with_a_wrong_cell_is_one_line(tmp_path, capsys):
    from playground.core.config import InputError
    from protocol.raft import RaftStorage

    (tmp_path / "state.json").write_text(json.dumps({"algorithm": "raft", "storage": {
        "incarnation": None, "epoch": 1, "members": [1, 2], "voted_for": None}}))
    with pytest.raises(InputError, match="damaged: incarnation is null"):
        state.load(str(tmp_path), RaftStorage, "raft")
    header = json.loads(header_line(Header("classic", [1], 1, ClusterConfig(delay_min=0, delay_max=0), real=True)))
    start = '{"seq":0,"t":1.0,"kind":"start","node":1,"lamport":0}\n'
    for change, says in (({"config": {**header["config"], "coordinator_timeout": "x"}}, "field 'config.coordinator_timeout'"),
                         ({"algorithm": "paxos"}, "field 'algorithm'"),
                         ({"config": {**header["config"], "delay_max": -1}}, "field 'config'"),
                         ({"real": False}, "a transcript's header, not a real node's")):
        folder = tmp_path / "n"
        folder.mkdir(exist_ok=True)
        (folder / "trace.jsonl").write_text(json.dumps({**header, **change}) + "\n" + start)
        assert main(["merge", str(folder), "-o", str(tmp_path / "m.jsonl")]) == 2
        assert says in capsys.readouterr().err


def test_nodes_started_by_hand_are_watched_live_through_their_own_connection(tmp_path, capsys):
    """`bully-tui attach`: each node sends its trace so far, then every new line; the
    merge is the cluster's. Watching only."""
    from playground.real.attach import Attached

    with RealCluster((1, 2, 3), "epoch-bully", FAST, str(tmp_path)) as cluster:
        wait_for(cluster, all_follow(3, (1, 2, 3)), within=10)
        watching = Attached({n: Address("127.0.0.1", port) for n, port in cluster.ports.items()})
        try:
            assert (watching.algorithm, watching.ids, watching.config.timeout) == ("epoch-bully", (1, 2, 3), 0.5)
            assert leaders(watching.events()) == {n: s for n, s in leaders(cluster.events()).items()}
            cluster.submit(Crash(3))  # its connection ends: down, as far as a watcher can tell
            def seen(expected):
                return lambda: {n: s[:2] for n, s in leaders(watching.events()).items()} == expected

            def watched() -> int:
                return sum(map(len, watching.traces.values()))

            progressing(seen({1: (2, True), 2: (2, True)}), watched, why=lambda: leaders(watching.events()))
            cluster.submit(Recover(3))  # back: its whole trace again, and it leads
            progressing(seen({n: (3, True) for n in (1, 2, 3)}), watched, why=lambda: leaders(watching.events()))
        finally:
            watching.close()
    assert main(["attach", f"1@127.0.0.1:{free_port()}"]) == 2  # (no terminal: refused before connecting)
    assert "terminal" in capsys.readouterr().err
    assert main(["attach", "1@h:1,1@h:2"]) == 2
    assert capsys.readouterr().err == "bully-tui: error: the node list names node 1 twice\n"


def test_a_trace_is_read_as_it_grows_and_a_line_cut_short_by_a_kill_is_cut_off_before_the_next_run(tmp_path):
    from playground.real.traces import _cut_partial_line

    path = tmp_path / "trace.jsonl"
    header = header_line(Header("classic", [1], 1, ClusterConfig(delay_min=0, delay_max=0), real=True)).decode()
    start = '{"seq":0,"t":1.5,"kind":"start","node":1,"lamport":0}\n'
    line = '{"seq":0,"t":1.5,"kind":"election_start","node":1,"lamport":0}'
    path.write_text(header + start + line[:20])  # (a line being written, or cut by a kill)
    growing = trace_files.TraceFile(str(path))
    assert len(growing.read()) == 1  # (what has no newline yet waits)
    assert trace_files.read_trace(str(path)) == growing.lines  # (and once the node has stopped, it is left out)
    _cut_partial_line(str(path))
    assert path.read_text() == header + start
    with open(path, "a") as f:
        f.write(line + "\n")
    assert len(growing.read()) == 2 and growing.read() == trace_files.read_trace(str(path))
    with open(path, "a") as f:
        f.write("{\n")
    with pytest.raises(InputError, match=r"trace.jsonl line 4: not JSON"):
        growing.read()
    path.write_text(header[:10])
    _cut_partial_line(str(path))
    assert path.read_text() == ""


def test_a_node_writes_its_trace_as_a_transcript_is_written_and_keeps_no_times(tmp_path):
    """A node's trace is written with the json module (a node imports no orjson) and
    keeps none of its times' text (a clock's times never come again): each line reads
    as the transcript's encoder writes it, with the node's Lamport clock added."""
    from playground.core.events import DropEvent, SendEvent, TimerSetEvent
    from playground.record.codec import LineEncoder
    from protocol.garcia_molina import AreYouThere

    events = [SendEvent(0, 1795783662.2291133, 1, 2, 4294967297, AreYouThere("election"), 1795783662.7291133, "11"),
              TimerSetEvent(0, 1795783662.2291133, 1, "check", 1795783662.7291133, "11"),
              DropEvent(0, 1e-05, 4294967297, 1, 2, "lost on the link")]
    writer = trace_files.TraceWriter(str(tmp_path / "trace.jsonl"), "garcia-molina")
    for lamport, e in enumerate(events):
        writer.event(e, lamport)
    writer.close()
    transcript = LineEncoder("garcia-molina")
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [dict(json.loads(transcript(e)), lamport=i) for i, e in enumerate(events)]
    assert writer.encode._numbers == {}  # (a transcript's encoder keeps them: its times repeat)


def test_the_kept_merge_starts_again_when_a_node_sends_another_trace(monkeypatch):
    """Attached to a node that started afresh elsewhere: its trace is another one, as long
    as the first or longer; what was settled of the first is not kept."""
    monkeypatch.setattr(merge_module, "SETTLED_AFTER", 0.3)
    config = ClusterConfig(timeout=0.5, probe_interval=0.5, delay_min=0, delay_max=0)

    from playground.core.events import StartEvent, StateEvent
    from playground.real.traces import Line
    from protocol.classic import ClassicStatus

    def trace(node: int, leader: int) -> list[Line]:
        normal = ClassicStatus.NORMAL
        return [Line(100.0, node, "start", StartEvent(0, 100.0, node), 0, 0),
                *(Line(100.0 + k, node, "state", StateEvent(0, 100.0 + k, node, normal, leader, normal.role, k), k, k)
                  for k in range(1, 5))]

    live = merge_module.Merge("classic", (1, 2), config)
    first = {1: trace(1, 2), 2: trace(2, 2)}
    assert live.events((1, 2), [], first) == merge_module.merge("classic", (1, 2), config, [], first)
    assert live.settled > 0
    again = {1: trace(1, 1), 2: first[2]}  # (node 1's lines: as many, but not the ones settled)
    assert live.events((1, 2), [], again) == merge_module.merge("classic", (1, 2), config, [], again)


