"""The worst cases in messages that algorithms declare (Node.worst_case_messages, the
status bar's "worst"), against runs.

A declared worst case bounds an election round as the status bar counts it (core/rounds.py:
from the election that begins it to agreement again, failure detection apart) when
faults come one at a time: each crash, recovery or `elect` comes while all agree, and
nothing else until all agree again, with T >= 2 x max delay. Random schedules of that
kind, random delays and random rings: no round after the start-up's takes more.

Where an algorithm declares none, a run shows why: one fault, and a round that takes
more than the textbook's figure for one election (Raft's: tests/test_raft_rules.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.core.commands import Crash, Elect, Recover, Scheduled
from playground.core.config import ClusterConfig
from playground.core.rounds import Rounds
from protocol import ALGORITHMS, machine
from tests.support import run
from tests.test_random_schedules import configs

DECLARED = [name for name, cls in ALGORITHMS.items() if cls.worst_case_messages(4) is not None]


def round_counts(events) -> list[int]:
    """Each election round's messages, as the status bar counts them, the start-up's first."""
    rounds = Rounds(kept=[])
    for e in events:
        rounds.observe(e)
    return [sum(r.messages.values()) for r in rounds.kept]


@st.composite
def one_at_a_time(draw, algorithm: str) -> tuple[int, ClusterConfig, int, list[Scheduled]]:
    """Nodes, settings, seed and one to three faults, each c (the algorithm's time to
    settle) or more after the one before: crash the highest up node (the leader) or any
    up node, recover a crashed one, or make an up node start an election."""
    nodes = draw(st.integers(2, 8))
    config = draw(configs())
    if ALGORITHMS[algorithm].on_a_ring:
        config = replace(config, ring=tuple(draw(st.permutations(range(1, nodes + 1)))))
    c = ALGORITHMS[algorithm].settle_time(nodes, config.protocol, config.delay_max)
    t, down, faults = 0.0, set(), []
    for _ in range(draw(st.integers(1, 3))):
        t = round(t + c + draw(st.floats(0, 5)), 3)
        up = [i for i in range(1, nodes + 1) if i not in down]
        kind = draw(st.sampled_from(["crash the leader", "crash", "recover", "elect"]))
        if kind == "recover" and down:
            node = draw(st.sampled_from(sorted(down)))
            down.discard(node)
            faults.append(Scheduled(t, Recover(node), "hypothesis"))
        elif kind == "elect" or len(up) == 1:
            faults.append(Scheduled(t, Elect(draw(st.sampled_from(up))), "hypothesis"))
        else:
            node = max(up) if kind == "crash the leader" else draw(st.sampled_from(up))
            down.add(node)
            faults.append(Scheduled(t, Crash(node), "hypothesis"))
    return nodes, config, draw(st.integers(0, 2**16)), faults


def test_the_declared_worst_cases_are_hs_alone():
    assert DECLARED == ["hs"]
    assert all(machine(f"hs+{mutex}").worst_case_messages(5) is None for mutex in ("central", "lamport"))


@pytest.mark.parametrize("algorithm", DECLARED)
@given(data=st.data())
def test_no_round_takes_more_than_the_declared_worst_case(algorithm, data):
    nodes, config, seed, faults = data.draw(one_at_a_time(algorithm))
    c = ALGORITHMS[algorithm].settle_time(nodes, config.protocol, config.delay_max)
    _, events = run(nodes, faults[-1].at + c + 1, config, faults, seed=seed, algorithm=algorithm)
    worst = ALGORITHMS[algorithm].worst_case_messages(nodes)
    counts = round_counts(events)[1:]  # (the start-up's round is not compared: every node starts at once)
    assert all(count <= worst for count in counts), (counts, worst)


def sync(timeout, probe, delay_min, delay_max) -> ClusterConfig:
    return ClusterConfig(timeout=timeout, probe_interval=probe, delay_min=delay_min, delay_max=delay_max)


# (algorithm, nodes, settings, seed, the one fault, its time, the textbook's figure for one election)
BEYOND = [
    # Followers notice the crash at different moments; a late Election restarts the new leader's.
    ("classic", 8, sync(2.5, 2, 0.5, 1), 44601, Crash(8), None, 8 * 7 // 2 + 7 * 6 // 2 + 7),
    ("epoch-bully", 7, sync(2.2, 2, 0.1, 1.1), 19310, Elect(1), 43.104, 7 * 6 // 2 + 6 * 5 // 2 + 6),
    # Every hop is acked, and followers start elections of their own.
    ("ring", 8, ClusterConfig(), 1, Crash(8), None, 3 * 8 - 1),
]


@pytest.mark.parametrize(("algorithm", "nodes", "config", "seed", "fault", "at", "textbook"), BEYOND)
def test_where_none_is_declared_one_fault_takes_a_round_beyond_the_textbooks_figure(
        algorithm, nodes, config, seed, fault, at, textbook):
    assert ALGORITHMS[algorithm].worst_case_messages(nodes) is None
    c = ALGORITHMS[algorithm].settle_time(nodes, config.protocol, config.delay_max)
    at = at or c  # (the start-up has settled by c)
    _, events = run(nodes, at + c, config, [Scheduled(at, fault, "test")], seed=seed, algorithm=algorithm)
    assert max(round_counts(events)[1:]) > textbook
