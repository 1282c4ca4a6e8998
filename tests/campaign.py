#!/usr/bin/env python3
"""A generated hostile-input campaign against `bully-tui` (issue 17, "A campaign of our own").

    python tests/campaign.py [--root DIR] [--workers 2] [--seed N] [--report] [--only TEXT] [--list]

How the cases are made. Nothing here is a hand-written list of inputs: `build_cases(seed)`
runs mutation operators over valid inputs, drawing what to mutate and with which value
from pools with one `random.Random(seed)`, so a seed gives the same list every time
(DEFAULT_SEED by default). Each operator covers every value of its pool at least once.
  - options of the headless run and of the live app: each option's valid values, its
    boundaries and just outside them, and the hostile pool (negative, zero, 1e308,
    1e-300, nan, inf, -inf, empty, spaces, Arabic and full-width digits, underscores,
    hex, a 5,000-digit number, long garbage, option-looking values, words), in either
    spelling (`--opt V` or `--opt=V`); names in other case, unknown options,
    abbreviations, missing values, options that do not apply;
  - `--at` lines: a valid command with one part mutated (time, command name, argument
    count, a rank, a value), and membership and partition rules (a node that has left,
    the last member leaving, a partition of everyone or no one);
  - scenario files: a generated valid file with one line mutated (named as "FILE line
    N"), and whole-file problems (BOM + CRLF, NUL, bad UTF-8, over 1 MB, a directory,
    /dev/zero, a FIFO, missing, an empty name);
  - transcripts for verify, replay and export: real transcripts are made once per
    campaign run by the checkout under test (`make_bases`), then one line is mutated per
    case (a wrong JSON type, a field deleted or added, values out of range, unknown
    names, a cut, an empty file, garbage...), or a well-formed alteration (verify:
    different); export's own options are mutated too;
  - --compare, an unwritable stdout (/dev/full) or a closed one (`>&-`), file-size limits
    (RLIMIT_FSIZE), signals at seeded random moments from the very start (0 s: Python's
    own start-up) on, and help;
  - `hunt`: small valid searches (random and exhaustive, on drawn algorithms and
    properties), each of its options set to hostile values, options that do not go
    together, outputs that exist, cannot be written or would be hidden (`-o .jsonl`),
    and signals during a search and while a finding's files are written (at seeded
    moments after the first file of the case appears).

How a case runs. A real subprocess, `[sys.executable, "-m", "playground", *argv]` as the
`bully-tui` command runs (`-m playground.cli` for a checkout that has no entry module),
with PYTHONPATH = the checkout under test, a fresh private cwd holding the case's files,
TMPDIR = a private empty directory, stdin /dev/null, stdout and stderr captured (or
stdout /dev/full, or closed), in a session of its own; optional RLIMIT_FSIZE (with SIGXFSZ ignored,
so writes past it fail with EFBIG like a full disk), a 4 GiB address-space guard, and a
time limit after which its process group is killed. Two cases run at a time.

How it is judged (`judge`). The observed outcome (exit 0 accept, 2 refuse, 1 different
or write-error, 128+n a signal) is held against the case's expectation, the contract:
  refuse       exit 2, stdout empty, ONE stderr line "bully-tui: error: ..." (under 300
               characters) naming `names`; no file created; pre-existing files unchanged
  accept       exit 0, stderr empty or warnings; files written whole
  either       refuse or accept
  different    exit 1, one line "bully-tui: different: ..." (verify)
  searched     a hunt: exit 0 (nothing found) or 1 with nothing on stderr (found: its
               lines on stdout, its files whole)
  write-error  exit 1, one line "bully-tui: error: ..."; what is left is whole
  signal       whatever the moment (no rule depends on the machine's speed), one of:
               128+signum with at most one line ("bully-tui: interrupted" for SIGINT),
               files whole, TMPDIR empty, a sample of the transcripts left passing
               `verify` (-9 for SIGKILL); or the command had ended (0, 1 found, 2
               refused); or `killed`: the signal's default action while Python itself
               started, before bully-tui's first statement (status -signum, nothing on
               stderr, nothing made); or `python-start-up`: SIGINT after Python put its
               own handler in place and before bully-tui's first statement took it
               over, Python's own report (a KeyboardInterrupt, exit 1 or -2, no line of
               the checkout in it but playground/__main__.py's own lines before that
               statement; nothing made). A hunt's finding: its files all there, or none;
               none when a signal stopped it (unless its line says they were written)
  help         exit 0, help on stdout, stderr empty
A case that breaks it falls in a failure class: traceback (a traceback, or an exit
status outside the expected set), hang (the time limit), silent (exit 0 where a refusal
was due), misleading (a refusal that is not one clear line naming the problem),
misrefused (a refusal where the input was fine), partial (a file not whole, a temporary
file left behind, a pre-existing file changed, output on a refusal, one of a hunt's two
files without the other), or setup (the
checkout could not make the transcripts the case mutates).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

try:
    import orjson
except ImportError:  # the campaign runs without it, a little slower
    orjson = None

try:
    from tests import signals_support
except ImportError:  # run as a script (python tests/campaign.py): its folder is on the path
    import signals_support

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SEED = 17
WORKERS = 2
LIMIT = 15.0  # seconds for a case
BIG_LIMIT = 30.0  # for the big signal cases
START_UP = 0.3  # seconds: the early signals are drawn from 0 to this (Python's start-up, then bully-tui's)
# A process that had taken a signal over and still ended as if none had come, this long
# after it, swallowed it: ending on its own just as the signal came takes milliseconds.
SWALLOWED_AFTER = 2.0
KILL_GRACE = 3.0  # seconds to wait for what a killed run left to be mended (the product's guardian)
MEMORY_GUARD = 4 << 30  # address space per case: a runaway run fails instead of taking the machine
REPLAY_FIRST_BLOCK = 513  # replay reads this many lines before anything else: a bad line there is named

# What a case expects.
REFUSE, ACCEPT, EITHER, DIFFERENT, WRITE_ERROR, SIGNAL, HELP, SEARCHED, FOUND = (
    "refuse", "accept", "either", "different", "write-error", "signal", "help", "searched", "found")
# What a signal can meet before bully-tui's first statement (see "signal" above).
KILLED, PYTHON_START_UP = "killed", "python-start-up"
FAILURES = ("traceback", "hang", "silent", "misleading", "misrefused", "partial", "setup")
GROUPS = ("headless", "compare", "live", "verify", "replay", "export", "help", "hunt", "node", "merge", "real", "attach")
ERROR, WARNING, DIFF = "bully-tui: error: ", "bully-tui: warning: ", "bully-tui: different: "
SIGNAL_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGKILL: -9}
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
    delay: float  # seconds after the start (or after the first file, below)
    again_ms: int | None = None  # the same signal again, this many ms later
    after_file: bool = False  # `delay` counts from when the case's first new file appears in its folder


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
        return " ".join(shlex.quote(_short(a)) for a in self.argv)


def _short(arg: str, width: int = 48) -> str:
    return arg if len(arg) <= width else f"{arg[:24]}…({len(arg):,} chars)"


# --- generation -------------------------------------------------------------------------

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
RING_POOL = [  # --ring: (label, value, algorithm, expectation) with --nodes 3
    ("sorted", "sorted", "ring", "accept"), ("reversed", "reversed", "hs", "accept"),
    ("SHUFFLED", "SHUFFLED", "ring", "either"), ("list", "3,1,2", "hs", "accept"), ("spaced-list", " 2, 3,1", "ring", "either"),
    ("bogus", "bogus", "ring", "refuse"), ("empty", "", "hs", "refuse"), ("twice", "1,1,2", "ring", "refuse"),
    ("short", "1,2", "ring", "refuse"), ("no-node", "1,2,9", "hs", "refuse"), ("zero", "0,1,2", "ring", "refuse"),
    ("arabic-digits", "١,٢,٣", "ring", "refuse"), ("5000-digits", "1" + "0" * 4999, "hs", "refuse"),
    ("garbage", LONG_GARBAGE, "ring", "refuse"), ("option-looking", "-1,2,3", "ring", "refuse"),
]

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


@dataclass(frozen=True)
class Option:
    flag: str
    verdict: Callable[[str], str]
    valid: tuple[str, ...]
    outside: tuple[str, ...]  # just outside the range
    where: str = "both"  # headless, live or both


OPTIONS = (
    Option("--nodes", lambda v: whole_verdict(v, 1, 1000), ("1", "3", "7"), ("0", "1001")),
    Option("--seed", lambda v: whole_verdict(v, 0, None), ("0", "1", "987654321"), ("-1", "2.5")),
    Option("--timeout", lambda v: seconds_verdict(v, 0.001, 1e6, False), ("4", "0.001", "2.5", "1000000"),
           ("0.0009", "1000001")),
    Option("--coordinator-timeout", lambda v: seconds_verdict(v, 0.001, 1e6, False), ("8", "0.001", "1e6"),
           ("0.0001", "1000000.5")),
    Option("--probe-interval", lambda v: seconds_verdict(v, 0.001, 1e6, True), ("0", "5", "2.5"),
           ("0.0005", "1000001")),
    Option("--settle", lambda v: seconds_verdict(v, 0.001, 1e9, False), ("30", "0.001", "1e9"),
           ("0.0009", "1000000001")),
    Option("--until", lambda v: seconds_verdict(v, 0, 1e12, True), ("0", "5", "12.5"), ("-0.001", "1000000000001"),
           where="headless"),
    Option("--delay", delay_verdict, ("0", "1", "0.5:1.5", "0:0", "0.25:0.5"), ("2:1", "0:1000001")),
    Option("--speed", lambda v: seconds_verdict(v, 0, 1000, False), ("1", "64", "0.25", "1000"), ("0", "1000.5"),
           where="live"),
)
OPTION = {o.flag: o for o in OPTIONS}


def name_verdict(value: str, names: tuple[str, ...]) -> str:
    if value in names:
        return "ok"
    return "either" if value.lower() in names else "bad"


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


def _headless_base(b: Builder, flag: str) -> list[str]:
    base = ["--headless"]
    if flag != "--until":
        base += ["--until", "5"]
    if flag not in ("--algorithm", "--timeout", "--probe-interval") and b.rng.random() < 0.4:
        base += ["--algorithm", b.rng.choice(QUICK)]
    return base


def _option_case(b: Builder, op: str, flag: str, value: str, live: bool) -> None:
    """One option set to one value, headless or live; the expectation from its verdict."""
    option = OPTION.get(flag)
    verdict = option.verdict(value) if option else "ok"
    words = b.spelled(flag, value)
    forbid = ARGPARSE_MISREAD if value.startswith("-") else None
    label = f"{op}:{flag}={_short(value, 16)!s}"
    if live:
        argv = words + (["--nodes", "3"] if flag != "--nodes" and b.rng.random() < 0.5 else [])
        if flag == "--until":
            b.add(label, "live", argv, REFUSE, names="--until", forbid=forbid)
        elif verdict == "bad":
            b.add(label, "live", argv, REFUSE, names=flag, forbid=forbid)
        else:  # a good value still cannot start an app into a pipe
            b.add(label, "live", argv, REFUSE, names=TERMINAL if verdict == "ok" else (flag, *TERMINAL), forbid=forbid)
        return
    base = _headless_base(b, flag)
    argv = words + base if b.rng.random() < 0.5 else base + words
    if flag == "--speed":
        b.add(label, "headless", argv, REFUSE, names="--speed", forbid=forbid)
    else:
        expect = {"ok": ACCEPT, "bad": REFUSE, "either": EITHER}[verdict]
        b.add(label, "headless", argv, expect, names=flag, forbid=forbid)


def gen_options(b: Builder) -> None:
    """1. Options of the headless run and the live app."""
    numeric = [o for o in OPTIONS if o.where != "live"]
    for option in numeric:  # valid values and the values just outside
        for value in b.rng.sample(option.valid, 1):
            _option_case(b, "valid", option.flag, value, live=False)
        _option_case(b, "outside", option.flag, b.rng.choice(option.outside), live=False)
    for label, value in HOSTILE:  # every hostile value once, on a random option ...
        _option_case(b, f"hostile-{label}", b.rng.choice(numeric).flag, value, live=False)
    for option in b.rng.sample(numeric, 2):  # ... and more on some options
        label, value = b.rng.choice(HOSTILE)
        _option_case(b, f"hostile-{label}", option.flag, value, live=False)
    # an option-looking value that is a number: -0 is 0, so it may run; but argparse must not misread it
    b.add("option-looking:--delay=-0:1", "headless", ["--headless", "--until", "5", "--delay", "-0:1"], EITHER,
          names="--delay", forbid=ARGPARSE_MISREAD)
    # boundaries that run
    b.add("boundary:--nodes=1000", "headless",
          ["--headless", "--nodes", "1000", "--until", "0.1", "--algorithm", "ring"], ACCEPT, names="--nodes")
    b.add("boundary:--nodes=1", "headless", ["--headless", "--nodes", "1", "--until", "5"], ACCEPT)
    b.add("boundary:--timeout=0.001", "headless", ["--headless", "--timeout", "0.001", "--delay", "0", "--until", "2"],
          ACCEPT)
    # names: algorithm and ids
    for value in [b.rng.choice(ALGORITHMS), "CLASSIC", b.rng.choice(["bully", ""]),
                  LONG_GARBAGE]:
        verdict = name_verdict(value, ALGORITHMS)
        expect = {"ok": ACCEPT, "bad": REFUSE, "either": EITHER}[verdict]
        b.add(f"name:--algorithm={_short(value, 16)}", "headless",
              ["--headless", "--until", "5", *b.spelled("--algorithm", value)], expect, names="--algorithm")
    for value in ["uuid", "UUID", b.rng.choice(["guid", ""])]:
        expect = {"ok": ACCEPT, "bad": REFUSE, "either": EITHER}[name_verdict(value, ("seq", "uuid"))]
        b.add(f"name:--ids={value}", "headless", ["--headless", "--until", "5", *b.spelled("--ids", value)], expect,
              names="--ids")
    # ring orders: every value of RING_POOL on an algorithm on a ring, and where --ring does not apply (no draws:
    # the cases after these stay as they were)
    for label, value, algorithm, expect in RING_POOL:
        b.add(f"ring:--ring={label}", "headless", ["--headless", "--until", "5", "--nodes", "3", "--algorithm", algorithm,
                                                   "--ring", value], expect, names="--ring",
              forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    b.add("ring:not-on-a-ring", "headless", ["--headless", "--until", "5", "--algorithm", "garcia-molina", "--ring",
                                             "reversed"], REFUSE, names=("--ring", "garcia-molina"))
    b.add("ring:compare", "compare", ["--headless", "--compare", "--nodes", "4", "--ring", "reversed"], REFUSE,
          names="--ring")
    b.add("ring:real", "headless", ["--headless", "--real", "--algorithm", "ring", "--ring", "shuffled"], REFUSE,
          names="--ring")
    b.add("ring:scenario-not-on-a-ring", "headless", ["--headless", "--scenario", "s.scenario", "--until", "5"], REFUSE,
          names="s.scenario line 2", files={"s.scenario": b"set algorithm classic\nset ring reversed\n"})
    b.add("ring:scenario-shuffled", "headless", ["--headless", "--scenario", "s.scenario", "--until", "20",
                                                 "--transcript", "t.jsonl"], ACCEPT,
          files={"s.scenario": b"set algorithm hs\nset ring shuffled\nset nodes 5\n10 crash 5\n"},
          outputs={"t.jsonl": "transcript"})
    # mutual exclusion: names, the workload's spans, what needs a mutex, a token with no delay
    mutexes = ("central", "token-ring", "lamport", "ricart-agrawala")
    for value in [b.rng.choice(mutexes), "LAMPORT", b.rng.choice(["paxos", ""]), LONG_GARBAGE]:
        expect = {"ok": ACCEPT, "bad": REFUSE, "either": EITHER}[name_verdict(value, mutexes)]
        b.add(f"name:--mutex={_short(value, 16)}", "headless",
              ["--headless", "--nodes", "4", "--until", "20", *b.spelled("--mutex", value)], expect, names="--mutex")
    for flag in ("--cs-think", "--cs-hold"):
        for label, value in [*b.rng.sample(HOSTILE, 3), ("span", "1:3"), ("reversed", "3:1"), ("three", "1:2:3"),
                             ("none", "none")]:
            verdict = "ok" if value == "none" and flag == "--cs-think" else delay_verdict(value) if value != "none" \
                else "bad"
            expect = {"ok": ACCEPT, "bad": REFUSE, "either": EITHER}[verdict]
            b.add(f"mutex:{flag}-{label}", "headless", ["--headless", "--nodes", "4", "--until", "20", "--mutex",
                                                        b.rng.choice(mutexes), flag, value], expect, names=flag)
    b.add("mutex:--cs-hold-without-mutex", "headless", ["--headless", "--until", "5", "--cs-hold", "1"], REFUSE,
          names=("--cs-hold", "--mutex"))
    b.add("mutex:want-without-mutex", "headless", ["--headless", "--until", "10", "--at", "5 want 2"], REFUSE,
          names=("--at", "want", "--mutex"))
    b.add("mutex:want-at-a-down-node", "headless", ["--headless", "--until", "10", "--mutex", "lamport",
                                                    "--at", "4 crash 2", "--at", "5 want 2"], REFUSE, names="down")
    b.add("mutex:token-without-delay", "headless", ["--headless", "--until", "10", "--mutex", "token-ring",
                                                    "--delay", "0"], REFUSE, names="--delay")
    b.add("mutex:mutex-without-a-name", "headless", ["--headless", "--until", "10", "--mutex"], REFUSE,
          names="--mutex")
    b.add("mutex:compare", "compare", ["--headless", "--compare", "--mutex", "--nodes", "4"], ACCEPT)
    # the transcript path
    precious = b"precious: the user's own file\n"
    run = ["--headless", "--nodes", "4", "--until", "5"]
    b.add("transcript:new", "headless", [*run, "--transcript", "t.jsonl"], ACCEPT, outputs={"t.jsonl": "transcript"})
    b.add("transcript:in-a-folder", "headless", [*run, "--transcript", "sub dir/t.jsonl"], ACCEPT,
          files={"sub dir": DIRECTORY}, outputs={"sub dir/t.jsonl": "transcript"})
    b.add("transcript:exists", "headless", [*run, "--transcript", "t.jsonl"], REFUSE, names="t.jsonl",
          files={"t.jsonl": precious})
    b.add("transcript:exists+overwrite", "headless", [*run, "--transcript", "t.jsonl", "--overwrite"], ACCEPT,
          files={"t.jsonl": precious}, may_change=("t.jsonl",), outputs={"t.jsonl": "transcript"})
    b.add("transcript:directory", "headless", [*run, "--transcript", "outdir.d"], REFUSE, names="outdir.d",
          files={"outdir.d": DIRECTORY})
    b.add("transcript:device", "headless", [*run, "--transcript", "/dev/null"], REFUSE, names="/dev/null")
    b.add("transcript:empty-name", "headless", [*run, "--transcript", ""], REFUSE,
          names=("--transcript", "transcript file name"))
    b.add("transcript:missing-folder", "headless", [*run, "--transcript", "missing-dir/t.jsonl"], REFUSE,
          names="missing-dir")
    b.add("transcript:overwrite-alone", "headless", [*run, "--overwrite"], EITHER, names="--overwrite")
    # spelling: unknown options, abbreviations, case, missing values, options that do not apply
    unknown = ["--bogus", "--colour", "--verbose", "-x", "--nodes3"]
    for flag in b.rng.sample(unknown, 2):
        value = ["3"] if b.rng.random() < 0.5 else []
        b.add(f"unknown:{flag}", "headless", ["--headless", "--until", "5", flag, *value], REFUSE, names=flag)
    abbreviations = [("--node", "3"), ("--time", "4"), ("--algo", "ring"), ("--coord", "8"), ("--prob", "5"),
                     ("--sett", "30"), ("--trans", "t.jsonl"), ("--scen", "s.scenario")]
    for flag, value in [abbreviations[0], abbreviations[1], *b.rng.sample(abbreviations[2:], 1)]:
        b.add(f"abbreviation:{flag}", "headless", ["--headless", "--until", "5", flag, value], REFUSE, names=flag)
    b.add("abbreviation:--head", "headless", ["--head", "--until", "5"], REFUSE, names="--head")
    b.add("case:--Nodes", "headless", ["--headless", "--until", "5", "--Nodes", "3"], REFUSE, names="--Nodes")
    b.add("spelling:--nodes=3", "headless", ["--headless", "--until", "5", "--nodes=3"], ACCEPT)
    b.add("repeated:--nodes", "headless", ["--headless", "--until", "5", "--nodes", "3", "--nodes", "4"], EITHER,
          names="--nodes")
    flag = b.rng.choice(["--nodes", "--timeout", "--delay", "--seed"])
    b.add(f"missing-value:{flag}", "headless", ["--headless", "--until", "5", flag], REFUSE, names=flag)
    flag = b.rng.choice(["--timeout", "--settle", "--algorithm"])
    b.add(f"missing-value:{flag}-before-option", "headless", [flag, "--headless", "--until", "5"], REFUSE, names=flag)
    b.add("positional:extra", "headless", ["--headless", "--until", "5", "extra"], REFUSE, names="extra")
    b.add("not-applying:--speed", "headless", ["--headless", "--until", "5", "--speed", "2"], REFUSE, names="--speed")
    b.add("not-applying:--format", "headless", ["--headless", "--until", "5", "--format", "json"], REFUSE,
          names="--format")


def gen_live(b: Builder) -> None:
    """1. The live app, with stdin /dev/null and stdout a pipe: never a full-screen app."""
    live_options = [o for o in OPTIONS if o.flag != "--until"]
    for option in b.rng.sample(live_options, 3):  # valid: refused, naming --headless
        _option_case(b, "live-valid", option.flag, b.rng.choice(option.valid), live=True)
    b.add("live-valid:no-options", "live", [], REFUSE, names=TERMINAL)
    b.add("live-valid:scenario", "live", ["--scenario", "s.scenario"], REFUSE, names=TERMINAL,
          files={"s.scenario": b"set nodes 4\n5 crash 4\n"})
    b.add("live-valid:transcript", "live", ["--nodes", "3", "--transcript", "t.jsonl"], REFUSE, names=TERMINAL)
    hostile = b.rng.sample(HOSTILE, 4)
    for (label, value), option in zip(hostile, [b.rng.choice(live_options) for _ in hostile]):
        _option_case(b, f"live-hostile-{label}", option.flag, value, live=True)
    for option in b.rng.sample(live_options, 1):
        _option_case(b, "live-outside", option.flag, option.outside[0], live=True)
    _option_case(b, "live-not-applying", "--until", "5", live=True)
    b.add("live-not-applying:--format", "live", ["--format", "json"], REFUSE, names="--format")
    b.add("live-unknown:--bogus", "live", ["--bogus"], REFUSE, names="--bogus")
    b.add("live-at:rank", "live", ["--nodes", "3", "--at", "5 crash 4"], REFUSE, names="--at")
    b.add("live-transcript:exists", "live", ["--transcript", "t.jsonl"], REFUSE, names=("t.jsonl", *TERMINAL),
          files={"t.jsonl": b"precious\n"})
    b.add("live-scenario:missing", "live", ["--scenario", "nowhere.scenario"], REFUSE, names="nowhere.scenario")


# --- 2. --at lines -------------------------------------------------------------------------


def _ranks(rng: random.Random, n: int, k: int) -> list[str]:
    return [str(r) for r in rng.sample(range(1, n + 1), k)]


AT_ARGS: dict[str, Callable[[random.Random, int], list[str]]] = {
    "crash": lambda r, n: _ranks(r, n, 1),
    "recover": lambda r, n: _ranks(r, n, 1),
    "elect": lambda r, n: _ranks(r, n, 1),
    "timeout": lambda r, n: [r.choice(["3", "4", "5.5"])],
    "delay": lambda r, n: [r.choice(["0.5:1", "1", "0:2", "0.25"])],
    "hold": lambda r, n: _ranks(r, n, 2),
    "release": lambda r, n: _ranks(r, n, 2),
    "partition": lambda r, n: [",".join(sorted(_ranks(r, n, r.randint(1, n - 1)), key=int))],
    "heal": lambda r, n: [],
    "join": lambda r, n: [],
    "leave": lambda r, n: _ranks(r, n, 1),
}
CONTEXT = ("crash", "recover", "elect", "timeout", "delay", "hold", "release", "heal")  # safe beside anything, in _meaningful
NODE_COMMANDS = ("crash", "recover", "elect", "hold", "release", "leave")
AT_TIMES = [("negative", "-1", "bad"), ("huge", "1e13", "bad"), ("nan", "nan", "bad"), ("inf", "inf", "bad"),
            ("-inf", "-inf", "bad"), ("after-until", "40", "bad"), ("arabic", "١٠", "bad"),
            ("underscore", "1_0", "bad"), ("hex", "0x1", "bad"), ("missing", "", "bad"), ("1e-300", "1e-300", "either")]
AT_RANKS = ["0", "6", "two", "١", "1.5", "-1", "1e0", "９"]
AT_NAMES = [("unknown", "explode"), ("unknown", "kill"), ("unknown", "restart"), ("other-case", "CRASH"),
            ("other-case", "Heal")]
AT_VALUES = {"timeout": ["0", "1e308", "nan", "-1", "0.0001", "inf", "3_0"],
             "delay": ["2:1", "1:2:3", "x", "-1", "nan:1", "1e308", "0:inf"]}
AT_COUNTS = ["crash 1 2", "crash", "hold 1", "heal 1", "join 3", "partition", "timeout", "delay 1 2", "leave",
             "release 1 2 3", "elect 1 1"]


def _at_case(b: Builder, name: str, lines: list[str], expect: str, *, nodes: int = 5, algorithm: str | None = None,
             names: Any = "--at") -> None:
    algorithm = algorithm or b.rng.choice(QUICK)
    argv = ["--headless", "--nodes", str(nodes), "--until", "30", "--algorithm", algorithm]
    for line in lines:
        argv += ["--at", line]
    b.add(name, "headless", argv, expect, names=names)


def _with_context(b: Builder, bad: str) -> list[str]:
    """The bad line among 0 to 2 valid ones, at a random place."""
    lines = _meaningful(b.rng, CONTEXT, [str(b.rng.randint(1, 25)) for _ in range(b.rng.randint(0, 2))])
    lines.insert(b.rng.randint(0, len(lines)), bad)
    return lines


def _meaningful(r: random.Random, pool: tuple[str, ...], times: list[str], n: int = 5) -> list[str]:
    """Command lines at `times` (in time order), drawn from `pool`, that each mean
    something when they run: a crash of an up node, a recovery of a down one, an election
    at an up one (the parser refuses the others, which would do nothing)."""
    down: set[int] = set()
    lines = []
    for at in sorted(times, key=float):
        command = r.choice(pool)
        up = [k for k in range(1, n + 1) if k not in down]
        if command == "recover" and not down:
            command = "crash"
        if command in ("crash", "elect") and not up:
            command = "recover"
        if command == "crash":
            args = [str(r.choice(up))]
            down.add(int(args[0]))
        elif command == "recover":
            args = [str(r.choice(sorted(down)))]
            down.discard(int(args[0]))
        elif command == "elect":
            args = [str(r.choice(up))]
        else:
            args = AT_ARGS[command](r, n)
        lines.append(" ".join([at, command, *args]))
    return lines


def gen_at(b: Builder) -> None:
    """2. --at lines: valid commands with one part mutated."""
    r = b.rng
    times = [t for t in AT_TIMES if t[0] in ("negative", "huge", "nan", "after-until")]
    times += r.sample([t for t in AT_TIMES if t not in times], 2)
    for label, text, verdict in times:  # the time
        command = r.choice(list(AT_ARGS))
        bad = " ".join(w for w in [text, command, *AT_ARGS[command](r, 5)] if w)
        _at_case(b, f"at-time:{label}", _with_context(b, bad), REFUSE if verdict == "bad" else EITHER)
    for label, name in AT_NAMES:  # the command's name: unknown, or a known one in other case
        words = AT_ARGS[r.choice(list(AT_ARGS)) if label == "unknown" else name.lower()](r, 5)
        bad = " ".join([str(r.randint(1, 25)), name, *words])
        _at_case(b, f"at-name:{label}-{name}", _with_context(b, bad), REFUSE if label == "unknown" else EITHER)
    for text in r.sample(AT_COUNTS, 3):  # the number of arguments
        _at_case(b, f"at-count:{text.replace(' ', '_')}", _with_context(b, f"{r.randint(1, 25)} {text}"), REFUSE)
    for rank in ["0", "6", "two", "١", r.choice(AT_RANKS[4:])]:  # a rank: 0, N+1, a word, a digit not ASCII
        command = r.choice(NODE_COMMANDS)
        args = AT_ARGS[command](r, 5)
        args[r.randrange(len(args))] = rank
        _at_case(b, f"at-rank:{command}-{rank}", _with_context(b, " ".join([str(r.randint(1, 25)), command, *args])),
                 REFUSE)
    for command, values in AT_VALUES.items():  # a value
        for value in r.sample(values, 2 if command == "timeout" else 1):
            bad = f"{r.randint(1, 25)} {command} {value}"
            _at_case(b, f"at-value:{command}-{value}", _with_context(b, bad), REFUSE)
    # lines that say nothing
    for label, text in [("empty", ""), ("comment", "# x"), ("blank", "   ")]:
        _at_case(b, f"at-nothing:{label}", [text], REFUSE)
    # membership: a node that has left, the last member, partitions of everyone or no one
    k = r.randint(1, 5)
    after = r.choice(["crash", "recover", "elect", "leave"])
    _at_case(b, f"at-left:{after}", [f"5 leave {k}", f"6 {after} {k}"], REFUSE)
    other = r.choice([x for x in range(1, 6) if x != k])
    _at_case(b, "at-left:hold", [f"5 leave {k}", f"6 hold {other} {k}"], REFUSE)
    _at_case(b, "at-left:last-member", ["5 leave 1", "6 leave 2"], REFUSE, nodes=2)
    _at_case(b, "at-left:only-member", ["5 leave 1"], REFUSE, nodes=1)
    _at_case(b, "at-partition:everyone", ["10 partition 1,2,3,4,5"], REFUSE)
    _at_case(b, "at-partition:no-one", ["10 partition ,"], REFUSE)
    _at_case(b, "at-partition:other-side-left", ["5 leave 5", "6 leave 4", "10 partition 1,2,3"], REFUSE)
    _at_case(b, "at-valid:stoller-join", ["10 join"], ACCEPT, algorithm="stoller")
    _at_case(b, "at-valid:stoller-leave", ["10 leave 2"], ACCEPT, algorithm="stoller")
    # valid lines run
    _at_case(b, "at-valid:partition-after-join", ["5 join", "10 partition 1,2,3,4,5", "20 heal"], ACCEPT)
    _at_case(b, "at-valid:join-then-crash-newcomer", ["5 join", "10 crash 6"], ACCEPT)
    _at_case(b, "at-valid:leave-then-others", [f"5 leave {k}", f"6 crash {other}"], ACCEPT)
    for n in range(1):
        lines = _meaningful(r, CONTEXT + ("partition",), [f"{r.uniform(0, 29):.3f}" for _ in range(r.randint(1, 4))])
        _at_case(b, f"at-valid:random-{n}", lines, ACCEPT)


# --- 3. scenario files -----------------------------------------------------------------------

SET_POOL = {"nodes": ["5", "6"], "algorithm": list(QUICK), "timeout": ["4", "5"], "delay": ["0.5:1.5", "1"],
            "seed": ["3", "9"], "probe-interval": ["5", "0"], "settle": ["60"], "coordinator-timeout": ["9"],
            "ids": ["seq"]}
SCENARIO_BAD_SETS = ["set colour red", "set until 5", "set nodes", "set nodes 3 4", "set timeout nan", "set nodes 0",
                     "set algorithm bogus", "set delay 2:1", "set seed -1", "set ids guid", "set timeout 1e308",
                     "set nodes ١٢"]
SCENARIO_BAD_COMMANDS = ["5 explode 1", "5 crash 9", "5 crash", "-1 crash 1", "nan crash 1", "5 timeout 0",
                         "crash 1", "5 hold 2 2", "5 partition 1,2,3,4,5,6,7,8,9", "5 delay 3:1"]


def _without(lines: list[str], line: str) -> list[str]:
    """`lines` without other `set` lines for the setting `line` sets (so that it is the one problem)."""
    words = line.split()
    if len(words) < 2 or words[0] != "set":
        return lines
    return [x for x in lines if x.split()[:2] != words[:2]]


def _valid_scenario(r: random.Random) -> list[str]:
    lines = ["# generated by the campaign", ""]
    for name in r.sample(list(SET_POOL), r.randint(1, 3)):
        lines.append(f"set {name} {r.choice(SET_POOL[name])}")
    for line in _meaningful(r, CONTEXT + ("partition",), [str(r.randint(1, 15)) for _ in range(r.randint(3, 6))]):
        if r.random() < 0.2:
            lines.append(r.choice(["", "# a comment", "   "]))
        lines.append(line + (" # why" if r.random() < 0.2 else ""))
    return lines


def gen_scenarios(b: Builder) -> None:
    """3. Scenario files, with --headless."""
    r = b.rng

    def case(label: str, lines: list[str] | bytes, expect: str, names: Any = None, name: str = "s.scenario",
             extra: list[str] = (), forbid: str | None = None) -> None:
        data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
        b.add(f"scenario:{label}", "headless", ["--headless", "--scenario", name, "--until", "20", *extra], expect,
              names=names, files={name: data}, forbid=forbid)

    for n in range(2):
        case(f"valid-{n}", _valid_scenario(r), ACCEPT, name=r.choice(["s.scenario", "my run.scenario", "ü.scenario"]))
    bad_lines = ["set colour red", *r.sample(SCENARIO_BAD_SETS[1:], 3), *r.sample(SCENARIO_BAD_COMMANDS, 3),
                 "duplicate"]
    for bad in bad_lines:
        lines = _valid_scenario(r)
        label = bad
        if bad == "duplicate":
            sets = [line for line in lines if line.startswith("set ")]
            setting = sets[0].split()[1]
            bad = f"set {setting} {r.choice([v for v in SET_POOL[setting]] + ['7'])}"
            at = r.randint(lines.index(sets[0]) + 1, len(lines))
        else:
            lines = _without(lines, bad)
            at = r.randint(0, len(lines))
        lines.insert(at, bad)
        name = r.choice(["s.scenario", "other.txt"])
        case(f"line-{label.replace(' ', '_')[:24]}", lines, REFUSE, names=f"{name} line {at + 1}", name=name)
    # a value on the command line is never blamed on the scenario
    lines = _without(_valid_scenario(r), "set timeout 3") + ["set timeout 3"]
    case("command-line-wins", lines, REFUSE, names="--timeout", extra=["--timeout", "nan"], forbid="s.scenario line")
    lines = ["set nodes 5", "5 crash 5"]
    case("command-line-nodes", lines, REFUSE, names="s.scenario line 2", extra=["--nodes", "3"])
    # whole files
    text = "\n".join(_valid_scenario(r)) + "\n"
    case("bom-crlf", b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(), ACCEPT)
    case("empty-file", b"", ACCEPT)
    case("comments-only", b"# nothing to do\n\n# really\n", ACCEPT)
    nul = text.splitlines()
    nul[-1] = nul[-1] + "\x00"
    case("nul-byte", ("\n".join(nul) + "\n").encode(), REFUSE, names="s.scenario")
    case("invalid-utf8", text.encode() + b"5 crash \xc3\x28\n", REFUSE, names="s.scenario")
    case("over-1MB", b"# padding\n" * 100_001, REFUSE, names="s.scenario")
    for label, argv_name, files in [("directory", "dir.scenario", {"dir.scenario": DIRECTORY}),
                                    ("fifo", "pipe.scenario", {"pipe.scenario": FIFO}),
                                    ("dev-zero", "/dev/zero", {}),
                                    ("missing", "nowhere.scenario", {})]:
        b.add(f"scenario:{label}", "headless", ["--headless", "--scenario", argv_name, "--until", "20"], REFUSE,
              names=argv_name, files=files)
    b.add("scenario:empty-name", "headless", ["--headless", "--scenario", "", "--until", "20"], REFUSE,
          names=("--scenario", "scenario file name"))
    b.add("scenario:as-transcript", "headless",
          ["--headless", "--scenario", "s.scenario", "--until", "20", "--transcript", "s.scenario"], REFUSE,
          names="s.scenario", files={"s.scenario": b"5 crash 1\n"})
    b.add("scenario:live-bad-line", "live", ["--scenario", "s.scenario"], REFUSE, names="s.scenario line 2",
          files={"s.scenario": b"set nodes 4\n5 crash 5\n"})


# --- 4. transcripts: the setup step and the mutations --------------------------------------

BASES = {  # what the checkout under test records once per campaign run
    "classic": ["--headless", "--nodes", "5", "--until", "40", "--at", "5 timeout 3", "--at", "6 delay 0.5:1",
                "--at", "10 crash 5", "--at", "15 partition 1,2", "--at", "22 heal", "--at", "24 recover 5",
                "--at", "26 join", "--at", "28 hold 1 3", "--at", "30 release 1 3", "--at", "32 leave 2",
                "--at", "34 elect 1"],
    "uuid": ["--headless", "--nodes", "5", "--ids", "uuid", "--until", "40", "--at", "10 crash 5",
             "--at", "20 recover 5", "--at", "25 join", "--at", "30 elect 1"],
    "epoch-bully": ["--headless", "--algorithm", "epoch-bully", "--nodes", "5", "--until", "40", "--at", "10 crash 5",
                    "--at", "15 partition 1,2", "--at", "22 heal", "--at", "26 join", "--at", "30 leave 1"],
    "ring": ["--headless", "--algorithm", "ring", "--nodes", "5", "--until", "40", "--at", "10 crash 5",
             "--at", "20 recover 5", "--at", "26 hold 1 2", "--at", "28 release 1 2"],
    "garcia-molina": ["--headless", "--algorithm", "garcia-molina", "--nodes", "5", "--until", "40",
                      "--at", "10 crash 5", "--at", "20 recover 5", "--at", "30 timeout 5", "--at", "31 delay 1"],
    # ~300k events, for signals during verify and export
    "big": ["--headless", "--algorithm", "stoller", "--nodes", "20", "--until", "750"],
    # a mutex beside the election: cs lines, a workload in the header, a violation of mutual exclusion
    "central": ["--headless", "--mutex", "central", "--nodes", "5", "--until", "40", "--cs-hold", "20:30",
                "--at", "8 want 2", "--at", "12 crash 5", "--at", "25 want 3"],
    # a moment far out: an SVG drawn to scale once ran out of memory on it (--probe-interval 0:
    # with probes, reaching t = 1e11 would take days)
    "far": ["--headless", "--nodes", "5", "--probe-interval", "0", "--at", "100000000000 elect 1", "--until", "1e11"],
}
SMALL_BASES = ("classic", "uuid", "epoch-bully", "ring", "garcia-molina", "central")

EVENT_FIELDS = {  # JSON type of each event field: int, num, str, nint (int or null), nnum, list, obj
    "seq": "int", "t": "num", "kind": "str", "src": "int", "dst": "int", "id": "int", "msg": "obj", "arrives": "num",
    "reason": "str", "node": "int", "status": "str", "leader": "nint", "role": "str", "epoch": "int", "name": "str",
    "fires": "num", "command": "str", "args": "list", "source": "str", "property": "str", "phase": "str",
    "nodes": "list", "leaders": "list", "expected": "nint", "since": "nnum", "duration": "nnum", "state": "str",
}
HEADER_FIELDS = {"format": "str", "version": "int", "algorithm": "str", "nodes": "idlist", "seed": "int",
                 "config": "obj"}
OPTIONAL_FIELDS = {"epoch", "expected", "since", "duration"}  # they have defaults (older versions)
WRONG: dict[str, Callable[[Any], list[Any]]] = {  # values of a wrong JSON type, per field type
    "int": lambda v: [[v], {"v": v}, str(v), True, None, v + 0.5],
    "num": lambda v: [[v], {"v": v}, str(v), True, None],
    "str": lambda v: [[v], {"v": v}, 1, True, None],
    "nint": lambda v: [[v], str(v), True, 1.5, {"v": v}],
    "nnum": lambda v: [[v], str(v), True, {"v": v}],
    "list": lambda v: [str(v), {"v": v}, 5, [[x] for x in v] or [[1]], [True], None],
    "idlist": lambda v: ["1,2,3", {"v": 1}, 5, [[x] for x in v], [float(x) for x in v], [str(x) for x in v], None, []],
    "obj": lambda v: [[v], "x", 1, None, True],
}


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


class Lines:
    """A transcript's lines, parsed, for mutating one of them."""

    def __init__(self, data: bytes):
        self.lines = data.split(b"\n")
        if self.lines and self.lines[-1] == b"":
            self.lines.pop()
        self.objs = [json.loads(line) for line in self.lines]

    def pick(self, rng: random.Random, test: Callable[[dict], bool] = lambda o: True, start: int = 1) -> int | None:
        """The index of a random event line that passes `test`."""
        found = [i for i in range(start, len(self.objs)) if test(self.objs[i])]
        return rng.choice(found) if found else None

    def join(self, lines: list[bytes]) -> bytes:
        return b"".join(line + b"\n" for line in lines)

    def replaced(self, i: int, obj: Any) -> tuple[bytes, int]:
        lines = list(self.lines)
        lines[i] = obj if isinstance(obj, bytes) else _dump(obj)
        return self.join(lines), i + 1


