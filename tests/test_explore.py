"""The exhaustive hunt (run/explore.py): every run of a tiny cluster up to the bounds,
breadth first. Lecture 3-1's point made mechanical: classic Bully is unsafe once a
timeout says nothing (the asynchronous model), Garcia-Molina's is safe in the
synchronous one (up to the bound), and the finding is a shortest run, written as an
interaction file that runs as one."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest

from playground.core.config import ClusterConfig
from playground.core.monitor import CS_WAIT, MUTEX, SLE1, SPLIT_BRAIN
from playground.run.explore import Bounds, Counterexample, Model, explore, interaction_text, steps_taken
from playground.run.interaction import Interaction, read_blocks

EDGE = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)  # T = 2 x max delay: the model's edge


def model(algorithm: str, nodes: int = 3, *, timed: bool = True, config: ClusterConfig = EDGE) -> Model:
    return Model(algorithm, nodes, config, timed)


def test_classic_is_unsafe_in_the_asynchronous_model_in_one_step():
    """A timer that fires before the answer comes: node 1 leads beside node 3."""
    found, _ = explore(model("classic", timed=False), SLE1, Bounds(faults=0))
    assert found is not None and found.property == SLE1
    assert [s for s in found.steps if not s.startswith("at ")] == ["fire 1 answer_wait"] and steps_taken(found.steps) == 1


@pytest.mark.parametrize("algorithm", ["garcia-molina", "ring", "stoller"])
def test_every_algorithm_is_unsafe_in_the_asynchronous_model(algorithm):
    found, _ = explore(model(algorithm, timed=False), None, Bounds(faults=0, most=20_000))
    assert found is not None and found.property in (SLE1, SPLIT_BRAIN)


def test_garcia_molina_is_safe_in_the_synchronous_model_up_to_the_bound():
    """Every run of 3 nodes with delays of 1 or 2 s and a crash or a recovery anywhere:
    explored to its end (no bound cut it short), and nothing broken. What it kept to
    tell a state seen before is at most 300 bytes a state: a 16-byte digest in a set,
    and the numbering of the hosts' and messages' canonical forms (they repeat)."""
    found, explored = explore(model("garcia-molina"), None, Bounds(faults=1))
    assert found is None
    assert explored.bound is None and explored.states == 10_729
    assert 0 < explored.seen_bytes / explored.states <= 300


@functools.cache
def classic_with_a_crash() -> tuple[Model, Counterexample]:
    """Classic's shortest SLE1 with one fault, timed (a few seconds: found once, for the tests that use it)."""
    m = model("classic")
    found, _ = explore(m, SLE1, Bounds(faults=1))
    return m, found


def test_classic_breaks_sle1_in_the_synchronous_model_with_one_crash():
    """A follower of the leader that crashed and the node that takes over disagree for a
    moment."""
    _, found = classic_with_a_crash()
    assert found is not None and "crash 3" in found.steps


def test_breadth_first_the_finding_is_a_shortest_run():
    found, _ = explore(model("garcia-molina", timed=False), SLE1, Bounds(faults=0))
    assert steps_taken(found.steps) == 2
    shorter, explored = explore(model("garcia-molina", timed=False), SLE1, Bounds(faults=0, depth=1))
    assert shorter is None and explored.bound == "depth"  # none with fewer steps


def test_without_faults_classic_start_up_is_safe_when_timed():
    found, explored = explore(model("classic"), None, Bounds(faults=0))
    assert found is None and explored.bound is None


def test_a_finding_is_an_interaction_file_that_runs_as_one():
    m = model("classic", timed=False)
    found, _ = explore(m, SLE1, Bounds(faults=0))
    text = interaction_text(m, found, ["Claim: classic is unsafe asynchronously."])
    assert text.startswith("# Claim: classic is unsafe asynchronously.\n\ncluster classic 3 ")
    blocks, _ = read_blocks(text)
    interaction = Interaction()
    assert [interaction.run(b.command) for b in blocks] == [b.expected for b in blocks]
    assert any(line.startswith("@0.001 SLE1: ") for b in blocks for line in b.expected)


