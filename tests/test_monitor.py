"""The runtime's safety and liveness monitor: what it reports, when, and that it catches
what PROTOCOLS.md says breaks."""

import pytest

from playground.core.config import ClusterConfig
from playground.core.events import CommandEvent, CrashEvent, StartEvent, StateEvent
from playground.core.monitor import Episodes, Monitor, describe
from playground.core.rounds import Rounds
from playground.run.harness import Harness
from protocol import ALGORITHMS
from protocol.classic import ClassicStatus
from tests.support import at, make_engine, run
from tests.test_interactions import play

SHORT_T = ClusterConfig(timeout=1, probe_interval=3, delay_min=0.5, delay_max=1.5)  # T < 2 x max delay
SAME_WITH_SYNCHRONY = ClusterConfig(timeout=4, probe_interval=3, delay_min=0.5, delay_max=1.5)
FAULTS = ("13.36 crash 1", "20.70 recover 1", "30.74 crash 4", "41.77 recover 4",
          "45.24 crash 2", "49.83 recover 2", "50.94 crash 4", "61.30 recover 4")


def reports(events, phase: str = "begin") -> list:
    return [e for e in events if e.kind == "violation" and e.phase == phase]


def feed(monitor: Monitor, *instants) -> list:
    """Each argument is one instant: (t, events...). The monitor judges its end."""
    out = []
    for t, *events in instants:
        for e in events:
            monitor.observe(e)
        out += monitor.close(t)
    return [v for v in out if v.kind == "violation"]


def state(t, node, leader, normal=True):
    status = ClassicStatus.NORMAL if normal else ClassicStatus.ELECTION
    return StateEvent(0, t, node, status, leader, status.role)


def test_rule4_sle1_is_an_episode_with_a_begin_an_end_and_a_duration():
    m = Monitor((1, 2, 3), settle=lambda: 100)
    out = feed(m, (0, StartEvent(0, 0, 1), StartEvent(0, 0, 2), StartEvent(0, 0, 3)),
               (1, state(1, 1, 3), state(1, 2, 3)), (2, state(2, 3, 2)))
    assert [(v.property, v.phase, v.t, v.nodes, v.leaders) for v in out] == [("sle1", "begin", 2, (1, 2, 3), (3, 3, 2))]
    assert describe(out[0]) == "normal nodes disagree: 1, 2 → 3; 3 → 2"
    out = feed(m, (2.5, state(2.5, 3, 3)))
    assert [(v.property, v.phase, v.t, v.duration) for v in out] == [("sle1", "end", 2.5, 0.5)]
    assert describe(out[0]) == "SLE1 over after 0.5 s"


def test_rule3_split_brain_needs_two_nodes_that_each_lead_and_ends_when_one_crashes():
    m = Monitor((1, 2, 3), settle=lambda: 100)
    out = feed(m, (0, StartEvent(0, 0, 2), StartEvent(0, 0, 3)), (1, state(1, 3, 3, normal=False)),
               (1.5, state(1.5, 2, 2, normal=False)))
    assert [(v.property, v.phase, v.nodes) for v in out] == [("split_brain", "begin", (2, 3))]
    assert describe(out[0], name=lambda i: f"n{i}") == "nodes n2, n3 each lead"
    out = feed(m, (4, CrashEvent(0, 4, 3)))
    assert [(v.property, v.phase, v.duration) for v in out] == [("split_brain", "end", 2.5)]


def test_rule2_nodes_that_are_down_or_not_normal_cannot_disagree():
    m = Monitor((1, 2, 3), settle=lambda: 100)
    out = feed(m, (0, StartEvent(0, 0, 1), StartEvent(0, 0, 2)), (1, state(1, 1, 2), state(1, 2, 1, normal=False), state(1, 3, 3)))
    assert out == []


def test_rule1_what_lasts_no_time_at_all_is_not_reported():
    """Two messages one node handles at the same instant: the state between them is not a state."""
    m = Monitor((1, 2, 3), settle=lambda: 100)
    out = feed(m, (0, StartEvent(0, 0, 1), StartEvent(0, 0, 2), StartEvent(0, 0, 3)),
               (1, state(1, 1, 3), state(1, 2, 3), state(1, 3, 2), state(1, 3, 3)))  # 3 passes through "follows 2"
    assert out == []


