"""A node's step taken once (run/explore_state.py rule 5): whenever the search gives the
engine a host it remembers, running the step gives the same. Each step of each search
here is run again on a copy of the host before it, and compared with what the search
gave: the records, the machine and its safe storage, the timers, what the host last
reported (down or left, its place with respect to the critical section) and its timers'
numbering. The searches have what tells hosts apart beyond their number: a node that
left beside one that crashed, a lock's node that crashed wanting the critical section."""

from __future__ import annotations

import pytest

from playground.core.config import ClusterConfig
from playground.core.monitor import MUTEX
from playground.run import explore_state
from playground.run.explore import Bounds, Model, explore
from playground.run.explore_values import canonical, canonical_object, copy_object

EDGE = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
SEARCHES = {
    "members": (Model("classic", 3, EDGE, timed=False), Bounds(faults=1, joins=1, leaves=1, most=6000)),
    "members-timed": (Model("classic", 3, EDGE), Bounds(faults=1, leaves=1, most=6000)),
    "lamport": (Model("classic+lamport", 3, EDGE, timed=False), Bounds(faults=2, requests=2, most=6000)),
    "garcia-molina": (Model("garcia-molina", 3, EDGE), Bounds(faults=2, most=6000)),
}


def what(host) -> tuple:
    m = host.machine
    return (host.up, canonical(host.storage), None if m is None else canonical_object(m), dict(host.timers),
            host.state, host.cs, host._generation, explore_state._records(host.records))


@pytest.mark.parametrize("name", SEARCHES)
def test_a_remembered_step_is_the_step_run(monkeypatch, name):
    model, bounds = SEARCHES[name]
    taken = explore_state.Stepper.host_step
    steps = {"remembered": 0, "run": 0}

    def checked(self, node, entry, work):
        known = len(self._steps)
        ran = copy_object(self.h.engine.hosts[node], {})
        ran.run([entry], self.h.now_us + 1)
        host = taken(self, node, entry, work)
        steps["run" if len(self._steps) > known else "remembered"] += 1
        assert what(host) == what(ran), f"node {node}, {entry}"
        return host

    monkeypatch.setattr(explore_state.Stepper, "host_step", checked)
    explore(model, MUTEX, bounds)  # (no lock's search breaks it, and Lamport's here does late: they run on)
    assert steps["remembered"] > steps["run"] > 0, steps
