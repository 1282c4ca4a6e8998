"""`--headless --compare`: the same scenario on every algorithm, one table."""

import pytest

from playground.compare import compare, table
from playground.config import ClusterConfig
from protocol import ALGORITHMS
from tests.test_cli import headless

CONSTANT = ClusterConfig(delay_min=1, delay_max=1)


def test_every_algorithm_re_elects_after_the_leader_crashes():
    results = compare(CONSTANT, seed=1, sizes=(5,))
    assert [r.algorithm for r in results] == list(ALGORITHMS)
    for r in results:
        assert r.fault_at is not None and r.agreed_after is not None, r
        assert r.agreed_after <= CONSTANT.settle_time(5)
    classic = results[0]
    # Every follower's probe fires at once (constant delay): each finds 5 gone, and
    # node k sends Elections to the k+1..4 above it; they all answer and re-announce.
    assert classic.messages["election"] == 4 + 3 + 2 + 1 and classic.messages["answer"] == 10


def test_the_table_has_one_row_per_algorithm_and_size_with_messages_by_type():
    results = compare(CONSTANT, seed=1, sizes=(4, 8))
    lines = table(results, CONSTANT).splitlines()
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| algorithm")]
    assert len(rows) == 8
    assert rows[0].startswith("| classic | 4 | 15.0 s | 27 | coordinator 12, ")
    assert any(row.startswith("| stoller | 8 |") and "heartbeat" in row for row in rows)


def test_the_cli_prints_the_table(capsys):
    code, out, err = headless(capsys, "--compare", "--nodes", "4")
    assert code == 0 and err == ""
    assert "delay 1..1 s" in out  # compare counts with a constant delay unless told
    assert out.count("| 4 |") == len(ALGORITHMS)


@pytest.mark.parametrize("extra", [["--at", "5 crash 1"], ["--transcript", "x.jsonl"]])
def test_compare_runs_its_own_scenario(capsys, extra):
    code, _, err = headless(capsys, "--compare", *extra)
    assert code == 2 and "--compare runs its own scenario" in err
