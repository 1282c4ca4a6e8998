"""`--headless --compare`: the same scenario on every algorithm, one table (or JSON rows)."""

import json

import pytest

from playground.core.config import ClusterConfig, Faults
from playground.run.compare import SHUFFLES, STORM_ELECTIONS, Result, compare, ring_table, table
from protocol import ALGORITHMS
from tests.test_cli import headless

CONSTANT = ClusterConfig(delay_min=1, delay_max=1)


def test_every_algorithm_re_elects_after_the_leader_crashes():
    results = compare(CONSTANT, seed=1, sizes=(5,))
    assert [r.algorithm for r in results if r.ring in (None, "sorted")] == list(ALGORITHMS)
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
    main = table(results, CONSTANT).split("\n\n")[1]
    rows = [line for line in main.splitlines() if line.startswith("| ") and "algorithm" not in line]
    assert len(rows) == 2 * len(ALGORITHMS) == 16  # eight algorithms, two sizes (the rings sorted)
    assert rows[0] == "| classic | 4 | 10.0 s | 15.0 s | 12 | election 6, answer 3, coordinator 3 | 3 | probe 3 |"


def test_the_cli_prints_the_table(capsys):
    code, out, err = headless(capsys, "--compare", "--nodes", "4")
    assert code == 0 and err == ""
    assert "delay 1..1 s" in out  # compare counts with a constant delay unless told
    main, rings = out.split("\n\n")[1], out.split("\n\n")[3]
    assert main.count("| 4 |") == len(ALGORITHMS)
    assert rings.count("| 4 |") == 2 * 4  # ring and hs: sorted, reversed, the shuffles' mean and worst


