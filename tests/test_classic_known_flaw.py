"""Classic Bully's known flaw (PROTOCOLS.md): a crashed node that comes back mid-election
announces itself without asking, and its Coordinator can cross another's. Stated here
message by message on the harness (no timing decides the interleaving), with the rule
of classic.py that each step takes."""

from playground.core.config import ClusterConfig
from playground.run.harness import Harness

CONFIG = ClusterConfig(timeout=4, probe_interval=5)


def crossed() -> Harness:
    h = Harness("classic", 3, CONFIG)
    h.boot()
    h.deliver_all()
    assert h.leaders() == {1: 3, 2: 3, 3: 3}
    h.at(10)
    h.crash(3)
    h.elect(2)  # rule 1: 2 asks 3, the only higher node
    h.deliver(2, 3)  # 3 is down: dropped
    h.at(14)
    h.fire(2, "answer_wait")  # rule 2: no Answer within T, so 2 leads and tells 1 and 3
    h.recover(3)  # rule 1: the highest node announces itself at once, to 1 and 2
    in_flight = {link: [m.label for m in msgs] for link, msgs in h.in_flight().items()}
    assert in_flight == {(2, 1): ["Coordinator"], (2, 3): ["Coordinator"], (3, 1): ["Coordinator"], (3, 2): ["Coordinator"]}
    h.deliver(3, 2)  # rule 5: 2 takes 3's Coordinator...
    h.deliver(2, 3)  # ...and 3 takes 2's: they cross
    h.deliver(3, 1)
    h.deliver(2, 1)  # 1 takes the last one it gets
    return h


def test_crossing_coordinators_leave_a_disagreement():
    h = crossed()
    assert h.leaders() == {1: 2, 2: 3, 3: 2}


def test_probing_cannot_see_it_because_everyone_asked_is_alive():
    h = crossed()
    for t, (node, leader) in enumerate([(1, 2), (2, 3), (3, 2)] * 3, start=20):
        h.at(t)
        h.fire(node, "probe")
        h.deliver(node, leader)  # the Probe
        h.deliver(leader, node)  # its reply: alive, so nothing happens
    assert h.leaders() == {1: 2, 2: 3, 3: 2}
    assert not [e for e in h.events if e.kind == "election_start" and e.t >= 20]


def test_the_monitor_reports_it_at_the_end_of_the_instant_and_it_never_ends():
    h = crossed()
    h.at(60)
    seen = [(e.t, e.property, e.phase, e.nodes, e.leaders) for e in h.events if e.kind == "violation"]
    # Within the instant 14 both 2 and 3 led for a moment: no duration, so not a split brain.
    assert seen == [(14, "sle1", "begin", (1, 2, 3), (2, 3, 2))]
