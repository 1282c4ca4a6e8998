"""`--headless --compare`: the same scenario on every algorithm, one table (or JSON rows)."""

import json

import pytest

from playground.core.config import ClusterConfig
from playground.run.compare import compare, table
from protocol import ALGORITHMS
from tests.test_cli import headless

CONSTANT = ClusterConfig(delay_min=1, delay_max=1)


def test_every_algorithm_re_elects_after_the_leader_crashes():
    results = compare(CONSTANT, seed=1, sizes=(5,))
    assert [r.algorithm for r in results] == list(ALGORITHMS)
    for r in results:
        assert r.fault_at is not None and r.detect is not None and r.agree is not None, r
        assert 0 < r.detect < r.agree


def test_classic_pays_for_one_election_and_not_for_the_start_up_storm():
    """Agreement is judged at the end of each instant, as the monitor does: the crash
    comes once the start-up is over, so the row counts one election (PROTOCOLS.md).
    Every follower's probe fires at once (constant delay), so each node k asks k+1..N."""
    [classic] = compare(CONSTANT, seed=1, sizes=(8,), algorithms=("classic",))
    n = 8
    assert classic.messages == {"election": n * (n - 1) // 2, "answer": (n - 1) * (n - 2) // 2, "coordinator": n - 1}
    assert classic.detector_messages == {"probe": n - 1}
    assert (classic.detect, classic.agree) == (10.0, 15.0)  # probe every 5 s, then T = 4, then the election


def test_failure_detector_traffic_is_counted_apart():
    [stoller] = compare(CONSTANT, seed=1, sizes=(8,), algorithms=("stoller",))
    assert stoller.messages == {"halt": 6, "ack": 6, "ldr": 6}  # halting one at a time: 3(N-2)
    assert set(stoller.detector_messages) == {"heartbeat"}
    [gm] = compare(CONSTANT, seed=1, sizes=(8,), algorithms=("garcia-molina",))
    assert gm.detector_messages == {"are_you_there": 7}  # the Timeout procedure's questions, not the Election's
    assert gm.messages["are_you_there"] == 28


def test_the_table_has_one_row_per_algorithm_and_size():
    results = compare(CONSTANT, seed=1, sizes=(4, 8))
    rows = [line for line in table(results, CONSTANT).splitlines() if line.startswith("| ") and "algorithm" not in line]
    assert len(rows) == 2 * len(ALGORITHMS) == 16  # eight algorithms, two sizes
    assert rows[0] == "| classic | 4 | 10.0 s | 15.0 s | 12 | election 6, answer 3, coordinator 3 | 3 | probe 3 |"


def test_the_cli_prints_the_table(capsys):
    code, out, err = headless(capsys, "--compare", "--nodes", "4")
    assert code == 0 and err == ""
    assert "delay 1..1 s" in out  # compare counts with a constant delay unless told
    assert out.count("| 4 |") == len(ALGORITHMS)


def test_json_gives_one_object_per_row(capsys):
    code, out, _ = headless(capsys, "--compare", "--nodes", "4", "--algorithm", "stoller", "--format", "json")
    [row] = [json.loads(line) for line in out.splitlines()]
    assert set(row) == {"algorithm", "nodes", "messages", "detector_messages", "detect", "agree"}
    assert (row["algorithm"], row["nodes"], row["messages"]) == ("stoller", 4, {"halt": 2, "ack": 2, "ldr": 2})


@pytest.mark.parametrize("extra, named", [
    (["--at", "5 crash 1"], "--at"), (["--transcript", "x.jsonl"], "--transcript"), (["--settle", "5"], "--settle"),
    (["--until", "100"], "--until"), (["--ids", "uuid"], "--ids"), (["--scenario", "s"], "--scenario"),
])
def test_options_compare_does_not_use_are_refused(capsys, extra, named):
    code, _, err = headless(capsys, "--compare", *extra)
    assert code == 2 and f"does not use {named}" in err and err.count("\n") == 1


def test_format_is_only_for_compare(capsys):
    code, _, err = headless(capsys, "--format", "json")
    assert code == 2 and "--format only applies to --compare" in err
