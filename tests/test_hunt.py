"""`bully-tui hunt` (run/hunt.py): what it must find, shrunk; what it must not find within
the model; that a search is reproducible; and the command's files and lines.

Every search here has a budget in schedules and a seed, so it is the same on every run
(hunt rule 4): no test passes "usually"."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground.cli.live import replay_app
from playground.core.config import ClusterConfig, InputError, WriteError
from playground.core.engine import run_sync
from playground.core.monitor import CS_WAIT, MUTEX, SLE1, SLE2, SPLIT_BRAIN
from playground.run.hunt import BATCH, Hunt, Schedule, run, search
from playground.run.hunt_report import scenario_text
from playground.run.hunt_space import Space
from playground.run.wiring import run_headless
from protocol import ALGORITHMS
from tests.test_app import on_asyncio, wait_for

BUDGET = 150  # schedules: enough for what must be found, and a look at what must not (bench/hunt.py: 10,000)


def hunt(algorithm: str, prop: str | None, *, schedules: int = BUDGET, synchrony: bool = True, commands=(),
         nodes=(2, 8), workers: int = 1):
    return search(Hunt(Space(algorithm, nodes, synchrony, tuple(commands)), prop, 1, schedules), workers)


# A search whose finding comes from its second batch (rule 4 at work), on small clusters
# so that it is cheap enough to run several times: tests/test_hunt_cluster.py runs it on a
# cluster too.
SECOND_BATCH_FINDS = Hunt(Space("classic", (2, 4), True, ("crash", "recover", "elect")), SLE2, 4, 3 * BATCH)
# The command's arguments for a search that finds the classic Bully's flaw at once (five
# schedules of three nodes): what the tests of its files and signals need is a finding.
FINDS_AT_ONCE = ["--property", "sle1", "--commands", "crash,recover", "--nodes", "3", "--budget", "300",
                 "--workers", "1"]


@pytest.fixture(scope="module")
def recovery_flaw():
    """The classic Bully's known flaw, found from nothing (crashes and recoveries only)."""
    return hunt("classic", SLE1, commands=("crash", "recover"))


@pytest.fixture(scope="module")
def central_lock_broken():
    return hunt("classic+central", MUTEX, commands=("crash", "recover"))


def breaks(algorithm: str, schedule: Schedule, prop: str) -> bool:
    try:
        return run(algorithm, schedule, prop).violation is not None
    except InputError:  # a simplification that left a command meaning nothing (recover of an up node)
        return False


def simplifications(s: Schedule, fewest: int):
    """Each single step smaller: a node fewer, a command fewer, a command as early as the one before it."""
    if s.nodes > fewest:
        yield dataclasses.replace(s, nodes=s.nodes - 1)
    for i, (at, text) in enumerate(s.lines):
        yield dataclasses.replace(s, lines=s.lines[:i] + s.lines[i + 1:])
        before = s.lines[i - 1][0] if i else 0.0
        if at > before:
            yield dataclasses.replace(s, lines=s.lines[:i] + ((before, text),) + s.lines[i + 1:])


def test_classic_recovery_flaw_is_found_from_nothing_and_shrunk(recovery_flaw):
    """The known flaw (PROTOCOLS.md section 1): a node that comes back announces itself
    without asking, and its Coordinator crosses another's. Only crashes and recoveries
    to work with, so that it is found the way the lecture tells it."""
    f = recovery_flaw.finding
    assert f is not None and f.property == SLE1
    assert f.schedule.nodes <= 4 and len(f.schedule.lines) <= 3
    assert any(text.startswith("recover") for _, text in f.schedule.lines)
    assert breaks("classic", f.schedule, SLE1)
    assert [s for s in simplifications(f.schedule, 2) if breaks("classic", s, SLE1)] == []


def test_with_every_command_classic_breaks_sle1_by_a_newcomer_too():
    """A node that joins is a recovering node (commands.py): the same flaw, one command."""
    f = hunt("classic", SLE1).finding
    assert f is not None and f.schedule.nodes <= 4 and len(f.schedule.lines) <= 3


BULLY_FAMILY = [name for name in ALGORITHMS if name not in ("raft", "invitation")]


