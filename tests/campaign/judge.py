"""Judging a case (`judge`): the observed outcome (exit 0 accept, 2 refuse, 1 different
or write-error, 128+n a signal) held against the case's expectation, what it said, and
what it left in its folder; the problems found, each in a failure class."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import signal
import stat
from pathlib import Path
from typing import Any

from tests import signals_support

from .cases import (
    ACCEPT,
    DIFFERENT,
    EITHER,
    FOUND,
    HELP,
    KILLED,
    PYTHON_START_UP,
    REFUSE,
    SEARCHED,
    SIGNAL,
    WRITE_ERROR,
    Case,
)
from .spawn import WALL_TIMES, Process

try:
    import orjson
except ImportError:  # the campaign runs without it, a little slower
    orjson = None


# A process that had taken a signal over and still ended as if none had come, this long
# after it, swallowed it: ending on its own just as the signal came takes milliseconds.
SWALLOWED_AFTER = 2.0
ERROR, WARNING, DIFF = "bully-tui: error: ", "bully-tui: warning: ", "bully-tui: different: "
SIGNAL_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGKILL: -9}


def _digest(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder` (FIFOs are never opened): its kind and a file's digest."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            mode = os.lstat(path).st_mode
            rel = str(path.relative_to(folder))
            if stat.S_ISREG(mode):
                out[rel] = ("file", _digest(path))
            else:
                out[rel] = ("dir",) if stat.S_ISDIR(mode) else ("other", stat.S_IFMT(mode))
    return out


def _bad_json_line(data: bytes) -> int | None:
    """The number of the first line of `data` (ending with a newline) that is not a JSON object."""
    body = data[:-1]
    if orjson is not None:
        try:
            values = orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
            if len(values) == body.count(b"\n") + 1 and all(type(v) is dict for v in values):
                return None
        except orjson.JSONDecodeError:
            pass
    for n, line in enumerate(body.split(b"\n"), 1):
        try:
            if type(json.loads(line)) is not dict:
                return n
        except ValueError:
            return n
    return None


def whole_problem(data: bytes, kind: str) -> str | None:
    """Why a file is not whole (None: it is). An empty file is whole: nothing was written."""
    if not data:
        return None
    if not data.endswith(b"\n"):
        return "ends mid-line"
    if kind == "transcript" and (n := _bad_json_line(data)):
        return f"line {n} is not JSON"
    if kind == "svg" and not data.rstrip().endswith(b"</svg>"):
        return "has no closing </svg>"
    return None


def _mentions(text: str, name: str) -> bool:
    """`name` in `text`, not as the beginning of a longer word or number ("line 1" is not
    in "line 12", "--node" not in "--nodes")."""
    start = 0
    while (i := text.find(name, start)) >= 0:
        j = i + len(name)
        if not (name[-1:].isalnum() and j < len(text) and text[j].isalnum()):
            return True
        start = i + 1
    return False


def _outcome(rc: int | None, lines: list[str]) -> str:
    if rc == 0:
        return ACCEPT
    if rc == 2:
        return REFUSE
    if rc == 1:
        if not lines:
            return FOUND  # (a hunt's finding: its lines are on stdout)
        return DIFFERENT if any(line.startswith(DIFF) for line in lines) else WRITE_ERROR
    if rc in SIGNAL_STATUS.values():
        return SIGNAL
    if rc is not None and rc < 0:
        return KILLED
    return f"exit {rc}"


ALLOWED = {REFUSE: {REFUSE}, ACCEPT: {ACCEPT}, EITHER: {REFUSE, ACCEPT}, DIFFERENT: {DIFFERENT},
           WRITE_ERROR: {WRITE_ERROR}, SIGNAL: {SIGNAL, ACCEPT, REFUSE, FOUND, KILLED, PYTHON_START_UP}, HELP: {ACCEPT},
           SEARCHED: {ACCEPT, FOUND}}


def _wrong_outcome(case: Case, outcome: str, rc: int | None) -> tuple[str, str]:
    """The failure class of an outcome the case does not allow."""
    if outcome == ACCEPT:
        return "silent", "exit 0"
    if case.expect in (ACCEPT, HELP) and outcome in (REFUSE, WRITE_ERROR, DIFFERENT):
        return "misrefused", f"{outcome} (exit {rc})"
    if (case.expect, outcome) in ((DIFFERENT, REFUSE), (DIFFERENT, WRITE_ERROR), (WRITE_ERROR, REFUSE)):
        return "misrefused", f"{outcome} (exit {rc})"
    if case.expect in (REFUSE, EITHER) and outcome == DIFFERENT:
        return "misleading", "says 'different' where the file is malformed"
    return "traceback", f"exit {rc} (expected {case.expect})"


def judge(case: Case, proc: Process, names: Any, cwd: Path, tmp: Path, before: dict[str, tuple]) -> tuple[str, list]:
    """The observed outcome and the problems: [(failure class, detail)], empty if the case holds."""
    if proc.hung:
        return "hang", [("hang", f"still running after {case.limit:g} s of CPU, or {WALL_TIMES * case.limit:g} s")]
    err = proc.stderr.decode("utf-8", "replace")
    if case.signal is not None and case.signal.signum == signal.SIGINT:  # (a Ctrl-C Python lost: the next one's)
        lost, err = signals_support.lost_by_python(err)
        if lost:  # (what follows is judged, by every check below)
            proc = dataclasses.replace(proc, stderr=err.encode())
    lines = err.splitlines()
    said = [line for line in lines if not line.startswith(WARNING)]
    early = signals_support.python_start_up(case.signal and case.signal.signum, proc.returncode, lines)
    outcome = PYTHON_START_UP if early else _outcome(proc.returncode, lines)
    problems: list[tuple[str, str]] = []
    if "Traceback (most recent call last)" in err and outcome != PYTHON_START_UP:
        problems.append(("traceback", _exception_line(lines)))
    allowed = ALLOWED[case.expect] | set(case.also)
    if outcome not in allowed:
        problems.append(_wrong_outcome(case, outcome, proc.returncode))
    elif case.expect == SIGNAL and (outcome == SIGNAL and proc.returncode != SIGNAL_STATUS[case.signal.signum]
                                    or outcome == KILLED and proc.returncode != -case.signal.signum):
        problems.append(("traceback", f"exit {proc.returncode} after {signal.Signals(case.signal.signum).name}"))
    elif case.expect == SIGNAL and outcome == KILLED and case.signal.signum != signal.SIGKILL and proc.caught:
        problems.append(("traceback", f"killed by {signal.Signals(case.signal.signum).name}, which it had taken over"))
    elif case.expect == SIGNAL and outcome in (ACCEPT, FOUND) and proc.caught and proc.after_signal > SWALLOWED_AFTER:
        problems.append(("silent", (f"ran on {proc.after_signal:.1f} s after a "
                                    f"{signal.Signals(case.signal.signum).name} it had taken over, and ended as if none "
                                    "had come")))
    else:
        problems += _said_right(case, outcome, said, proc, names)
    if case.signal is not None and case.signal.ignored and proc.after_signal is None:
        problems.append(("setup", "it ended before its (ignored) signal came: the case tested nothing"))
    problems += _files_right(case, outcome, cwd, tmp, before, said, proc.stdout)
    return outcome, problems


def _exception_line(lines: list[str]) -> str:
    """The line of a traceback that names the exception (the last one), else its last line."""
    exception = re.compile(r"[\s|+]*(\w+\.)*\w*(Error|Exception|Interrupt|Exit|Group)\b")
    named = [line.strip(" |+") for line in lines if exception.match(line)]
    return (named or [line for line in lines if line.strip()] or [""])[-1][:160]


def _said_right(case: Case, outcome: str, said: list[str], proc: Process, names: Any) -> list[tuple[str, str]]:
    """What the allowed outcome printed, against the contract."""
    out = []
    if outcome in (REFUSE, DIFFERENT, WRITE_ERROR):
        prefix = DIFF if outcome == DIFFERENT else ERROR
        lines = said if outcome != REFUSE else proc.stderr.decode("utf-8", "replace").splitlines()
        if len(lines) != 1:
            out.append(("misleading", f"{len(lines)} stderr lines, not one"))
        elif not lines[0].startswith(prefix):
            out.append(("misleading", f"the line does not start with {prefix.strip()!r}"))
        line = lines[0] if lines else ""
        if len(line) >= 300:
            out.append(("misleading", f"a line of {len(line):,} characters"))
        wanted = None if case.expect == SIGNAL else (names,) if isinstance(names, str) else names
        if wanted and not any(_mentions(line, n) for n in wanted):
            out.append(("misleading", f"does not name {' or '.join(map(repr, wanted))}"))
        if case.forbid and case.forbid in line:
            out.append(("misleading", f"says {case.forbid!r}"))
        if outcome == REFUSE and proc.stdout:
            out.append(("partial", f"wrote {len(proc.stdout):,} bytes to stdout before refusing"))
    elif outcome == ACCEPT:
        if case.expect == HELP:
            if not proc.stdout.strip() or proc.stderr:
                out.append(("misleading", "help: stdout empty or something on stderr"))
        else:
            notes = [f"{o}:" for o in case.outputs] if case.group == "export" else []
            extra = [line for line in said if not any(line.startswith(n) for n in notes)]
            if extra:
                out.append(("misleading", f"stderr on success: {extra[0][:120]!r}"))
    elif outcome == FOUND:
        first = proc.stdout.decode("utf-8", "replace").split("\n", 1)[0]
        if " broken: " not in first:
            out.append(("misleading", f"exit 1 and no finding on stdout: {first[:120]!r}"))
    elif outcome == SIGNAL:
        if len(said) > 1 or any(not line.startswith("bully-tui: ") for line in said):
            out.append(("misleading", f"{len(said)} stderr lines after the signal"))
        elif proc.returncode == 130 and not (said and said[0].startswith("bully-tui: interrupted")):
            out.append(("misleading", "no 'bully-tui: interrupted' line"))
    elif outcome == KILLED and proc.stderr:
        out.append(("misleading", f"killed by the signal's default action, yet it said {said[:1]}"))
    return out


def _files_right(case: Case, outcome: str, cwd: Path, tmp: Path, before: dict[str, tuple],
                 said: list[str] = (), stdout: bytes = b"") -> list[tuple[str, str]]:
    out = []
    after = snapshot(cwd)
    for rel, was in before.items():
        if rel not in case.may_change and after.get(rel) != was:
            out.append(("partial", f"pre-existing {rel} {'removed' if rel not in after else 'changed'}"))
    new = [rel for rel in after if rel not in before]
    for rel in new:
        if outcome in (REFUSE, DIFFERENT):
            out.append(("partial", f"created {rel} on a refusal"))
        elif outcome in (KILLED, PYTHON_START_UP):  # (before bully-tui's first statement: nothing can be made)
            out.append(("partial", f"{outcome}, yet made {rel}"))
        elif rel not in case.outputs:
            out.append(("partial", f"left {rel}"))
    there = [name for name in case.outputs if name in after and after[name] != before.get(name)]  # (made or changed)
    if case.group == "hunt" and 0 < len(there) < len(case.outputs) and \
            not (case.signal and case.signal.signum == signal.SIGKILL):  # (SIGKILL: each file whole, guard.py)
        missing = [name for name in case.outputs if name not in there]
        out.append(("partial", f"{', '.join(there)} without {', '.join(missing)} (a hunt's files come together)"))
    elif case.group == "hunt" and there and outcome == SIGNAL and case.signal.signum != signal.SIGKILL and \
            not any("the finding is written" in line for line in said) and b" broken: " not in stdout:
        # (README: a signalled hunt writes nothing; unless the signal came once its files had their names)
        out.append(("partial", f"stopped by {signal.Signals(case.signal.signum).name}, yet wrote {', '.join(there)}"))
    left = sorted(os.listdir(tmp))
    if left:
        out.append(("partial", f"left {', '.join(left[:3])} in TMPDIR"))
    for name, kind in case.outputs.items():
        path = cwd / name
        if after.get(name, ("",))[0] == "file":
            data = path.read_bytes()
            if problem := whole_problem(data, kind):
                out.append(("partial", f"{name} {problem}"))
            elif outcome == ACCEPT and not data and case.expect != SIGNAL:
                out.append(("partial", f"{name} is empty"))
            if case.max_bytes and len(data) > case.max_bytes:
                out.append(("partial", f"{name} is {len(data):,} bytes (limit {case.max_bytes:,})"))
        elif outcome == ACCEPT and case.expect in (ACCEPT, EITHER) and name not in case.may_change \
                and case.group != "hunt":  # (a hunt writes only what it finds)
            out.append(("partial", f"did not write {name}"))
        elif outcome == FOUND and case.expect == SEARCHED:
            out.append(("partial", f"found, and did not write {name}"))
    return out
