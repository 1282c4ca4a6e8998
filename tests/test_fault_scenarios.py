"""The shipped scenarios that break the model's assumptions (issue 33), against the claims
they state: each run as `bully-tui --headless --scenario` runs it, and beside it the same
run without the fault, so that the claim's "without" is tested too. test_scenarios.py
runs these checks with the others (FAULT_CLAIMS)."""

from dataclasses import replace

from playground.core.engine import run_sync
from playground.core.faults import LOST_ON_THE_LINK
from playground.run.session import Session
from tests.support import sends

LOST, BY_HAND = LOST_ON_THE_LINK, "dropped by hand"


def _play(name: str, until: float, *options: str):
    from tests.test_scenarios import play  # (test_scenarios imports this module's claims)

    return play(name, until, *options)


def without(session: Session, until: float, drop: str = "", **faults) -> list:
    """The scenario's run without its fault: its commands but those named `drop`, and its
    faults as `faults` say (the others kept)."""
    config = session.config if not faults else session.config.with_faults(**faults)
    commands = tuple(s for s in session.commands if s.command.name != drop)
    engine = replace(session, config=config, commands=commands).recipe.engine()
    events: list = []
    engine.subscribe(events.extend)
    run_sync(engine, until)
    return events


def lost(events) -> list:
    return [e for e in events if e.kind == "drop" and e.reason == LOST]


def violations(events, prop: str) -> list:
    return [e for e in events if e.kind == "violation" and e.property == prop and e.phase == "begin"]


def agreements(events) -> list[tuple[float, int | None]]:
    return [(e.t, e.leader) for e in events if e.kind == "agreement"]


def message(events, msg_id: int):
    return next(e for e in events if e.kind == "send" and e.id == msg_id)


def check_lost_answer_classic():
    session, _, report, events = _play("lost-answer-classic.scenario", 120)
    [drop] = lost(events)
    answer = message(events, drop.id)
    assert (answer.msg.type, answer.src, answer.dst, answer.t) == ("answer", 4, 3, 21)  # the only message lost
    [split] = violations(events, "split_brain")
    assert (split.t, split.nodes) == (24, (3, 4))
    ended = next(e for e in events if e.kind == "violation" and e.property == "split_brain" and e.phase == "end")
    assert ended.duration == 0.5
    disagree = violations(events, "sle1")[-1]
    assert disagree.t == 25 and dict(zip(disagree.nodes, disagree.leaders, strict=True)) == {1: 3, 2: 3, 3: 4, 4: 3}
    assert report["leader"] == {"1": 3, "2": 3, "3": 4, "4": 3, "5": None}  # nothing repairs it
    assert [v.t for v in violations(events, "sle2")] == [82]
    clean = without(session, 120, drop="lossy")
    assert agreements(clean)[-1] == (24.5, 4) and not violations(clean, "split_brain")


def check_lost_coordinator_classic():
    session, _, report, events = _play("lost-coordinator-classic.scenario", 60)
    [drop] = lost(events)
    coordinator = message(events, drop.id)
    assert (coordinator.msg.type, coordinator.src, coordinator.dst, coordinator.t) == ("coordinator", 4, 1, 16)
    [disagree] = violations(events, "sle1")
    assert disagree.t == 16 and disagree.leaders[0] == 5  # node 1 follows the crashed 5
    starts = [(e.t, e.node) for e in events if e.kind == "election_start" and e.t > 16]
    assert starts[0] == (18, 1)  # its probe went unanswered
    assert agreements(events)[-1] == (24, 4) and set(report["leader"].values()) == {4, None}
    assert agreements(without(session, 60, drop="lossy"))[-1] == (17, 4)


def check_lost_election_ring():
    session, _, _, events = _play("lost-election-ring.scenario", 120)
    [drop] = lost(events)
    election = message(events, drop.id)
    assert (election.msg.type, election.src, election.dst, election.t) == ("election", 1, 2, 10)
    skip = next(e for e in events if e.kind == "send" and e.src == 1 and e.t > 10 and e.msg.type == "election")
    assert (skip.t, skip.dst) == (14, 3)  # no ack within T: 2 presumed down, skipped
    led = next(e.t for e in events if e.kind == "state" and e.node == 5 and e.leader == 5 and e.t > 10)
    assert led == 21
    assert [(e.t, e.node) for e in events if e.kind == "election_start" and e.t > 10 and e.node == 2] == [(21, 2), (41, 2)]
    assert agreements(events)[-1] == (53, 5) and not [e for e in events if e.kind == "violation"]
    assert agreements(without(session, 120, drop="lossy"))[-1] == (23, 5)


