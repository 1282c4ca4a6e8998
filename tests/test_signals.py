"""Whatever stops bully-tui, and whenever: one line, the usual status, and every file it
wrote ends on a whole line (issue "Every input, every signal").

Real processes, real signals, at moments drawn from a fixed seed, from the very start
(0 s) on: a run of Stoller's algorithm at N = 20 writes a transcript fast (batches of
many kilobytes, which SIGKILL used to cut at a page boundary). What must hold does not
depend on the moment, nor on how fast the machine is: before bully-tui's first statement
the signal meets Python's own start-up, and `ended_well` takes what that does as what
playground/__main__.py says it is (the rule the campaign shares, tests/signals_support.py:
bully-tui's ending once the process had taken the signal over, the interpreter's before)."""

from __future__ import annotations

import functools
import json
import os
import pty
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.record.reader import load
from playground.run import interrupt
from tests import signals_support
from tests.campaign.forkserver import at_defaults
from tests.campaign.spawn import cpu_seconds
from tests.test_hardening import wait_until
from tests.test_real_nodes import progressing

ROOT = Path(__file__).parent.parent
LONG_RUN = ["--headless", "--algorithm", "stoller", "--nodes", "20", "--until", "1000000"]


def bully(*args: str, cwd: Path, env: dict | None = None, stderr=subprocess.PIPE, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "playground", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=stderr, env={**os.environ, "TMPDIR": str(cwd), **(env or {})},
                            preexec_fn=at_defaults, **kw)  # noqa: PLW1509


def eventually(condition, limit: float = 3.0) -> bool:
    """`condition` holds, now or within `limit` seconds (after SIGKILL, the guardian mends
    what was left as the process dies)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def ends_whole(path: Path) -> bool:
    """The file ends on a whole line, or is empty or absent."""
    return eventually(lambda: not path.exists() or path.read_bytes()[-1:] in (b"", b"\n"))


MOMENTS = random.Random(17)  # the same moments every run


def ended_well(signum: int, caught: bool, returncode: int, err: bytes, made: list[Path]) -> str:
    """How a process that got `signum` ended, if the rule allows it (signals_support:
    bully-tui's line once it had taken the signal over, the interpreter's before), else
    an AssertionError; nothing made unless bully-tui stopped it. `caught`: what
    signals_support.send returned."""
    text = err.decode()
    how = signals_support.ending(signum, caught, returncode, text)
    assert how is not None, (signum, caught, returncode, text)
    assert "Traceback" not in text or how == signals_support.PYTHON, text
    if how != signals_support.STOPPED and signum != signal.SIGKILL:
        assert made == [], made
    return how


@pytest.mark.parametrize("signum, after", [
    *((s, 0.0) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)),  # at once: still Python's own start-up
    *((s, round(MOMENTS.uniform(0, 0.3), 3)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) for _ in range(2)),
    *((s, round(MOMENTS.uniform(0, 1.5), 3)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) for _ in range(2)),
    *((signal.SIGKILL, round(MOMENTS.uniform(0, 1.5), 3)) for _ in range(5)),
])
def test_a_signal_at_any_moment_leaves_whole_lines_one_line_and_its_status(tmp_path, signum, after):
    path = tmp_path / "t.jsonl"
    with signals_support.started(lambda stderr: bully(*LONG_RUN, "--transcript", str(path), cwd=tmp_path,
                                                       start_new_session=True, stderr=stderr)) as (run, stderr):
        time.sleep(after)
        caught = signals_support.send(run, signum)
        _, err = signals_support.ended_after(run, signum, stderr, within=60)
    assert ends_whole(path)
    ended_well(signum, caught, run.returncode, err, [p for p in tmp_path.iterdir() if p.exists()])
    if path.exists() and path.stat().st_size:
        assert load(str(path)).header.algorithm == "stoller"  # whole, and every line valid


def test_a_ctrl_c_python_loses_in_its_start_up_is_pressed_again_and_then_ends_the_run(tmp_path):
    """Before bully-tui's first statement, Python's own handler raises a Ctrl-C, and where
    that is inside a callback of the interpreter's (importlib's module locks have one) it
    prints "Exception ignored" and goes on: the run starts as if none had come. Nothing
    can take the signal that early; a person presses Ctrl-C again, and so do the tests
    (signals_support.ended_after, the campaign). Here the loss is made on purpose: a
    weak reference's callback that gets the signal, before the entry module runs."""
    lose = ("import os, runpy, signal, sys, weakref\n"
            "class Held: pass\n"
            "held = Held()\n"
            "ref = weakref.ref(held, lambda _: (os.kill(os.getpid(), signal.SIGINT), sum(range(10))))\n"
            "del held\n"
            f"sys.argv = ['bully-tui', *{LONG_RUN!r}, '--transcript', 't.jsonl']\n"
            "runpy.run_module('playground', run_name='__main__', alter_sys=True)\n")
    with signals_support.started(lambda stderr: subprocess.Popen(
            [sys.executable, "-c", lose], cwd=tmp_path, stdout=subprocess.PIPE, stderr=stderr,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=at_defaults)) as (run, stderr):  # noqa: PLW1509
        err = signals_support.ended_after(run, signal.SIGINT, stderr, within=60)[1].decode()
    assert err.startswith("Exception ignored in: <function <lambda>") and signals_support.lost_by_python(err)[0], err
    assert signals_support.ending(signal.SIGINT, True, run.returncode, err) == signals_support.STOPPED, err
    assert run.returncode == 130 and ends_whole(tmp_path / "t.jsonl")