Mutation = Callable[..., "tuple[bytes, int | None] | None"]
MUTATIONS: dict[str, Mutation] = {}
WELL_FORMED = {"fires_changed", "status_changed", "arrives_changed"}  # verify: different; export: fine
HEADER_ONLY = {"header_only"}
FIXED_BASE = {"nodes_5000": "classic", "nodes_155000": "classic"}  # ids 1..N: the events stay the header's


def mutation(fn: Mutation) -> Mutation:
    MUTATIONS[fn.__name__.removeprefix("m_")] = fn
    return fn


def _has(name: str, kind: str | None = None) -> Callable[[dict], bool]:
    return lambda o: name in o and (kind is None or o.get("kind") == kind)


@mutation
def m_wrong_type(t: Lines, r: random.Random, name: str, variant: int | None = None, kind: str | None = None):
    i = t.pick(r, lambda o: name in o and (kind is None or o.get("kind") == kind)
               and (EVENT_FIELDS[name] not in ("int", "list") or o[name] is not None))
    if i is None:
        return None
    obj = dict(t.objs[i])
    values = WRONG[EVENT_FIELDS[name]](obj[name])
    obj[name] = values[variant] if variant is not None else r.choice(values)
    return t.replaced(i, obj)


@mutation
def m_header_wrong_type(t: Lines, r: random.Random, name: str, variant: int | None = None):
    obj = dict(t.objs[0])
    values = WRONG[HEADER_FIELDS[name]](obj[name])
    obj[name] = values[variant] if variant is not None else r.choice(values)
    return t.replaced(0, obj)


