"""8. Signals at seeded random moments, from the very start (0 s: Python's own start-up)
on: to headless runs, export and verify of a big transcript, --compare."""

from __future__ import annotations

import dataclasses
import signal

from .cases import (
    ACCEPT,
    BIG_LIMIT,
    EXPORT_EXTENSIONS,
    SEARCHED,
    SIGNAL,
    START_UP,  # (the early signals are drawn from 0 to it; a moment drawn later is of the work: in_the_work)
    Base,
    Builder,
    SignalPlan,
    in_the_work,
)

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
        # From the very start, more of them early: start-up is fragile. Half a second into
        # its run, a run writes as it will for the rest of its life, so later moments add CPU,
        # not cases.
        delay = round((START_UP + 0.5) * r.random() ** 1.5, 3)
        again = 50 if n >= doubled else None
        transcript = n % 17 != 5  # a couple without a transcript
        argv = ["--headless", "--algorithm", algorithm, "--nodes", str(nodes), "--until", "1000000",
                *(["--ids", "uuid"] if uuid else []), *(["--transcript", "t.jsonl"] if transcript else [])]
        name = signal.Signals(signum).name + ("x2" if again else "")
        # A moment past the start-up is one of the run's (in_the_work), counted from when its
        # transcript appears (its beginning, START_UP in) if it writes one.
        plan = in_the_work(signum, delay, START_UP, again)
        if transcript and plan.after_start:
            plan = dataclasses.replace(plan, after_start=False, after_file=True)
        b.add(f"signal:{name}@{plan.moment()}-{algorithm}-{nodes}{'-uuid' if uuid else ''}", "headless", argv, SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan,
              outputs={"t.jsonl": "transcript"} if transcript else {}, limit=BIG_LIMIT,
              verify_after=transcript and n in verify_sample)
    # SIGINT (and a SIGTERM) during export and verify of a big transcript, and during --compare
    big = {"big.jsonl": Base("big")}
    for fmt, signum in [("svg", signal.SIGINT), ("mermaid", signal.SIGINT), ("shiviz", signal.SIGINT),
                        (r.choice(list(EXPORT_EXTENSIONS)), signal.SIGTERM)]:
        plan = in_the_work(signum, round(r.uniform(0.3, 1.0), 3), START_UP)  # (0-0.7 s into its work)
        out = f"out.{EXPORT_EXTENSIONS[fmt]}"
        b.add(f"signal:{signal.Signals(signum).name}@{plan.moment()}-export-{fmt}", "export",
              ["export", "big.jsonl", "--format", fmt, "-o", out], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan,
              files=dict(big), outputs={out: "svg" if fmt == "svg" else "text"}, limit=BIG_LIMIT)
    for signum in [signal.SIGINT, signal.SIGINT, signal.SIGHUP]:
        plan = in_the_work(signum, round(r.uniform(0.3, 1.0), 3), START_UP)
        b.add(f"signal:{signal.Signals(signum).name}@{plan.moment()}-verify", "verify", ["verify", "big.jsonl"], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan,
              files=dict(big), limit=BIG_LIMIT)
    for _ in range(2):
        plan = in_the_work(signal.SIGINT, round(r.uniform(0.3, 1.5), 3), START_UP)  # (the first algorithms' runs)
        b.add(f"signal:SIGINT@{plan.moment()}-compare-64", "compare", ["--headless", "--compare", "--nodes", "64"],
              SIGNAL, names="interrupted", signal=plan, limit=BIG_LIMIT)
    gen_ignored(b)
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


def gen_ignored(b: Builder) -> None:
    """Started with SIGINT or SIGHUP ignored (nohup, a script's background job), a command
    runs to its end as if none had come, its files whole: the signal, sent at any moment
    (twice, for some), stays ignored. A headless run (its trio run's receiver) and a hunt
    (its search, which takes the signals `checked`). The moments count from bully-tui's
    first statement (after_start), so the signal comes in the run or the search, where a
    handler put in place would take it (in Python's start-up, an ignored signal is
    discarded whatever comes after)."""
    r = b.rng
    # (Runs of 0.6 to 0.8 s of CPU, signalled in their first 0.3 s, 0.35 with the second: the
    # judge asks that the signal came before the end, or the case would have tested nothing.)
    runs = [("headless", ["--headless", "--algorithm", "stoller", "--nodes", "20", "--until", "150", "--transcript",
                          "t.jsonl"], ACCEPT, {}, {"t.jsonl": "transcript"}),
            ("hunt", ["hunt", "--algorithm", "garcia-molina", "--property", "sle1", "--budget", "40", "--workers", "1",
                      "-o", "f"], SEARCHED, {}, {"f.scenario": "text", "f.jsonl": "transcript"})]
    for n, signum in enumerate([signal.SIGINT, signal.SIGHUP] * len(runs)):
        group, argv, expect, files, outputs = runs[n // 2]
        plan = SignalPlan(signum, round(r.uniform(0.05, 0.3), 3), again_ms=50 if n % 3 == 0 else None, ignored=True,
                          after_start=True)
        b.add(f"signal-ignored:{signal.Signals(signum).name}@{plan.moment()}-{group}", group, argv, expect, signal=plan,
              files=dict(files), outputs=dict(outputs), limit=BIG_LIMIT)