@pytest.mark.parametrize("coordinator_arrives, reported", [(10, []), (11, [("sle1", "begin", 10), ("sle1", "end", 11)])])
def test_rule1_a_disagreement_of_no_duration_is_not_reported(coordinator_arrives, reported):
    """3 crashes and 2 declares itself while 1 still follows 3: they disagree until 2's
    Coordinator reaches 1. If it does so at the same instant, they never did."""
    h = Harness("classic", 3)
    h.boot()
    h.deliver_all()
    h.at(10)
    h.crash(3)
    h.elect(2)
    h.deliver(2, 3)  # to a down node: dropped
    h.fire(2, "answer_wait")  # 2 leads
    h.at(coordinator_arrives)
    h.deliver(2, 1)
    h.at(20)
    assert [(e.property, e.phase, e.t) for e in h.events if e.kind == "violation"] == reported


def test_rule5_agreement_is_reported_when_reached_and_when_lost():
    """tests/interactions/classic-election.txt: 3 leads from the start; it crashes at 10,
    and 2 leads once its T is up (the file fires it at 14) and 1 has taken its Coordinator."""
    events = play("classic-election.txt").h.events
    assert [(e.t, e.leader) for e in events if e.kind == "agreement"] == [(0, 3), (10, None), (14, 2)]


def test_rule6_sle2_is_checked_c_after_the_last_fault_even_in_a_cluster_with_nothing_to_do():
    # No probing: after the leader crashes nobody notices, and nothing else happens.
    config = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1, settle=30)
    _, events = run(4, 100, config, at("10 crash 4"))
    [v] = reports(events)
    assert (v.property, v.t, v.nodes, v.expected, v.since) == ("sle2", 40, (1, 2, 3), 3, 10)
    assert describe(v) == "30 s after the last fault (at 10 s), nodes 1, 2, 3 not normal under 3"


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_each_algorithm_says_how_long_it_needs_and_c_defaults_to_that(algorithm):
    config = ClusterConfig(timeout=4, probe_interval=5, delay_min=0.5, delay_max=1.5)
    engine, _ = make_engine(7, config, algorithm=algorithm)
    assert engine.settle_time() == ALGORITHMS[algorithm].settle_time(7, config.protocol, 1.5) >= 2 * 5 + 17 * 4
    engine, _ = make_engine(7, ClusterConfig(settle=12), algorithm=algorithm)
    assert engine.settle_time() == 12


def test_episodes_pair_begins_and_ends_for_every_reader():
    """classic's known flaw (tests/interactions/classic-known-flaw.txt): 2 and 3 both lead
    from 14 to 14.5, when 3's Coordinator lands; 2's lands at 15, and then nothing
    repairs it: SLE2 c after the last fault, 3's recovery at 13.5."""
    h = play("classic-known-flaw.txt").h
    episodes = Episodes()
    for e in h.events:
        if e.kind == "violation":
            episodes.add(e)
    assert [(x.property, x.began.t, x.lasted) for x in episodes.all] == [
        ("sle1", 14, 0.5), ("split_brain", 14, 0.5), ("sle1", 15, None), ("sle2", 13.5 + h.engine.settle_time(), None)]
    assert list(episodes.open) == ["sle1"]


def test_a_recovery_resets_the_sle2_clock_and_a_settled_cluster_passes():
    _, events = run(5, 400, SAME_WITH_SYNCHRONY, at("10 crash 5", "150 recover 5"), algorithm="garcia-molina")
    assert reports(events) == []


def rounds_of(events) -> list[tuple[float, int, float | None]]:
    """(began, by, agreed) of each round, as the summary lists them."""
    rounds = Rounds(kept=[])
    for e in events:
        rounds.observe(e)
    return [(r.began, r.by, r.agreed) for r in rounds.kept]


def test_a_round_begins_with_the_election_that_loses_agreement_though_the_verdict_comes_later():
    """Garcia-Molina's Election first asks the higher nodes, for T, and changes no status
    meanwhile (tests/interactions/partition-garcia-molina.txt): cut off from 3 and 4,
    node 2 starts one while all still agree, and agreement is lost only T later, when it
    halts 1. The round is 2's, from its election (it used to begin only with an election
    started after the loss: none was, so there was no round)."""
    events = play("partition-garcia-molina.txt").h.events
    [election] = [e for e in events if e.kind == "election_start" and e.t > 0]
    [lost] = [e.t for e in events if e.kind == "agreement" and e.leader is None]
    assert election.t < lost
    assert rounds_of(events)[1:] == [(election.t, election.node, None)]