@pytest.mark.parametrize("algorithm", BULLY_FAMILY)
def test_split_brain_for_every_algorithm_once_synchrony_is_broken(algorithm):
    """Elections alone, no command: only T below 2 x max delay can do it. (Classic and
    the epoch Bully also split within the model, by a node that comes back.)"""
    f = hunt(algorithm, SPLIT_BRAIN, synchrony=False, commands=("elect",)).finding
    assert f is not None and f.property == SPLIT_BRAIN
    assert not f.schedule.config.synchronous
    assert [s for s in simplifications(f.schedule, 2) if breaks(algorithm, s, SPLIT_BRAIN)] == []


@pytest.mark.parametrize("prop", [SPLIT_BRAIN, "sle1"])
def test_invitation_never_breaks_its_promise_within_a_group_even_without_synchrony(prop):
    """A group's number names its creator, and a node is normal in a group only under
    the node whose Invitation and Ready it took: timing can cost it merges, not safety."""
    assert hunt("invitation", prop, synchrony=False, commands=("crash", "recover", "elect")).finding is None


def test_raft_never_has_two_leaders_in_a_term_even_without_synchrony():
    """One vote per term, kept in safe storage: its safety owes nothing to timing (a
    short T costs it only split votes and time)."""
    assert hunt("raft", SPLIT_BRAIN, synchrony=False, commands=("crash", "recover", "elect")).finding is None


def test_central_lock_is_broken_by_a_leader_crash_while_a_node_holds_it(central_lock_broken):
    f = central_lock_broken.finding
    assert f is not None and f.property == MUTEX
    crashes = [text for _, text in f.schedule.lines if text.startswith("crash")]
    assert crashes == [f"crash {f.schedule.nodes}"]  # the leader (the highest), once
    # ... with the lock given: one of the two inside had it from the leader that crashed,
    # and the new lock server, knowing no holder, gives it again.
    engine = f.schedule.session("classic+central").recipe.engine()
    events = []
    engine.subscribe(events.extend)
    run_sync(engine, f.t)
    crash_at, leader = f.schedule.lines[0][0], f.schedule.nodes
    granted = {e.dst for e in events if e.kind == "send" and e.t <= crash_at and e.src == leader and e.msg.type == "cs_grant"}
    [violation] = [e for e in events if e.kind == "violation" and e.property == MUTEX]
    assert granted & set(violation.nodes)


@pytest.mark.parametrize("algorithm", ["garcia-molina", "stoller", "ring"])
def test_no_sle1_counterexample_within_the_model(algorithm):
    """Their claim (test_random_schedules.py). The README gives the figure for 10,000
    schedules (bench/hunt.py); CI searches fewer."""
    result = hunt(algorithm, SLE1)
    assert result.finding is None
    assert result.searched.schedules == BUDGET
    assert len(result.searched.shapes) > 20  # it tried many sizes and command counts, not one


def test_two_nodes_joining_at_once_no_longer_split_the_ring():
    """What the hunt found in the ring (792 schedules): each joiner led a ring the other
    was not in yet. A joiner is quiet for T now, as a recovered node is (ring rule 1)."""
    found = Schedule(2, 2, ClusterConfig(timeout=1.2, delay_min=0.1, delay_max=0.6), ((6.1, "join"), (6.1, "join")))
    assert not breaks("ring", found, SLE1)


def test_epoch_bully_keeps_sle2_and_says_it_does_not_keep_sle1():
    """Its header: SLE2 within c, not SLE1 (Coordinators can cross for a moment)."""
    assert hunt("epoch-bully", SLE2).finding is None
    assert hunt("epoch-bully", SLE1).finding is not None


def test_token_ring_lost_token_is_a_liveness_finding():
    f = hunt("garcia-molina+token-ring", CS_WAIT).finding
    assert f is not None and f.property == CS_WAIT
    assert any(text.startswith("crash") for _, text in f.schedule.lines)


def test_a_search_is_the_same_however_many_processes_share_it():
    """Hunt rule 4: batches are seeded by (seed, batch), the lowest batch's finding wins.
    The budget spans several batches, and the finding comes from a later one."""
    one, two = search(SECOND_BATCH_FINDS, 1), search(SECOND_BATCH_FINDS, 2)
    assert one.finding == two.finding and one.finding is not None
    assert one.searched == two.searched
    assert one.batches == two.batches == 2  # (found by the second batch: the first found nothing)


