"""The model's rules for one node (playground/core/host.py), which every driver of the
engine shares: here on the harness (the engine stepped by hand), with no trio and no clock."""

import pytest

from playground.core.config import ClusterConfig
from playground.core.host import NodeHost
from playground.core.commands import Crash
from playground.core.work import DELIVERY, TIMER, Boot, Deliver, Fire
from playground.run.harness import Harness
from protocol import ALGORITHMS, Config

CONFIG = ClusterConfig(timeout=4, probe_interval=5)


def booted(nodes: int = 3, algorithm: str = "classic") -> Harness:
    h = Harness(algorithm, nodes, CONFIG)
    h.boot()
    return h


def test_rule1_a_link_hands_over_its_head_first():
    h = booted()  # 1 and 2 each asked 3; 3 announced itself to both
    h.elect(1)  # an election under way: the detector changes nothing
    h.fire(1, "answer_wait")  # 1 heard no Answer: it leads, and tells 2 and 3
    assert [m.label for m in h.in_flight()[(1, 2)]] == ["Election", "Coordinator"]
    [delivered] = [e for e in h.deliver(1, 2) if e.kind == "deliver"]
    sent = {e.id: e.msg.label for e in h.events if e.kind == "send"}
    assert sent[delivered.id] == "Election"  # the older one, whatever order a caller might like
    assert [m.label for m in h.in_flight()[(1, 2)]] == ["Coordinator"]


def test_rule1_there_is_nothing_to_deliver_on_an_empty_link():
    with pytest.raises(ValueError, match="nothing in flight from 2 to 1"):
        booted().deliver(2, 1)  # 2 asked only 3


def test_rule2_a_message_to_a_down_node_is_dropped_with_the_reason():
    h = booted()
    h.crash(3)
    [drop] = h.deliver(1, 3)
    assert (drop.kind, drop.dst, drop.reason) == ("drop", 3, "receiver down")


def test_rule3_a_timer_set_again_or_lost_in_a_crash_never_fires_its_old_setting():
    h = booted(2)
    host = h.hosts[1]
    _, generation = host.timers["answer_wait"]
    host.run([(0, TIMER, 0, Fire("answer_wait", generation - 1))], 0)  # a stale setting
    assert host.records == [] and "answer_wait" in host.timers
    h.crash(1)
    host.run([(0, TIMER, 0, Fire("answer_wait", generation))], 0)  # lost in the crash
    assert host.records == []


def test_rule4_crash_of_a_down_node_and_recovery_of_an_up_node_do_nothing():
    h = booted()
    assert [e.kind for e in h.recover(2)] == ["command"]  # recorded, and nothing else
    h.crash(2)
    assert [e.kind for e in h.crash(2)] == ["command"]
    assert h.hosts[2].internals().storage == {"incarnation": 1, "epoch": 1, "members": (1, 2, 3)}  # safe storage survives


def test_rule5_a_timer_due_inside_the_window_runs_there_after_the_work_queued_before_it():
    host = NodeHost(1, ALGORITHMS["classic"], (1, 2), Config(timeout=1, probe_interval=0))
    election = ALGORITHMS["classic"].messages[0]()  # from 2, which is higher: ignored
    host.run([(0, 0, 0, Boot()), (1_000_000, DELIVERY, 0, Deliver(2, 0, election))], window_end=2_000_000)
    kinds = [(e.kind, e.t) for e in host.records]
    # answer_wait (T = 1) falls due at t=1 with the delivery: the delivery runs first.
    assert kinds.index(("deliver", 1.0)) < kinds.index(("timer", 1.0))
    assert host.pending == []  # nothing left for later: 1 led at t=1 and set no timer
    host.run([(2_000_000, 0, 0, Crash(host.id))], 3_000_000)
    assert [e.kind for e in host.records][:1] == ["crash"]


def test_a_node_that_starts_reports_its_status_even_when_the_status_is_called_down():
    """Garcia-Molina's recovering node is "down" (its s := Down) but up and waiting, not
    crashed: the start is a change of role, and is reported."""
    h = Harness("garcia-molina", 2, CONFIG)
    [state] = [e for e in h.boot() if e.kind == "state" and e.node == 1]
    assert (state.status, state.role) == ("down", "waiting")
