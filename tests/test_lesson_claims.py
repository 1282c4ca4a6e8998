"""What each shipped lesson claims, checked against the run it plays headless: the
figures its narration quotes (counts, stamps, who entered when), who follows whom and
what the monitor reported in each step (tests/test_lessons.py checks the machinery)."""

from __future__ import annotations

import pytest

from playground.core.events import (
    CrashEvent,
    CsEvent,
    DropEvent,
    ElectionStartEvent,
    SendEvent,
    StateEvent,
    ViolationEvent,
)
from protocol import CsState


def play_shipped(name: str, monkeypatch) -> tuple[dict, dict]:
    """A shipped lesson played headless by the scripted student: each step's result, and
    the events of the batches run while it was the step under way, both by title."""
    from playground.cli.lesson import open_lesson, session_of
    from playground.run.lesson_headless import Student, play_headless

    lesson, seen = open_lesson(name), {}
    step = Student._step

    def step_seen(self):
        title = self.play_at.step.title
        events = step(self)
        seen.setdefault(title, []).extend(events)
        return events

    monkeypatch.setattr(Student, "_step", step_seen)
    results = {r.title: r for r in play_headless(lesson, lambda k: session_of(lesson, k))}
    assert len(results) == len(lesson.steps), name  # (titles are the steps' own)
    return results, seen


def counted(result, template: str = "round") -> dict[str, int]:
    """A quoted round ("15 Election, 22 Ack and 8 Elected messages") as label -> count."""
    words = dict(result.quoted)[template].removesuffix(" messages").replace(" and ", ", ").split(", ")
    return {label: int(count.replace(",", "")) for count, label in (w.split(" ", 1) for w in words)}


def sends(events, label: str):
    return [e for e in events if type(e) is SendEvent and e.msg.label == label]


def test_chang_roberts_counts_2n_minus_1_then_3n_minus_1_and_each_crash_costs_a_message_sent_twice(monkeypatch):
    results, seen = play_shipped("chang-roberts", monkeypatch)
    without_acks = {title: {k: v for k, v in counted(results[title]).items() if k != "Ack"} for title in
                    ("Concurrent starts", "3N − 1", "Tolerating a crash", "Two faults", "Who noticed")}
    assert without_acks == {"Concurrent starts": {"Election": 15, "Elected": 8}, "3N − 1": {"Election": 15, "Elected": 8},
                            "Tolerating a crash": {"Election": 14, "Elected": 7},
                            "Two faults": {"Election": 13, "Elected": 6}, "Who noticed": {"Election": 11, "Elected": 7}}
    assert results["One initiator"].ended_by == "task: start an election at node 1, until agreement"
    past = [(e.src, e.dst, e.rule) for e in sends(seen["Past the crash"], "Election")]
    assert (7, 8, "3") in past and (7, 1, "10") in past  # (sent to 8, no ack within T, then past it)
    during = [(e.t, e.src, e.dst, e.rule) for e in sends(seen["A crash during the election"], "Election")]
    assert (6.25, 4, 5, "3") in during and (7.25, 4, 6, "10") in during  # (5 crashed at 6.375: T, then past it)
    starts = [(e.t, e.node) for e in seen["Noticing by itself"] if type(e) is ElectionStartEvent and e.t > 4]
    assert starts == [(4.75, 3), (4.75, 7)]
    first = [(e.src, e.dst) for e in sends(seen["Noticing by itself"], "Election") if e.t == 4.75]
    assert first == [(3, 4), (7, 1)]  # (7 presumed 8 down: straight to 1)
    lossy = seen["Lost messages"]
    brains = [list(e.nodes) for e in lossy if type(e) is ViolationEvent and e.property == "split_brain"]
    assert brains[0] == [7, 8] and not [e for e in lossy if type(e) is CrashEvent]
    assert any(type(e) is DropEvent and e.reason == "lost on the link" for e in lossy)


