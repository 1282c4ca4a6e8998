"""Running one case's process: `[sys.executable, "-m", "playground", *argv]` in a
session of its own, with its limits, stdout captured, /dev/full or closed, signalled as
its plan says (`spawn`), or in a terminal of its own (`spawn_in_terminal`); and real
nodes started by hand for `attach` to watch."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests import signals_support

from .cases import BIG_LIMIT, SignalPlan
from .forkserver import Forked, ForkServer, child_limits


@dataclass
class Process:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    hung: bool
    caught: bool | None = None  # a signal sent: whether the process had taken it over then (signals_support.send)
    after_signal: float | None = None  # seconds from the last signal sent to the end of the process
    cpu: float | None = None  # seconds of CPU it took, the children it waited for included


class Measured(subprocess.Popen):
    """A Popen that keeps the CPU its process took, the children it waited for included
    (its rusage, read when it is reaped): `cpu`, None until then."""

    cpu: float | None = None

    def _reap(self, pid: int, flags: int) -> tuple[int, int]:
        got, status, usage = os.wait4(pid, flags)
        if got == self.pid:
            self.cpu = usage.ru_utime + usage.ru_stime
        return got, status

    # (Popen's two places that reap: poll's and wait's, each given wait4 instead of waitpid)
    def _internal_poll(self, _deadstate=None, **ignored):
        return super()._internal_poll(_deadstate, _waitpid=self._reap)

    def _try_wait(self, wait_flags):
        try:
            return self._reap(self.pid, wait_flags)
        except ChildProcessError:  # (as Popen's own: the status is lost)
            return self.pid, 0


def spawn_env(root: Path, tmp: Path) -> dict[str, str]:
    dropped = ("PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONSAFEPATH")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith(("PYTEST", "COV_"))}
    env.update(PYTHONPATH=str(root), TMPDIR=str(tmp))
    return env


def _send(p: subprocess.Popen, signum: int) -> bool:
    """SIGINT and SIGHUP to the process group, as a terminal sends them; SIGTERM and
    SIGKILL to the process, as `kill` does. Whether it had taken the signal over then."""
    return signals_support.send(p, signum, group=signum in (signal.SIGINT, signal.SIGHUP))


def kill_group(p: subprocess.Popen) -> None:
    """End what is left of the case's own process group (processes this campaign started)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def entry_module(root: Path) -> str:
    """What `bully-tui` runs: the entry module, which takes the signals over before any
    import (`playground/__main__.py`), or, in an older checkout, the CLI module itself."""
    return "playground" if (root / "playground" / "__main__.py").exists() else "playground.cli"


