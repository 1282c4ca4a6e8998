"""A signal sent to a bully-tui process, and the endings it allows: one rule for the
tests and the campaign (tests/campaign/).

A signal can come before bully-tui's first statement (playground/__main__.py) has taken
it over: on a busy machine Python may still be starting half a second in. Then the
interpreter ends the process its own way, which is a good ending too: SIGTERM and
SIGHUP by their default action (status -n, nothing said, nothing made), SIGINT by
Python's own report of a KeyboardInterrupt (`python_start_up`). Once the process has
taken the signal over, only bully-tui's ending will do: its one line and 128 + n.

Which of the two held is read before the signal is sent (`send`): the process's caught
signals (/proc/PID/status, SigCgt). A process that takes the signal over between that
read and the signal may still end as bully-tui does; one read as having taken it over
may not end as the interpreter does. SIGINT is the exception: Python's own handler is
in place before ours, so a caught SIGINT may still meet Python's report.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}  # bully-tui's, 128 + n
STOPPED, KILLED, PYTHON = "stopped", "killed", "python"  # the endings (`ending`)

# Where a traceback's frames are bully-tui's own code.
FRAME = re.compile(r'File "([^"]*)", line \d+, in (\S+)')
OUR_CODE = re.compile(r"/(playground|protocol)/")


def taken_over(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler of its own for `signum` now (Linux: /proc);
    False if it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signum - 1) & 1)


def ours(pid: int) -> bool:
    """Whether bully-tui's first statement has taken the stopping signals over (it takes
    the three at once; SIGTERM is the one Python has no handler of its own for)."""
    return taken_over(pid, signal.SIGTERM)


def send(process: subprocess.Popen, signum: int, group: bool = False) -> bool:
    """`signum` to `process` (to its process group: `group`, as a terminal sends SIGINT
    and SIGHUP); whether it had taken the signal over just before (`ending` needs it).
    A process already gone is not an error: it had taken nothing over."""
    caught = taken_over(process.pid, signum)
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except ProcessLookupError:
        return False
    return caught


def python_start_up(signum: int | None, rc: int | None, lines: list[str]) -> bool:
    """Python's own report of a Ctrl-C that came after it put its own SIGINT handler in
    place and before bully-tui's first statement took it over (playground/__main__.py):
    a KeyboardInterrupt (a traceback, or "Fatal Python error" while Python imports
    `site`), exit 1 or -2, in which no line of bully-tui's code runs but that module's
    own lines, before that statement. Nothing can be made by then (judged apart)."""
    if signum != signal.SIGINT or rc not in (1, -signal.SIGINT):
        return False
    if not lines or lines[-1].strip() != "KeyboardInterrupt":
        return False
    ours = [m for m in FRAME.finditer("\n".join(lines)) if OUR_CODE.search(m[1])]
    return all(m[1].endswith("playground/__main__.py") and m[2] == "<module>" for m in ours)


# Python's report of an exception it could not raise: a Ctrl-C that came, before
# bully-tui's first statement, while the interpreter ran a callback of its own (importlib's
# module locks have one), is printed so and lost; the process goes on as if none had come.
# So is one that came while `site` ran a line of a .pth file (an editable install's finder):
# it reports "Error processing line N of ...", the traceback indented, and goes on.
LOST = re.compile(r"Exception ignored in: [^\n]*\nTraceback \(most recent call last\):\n(?:  [^\n]*\n)*?"
                  r"KeyboardInterrupt: ?\n"
                  r"|Error processing line \d+ of [^\n]*\.pth:\n\n(?:  [^\n]*\n)*?  KeyboardInterrupt\n"
                  r"(?:  [^\n]*\n)*\nRemainder of file ignored\n")


def lost_by_python(err: str) -> tuple[bool, str]:
    """Whether `err` begins with Python's report of a Ctrl-C it lost in its own start-up
    (LOST: none of its frames bully-tui's code), and what it says after that report. A
    person presses Ctrl-C again; so do the tests."""
    found = LOST.match(err)
    if found is None or any(OUR_CODE.search(m[1]) for m in FRAME.finditer(found[0])):
        return False, err
    return True, err[found.end():]


def ended_after(process: subprocess.Popen, signum: int, stderr: BinaryIO, within: float) -> tuple[object, bytes]:
    """(its standard output, what it wrote to `stderr`, a file) once `process` has ended,
    having been sent `signum`: a Ctrl-C Python lost in its start-up (its report says so)
    is sent again, once, as a person presses it again, once bully-tui has taken the
    signals (`ours`: sooner, Python's own handler would take it). TimeoutExpired after
    `within` seconds."""
    deadline, again = time.monotonic() + within, False
    while True:
        try:
            out, _ = process.communicate(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
            return out, written(stderr).encode()
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
            if signum == signal.SIGINT and not again and lost_by_python(written(stderr))[0] and ours(process.pid):
                again = True
                send(process, signum)


@contextmanager
def started(start: Callable[[BinaryIO], subprocess.Popen]) -> Iterator[tuple[subprocess.Popen, BinaryIO]]:
    """(the process `start` starts with its standard error in a file, that file): the file
    `ended_after` reads while the process runs; a process still running on the way out is
    killed and waited for."""
    with tempfile.TemporaryFile() as stderr:
        process = start(stderr)
        try:
            yield process, stderr
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()


def written(stderr: BinaryIO) -> str:
    """What a process has written so far to `stderr`, a file."""
    return os.pread(stderr.fileno(), 1 << 20, 0).decode("utf-8", "replace")


def stopped_line(signum: int) -> str:
    """bully-tui's one line for `signum`."""
    return "bully-tui: " + ("interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}")


def ending(signum: int, caught: bool, rc: int | None, err: str) -> str | None:
    """How a process that was sent `signum` ended, if the rule allows it: STOPPED
    (bully-tui's one line, 128 + n; the line may carry more after it, as "interrupted:
    ..."), KILLED (SIGKILL; or the default action of a signal it had not taken over:
    -n, nothing said), PYTHON (SIGINT met Python's own start-up); else None. `caught`:
    what `send` returned. What was made is judged apart (nothing, unless STOPPED)."""
    if signum == signal.SIGKILL:
        return KILLED if rc == -signal.SIGKILL else None
    if signum == signal.SIGINT:  # (a Ctrl-C Python lost, and the one sent after it: `ended_after`)
        err = lost_by_python(err)[1]
    lines = err.splitlines()
    if rc == STATUS.get(signum) and len(lines) == 1 and lines[0].startswith(stopped_line(signum)):
        return STOPPED
    if python_start_up(signum, rc, lines):
        return PYTHON
    if not caught and rc == -signum and err == "":
        return KILLED
    return None