def test_json_gives_one_object_per_row(capsys):
    code, out, _ = headless(capsys, "--compare", "--nodes", "4", "--algorithm", "stoller", "--format", "json")
    [row] = [json.loads(line) for line in out.splitlines()]
    assert set(row) == {"algorithm", "nodes", "messages", "detector_messages", "detect", "agree", "ring", "start_up"}
    assert (row["algorithm"], row["nodes"], row["messages"]) == ("stoller", 4, {"halt": 2, "ack": 2, "ldr": 2})
    assert row["ring"] is None and row["start_up"] == {"halt": 3, "ack": 3, "ldr": 3}
    code, out, _ = headless(capsys, "--compare", "--nodes", "4", "--algorithm", "hs", "--format", "json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["ring"] for r in rows] == ["sorted", "reversed", *(f"shuffled {1 + k}" for k in range(SHUFFLES))]


# --- the algorithms on a ring, over several orders ---------------------------------------


def start_up(result, *kinds) -> int:
    return sum(result.start_up.get(kind, 0) for kind in kinds)


@pytest.mark.parametrize("n", [8, 16])
def test_chang_roberts_start_up_is_its_best_case_sorted_its_worst_reversed_and_between_shuffled(n):
    results = {r.ring: r for r in compare(CONSTANT, seed=1, sizes=(n,), algorithms=("ring",))}
    assert len(results) == 2 + SHUFFLES  # sorted, reversed, and distinct shuffles
    elections = {ring: r.start_up["election"] for ring, r in results.items()}
    assert elections.pop("sorted") == 2 * n - 1 and elections.pop("reversed") == n * (n + 1) // 2
    assert all(2 * n - 1 <= count <= n * (n + 1) // 2 for count in elections.values())
    assert len(set(elections.values())) > 1  # the shuffles differ
    assert all(r.start_up["elected"] == n and r.agree is not None for r in results.values())


def test_hs_costs_the_least_on_the_sorted_and_reversed_rings_and_stays_within_its_bound():
    n = 16
    results = {r.ring: r for r in compare(CONSTANT, seed=1, sizes=(n,), algorithms=("hs",))}
    counts = {ring: start_up(r, "hs_probe", "reply") for ring, r in results.items()}
    assert counts["sorted"] == counts["reversed"] == 136  # mirror images: only 16 survives phase 0
    assert all(136 < count <= 8 * n * (1 + 4) for ring, count in counts.items() if ring.startswith("shuffled"))


def test_the_ring_table_gives_each_order_and_the_shuffles_mean_and_worst_beside_the_theory():
    results = compare(CONSTANT, seed=1, sizes=(8,), algorithms=("ring",))
    text = ring_table(results)
    rows = [line for line in text.splitlines() if line.startswith("| ring")]
    assert [row.split(" | ")[2] for row in rows] == ["sorted", "reversed", f"shuffled ×{SHUFFLES}: mean",
                                                      f"shuffled ×{SHUFFLES}: worst"]
    assert rows[0].startswith("| ring | 8 | sorted | 23 | election 15, elected 8 | 23..44 |")
    assert rows[1].startswith("| ring | 8 | reversed | 44 | election 36, elected 8 | 23..44 |")
    shuffled = [start_up(r, "election", "elected") for r in results if r.ring.startswith("shuffled")]
    mean, worst = rows[2].split(" | ")[3], rows[3].split(" | ")[3]
    assert (mean, worst) == (f"{sum(shuffled) / SHUFFLES:.1f}", str(max(shuffled)))
    main = table(results, CONSTANT).split("\n\n")[1]
    assert [line.split(" | ")[1] for line in main.splitlines() if line.startswith("| ring")] == ["8"]  # sorted only


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


# --- a run that never settles stops as a storm -------------------------------------------

def test_a_storm_is_stopped_at_its_bound_and_its_row_says_so(capsys):
    """The classic Bully with a delay range longer than T / 2: each late Election starts a
    round again. The run stops at the end of the first batch past 100 N^2 election
    messages, before t = 100 s (virtual time throughout: where it stops is counted, not
    timed). The command runs it once (JSON); its table row is made from the same result,
    as the command makes it (the storm takes 5 s of CPU a run)."""
    code, out, err = headless(capsys, "--compare", "--algorithm", "classic", "--nodes", "32", "--delay", "1:3",
                              "--format", "json")
    [row] = [json.loads(line) for line in out.splitlines()]
    storm = row["storm"]
    assert code == 0 and "synchrony assumption is broken" in err
    assert STORM_ELECTIONS * 32**2 < storm["sent"] < 2 * STORM_ELECTIONS * 32**2 and 0 < storm["t"] < 60
    assert 0 < storm["in_flight"] < storm["sent"] and row["agree"] is None
    stopped = Result("classic", 32, None, row["detect"], None, {}, {}, storm=storm)
    [line] = [line for line in table([stopped], CONSTANT).splitlines() if line.startswith("| classic")]
    assert line == (f"| classic | 32 | – | storm: stopped at t = {storm['t']:.1f} s, {storm['sent']:,} election msgs "
                    f"| – | – | – | – |")


def test_a_run_that_settles_is_not_touched_by_the_bound(monkeypatch):
    constant = compare(CONSTANT, seed=1, sizes=(8,), algorithms=("classic", "stoller", "hs"))
    monkeypatch.setattr("playground.run.compare.STORM_ELECTIONS", 10**9)
    assert compare(CONSTANT, seed=1, sizes=(8,), algorithms=("classic", "stoller", "hs")) == constant
    assert all(r.storm is None and "storm" not in r.row() for r in constant)


def test_a_run_that_never_agrees_again_but_sends_little_a_second_is_no_storm():
    """hs with loss retries to the limit: past 100 N^2 messages, at far less than N^2 a second."""
    lossy = ClusterConfig(delay_min=1, delay_max=1, faults=Faults(loss=0.1))
    [sorted_ring] = [r for r in compare(lossy, seed=1, sizes=(8,), algorithms=("hs",)) if r.ring == "sorted"]
    faulty = sorted_ring.with_faults
    assert faulty.storm is None and faulty.fault_at is None  # its start-up never agreed, to the limit
    assert sum(faulty.start_up.values()) > STORM_ELECTIONS * 8**2
    assert table([sorted_ring], lossy).split("\n\n")[1].endswith(" start-up never agreed | – | 1 |")


def test_the_run_with_faults_says_its_storm_in_its_own_columns():
    config = ClusterConfig(delay_min=0.5, delay_max=1.5, faults=Faults(reorder=True))
    storm = {"t": 21.855, "sent": 102_415, "in_flight": 18_086}
    faulty = Result("classic", 32, None, None, None, {}, {}, violations=3, storm=storm)
    settled = Result("classic", 32, 30.0, 10.0, 15.0, {"election": 5}, {"probe": 1}, with_faults=faulty)
    row = table([settled], config).splitlines()[-1]
    assert row.endswith("| storm: stopped at t = 21.9 s, 102,415 election msgs | – | 3 |")
    assert settled.row()["with_faults"]["storm"] == storm and "storm" not in settled.row()
