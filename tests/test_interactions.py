"""The files in tests/interactions/: each a run on the engine stepped by hand, one step
per command, each followed by what it did (the format: playground/run/interaction.py).
To regenerate the expected output after a deliberate change, run
`REWRITE_INTERACTIONS=1 .venv/bin/python -m pytest tests/test_interactions.py` and read
the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from playground.run.interaction import Interaction, read_blocks, write_blocks

FILES = sorted((Path(__file__).parent / "interactions").glob("*.txt"))
REWRITE = os.environ.get("REWRITE_INTERACTIONS") == "1"


def play(name: str) -> Interaction:
    """The run an interaction file states, for a test that asks something of it."""
    blocks, _ = read_blocks((Path(__file__).parent / "interactions" / name).read_text())
    interaction = Interaction()
    for block in blocks:
        interaction.run(block.command)
    return interaction


# --- the test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_interaction(path: Path):
    blocks, tail = read_blocks(path.read_text())
    interaction = Interaction()
    outputs = [interaction.run(block.command) for block in blocks]
    if REWRITE:
        path.write_text(write_blocks(blocks, outputs, tail))
        return
    for block, output in zip(blocks, outputs, strict=True):
        assert output == block.expected, f"{path.name}: {block.command}"


def test_there_are_interactions_and_a_file_reads_back_as_written():
    assert FILES
    for path in FILES:
        blocks, tail = read_blocks(path.read_text())
        assert write_blocks(blocks, [b.expected for b in blocks], tail) == path.read_text(), path.name


def test_a_refused_step_says_why_and_the_run_goes_on():
    interaction = Interaction()
    assert interaction.run("boot") == ["error: the first command makes the cluster"]
    assert interaction.run("cluster classic 2") == ["ok"]
    interaction.run("boot")
    interaction.run("deliver-all")
    assert interaction.run("deliver 2 1") == ["error: nothing in flight from 2 to 1"]
    assert interaction.run("fire 2 probe") == ["error: node 2 has no timer 'probe' running (it has: none)"]
    assert interaction.run("at 5") == ["@0 agreement under 2"]
    assert interaction.run("at 4") == ["error: time runs forward: it is 5 s, not 4 s"]
    assert interaction.run("cluster ring 3 speed=2")[0].startswith("error: unknown setting 'speed'")


def test_a_lock_step_is_refused_where_there_is_no_lock_and_deliver_all_says_what_it_takes():
    interaction = Interaction()
    interaction.run("cluster classic 2")
    interaction.run("boot")
    assert interaction.run("entries")[0].startswith("error: no lock runs beside the election")
    assert interaction.run("deliver-all but 1 2")[0].startswith("error: deliver-all takes nothing, or `except A B`")


def test_with_a_lock_the_workload_timers_wait_for_the_test_and_states_say_who_wants_it():
    interaction = play("lamport-lock.txt")
    h = interaction.h
    assert h.timers(1) == []  # down: its timers went with it
    assert "cs_think" in h.timers(3)  # set at start-up, never fired: nothing fires by itself
    assert str(h.cs(2)) == "wanted"
    assert interaction.run("states")[1] == "2: normal, follows 3, wants the critical section (stamp 13)"


def test_deliver_round_delivers_what_was_in_flight_and_none_of_what_it_made():
    interaction = Interaction()
    interaction.run("cluster hs 4 timeout=4")
    interaction.run("boot")
    before = interaction.h.in_flight()
    out = interaction.run("deliver-round")
    assert sum(line.startswith("recv ") for line in out) == sum(len(m) for m in before.values()) == 8
    assert sum(line.startswith("send ") for line in out) == sum(len(m) for m in interaction.h.in_flight().values())
