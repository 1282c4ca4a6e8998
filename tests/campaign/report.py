"""What a run of the campaign comes to: a summary (outcomes, failure classes, a table by
subcommand) and a table of the failing cases."""

from __future__ import annotations

import os
from collections import Counter

from . import runner
from .cases import FAILURES, GROUPS
from .runner import Result


def summary(results: list[Result], seconds: float, setup: float) -> str:
    cpu = runner.LAST_CPU  # (the last run_campaign's)
    out = [(f"{len(results)} cases in {seconds:.1f} s wall time (setup {setup:.1f} s); the processes took "
            f"{cpu:.0f} s of CPU ({cpu / (os.cpu_count() or 1):.0f} s per core)")]
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