def check_duplicated_election_classic():
    session, _, report, events = _play("duplicated-election-classic.scenario", 60)
    [copy] = [e for e in events if e.kind == "duplicate"]
    election = message(events, copy.id)
    assert (election.msg.type, election.src, election.dst, copy.t, copy.arrives) == ("election", 1, 4, 20.5, 21.5)
    assert [e.t for e in events if e.kind == "deliver" and e.id == copy.id] == [21, 21.5]  # a second arrival
    clean = without(session, 60, drop="duplicate")
    with_copy, plain = sends(events, after=20), sends(clean, after=20)
    assert with_copy == {**plain, "answer": plain["answer"] + 1}  # one Answer more, and nothing else
    assert agreements(events)[-1] == agreements(clean)[-1] == (26, 4)
    assert not [e for e in events if e.kind == "violation"] and report["messages"]["answer"] == 17


def check_mutex_lost_release():
    for mutex, release in (("lamport", "lamport_release"), ("ricart-agrawala", "ra_reply")):
        session, engine, report, events = _play("mutex-lost-release.scenario", 120, "--mutex", mutex)
        [drop] = lost(events)
        sent = message(events, drop.id)
        assert (sent.msg.type, sent.src, sent.dst, sent.t) == (release, 2, 3, 17), mutex
        held = [(e.t, e.node) for e in events if e.kind == "cs" and str(e.state) == "held"]
        assert held == [(12, 2)], mutex  # 3 never enters
        [stuck] = violations(events, "cs_wait")
        assert (stuck.t, stuck.nodes, stuck.since) == (79, (3,), 17) and stuck.t == 17 + engine.settle_time()
        assert not violations(events, "mutex") and report["mutex"]["entries"] == 1
        clean = without(session, 120, drop="lossy")
        assert [(e.t, e.node) for e in clean if e.kind == "cs" and str(e.state) == "held"] == [(12, 2), (18, 3)]


def check_drift_suspects_live_leader():
    session, engine, report, events = _play("drift-suspects-live-leader.scenario", 60)
    assert session.config.synchronous and engine.hosts[1].rate == 1.0757  # T = 4 >= 2 x 1.9
    first = next(e for e in events if e.kind == "election_start" and e.t > 2)
    assert (first.node, round(first.t, 2), first.rule) == (1, 12.17, "probing 4")  # 5 is up all along
    assert report["up"] == [1, 2, 3, 4, 5] and report["elections_started"] == 41
    assert violations(events, "split_brain") and violations(events, "sle1")
    assert not violations(events, "sle2")
    clean = without(session, 60, drift=0.0)
    assert not [e for e in clean if e.kind == "election_start" and e.t > 2]
    assert agreements(clean) == [(1.9, 5)]


def check_reorder_garcia_molina():
    session, _, _, events = _play("reorder-garcia-molina.scenario", 25.6)
    assert session.config.faults.reorder and session.algorithm == "garcia-molina"
    sent = {e.id: e for e in events if e.kind == "send"}
    join, halt = (next(e for e in sent.values() if (e.src, e.dst, e.msg.type) == (3, 1, kind)) for kind in ("join", "halt"))
    assert join.id < halt.id and halt.arrives < join.arrives  # the Halt sent after the Join arrives before it
    [split] = violations(events, "split_brain")
    assert (split.t, split.nodes) == (0.656745, (2, 3))
    ended = next(e for e in events if e.kind == "violation" and e.property == "split_brain" and e.phase == "end")
    assert ended.duration == 1.176057
    led = sorted((e.t, e.node) for e in events if e.kind == "state" and e.leader == e.node and e.t < 1)
    assert led == [(0.632802, 3), (0.656745, 2)]
    fifo = without(session, 25.6, reorder=False)
    assert not [e for e in fifo if e.kind == "violation"]


FAULT_CLAIMS = {
    "lost-answer-classic.scenario": check_lost_answer_classic,
    "lost-coordinator-classic.scenario": check_lost_coordinator_classic,
    "lost-election-ring.scenario": check_lost_election_ring,
    "duplicated-election-classic.scenario": check_duplicated_election_classic,
    "mutex-lost-release.scenario": check_mutex_lost_release,
    "drift-suspects-live-leader.scenario": check_drift_suspects_live_leader,
    "reorder-garcia-molina.scenario": check_reorder_garcia_molina,
}
