"""The message counts PROTOCOLS.md states for classic Bully, on the full trio cluster."""

import pytest

from tests.support import at, final_states, run, sends


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