def test_a_second_ctrl_c_while_the_first_is_handled_still_exits_130(tmp_path):
    for gap in (0.001, 0.05):
        path = tmp_path / f"t{gap}.jsonl"
        run = bully(*LONG_RUN, "--transcript", str(path), cwd=tmp_path)
        # (the run's own Ctrl-C, not one Python's start-up takes)
        progressing(functools.partial(signals_support.ours, run.pid), lambda: None, within=30,
                    why=lambda: "bully-tui never took the signals")
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        time.sleep(gap)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=30)
        assert run.returncode == 130 and err.decode().count("\n") == 1 and ends_whole(path)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_start_up_is_a_clean_interruption(tmp_path, signum):
    """From the first statement of bully-tui on, before its imports: the moment its
    handler for SIGTERM is in place, a signal is one line and its status."""
    run = bully("--headless", "--nodes", "3", cwd=tmp_path)
    assert eventually(lambda: signals_support.taken_over(run.pid, signal.SIGTERM), limit=10)
    caught = signals_support.send(run, signum)
    _, err = run.communicate(timeout=30)
    assert ended_well(signum, caught, run.returncode, err, list(tmp_path.iterdir())) == "stopped"


ENTRY = "playground.__main__"


def test_the_signals_are_taken_by_the_first_statement_before_any_import():
    """Importing the entry module takes the three signals over, having imported nothing of
    its own but the package (whose __init__ is a docstring): no trio, no typing, not
    interrupt.py. What Python did before is its own start-up."""
    probe = ("import signal, sys; before = set(sys.modules); import playground.__main__ as m; "
             "print(sorted(set(sys.modules) - before)); "
             "print(all(signal.getsignal(s) is m._starting for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    imported, ours = done.stdout.splitlines()
    assert eval(imported) == ["playground", ENTRY] and ours == "True", done.stdout + done.stderr


def test_the_console_script_pip_writes_runs_nothing_of_ours_before_the_entry_module(tmp_path):
    """`bully-tui` is the script pip writes for [project.scripts]: made here by pip's own
    script maker, its statements before importing the entry module are `import re` and
    `import sys` only, so the entry module's first statement is the first of ours."""
    import ast
    from importlib.metadata import entry_points

    wheel = pytest.importorskip("pip._internal.operations.install.wheel")
    (entry,) = entry_points(group="console_scripts", name="bully-tui")
    assert entry.value == f"{ENTRY}:main"
    maker = wheel.PipScriptMaker(None, str(tmp_path))
    maker.variants = {""}  # (as pip sets it: the one name)
    (script,) = maker.make(f"bully-tui = {entry.value}")
    body = ast.parse(Path(script).read_text()).body
    first_of_ours = next(i for i, node in enumerate(body) if isinstance(node, ast.ImportFrom) and node.module == ENTRY)
    assert [ast.unparse(node) for node in body[:first_of_ours]] == ["import re", "import sys"]


@pytest.mark.parametrize("signum, said", [(signal.SIGINT, "bully-tui: interrupted\n"),
                                          (signal.SIGTERM, "bully-tui: stopped by SIGTERM\n"),
                                          (signal.SIGHUP, "bully-tui: stopped by SIGHUP\n")])
def test_a_signal_while_bully_tui_imports_ends_it_at_once_with_its_line(tmp_path, signum, said):
    """Between the entry module's first statement and the command's start nothing is made:
    the signal (sent here by the process to itself, so at a known moment) ends it at
    once, with the words interrupt.Stopped says and 128 + n."""
    from playground.run.interrupt import Stopped

    assert said == Stopped(signum).line() + "\n"
    probe = (f"import os, playground.__main__; os.kill(os.getpid(), {int(signum)}); "
             "import time; time.sleep(30); print('went on')")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (128 + signum, "", said)


LOST = {
    "a finalizer": "class Lost:\n    def __del__(self):\n        interrupt._handle(signal.SIGTERM, sys._getframe())\nLost()\n",
    "an import": "open('signalled.py', 'w').write('import os, signal\\nos.kill(os.getpid(), signal.SIGTERM)\\n')\n"
                 "import signalled\n",
}


@pytest.mark.parametrize("where", LOST)
def test_a_signal_where_its_stop_would_be_lost_ends_the_process_at_once(tmp_path, where):
    """Raised in a finalizer (trio's Nursery.__del__ took one), Python only prints it,
    "Exception ignored", and the command went on; raised in an import, it can be lost as
    well, or crash a compiled module half-way through its set-up (orjson's, a
    segmentation fault). There the process ends at once, with its line and 143."""
    probe = ("import signal, sys\nimport playground.__main__\nfrom playground.run import interrupt\n"
             f"interrupt.install()\n{LOST[where]}print('went on')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (done.returncode, done.stdout, done.stderr) == (143, "", "bully-tui: stopped by SIGTERM\n")


@pytest.mark.parametrize("stderr, returncode, python", [
    ("Fatal Python error: init_import_site: Failed to import the site module\nPython runtime state: initialized\n"
     "Traceback (most recent call last):\n  File \"<frozen site>\", line 616, in <module>\nKeyboardInterrupt", 1, True),
    ("Traceback (most recent call last):\n  File \"<frozen runpy>\", line 198, in _run_module_as_main\n"
     "  File \"/x/playground/__main__.py\", line 22, in <module>\n    import signal\nKeyboardInterrupt", -2, True),
    ("Traceback (most recent call last):\n  File \"/x/playground/__main__.py\", line 52, in main\n"
     "  File \"/x/playground/cli.py\", line 3, in <module>\nKeyboardInterrupt", -2, False),  # ours: it must not
    ("bully-tui: interrupted", 130, False),
])
def test_what_python_says_of_a_ctrl_c_in_its_own_start_up_is_told_from_ours(stderr, returncode, python):
    assert signals_support.python_start_up(signal.SIGINT, returncode, stderr.splitlines()) is python
    assert not signals_support.python_start_up(signal.SIGTERM, returncode, stderr.splitlines())


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A transcript of about 120,000 events: reading it takes a command over a second of
    CPU, past the half second its start-up takes."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    done = subprocess.run([sys.executable, "-m", "playground", "--headless", "--algorithm", "stoller", "--nodes", "20",
                           "--until", "300", "--transcript", str(path)], capture_output=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0
    return path


@pytest.mark.parametrize("command", [["verify", "{big}"], ["export", "{big}", "--format", "svg", "-o", "out.svg"],
                                     ["--headless", "--compare", "--nodes", "64"]])
def test_ctrl_c_in_every_subcommand_is_one_line_and_130(tmp_path, big, command):
    run = bully(*(word.format(big=big) for word in command), cwd=tmp_path, start_new_session=True)
    # Mid-command, however busy the machine: once it has done half a second of its work.
    assert eventually(lambda: cpu_seconds(run.pid) >= 0.5 or run.poll() is not None, limit=120)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=30)
    assert run.returncode == 130 and err.decode().startswith("bully-tui: interrupted") and err.count(b"\n") == 1
    assert not [p.name for p in tmp_path.iterdir()]  # no export, and no piece of one