def test_a_budget_with_nothing_to_find_is_spent_exactly():
    result = hunt("garcia-molina", SLE1, schedules=BATCH + 7, nodes=(2, 3))  # (small clusters: the count is the point)
    assert (result.finding, result.searched.schedules, result.batches) == (None, BATCH + 7, 2)


# --- the command ------------------------------------------------------------------------


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", "hunt", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def command(tmp_path, monkeypatch, capsys):
    """`bully-tui ARGS` in this process, in tmp_path, its outcome as `cli`'s: the same
    code from the command's first line to its status (cli keeps the process's own start
    for the tests that are about a whole run of it)."""
    from playground.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")

    def run(*argv: str) -> subprocess.CompletedProcess:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(argv, status, out, err)

    return run


def test_a_finding_is_written_as_a_scenario_and_a_transcript_that_replay_it(tmp_path, command):
    done = cli(tmp_path, *FINDS_AT_ONCE)
    assert done.returncode == 1, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("SLE1 broken: ")
    assert first.endswith("replay with: bully-tui replay hunt-classic-sle1.jsonl --at violation")
    assert "hunt-classic-sle1.scenario" in second
    scenario = (tmp_path / "hunt-classic-sle1.scenario").read_text()
    assert scenario.splitlines()[1].startswith("# Claim: SLE1 is broken at t = ")
    # The scenario runs the very run the transcript holds, event for event.
    again = subprocess.run([sys.executable, "-m", "playground", "--headless", "--scenario", "hunt-classic-sle1.scenario",
                            "--transcript", "again.jsonl"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    (again_head, *again_lines), (head, *lines) = ((tmp_path / name).read_text().splitlines()
                                                  for name in ("again.jsonl", "hunt-classic-sle1.jsonl"))
    assert again_lines == lines
    # The same header, but that a run from a scenario keeps the scenario's name and claim.
    again_head = json.loads(again_head)
    assert again_head.pop("scenario")["file"] == "hunt-classic-sle1.scenario"
    assert again_head == json.loads(head)
    violations = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()[1:]]
    assert any(v.get("kind") == "violation" and v["property"] == "sle1" for v in violations)
    # A second hunt does not overwrite the first: it takes the next free name.
    done = command("hunt", *FINDS_AT_ONCE)
    assert "hunt-classic-sle1-2.jsonl" in done.stdout


def test_output_named_with_any_of_its_suffixes_means_the_base(tmp_path, command):
    done = command("hunt", "--exhaustive", "--async", "--faults", "0", "-o", "mine.scenario")
    assert done.returncode == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.jsonl", "mine.txt"]


def test_the_same_seed_and_budget_write_the_same_files(tmp_path, command):
    for name in ("a", "b"):
        command("hunt", "--algorithm", "classic", "--property", "split-brain", "--break-synchrony", "--budget", "200",
            "--seed", "7", "-o", name, "--workers", "2" if name == "b" else "1")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    a, b = ((tmp_path / f"{name}.scenario").read_text().split("\n", 1)[1] for name in ("a", "b"))
    assert a == b  # (its first line says how it was found: -o a, -o b)


def test_nothing_found_says_how_much_was_searched_and_exits_0(tmp_path, command):
    done = command("hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "100", "--nodes", "2:3",
                   "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no counterexample: SLE1 held in 100 schedules, ")
    assert "virtual seconds" in done.stdout and "shapes (nodes × commands)" in done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, said", [
    (["--property", "mutex-safety"], "--property mutex-safety needs a mutex"),
    (["--property", "nope"], "unknown --property 'nope'"),
    (["--nodes", "5:3"], "--nodes: 5 is above 3"),
    (["--nodes", "0:3"], "--nodes must be from 1 to 64"),
    (["--budget", "soon"], "--budget must be seconds (60s, 5m) or a number of schedules"),
    (["--budget", "0s"], "--budget must be from 0.1 s to a week"),
    (["--commands", "crash,partition"], "unknown --commands 'partition'"),
    (["--algorithm", "raft", "--commands", "join"], "unknown --commands 'join'"),
    (["--workers", "0"], "--workers must be from 1 to 64"),
    (["--open"], "--open shows the finding in the terminal app"),
    (["-o", ""], "-o '' names no file"),
    (["-o", ".jsonl"], "-o '.jsonl' names no file"),
    (["-o", "d/"], "-o 'd/' names no file"),
    (["-o", ".mine"], "-o '.mine' would write hidden files (.mine.scenario, .mine.jsonl)"),
    (["--exhaustive", "-o", "sub/.x.txt"], "-o 'sub/.x.txt' would write hidden files (.x.txt, .x.jsonl)"),
])
def test_bad_arguments_are_one_line_and_status_2(tmp_path, command, args, said):
    done = command("hunt", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_existing_output_is_refused_before_the_search(tmp_path, command):
    (tmp_path / "mine.jsonl").write_text("keep me")
    done = command("hunt", "-o", "mine", "--budget", "100")
    assert done.returncode == 2 and "mine.jsonl already exists" in done.stderr
    assert (tmp_path / "mine.jsonl").read_text() == "keep me"


def test_the_scenario_says_its_claim_first(central_lock_broken):
    finding = central_lock_broken.finding
    text = scenario_text(Hunt(Space("classic+central"), MUTEX), finding, "bully-tui hunt ...")
    lines = text.splitlines()
    assert lines[0] == "# Found by: bully-tui hunt ..."
    assert lines[1].startswith("# Claim: mutual exclusion is broken at t = ") and "2 in the critical section" in lines[1]
    assert "set mutex central" in lines and "set algorithm classic" in lines


@on_asyncio
async def test_open_shows_the_finding_paused_at_its_first_violation(tmp_path, recovery_flaw):
    """`hunt --open`, and the replay command it prints (`--at violation`): the app on the
    finding's transcript, at the instant the monitor first reported it (not at the end,
    where the replay of a file opens)."""
    f = recovery_flaw.finding
    path = str(tmp_path / "finding.jsonl")
    run_headless(f.schedule.session("classic", path), f.schedule.until("classic"))
    app = replay_app(path, save_dir=str(tmp_path), open_at="violation")
    async with app.run_test(size=(100, 32)) as pilot:
        history = app.timeline.history
        await wait_for(pilot, lambda: app.timeline.position == history.first_marker("violation"), "the violation shown")
        assert history.times[app.timeline.position] == f.t
        assert 0 < app.timeline.position < history.instants - 1
        assert app.live is None


@on_asyncio
async def test_a_replay_opens_at_a_time_asked_for(tmp_path, recovery_flaw):
    f = recovery_flaw.finding
    path = str(tmp_path / "finding.jsonl")
    run_headless(f.schedule.session("classic", path), f.schedule.until("classic"))
    app = replay_app(path, save_dir=str(tmp_path), open_at=5.0)
    async with app.run_test(size=(100, 32)) as pilot:
        history = app.timeline.history
        await wait_for(pilot, lambda: app.timeline.position is not None and history.times[app.timeline.position] <= 5.0
                       and app.timeline.position < history.instants - 1, "the instant at 5 s shown")
        assert history.times[app.timeline.position + 1] > 5.0


@pytest.mark.parametrize("value", ["nan", "-1", "soon", ""])
def test_a_bad_replay_at_is_one_line(command, value):
    done = command("replay", "x.jsonl", "--at", value)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--at" in done.stderr, done.stderr


@on_asyncio
async def test_a_transcript_stepped_by_hand_opens_at_its_violation_and_says_it_cannot_branch(tmp_path):
    from playground.run.explore import record
    from tests.test_explore import classic_with_a_crash

    m, found = classic_with_a_crash()
    path = str(tmp_path / "steps.jsonl")
    record(m, found, path)
    app = replay_app(path, save_dir=str(tmp_path), open_at="violation")
    async with app.run_test(size=(120, 32)) as pilot:
        history = app.timeline.history
        await wait_for(pilot, lambda: app.timeline.position == history.first_marker("violation"), "the violation shown")
        assert app.timeline.branch_refusal().startswith("This run was stepped by hand")
        app.redraw(text=True)
        await pilot.pause()
        assert "not known: this run was stepped by hand" in " ".join(app.panel.shown_text().split())


def test_a_signal_mid_search_says_how_far_it_got(tmp_path, monkeypatch, capsys):
    """Ctrl-C during the third batch (made deterministic: that batch raises what the
    signal handler raises): status 130, one line saying what was searched, no files.
    (Runs that start with one node: what is checked is how many batches were searched.)"""
    import signal as signals

    from playground.cli import main
    from playground.run import hunt as hunt_module
    from playground.run import interrupt

    real = hunt_module.run_batch

    def third_is_interrupted(hunt, index):
        if index == 2:
            raise interrupt.Stopped(signals.SIGINT)
        return real(hunt, index)

    monkeypatch.setattr(hunt_module, "run_batch", third_is_interrupted)
    monkeypatch.chdir(tmp_path)
    argv = ["hunt", "--algorithm", "ring", "--property", "sle1", "--nodes", "1", "--budget", "1000", "--workers", "1"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err == f"bully-tui: interrupted; searched {2 * BATCH} schedules, nothing found yet\n"
    assert list(tmp_path.iterdir()) == []


def test_a_signal_raised_inside_hypothesis_gc_callback_still_stops_the_search():
    """A signal that lands while the garbage collector runs hypothesis's callback used to
    be raised there, printed as "Exception ignored" and lost: the hunt searched its whole
    budget and exited 0. Made deterministic: at the fifth schedule a collection runs, and
    a callback calls the handler as the signal would; the search must stop in that
    schedule."""
    import gc
    import signal as signals

    from playground.run import hunt as hunt_module
    from playground.run import interrupt

    schedules = []

    def signalled(phase: str, _info: dict) -> None:
        if phase == "start" and len(schedules) == 5:
            schedules.append("signalled")
            interrupt._handle(signals.SIGTERM, None)  # (raised here, Python would only print it)

    real = hunt_module.run

    def run(algorithm, schedule, prop):
        schedules.append(schedule)
        if len(schedules) == 5:
            gc.collect()
        return real(algorithm, schedule, prop)

    gc.callbacks.append(signalled)
    try:
        with interrupt.handled(), pytest.MonkeyPatch.context() as patch:
            patch.setattr(hunt_module, "run", run)
            patch.setattr(interrupt, "_out", lambda signum: None)  # (a lost Stopped ends a process, not this one)
            with pytest.raises(interrupt.Stopped) as stopped:
                hunt("ring", SLE1, schedules=BUDGET)
    finally:
        gc.callbacks.remove(signalled)
    assert stopped.value.status == 143 and len(schedules) == 6 and schedules[-1] == "signalled"


def test_a_signal_while_a_finding_is_written_leaves_neither_file(tmp_path, monkeypatch, capsys):
    """The finding's files appear whole and together, or not at all: a signal right after
    the first of them is made (here, while its transcript is recorded) leaves nothing,
    and the line says what was found."""
    import signal as signals

    from playground.cli import main
    from playground.run import interrupt, wiring

    def recording(session_, until, **_):
        made = sorted(p.name for p in tmp_path.iterdir())
        assert len(made) == 2 and all(name.startswith(".bully-") for name in made)  # nothing under its name yet
        raise interrupt.Stopped(signals.SIGINT)

    monkeypatch.setattr(wiring, "run_headless", recording)
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", *FINDS_AT_ONCE, "-o", "x"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("bully-tui: interrupted; searched ") and err.endswith(" commands), not written\n"), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    FINDS_AT_ONCE,
    ["--exhaustive", "--algorithm", "classic", "--nodes", "2", "--faults", "0", "--elects", "1", "--network", "drop"],
], ids=["random", "exhaustive-network"])
def test_a_signal_once_the_findings_files_are_in_place_says_they_are(tmp_path, monkeypatch, capsys, argv):
    """A signal between the files taking their names and the line that says where they
    are (the campaign met one, 48 ms after the first file): both files stay, whole, and
    the signal's line says so, as the finding's own line would have."""
    import signal as signals

    from playground.cli import hunt as hunt_command
    from playground.cli import main
    from playground.run import interrupt

    def signalled(_text: str) -> None:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl", "x.scenario"]  # (in place, whole)
        raise interrupt.Stopped(signals.SIGTERM)

    monkeypatch.setattr(hunt_command, "emit", signalled)
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", *argv, "-o", "x"]) == 143
    err = capsys.readouterr().err
    assert err == "bully-tui: stopped by SIGTERM; the finding is written: x.scenario, x.jsonl\n", err
    assert (tmp_path / "x.jsonl").read_bytes().endswith(b"\n") and (tmp_path / "x.scenario").read_text()


