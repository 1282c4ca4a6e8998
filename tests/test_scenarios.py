"""Every shipped scenario (scenarios/) against the claim it states."""

from contextlib import ExitStack
from pathlib import Path

import pytest
import trio
import trio.testing

from playground.cli import parse_args
from playground.run.cluster import Cluster
from tests.support import sends

SCENARIOS = Path(__file__).parent.parent / "scenarios"


def play(name: str, until: float):
    """Load a scenario exactly as `bully-tui --headless --scenario` does and run it."""
    _, session = parse_args(["--headless", "--scenario", str(SCENARIOS / name)])
    events = []
    with ExitStack() as files:
        engine, summary, _ = session.start(files, lookahead=True)
        engine.subscribe(events.extend)
        trio.run(Cluster(engine).run, until, clock=trio.testing.MockClock(autojump_threshold=0))
    return session, engine, summary.report(), events


def leaders(report) -> dict[str, int | None]:
    """The leader of each up node."""
    return {str(n): report["leader"][str(n)] for n in report["up"]}


def violations(events, prop):
    return [e for e in events if e.kind == "violation" and e.property == prop and e.phase == "begin"]


def check_classic_worst_case():
    session, _, report, events = play("classic-worst-case.scenario", 60)
    assert session.nodes == 10 and session.algorithm == "classic"
    assert sends(events, after=20) == {"election": 45, "answer": 36, "coordinator": 9}
    assert set(leaders(report).values()) == {9}


def check_classic_best_case():
    _, _, report, events = play("classic-best-case.scenario", 60)
    assert sends(events, after=20) == {"election": 1, "coordinator": 9}
    assert set(leaders(report).values()) == {9}


def check_recovery_bully():
    _, _, report, events = play("recovery-bully.scenario", 100)
    after = sends(events, after=60)
    assert after.get("coordinator") == 6 and "election" not in after
    assert set(leaders(report).values()) == {7}
    assert [e.t for e in events if e.kind == "state" and e.node == 1 and e.leader == 7][-1] == 61


def check_split_brain_short_timeout():
    session, _, _, events = play("split-brain-short-timeout.scenario", 60)
    assert not session.config.synchronous
    seen = [(e.t, e.property, e.phase, e.nodes, e.duration) for e in events if e.kind == "violation" and e.t >= 20]
    assert seen == [
        (21, "sle1", "begin", (1, 2, 3, 4, 5), None),
        (21, "split_brain", "begin", (4, 5), None),  # 4 declares itself: 5's Answer is late
        (22.5, "sle1", "end", (1, 2, 3, 4, 5), 1.5),
        (22.5, "split_brain", "end", (4, 5), 1.5),  # 5 takes 4's Coordinator...
        (23, "sle1", "begin", (1, 2, 3, 4, 5), None),  # ...and the others take 5's: for ever
        (45, "sle2", "begin", (5,), None),
    ]


def check_ring_3n_minus_1():
    session, _, report, events = play("ring-3n-minus-1.scenario", 80)
    counts = sends(events, after=30)
    n = session.nodes
    assert counts["election"] + counts["elected"] == 3 * n - 1 == 23
    assert set(leaders(report).values()) == {8}


def partition_episode(events):
    """(when the split brain began, its duration, whom the two sides' leaders were)."""
    [began] = violations(events, "split_brain")
    [ended] = [e for e in events if e.kind == "violation" and e.property == "split_brain" and e.phase == "end"] or [None]
    return began.t, ended and ended.duration, began.nodes


def agreements(events) -> list[tuple[float, int | None]]:
    return [(e.t, e.leader) for e in events if e.kind == "agreement"]


def check_partition_classic():
    _, _, report, events = play("partition-classic.scenario", 200)
    assert partition_episode(events) == (29, 52, (3, 6))
    assert agreements(events)[-1] == (81, 6) and set(leaders(report).values()) == {6}
    assert any(e.kind == "held" for e in events)


def check_partition_garcia_molina():
    _, _, report, events = play("partition-garcia-molina.scenario", 200)
    assert partition_episode(events) == (34, None, (3, 6))  # never over
    assert [(e.t, e.nodes) for e in violations(events, "sle2")] == [(154, (1, 2, 3))]
    assert leaders(report) == {"1": 3, "2": 3, "3": 3, "4": 6, "5": 6, "6": 6}


def check_partition_stoller():
    _, _, report, events = play("partition-stoller.scenario", 200)
    assert partition_episode(events) == (28, 53, (3, 6))
    assert agreements(events)[-1] == (83, 6) and set(leaders(report).values()) == {6}


def check_partition_ring():
    _, _, report, events = play("partition-ring.scenario", 200)
    assert partition_episode(events) == (40, 40, (3, 6))
    assert agreements(events)[-1] == (91, 6) and set(leaders(report).values()) == {6}


def check_members_epoch_bully():
    _, _, report, events = play("members-epoch-bully.scenario", 100)
    assert report["members"] == [2, 3, 4, 5, 6, 7] and set(leaders(report).values()) == {7}
    assert [(e.t, e.nodes) for e in violations(events, "split_brain")] == [(20, (7, 8))]
    assert violations(events, "sle2") == []
    assert [e.t for e in events if e.kind == "state" and e.node == 7 and e.leader == 7][-1] == 41


CLAIMS = {
    "classic-worst-case.scenario": check_classic_worst_case,
    "classic-best-case.scenario": check_classic_best_case,
    "recovery-bully.scenario": check_recovery_bully,
    "split-brain-short-timeout.scenario": check_split_brain_short_timeout,
    "ring-3n-minus-1.scenario": check_ring_3n_minus_1,
    "partition-classic.scenario": check_partition_classic,
    "partition-garcia-molina.scenario": check_partition_garcia_molina,
    "partition-stoller.scenario": check_partition_stoller,
    "partition-ring.scenario": check_partition_ring,
    "members-epoch-bully.scenario": check_members_epoch_bully,
}


def test_every_shipped_scenario_has_its_claim_checked():
    assert sorted(p.name for p in SCENARIOS.glob("*.scenario")) == sorted(CLAIMS)


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_scenario_result_matches_its_claim(name):
    CLAIMS[name]()


def test_command_line_options_win_over_a_scenarios_settings():
    _, session = parse_args(["--headless", "--scenario", str(SCENARIOS / "ring-3n-minus-1.scenario"), "--nodes", "5"])
    assert (session.algorithm, session.nodes, session.config.delay_max) == ("ring", 5, 1)