def test_sigkill_of_the_live_app_leaves_nothing_in_the_temporary_folder(tmp_path):
    """The app records to a temporary file `s` copies; killed with -9, it cannot remove
    it, so the guardian does."""
    main_fd, child_fd = pty.openpty()
    app = subprocess.Popen([sys.executable, "-m", "playground", "--nodes", "5"], cwd=tmp_path, stdin=child_fd,
                           stdout=child_fd, stderr=child_fd, close_fds=True,
                           env={**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color"})
    os.close(child_fd)
    try:
        assert wait_until(lambda: list(tmp_path.glob("bully-*.jsonl")), main_fd), "the app never started recording"
        app.kill()
        app.wait(timeout=10)
        assert wait_until(lambda: not list(tmp_path.glob("bully-*.jsonl")), main_fd, limit=5)
    finally:
        if app.poll() is None:
            app.kill()
        os.close(main_fd)


def _terminal_closes_under_the_app(tmp_path, argv: list[str], *, hang_up: bool, storm: float = 0.0,
                                   preexec=None) -> None:
    """The live app in a pty: once it records (and `storm` seconds more), the terminal goes
    away, as when tmux kills the session, with a hang-up (`hang_up`) or none; it must end
    as a hang-up ends it (129), its recording removed (by the guardian if need be)."""
    main_fd, child_fd = pty.openpty()
    app = subprocess.Popen([sys.executable, "-m", "playground", *argv], cwd=tmp_path, stdin=child_fd, stdout=child_fd,
                           stderr=child_fd, close_fds=True, start_new_session=True,
                           env={**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color"},
                           preexec_fn=preexec)  # noqa: PLW1509
    os.close(child_fd)
    try:
        assert wait_until(lambda: list(tmp_path.glob("bully-*.jsonl")), main_fd), "the app never started recording"
        if storm:
            wait_until(lambda: False, main_fd, limit=storm)  # let the storm get going
        os.close(main_fd)
        main_fd = -1
        if hang_up:
            app.send_signal(signal.SIGHUP)
        assert app.wait(timeout=60) == 128 + signal.SIGHUP
    finally:
        if app.poll() is None:
            app.kill()
        if main_fd >= 0:
            os.close(main_fd)
    assert eventually(lambda: not list(tmp_path.glob("bully-*.jsonl")))


def test_a_hang_up_ends_a_busy_live_app_forced_if_its_clean_quit_stalls(tmp_path):
    """64 nodes in classic's start-up storm at x64: the terminal closes (SIGHUP) and the
    process must be gone, forced by the watchdog if a clean quit stalls (writing to a
    terminal that is gone can block for ever). How soon is a figure, not a verdict: 0.13
    to 0.31 s by hand (docs/guide/bad-input.md); a busy machine only makes it later."""
    _terminal_closes_under_the_app(tmp_path, ["--nodes", "64", "--speed", "64"], hang_up=True, storm=1.5)


def test_the_live_app_refuses_to_draw_into_a_pipe(tmp_path):
    done = subprocess.run([sys.executable, "-m", "playground", "--speed", "100"], cwd=tmp_path, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=30)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().strip().endswith("(for a run without a screen, use --headless)")


@pytest.mark.parametrize("command", [["--headless", "--nodes", "3", "--until", "5"], ["--headless", "--compare", "--nodes", "4",
                                     "--algorithm", "classic"], ["export", "{t}", "--format", "mermaid"], ["verify", "{t}"]])
def test_standard_output_that_cannot_be_written_is_one_line_and_exit_1(tmp_path, command):
    t = tmp_path / "t.jsonl"
    subprocess.run([sys.executable, "-m", "playground", "--headless", "--nodes", "3", "--until", "5", "--transcript", str(t)],
                   check=True, capture_output=True, cwd=ROOT)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "playground", *(w.format(t=t) for w in command)], stdout=full,
                              stderr=subprocess.PIPE, cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode() == "bully-tui: error: cannot write to standard output: No space left on device\n"


def test_a_full_disk_mid_run_keeps_whole_lines_and_says_so(tmp_path):
    """A file size limit stands in for a full disk: the write fails part-way."""
    import resource

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    path = tmp_path / "t.jsonl"
    done = subprocess.run([sys.executable, "-m", "playground", *LONG_RUN, "--transcript", str(path)], cwd=tmp_path,
                          capture_output=True, preexec_fn=limited, timeout=60)
    assert done.returncode == 1 and done.stderr.decode().startswith(f"bully-tui: error: cannot write transcript {path}")
    assert 0 < path.stat().st_size <= 300_000 and path.read_bytes().endswith(b"\n")
    assert json.loads(path.read_bytes().splitlines()[-1])["seq"] >= 0


def test_a_signal_whose_stop_was_swallowed_during_the_imports_still_stops_the_run():
    """A signal landing while Python imports can be raised inside importlib's own
    callback, which swallows it ("Exception ignored"); the campaign found a run that
    then went on for ever. The run checks before it starts."""
    import trio

    from playground.run import interrupt

    with interrupt.handled():
        try:
            interrupt._handle(signal.SIGHUP, None)
        except interrupt.Stopped:
            pass  # swallowed, as that callback does
        with pytest.raises(interrupt.Stopped) as stopped:
            interrupt.run_trio(trio.sleep_forever)
    assert stopped.value.status == 129


def test_a_signal_as_a_trio_run_ends_is_its_stop_never_an_error_of_trios_receiver():
    # A signal that wakes the task reading trio's signal receiver just as the run's work
    # returns: with the receiver closed first, that task raised in it (KeyError from an
    # empty queue, "block already exited": a hunt's finding, signalled as it was
    # recorded, ended with a traceback). 100 runs: each ends in the signal's Stopped.
    import trio

    async def work() -> int:
        signal.raise_signal(signal.SIGTERM)
        await trio.lowlevel.checkpoint()
        return 1

    endings = []
    for _ in range(100):
        with interrupt.handled():
            try:
                interrupt.run_trio(work)
                endings.append("returned")
            except interrupt.Stopped as stop:
                endings.append(stop.signum)
    assert set(endings) == {signal.SIGTERM}


@pytest.mark.parametrize("delay, nodes, signal_at", [
    ((0.5, 1.5), 30, 3.0),  # jittered: windows of many instants, thousands of entries by t = 3
    ((1.0, 1.0), 100, 1.0),  # one delay: every Election of the start-up arrives at t = 1, an instant run in slices
])
def test_a_signal_stops_a_storm_within_two_windows_of_work(monkeypatch, delay, nodes, signal_at):
    """How promptly a headless run stops, as a bound in work, not in seconds: trio cancels
    the run between two windows, so after a signal the hosts run the rest of the window
    under way and at most the next one, each of at most WINDOW_ENTRIES entries and their
    last instant, or a crowded instant's slice (core/windows.py); here 64 and 16, so that
    the classic Bully's storms are cut into many. (Windows of half a second, as they were,
    held thousands of entries by t = 3.)"""
    import trio.testing

    from playground.core import engine as engine_module
    from playground.core.config import ClusterConfig
    from playground.core.host import NodeHost
    from playground.run.cluster import Cluster
    from tests.support import make_engine

    monkeypatch.setattr(engine_module, "WINDOW_ENTRIES", 64)
    monkeypatch.setattr(engine_module, "SLICE_EVENTS", 16 * nodes)
    engine, _ = make_engine(nodes, ClusterConfig(delay_min=delay[0], delay_max=delay[1]))
    handed_out = [0]  # windows the engine has handed out
    step = engine.step

    def counted_step(until_us=None):
        window = step(until_us)
        handed_out[0] += window is not None
        return window

    engine.step = counted_step
    shares: list[tuple[int, int]] = []  # (its window, its entries) of each host's share of a window, in the order run
    host_run = NodeHost.run

    signalled = []  # how many shares had run then

    def run_and_signal_midway(host: NodeHost, entries: list, end: int) -> None:
        shares.append((handed_out[0], len(entries)))
        host_run(host, entries, end)
        if not signalled and entries[0][0] >= signal_at * 1e6:  # (a node's share, the window's other nodes still to run)
            signalled.append(len(shares))
            signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(NodeHost, "run", run_and_signal_midway)
    with interrupt.handled(), pytest.raises(interrupt.Stopped) as stopped:
        interrupt.run_trio(Cluster(engine).run, 60.0, clock=trio.testing.MockClock(autojump_threshold=0))
    assert stopped.value.signum == signal.SIGTERM
    window = shares[signalled[0] - 1][0]
    after = shares[signalled[0]:]
    assert {w for w, _ in after} <= {window, window + 1} and sum(n for _, n in after) <= 2 * 64 + 32, after


def test_a_run_never_collects_fully_and_one_stopped_leaves_what_it_made_frozen():
    """A full collection walks every object alive, seconds at a gigabyte, while no signal
    is taken: a run has none (its objects die by reference counting), and once stopped,
    what it made stays out of the collector's sight until the process ends."""
    import gc

    from playground.run.session import fewer_gc_passes

    with fewer_gc_passes():
        assert gc.get_threshold()[2] >= 10**9
    assert gc.get_freeze_count() == 0  # (a run that ended: as before it)
    with pytest.raises(interrupt.Stopped), fewer_gc_passes():
        made = [[] for _ in range(1000)]
        raise interrupt.Stopped(signal.SIGTERM)
    assert gc.get_freeze_count() >= len(made)


def test_the_rule_asks_for_our_ending_once_the_process_had_taken_the_signal_over(tmp_path):
    """signals_support's rule, the one the tests and the campaign share: -n with nothing
    said is a good ending only for a process that had not taken the signal over when it
    was sent (read from /proc before sending); bully-tui's line and 128 + n always are."""
    waiting = "import signal, sys, time; {} print(flush=True); time.sleep(30)"
    for handler, taken in (("", False), ("signal.signal(signal.SIGTERM, lambda *_: sys.exit(143));", True)):
        process = subprocess.Popen([sys.executable, "-c", waiting.format(handler)], stdout=subprocess.PIPE)
        process.stdout.readline()  # (its handler in place, if it has one)
        assert signals_support.send(process, signal.SIGTERM) is taken
        process.communicate(timeout=30)
        assert process.returncode == (143 if taken else -15)
    ending = signals_support.ending
    assert ending(signal.SIGTERM, False, -15, "") == signals_support.KILLED
    assert ending(signal.SIGTERM, True, -15, "") is None
    assert ending(signal.SIGTERM, True, 143, "bully-tui: stopped by SIGTERM\n") == signals_support.STOPPED
    assert ending(signal.SIGTERM, False, 143, "bully-tui: stopped by SIGTERM\n") == signals_support.STOPPED
    assert ending(signal.SIGTERM, True, 143, "bully-tui: stopped by SIGTERM\nmore\n") is None
    assert ending(signal.SIGINT, True, 1, "Traceback (most recent call last):\nKeyboardInterrupt\n") == "python"
    assert ending(signal.SIGHUP, False, 1, "") is None


# As `nohup` in a script's background job starts a command.
_ignoring_ctrl_c_and_hang_up = functools.partial(at_defaults, signal.SIGINT, signal.SIGHUP)


@pytest.mark.parametrize("command, made", [
    ([*LONG_RUN, "--transcript", "t.jsonl"], ["t.jsonl"]),
    (["hunt", "--algorithm", "garcia-molina", "--property", "sle1", "--budget", "100000", "--workers", "1", "-o", "t"],
     []),  # (a hunt stopped writes nothing)
])
def test_a_signal_ignored_when_bully_tui_began_stays_ignored_to_its_end(tmp_path, command, made):
    """`nohup bully-tui ...` outlives its terminal, and a script's background job the
    Ctrl-C meant for the script's caller: SIGINT and SIGHUP, ignored when it began, do
    nothing, at its start or once it runs (a run that never ends by itself: the signals
    cannot come too late), while it goes on working; SIGTERM still stops it."""
    run = subprocess.Popen([sys.executable, "-m", "playground", *command], cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmp_path)},
                           start_new_session=True, preexec_fn=_ignoring_ctrl_c_and_hang_up)  # noqa: PLW1509
    transcript = tmp_path / "t.jsonl"

    def work() -> float:  # what it has done: 64 kB of transcript, or half a second of the search's CPU, a unit
        if made:
            return transcript.stat().st_size / 65536 if transcript.exists() else 0.0
        return cpu_seconds(run.pid) * 2

    def until_more(done: float) -> None:
        progressing(lambda: run.poll() is not None or work() > done, work, within=30)

    try:
        for signum in (signal.SIGINT, signal.SIGHUP):  # during Python's start-up
            run.send_signal(signum)
        until_more(1.0)  # (well into its run: its own handling of the signals is in place)
        assert not signals_support.taken_over(run.pid, signal.SIGINT)
        assert not signals_support.taken_over(run.pid, signal.SIGHUP)
        for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGINT):
            signals_support.send(run, signum, group=True)
        until_more(work() + 1.0)
        assert run.poll() is None, "it stopped"
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 143 and err.decode().startswith("bully-tui: stopped by SIGTERM"), err.decode()
    assert err.decode().count("\n") == 1, err.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == made
    if made:
        assert load(str(transcript)).header.algorithm == "stoller"  # whole: every line valid


def test_a_live_app_ends_with_its_terminal_when_no_hang_up_comes(tmp_path):
    """Its shell ignores SIGHUP (`trap '' HUP`), so no hang-up reaches the app when the
    terminal goes: the app sees its terminal gone and ends as a hang-up would end it,
    its recording removed (it used to draw on for ever, then wait on a full queue)."""
    _terminal_closes_under_the_app(tmp_path, ["--nodes", "7"], hang_up=False, preexec=_ignoring_ctrl_c_and_hang_up)