def test_a_finding_whose_second_name_is_taken_meanwhile_leaves_neither(tmp_path):
    """Without --overwrite each file is linked to its name; if the second name was taken
    after the check, the first is taken back: the other file's owner keeps theirs."""
    from playground.record.together import Together

    first, second = tmp_path / "x.scenario", tmp_path / "x.jsonl"
    with pytest.raises(InputError, match="x.jsonl already exists"), Together(overwrite=False) as files:
        parts = files.beside(str(first), "scenario"), files.beside(str(second), "transcript")
        for part in parts:
            Path(part).write_text("whole\n")
        second.write_text("someone's\n")
        files.place()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"] and second.read_text() == "someone's\n"


def test_an_overwritten_finding_that_cannot_place_its_second_file_leaves_both_old_files(tmp_path):
    """With --overwrite the old files are kept aside until both new ones are placed: when
    the second cannot be (a folder stands where the transcript goes), the first new file
    is taken back and the old one is there again, never a new scenario beside an old
    transcript."""
    from playground.record.together import Together

    first, second = tmp_path / "x.scenario", tmp_path / "x.jsonl"
    first.write_text("old scenario\n")
    with pytest.raises(WriteError, match="cannot write transcript"), Together(overwrite=True) as files:
        for part in files.beside(str(first), "scenario"), files.beside(str(second), "transcript"):
            Path(part).write_text("new\n")
        second.mkdir()  # (after the check: os.replace onto a folder fails)
        files.place()
    assert first.read_text() == "old scenario\n" and second.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl", "x.scenario"]  # (no piece, no copy kept aside)


