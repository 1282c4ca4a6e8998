"""9. `hunt`: small valid searches, each option set to hostile values, options that do
not go together, outputs that exist, cannot be written or would be hidden, and signals
during a search and while a finding's files are written."""

from __future__ import annotations

import random
import re
import signal

from .cases import (
    ALGORITHMS,
    ARGPARSE_MISREAD,
    BIG_LIMIT,
    DIRECTORY,
    EITHER,
    FOUND,
    HOSTILE,
    LONG_GARBAGE,
    REFUSE,
    SEARCHED,
    SIGNAL,
    TERMINAL,
    WRITE_ERROR,
    Builder,
    SignalPlan,
    delay_verdict,
    in_the_work,
    seconds_verdict,
    shortened,
    whole_verdict,
)

HUNT_PROPERTIES = ("sle1", "split-brain", "sle2", "any")
HUNT_OPTIONS = {  # flag -> (verdict of a value, valid values)
    "--budget": (lambda v: "ok" if re.fullmatch(r"[1-9][0-9]{0,7}", v) else "either" if re.fullmatch(r"[0-9.]+[sm]", v)
                 else "bad", ("5", "12")),
    "--seed": (lambda v: whole_verdict(v, 0, 2**63 - 1), ("0", "7")),
    "--nodes": (lambda v: "ok" if re.fullmatch(r"[2-5](:[5-8])?", v) else "either" if re.fullmatch(r"[0-9:]+", v)
                else "bad", ("2:4", "3")),
    "--workers": (lambda v: whole_verdict(v, 1, 64), ("1", "2")),
}
EXHAUSTIVE_OPTIONS = {
    "--faults": (lambda v: whole_verdict(v, 0, 10), ("0", "1")),
    "--elects": (lambda v: whole_verdict(v, 0, 10), ("0", "1")),
    "--depth": (lambda v: whole_verdict(v, 1, 10_000), ("5", "12")),
    "--max-states": (lambda v: whole_verdict(v, 1, 100_000_000), ("300", "2000")),
    "--timeout": (lambda v: seconds_verdict(v, 0.001, 1e6, False), ("4", "3")),
    "--delay": (delay_verdict, ("1:2", "1")),
}