def _first_file(p: subprocess.Popen, cwd: Path, before: set[str], limit: float) -> bool:
    """Wait until a new entry appears in `cwd` (True), or the process ends or `limit`
    seconds pass (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and p.poll() is None:
        if set(os.listdir(cwd)) - before:
            return True
        time.sleep(0.001)
    return False


# A case's time limit follows its work, not the clock: it hangs once its processes have
# used `limit` seconds of CPU (a loop), or, using little, once WALL_TIMES x `limit` has
# passed (a wait for what never comes). A case that is only slow, on a machine busy with
# other work, is not a hang.
WALL_TIMES = 4
WATCH_EVERY = 0.25  # seconds between two looks at a case's CPU time


def cpu_seconds(group: int) -> float:
    """The CPU time of every process in process group `group` so far, the children it has
    waited for included (Linux: /proc)."""
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:  # (after the name: state, ppid, pgrp, ..., utime, stime, cutime, cstime)
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def over(group: int, start: float, limit: float) -> bool:
    """Whether a case that began at `start` (monotonic) is past its limit (above)."""
    return time.monotonic() - start > WALL_TIMES * limit or cpu_seconds(group) > limit


def spawn(argv: list[str], cwd: Path, tmp: Path, root: Path, *, limit: float, plan: SignalPlan | None = None,
          fsize: int | None = None, stdout_full: bool = False, stdout_closed: bool = False,
          forks: ForkServer | None = None) -> Process:
    """The case's process, run to its end or its limit (`forks`: forked by that server
    where its start-up is not under test: no signal, or one a moment after its first file
    or its first statement)."""
    # (A signalled case's stderr is a file, read while it runs: Python may report a Ctrl-C lost.)
    with tempfile.TemporaryFile() if plan is not None else contextlib.nullcontext(subprocess.PIPE) as stderr:
        return _spawned(argv, cwd, tmp, root, limit, plan, fsize, stdout_full, stdout_closed, forks, stderr)


def _spawned(argv: list[str], cwd: Path, tmp: Path, root: Path, limit: float, plan: SignalPlan | None,
             fsize: int | None, stdout_full: bool, stdout_closed: bool, forks: ForkServer | None,
             stderr: object) -> Process:
    with contextlib.ExitStack() as opened:  # (/dev/full: closed here, once the child has its own)
        stdout = (opened.enter_context(open("/dev/full", "wb")) if stdout_full
                  else subprocess.DEVNULL if stdout_closed else subprocess.PIPE)
        before = set(os.listdir(cwd))
        start = time.monotonic()
        if forks is not None and (plan is None or plan.after_file or plan.after_start):
            p = forks.spawn(entry_module(root), argv, cwd, spawn_env(root, tmp), fsize, stdout, stderr,
                            ignored=plan.signum if plan and plan.ignored else None)
        else:
            p = Measured([sys.executable, "-m", entry_module(root), *argv], cwd=cwd, env=spawn_env(root, tmp),
                                 stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                 start_new_session=True,
                                 preexec_fn=functools.partial(child_limits, fsize, stdout_closed,
                                                              plan.signum if plan and plan.ignored else None))
    out = err = None
    ended = False  # (a communicate has returned)
    caught, sent, again = None, None, False
    try:
        if plan is not None:
            try:
                if plan.after_file and not _first_file(p, cwd, before, limit):
                    raise subprocess.TimeoutExpired(p.args, 0)  # (the limit: signalled, then judged)
                out, err = p.communicate(timeout=plan.delay)
                ended = True
            except subprocess.TimeoutExpired:
                # (if the process has just ended, this only reaps it: its output is still to read)
                caught, sent = _send(p, plan.signum), time.monotonic()
                if plan.again_ms is not None:
                    try:
                        out, err = p.communicate(timeout=plan.again_ms / 1000)
                        ended = True
                    except subprocess.TimeoutExpired:
                        caught, sent = _send(p, plan.signum) or caught, time.monotonic()
        while not ended:
            try:
                out, err = p.communicate(timeout=WATCH_EVERY)
                ended = True
            except subprocess.TimeoutExpired:
                if over(p.pid, start, limit):
                    raise
                if sent is not None and not again and _lost(plan, stderr, p.pid):  # (as a person presses Ctrl-C again)
                    again, sent = True, time.monotonic()
                    _send(p, plan.signum)
    except subprocess.TimeoutExpired:
        kill_group(p)
        out, err = p.communicate()
        return Process(p.returncode, out or b"", _read(stderr, err), time.monotonic() - start, hung=True, cpu=p.cpu)
    finally:
        kill_group(p)
    finish = time.monotonic()
    return Process(p.returncode, out or b"", _read(stderr, err), finish - start, hung=False, caught=caught,
                   after_signal=None if sent is None else finish - sent, cpu=p.cpu)


def _lost(plan: SignalPlan, stderr: object, pid: int) -> bool:
    """Whether the Ctrl-C sent was lost by Python in its start-up (its stderr so far says
    so), and bully-tui has since taken the signals: time to press it again."""
    return (plan.signum == signal.SIGINT and signals_support.lost_by_python(signals_support.written(stderr))[0]
            and signals_support.ours(pid))


def _read(stderr: object, piped: bytes | None) -> bytes:
    """All the process wrote to stderr: its file (a signalled case's), or what communicate
    read from the pipe (`piped`)."""
    if stderr is subprocess.PIPE:
        return piped or b""
    stderr.seek(0)
    return stderr.read()


# --- the live views: in a terminal -------------------------------------------------------------


ON_SCREEN = b"real run"  # what the live real view shows once its nodes run (its status line)
_ESCAPE = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def spawn_in_terminal(argv: list[str], cwd: Path, tmp: Path, root: Path, *, limit: float,
                      plan: SignalPlan | None, forks: ForkServer | None = None) -> Process:
    """`spawn` in a terminal of its own (a pty, 100 x 30, that nobody types in): the
    signal `plan.delay` seconds after the screen first shows ON_SCREEN. Its stderr, as
    judged, is what the terminal shows after the app has left its screen, escapes taken
    out: its line, if any. `forks`: forked by that server (the signal comes once its
    start-up is done: it shows its screen)."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    start = time.monotonic()
    if forks is not None:
        p = forks.spawn(entry_module(root), argv, cwd, spawn_env(root, tmp), None, slave, slave, stdin=slave)
    else:
        p = Measured([sys.executable, "-m", entry_module(root), *argv], cwd=cwd, env=spawn_env(root, tmp),
                     stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                     preexec_fn=functools.partial(child_limits, None))
    os.close(slave)
    shown = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # (the other end is closed: the app has ended)
                return
            if not data:
                return
            shown.extend(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    hung = False
    try:
        if plan is not None:
            while ON_SCREEN not in shown and p.poll() is None and time.monotonic() < start + limit:
                time.sleep(0.02)
            time.sleep(plan.delay)
            _send(p, plan.signum)
        while True:
            try:
                p.wait(timeout=WATCH_EVERY)
                break
            except subprocess.TimeoutExpired:
                if over(p.pid, start, limit):
                    raise
    except subprocess.TimeoutExpired:
        hung = True
    finally:
        kill_group(p)
        p.wait()
        reader.join(timeout=5)
        os.close(master)
    after = _ESCAPE.sub(b"", bytes(shown).rsplit(b"\x1b[?1049l", 1)[-1])
    said = b"\n".join(line.strip() for line in after.replace(b"\r", b"\n").split(b"\n") if line.strip())
    return Process(p.returncode, b"", said + b"\n" if said else b"", time.monotonic() - start, hung, cpu=p.cpu)


def nodes_by_hand(count: int, folder: Path, root: Path,
                  forks: ForkServer | None = None) -> tuple[list[Measured | Forked], str]:
    """`count` real nodes of the checkout under test, as a person starts them (`node`),
    once each has booted: them, and the list `attach` takes ("1@127.0.0.1:P,...").
    `forks`: forked by that server (what is under test is attach, not their start-up)."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    where = ",".join(f"{i}@127.0.0.1:{port}" for i, port in enumerate(ports, 1))
    nodes = []
    for i, port in enumerate(ports, 1):
        peers = ",".join(f"{k}@127.0.0.1:{q}" for k, q in enumerate(ports, 1) if k != i)
        argv = ["node", "--id", str(i), "--listen", f"127.0.0.1:{port}", "--peers", peers,
                "--state-dir", str(folder / str(i)), "--timeout", "0.5", "--probe-interval", "0.5"]
        if forks is not None:
            with open(os.devnull, "wb") as null:
                nodes.append(forks.spawn(entry_module(root), argv, folder, spawn_env(root, folder), None, null, null))
        else:
            nodes.append(Measured([sys.executable, "-m", entry_module(root), *argv], env=spawn_env(root, folder),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True))
    deadline = time.monotonic() + BIG_LIMIT
    traces = [folder / str(i) / "trace.jsonl" for i in range(1, count + 1)]
    while not all(t.exists() and b'"kind":"start"' in t.read_bytes() for t in traces):
        if time.monotonic() > deadline or any(p.poll() is not None for p in nodes):
            for p in nodes:
                kill_group(p)
            raise LookupError("the nodes to attach to did not start")
        time.sleep(0.05)
    return nodes, where