def test_hs_against_chang_roberts_on_three_orders_and_at_64_nodes():
    from math import ceil, log2

    from playground.cli.lesson import open_lesson, session_of
    from playground.cli.plan import plan
    from playground.core.ids import ring_order
    from playground.run.lesson_headless import play_headless
    from playground.run.wiring import run_headless

    lesson = open_lesson("ring-orders")
    results = {r.title: r for r in play_headless(lesson, lambda k: session_of(lesson, k))}
    theory = {title: sum(n for label, n in counted(results[title]).items() if label != "Ack")
              for title in results if title.startswith("Counting")}
    assert theory == {"Counting, in order": 47, "Counting HS, in order": 151, "Counting, descending": 152,
                      "Counting HS, descending": 151, "Counting, shuffled": 71, "Counting HS, shuffled": 197}
    assert counted(results["Counting HS, in order"]) == {"Probe": 92, "Reply": 44, "Elected": 15, "Ack": 151}
    assert counted(results["Counting, descending"])["Election"] == 16 * 17 // 2
    assert counted(results["Counting, shuffled"])["Election"] == 55
    assert counted(results["Counting HS, shuffled"]) == {"Probe": 122, "Reply": 60, "Elected": 15, "Ack": 197}
    ring = ring_order("shuffled", tuple(range(1, 17)), 1)
    assert ring == (4, 8, 15, 16, 13, 6, 11, 9, 3, 2, 10, 1, 7, 12, 5, 14)
    assert {k for i, k in enumerate(ring) if k > ring[i - 1] and k > ring[(i + 1) % 16]} == {16, 14, 12, 11, 10}
    assert round(16 * sum(1 / k for k in range(1, 17))) == 54 and 8 * 16 * (1 + ceil(log2(16))) == 640
    at_64 = {}
    for algorithm in ("ring", "hs"):
        args = ["--headless", "--algorithm", algorithm, "--nodes", "64", "--ring", "reversed", "--delay", "0.1",
                "--timeout", "1", "--probe-interval", "0"]
        first = run_headless(plan(args).session, 30)["rounds"][0]["messages"]
        at_64[algorithm] = sum(n for kind, n in first.items() if kind not in ("ack", "total"))
    assert at_64 == {"ring": 2144, "hs": 631}


def test_the_central_lock_costs_3_a_round_trip_and_2_to_hand_on_and_each_crash_costs_safety_or_liveness(monkeypatch):
    results, seen = play_shipped("central-lock", monkeypatch)
    assert dict(results["One round trip"].quoted) == {"client-delay": "2 s"}
    assert dict(results["The next in the queue"].quoted) == {"sync-delay": "2 s"}
    assert dict(results["Three messages an entry"].quoted) == {"per-entry": "3 messages per entry",
                                                               "client-delay": "10 s"}
    entered = [(e.t, e.node) for e in seen["Asking for the lock"] + seen["A queue"] + seen["The next in the queue"]
               if type(e) is CsEvent and e.state is CsState.HELD]
    assert entered == [(4.0, 2), (9.0, 3), (14.0, 1)]  # (asked at 2, 3 and 4)
    lost = seen["A waiting follower crashes"]
    grants = {e.id: e for e in sends(lost, "Grant")}
    assert [(grants[e.id].dst, e.reason) for e in lost if type(e) is DropEvent and e.id in grants] == \
        [(3, "receiver down")]
    assert not [e for e in lost if type(e) is CsEvent and e.state is CsState.HELD and e.t > 5]


def test_the_central_lock_holds_the_lock_for_a_client_that_crashed_inside():
    from playground.cli.plan import plan
    from playground.run.wiring import run_headless

    args = ["--headless", "--algorithm", "classic", "--mutex", "central", "--nodes", "5", "--delay", "1",
            "--cs-think", "none", "--cs-hold", "3", "--settle", "10", "--at", "2 want 2", "--at", "5 crash 2",
            "--at", "10 want 1"]
    summary = run_headless(plan(args).session, 40)
    assert summary["mutex"]["entries"] == 1 and [v["property"] for v in summary["violations"]] == ["cs_wait"]


