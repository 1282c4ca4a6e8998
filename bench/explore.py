"""The exhaustive search's speed and memory (`bully-tui hunt --exhaustive`, run/explore.py).

    python bench/explore.py [--quick] [--case NAME ...] [--workers 1,2]

Each search runs in a process of its own (so that its peak memory is its own), 3 nodes,
T = 4 s, delays 1 or 2 s, no probing (the edge of the model, as bench/hunt.py's):

  issue       Garcia-Molina, timed, two faults: issue 34's search (159,678 states)
  gm-1        Garcia-Molina, timed, one fault (tests/test_explore.py's safety test)
  classic-1   classic, timed, one fault, SLE1 (the tests' classic_with_a_crash)
  ring-async  the ring, asynchronous, no faults, at most 20,000 states (the tests')
  stoller-async  Stoller, asynchronous, no faults
  lamport     Lamport's lock beside classic Bully, timed, no faults, one `want` anywhere,
              every run to its end (the figure beside TLC's MCLamportMutex)

For each: what was found, distinct states, steps, wall and CPU seconds (the machine is
shared: the CPU time is the steadier figure), distinct states a second of each, the seen
set's bytes a state (as the search reports it), and the process's peak resident memory
over the states (everything: the frontier, the seen set, the interpreter, divided by the
states; meaningless for a search of a few hundred states). `--quick` leaves out `issue`.
`--workers 1,2`: each search on one process, then on two (`hunt --exhaustive --workers`:
the CPU column is then every process's, the search's and its workers'; the peak is the
search's process alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CASES = {  # name -> (algorithm, timed, faults, property, most, other bounds)
    "issue": ("garcia-molina", True, 2, None, 200_000, {}),
    "gm-1": ("garcia-molina", True, 1, None, 200_000, {}),
    "classic-1": ("classic", True, 1, "sle1", 200_000, {}),
    "ring-async": ("ring", False, 0, None, 20_000, {}),
    "stoller-async": ("stoller", False, 0, None, 200_000, {}),
    "lamport": ("classic+lamport", True, 0, "mutex", 1_000_000, {"requests": 1, "depth": 10_000}),
}


def run_case(name: str, workers: int = 1) -> dict:
    """One search, in this process: its figures, as a dict."""
    from playground.core.config import ClusterConfig
    from playground.run.explore import Bounds, Model, explore, steps_taken

    algorithm, timed, faults, prop, most, other = CASES[name]
    edge = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), _cpu()
    found, explored = explore(Model(algorithm, 3, edge, timed), prop, Bounds(faults=faults, most=most, **other),
                             workers=workers)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024
    return {"case": name, "workers": workers, "found": None if found is None else f"{found.property} in {steps_taken(found.steps)} steps",
            "states": explored.states, "steps": explored.steps, "bound": explored.bound, "wall": wall, "cpu": cpu,
            "seen_bytes": getattr(explored, "seen_bytes", None), "peak_growth": peak}


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="leave out the issue's search (over a minute before issue 34)")
    p.add_argument("--case", action="append", choices=list(CASES), help="only these searches")
    p.add_argument("--workers", default="1", help="processes of each search, a comma list (default 1)")
    p.add_argument("--one", choices=list(CASES), help=argparse.SUPPRESS)  # (the child process's)
    args = p.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one, int(args.workers))))
        return
    names = args.case or [n for n in CASES if not (args.quick and n == "issue")]
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: on a shared machine, compare the CPU column)")
    print("| search | workers | found | states | steps | wall | CPU | states/s (wall / CPU) | seen set B/state | peak B/state |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, workers in [(n, w) for n in names for w in args.workers.split(",")]:
        done = subprocess.run([sys.executable, __file__, "--one", name, "--workers", workers], capture_output=True,
                              text=True, check=True)
        r = json.loads(done.stdout)
        seen = "-" if r["seen_bytes"] is None else f"{r['seen_bytes'] / r['states']:.0f}"
        print(f"| {name} | {workers} | {r['found'] or 'none (' + (r['bound'] or 'complete') + ')'} | {r['states']:,} | "
              f"{r['steps']:,} | {r['wall']:.2f} s | {r['cpu']:.2f} s | "
              f"{r['states'] / r['wall']:,.0f} / {r['states'] / r['cpu']:,.0f} | {seen} | "
              f"{r['peak_growth'] / r['states']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