@mutation
def m_args_float(t: Lines, r: random.Random):
    """"args": [4.0]: a float where a node id goes."""
    i = t.pick(r, lambda o: o.get("kind") == "command" and o.get("command") in NODE_COMMANDS)
    if i is None:
        return None
    obj = dict(t.objs[i], args=[float(a) for a in t.objs[i]["args"]])
    return t.replaced(i, obj)


@mutation
def m_delete(t: Lines, r: random.Random, name: str):
    i = t.pick(r, _has(name))
    if i is None:
        return None
    obj = dict(t.objs[i])
    del obj[name]
    return t.replaced(i, obj)


@mutation
def m_header_delete(t: Lines, r: random.Random, name: str):
    obj = dict(t.objs[0])
    del obj[name]
    return t.replaced(0, obj)


@mutation
def m_delete_msg_type(t: Lines, r: random.Random):
    i = t.pick(r, _has("msg"))
    obj = dict(t.objs[i], msg={k: v for k, v in t.objs[i]["msg"].items() if k != "type"})
    return t.replaced(i, obj)


EXTRA_VALUES = {"one": 1, "text": "x", "object": {}, "deep": _nested(100)}


@mutation
def m_extra(t: Lines, r: random.Random, where: str, value: str):
    """An unknown field: in the header, an event, or a message."""
    if where == "header":
        i = 0
    elif where == "msg":
        i = t.pick(r, _has("msg"))
    else:
        i = t.pick(r)
    obj = dict(t.objs[i])
    if where == "msg":
        obj["msg"] = dict(obj["msg"], zzz=EXTRA_VALUES[value])
    else:
        obj["zzz"] = EXTRA_VALUES[value]
    return t.replaced(i, obj)


