"""Commands that steer a run, and the one parser for `--at` and scenario files.

Syntax, one per line: `TIME COMMAND ARGS`; `#` starts a comment; blank lines are skipped.
  crash K | recover K | elect K | timeout T | delay MIN[:MAX]
K names a node by rank: 1 is the lowest id, N the highest. With the default ids 1..N
rank and id are the same number; with `--ids uuid` the rank is how to name a node.

A scenario file may also hold settings, `set NAME VALUE`, with the names of the command
line options (`set algorithm ring`, `set nodes 8`, `set delay 1`). They are defaults:
an option given on the command line wins. Every check happens before anything runs,
and a failure names the file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .config import InputError, check_non_negative, check_positive

USAGE = {
    "crash": "crash ID",
    "recover": "recover ID",
    "elect": "elect ID",
    "timeout": "timeout T",
    "delay": "delay MIN[:MAX]",
}
NODE_COMMANDS = ("crash", "recover", "elect")
SCENARIO_COMMANDS = tuple(USAGE)


@dataclass(frozen=True, slots=True)
class Command:
    """One command: `name` with its arguments (a node id, T, or the delay bounds)."""

    name: str
    args: tuple[int | float, ...] = ()

    @property
    def node(self) -> int:
        return int(self.args[0])

    def __str__(self) -> str:
        return " ".join([self.name, *(f"{a:g}" for a in self.args)])


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A command to run at virtual time `at`; `source` says where it came from."""

    at: float
    command: Command
    source: str


def parse_number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, not {text!r}")
    return value


def parse_delay(text: str) -> tuple[float, float]:
    """`MIN` (a constant delay) or `MIN:MAX`, in seconds."""
    low, sep, high = text.partition(":")
    delay_min = parse_number(low, "minimum delay")
    delay_max = parse_number(high, "maximum delay") if sep else delay_min
    check_non_negative("minimum delay", delay_min)
    check_non_negative("maximum delay", delay_max)
    if delay_min > delay_max:
        raise InputError(f"minimum delay {delay_min:g} is above maximum delay {delay_max:g}")
    return delay_min, delay_max


def parse_node(text: str, ids: tuple[int, ...]) -> int:
    try:
        node = int(text)
    except ValueError:
        raise InputError(f"node must be a whole number, not {text!r}") from None
    if node not in ids:
        raise InputError(f"there is no node {node} (nodes are {ids[0]}..{ids[-1]})")
    return node


def parse_command(words: list[str], ids: tuple[int, ...]) -> Command:
    name, args = words[0].lower(), words[1:]
    if name not in SCENARIO_COMMANDS:
        raise InputError(f"unknown command {words[0]!r} (expected one of: {', '.join(SCENARIO_COMMANDS)})")
    if len(args) != 1:
        raise InputError(f"{name} takes one argument: {USAGE[name]}")
    if name in NODE_COMMANDS:
        return Command(name, (parse_node(args[0], ids),))
    if name == "timeout":
        timeout = parse_number(args[0], "timeout")
        check_positive("timeout", timeout)
        return Command(name, (timeout,))
    return Command(name, parse_delay(args[0]))


def parse_line(line: str, ids: tuple[int, ...], source: str, where: str) -> Scheduled | None:
    """One `TIME COMMAND ARGS` line; None for a blank or comment line."""
    words = line.split("#", 1)[0].split()
    if not words:
        return None
    try:
        if len(words) < 2:
            raise InputError("expected TIME COMMAND ARGS")
        at = parse_number(words[0], "time")
        check_non_negative("time", at)
        return Scheduled(at, parse_command(words[1:], ids), source)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


# The options a scenario may set (`set NAME VALUE`), as the command line spells them.
SETTINGS = ("algorithm", "nodes", "ids", "seed", "timeout", "coordinator-timeout", "delay", "probe-interval", "settle")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario file, read but not yet checked against a cluster: its settings
    (name -> (value, where)) and its command lines ((where, text), in order)."""

    path: str
    settings: dict[str, tuple[str, str]]
    lines: tuple[tuple[str, str], ...]

    def commands(self, ids: tuple[int, ...]) -> list[Scheduled]:
        parsed = (parse_line(text, ids, "scenario", where) for where, text in self.lines)
        return [s for s in parsed if s is not None]


def read_scenario(path: str) -> Scenario:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else "not a UTF-8 text file"
        raise InputError(f"cannot read scenario {path}: {reason}") from None
    settings: dict[str, tuple[str, str]] = {}
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path} line {n}"
        words = line.split("#", 1)[0].split()
        if words and words[0].lower() == "set":
            if len(words) != 3:
                raise InputError(f"{where}: expected set NAME VALUE")
            name = words[1].lower()
            if name not in SETTINGS:
                raise InputError(f"{where}: unknown setting {words[1]!r} (expected one of: {', '.join(SETTINGS)})")
            if name in settings:
                raise InputError(f"{where}: {name} is already set on {settings[name][1]}")
            settings[name] = (words[2], where)
        else:
            lines.append((where, line))
    return Scenario(path, settings, tuple(lines))


def parse_at(texts: list[str], ids: tuple[int, ...]) -> list[Scheduled]:
    parsed = (parse_line(text, ids, "at", f"--at {text!r}") for text in texts)
    return [s for s in parsed if s is not None]
