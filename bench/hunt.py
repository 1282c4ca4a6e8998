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
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.monitor import SLE1, SLE2  # noqa: E402
from playground.run.hunt import Hunt, Space, search  # noqa: E402
from playground.run.hunt_report import searched_text  # noqa: E402

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedules", type=int, default=10_000)
    p.add_argument("--speed-only", action="store_true")
    args = p.parse_args()
    speed(1000)
    if not args.speed_only:
        claims(args.schedules)


if __name__ == "__main__":
    main()