def _event_change(pick: Callable[[dict], bool] | None, change: Callable[[dict, Lines, int], Any], start: int = 1):
    def mutate(t: Lines, r: random.Random):
        i = t.pick(r, pick or (lambda o: True), start)
        if i is None:
            return None
        obj = dict(t.objs[i])
        replacement = change(obj, t, i)
        return t.replaced(i, replacement if replacement is not None else obj)
    return mutate


def _set(**values: Any) -> Callable[[dict, Lines, int], None]:
    return lambda obj, t, i: obj.update(values)


MUTATIONS.update({
    "t_huge": _event_change(None, _set(t=1e300)),
    "t_negative": _event_change(None, _set(t=-1.0)),
    "seq_skip": _event_change(None, lambda o, t, i: o.update(seq=o["seq"] + 1)),
    "seq_repeat": _event_change(None, lambda o, t, i: o.update(seq=o["seq"] - 1), start=2),
    "unknown_kind": _event_change(None, _set(kind="explode")),
    "unknown_command": _event_change(lambda o: o.get("kind") == "command", _set(command="explode")),
    "violation_property": _event_change(lambda o: o.get("kind") == "violation", _set(property="sle9")),
    "violation_phase": _event_change(lambda o: o.get("kind") == "violation", _set(phase="middle")),
    "sle1_short_leaders": _event_change(
        lambda o: o.get("kind") == "violation" and o.get("property") == "sle1" and len(o.get("nodes", ())) >= 2,
        lambda o, t, i: o.update(leaders=o["leaders"][:-1])),
    "unknown_role": _event_change(lambda o: o.get("kind") == "state", _set(role="boss")),
    "stranger_node": _event_change(lambda o: any(isinstance(o.get(k), int) for k in ("src", "dst", "node", "leader")),
                                   lambda o, t, i: o.update({next(k for k in ("src", "dst", "node", "leader")
                                                                  if isinstance(o.get(k), int)): 99})),
    "args_stranger": _event_change(lambda o: o.get("kind") == "command" and o.get("command") in NODE_COMMANDS,
                                   lambda o, t, i: o.update(args=[99] * len(o["args"]))),
    "args_count": _event_change(
        lambda o: o.get("kind") == "command" and o.get("command") != "partition",
        lambda o, t, i: o.update(args=(o["args"] + o["args"][-1:]) if o["args"] else [1])),
    "nan_literal": _event_change(None, _set(t=float("nan"))),
    "infinity_literal": _event_change(lambda o: "arrives" in o, _set(arrives=float("inf"))),
    "two_objects": _event_change(None, lambda o, t, i: _dump(o) + _dump(o)),
    "long_line": _event_change(None, _set(zzz="x" * 1_000_001)),
    "deep_nesting": _event_change(None, lambda o, t, i: _dump(o)[:-1] + b',"zzz":' + b"[" * 100_000 + b"]" * 100_000
                                  + b"}"),
    "arrives_changed": _event_change(lambda o: o.get("kind") == "send",
                                     lambda o, t, i: o.update(arrives=o["arrives"] + 0.125)),
    "fires_changed": _event_change(lambda o: o.get("kind") == "timer_set",
                                   lambda o, t, i: o.update(fires=o["fires"] + 0.125)),
})


@mutation
def m_time_back(t: Lines, r: random.Random):
    """A time earlier than the line before's (which is at least 1 s)."""
    found = [i for i in range(2, len(t.objs)) if t.objs[i - 1]["t"] >= 1]
    i = r.choice(found)
    return t.replaced(i, dict(t.objs[i], t=round(t.objs[i - 1]["t"] - 0.5, 6)))


def _states(t: Lines) -> list[tuple[str, str]]:
    """Each (status, role) the transcript's state lines have."""
    return sorted({(o["status"], o["role"]) for o in t.objs[1:] if o.get("kind") == "state"})


@mutation
def m_status_changed(t: Lines, r: random.Random):
    """Another status the run had, with its role: well formed, and not what happened."""
    i = t.pick(r, lambda o: o.get("kind") == "state")
    others = [] if i is None else [s for s in _states(t) if s != (t.objs[i]["status"], t.objs[i]["role"])]
    if not others:
        return None
    status, role = r.choice(others)
    return t.replaced(i, dict(t.objs[i], status=status, role=role))


@mutation
def m_role_contradicts_status(t: Lines, r: random.Random):
    """A role the line's status does not have (a known role, of another status)."""
    i = t.pick(r, lambda o: o.get("kind") == "state")
    if i is None:
        return None
    name = t.objs[i]["status"]
    # (not one a status of that name has: "down" is Garcia-Molina's waiting status and the runtime's)
    taken = {role for status, role in _states(t) if status == name} | ({"down"} if name == "down" else set())
    roles = sorted({role for _, role in _states(t)} - taken)
    return t.replaced(i, dict(t.objs[i], role=r.choice(roles))) if roles else None


def _header_change(change: Callable[[dict], None]) -> Mutation:
    def mutate(t: Lines, r: random.Random):
        obj = json.loads(t.lines[0])
        change(obj)
        return t.replaced(0, obj)
    return mutate


MUTATIONS.update({
    "seed_negative": _header_change(lambda h: h.update(seed=-1)),
    "nodes_5000": _header_change(lambda h: h.update(nodes=list(range(1, 5001)))),
    "nodes_155000": _header_change(lambda h: h.update(nodes=list(range(1, 155_001)))),
    "config_timeout_huge": _header_change(lambda h: h["config"].update(timeout=1e308)),
    "config_delay_inverted": _header_change(lambda h: h["config"].update(delay_min=2.0, delay_max=1.0)),
    "parent_string": _header_change(lambda h: h.update(parent="gone.jsonl")),
    "version_float": _header_change(lambda h: h.update(version=3.0)),
    "version_unknown": _header_change(lambda h: h.update(version=99)),
})


@mutation
def m_cut(t: Lines, r: random.Random):
    """The file cut in the middle of a line (that line is then its last)."""
    i = t.pick(r, lambda o: True)
    line = t.lines[i]
    return t.join(t.lines[:i]) + line[:r.randint(1, len(line) - 1)], i + 1


@mutation
def m_blank_line(t: Lines, r: random.Random):
    i = t.pick(r, lambda o: True)
    return t.join(t.lines[:i] + [b""] + t.lines[i:]), i + 1


@mutation
def m_empty(t: Lines, r: random.Random):
    return b"", None


@mutation
def m_header_only(t: Lines, r: random.Random):
    return t.join(t.lines[:1]), None


@mutation
def m_garbage(t: Lines, r: random.Random):
    return b"\x00\xff\xfe" + bytes(r.randrange(256) for _ in range(3000)), 1


# (mutation, its parameters): each is made into a verify, replay or export case (one or two)
TRANSCRIPT_SPECS: list[tuple[str, tuple]] = [
    ("wrong_type", ("kind", 0, "send")),  # "kind": ["send"]
    ("header_wrong_type", ("algorithm", 0)),  # "algorithm": ["classic"]
    ("wrong_type", ("node", 0)),  # "node": [1]
    ("args_float", ()),  # "args": [4.0]
    ("delete_msg_type", ()),
    ("extra", ("event", "one")), ("extra", ("event", "deep")), ("extra", ("header", "text")), ("extra", ("msg", "one")),
    ("t_huge", ()), ("t_negative", ()), ("seq_skip", ()), ("seq_repeat", ()), ("time_back", ()),
    ("seed_negative", ()), ("nodes_5000", ()), ("nodes_155000", ()), ("config_timeout_huge", ()),
    ("config_delay_inverted", ()), ("version_float", ()), ("version_unknown", ()),
    ("unknown_kind", ()), ("unknown_command", ()), ("args_count", ()), ("violation_property", ()),
    ("violation_phase", ()), ("sle1_short_leaders", ()), ("unknown_role", ()), ("role_contradicts_status", ()), ("stranger_node", ()),
    ("args_stranger", ()), ("parent_string", ()), ("nan_literal", ()), ("infinity_literal", ()),
    ("cut", ()), ("cut", ()), ("empty", ()), ("header_only", ()), ("garbage", ()), ("blank_line", ()),
    ("two_objects", ()), ("long_line", ()), ("deep_nesting", ()),
    ("fires_changed", ()), ("status_changed", ()), ("arrives_changed", ()),
]
REQUIRED = {  # fields every line of the kind must have (deleting one is malformed)
    "send": ("src", "dst", "id", "msg", "arrives"), "deliver": ("id", "src", "dst"),
    "state": ("node", "status", "leader", "role"), "timer_set": ("node", "name", "fires"),
    "command": ("command", "args", "source"), "violation": ("property", "phase", "nodes"), "cs": ("node", "state"),
}
EXPORT_EXTENSIONS = {"svg": "svg", "mermaid": "mmd", "shiviz": "log"}


def _transcript_case(b: Builder, op: str, params: tuple, group: str) -> None:
    base = FIXED_BASE.get(op) or b.rng.choices(SMALL_BASES, weights=(4, 2, 2, 2, 2, 2))[0]
    files = {"run.jsonl": Derived(base, op, params, b.seed())}
    label = f"transcript-{op}{'(' + ','.join(map(str, params)) + ')' if params else ''}:{base}"
    line = "run.jsonl" if op == "empty" else "line {line}"
    if group == "verify":
        if op in WELL_FORMED:
            b.add(label, group, ["verify", "run.jsonl"], DIFFERENT, names="line {line}", files=files)
        elif op in HEADER_ONLY:
            b.add(label, group, ["verify", "run.jsonl"], EITHER, files=files)
        else:
            b.add(label, group, ["verify", "run.jsonl"], REFUSE, names=line, files=files)
    elif group == "replay":
        if op in WELL_FORMED:
            b.add(label, group, ["replay", "run.jsonl"], REFUSE, names=TERMINAL, files=files)
        else:  # a bad line past replay's first block may be found after the terminal is missed
            b.add(label, group, ["replay", "run.jsonl"], REFUSE, names=None if op in HEADER_ONLY else line + "?replay",
                  files=files)
    else:
        fmt = b.rng.choice(list(EXPORT_EXTENSIONS))
        argv = ["export", "run.jsonl", "--format", fmt]
        outputs = {}
        if b.rng.random() < 0.5:
            out = f"out.{EXPORT_EXTENSIONS[fmt]}"
            argv += ["-o", out]
            outputs = {out: "svg" if fmt == "svg" else "text"}
        if op in WELL_FORMED:
            b.add(label, group, argv, ACCEPT, files=files, outputs=outputs)
        elif op in HEADER_ONLY:
            b.add(label, group, argv, EITHER, files=files, outputs=outputs)
        else:
            b.add(label, group, argv, REFUSE, names=line, files=files, outputs=outputs)


def gen_transcripts(b: Builder) -> None:
    """4. verify, replay and export of mutated transcripts."""
    r = b.rng
    specs = list(TRANSCRIPT_SPECS)
    for name in r.sample(sorted(EVENT_FIELDS), 4):  # more wrong types: random fields, values drawn when made
        specs.append(("wrong_type", (name,)))
    for name in r.sample(sorted(HEADER_FIELDS), 2):
        specs.append(("header_wrong_type", (name,)))
    for kind in r.sample(sorted(REQUIRED), 2):
        specs.append(("delete", (r.choice(REQUIRED[kind]),)))
    specs.append(("header_delete", (r.choice(sorted(HEADER_FIELDS)),)))
    groups = ["verify", "export", "replay"]
    for op, params in specs:
        if op in WELL_FORMED:  # verify must say different; one other reader must take it
            chosen = ["verify", r.choice(groups[1:])]
        else:
            chosen = r.sample(groups, 2) if r.random() < 0.1 else r.choices(groups, weights=(4, 4, 2))
        for group in chosen:
            _transcript_case(b, op, params, group)
    # the setup transcripts themselves
    for key in SMALL_BASES:
        b.add(f"intact:verify-{key}", "verify", ["verify", "run.jsonl"], ACCEPT, files={"run.jsonl": Base(key)})
    b.add("intact:replay", "replay", ["replay", "run.jsonl"], REFUSE, names=TERMINAL,
          files={"run.jsonl": Base("classic")})
    for fmt in r.sample(list(EXPORT_EXTENSIONS), 2):
        key = r.choice(SMALL_BASES)
        b.add(f"intact:export-{fmt}-{key}", "export", ["export", "run.jsonl", "--format", fmt], ACCEPT,
              files={"run.jsonl": Base(key)})
    # the subcommands' own arguments
    for group in ("verify", "replay"):
        b.add(f"{group}-args:none", group, [group], REFUSE)
        b.add(f"{group}-args:two-files", group, [group, "run.jsonl", "run.jsonl"], REFUSE,
              files={"run.jsonl": Base("classic")})
        b.add(f"{group}-args:unknown-option", group, [group, "-x", "run.jsonl"], REFUSE, names="-x",
              files={"run.jsonl": Base("classic")})
        unreadable = [("missing", "nowhere.jsonl", {}), ("directory", "dir.jsonl", {"dir.jsonl": DIRECTORY}),
                      ("fifo", "pipe.jsonl", {"pipe.jsonl": FIFO}), ("dev-zero", "/dev/zero", {})]
        for label, argv_name, files in r.sample(unreadable, 2):
            b.add(f"{group}-args:{label}", group, [group, argv_name], REFUSE, names=argv_name, files=files)