def _hunt_run(r: random.Random) -> list[str]:
    """A small random hunt, found or not: a few schedules (a dozen ms each) reach what its
    input's handling and its files are, as a hundred do."""
    algorithm = r.choice(ALGORITHMS)
    return ["hunt", "--algorithm", algorithm, "--property", r.choice(HUNT_PROPERTIES), "--nodes",
            r.choice(["2:3", "2:4", "3"]), "--budget", str(r.choice([5, 10, 20])), "--seed", str(r.randrange(100)),
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
                                       "--property", r.choice(["mutex-safety", "mutex-liveness"]), "--budget", "10",
                                       "-o", "f"], SEARCHED, outputs=dict(found))
    for flag, (verdict, valid) in [*HUNT_OPTIONS.items(), *EXHAUSTIVE_OPTIONS.items()]:
        exhaustive = flag in EXHAUSTIVE_OPTIONS
        base = _exhaustive_run(r) if exhaustive else _hunt_run(r)
        base = [w for i, w in enumerate(base) if w != flag and (i == 0 or base[i - 1] != flag)]
        for label, value in [("valid", r.choice(valid)), *r.sample(HOSTILE, 2)]:
            expect = {"ok": SEARCHED, "bad": REFUSE, "either": EITHER}[verdict(value)]
            if expect == EITHER:
                b.add(f"hunt-option:{flag}={shortened(value, 16)}", "hunt", [*base, *b.spelled(flag, value), "-o", "f"],
                      EITHER, names=flag, also=(FOUND,), outputs=dict(steps if exhaustive else found),
                      forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
                continue
            b.add(f"hunt-option:{flag}={shortened(value, 16)}", "hunt", [*base, *b.spelled(flag, value), "-o", "f"], expect,
                  names=flag, outputs=dict(steps if exhaustive else found),
                  forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    for flag, value in [("--algorithm", r.choice(["bogus", "", LONG_GARBAGE])), ("--property", "safety"),
                        ("--mutex", "semaphore"), ("--commands", r.choice(["crash,explode", "partition", ""]))]:
        b.add(f"hunt-name:{flag}={shortened(value, 16)}", "hunt", ["hunt", *b.spelled(flag, value), "--budget", "20"],
              REFUSE, names=flag)
    together = [(["--exhaustive", "--budget", "50"], "--budget"), (["--timeout", "3"], "--timeout"),
                (["--exhaustive", "--async", "--property", "sle2"], "sle2"), (["--exhaustive", "--requests", "2"], "--mutex"),
                (["--exhaustive", "--nodes", "5"], "--nodes"), (["--property", "mutex-safety"], "--mutex"),
                (["--open", "--budget", "20"], TERMINAL), (["--exhaustive", "--open"], TERMINAL),
                (["--async"], "--async"), (["stray"], "stray")]
    for extra, names in r.sample(together, 6):
        b.add(f"hunt-together:{' '.join(extra)}", "hunt", ["hunt", *extra], REFUSE, names=names)
    for label, value in [("empty", ""), ("no-port", "tcp://127.0.0.1"), ("scheme", "http://127.0.0.1:8786"),
                         ("garbage", r.choice([LONG_GARBAGE, "tcp://:8786", "127.0.0.1:0", "-1"])),
                         ("unreachable", "tcp://127.0.0.1:1")]:  # (no scheduler there: refused within its bound)
        b.add(f"hunt-scheduler:{label}", "hunt", [*_hunt_run(r)[:-2], *b.spelled("--scheduler", value), "-o", "f"],
              REFUSE, names="--scheduler", forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    b.add("hunt-scheduler:exhaustive", "hunt", [*_exhaustive_run(r), "--scheduler", "tcp://127.0.0.1:8786"], REFUSE,
          names="--scheduler")
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
        b.add(f"hunt-output:hidden={shortened(value, 16)}", "hunt", [*_hunt_run(r), "-o", value], REFUSE,
              names="-o", files=files)
    b.add("hunt-output:hidden-exhaustive=.txt", "hunt", [*_exhaustive_run(r), "-o", ".txt"], REFUSE, names="-o")
    split_brain = ["hunt", "--algorithm", "classic", "--property", "split-brain", "--break-synchrony", "--budget", "50",
                   "--workers", "1", "-o", "f"]  # (found at once: the files are written)
    b.add("hunt-dev-full:finding", "hunt", split_brain, WRITE_ERROR, stdout_full=True, outputs=dict(found))
    closed = {"stdout_closed": True, "names": "standard output"}
    b.add("closed-stdout:hunt-finding", "hunt", split_brain, WRITE_ERROR, outputs=dict(found), **closed)
    b.add("closed-stdout:hunt-nothing", "hunt", ["hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "5",
                                                 "--workers", "1", "-o", "f"], WRITE_ERROR, outputs=dict(found), **closed)
    b.add("closed-stdout:hunt-exhaustive", "hunt", ["hunt", "--exhaustive", "--async", "-o", "f"], WRITE_ERROR,
          outputs=dict(steps), **closed)
    limit = r.randint(2048, 8192)
    b.add(f"fsize:hunt-finding-{limit}", "hunt", split_brain, WRITE_ERROR, fsize=limit, outputs=dict(found))
    gen_hunt_signals(b, found, steps)
    gen_hunt_network(b)
    gen_hunt_exhaustive_workers(b, steps)


def gen_hunt_exhaustive_workers(b: Builder, steps: dict[str, str]) -> None:
    """The exhaustive search's --workers (issue 34). (It draws nothing: the cases before
    it keep their draws.)"""
    for bad in ("0", "65", "two", ""):
        b.add(f"hunt-exhaustive-workers-refused:{bad or 'empty'}", "hunt", ["hunt", "--exhaustive", "--workers", bad],
              REFUSE, names="--workers")
    b.add("hunt-valid:exhaustive-2-workers", "hunt", ["hunt", "--exhaustive", "--workers", "2", "--algorithm",
                                                      "garcia-molina", "--faults", "1", "--max-states", "4000", "-o", "f"],
          SEARCHED, outputs=dict(steps))


NETWORK_OPTIONS = {  # the exhaustive search's network: each fault's bound
    "--drops": (lambda v: whole_verdict(v, 1, 10), ("1", "2")),
    "--duplicates": (lambda v: whole_verdict(v, 1, 10), ("1", "2")),
}


def _network_run(r: random.Random) -> list[str]:
    """A small exhaustive search on links that drop and duplicate (and may reorder)."""
    return ["hunt", "--exhaustive", "--algorithm", r.choice(ALGORITHMS), "--nodes", "2", *r.choice([["--async"], []]),
            "--faults", "0", "--network", r.choice(["drop,duplicate", "drop,duplicate,reorder"]), "--max-states", "1500"]


def gen_hunt_network(b: Builder) -> None:
    """`hunt --exhaustive --network`: a finding is a scenario and a transcript; each
    fault's bound, hostile values; names that are no fault; options without the search
    or the fault they belong to; a signal while a finding's files are written."""
    r = b.rng
    written = {"f.scenario": "text", "f.jsonl": "transcript"}
    lossless = {"f.txt": "text", "f.jsonl": "transcript"}  # (fifo: the interaction file, as ever)
    lost = ["hunt", "--exhaustive", "--algorithm", "classic", "--nodes", "2", "--faults", "0", "--elects", "1",
            "--network", "drop", "-o", "f"]  # (found at once: the files are written)
    b.add("hunt-network:finding", "hunt", lost, SEARCHED, outputs=dict(written))
    for _ in range(3):
        b.add("hunt-network:valid", "hunt", [*_network_run(r), "-o", "f"], SEARCHED, outputs=dict(written))
    for flag, (verdict, valid) in NETWORK_OPTIONS.items():
        base = _network_run(r)
        for label, value in [("valid", r.choice(valid)), *r.sample(HOSTILE, 3)]:
            expect = {"ok": SEARCHED, "bad": REFUSE}[verdict(value)]
            b.add(f"hunt-network-option:{flag}={shortened(value, 16)}", "hunt", [*base, *b.spelled(flag, value), "-o", "f"],
                  expect, names=flag, outputs=dict(written), forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    for value, expect in [("fifo", SEARCHED), ("Reorder", SEARCHED), ("drop,drop", SEARCHED), ("bogus", REFUSE),
                          ("", REFUSE), ("fifo,drop", REFUSE), ("drop,,reorder", REFUSE), ("loss", REFUSE),
                          (LONG_GARBAGE, REFUSE)]:
        argv = [w for w in _network_run(r) if w not in ("--network", "drop,duplicate", "drop,duplicate,reorder")]
        b.add(f"hunt-network-name:{shortened(value, 16)}", "hunt", [*argv, *b.spelled("--network", value), "-o", "f"],
              expect, names="--network", outputs=dict(lossless if value == "fifo" else written))
    for extra, names in [(["--network", "drop", "--budget", "20"], "--network"), (["--drops", "2", "--budget", "20"],
                                                                                  "--drops"),
                         (["--exhaustive", "--drops", "2"], "--drops"),
                         (["--exhaustive", "--network", "reorder", "--duplicates", "2"], "--duplicates")]:
        b.add(f"hunt-network-together:{' '.join(extra)}", "hunt", ["hunt", *extra], REFUSE, names=names)
    plan = SignalPlan(signal.SIGTERM, round(r.uniform(0, WRITING), 3), after_file=True)
    b.add(f"signal:{_signal_name(signal.SIGTERM, plan)}-hunt-network-finding", "hunt", lost, SIGNAL, signal=plan,
          outputs=dict(written), limit=BIG_LIMIT)


# Seconds from a finding's first file to its last: the moments of the signals "after a file"
# are drawn in it. (Those cases are forked, their start-up done: the files come some 50 ms
# apart, where a spawned case, still importing as it writes, took 80.)
WRITING = 0.05
HUNT_START_UP = 0.5  # seconds from the start to the search: Python's start-up and the hunt's imports


def _signal_name(signum: int, plan: SignalPlan) -> str:
    return f"{signal.Signals(signum).name}@{plan.moment()}"


def gen_hunt_signals(b: Builder, found: dict[str, str], steps: dict[str, str]) -> None:
    """Signals during a search, and while a finding's two files are written: the moment
    after the first file of the case appears in its folder (a temporary one, or a
    finding's first), when they used to be half there."""
    r = b.rng
    # (moments past HUNT_START_UP are of the search: in_the_work; the hunt's start-up imports hypothesis.
    # A finding is made half a second in, and a second of a search meets what later ones would; its
    # collections, where hypothesis's gc callback once took a signal, come all along it.)
    nothing = ["hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "30s", "-o", "f"]
    finding = ["hunt", "--algorithm", "classic", "--property", "sle1", "--budget", "30", "--workers", "1", "-o", "f"]
    swallowed = ["hunt", "--algorithm", "garcia-molina", "--property", "sle1", "--budget", "60s", "--nodes", "2:5",
                 "--workers", "1", "-o", "f"]  # (hypothesis's gc callback took a signal: it searched on for 60 s)
    exhaustive = ["hunt", "--exhaustive", "--async", "-o", "f"]
    runs = []
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        runs += [(signum, "search", nothing, found, in_the_work(signum, round(r.uniform(0, 1.5), 3), HUNT_START_UP)),
                 (signum, "finding", finding, found, in_the_work(signum, round(r.uniform(0, 1.0), 3), HUNT_START_UP)),
                 (signum, "gc", swallowed, found, in_the_work(signum, round(r.uniform(0.6, 1.3), 3), HUNT_START_UP))]
        for _ in range(2):
            runs.append((signum, "finding", finding, found, SignalPlan(signum, round(r.uniform(0, WRITING), 3),
                                                                          after_file=True)))
        runs.append((signum, "exhaustive", exhaustive, steps, SignalPlan(signum, round(r.uniform(0, WRITING), 3),
                                                                           after_file=True)))
    runs.append((signal.SIGINT, "finding-2-workers", [*finding[:-4], "--workers", "2", "-o", "f"], found,
                 in_the_work(signal.SIGINT, round(r.uniform(0, 1.0), 3), HUNT_START_UP)))
    for what, argv, outputs in (("finding", finding, found), ("exhaustive", exhaustive, steps)):
        runs.append((signal.SIGKILL, what, argv, outputs, SignalPlan(signal.SIGKILL, round(r.uniform(0, WRITING), 3),
                                                                     after_file=True)))
    for signum, what, argv, outputs, plan in runs:
        b.add(f"signal:{_signal_name(signum, plan)}-hunt-{what}", "hunt", argv, SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan, outputs=dict(outputs),
              limit=BIG_LIMIT)