def test_the_token_ring_goes_round_idle_serves_ring_order_and_loses_its_token_with_a_crashed_node(monkeypatch):
    results, seen = play_shipped("token-ring", monkeypatch)
    idle = [e for e in sends(seen["Round and round"], "Token") if e.t < 5]
    assert [(e.src, e.dst) for e in idle] == [(1, 2), (2, 3), (3, 4), (4, 5), (5, 1)]
    assert dict(results["Ring order"].quoted) == {"client-delay": "0.5 s"}
    assert dict(results["Hops per entry"].quoted) == {"per-entry": "6.5 messages per entry", "client-delay": "6.5 s",
                                                      "sync-delay": "2 s"}
    tokens = {e.id: e for e in sends(seen["The lost token"], "Token")}
    assert [(tokens[e.id].src, e.dst) for e in seen["The lost token"] if type(e) is DropEvent] == [(1, 2)]
    assert results["Waiting in vain"].ended_by == "task: make node 4 ask for the critical section, " \
                                                  "until violation cs-liveness"


def stamps(events) -> list[tuple[float, int, int]]:
    return [(e.t, e.node, e.stamp) for e in events if type(e) is CsEvent and e.state is CsState.WANTED]


def test_lamport_costs_3_n_minus_1_ties_go_to_the_lower_id_and_the_older_request_first(monkeypatch):
    results, seen = play_shipped("lamport", monkeypatch)
    assert dict(results["Three messages a node"].quoted) == {"per-entry": "12 messages per entry",
                                                             "client-delay": "2 s"}
    assert stamps(seen["Three messages a node"] + seen["Two at once"]) == [(10.0, 3, 10), (10.0, 4, 10)]
    assert stamps(seen["Node 4's turn"] + seen["Who asked first"]) == [(20.0, 5, 22), (21.5, 1, 25)]
    assert dict(results["Order-preserving"].quoted) == {"sync-delay": "1 s"}


def test_ricart_agrawala_costs_2_n_minus_1_defers_while_held_and_serves_the_older_stamp(monkeypatch):
    results, seen = play_shipped("ricart-agrawala", monkeypatch)
    assert dict(results["Two messages a node"].quoted) == {"per-entry": "8 messages per entry", "client-delay": "2 s"}
    assert dict(results["One message to hand on"].quoted) == {"sync-delay": "1 s"}
    held = [(e.t, e.node) for e in seen["A request while Held"] + seen["Deferred"]
            if type(e) is CsEvent and e.state is not CsState.WANTED]
    assert held == [(12.0, 4), (14.0, 4), (15.0, 1)]  # (1 asked at 12.5, while 4 was inside)
    assert stamps(seen["Concurrent requests"]) == [(20.0, 5, 10), (20.0, 2, 12)]


def test_the_critical_section_figures_in_words():
    from playground.core.cs_entries import CsEntries
    from playground.run.lesson import cs_text
    from protocol import Serves

    cs = CsEntries({"request": Serves.SENDER})
    assert [cs_text(name, None) for name in ("entries", "sync-delay")] == ["nothing (this run has no lock)"] * 2
    assert [cs_text(name, cs) for name in ("entries", "per-entry", "client-delay", "sync-delay")] == \
        ["no entry yet", "no figure yet: no request has entered and left", "no entry yet", "no hand-over yet"]
    cs.entries, cs.completed, cs.completed_messages, cs.client_delays, cs.sync_delays = 1, 1, 1, [0.999999], [2.5]
    assert [cs_text(name, cs) for name in ("entries", "per-entry", "client-delay", "sync-delay")] == \
        ["1 entry", "1 message per entry", "1 s", "2.5 s"]
    cs.entries, cs.completed, cs.completed_messages = 3, 3, 8
    assert cs_text("entries", cs) == "3 entries" and cs_text("per-entry", cs) == "2.67 messages per entry"


# --- the models, Bully variants, Raft, the hunt and epochs: what each narration claims ---------


def reported(seen, *titles: str) -> set[str]:
    """The properties the monitor reported broken while those steps played."""
    return {e.property for t in titles for e in seen.get(t, ()) if type(e) is ViolationEvent and e.phase == "begin"}


def following(seen, *titles: str) -> dict[int, int | None]:
    """Whom each node follows at the end of those steps (of one run), by its last state."""
    return {e.node: e.leader for t in titles for e in seen.get(t, ()) if type(e) is StateEvent}