def gen_export_options(b: Builder) -> None:
    """4. export's own options, on an intact transcript."""
    r = b.rng
    good = {"run.jsonl": Base("classic")}
    precious = b"<svg>the user's own drawing</svg>\n"

    def case(label: str, extra: list[str], expect: str, names: Any = None, fmt: str | None = "svg", **kw: Any) -> None:
        kw.setdefault("files", dict(good))
        formats = [] if fmt is None else ["--format", fmt]
        b.add(f"export-option:{label}", "export", ["export", "run.jsonl", *formats, *extra], expect, names=names, **kw)

    for value, expect in [("png", REFUSE), (r.choice(["SVG", "Mermaid", "SHIVIZ"]), EITHER), ("", REFUSE)]:
        case(f"--format={value}", [], expect, names="--format", fmt=value)
    case("no-format", [], REFUSE, names="--format", fmt=None)
    case("-o-exists", ["-o", "out.svg"], REFUSE, names="out.svg", files={**good, "out.svg": precious})
    case("-o-exists+overwrite", ["-o", "out.svg", "--overwrite"], ACCEPT, files={**good, "out.svg": precious},
         may_change=("out.svg",), outputs={"out.svg": "svg"})
    case("-o-directory", ["-o", "out.d"], REFUSE, names="out.d", files={**good, "out.d": DIRECTORY})
    case("-o-dev-full", ["-o", "/dev/full"], WRITE_ERROR, names="/dev/full", also=(REFUSE,))
    case("-o-empty", ["-o", ""], REFUSE, names=("-o", "--output", "file name"))
    case("-o-missing-folder", ["-o", "missing-dir/out.svg"], REFUSE, names="missing-dir")
    case("-o-the-input", ["-o", "run.jsonl", "--overwrite"], EITHER, fmt="mermaid", may_change=("run.jsonl",),
         outputs={"run.jsonl": "text"})
    others = [("--from", "abc"), ("--to", "inf"), ("--from", ""), ("--to", "-5"), ("--from", "1e308")]
    for flag, value in [("--from", "-1"), ("--from", "nan"), ("--to", "1e300"), r.choice(others)]:
        case(f"{flag}={value}", [flag, value], REFUSE, names=flag,
             forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    case("--to-before-from", ["--from", "10", "--to", "5"], REFUSE, names=("--to", "--from"))
    case("--from-to-window", ["--from", "10", "--to", "20"], ACCEPT, fmt="mermaid")
    # Windows that cut messages in flight (told when they arrive, after the view), one
    # that opens after the transcript's last event, one of its first instant alone.
    for label, window in [("cut-in-flight", ["--from", "9", "--to", "10.5"]), ("after-the-end", ["--from", "1000"]),
                          ("first-instant", ["--to", "0"])]:
        case(f"window-{label}", [*window, "-o", "w.svg"], ACCEPT, outputs={"w.svg": "svg"})
    for value in ["0", "99", "1,,2", "", "a", "١"]:
        case(f"--nodes={value}", ["--nodes", value], REFUSE, names="--nodes", fmt=r.choice(list(EXPORT_EXTENSIONS)))
    case("--nodes=1,2", ["--nodes", "1,2"], ACCEPT, fmt="shiviz")
    for value in r.sample(["Bogus", "election,nothing", "", "Election;Answer"], 1):
        case(f"--types={value}", ["--types", value], REFUSE, names="--types")
    case("--types-any-case", ["--types", "election,COORDINATOR"], ACCEPT, fmt="mermaid")
    case("unknown-option", ["--colour", "red"], REFUSE, names="--colour")
    b.add("export-option:no-file", "export", ["export", "--format", "svg"], REFUSE)
    b.add("export-option:two-files", "export", ["export", "run.jsonl", "run.jsonl", "--format", "svg"], REFUSE,
          files=dict(good))
    unreadable = [("missing", "nowhere.jsonl", {}), ("fifo", "pipe.jsonl", {"pipe.jsonl": FIFO}),
                  ("dev-zero", "/dev/zero", {})]
    for label, argv_name, files in r.sample(unreadable, 2):
        b.add(f"export-option:file-{label}", "export", ["export", argv_name, "--format", "mermaid"], REFUSE,
              names=argv_name, files=files)
    b.add("export-option:svg-far-moment", "export", ["export", "far.jsonl", "--format", "svg", "-o", "far.svg"], ACCEPT,
          files={"far.jsonl": Base("far")}, outputs={"far.svg": "svg"}, max_bytes=50_000_000)


# --- 5. --compare ------------------------------------------------------------------------------


def gen_compare(b: Builder) -> None:
    r = b.rng
    small = ["--headless", "--compare", "--nodes", "4", "--algorithm"]
    b.add("compare-valid:markdown", "compare", [*small, r.choice(QUICK), "--format", "markdown"], ACCEPT)
    b.add("compare-valid:json", "compare", [*small, r.choice(QUICK), "--format", "json"], ACCEPT)
    b.add("compare-valid:stoller", "compare", [*small, "stoller", "--delay", "1", "--seed", "2"], ACCEPT)
    for value in r.sample(["0", "abc", "1001", "3_0", "-4", "", "nan"], 2):
        b.add(f"compare-nodes:{value}", "compare", ["--headless", "--compare", "--algorithm", "classic",
                                                    *b.spelled("--nodes", value)],
              REFUSE, names="--nodes", forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    b.add("compare-algorithm:bogus", "compare", ["--headless", "--compare", "--nodes", "4", "--algorithm", "bogus"],
          REFUSE, names="--algorithm")
    b.add("compare-algorithm:RING", "compare", ["--headless", "--compare", "--nodes", "4", "--algorithm", "RING"],
          EITHER, names="--algorithm")
    for value, expect in [(r.choice(["xml", ""]), REFUSE), ("JSON", EITHER)]:
        b.add(f"compare-format:{value}", "compare", [*small, "classic", "--format", value], expect, names="--format")
    unused = [("--at", "5 crash 1"), ("--scenario", "s.scenario"), ("--transcript", "t.jsonl"), ("--until", "5"),
              ("--settle", "30"), ("--ids", "uuid"), ("--speed", "2"), ("--overwrite", None)]
    for flag, value in [unused[0], *r.sample(unused[1:], 2)]:
        b.add(f"compare-unused:{flag}", "compare", [*small, "classic", flag, *([value] if value else [])], REFUSE,
              names=flag, files={"s.scenario": b"5 crash 1\n"} if flag == "--scenario" else {})
    b.add("compare-without-headless", "compare", ["--compare", "--nodes", "4"], REFUSE,
          names=("--headless", "--compare"))


# --- 6, 7. unwritable stdout, file limits -----------------------------------------------------


def gen_write_errors(b: Builder) -> None:
    r = b.rng
    good = {"run.jsonl": Base("classic")}
    full = dict(stdout_full=True)
    b.add("dev-full:headless-summary", "headless", ["--headless", "--until", "5"], WRITE_ERROR, **full)
    b.add("dev-full:headless+transcript", "headless", ["--headless", "--until", "5", "--transcript", "t.jsonl"],
          WRITE_ERROR, outputs={"t.jsonl": "transcript"}, **full)
    b.add("dev-full:compare", "compare", ["--headless", "--compare", "--nodes", "4", "--algorithm", "classic"],
          WRITE_ERROR, **full)
    b.add("dev-full:export-stdout", "export", ["export", "run.jsonl", "--format", r.choice(list(EXPORT_EXTENSIONS))],
          WRITE_ERROR, files=dict(good), **full)
    b.add("dev-full:verify", "verify", ["verify", "run.jsonl"], WRITE_ERROR, files=dict(good), **full)
    b.add("dev-full:refusal-still-one-line", "headless", ["--headless", "--nodes", "x"], REFUSE, names="--nodes",
          **full)
    b.add("dev-full:export-to-file", "export", ["export", "run.jsonl", "--format", "svg", "-o", "out.svg"], ACCEPT,
          files=dict(good), outputs={"out.svg": "svg"}, **full)
    # file limits: like a full disk
    big_run = ["--headless", "--algorithm", "stoller", "--nodes", "10", "--until", "300", "--transcript", "t.jsonl"]
    for n in range(2):
        limit = r.randint(4096, 300_000)
        b.add(f"fsize:headless-transcript-{limit}", "headless", big_run, WRITE_ERROR, fsize=limit,
              outputs={"t.jsonl": "transcript"})
    for n in range(2):  # (the svg and shiviz exports of the classic transcript are over 40 kB)
        limit = r.randint(4096, 30_000)
        fmt = r.choice(["svg", "shiviz"])
        out = f"out.{EXPORT_EXTENSIONS[fmt]}"
        b.add(f"fsize:export-{fmt}-{limit}", "export", ["export", "run.jsonl", "--format", fmt, "-o", out], WRITE_ERROR,
              fsize=limit, files=dict(good), outputs={out: "svg" if fmt == "svg" else "text"})
    limit = r.randint(4096, 30_000)
    b.add(f"fsize:export-overwrite-keeps-old-{limit}", "export",
          ["export", "run.jsonl", "--format", "svg", "-o", "out.svg", "--overwrite"], WRITE_ERROR, fsize=limit,
          files={**good, "out.svg": b"<svg>the old drawing</svg>\n"}, outputs={"out.svg": "svg"})
    b.add("fsize:headless-no-transcript", "headless", ["--headless", "--until", "5"], ACCEPT, fsize=4096)
    b.add("fsize:verify", "verify", ["verify", "run.jsonl"], ACCEPT, fsize=4096, files=dict(good))
    # a standard output closed before the start (`>&-`): one line, as for /dev/full (hunt: gen_hunt)
    closed = dict(stdout_closed=True, names="standard output")
    b.add("closed-stdout:verify", "verify", ["verify", "run.jsonl"], WRITE_ERROR, files=dict(good), **closed)
    b.add("closed-stdout:headless-summary", "headless", ["--headless", "--until", "5"], WRITE_ERROR, **closed)
    b.add("closed-stdout:headless+transcript", "headless", ["--headless", "--until", "5", "--transcript", "t.jsonl"],
          WRITE_ERROR, outputs={"t.jsonl": "transcript"}, **closed)
    b.add("closed-stdout:export", "export", ["export", "run.jsonl", "--format", r.choice(list(EXPORT_EXTENSIONS))],
          WRITE_ERROR, files=dict(good), **closed)
    b.add("closed-stdout:refusal-still-one-line", "headless", ["--headless", "--nodes", "x"], REFUSE, names="--nodes",
          stdout_closed=True)


# --- 8. signals --------------------------------------------------------------------------------

SIGNAL_RUNS = [("stoller", 20, False), ("stoller", 12, False), ("classic", 10, False), ("ring", 30, False),
               ("epoch-bully", 40, False), ("garcia-molina", 16, False), ("classic", 8, True)]


def gen_signals(b: Builder) -> None:
    r = b.rng
    plain = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL] * 7
    r.shuffle(plain)
    doubled = len(plain)
    kinds = plain + [signal.SIGINT] * 5  # the last five get a second SIGINT 50 ms later
    verify_sample = set(r.sample(range(len(kinds)), 5))
    for n, signum in enumerate(kinds):
        if n == 0:
            algorithm, nodes, uuid = SIGNAL_RUNS[0]
        else:
            algorithm, nodes, uuid = r.choice(SIGNAL_RUNS)
        delay = round(2.0 * r.random() ** 1.5, 3)  # from the very start, more of them early: start-up is fragile
        again = 50 if n >= doubled else None
        transcript = n % 17 != 5  # a couple without a transcript
        argv = ["--headless", "--algorithm", algorithm, "--nodes", str(nodes), "--until", "1000000",
                *(["--ids", "uuid"] if uuid else []), *(["--transcript", "t.jsonl"] if transcript else [])]
        name = signal.Signals(signum).name + ("x2" if again else "")
        b.add(f"signal:{name}@{delay}s-{algorithm}-{nodes}{'-uuid' if uuid else ''}", "headless", argv, SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay, again),
              outputs={"t.jsonl": "transcript"} if transcript else {}, limit=BIG_LIMIT,
              verify_after=transcript and n in verify_sample)
    # SIGINT (and a SIGTERM) during export and verify of a big transcript, and during --compare
    big = {"big.jsonl": Base("big")}
    for fmt, signum in [("svg", signal.SIGINT), ("mermaid", signal.SIGINT), ("shiviz", signal.SIGINT),
                        (r.choice(list(EXPORT_EXTENSIONS)), signal.SIGTERM)]:
        delay = round(r.uniform(0.3, 1.5), 3)
        out = f"out.{EXPORT_EXTENSIONS[fmt]}"
        b.add(f"signal:{signal.Signals(signum).name}@{delay}s-export-{fmt}", "export",
              ["export", "big.jsonl", "--format", fmt, "-o", out], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay),
              files=dict(big), outputs={out: "svg" if fmt == "svg" else "text"}, limit=BIG_LIMIT)
    for signum in [signal.SIGINT, signal.SIGINT, signal.SIGHUP]:
        delay = round(r.uniform(0.3, 1.5), 3)
        b.add(f"signal:{signal.Signals(signum).name}@{delay}s-verify", "verify", ["verify", "big.jsonl"], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay),
              files=dict(big), limit=BIG_LIMIT)
    for _ in range(2):
        delay = round(r.uniform(0.3, 2.0), 3)
        b.add(f"signal:SIGINT@{delay}s-compare-64", "compare", ["--headless", "--compare", "--nodes", "64"], SIGNAL,
              names="interrupted", signal=SignalPlan(signal.SIGINT, delay), limit=BIG_LIMIT)
    # While the process starts: Python's own start-up, then bully-tui's imports (0 s is at once)
    starts = [("headless", ["--headless", "--nodes", "5", "--until", "1000", "--transcript", "t.jsonl"],
               {}, {"t.jsonl": "transcript"}),
              ("verify", ["verify", "run.jsonl"], {"run.jsonl": Base("classic")}, {}),
              ("export", ["export", "run.jsonl", "--format", "svg", "-o", "out.svg"], {"run.jsonl": Base("classic")},
               {"out.svg": "svg"}),
              ("hunt", ["hunt", "--algorithm", "classic", "--property", "sle1", "--budget", "30", "--workers", "1", "-o",
                        "f"], {}, {"f.scenario": "text", "f.jsonl": "transcript"})]
    for n, signum in enumerate([signal.SIGINT, signal.SIGTERM, signal.SIGHUP] * 4):
        group, argv, files, outputs = starts[n % len(starts)]
        delay = 0.0 if n < 3 else round(r.uniform(0, START_UP), 3)
        b.add(f"signal-start:{signal.Signals(signum).name}@{delay}s-{group}", group, argv, SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay),
              files=dict(files), outputs=dict(outputs), limit=BIG_LIMIT)


