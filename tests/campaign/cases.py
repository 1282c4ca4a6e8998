"""The case record of the campaign and what its generators share: what a case expects
(the outcome names), the value pools, the verdicts of a value by the README's ranges, and
the Builder that makes every choice with one seeded RNG."""

from __future__ import annotations

import random
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

LIMIT = 15.0  # seconds for a case
BIG_LIMIT = 30.0  # for the big signal cases
START_UP = 0.3  # seconds from a process's start to its command's work: Python's start-up, bully-tui's imports


# What a case expects.
REFUSE, ACCEPT, EITHER, DIFFERENT, WRITE_ERROR, SIGNAL, HELP, SEARCHED, FOUND = (
    "refuse", "accept", "either", "different", "write-error", "signal", "help", "searched", "found")
# What a signal can meet before bully-tui's first statement (see "signal" in the package's docstring).
KILLED, PYTHON_START_UP = "killed", "python-start-up"
FAILURES = ("traceback", "hang", "silent", "misleading", "misrefused", "partial", "setup")
GROUPS = ("headless", "compare", "live", "verify", "replay", "export", "help", "hunt", "node", "merge", "real", "attach",
          "serve")
TERMINAL = ("terminal", "--headless")  # what a refusal to start the app without one names


# --- the case record ------------------------------------------------------------------


class Special(str):
    """A file that is not bytes: a directory or a FIFO."""


DIRECTORY, FIFO = Special("directory"), Special("fifo")


@dataclass(frozen=True)
class Base:
    """A transcript made by the checkout under test in the setup step, copied as it is."""

    key: str


@dataclass(frozen=True)
class Derived:
    """A setup transcript with one mutation (`op` in MUTATIONS), made when the case runs.
    The mutation says which line it spoiled: `names` may say "{line}"."""

    base: str
    op: str
    params: tuple = ()
    seed: int = 0


@dataclass(frozen=True)
class SignalPlan:
    signum: int
    delay: float  # seconds after the start (or after the first file, or bully-tui's first statement: below)
    again_ms: int | None = None  # the same signal again, this many ms later
    after_file: bool = False  # `delay` counts from when the case's first new file appears in its folder
    ignored: bool = False  # the process starts with the signal ignored (nohup, a script's background job)
    after_start: bool = False  # `delay` counts from bully-tui's first statement, its imports done
    # (after_file and after_start: the start-up is not under test, and the case is forked: spawn.py)

    def moment(self) -> str:
        """The moment, as a case's name shows it: "0.25s", "0.25s-after-a-file", "0.25s-after-start"."""
        return f"{self.delay}s" + ("-after-a-file" if self.after_file else "-after-start" if self.after_start else "")


def in_the_work(signum: int, delay: float, start_up: float, again_ms: int | None = None) -> SignalPlan:
    """A signal `delay` seconds after the process starts. Past `start_up` (Python's start-up
    and the command's imports), it is the same moment of the command's work: that much less
    after bully-tui's first statement, its imports done (after_start: forked, without the
    start-up's CPU); before, as drawn (spawned: the start-up is the moment under test)."""
    if delay > start_up:
        return SignalPlan(signum, round(delay - start_up, 3), again_ms, after_start=True)
    return SignalPlan(signum, delay, again_ms)


@dataclass
class Case:
    name: str  # operator:target
    group: str  # one of GROUPS: the subcommand
    argv: list[str]
    expect: str
    names: str | tuple[str, ...] | None = None  # the refusal line must contain it (one of them)
    files: dict[str, Any] = field(default_factory=dict)  # made in the cwd: bytes, DIRECTORY, FIFO, Base, Derived
    outputs: dict[str, str] = field(default_factory=dict)  # files it may write: name -> transcript | svg | text
    may_change: tuple[str, ...] = ()  # pre-existing files it may replace (--overwrite)
    also: tuple[str, ...] = ()  # other outcomes that are fine too
    forbid: str | None = None  # the refusal line must not say this
    signal: SignalPlan | None = None
    fsize: int | None = None  # RLIMIT_FSIZE, bytes
    stdout_full: bool = False  # stdout is /dev/full
    stdout_closed: bool = False  # stdout is closed (`>&-`)
    limit: float = LIMIT
    verify_after: bool = False  # run verify on the transcript a signal left
    max_bytes: int | None = None  # outputs must be smaller
    index: int = 0
    terminal: bool = False  # run in a terminal of its own (the live views): judged on what it says after its screen
    beside: int = 0  # real nodes started by hand first (attach's), named in the argv as {nodes}

    def shown(self) -> str:
        return " ".join(shlex.quote(shortened(a)) for a in self.argv)