def test_the_leaders_own_election_is_over_when_it_starts_and_begins_no_later_round():
    """Classic's leader, told to elect, announces itself at once: all still agree. A crash
    later loses agreement with no election at its instant: the round is the election
    that follows it, not the leader's."""
    h = Harness("classic", 3, ClusterConfig(timeout=4, probe_interval=0))
    h.boot()
    h.deliver_all()
    h.at(5)
    h.elect(3)
    h.deliver_all()
    h.at(10)
    h.crash(3)
    h.at(11)
    h.elect(1)
    h.at(12)
    assert [e.t for e in h.events if e.kind == "election_start" and e.t > 0] == [5, 11]
    assert [(e.t, e.leader) for e in h.events if e.kind == "agreement"][1:] == [(10, None)]
    assert rounds_of(h.events)[1:] == [(11, 1, None)]


@pytest.mark.parametrize("algorithm", ["classic", "garcia-molina", "stoller", "ring"])
def test_any_algorithm_breaks_when_T_is_below_twice_the_max_delay_and_the_monitor_says_so(algorithm):
    _, events = run(6, 200, SHORT_T, at(*FAULTS), seed=1, algorithm=algorithm)
    assert reports(events), f"{algorithm}: no violation reported"


@pytest.mark.parametrize("algorithm", ["garcia-molina", "stoller"])
def test_the_same_faults_with_synchrony_break_nothing(algorithm):
    _, events = run(6, 200, SAME_WITH_SYNCHRONY, at(*FAULTS), seed=1, algorithm=algorithm)
    assert reports(events) == []


# --- rule 10: groups --------------------------------------------------------------------------


def grouped(t, node, leader, group, normal=True):
    status = ClassicStatus.NORMAL if normal else ClassicStatus.ELECTION
    return StateEvent(0, t, node, status, leader, status.role, group)


def test_rule10_with_groups_only_nodes_of_one_group_can_disagree_or_both_lead():
    m = Monitor((1, 2, 3, 4), settle=lambda: 100, highest_wins=False, groups=True)
    up = [StartEvent(0, 0, i) for i in (1, 2, 3, 4)]
    out = feed(m, (0, *up), (1, grouped(1, 1, 2, 7), grouped(1, 2, 2, 7), grouped(1, 3, 4, 9), grouped(1, 4, 4, 9)))
    assert out == []  # two groups, two leaders: allowed
    out = feed(m, (2, grouped(2, 1, 4, 7)))  # 1 follows 4 while still in 2's group
    assert [(v.property, v.nodes, v.leaders) for v in out] == [("sle1", (1, 2), (4, 2))]
    out = feed(m, (3, grouped(3, 1, 1, 9)))  # 1 leads in 4's group: 1, 3, 4 disagree now, and two lead
    assert [(v.property, v.phase, v.nodes) for v in out] == [("split_brain", "begin", (1, 4))]
    assert m._disagree() == [1, 3, 4]


def test_rule10_sle2_expects_one_group_on_each_side_of_a_cut_and_one_after_heal():
    def cluster():
        m = Monitor((1, 2, 3, 4), settle=lambda: 10, highest_wins=False, groups=True)
        feed(m, (0, *[StartEvent(0, 0, i) for i in (1, 2, 3, 4)]),
             (1, CommandEvent(0, 1, "partition", (1, 2), "at")),
             (2, grouped(2, 1, 2, 7), grouped(2, 2, 2, 7), grouped(2, 3, 4, 9), grouped(2, 4, 4, 9)))
        return m
    assert feed(cluster(), (11, )) == []  # a group on each side: settled
    m = cluster()
    out = feed(m, (5, CommandEvent(0, 5, "heal", (), "at")), (15, ))
    assert [(v.property, v.nodes) for v in out] == [("sle2", (1, 2))]  # still two groups c after the heal
    m = cluster()
    out = feed(m, (5, grouped(5, 1, 1, 8)), (15, ))  # 1 alone on its side of the cut
    assert [(v.property, v.nodes) for v in out] == [("sle2", (1,))]
