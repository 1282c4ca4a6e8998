"""Mutual exclusion in whole runs (the engine, the trio cluster, transcripts): the
workload (host rule 7), the monitor's rule 8, what the lecture's failures cost, the
transcript and its checks, the command line."""

from __future__ import annotations

import json

import pytest

from playground.cli import main
from playground.core.config import ClusterConfig, Workload
from playground.core.cs_entries import CsEntries
from playground.core.events import CrashEvent, CsEvent, SendEvent, ViolationEvent
from playground.run.session import Session
from playground.run.wiring import run_headless
from protocol import MUTEXES, CsState
from protocol.ricart_agrawala import RicartAgrawala
from tests.support import at, recorded, run

JITTER = ClusterConfig(delay_min=0.3, delay_max=1.2)
BUSY = Workload(think=(0.5, 4.0), hold=(0.2, 2.0))


def holders_over_time(events) -> list[int]:
    """How many up nodes hold the CS after each event (crashes let go of it)."""
    holding: set[int] = set()
    counts = []
    for e in events:
        if type(e) is CsEvent:
            (holding.add if e.state is CsState.HELD else holding.discard)(e.node)
        elif e.kind in ("crash", "leave"):
            holding.discard(e.node)
        counts.append(len(holding))
    return counts


@pytest.mark.parametrize("mutex", sorted(MUTEXES))
def test_without_faults_many_enter_and_never_two_at_once(mutex):
    engine, events = run(6, 300, JITTER, algorithm=f"classic+{mutex}", workload=BUSY)
    entries = [e for e in events if type(e) is CsEvent and e.state is CsState.HELD]
    assert len(entries) >= 20 and len({e.node for e in entries}) == 6  # everyone got in, many times
    assert max(holders_over_time(events)) == 1
    assert not [e for e in events if type(e) is ViolationEvent]  # neither two inside nor anyone stuck
    measured = CsEntries.of(MUTEXES[mutex])
    for e in events:
        measured.observe(e)
    assert measured.entries == len(entries) and measured.unfair == 0  # nobody entered twice while another waited
    assert measured.out_of_order == 0  # (Lamport, RA: in (timestamp, id) order; the others stamp nothing)
    stamped = [e.stamp for e in events if type(e) is CsEvent and e.state is CsState.WANTED]
    assert all(s is not None for s in stamped) == (mutex in ("lamport", "ricart-agrawala"))


def test_rule7_the_workload_is_the_same_whatever_the_batching():
    def transcript(lookahead: bool) -> bytes:
        engine, events = run(5, 120, JITTER, algorithm="classic+ricart-agrawala", workload=BUSY, lookahead=lookahead)
        return recorded("classic+ricart-agrawala", engine, events, JITTER, workload=BUSY)

    assert transcript(True) == transcript(False)


def test_rule8_a_leader_crash_while_a_follower_holds_puts_two_in_the_cs_and_the_monitor_says_so():
    # The lecture's question (3-4), live: the new leader knows no holder and grants again.
    session = Session("classic+central", 5, config=JITTER, workload=Workload(think=None, hold=(100, 100)),
                      commands=tuple(at("10 want 2", "14 crash 5", "30 want 3")))
    summary = run_headless(session, 60)
    (v,) = [v for v in summary["violations"] if v["property"] == "mutex"]
    assert v["nodes"] == [2, 3] and v["detail"] == "2 in the critical section: nodes 2, 3" and v["t"] > 30


def test_a_crashed_token_holder_stops_the_ring():
    session = Session("classic+token-ring", 4, config=JITTER, workload=Workload(think=None, hold=(50, 50)),
                      commands=tuple(at("5 want 2", "20 crash 2", "30 want 3", "31 want 4")))
    engine, events = run(4, 120, JITTER, algorithm="classic+token-ring", workload=session.workload,
                         commands=session.commands)
    held = [(e.t, e.node) for e in events if type(e) is CsEvent and e.state is CsState.HELD]
    assert [node for _, node in held] == [2]  # nobody after the holder crashed with the token
    assert engine.hosts[3].machine.cs.state is CsState.WANTED