def shortened(arg: str, width: int = 48) -> str:
    return arg if len(arg) <= width else f"{arg[:24]}…({len(arg):,} chars)"


# --- what the generators share ---------------------------------------------------------

ALGORITHMS = ("classic", "garcia-molina", "stoller", "ring", "epoch-bully")
QUICK = ("classic", "garcia-molina", "ring", "epoch-bully")  # fast at small N, and take join/leave
LONG_GARBAGE = "zé%$[]{}~" * 400  # 3,600 characters: a refusal must not echo it all
HOSTILE = [  # (label, value) for any option that takes a number
    ("negative", "-1"), ("zero", "0"), ("1e308", "1e308"), ("1e-300", "1e-300"), ("nan", "nan"),
    ("inf", "inf"), ("-inf", "-inf"), ("empty", ""), ("spaces", "   "), ("arabic-digits", "١٢"),
    ("fullwidth-digits", "１２"), ("underscore", "3_0"), ("hex", "0x10"), ("5000-digits", "1" + "0" * 4999),
    ("garbage", LONG_GARBAGE), ("dash-5", "-5"), ("word", "abc"), ("comma", "1,5"), ("unit", "5s"),
]
ARGPARSE_MISREAD = "expected one argument"  # what an option-looking value must not be called
NODE_COMMANDS = ("crash", "recover", "elect", "hold", "release", "leave")
EXPORT_EXTENSIONS = {"svg": "svg", "mermaid": "mmd", "shiviz": "log"}


_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII, no sign


def seconds_verdict(text: str, low: float, high: float, zero: bool) -> str:
    """"ok", "bad" or "either" for a time value, by the README's ranges (what the contract
    says, computed here independently of the product)."""
    if text.startswith("-") and _DECIMAL.fullmatch(text[1:]) and float(text[1:]) == 0:
        return "either" if zero else "bad"  # -0 is 0
    if not _DECIMAL.fullmatch(text):
        return "bad"  # signs, nan, inf, non-ASCII digits, underscores, hex, spaces, words
    value = float(text)
    if value == 0:
        return "ok" if zero else "bad"
    if not low <= value <= high:
        return "bad"
    return "either" if value < 1e-6 else "ok"  # rounds to no time at all in whole microseconds


def whole_verdict(text: str, low: int, high: int | None) -> str:
    if not re.fullmatch(r"[0-9]+", text):
        return "bad"
    if len(text) > 4000:
        return "bad" if high is not None else "either"
    value = int(text)
    return "ok" if value >= low and (high is None or value <= high) else "bad"


def delay_verdict(text: str) -> str:
    parts = text.split(":")
    if len(parts) > 2:
        return "bad"
    verdicts = [seconds_verdict(p, 0, 1e6, True) for p in parts]
    if "bad" in verdicts:
        return "bad"
    if len(parts) == 2 and float(parts[0]) > float(parts[1]):
        return "bad"
    return "either" if "either" in verdicts else "ok"


class Builder:
    """Collects cases; one RNG makes every choice."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.cases: list[Case] = []

    def add(self, name: str, group: str, argv: list[str], expect: str, **kw: Any) -> Case:
        case = Case(name, group, list(argv), expect, **kw)
        self.cases.append(case)
        return case

    def seed(self) -> int:
        return self.rng.randrange(1 << 32)

    def spelled(self, flag: str, value: str) -> list[str]:
        """`--opt V` or `--opt=V` (an option-looking value always the first way: that is
        where argparse misreads it)."""
        if value.startswith("-") or self.rng.random() < 0.7:
            return [flag, value]
        return [f"{flag}={value}"]