def run_longer(name: str, step: int, until: float) -> dict:
    """The run of a lesson's step whose commands are its `at` lines, on to `until`: its summary."""
    from playground.cli.lesson import open_lesson, session_of
    from playground.run.wiring import run_headless

    return run_headless(session_of(open_lesson(name), step), until)


def test_the_synchrony_lesson_keeps_the_bound_then_breaks_it_two_ways(monkeypatch):
    _, seen = play_shipped("synchrony", monkeypatch)
    kept = ("Two models", "Who leads?", "An answer in time", "A crash, found by the clock")
    assert not reported(seen, *kept)  # T >= 2 max delay: an elect answered in time, a crash found
    assert reported(seen, "Another assumption") == {"sle1", "split_brain"}
    assert following(seen, *kept, "Another assumption") == {1: None, 2: None, 3: 3, 4: 4, 5: None}  # (3 declared, 4 cut off)
    assert not reported(seen, "A bound broken", "Once in time")  # below the bound, the first elect 4 is lucky...
    assert reported(seen, "Once too late") == {"sle1", "split_brain"}  # ...and the same elect again is not


def test_the_garcia_molina_lesson_counts_its_two_phases_and_classic_crosses_where_it_does_not(monkeypatch):
    results, seen = play_shipped("garcia-molina", monkeypatch)
    assert dict(results["Two phases, counted"].quoted) == {
        "round": "6 AreYouThere, 6 Yes, 3 Halt, 3 HaltAck, 3 NewCoordinator, 3 NewCoordinatorAck, 3 Ready and "
                 "3 ReadyAck messages"}
    classic = ("Is the Bully safe during an election?", "Crossing Coordinators")
    assert following(seen, *classic) == {1: 3, 2: 3, 3: 4, 4: 3}  # classic's Coordinators crossed
    later = run_longer("garcia-molina", 2, 80)
    assert later["leader"] == {"1": 3, "2": 3, "3": 4, "4": 3} and later["violations"][-1]["property"] == "sle2"
    assert not reported(seen, "The same cluster, in Garcia-Molina's", "Crash it", "Bring it back, any time")
    halted = [(e.src, e.dst) for e in sends(seen["Bring it back, any time"], "HaltAck")]
    assert (3, 4) in halted  # (node 4, back, halted node 3, which was halting the others)
    assert reported(seen, "Outside its model") == {"split_brain", "sle1"}


def test_the_stoller_lesson_halts_one_node_at_a_time_and_leaves_wait_when_the_halter_dies(monkeypatch):
    results, seen = play_shipped("stoller", monkeypatch)
    assert dict(results["One at a time"].quoted) == {"round": "3 Halt, 3 Ack and 3 Ldr messages"}
    assert [e.t for e in sends(seen["Norm, Elec1, Elec2, Wait"], "Halt")] == [0.0, 2.0, 4.0]  # each after an Ack
    back = [(e.status.value, e.rule) for e in seen["Crash the halter"] if type(e) is StateEvent and e.node == 2]
    assert back == [("wait", "5"), ("elec2", "3"), ("norm", "4")]  # (Elec1 took no time: nobody above)
    first, second = [e.t for e in sends(seen["A recovery"], "Halt")][:2]
    assert second - first == pytest.approx(4)  # (the Halt to node 3, down, waited for three silent ticks of T/2)
    assert not reported(seen, "Norm, Elec1, Elec2, Wait", "Crash the leader", "Crash the halter", "A recovery")
    assert "split_brain" in reported(seen, "A detector that is wrong")
    assert following(seen, "A recovery", "A detector that is wrong", "Healed") == {1: 4, 2: 4, 4: 4}


def test_the_invitation_lesson_makes_two_groups_and_merges_them_without_a_violation(monkeypatch):
    results, seen = play_shipped("invitation", monkeypatch)
    assert dict(results["Group numbers"].quoted) == {"round": "5 Invitation, 5 Accept and 5 Ready messages"}
    assert dict(results["One group again"].quoted) == {"round": "9 Invitation, 7 Accept and 7 Ready messages"}
    assert dict(results["No election at all"].quoted) == {"round": "4 Invitation, 4 Accept and 4 Ready messages"}
    assert not reported(seen, *results)
    groups = {e.node: e.epoch for t in ("Groups", "Cut in two", "Two groups") for e in seen[t] if type(e) is StateEvent}
    assert groups == {1: 3_000_003, 2: 3_000_003, 3: 3_000_003, 4: 2_000_006, 5: 2_000_006, 6: 2_000_006}  # g3.3, g2.6
    assert {e.epoch for e in seen["Healed"] if type(e) is StateEvent} == {3_000_006}  # g3.6


