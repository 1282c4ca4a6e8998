"""The hunt's speed, and what it does not find in its model.

    python bench/hunt.py [--schedules 10000] [--speed-only]

1. Speed: schedules per second of N = 2..8 (the engine alone, no transcript, each run
   stopped at the first report of the property), for each election algorithm, with one
   process and with two (this machine's cores). A search that finds nothing runs every
   schedule to its end, so it is the slow case: the property is SLE1 (the ring, Garcia-
   Molina, Stoller) or SLE2 (the epoch Bully, which does not claim SLE1, and classic,
   which keeps neither, so its search ends at once).
2. No counterexample: each algorithm's claim, within the model (T >= 2 x max delay), with
   --schedules schedules (seed 1), twice: with crash, recover and elect only, and with
   every command it takes (join and leave too). Prints the finding, if any, as the
   command would.
3. Exhaustive (`--exhaustive`): every algorithm, 3 nodes, T = 4 s, delays 1 or 2 s,
   asynchronous without faults and timed with one fault, and Garcia-Molina with two
   faults and with 4 nodes: what is found (its steps) or how many states were explored.

    python bench/hunt.py --exhaustive-only
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.monitor import SLE1, SLE2  # noqa: E402
from playground.run.hunt import Hunt, search  # noqa: E402
from playground.run.hunt_report import searched_text  # noqa: E402
from playground.run.hunt_space import Space  # noqa: E402

CLAIMS = {"garcia-molina": SLE1, "stoller": SLE1, "ring": SLE1, "epoch-bully": SLE2}
CRASHES_ONLY = ("crash", "recover", "elect")


def timed(hunt: Hunt, workers: int):
    started = time.perf_counter()
    result = search(hunt, workers)
    return result, time.perf_counter() - started


def speed(schedules: int) -> None:
    print(f"speed: {schedules:,} schedules each, N = 2..8, within the model")
    print("| algorithm | property | 1 process | 2 processes |")
    print("|---|---|---:|---:|")
    for algorithm, prop in (*CLAIMS.items(), ("classic", SLE2)):
        rates = []
        for workers in (1, 2):
            result, seconds = timed(Hunt(Space(algorithm), prop, 1, schedules), workers)
            rates.append(f"{result.searched.runs / seconds:,.0f}/s")
        print(f"| {algorithm} | {prop} | {rates[0]} | {rates[1]} |", flush=True)


def claims(schedules: int) -> None:
    print(f"\nno counterexample: {schedules:,} schedules, seed 1, two processes")
    print("| algorithm | property | commands | result | searched | time |")
    print("|---|---|---|---|---|---:|")
    for algorithm, prop in CLAIMS.items():
        for commands in (CRASHES_ONLY, ()):
            hunt = Hunt(Space(algorithm, chosen=commands), prop, 1, schedules)
            result, seconds = timed(hunt, 2)
            f = result.finding
            found = "none" if f is None else f"FOUND {f.size} at t={f.t:g}: {f.text} {f.schedule}"
            print(f"| {algorithm} | {prop} | {', '.join(hunt.space.commands)} | {found} | "
                  f"{searched_text(result.searched)} | {seconds:.0f} s |", flush=True)


def exhaustive() -> None:
    from playground.core.config import ClusterConfig
    from playground.run.explore import Bounds, Model, explore, steps_taken

    edge = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
    print("\nexhaustive: T = 4 s, delays 1 or 2 s (timed), no probing; SLE1 or split brain")
    print("| algorithm | N | model | faults | result | states | time |")
    print("|---|---:|---|---:|---|---:|---:|")
    runs = [(a, 3, False, 0) for a in ("classic", "garcia-molina", "stoller", "ring", "epoch-bully", "raft")]
    runs += [(a, 3, True, 1) for a in ("classic", "garcia-molina", "stoller", "ring", "epoch-bully", "raft")]
    runs += [("garcia-molina", 3, True, 2), ("garcia-molina", 4, True, 0), ("ring", 4, True, 0)]
    for algorithm, nodes, timed, faults in runs:
        started = time.perf_counter()
        found, explored = explore(Model(algorithm, nodes, edge, timed), None, Bounds(faults=faults))
        result = (f"{found.property} in {steps_taken(found.steps)} steps" if found is not None
                  else f"none ({'complete' if explored.bound is None else 'cut by ' + explored.bound})")
        print(f"| {algorithm} | {nodes} | {'timed' if timed else 'async'} | {faults} | {result} | {explored.states:,} | "
              f"{time.perf_counter() - started:.1f} s |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedules", type=int, default=10_000)
    p.add_argument("--speed-only", action="store_true")
    p.add_argument("--exhaustive-only", action="store_true")
    args = p.parse_args()
    if args.exhaustive_only:
        exhaustive()
        return
    speed(1000)
    if not args.speed_only:
        claims(args.schedules)
        exhaustive()


if __name__ == "__main__":
    main()
