"""The message counts PROTOCOLS.md states (classic Bully, the ring), on the full trio cluster.
Garcia-Molina's and Stoller's sections state none."""

from dataclasses import replace

import pytest
import trio
import trio.testing

from playground.core.engine import Engine
from playground.run.cluster import Cluster
from protocol import HirschbergSinclair, Ring
from tests.support import WORST_CASE, at, final_states, run, sends


def test_worst_case_n10_matches_protocols_md():
    # Leader 10 crashes at t=20 and node 1, the lowest, detects it.
    cluster, events = run(10, 60, commands=at("20 crash 10", "20 elect 1"))
    assert sends(events, after=20) == {"election": 45, "answer": 36, "coordinator": 9}
    assert {i: s for i, s in final_states(cluster).items() if i != 10} == {i: ("normal", 9, True) for i in range(1, 10)}


@pytest.mark.parametrize("n", [3, 4, 7, 16, 32])
def test_worst_case_formulas(n):
    _, events = run(n, 60, commands=at(f"20 crash {n}", "20 elect 1"))
    assert sends(events, after=20) == {
        "election": n * (n - 1) // 2,
        "answer": (n - 1) * (n - 2) // 2,
        "coordinator": n - 1,
    }


@pytest.mark.parametrize("n", [3, 10, 32])
def test_best_case_next_highest_detects(n):
    # One Election (to the crashed leader, dropped), then N-1 Coordinators.
    cluster, events = run(n, 60, commands=at(f"20 crash {n}", f"20 elect {n - 1}"))
    assert sends(events, after=20) == {"election": 1, "coordinator": n - 1}
    dropped = [e for e in events if e.kind == "drop" and e.t > 20]
    assert len(dropped) == 2 and all(e.dst == n and e.reason == "receiver down" for e in dropped)
    assert final_states(cluster)[1] == ("normal", n - 1, True)


def test_elections_are_counted_per_node_run():
    _, events = run(10, 60, commands=at("20 crash 10", "20 elect 1"))
    starts = [e.node for e in events if e.kind == "election_start" and e.t >= 20]
    assert sorted(starts) == list(range(1, 10))  # each node starts its election once


# --- the ring (Chang & Roberts): PROTOCOLS.md section 4 ----------------------------------


@pytest.mark.parametrize("n", [3, 8, 16, 32])
def test_ring_single_initiator_after_the_highest_id_takes_3n_minus_1(n):
    # Settled under n (start-up takes about 2n hops); then node 1, the one after n
    # round the ring, alone starts an election.
    start = 3 * n
    cluster, events = run(n, 7 * n, commands=at(f"{start} elect 1"), algorithm="ring")
    counts = sends(events, after=start)
    assert (counts["election"], counts["elected"]) == (2 * n - 1, n)
    assert counts["election"] + counts["elected"] == 3 * n - 1
    assert counts["ack"] == 3 * n - 1  # every ring message is acked (transport, not election)
    assert set(final_states(cluster).values()) == {("normal", n, True)}


@pytest.mark.parametrize("n", [3, 8, 16])
def test_ring_all_initiating_in_the_worst_order_takes_n_n_plus_1_over_2_elections(n):
    # the worst order: each node's successor is the next lower id (the lowest wraps round to the highest)
    engine = Engine(Ring, range(1, n + 1), replace(WORST_CASE, ring=tuple(range(n, 0, -1))), seed=1)
    events = []
    engine.subscribe(events.extend)
    trio.run(Cluster(engine).run, 30 + 2 * n, clock=trio.testing.MockClock(autojump_threshold=0))
    counts = sends(events)
    assert counts["election"] == n * (n + 1) // 2  # every node starts at once: start-up
    assert counts["elected"] == n


# --- Hirschberg & Sinclair: protocol/hs.py's header ----------------------------------------


@pytest.mark.parametrize(("n", "probes", "replies", "beats_chang_roberts"),
                         [(8, 44, 20, False), (16, 92, 44, False), (24, 156, 84, True), (64, 380, 188, True)])
def test_hs_start_up_count_against_its_bound_and_chang_roberts_worst_case(n, probes, replies, beats_chang_roberts):
    # Every node starts at once, on the ring in id order: only n survives phase 0.
    cluster, events = run(n, 12 * n, commands=(), algorithm="hs")
    counts = sends(events)
    assert (counts["hs_probe"], counts["reply"], counts["elected"]) == (probes, replies, n - 1)
    assert probes + replies + n - 1 <= HirschbergSinclair.bound(n)  # 8n(1 + ceil(log2 n)), and Elected
    assert (probes + replies < n * (n + 1) // 2) == beats_chang_roberts  # C&R, ids descending its way round
    assert set(final_states(cluster).values()) == {("normal", n, True)}