def test_a_mutex_transcript_verifies_and_keeps_its_workload(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--nodes", "4", "--mutex", "lamport", "--cs-think", "1:3", "--cs-hold", "0.5",
                 "--until", "60", "--transcript", str(path)]) == 0
    head = json.loads(path.read_text().splitlines()[0])
    assert head["algorithm"] == "classic+lamport" and head["workload"] == {"think": [1.0, 3.0], "hold": [0.5, 0.5]}
    assert '"kind":"cs"' in path.read_text()
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert "identical" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "expected"), [
    (["--at", "5 want 2"], "want at 5 s: want asks for the critical section: run a mutex beside the election (--mutex)"),
    (["--cs-think", "1:2"], "--cs-think only applies with --mutex"),
    (["--mutex", "paxos"], "unknown --mutex 'paxos' (choose from: central, token-ring, lamport, ricart-agrawala)"),
    (["--mutex", "central", "--cs-hold", "3:1"], "--cs-hold: 3 is above 1"),
    (["--mutex", "token-ring", "--delay", "0"], "--mutex token-ring: the token of token-ring would go round for ever"),
    (["--mutex", "token-ring", "--at", "5 delay 0"], "the token of token-ring would go round for ever"),
    (["--mutex", "central", "--at", "5 crash 2", "--at", "6 want 2"], "node 2 is down: only an up node can ask"),
])
def test_bad_mutex_input_is_one_line(capsys, args, expected):
    assert main(["--headless", "--nodes", "3", "--until", "10", *args]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1, err


def test_a_want_in_a_transcript_without_a_mutex_is_refused(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    main(["--headless", "--nodes", "3", "--until", "5", "--transcript", str(path)])
    lines = path.read_text().splitlines()
    lines.insert(2, json.dumps({"seq": 1, "t": 0.0, "kind": "command", "command": "want", "args": [2], "source": "at"}))
    path.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["verify", str(path)]) == 2
    assert "want asks for the critical section, and this run has no mutex" in capsys.readouterr().err


@pytest.mark.parametrize(("mutex", "per_entry", "sync"), [
    ("central", (2.2, 3.0), 2.0),  # 3 for a follower, 0 for the leader (1 in 5 entries here)
    ("lamport", (12, 12), 1.0),  # 3(N-1), exactly: counted per request that entered and left
    ("ricart-agrawala", (8, 8), 1.0),  # 2(N-1), exactly
    ("token-ring", (1.0, 5.0), 1.0),  # 1 to N hops; busy, about one
])
def test_the_lecture_figures_measured(mutex, per_entry, sync):
    # every message takes 1 s, so a synchronization delay in seconds is one in messages
    session = Session(f"classic+{mutex}", 5, config=ClusterConfig(delay_min=1, delay_max=1),
                      workload=Workload((2, 10), (1, 3)))
    m = run_headless(session, 600)["mutex"]
    assert m["entries"] >= 100 and m["violations"] == 0
    assert per_entry[0] <= m["messages_per_entry"] <= per_entry[1]
    assert m["sync_delay"]["median"] == sync and 1 <= m["sync_delay"]["worst"] <= 5


def test_compare_mutex_prints_the_lecture_figures_measured(capsys):
    assert main(["--headless", "--compare", "--mutex", "--nodes", "6"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "| 6 |" in line]
    by_name = {row.split(" | ")[0].strip("| "): row.split(" | ") for row in rows}
    assert set(by_name) == set(MUTEXES)
    assert float(by_name["lamport"][3]) == pytest.approx(15, abs=0.3) and by_name["lamport"][4] == "3(N-1) = 15"
    assert float(by_name["ricart-agrawala"][3]) == pytest.approx(10, abs=0.3)
    assert float(by_name["token-ring"][8]) > 0 == float(by_name["central"][8])  # only the token moves when idle
    assert all(row[9].strip(" |") == "0" for row in by_name.values())  # no violations without faults


def test_compare_mutex_json_and_its_refusals(capsys):
    assert main(["--headless", "--compare", "--mutex", "central", "--nodes", "4", "--format", "json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["mutex"] == "central" and row["nodes"] == 4 and row["violations"] == 0 and row["entries"] > 10
    assert main(["--headless", "--nodes", "4", "--mutex"]) == 2
    assert "--mutex needs a name" in capsys.readouterr().err
    assert main(["--headless", "--compare", "--mutex", "--cs-hold", "1"]) == 2
    assert "does not use --cs-hold" in capsys.readouterr().err


@pytest.mark.parametrize("mutex", ["lamport", "ricart-agrawala"])
def test_rule9_a_crashed_node_that_never_replies_blocks_every_later_request_and_the_monitor_says_so(mutex):
    session = Session(f"classic+{mutex}", 4, config=JITTER, workload=Workload(think=None, hold=(1, 1)),
                      commands=tuple(at("10 crash 4", "20 want 1", "21 want 2")))
    summary = run_headless(session, 200)
    (stuck,) = [v for v in summary["violations"] if v["property"] == "cs_wait"]
    assert stuck["nodes"] == [1, 2] and stuck["t"] == pytest.approx(20 + Session(f"classic+{mutex}", 4, config=JITTER)
                                                                     .recipe.engine().settle_time())
    assert "nodes 1, 2 still waiting, and nobody has held the critical section for" in stuck["detail"]
    assert summary["mutex"]["entries"] == 0 and summary["mutex"]["stuck"] == 1


def test_a_fifth_mutex_is_one_module_and_one_registry_line(tmp_path, capsys, monkeypatch):
    class Polite(RicartAgrawala):  # (stands for a new module: Maekawa's, say)
        name = "polite"
        title = "Ricart & Agrawala, by another name"

    monkeypatch.setitem(MUTEXES, Polite.name, Polite)  # the registry line
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--nodes", "4", "--mutex", "polite", "--cs-think", "1:3", "--cs-hold", "0.5:1", "--until", "120",
                 "--transcript", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["algorithm"] == "classic+polite" and summary["mutex"]["entries"] > 10
    assert summary["mutex"]["lecture"]["messages_per_entry"] == "2(N-1) = 6"
    assert main(["verify", str(path)]) == 0 and "identical" in capsys.readouterr().out
    assert main(["export", str(path), "--format", "svg", "-o", str(tmp_path / "t.svg")]) == 0


def test_with_the_default_workload_crashing_the_leader_just_after_a_follower_enters_puts_two_in_the_cs():
    # (the demo: `bully-tui --nodes 5 --mutex central`, then x when a card shows ▣ on
    # a node below 4: node 4, the next leader, knows it holds the lock it is the server of)
    for seed in (1, 2, 3):
        _, events = run(5, 60, ClusterConfig(), algorithm="classic+central", workload=Workload(), seed=seed)
        entry = next(e for e in events if type(e) is CsEvent and e.state is CsState.HELD and e.node < 4 and e.t > 20)
        session = Session("classic+central", 5, seed, ClusterConfig(), workload=Workload(),
                          commands=tuple(at(f"{entry.t + 4:.3f} crash 5")))
        assert run_headless(session, entry.t + 90)["mutex"]["violations"] == 1, f"seed {seed}"


def test_a_partition_gives_two_lock_servers_and_two_in_the_cs():
    # (the lecture's other failure: a split brain, here by a partition, serves the lock twice)
    session = Session("classic+central", 5, config=JITTER, workload=Workload(think=None, hold=(60, 60)),
                      commands=tuple(at("10 partition 1,2", "40 want 1", "41 want 3")))
    summary = run_headless(session, 60)
    assert summary["leader"]["1"] == 2 and summary["leader"]["3"] == 5  # two leaders, one each side
    (v,) = [v for v in summary["violations"] if v["property"] == "mutex"]
    assert v["nodes"] == [1, 3]


def test_the_measures_of_fairness_catch_an_entry_out_of_order_and_a_second_entry_past_a_waiting_node():
    cs = CsEntries({})
    wanted, held, released = CsState.WANTED, CsState.HELD, CsState.RELEASED
    for t, node, state, stamp in [(1, 1, wanted, 5), (2, 2, wanted, 7), (3, 2, held, 7),  # 2 passes 1's older (5, 1)
                                  (4, 2, released, None), (5, 2, wanted, 9), (6, 2, held, 9)]:  # and enters again
        cs.observe(CsEvent(0, t, node, state, stamp))
    assert cs.entries == 2 and cs.out_of_order == 2 and cs.unfair == 1


def test_messages_are_counted_per_request_that_entered_and_left_and_open_requests_add_nothing():
    # Lamport among 3: node 1 asks (2 Requests), gets 2 Replies, enters, leaves (2 Releases):
    # 6 = 3(N-1). Node 2 has asked meanwhile and is still waiting: its messages count for
    # nothing yet, where a total divided by entries read 8 after the first entry.
    from protocol.lamport import Lamport, LamportRelease, LamportReply, LamportRequest

    cs = CsEntries.of(Lamport)
    wanted, held, released = CsState.WANTED, CsState.HELD, CsState.RELEASED
    send = iter(range(100))

    def sends(t, src, dsts, kind):
        for dst in dsts:
            cs.observe(SendEvent(0, t, src, dst, next(send), kind(1), t + 1))

    sends(1, 1, [2, 3], LamportRequest)  # (a node's sends come before its report that it wants)
    cs.observe(CsEvent(0, 1, 1, wanted, 1))
    sends(2, 2, [1], LamportReply)  # replies to node 1's request: they serve it (the receiver)
    sends(2, 3, [1], LamportReply)
    sends(2.5, 2, [1, 3], LamportRequest)
    cs.observe(CsEvent(0, 2.5, 2, wanted, 3))
    assert cs.messages_per_entry is None  # nobody has entered and left: not defined yet
    cs.observe(CsEvent(0, 3, 1, held, 1))
    assert cs.entries == 1 and cs.messages_per_entry is None
    sends(4, 1, [2, 3], LamportRelease)
    cs.observe(CsEvent(0, 4, 1, released))
    assert cs.messages == 8 and cs.completed == 1 and cs.messages_per_entry == 6.0


def test_a_request_a_crash_ended_adds_nothing_and_a_release_nobody_asked_for_serves_no_request():
    from protocol.central import CentralLock, Grant, Release, Request

    cs = CsEntries.of(CentralLock)
    wanted, held, released = CsState.WANTED, CsState.HELD, CsState.RELEASED
    cs.observe(SendEvent(0, 1, 2, 3, 1, Request(), 2))
    cs.observe(CsEvent(0, 1, 2, wanted))
    cs.observe(CrashEvent(0, 1.5, 2))  # node 2's request dies with it
    cs.observe(SendEvent(0, 2, 3, 2, 2, Grant(), 3))
    cs.observe(SendEvent(0, 5, 1, 3, 3, Release(), 6))  # node 1 gives back a grant it no longer wants
    cs.observe(SendEvent(0, 6, 1, 3, 4, Request(), 7))
    cs.observe(CsEvent(0, 6, 1, wanted))
    cs.observe(SendEvent(0, 7, 3, 1, 5, Grant(), 8))
    cs.observe(CsEvent(0, 8, 1, held))
    cs.observe(SendEvent(0, 9, 1, 3, 6, Release(), 10))
    cs.observe(CsEvent(0, 9, 1, released))
    assert cs.completed == 1 and cs.completed_messages == 3 and cs.messages == 6


def test_the_synchronization_delay_leaves_out_an_exit_while_another_node_is_still_inside():
    cs = CsEntries({})
    wanted, held, released = CsState.WANTED, CsState.HELD, CsState.RELEASED
    for t, node, state in [(1, 1, held), (1, 2, held), (1, 3, wanted),  # two inside (a violation), 3 waits
                           (2, 1, released),  # the CS is not free: 2 is inside; nothing is handed on
                           (3, 2, released), (4, 3, held)]:  # now it is, and 3 enters 1 s later
        cs.observe(CsEvent(0, t, node, state))
    assert cs.sync_delays == [1.0] and cs.sync_left_out == 1


def test_the_status_bar_says_when_the_messages_per_entry_are_not_defined_yet():
    from playground.core.config import ClusterConfig as Config
    from playground.ui.status_bar import CsFigures, Status, parts

    def cs_part(figures):
        return parts(Status(0.0, 1.0, False, None, Config(), 1, False, 0, None, cs=figures))["cs"][0]

    assert "msgs each: after a first exit" in cs_part(CsFigures(1, None, "3(N-1) = 21", 2.0))
    assert "21.0 msgs each (lecture: 3(N-1) = 21)" in cs_part(CsFigures(2, 21.0, "3(N-1) = 21", 2.0))
    assert "msgs each" not in cs_part(CsFigures(0, None, "3(N-1) = 21", None))


def test_an_entry_without_a_want_before_it_is_a_request_too():
    # A central leader that wants the lock while it is free serves itself at once: the
    # node goes from released to held in one step, and that request costs no message.
    from protocol.central import CentralLock

    cs = CsEntries.of(CentralLock)
    cs.observe(CsEvent(0, 1, 3, CsState.HELD))
    cs.observe(CsEvent(0, 2, 3, CsState.RELEASED))
    assert cs.completed == 1 and cs.messages_per_entry == 0.0


def test_the_mutex_table_says_how_many_synchronization_delays_it_left_out():
    from playground.run.compare_mutex import MutexResult, mutex_table

    lecture = {"messages_per_entry": "3", "sync_delay_messages": "2"}
    rows = [MutexResult("central", 4, 10, 3.0, {"median": 1.0, "worst": 2.0}, {"median": 2.0, "worst": 2.0}, left, 0.0,
                        0, lecture) for left in (0, 3)]
    table = mutex_table(rows, ClusterConfig(delay_min=1, delay_max=1)).splitlines()
    assert "left out" not in table[-2] and "2.00 / 2.00 (3 left out: two inside)" in table[-1]
