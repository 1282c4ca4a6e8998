"""The campaign's command line, from the repository's root:

    python -m tests.campaign [--root DIR] [--workers 2] [--seed N] [--report] [--only TEXT] [--list]
                             [--sample]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from tests import campaign

from .build import DEFAULT_SEED, build_cases, suite_sample
from .report import failure_table, summary
from .runner import REPO, WORKERS, Result, run_campaign


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=campaign.__doc__.split("\n")[0])
    p.add_argument("--root", default=str(REPO), help="the checkout to test (default: this one)")
    p.add_argument("--workers", type=int, default=WORKERS, help="cases at a time (default 2)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--report", action="store_true", help="list every failing case")
    p.add_argument("--only", help="run only the cases whose name contains this")
    p.add_argument("--list", action="store_true", help="list the cases and stop")
    p.add_argument("--sample", action="store_true", help="only the suite's sample of the cases (tests/test_campaign.py)")
    p.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    p.add_argument("--json", help="write every result to this file")
    args = p.parse_args(argv)
    cases = build_cases(args.seed)
    if args.sample:
        cases = suite_sample(cases, args.seed)
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
            "returncode": r.returncode, "stderr": r.stderr[:2000], "seconds": round(r.seconds, 3),
            "cpu": round(r.cpu, 3)} for r in results],
            ensure_ascii=False, indent=1))
    return 1 if any(r.failure for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
