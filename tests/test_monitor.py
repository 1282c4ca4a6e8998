"""The runtime's safety and liveness monitor: what it reports, when, and that it catches
what PROTOCOLS.md says breaks."""

import pytest

from playground.config import ClusterConfig
from playground.events import CrashEvent, StartEvent, StateEvent
from playground.monitor import Monitor
from tests.support import at, run

SHORT_T = ClusterConfig(timeout=1, probe_interval=3, delay_min=0.5, delay_max=1.5)  # T < 2 x max delay
SAME_WITH_SYNCHRONY = ClusterConfig(timeout=4, probe_interval=3, delay_min=0.5, delay_max=1.5)
FAULTS = ("13.36 crash 1", "20.70 recover 1", "30.74 crash 4", "41.77 recover 4",
          "45.24 crash 2", "49.83 recover 2", "50.94 crash 4", "61.30 recover 4")


def reports(events, phase: str = "begin") -> list:
    return [e for e in events if e.kind == "violation" and e.phase == phase]


def feed(monitor: Monitor, *events) -> list:
    return [v for e in events for v in monitor.observe(e)]


def state(t, node, leader, normal=True):
    return StateEvent(0, t, node, "normal" if normal else "election", leader, normal)


def test_sle1_is_an_episode_with_a_begin_an_end_and_a_duration():
    m = Monitor((1, 2, 3), settle=100)
    out = feed(m, StartEvent(0, 0, 1), StartEvent(0, 0, 2), StartEvent(0, 0, 3),
               state(1, 1, 3), state(1, 2, 3), state(2, 3, 2))
    assert [(v.property, v.phase, v.t, v.nodes) for v in out] == [("sle1", "begin", 2, (1, 2, 3))]
    assert out[0].detail == "normal nodes disagree: 1, 2 follow 3; 3 follow 2"
    out = feed(m, state(2.5, 3, 3))
    assert [(v.property, v.phase, v.t, v.duration) for v in out] == [("sle1", "end", 2.5, 0.5)]


def test_split_brain_needs_two_nodes_that_each_lead_and_ends_when_one_crashes():
    m = Monitor((1, 2, 3), settle=100)
    out = feed(m, StartEvent(0, 0, 2), StartEvent(0, 0, 3), state(1, 3, 3, normal=False), state(1.5, 2, 2, normal=False))
    assert [(v.property, v.phase, v.nodes) for v in out] == [("split_brain", "begin", (2, 3))]
    out = feed(m, CrashEvent(0, 4, 3))
    assert [(v.property, v.phase, v.duration) for v in out] == [("split_brain", "end", 2.5)]


def test_nodes_that_are_down_or_not_normal_cannot_disagree():
    m = Monitor((1, 2, 3), settle=100)
    out = feed(m, StartEvent(0, 0, 1), StartEvent(0, 0, 2), state(1, 1, 2), state(1, 2, 1, normal=False), state(1, 3, 3))
    assert out == []


def test_sle2_is_checked_c_after_the_last_fault_even_in_a_cluster_with_nothing_to_do():
    # No probing: after the leader crashes nobody notices, and nothing else happens.
    config = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1, settle=30)
    _, events = run(4, 100, config, at("10 crash 4"))
    [v] = reports(events)
    assert (v.property, v.t, v.nodes) == ("sle2", 40, (1, 2, 3))
    assert v.detail == "30 s after the last crash or recovery, node(s) 1, 2, 3 not normal under 3"


def test_the_default_c_follows_T_P_the_delay_and_N():
    c = ClusterConfig(timeout=4, probe_interval=5, delay_min=0.5, delay_max=1.5)
    assert c.settle_time(7) == 2 * 5 + 17 * 4
    assert ClusterConfig(timeout=1, probe_interval=5, delay_max=1.5).settle_time(7) == 2 * 5 + 17 * 3  # 2 x delay
    assert ClusterConfig(settle=12).settle_time(7) == 12


def test_a_recovery_resets_the_sle2_clock_and_a_settled_cluster_passes():
    _, events = run(5, 400, SAME_WITH_SYNCHRONY, at("10 crash 5", "150 recover 5"), algorithm="garcia-molina")
    assert reports(events) == []


def test_classic_old_leader_recovering_mid_election_is_caught():
    # PROTOCOLS.md, "Known flaw": 3 comes back and declares itself without asking,
    # while 2 declares itself too; their Coordinators cross.
    config = ClusterConfig(timeout=4, probe_interval=5, delay_min=1, delay_max=1)
    _, events = run(3, 100, config, at("10 crash 3", "10 elect 2", "13.5 recover 3"))
    seen = [(v.t, v.property, v.phase) for v in events if v.kind == "violation"]
    assert seen == [
        (14.0, "sle1", "begin"), (14.0, "split_brain", "begin"),  # both lead; 1 follows 3
        (14.5, "sle1", "end"), (14.5, "split_brain", "end"),  # 2 and 3 take each other's Coordinator
        (15.0, "sle1", "begin"),  # 1 takes 2's: and nothing ever repairs it
        (75.5, "sle2", "begin"),
    ]


@pytest.mark.parametrize("algorithm", ["classic", "garcia-molina", "stoller", "ring"])
def test_any_algorithm_breaks_when_T_is_below_twice_the_max_delay_and_the_monitor_says_so(algorithm):
    _, events = run(6, 200, SHORT_T, at(*FAULTS), seed=1, algorithm=algorithm)
    assert reports(events), f"{algorithm}: no violation reported"


@pytest.mark.parametrize("algorithm", ["garcia-molina", "stoller"])
def test_the_same_faults_with_synchrony_break_nothing(algorithm):
    _, events = run(6, 200, SAME_WITH_SYNCHRONY, at(*FAULTS), seed=1, algorithm=algorithm)
    assert reports(events) == []