def test_an_overwritten_finding_replaces_both_and_keeps_no_copy(tmp_path):
    from playground.record.together import Together

    first, second = tmp_path / "x.scenario", tmp_path / "x.jsonl"
    first.write_text("old\n"), second.write_text("old\n")
    with Together(overwrite=True) as files:
        for part in files.beside(str(first), "scenario"), files.beside(str(second), "transcript"):
            Path(part).write_text("new\n")
        files.place()
    assert first.read_text() == second.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl", "x.scenario"]


def test_a_finding_with_joiners_counts_every_node_of_its_run():
    """"2 nodes" whose line names node 3 was not true: the joiner is one of the run's."""
    from playground.run.hunt import Finding

    schedule = Schedule(2, 1, ClusterConfig(), ((1.0, "join"), (3.0, "crash 3")))
    assert Finding(schedule, SLE1, 4.0, "").size == "3 nodes (2 at the start, 1 joining), 2 commands"
    assert Finding(Schedule(1, 1, ClusterConfig(), ((1.0, "elect 1"),)), SLE1, 1.0, "").size == "1 node, 1 command"


def test_a_worker_is_born_with_the_stopping_signals_blocked(tmp_path, monkeypatch):
    """A worker is forked with the hunt's signal handler: Ctrl-C or a hang-up (sent to the
    whole process group) before it ignored them raised in it, a traceback from
    "Process ForkPoolWorker-1". It is forked with them blocked, and lifts the block once
    it ignores them. (One schedule is enough: neither worker takes it before both are
    born, so neither is ended before it has said how it was born.)"""
    import multiprocessing
    import signal as signals
    import threading

    from playground.run import hunt as hunt_module

    real = hunt_module._worker_ignores_signals
    both_born = multiprocessing.get_context("fork").Barrier(2)

    def noting() -> None:
        blocked = signals.pthread_sigmask(signals.SIG_BLOCK, [])
        real()
        after = signals.pthread_sigmask(signals.SIG_BLOCK, [])
        (tmp_path / f"{os.getpid()}").write_text(f"{sorted(int(s) for s in blocked)} {sorted(int(s) for s in after)}")
        try:
            both_born.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass  # (a worker that never came: the count below says so)

    monkeypatch.setattr(hunt_module, "_worker_ignores_signals", noting)
    hunt("ring", SLE1, schedules=1, workers=2)
    stopping = sorted(int(s) for s in (signals.SIGHUP, signals.SIGINT, signals.SIGTERM))
    noted = [p.read_text() for p in tmp_path.iterdir()]
    assert noted == [f"{stopping} []"] * 2, noted