# --- 9. hunt ------------------------------------------------------------------------------------

HUNT_PROPERTIES = ("sle1", "split-brain", "sle2", "any")
HUNT_OPTIONS = {  # flag -> (verdict of a value, valid values)
    "--budget": (lambda v: "ok" if re.fullmatch(r"[1-9][0-9]{0,7}", v) else "either" if re.fullmatch(r"[0-9.]+[sm]", v)
                 else "bad", ("50", "120")),
    "--seed": (lambda v: whole_verdict(v, 0, 2**63 - 1), ("0", "7")),
    "--nodes": (lambda v: "ok" if re.fullmatch(r"[2-5](:[5-8])?", v) else "either" if re.fullmatch(r"[0-9:]+", v)
                else "bad", ("2:4", "3")),
    "--workers": (lambda v: whole_verdict(v, 1, 64), ("1", "2")),
}
EXHAUSTIVE_OPTIONS = {
    "--faults": (lambda v: whole_verdict(v, 0, 10), ("0", "1")),
    "--depth": (lambda v: whole_verdict(v, 1, 10_000), ("5", "12")),
    "--max-states": (lambda v: whole_verdict(v, 1, 100_000_000), ("300", "2000")),
    "--timeout": (lambda v: seconds_verdict(v, 0.001, 1e6, False), ("4", "3")),
    "--delay": (delay_verdict, ("1:2", "1")),
}


def _hunt_run(r: random.Random) -> list[str]:
    """A small random hunt that ends in a second or two, found or not."""
    algorithm = r.choice(ALGORITHMS)
    return ["hunt", "--algorithm", algorithm, "--property", r.choice(HUNT_PROPERTIES), "--nodes",
            r.choice(["2:3", "2:4", "3"]), "--budget", str(r.choice([20, 50, 100])), "--seed", str(r.randrange(100)),
            "--workers", r.choice(["1", "2"])]


def _exhaustive_run(r: random.Random) -> list[str]:
    return ["hunt", "--exhaustive", "--algorithm", r.choice(ALGORITHMS), "--nodes", r.choice(["2", "3"]),
            *r.choice([["--async"], []]), "--faults", r.choice(["0", "1"]), "--max-states", "1500"]


def gen_hunt(b: Builder) -> None:
    r = b.rng
    found = {"f.scenario": "text", "f.jsonl": "transcript"}
    steps = {"f.txt": "text", "f.jsonl": "transcript"}  # an exhaustive finding's
    for _ in range(6):
        b.add("hunt-valid:random", "hunt", [*_hunt_run(r), "-o", "f"], SEARCHED, outputs=dict(found))
    for _ in range(4):
        b.add("hunt-valid:exhaustive", "hunt", [*_exhaustive_run(r), "-o", "f"], SEARCHED, outputs=dict(steps))
    b.add("hunt-valid:mutex", "hunt", ["hunt", "--mutex", r.choice(["central", "token-ring", "lamport",
                                                                    "ricart-agrawala"]),
                                       "--property", r.choice(["mutex-safety", "mutex-liveness"]), "--budget", "30",
                                       "-o", "f"], SEARCHED, outputs=dict(found))
    for flag, (verdict, valid) in [*HUNT_OPTIONS.items(), *EXHAUSTIVE_OPTIONS.items()]:
        exhaustive = flag in EXHAUSTIVE_OPTIONS
        base = _exhaustive_run(r) if exhaustive else _hunt_run(r)
        base = [w for i, w in enumerate(base) if w != flag and (i == 0 or base[i - 1] != flag)]
        for label, value in [("valid", r.choice(valid)), *r.sample(HOSTILE, 2)]:
            expect = {"ok": SEARCHED, "bad": REFUSE, "either": EITHER}[verdict(value)]
            if expect == EITHER:
                b.add(f"hunt-option:{flag}={_short(value, 16)}", "hunt", [*base, *b.spelled(flag, value), "-o", "f"],
                      EITHER, names=flag, also=(FOUND,), outputs=dict(steps if exhaustive else found),
                      forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
                continue
            b.add(f"hunt-option:{flag}={_short(value, 16)}", "hunt", [*base, *b.spelled(flag, value), "-o", "f"], expect,
                  names=flag, outputs=dict(steps if exhaustive else found),
                  forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    for flag, value in [("--algorithm", r.choice(["bogus", "", LONG_GARBAGE])), ("--property", "safety"),
                        ("--mutex", "semaphore"), ("--commands", r.choice(["crash,explode", "partition", ""]))]:
        b.add(f"hunt-name:{flag}={_short(value, 16)}", "hunt", ["hunt", *b.spelled(flag, value), "--budget", "20"],
              REFUSE, names=flag)
    together = [(["--exhaustive", "--budget", "50"], "--budget"), (["--timeout", "3"], "--timeout"),
                (["--exhaustive", "--property", "sle2"], "sle2"), (["--exhaustive", "--mutex", "central"], "--mutex"),
                (["--exhaustive", "--nodes", "5"], "--nodes"), (["--property", "mutex-safety"], "--mutex"),
                (["--open", "--budget", "20"], TERMINAL), (["--exhaustive", "--open"], TERMINAL),
                (["--async"], "--async"), (["stray"], "stray")]
    for extra, names in r.sample(together, 6):
        b.add(f"hunt-together:{' '.join(extra)}", "hunt", ["hunt", *extra], REFUSE, names=names)
    precious = b"my own notes\n"
    b.add("hunt-output:exists", "hunt", [*_hunt_run(r), "-o", "f"], REFUSE, names="f.scenario",
          files={"f.scenario": precious})
    b.add("hunt-output:overwrite", "hunt", [*_hunt_run(r), "-o", "f", "--overwrite"], SEARCHED,
          files={"f.scenario": precious}, may_change=("f.scenario",), outputs=dict(found))
    b.add("hunt-output:directory", "hunt", [*_hunt_run(r), "-o", "d"], REFUSE, names="d.scenario",
          files={"d.scenario": DIRECTORY})
    b.add("hunt-output:no-folder", "hunt", [*_hunt_run(r), "-o", "missing/f"], REFUSE, names="missing/f")
    for value, files in [("", {}), (".jsonl", {}), (".scenario", {}), (".mine", {}), ("sub/.scenario", {"sub": DIRECTORY}),
                         ("d/", {"d": DIRECTORY})]:  # an empty or hidden name (`-o d/` is d/.scenario)
        b.add(f"hunt-output:hidden={_short(value, 16)}", "hunt", [*_hunt_run(r), "-o", value], REFUSE,
              names="-o", files=files)
    b.add("hunt-output:hidden-exhaustive=.txt", "hunt", [*_exhaustive_run(r), "-o", ".txt"], REFUSE, names="-o")
    split_brain = ["hunt", "--algorithm", "classic", "--property", "split-brain", "--break-synchrony", "--budget", "50",
                   "--workers", "1", "-o", "f"]  # (found at once: the files are written)
    b.add("hunt-dev-full:finding", "hunt", split_brain, WRITE_ERROR, stdout_full=True, outputs=dict(found))
    closed = dict(stdout_closed=True, names="standard output")
    b.add("closed-stdout:hunt-finding", "hunt", split_brain, WRITE_ERROR, outputs=dict(found), **closed)
    b.add("closed-stdout:hunt-nothing", "hunt", ["hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "20",
                                                 "--workers", "1", "-o", "f"], WRITE_ERROR, outputs=dict(found), **closed)
    b.add("closed-stdout:hunt-exhaustive", "hunt", ["hunt", "--exhaustive", "--async", "-o", "f"], WRITE_ERROR,
          outputs=dict(steps), **closed)
    limit = r.randint(2048, 8192)
    b.add(f"fsize:hunt-finding-{limit}", "hunt", split_brain, WRITE_ERROR, fsize=limit, outputs=dict(found))
    gen_hunt_signals(b, found, steps)


def _signal_name(signum: int, plan: SignalPlan) -> str:
    return f"{signal.Signals(signum).name}@{plan.delay}s{'-after-a-file' if plan.after_file else ''}"


def gen_hunt_signals(b: Builder, found: dict[str, str], steps: dict[str, str]) -> None:
    """Signals during a search, and while a finding's two files are written: the moment
    after the first file of the case appears in its folder (a temporary one, or a
    finding's first), when they used to be half there."""
    r = b.rng
    nothing = ["hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "30s", "-o", "f"]
    finding = ["hunt", "--algorithm", "classic", "--property", "sle1", "--budget", "30", "--workers", "1", "-o", "f"]
    swallowed = ["hunt", "--algorithm", "garcia-molina", "--property", "sle1", "--budget", "60s", "--nodes", "2:5",
                 "--workers", "1", "-o", "f"]  # (hypothesis's gc callback took a signal: it searched on for 60 s)
    exhaustive = ["hunt", "--exhaustive", "--async", "-o", "f"]
    runs = []
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        runs += [(signum, "search", nothing, found, SignalPlan(signum, round(r.uniform(0, 2.0), 3))),
                 (signum, "finding", finding, found, SignalPlan(signum, round(r.uniform(0, 2.0), 3))),
                 (signum, "gc", swallowed, found, SignalPlan(signum, round(r.uniform(0.8, 2.5), 3)))]
        for _ in range(2):
            runs.append((signum, "finding", finding, found, SignalPlan(signum, round(r.uniform(0, 0.09), 3),
                                                                          after_file=True)))
        runs.append((signum, "exhaustive", exhaustive, steps, SignalPlan(signum, round(r.uniform(0, 0.09), 3),
                                                                           after_file=True)))
    runs.append((signal.SIGINT, "finding-2-workers", [*finding[:-4], "--workers", "2", "-o", "f"], found,
                 SignalPlan(signal.SIGINT, round(r.uniform(0, 2.0), 3))))
    for what, argv, outputs in (("finding", finding, found), ("exhaustive", exhaustive, steps)):
        runs.append((signal.SIGKILL, what, argv, outputs, SignalPlan(signal.SIGKILL, round(r.uniform(0, 0.09), 3),
                                                                     after_file=True)))
    for signum, what, argv, outputs, plan in runs:
        b.add(f"signal:{_signal_name(signum, plan)}-hunt-{what}", "hunt", argv, SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan, outputs=dict(outputs),
              limit=BIG_LIMIT)


def gen_help(b: Builder) -> None:
    short = b.rng.sample([["verify", "-h"], ["replay", "-h"], ["export", "-h"], ["hunt", "-h"], ["-h"]], 2)
    for argv in (["verify", "--help"], ["replay", "--help"], ["export", "--help"], ["hunt", "--help"], ["node", "--help"],
                 ["merge", "--help"], ["attach", "--help"], ["--help"], *short):
        b.add(f"help:{' '.join(argv)}", "help", argv, HELP)


# --- real nodes: `node`, `merge` and `--real` ---------------------------------------------------

NODE_VALUES = {  # option -> values that must be refused (none of them may start a node: it would run for ever)
    "--id": ["", "x", "-3", "1.5", "99999999999999999999999", "١"],
    "--listen": ["", "h", "h:0", "h:70000", ":80", "h:x", "h:-1"],
    "--peers": ["", "1@127.0.0.1:7001", "2@h:1,2@h:2", "2@h", "x@h:1", "2", "@", "2@h:0"],
    "--timeout": ["", "0", "-1", "nan", "inf", "1e999", "abc"],
    "--probe-interval": ["-1", "nan", "x"],
    "--coordinator-timeout": ["0", "-5", "y"],
    "--delay": ["-1", "inf", "1e7", "d"],
    "--seed": ["-1", "x", "1e3"],
    "--algorithm": ["", "paxos", "classic+central"],
    "--start-at": ["x", "nan", "-inf"],
    "--parent": ["0", "x", "-2"],
    "--held": ["", "3", "2,", "x", "2,,2", "-1"],
    "--mutex": ["", "paxos", "central+lamport"],
    "--cs-think": ["1", "x"],  # (without --mutex: it does not apply)
    "--cs-hold": ["1", "-1"],
}


def gen_real(b: Builder) -> None:
    r = b.rng
    base = {"--id": "1", "--listen": "127.0.0.1:1", "--peers": "2@127.0.0.1:9", "--state-dir": "d"}
    for flag, values in NODE_VALUES.items():
        for value in r.sample(values, min(3, len(values))):
            argv = ["node", *(x for k, v in base.items() if k != flag for x in (k, v)), *b.spelled(flag, value)]
            names = flag if flag not in ("--peers",) else ("--peers", "peer")
            b.add(f"node{flag}:{value}", "node", argv, REFUSE, names=names,
                  forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    for missing in r.sample([k for k in base if k != "--peers"], 2):  # (no --peers: a cluster of one, which runs)
        b.add(f"node-missing:{missing}", "node", ["node", *(x for k, v in base.items() if k != missing for x in (k, v))],
              REFUSE, names=missing)
    b.add("node-state-dir:a-file", "node", ["node", *(x for k, v in {**base, "--state-dir": "f"}.items() for x in (k, v))],
          REFUSE, names="f", files={"f": b"not a folder\n"})
    damaged = {"d/state.json": b'{"algorithm": "classic", "storage": {"incar'}
    b.add("node-state:damaged", "node", ["node", *(x for k, v in base.items() for x in (k, v))], REFUSE,
          names="state.json", files={"d": DIRECTORY, **damaged})
    foreign = {"d/state.json": json.dumps({"algorithm": "raft", "storage": {}}).encode()}
    b.add("node-state:foreign", "node", ["node", *(x for k, v in base.items() for x in (k, v))], REFUSE,
          names="state.json", files={"d": DIRECTORY, **foreign})
    node = ["node", *(x for k, v in base.items() for x in (k, v))]
    for label, files, names in [  # what is in the way in a state folder: one line, never a hang or a traceback
            ("state-nested", {"d/state.json": b"[" * 100_000 + b"]" * 100_000}, "state.json"),
            ("state-fifo", {"d/state.json": FIFO}, "state.json"), ("state-a-folder", {"d/state.json": DIRECTORY},
                                                                    "state.json"),
            ("state-huge", {"d/state.json": b" " * (2 << 20)}, "state.json"),
            ("control-a-folder", {"d/control.sock": DIRECTORY}, "control.sock"),
            ("control-a-file", {"d/control.sock": b"mine\n"}, "control.sock"),
            ("trace-fifo", {"d/trace.jsonl": FIFO}, "trace.jsonl")]:
        b.add(f"node-{label}", "node", node, REFUSE, names=names, files={"d": DIRECTORY, **files})
    for flag, value in [("--seed", ""), ("--state-dir", ""), ("--state-dir", "  ")]:  # (empty: refused as anywhere)
        argv = ["node", *(x for k, v in base.items() if k != flag for x in (k, v)), flag, value]
        b.add(f"node-empty{flag}:{value!r}", "node", argv, REFUSE, names=flag)
    # merge
    trace = [{"t": 1.0, "lamport": 0, "node": 1, "kind": "boot", "algorithm": "classic", "ids": [1, 2],
              "recovering": False, "timeout": 4.0, "probe_interval": 5.0, "coordinator_timeout": None, "delay": 0.0}]
    good = b"".join(json.dumps(x).encode() + b"\n" for x in trace)
    other = good.replace(b'"node": 1', b'"node": 2')
    b.add("merge-valid", "merge", ["merge", "a", "b", "-o", "m.jsonl"], ACCEPT, outputs={"m.jsonl": "transcript"},
          files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other})
    b.add("merge-missing-node", "merge", ["merge", "a", "-o", "m.jsonl"], REFUSE, names="missing",
          files={"a": DIRECTORY, "a/trace.jsonl": good})
    b.add("merge-no-trace", "merge", ["merge", "a", "-o", "m.jsonl"], REFUSE, names="a", files={"a": DIRECTORY})
    b.add("merge-no-output", "merge", ["merge", "a"], REFUSE, names=("-o", "--output"),
          files={"a": DIRECTORY, "a/trace.jsonl": good})
    b.add("merge-output-exists", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE, names="m.jsonl",
          files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other, "m.jsonl": b"mine\n"})
    hostile = [b"[]", b"{}", b'{"t": "x", "lamport": 0, "node": 2, "kind": "boot"}', b'{"t": 1, "lamport": 0, "node": 2}',
               b'{"t": 1e999, "lamport": 0, "node": 2, "kind": "stop"}', b"\xff\xfe", b'{"t": 1, "lamport": 0, "node": 2, '
               b'"kind": "send", "id": "2.1.1", "dst": 1, "msg": {"type": "paxos"}}']
    for n, line in enumerate(r.sample(hostile, 4)):
        b.add(f"merge-hostile-line:{n}", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE, names="b",
              files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other + line + b"\n" + other})
    strangers = [("line-of-node-99", b'{"t": 2, "lamport": 1, "node": 99, "kind": "stop"}'),
                 ("send-to-99", b'{"t": 2, "lamport": 1, "node": 2, "kind": "send", "id": "2.1.1", "dst": 99, "msg": '
                                b'{"type": "election"}}'),
                 ("leader-99", b'{"t": 2, "lamport": 1, "node": 2, "kind": "state", "status": "normal", "leader": 99, '
                               b'"epoch": 1}'),
                 ("garbage-last-line", b"garbage")]  # (whole, its newline written: not a line a kill cut short)
    for label, line in strangers:  # a line it cannot place: one line naming the file and the line
        b.add(f"merge-{label}", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE, names="b/trace.jsonl line 2",
              files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other + line + b"\n"})
    b.add("merge-cut-short-last-line", "merge", ["merge", "a", "b", "-o", "m.jsonl"], ACCEPT,
          outputs={"m.jsonl": "transcript"}, files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY,
                                                   "b/trace.jsonl": other + b'{"t": 2, "lam'})
    # --real
    quick = ["--real", "--headless", "--nodes", "2", "--timeout", "0.5", "--probe-interval", "0.5", "--until", "1"]
    b.add("real-valid", "real", [*quick, "--transcript", "r.jsonl"], ACCEPT, outputs={"r.jsonl": "transcript"})
    b.add("real-valid:mutex", "real", [*quick, "--mutex", "central", "--cs-think", "0.1:0.3", "--transcript", "r.jsonl"],
          ACCEPT, outputs={"r.jsonl": "transcript"})
    for extra, names in [(["--compare"], "--compare"), (["--ids", "uuid"], "--ids"), (["--speed", "2"], "--speed"),
                         (["--at", "0.5 hold 1 2"], "hold"), (["--at", "0.5 delay 1"], "delay"),
                         (["--nodes", "65"], "65"), (["--at", "0.5 release 1 2"], "release")]:
        b.add(f"real-refused:{' '.join(extra)}", "real", [*quick, *extra], REFUSE, names=names)
    b.add("real-live-without-terminal", "real", ["--real", "--nodes", "2"], REFUSE, names=TERMINAL)
    # signals to a headless real run: its status and line, no folder left in TMPDIR (the guardian's, after a SIGKILL)
    for signum, low, high in [(signal.SIGTERM, 0.3, 0.6), (signal.SIGTERM, 0.3, 0.6), (signal.SIGTERM, 0.3, 0.6),
                              (signal.SIGINT, 0.3, 2.0), (signal.SIGHUP, 0.3, 2.0), (signal.SIGKILL, 0.3, 2.0),
                              (signal.SIGKILL, 2.0, 3.0)]:
        delay = round(r.uniform(low, high), 3)
        b.add(f"real-signal:{signal.Signals(signum).name}@{delay}s-12", "real",
              ["--real", "--headless", "--nodes", "12", "--until", "60"], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay), limit=BIG_LIMIT)
    # signals to the live views, in a terminal, a seeded moment after the nodes run: the simulation app's ending
    for group, argv, beside in [("real", ["--real", "--nodes", "3", "--timeout", "0.5"], 0), ("attach", ["attach", "{nodes}"], 2)]:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            delay = round(r.uniform(0.0, 1.5), 3)
            b.add(f"{group}-live-signal:{signal.Signals(signum).name}@{delay}s", group, argv, SIGNAL,
                  names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay),
                  limit=BIG_LIMIT, terminal=True, beside=beside)
    # attach
    for value, names in r.sample([("1@h:1,1@h:2", "twice"), ("", "at least one"), ("1@h", "HOST:PORT"),
                                  ("x@h:1", "whole number"), ("1@h:99999", "port")], 3):
        b.add(f"attach:{value}", "attach", ["attach", value], REFUSE, names=names)
    b.add("attach-without-terminal", "attach", ["attach", "1@127.0.0.1:9"], REFUSE, names=TERMINAL)