def test_the_states_bound_is_said():
    found, explored = explore(model("garcia-molina"), None, Bounds(faults=1, most=500))
    assert found is None and explored.bound == "states" and explored.states == 500


def test_the_command_writes_the_steps_and_says_the_bounds(tmp_path):
    run = [sys.executable, "-m", "playground", "hunt", "--exhaustive"]
    done = subprocess.run([*run, "--async", "--faults", "0"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("SLE1 broken: 3 nodes, 1 step after the start, none shorter")
    assert (tmp_path / "hunt-classic-any.txt").read_text().startswith("# Found by: bully-tui hunt --exhaustive --async")
    done = subprocess.run([*run, "--algorithm", "ring", "--nodes", "2", "--faults", "0"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no counterexample in ") and "every run to its end" in done.stdout


def test_a_finding_is_also_a_transcript_stepped_by_hand(tmp_path):
    """It replays and exports as any transcript; nothing re-creates it, and verify and
    branching say so instead of trying."""
    from playground.cli import main
    from playground.record.reader import Reader
    from playground.run.explore import record
    from playground.run.history import History

    m, found = classic_with_a_crash()
    path = str(tmp_path / "steps.jsonl")
    record(m, found, path)
    with Reader.open(path) as reader:
        assert reader.header.by_hand
        kinds = {e.kind for e in reader.events()}
    assert {"send", "deliver", "crash", "violation"} <= kinds
    assert History(path, reader.header).why_not_re_created.startswith("this run was stepped by hand")
    assert main(["verify", path]) == 2
    assert main(["export", path, "--format", "mermaid", "-o", str(tmp_path / "d.mmd")]) == 0
    text = (tmp_path / "steps.jsonl").read_text()
    assert '"by_hand":true' in text.splitlines()[0] and '"kind":"violation"' in text


def test_a_signal_while_the_steps_are_written_leaves_neither_file(tmp_path, monkeypatch, capsys):
    """`hunt --exhaustive -o e` left e.txt and an empty e.jsonl when a signal came while
    the transcript was recorded: its two files appear together, or not at all."""
    import signal

    from playground.cli import main
    from playground.run import explore as explore_module
    from playground.run import interrupt

    real = explore_module.record

    def cut_short(model_, found, path, overwrite=False):
        real(model_, found, path, overwrite)  # the whole transcript, still under its temporary name
        raise interrupt.Stopped(signal.SIGTERM)

    monkeypatch.setattr(explore_module, "record", cut_short)
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", "--exhaustive", "--async", "--faults", "0", "-o", "e"]) == 143
    assert capsys.readouterr().err == "bully-tui: stopped by SIGTERM; a finding (3 nodes, 1 step), not written\n"
    assert list(tmp_path.iterdir()) == []


def test_a_signal_mid_search_stops_it_between_two_states():
    """The search runs with the signals only noted (the hunt takes them `checked`): it
    raises the signal at the next state, not never."""
    import signal

    from playground.run import interrupt

    seen = []

    def progress(explored) -> None:
        seen.append(explored.states)
        if len(seen) == 2:
            interrupt._handle(signal.SIGINT, None)  # noted only

    with interrupt.handled(), pytest.raises(interrupt.Stopped), interrupt.checked():
        explore(model("garcia-molina", 3), SLE1, Bounds(faults=1, depth=40, most=100_000), progress)
    assert seen == [1000, 2000]


def test_a_signal_mid_search_says_how_many_states_it_searched(tmp_path, monkeypatch, capsys):
    """Ctrl-C in `hunt --exhaustive`: status 130, and the line says how far the search got
    (as its progress last said, every thousand states; the smaller clusters' states whole),
    as a random hunt's says how many schedules. Made deterministic: the signal is noted
    at the 3-node search's 2,000th state."""
    import re
    import signal

    from playground.cli import main
    from playground.run import explore as explore_module
    from playground.run import interrupt

    real = explore_module.explore

    def signalled(model_, prop, bounds, on_progress=None, workers=1):
        def progress(explored) -> None:
            on_progress(explored)
            if model_.nodes == 3 and explored.states == 2000:
                interrupt._handle(signal.SIGINT, None)

        return real(model_, prop, bounds, progress, workers)

    monkeypatch.setattr(explore_module, "explore", signalled)
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", "--exhaustive", "--nodes", "2:3", "--faults", "1"]) == 130
    out, err = capsys.readouterr()
    two = int(re.match(r"no counterexample in ([\d,]+) states", out).group(1).replace(",", ""))
    assert err == f"bully-tui: interrupted; searched {two + 2000:,} states, nothing found yet\n"
    assert list(tmp_path.iterdir()) == []


# --- the search's states (run/explore_state.py, explore_values.py) ---------------------------


SEARCH_IN_A_PROCESS = """
import json, sys
from playground.core.config import ClusterConfig
from playground.run.explore import Bounds, Model, explore
edge = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
found, explored = explore(Model(sys.argv[1], 3, edge, sys.argv[2] == "timed"), None, Bounds(faults=int(sys.argv[3])))
print(json.dumps([found and found.steps, explored.states, explored.steps, explored.deepest, explored.bound]))
"""


def test_a_search_gives_the_same_finding_and_counts_every_time_it_runs():
    """Determinism: the same search twice in one process, and in two processes whose
    string hashes differ (sets of names iterate in another order there), finds the
    same run after the same states and steps."""
    first, again = (explore(model("classic"), None, Bounds(faults=1, most=3_000)) for _ in range(2))
    assert first == again and first[1].states == 3_000
    runs = [subprocess.run([sys.executable, "-c", SEARCH_IN_A_PROCESS, "stoller", "async", "0"], check=False,
                           capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
            for seed in ("1", "2")]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    steps, states, _, _, _ = json.loads(runs[0].stdout)
    assert steps_taken(steps) == 4 and states == 796


def test_a_state_reached_by_two_paths_is_one_whatever_its_machines_hold():
    """The ring's machines hold a layout object with no __dict__ (slots): the key compares
    it by its content, so runs that meet are merged (the key once compared its repr, with
    its address, and no two ring states were ever one)."""
    found, explored = explore(model("ring", timed=False), None, Bounds(faults=0, most=20_000))
    assert found is not None and steps_taken(found.steps) == 4
    assert explored.steps > 1.5 * explored.states


@pytest.mark.parametrize("algorithm, prop, bounds, network", [
    ("garcia-molina", None, Bounds(faults=1, most=4_000), ""),
    ("garcia-molina+central", MUTEX, Bounds(faults=1, requests=2, joins=1, leaves=1, elects=1, most=20_000), ""),
    ("classic", None, Bounds(faults=1, most=3_000), "drop,duplicate,reorder"),
])
def test_a_state_once_made_is_never_changed_by_the_steps_from_it(algorithm, prop, bounds, network):
    """Copy on write: the hosts a step leaves alone are shared with the state before it,
    and so is the monitor when the step did not change it; none of it may change while
    other states are stepped from it. Checked at every step of a search with faults (and
    with a lock, requests, a join, a leave and an elect: the roster every host shares
    changes too): the state stepped from still has the hosts, the monitor and the
    members it was made with (and the search, the same states); and on links that drop,
    duplicate and reorder, the messages in flight too."""
    from playground.run.explore_state import Stepper
    from playground.run.explore_values import canonical_object

    def forms(state) -> tuple:
        return (tuple((host.up, canonical_object(host.storage), host.machine and canonical_object(host.machine),
                       sorted(host.timers.items())) for host in state.hosts), canonical_object(state.monitor),
                state.members, dict(state.flight), state.fresh)

    made: dict[int, tuple] = {}
    real_after = Stepper.after
    checked = []

    def after(self, state, node, *taken):
        child = real_after(self, state, node, *taken)
        if id(state) in made:
            assert forms(state) == made[id(state)][1], "a state changed while a step was taken from it"
            checked.append(state)
        made.setdefault(id(child), (child, forms(child)))  # (the state kept alive: its id stays its own)
        return child

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Stepper, "after", after)
        m = Model(algorithm, 3, EDGE, network=frozenset(network.split(",")) - {""})
        _, explored = explore(m, prop, bounds)
    assert explored.states == bounds.most and len(checked) > 150


# --- what else may happen between steps: elect, want, join, leave ---------------------------


def test_an_elect_is_a_step_at_any_up_node_up_to_its_bound():
    """Garcia-Molina stays safe in the synchronous model with `elect`s anywhere (every
    run of 2 nodes to its end), in more states the more there may be; the result says
    the bound."""
    from playground.run.hunt_report import explored_line

    counts = []
    for elects in (0, 1, 2):
        found, explored = explore(model("garcia-molina", 2), None, Bounds(faults=0, elects=elects))
        assert found is None and explored.bound is None
        counts.append(explored.states)
    assert counts[0] < counts[1] < counts[2]
    line = explored_line(model("garcia-molina", 2), None, explored, Bounds(faults=0, elects=2), 1.0, found=False)
    assert "(timed: each delay 1 or 2 s, T = 4 s; at most 0 faults, 2 elects; every run to its end; 1.0 s)" in line


def test_with_a_lock_two_nodes_in_the_critical_section_is_found_and_runs_as_an_interaction():
    """The central lock's server changes with the leader: two requests and an election
    still under way let two nodes in, asynchronously, in 4 steps. Nodes ask only by
    `want` (at most --requests); the cluster line says so, and the file runs as one."""
    m = model("garcia-molina+central", timed=False)
    found, _ = explore(m, MUTEX, Bounds(faults=0, requests=2))
    assert found is not None and found.property == MUTEX and steps_taken(found.steps) == 4
    assert sum(step.startswith("want ") for step in found.steps) == 2
    text = interaction_text(m, found, ["Claim: two in the critical section."])
    assert "\ncluster garcia-molina+central 3 timeout=4 delay=1:2 probe-interval=0 cs-think=none cs-hold=15\n" in text
    blocks, _ = read_blocks(text)
    interaction = Interaction()
    assert [interaction.run(b.command) for b in blocks] == [b.expected for b in blocks]
    assert any("mutual exclusion" in line for line in blocks[-1].expected)


def test_a_request_the_crashed_server_never_answers_is_found_when_timed():
    """Liveness, in the timed model: 2 nodes, classic with the central lock and no failure
    detector; the server crashes, and the request sent to it waits for ever. Nothing is
    left to happen, so time moves on to the horizon, and the monitor judges the wait."""
    found, _ = explore(model("classic+central", 2), CS_WAIT, Bounds(faults=1, requests=1))
    assert found is not None and found.property == CS_WAIT
    assert found.steps[0] == "crash 2" and "want 1" in found.steps and found.steps[-1] == "at 60"


def test_a_node_that_joins_is_a_step_and_counts_among_the_nodes():
    """Classic Bully with a newcomer: the new highest node leads at once, beside the
    old leader's followers, for a moment (SLE1 in 2 steps)."""
    from playground.run.hunt_report import steps_line

    m = model("classic")
    found, _ = explore(m, None, Bounds(faults=0, joins=1))
    assert found is not None and found.property == SLE1 and found.steps[0] == "join" and steps_taken(found.steps) == 2
    assert steps_line(m, found, "f.txt", "f.jsonl").startswith("SLE1 broken: 4 nodes (3 at the start, 1 joining), 2 steps")


def test_a_node_that_leaves_is_a_step():
    """Classic Bully, node 3 (the leader to be) leaving at the start: its Coordinator
    still reaches one node while the other takes over (SLE1 in 5 steps)."""
    found, _ = explore(model("classic"), None, Bounds(faults=0, leaves=1))
    assert found is not None and found.property == SLE1 and found.steps[0] == "leave 3"
