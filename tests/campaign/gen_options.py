"""1, 5. Options of the headless run and of the live app, --compare, and help: each
option's valid values, its boundaries and just outside them, the hostile pool, names,
ring orders, mutual exclusion, the transcript path, spelling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cases import (
    ACCEPT,
    ALGORITHMS,
    ARGPARSE_MISREAD,
    DIRECTORY,
    EITHER,
    HELP,
    HOSTILE,
    LONG_GARBAGE,
    QUICK,
    REFUSE,
    TERMINAL,
    Builder,
    delay_verdict,
    seconds_verdict,
    shortened,
    whole_verdict,
)

RING_POOL = [  # --ring: (label, value, algorithm, expectation) with --nodes 3
    ("sorted", "sorted", "ring", "accept"), ("reversed", "reversed", "hs", "accept"),
    ("SHUFFLED", "SHUFFLED", "ring", "either"), ("list", "3,1,2", "hs", "accept"), ("spaced-list", " 2, 3,1", "ring", "either"),
    ("bogus", "bogus", "ring", "refuse"), ("empty", "", "hs", "refuse"), ("twice", "1,1,2", "ring", "refuse"),
    ("short", "1,2", "ring", "refuse"), ("no-node", "1,2,9", "hs", "refuse"), ("zero", "0,1,2", "ring", "refuse"),
    ("arabic-digits", "١,٢,٣", "ring", "refuse"), ("5000-digits", "1" + "0" * 4999, "hs", "refuse"),
    ("garbage", LONG_GARBAGE, "ring", "refuse"), ("option-looking", "-1,2,3", "ring", "refuse"),
]


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
# A headless run's bound, apart from OPTIONS: its cases are made last (gen_max_in_flight,
# build.py), so the draws of every case before them stay as they were.
MAX_IN_FLIGHT = Option("--max-in-flight", lambda v: whole_verdict(v, 0, 10**12), ("0", "1000000", "5000000"),
                       ("-1", "1000000000001"), where="headless")
OPTION = {o.flag: o for o in (*OPTIONS, MAX_IN_FLIGHT)}


def name_verdict(value: str, names: tuple[str, ...]) -> str:
    if value in names:
        return "ok"
    return "either" if value.lower() in names else "bad"


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
    label = f"{op}:{flag}={shortened(value, 16)!s}"
    if live:
        argv = words + (["--nodes", "3"] if flag != "--nodes" and b.rng.random() < 0.5 else [])
        if option is not None and option.where == "headless":
            b.add(label, "live", argv, REFUSE, names=flag, forbid=forbid)
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
        b.add(f"name:--algorithm={shortened(value, 16)}", "headless",
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
        b.add(f"name:--mutex={shortened(value, 16)}", "headless",
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


def gen_max_in_flight(b: Builder) -> None:
    """1. --max-in-flight: every valid value, those just outside, every hostile value, and
    where it does not apply (live, real nodes, --compare)."""
    flag = MAX_IN_FLIGHT.flag
    for op, values in (("valid", MAX_IN_FLIGHT.valid), ("outside", MAX_IN_FLIGHT.outside)):
        for value in values:
            _option_case(b, op, flag, value, live=False)
    for label, value in HOSTILE:
        _option_case(b, f"hostile-{label}", flag, value, live=False)
    _option_case(b, "live-valid", flag, b.rng.choice(MAX_IN_FLIGHT.valid), live=True)
    label, value = b.rng.choice(HOSTILE)
    _option_case(b, f"live-hostile-{label}", flag, value, live=True)
    b.add(f"not-applying:{flag}-real", "headless", ["--headless", "--real", "--until", "2", flag, "10"], REFUSE,
          names=flag)
    b.add(f"not-applying:{flag}-compare", "compare", ["--headless", "--compare", "--nodes", "4", flag, "10"], REFUSE,
          names=flag)


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


# --- 5. --compare -----------------------------------------------------------------------------


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


def gen_help(b: Builder) -> None:
    short = b.rng.sample([["verify", "-h"], ["replay", "-h"], ["export", "-h"], ["hunt", "-h"], ["-h"]], 2)
    for argv in (["verify", "--help"], ["replay", "--help"], ["export", "--help"], ["hunt", "--help"], ["node", "--help"],
                 ["merge", "--help"], ["attach", "--help"], ["--help"], *short):
        b.add(f"help:{' '.join(argv)}", "help", argv, HELP)