def build_cases(seed: int = DEFAULT_SEED) -> list[Case]:
    """The campaign for `seed`: the same list every time."""
    b = Builder(seed)
    for family in (gen_options, gen_live, gen_at, gen_scenarios, gen_transcripts, gen_export_options, gen_compare,
                   gen_write_errors, gen_signals, gen_hunt, gen_real, gen_help):
        family(b)
    seen: Counter[str] = Counter()
    for index, case in enumerate(b.cases):
        seen[case.name] += 1
        if seen[case.name] > 1:
            case.name = f"{case.name}#{seen[case.name]}"
        case.index = index
    return b.cases


# --- running ----------------------------------------------------------------------------------


@dataclass
class Process:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    hung: bool
    caught: bool | None = None  # a signal sent: whether the process had taken it over then (signals_support.send)
    after_signal: float | None = None  # seconds from the last signal sent to the end of the process


def _child_limits(fsize: int | None, close_stdout: bool = False) -> None:
    """In the child, before exec: the signals at their defaults, no core files, an address
    space guard, and the file limit (writes past it fail with EFBIG, not a fatal SIGXFSZ);
    `close_stdout`: no standard output at all, as after `>&-`."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    if close_stdout:
        os.close(1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    guard = MEMORY_GUARD if hard == resource.RLIM_INFINITY else min(MEMORY_GUARD, hard)
    resource.setrlimit(resource.RLIMIT_AS, (guard, hard))
    if fsize is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def _env(root: Path, tmp: Path) -> dict[str, str]:
    dropped = ("PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONSAFEPATH")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith(("PYTEST", "COV_"))}
    env.update(PYTHONPATH=str(root), TMPDIR=str(tmp))
    return env


def _send(p: subprocess.Popen, signum: int) -> bool:
    """SIGINT and SIGHUP to the process group, as a terminal sends them; SIGTERM and
    SIGKILL to the process, as `kill` does. Whether it had taken the signal over then."""
    return signals_support.send(p, signum, group=signum in (signal.SIGINT, signal.SIGHUP))


def _kill_group(p: subprocess.Popen) -> None:
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


def spawn(argv: list[str], cwd: Path, tmp: Path, root: Path, *, limit: float, plan: SignalPlan | None = None,
          fsize: int | None = None, stdout_full: bool = False, stdout_closed: bool = False) -> Process:
    stdout = open("/dev/full", "wb") if stdout_full else subprocess.DEVNULL if stdout_closed else subprocess.PIPE
    before = set(os.listdir(cwd))
    start = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", entry_module(root), *argv], cwd=cwd, env=_env(root, tmp),
                         stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=functools.partial(_child_limits, fsize, stdout_closed))
    if stdout_full:
        stdout.close()
    out = err = None  # (until a communicate has returned: one that timed out keeps what it read for the next)
    caught, sent = None, None
    try:
        if plan is not None:
            try:
                if plan.after_file and not _first_file(p, cwd, before, limit):
                    raise subprocess.TimeoutExpired(p.args, 0)  # (the limit: signalled, then judged)
                out, err = p.communicate(timeout=plan.delay)
            except subprocess.TimeoutExpired:
                # (if the process has just ended, this only reaps it: its output is still to read)
                caught, sent = _send(p, plan.signum), time.monotonic()
                if plan.again_ms is not None:
                    try:
                        out, err = p.communicate(timeout=plan.again_ms / 1000)
                    except subprocess.TimeoutExpired:
                        caught, sent = _send(p, plan.signum) or caught, time.monotonic()
        if err is None:  # (stderr is always a pipe: None until a communicate returned)
            out, err = p.communicate(timeout=max(0.05, start + limit - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill_group(p)
        out, err = p.communicate()
        return Process(p.returncode, out or b"", err or b"", time.monotonic() - start, hung=True)
    finally:
        _kill_group(p)
    ended = time.monotonic()
    return Process(p.returncode, out or b"", err or b"", ended - start, hung=False, caught=caught,
                   after_signal=None if sent is None else ended - sent)


# --- judging ----------------------------------------------------------------------------------


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
        return "hang", [("hang", f"still running after {case.limit:g} s")]
    err = proc.stderr.decode("utf-8", "replace")
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
        problems.append(("silent", f"ran on {proc.after_signal:.1f} s after a {signal.Signals(case.signal.signum).name} "
                                   "it had taken over, and ended as if none had come"))
    else:
        problems += _said_right(case, outcome, said, proc, names)
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


# --- the campaign -------------------------------------------------------------------------------


# --- the live views: in a terminal -------------------------------------------------------------

ON_SCREEN = b"real run"  # what the live real view shows once its nodes run (its status line)
_ESCAPE = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def spawn_in_terminal(argv: list[str], cwd: Path, tmp: Path, root: Path, *, limit: float,
                      plan: SignalPlan | None) -> Process:
    """`spawn` in a terminal of its own (a pty, 100 x 30, that nobody types in): the
    signal `plan.delay` seconds after the screen first shows ON_SCREEN. Its stderr, as
    judged, is what the terminal shows after the app has left its screen, escapes taken
    out: its line, if any."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    start = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", entry_module(root), *argv], cwd=cwd, env=_env(root, tmp),
                         stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                         preexec_fn=functools.partial(_child_limits, None))
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
        p.wait(timeout=max(0.05, start + limit - time.monotonic()))
    except subprocess.TimeoutExpired:
        hung = True
    finally:
        _kill_group(p)
        p.wait()
        reader.join(timeout=5)
        os.close(master)
    after = _ESCAPE.sub(b"", bytes(shown).rsplit(b"\x1b[?1049l", 1)[-1])
    said = b"\n".join(line.strip() for line in after.replace(b"\r", b"\n").split(b"\n") if line.strip())
    return Process(p.returncode, b"", said + b"\n" if said else b"", time.monotonic() - start, hung)


def _nodes_by_hand(count: int, folder: Path, root: Path) -> tuple[list[subprocess.Popen], str]:
    """`count` real nodes of the checkout under test, as a person starts them (`node`),
    once each has booted: them, and the list `attach` takes ("1@127.0.0.1:P,...")."""
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
        argv = [sys.executable, "-m", entry_module(root), "node", "--id", str(i), "--listen", f"127.0.0.1:{port}",
                "--peers", peers, "--state-dir", str(folder / str(i)), "--timeout", "0.5", "--probe-interval", "0.5"]
        nodes.append(subprocess.Popen(argv, env=_env(root, folder), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True))
    deadline = time.monotonic() + BIG_LIMIT
    traces = [folder / str(i) / "trace.jsonl" for i in range(1, count + 1)]
    while not all(t.exists() and b'"kind":"boot"' in t.read_bytes() for t in traces):
        if time.monotonic() > deadline or any(p.poll() is not None for p in nodes):
            for p in nodes:
                _kill_group(p)
            raise LookupError("the nodes to attach to did not start")
        time.sleep(0.05)
    return nodes, where


