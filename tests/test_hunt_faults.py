"""`bully-tui hunt --link-faults` (issue 33): the random search may let the links lose,
duplicate and reorder; a finding keeps only the faults it needs, and its scenario runs
it again, event for event. Budgets in schedules and a seed: the same on every run."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

from hypothesis import find, settings
from hypothesis.errors import NoSuchExample

from playground.core.monitor import SPLIT_BRAIN
from playground.run.hunt import Hunt, run, schedules, search
from playground.run.hunt_report import scenario_text
from playground.run.hunt_space import Space


def test_without_link_faults_no_schedule_breaks_the_links_and_with_them_each_is_drawn():
    plain = Space("classic")
    try:  # (a fault is drawn only where the space lets the links break: any schedule shows it, a hundred are many)
        find(schedules(plain), lambda s: s.config.faults.any, settings=settings(max_examples=100, database=None))
        raise AssertionError("a schedule broke the links unasked")
    except NoSuchExample:
        pass
    every = Space("classic", link_faults=("loss", "duplicate", "reorder"))
    for fault, seen in (("loss", lambda f: f.loss > 0), ("duplicate", lambda f: f.duplicate > 0),
                        ("reorder", lambda f: f.reorder)):
        drawn = find(schedules(every), lambda s, seen=seen: seen(s.config.faults), settings=settings(database=None))
        assert seen(drawn.config.faults), fault
        if drawn.config.faults.reorder:
            assert drawn.config.delay_min < drawn.config.delay_max  # (with one delay, nothing can overtake)


def test_lost_messages_split_the_classic_bully_where_the_lossless_links_do_not(tmp_path):
    """Elections and crashes only (a recovery splits it within the model): with lossless
    links 300 schedules find no split brain; with lossy ones the search finds one, and the
    loss stays in the shrunk finding, for the property needs it."""
    space = Space("classic", (2, 5), chosen=("crash", "elect"))
    assert search(Hunt(space, SPLIT_BRAIN, 1, 300), 1).finding is None
    lossy = Space("classic", (2, 5), chosen=("crash", "elect"), link_faults=("loss",))
    hunt = Hunt(lossy, SPLIT_BRAIN, 1, 300)
    found = search(hunt, 1).finding
    assert found is not None and found.property == SPLIT_BRAIN
    assert found.schedule.config.faults.loss > 0
    assert run("classic", found.schedule, SPLIT_BRAIN).violation is not None
    without = replace(found.schedule, config=found.schedule.config.with_faults(loss=0.0))
    assert run("classic", without, SPLIT_BRAIN).violation is None  # the loss is what splits it
    scenario = tmp_path / "found.scenario"
    scenario.write_text(scenario_text(hunt, found, "bully-tui hunt (test)"))
    assert f"set loss {found.schedule.config.faults.loss:g}" in scenario.read_text()
    out = tmp_path / "again.jsonl"
    done = subprocess.run([sys.executable, "-m", "playground", "--headless", "--scenario", str(scenario),
                           "--transcript", str(out)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["faults"] == {"loss": found.schedule.config.faults.loss}
    assert any(e.get("kind") == "violation" and e["property"] == SPLIT_BRAIN and e["t"] == found.t for e in lines)


def test_bad_link_faults_are_one_line(capsys):
    from playground.cli import main

    assert main(["hunt", "--link-faults", "loss,jitter"]) == 2
    err = capsys.readouterr().err
    assert err == "bully-tui: error: unknown --link-faults 'jitter' (choose from: loss, duplicate, reorder)\n"
    assert main(["hunt", "--exhaustive", "--link-faults", "loss"]) == 2
    assert "--link-faults only applies to a random search" in capsys.readouterr().err