def test_the_raft_lesson_elects_the_lowest_then_splits_votes_without_a_spread(monkeypatch):
    results, seen = play_shipped("raft", monkeypatch)
    assert dict(results["Not the highest"].quoted) == {"round": "4 RequestVote and 4 Vote messages"}
    assert dict(results["One term, one leader"].quoted) == {"round": "4 RequestVote and 3 Vote messages"}
    assert dict(results["Split votes for ever"].quoted) == {"round": "160 RequestVote and 120 Vote messages"}
    assert results["No randomness"].ended == pytest.approx(12.725)  # c after the crash at 2.6
    terms = [e.msg.epoch for e in sends(seen["No randomness"], "RequestVote")]
    assert terms == [1] * 4 + [term for term in range(2, 12) for _ in range(16)]  # 4 candidates a term, every second
    assert dict(results["What ends split votes"].quoted) == {"round": "4 RequestVote and 3 Vote messages"}


def test_the_hunt_lesson_plays_the_hunts_own_finding_and_the_epoch_bully_mends_it(tmp_path, capsys, monkeypatch):
    from playground.cli.entry import main
    from playground.cli.lesson import open_lesson

    lesson = open_lesson("hunt")
    command = lesson.steps[0].narration.split("```")[1].replace("\\\n", " ").split()
    assert command[:2] == ["bully-tui", "hunt"]
    assert main([*command[1:], "--workers", "1", "-o", str(tmp_path / "found")]) == 1
    said = capsys.readouterr().out
    assert said.startswith("SLE2 broken: 2 nodes, 2 commands, at t=34.100") and "searched 40 schedules" in said
    found = [line for line in (tmp_path / "found.scenario").read_text().splitlines() if not line.startswith("#")]
    shown = lesson.steps[0].narration.split("```")[3].strip().splitlines()
    assert shown == found[found.index("set algorithm classic"):]
    results, seen = play_shipped("hunt", monkeypatch)
    assert results["The finding, played"].ended == 7.0 and results["For good"].ended == pytest.approx(34.1)
    assert following(seen, "The finding, played", "For good") == {1: 2, 2: 1}
    assert reported(seen, "Bring it back") == {"sle1", "split_brain"}  # made by hand, in the window
    mended = run_longer("hunt", 9, 60)
    assert [(v["property"], v["duration"]) for v in mended["violations"]] == [("sle1", 1.0), ("split_brain", 1.0)]
    assert mended["leader"] == {"1": 2, "2": 2}


def test_the_epochs_lesson_bumps_the_epoch_and_its_storm_is_one_round_where_classics_is_ten(monkeypatch):
    from playground.cli.lesson import open_lesson, session_of

    ids = session_of(open_lesson("epochs"), 0).ids
    assert [f"{i:032x}"[:4] for i in ids] == ["00f1", "04fb", "0ddc", "b4ef", "fc1b"]  # (as the narration names them)
    results, seen = play_shipped("epochs", monkeypatch)
    assert dict(results["Epochs"].quoted) == {"round": "10 Election, 10 Answer and 8 Coordinator messages"}
    assert {e.epoch for e in seen["UUIDs"] if type(e) is StateEvent} == {1}
    assert {e.epoch for e in seen["A new reign"] if type(e) is StateEvent and e.role.value == "normal"} == {2}
    assert dict(results["The storm"].quoted) == {"rounds": "10"}
    assert dict(results["Stale, and ignored"].quoted) == {"rounds": "1"}
    leaves = results["The leader leaves"]
    assert leaves.ended - leaves.began == pytest.approx(2.0, abs=1e-5)  # (told, not noticed: a Leave, a round)
    assert reported(seen, "One joins") == {"sle1", "split_brain"}  # (for the second the newcomer's Coordinator travels)
    assert not reported(seen, *(title for title in results if title != "One joins"))