@dataclass
class Result:
    case: Case
    outcome: str
    problems: list[tuple[str, str]]
    returncode: int | None = None
    stderr: str = ""
    seconds: float = 0.0

    @property
    def failure(self) -> str | None:
        return self.problems[0][0] if self.problems else None


class Bases:
    """The setup transcripts, recorded by the checkout under test: each made once, by the
    first run of cases that needs it, and kept for every later run that shares this
    object (the suite's shards of the campaign in one process share one)."""

    def __init__(self, root: Path, folder: Path):
        self.root = root
        self.folder = folder
        self.made: dict[str, Path] = {}
        self.errors: dict[str, str] = {}
        self._lock = threading.Lock()
        self._parsed: dict[str, Lines] = {}

    def make(self, keys: set[str], pool: ThreadPoolExecutor) -> None:
        with self._lock:
            wanted = sorted(keys - set(self.made) - set(self.errors), key=lambda k: k != "big")
            self.folder.mkdir(parents=True, exist_ok=True)
            list(pool.map(self._make, wanted))

    def _make(self, key: str) -> None:
        cwd, tmp = self.folder / f"{key}.cwd", self.folder / f"{key}.tmp"
        cwd.mkdir(), tmp.mkdir()
        proc = spawn([*BASES[key], "--transcript", "t.jsonl"], cwd, tmp, self.root, limit=60)
        path = cwd / "t.jsonl"
        if proc.returncode != 0 or not path.exists():
            self.errors[key] = (f"`{' '.join(BASES[key][:6])} ...` exit {proc.returncode}: "
                                f"{proc.stderr.decode('utf-8', 'replace').strip()[-200:]}")
        else:
            self.made[key] = path

    def lines(self, key: str) -> Lines:
        with self._lock:
            if key not in self._parsed:
                self._parsed[key] = Lines(self.made[key].read_bytes())
            return self._parsed[key]

    def missing(self, key: str) -> str | None:
        """Why the transcript `key` is not there (None: it is)."""
        return None if key in self.made else f"setup transcript {key!r}: {self.errors.get(key, 'not made')}"


class Campaign:
    """One run of the cases against one checkout: its work folder, and the setup
    transcripts (its own, or `bases` shared with other runs)."""

    def __init__(self, root: Path, workers: int = WORKERS, keep: bool = False, bases: Bases | None = None):
        self.root = Path(root).resolve()
        self.workers = workers
        self.keep = keep
        self.work = Path(tempfile.mkdtemp(prefix="bully-campaign-"))
        self.bases = bases or Bases(self.root, self.work / "bases")
        self.cpu = 0.0  # seconds of CPU the processes took

    def close(self) -> None:
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    def derive(self, spec: Derived) -> tuple[bytes, int | None]:
        """The mutated transcript, and the line it spoiled. If its base has no line the
        mutation needs, the classic base (which has every kind of line) is used."""
        for key in (spec.base, "classic"):
            if why := self.bases.missing(key):
                raise LookupError(why)
            made = MUTATIONS[spec.op](self.bases.lines(key), random.Random(spec.seed), *spec.params)
            if made is not None:
                return made
        raise LookupError(f"no line for mutation {spec.op!r} in the setup transcripts")

    def run_case(self, case: Case) -> Result:
        if case.terminal:
            return self._run_in_terminal(case)
        folder = Path(tempfile.mkdtemp(prefix=f"{case.index:03d}-", dir=self.work))
        cwd, tmp = folder / "cwd", folder / "tmp"
        cwd.mkdir(), tmp.mkdir()
        try:
            try:
                line = self._make_files(case, cwd)
            except LookupError as e:
                return Result(case, "setup", [("setup", str(e))])
            names = _resolve(case, line)
            before = snapshot(cwd)
            proc = spawn(case.argv, cwd, tmp, self.root, limit=case.limit, plan=case.signal, fsize=case.fsize,
                         stdout_full=case.stdout_full, stdout_closed=case.stdout_closed)
            if case.signal is not None:
                self._wait_mended(case, cwd, tmp)
            outcome, problems = judge(case, proc, names, cwd, tmp, before)
            if case.verify_after and not problems:
                problems += self._verify_left(case, cwd, tmp)
            err = proc.stderr.decode("utf-8", "replace")
            return Result(case, outcome, problems, proc.returncode, err, proc.seconds)
        finally:
            if not self.keep:
                shutil.rmtree(folder, ignore_errors=True)

    def _make_files(self, case: Case, cwd: Path) -> int | None:
        line = None
        for name, content in case.files.items():
            path = cwd / name
            if content is DIRECTORY:
                path.mkdir()
            elif content is FIFO:
                os.mkfifo(path)
            elif isinstance(content, Base):
                if why := self.bases.missing(content.key):
                    raise LookupError(why)
                shutil.copyfile(self.bases.made[content.key], path)
            elif isinstance(content, Derived):
                data, line = self.derive(content)
                path.write_bytes(data)
            else:
                path.write_bytes(content)
        return line

    def _wait_mended(self, case: Case, cwd: Path, tmp: Path) -> None:
        """After a signal, give the product's guardian KILL_GRACE seconds to end each file
        at a whole line and to empty TMPDIR."""
        deadline = time.monotonic() + KILL_GRACE
        while time.monotonic() < deadline:
            done = not os.listdir(tmp) and not any(name.startswith(".bully-") for name in os.listdir(cwd))
            for name in case.outputs:
                path = cwd / name
                if path.is_file() and path.stat().st_size:
                    with open(path, "rb") as f:
                        f.seek(-1, os.SEEK_END)
                        done = done and f.read(1) == b"\n"
            if done:
                return
            time.sleep(0.05)

    def _verify_left(self, case: Case, cwd: Path, tmp: Path) -> list[tuple[str, str]]:
        """A transcript cut by a signal is still the beginning of its run: verify says so."""
        for name, kind in case.outputs.items():
            path = cwd / name
            if kind != "transcript" or not path.is_file() or path.read_bytes().count(b"\n") < 2:
                continue  # none, or only a header
            proc = spawn(["verify", name], cwd, tmp, self.root, limit=BIG_LIMIT)
            if proc.returncode != 0:
                first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
                said = first[0][:150] if first else ""
                return [("partial", f"verify on what the signal left: exit {proc.returncode}: {said}")]
        return []

    def _run_in_terminal(self, case: Case) -> Result:
        """A case of the live views: in a terminal (spawn_in_terminal), beside the real nodes
        it watches (`beside`, started by hand and stopped after), judged as any other."""
        folder = Path(tempfile.mkdtemp(prefix=f"{case.index:03d}-", dir=self.work))
        cwd, tmp, elsewhere = folder / "cwd", folder / "tmp", folder / "beside"
        for made in (cwd, tmp, elsewhere):
            made.mkdir()
        nodes: list[subprocess.Popen] = []
        try:
            argv = case.argv
            if case.beside:
                nodes, where = _nodes_by_hand(case.beside, elsewhere, self.root)
                argv = [a.replace("{nodes}", where) for a in argv]
            before = snapshot(cwd)
            proc = spawn_in_terminal(argv, cwd, tmp, self.root, limit=case.limit, plan=case.signal)
            self._wait_mended(case, cwd, tmp)
            outcome, problems = judge(case, proc, _resolve(case, None), cwd, tmp, before)
            if case.signal is not None and outcome == ACCEPT:  # (a live view does not end by itself: 0 is silence)
                problems.append(("silent", f"exit 0 after {signal.Signals(case.signal.signum).name}"))
            if nodes and any(p.poll() is not None for p in nodes):
                problems.append(("partial", "a node it watched ended with it (attach only watches)"))
            return Result(case, outcome, problems, proc.returncode, proc.stderr.decode("utf-8", "replace"),
                          proc.seconds)
        except LookupError as e:
            return Result(case, "setup", [("setup", str(e))])
        finally:
            for p in nodes:
                _kill_group(p)
                p.wait()
            if not self.keep:
                shutil.rmtree(folder, ignore_errors=True)

    def run(self, cases: list[Case],
            progress: Callable[[Result], None] | None = None) -> tuple[list[Result], float, float]:
        """Every case, `workers` at a time, the longest first; results in the cases' order.
        Also notes the CPU time the processes took (`self.cpu`): on a busy machine the wall
        time says little, and the CPU time divided by the cores is what it would be idle."""
        start = time.monotonic()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        keys = {c.key for case in cases for c in case.files.values() if isinstance(c, (Base,))}
        keys |= {c.base for case in cases for c in case.files.values() if isinstance(c, Derived)}
        if any(isinstance(c, Derived) for case in cases for c in case.files.values()):
            keys.add("classic")
        with ThreadPoolExecutor(self.workers) as pool:
            self.bases.make(keys, pool)
            setup = time.monotonic() - start

            def one(case: Case) -> Result:
                result = self.run_case(case)
                if progress:
                    progress(result)
                return result

            order = sorted(cases, key=_expected_cost, reverse=True)
            results = {r.case.index: r for r in pool.map(one, order)}
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
        return [results[case.index] for case in cases], time.monotonic() - start, setup


def _expected_cost(case: Case) -> float:
    if case.signal is not None:
        return 10 + case.signal.delay
    if case.group in ("live", "replay"):
        return 5
    return 1 if case.expect in (ACCEPT, EITHER) else 0


def _resolve(case: Case, line: int | None) -> Any:
    """`names` with the line the mutation spoiled filled in ("line {line}")."""
    def one(name: str) -> str | None:
        replay_only = name.endswith("?replay")
        name = name.removesuffix("?replay")
        if "{line}" in name and (line is None or replay_only and line > REPLAY_FIRST_BLOCK):
            return None
        return name.replace("{line}", str(line))
    if case.names is None:
        return None
    wanted = [n for n in map(one, (case.names,) if isinstance(case.names, str) else case.names) if n]
    return tuple(wanted) or None


def run_campaign(cases: list[Case], root: Path = REPO, workers: int = WORKERS, keep: bool = False,
                 progress: Callable[[Result], None] | None = None,
                 bases: Bases | None = None) -> tuple[list[Result], float, float]:
    """(results, wall seconds, of which setup); the CPU seconds are in the module's LAST_CPU."""
    global LAST_CPU
    campaign = Campaign(root, workers, keep, bases)
    try:
        return campaign.run(cases, progress)
    finally:
        LAST_CPU = campaign.cpu
        campaign.close()


LAST_CPU = 0.0


# --- reports ----------------------------------------------------------------------------------


def summary(results: list[Result], seconds: float, setup: float) -> str:
    out = [f"{len(results)} cases in {seconds:.1f} s wall time (setup {setup:.1f} s); the processes took "
           f"{LAST_CPU:.0f} s of CPU ({LAST_CPU / (os.cpu_count() or 1):.0f} s per core)"]
    outcomes = Counter(r.outcome for r in results)
    out.append("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: -kv[1])))
    classes = Counter(r.failure or "ok" for r in results)
    out.append("classes:  " + ", ".join(f"{k} {classes[k]}" for k in ("ok", *FAILURES) if classes[k]))
    width = max(len(g) for g in GROUPS)
    out.append(f"{'':{width}}  cases   ok " + " ".join(f"{c:>10}" for c in FAILURES))
    for group in GROUPS:
        mine = [r for r in results if r.case.group == group]
        counts = Counter(r.failure or "ok" for r in mine)
        out.append(f"{group:{width}}  {len(mine):5} {counts['ok']:4} " + " ".join(f"{counts[c]:10}" for c in FAILURES))
    return "\n".join(out)


def failure_table(results: list[Result], stderr_chars: int = 200, first_line: bool = False) -> str:
    """One entry per failing case: its class and name, argv, what is wrong, and stderr."""
    out = []
    for r in results:
        if not r.failure:
            continue
        err = r.stderr.strip()
        shown = err.splitlines()[0] if first_line and err else err.replace("\n", "⏎ ")
        out.append(f"[{r.failure}] #{r.case.index} {r.case.name} (exit {r.returncode}, {r.seconds:.1f} s)\n"
                   f"    argv: {r.case.shown()[:300]}\n"
                   f"    why:  {'; '.join(f'{c}: {d}' for c, d in r.problems)[:300]}\n"
                   f"    err:  {shown[:stderr_chars]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", default=str(REPO), help="the checkout to test (default: this one)")
    p.add_argument("--workers", type=int, default=WORKERS, help="cases at a time (default 2)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--report", action="store_true", help="list every failing case")
    p.add_argument("--only", help="run only the cases whose name contains this")
    p.add_argument("--list", action="store_true", help="list the cases and stop")
    p.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    p.add_argument("--json", help="write every result to this file")
    args = p.parse_args(argv)
    cases = build_cases(args.seed)
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    if args.list:
        for c in cases:
            print(f"#{c.index} {c.group:8} {c.expect:11} {c.name}  ::  {c.shown()[:160]}")
        print(f"{len(cases)} cases; " + ", ".join(f"{g} {n}" for g, n in Counter(c.group for c in cases).items()))
        return 0
    print(f"bully-tui campaign: seed {args.seed}, {len(cases)} cases, root {args.root}, {args.workers} at a time",
          flush=True)
    done = Counter()

    def progress(result: Result) -> None:
        done["n"] += 1
        if done["n"] % 50 == 0:
            print(f"  {done['n']}/{len(cases)}", file=sys.stderr, flush=True)

    results, seconds, setup = run_campaign(cases, Path(args.root), args.workers, args.keep, progress)
    print(summary(results, seconds, setup))
    if args.report and any(r.failure for r in results):
        print("\nfailing cases:")
        print(failure_table(results, stderr_chars=200, first_line=True))
    if args.json:
        Path(args.json).write_text(json.dumps([{
            "index": r.case.index, "name": r.case.name, "group": r.case.group, "argv": r.case.argv,
            "expect": r.case.expect, "outcome": r.outcome, "class": r.failure, "problems": r.problems,
            "returncode": r.returncode, "stderr": r.stderr[:2000], "seconds": round(r.seconds, 3)} for r in results],
            ensure_ascii=False, indent=1))
    return 1 if any(r.failure for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
