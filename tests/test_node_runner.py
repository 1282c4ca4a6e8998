"""One node runner (playground/core/runner.py) for the simulation and for real nodes: the
same inputs, fed to the simulation's host and to a real node (its step, with sockets and
trio's timers left out, its trace written and read back), give the same events."""

from __future__ import annotations

import pytest

from playground.core.config import ClusterConfig, Workload
from playground.core.host import NodeHost
from playground.core.runner import Draws
from playground.core.commands import Elect, WantCs
from playground.core.work import Boot, Deliver, Fire
from playground.real import node as node_module
from playground.real.traces import read_trace
from playground.real.wire import Address
from protocol import machine

CONFIG = ClusterConfig(timeout=1.0, probe_interval=0.0, delay_min=0, delay_max=0)


class _Nursery:
    def start_soon(self, *_):
        pass  # (no trio here: the test fires the timers)


def _comparable(e) -> tuple:
    """An event's kind and fields, a message's number at its sender left out (the engine
    numbers the simulation's, a real node its own)."""
    fields = {name: getattr(e, name) for name in e.__slots__ if name not in ("seq", "id", "arrives")}
    return e.kind, tuple(sorted(fields.items(), key=lambda item: item[0]))


def _both(algorithm: str, node: int, ids: tuple[int, ...], inputs, tmp_path, monkeypatch, workload=None):
    """The events of the simulation's host and of a real node fed `inputs`: (t, item, or a
    timer's name: it fires; "": the first running)."""
    monkeypatch.setattr(node_module.Link, "put", lambda *_: None)  # (no sockets)
    host = NodeHost(node, machine(algorithm), ids, CONFIG.protocol, workload, seed=1)
    options = node_module.NodeOptions(node, Address("127.0.0.1", 1), {i: Address("127.0.0.1", 1) for i in ids if i != node},
                                      algorithm, str(tmp_path), CONFIG, workload=workload)
    real = node_module.RealNode(options, _Nursery())
    real.runner.draws = Draws(host.draws.workload_seed, host.draws.timer_seed)  # (each world seeds its own way: alike here)
    real.trace = node_module.TraceWriter(str(tmp_path / "trace.jsonl"), algorithm)
    simulated = []
    for t, item in inputs:
        us = round(t * 1e6)
        if item is Boot:
            real.first_step(t)
            item = Boot()
        else:
            if isinstance(item, str):  # a timer (None: the first running): it fires as set, in both
                name = item or min(host.timers)
                item = Fire(name, host.timers[name][1]), Fire(name, real.runner.timers[name][1])
            host_item, real_item = item if isinstance(item, tuple) else (item, item)
            real.instant = t
            real._take(real_item)
            real.instant = None
            item = host_item
        host.run([(us, 0, 0, item)], us + 1)
        simulated += host.records
    real.trace.close()
    return [_comparable(e) for e in simulated], [_comparable(line.event) for line in read_trace(real.trace.path)]


def test_the_simulations_host_and_a_real_node_make_the_same_events_of_the_same_inputs(tmp_path, monkeypatch):
    """Classic Bully's node 2 of three: it starts (an election: Election to 3, a timer),
    hears nothing (it leads: Coordinator to 1), is asked by 1 (an answer, and an election
    of its own), starts one when told to (elect)."""
    election = machine("classic").messages[0]()
    inputs = [(0.0, Boot), (1.0, "answer_wait"), (5.0, Deliver(1, 7, election)), (6.0, Elect(2))]
    simulated, real = _both("classic", 2, (1, 2, 3), inputs, tmp_path, monkeypatch)
    assert [kind for kind, _ in simulated] == [kind for kind, _ in real]
    assert simulated == real
    assert {"start", "send", "timer_set", "timer", "state", "deliver", "election_start"} <= {kind for kind, _ in real}


@pytest.mark.parametrize("algorithm", ["classic+central", "epoch-bully+ricart-agrawala"])
def test_a_lock_beside_the_election_makes_the_same_events_too(tmp_path, monkeypatch, algorithm):
    """The workload's timers (a think after the start, drawn alike in both) and a want:
    the same events, in the same order."""
    inputs = [(0.0, Boot), (1.0, ""), (2.0, WantCs(2))]
    if algorithm == "classic+central":  # (its leader serves itself: inside, and out after its hold)
        inputs.append((3.5, "cs_hold"))
    simulated, real = _both(algorithm, 2, (1, 2, 3), inputs, tmp_path, monkeypatch,
                            Workload(think=None, hold=(1.0, 2.0)))
    assert simulated == real
    assert "cs" in {kind for kind, _ in real}
