"""The hunt's speed, and what it does not find in its model.

    python bench/hunt.py [--schedules 10000] [--speed-schedules 1000] [--speed-only]

1. Speed: schedules per second of N = 2..8 (the engine alone, no transcript, each run
   stopped at the first report of the property), for each election algorithm, with one
   process, with two (this machine's cores), and on a local Dask cluster of two worker
   processes of one thread each (`hunt --scheduler`; started once, before the timing;
   left out, saying why, without the cluster extra). A search that finds nothing runs
   every schedule to its end, so it is the slow case: the property is SLE1 (the ring,
   Garcia-Molina, Stoller) or SLE2 (the epoch Bully, which does not claim SLE1, and
   classic, which keeps neither, so its search ends at once). Then the exhaustive
   search's rate on the issue's search (Garcia-Molina, 3 nodes, timed, two faults:
   bench/explore.py has the others), distinct states a second. First, the day's
   yardstick: the bare trio hand-off of bench/throughput.py (items a second, best of
   three), since this machine's speed moves by a factor of two from day to day.
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
import logging
import os
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.monitor import SLE1, SLE2  # noqa: E402
from playground.run.hunt import Hunt, search  # noqa: E402
from playground.run.hunt_report import searched_text  # noqa: E402
from playground.run.hunt_space import Space  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import baseline_run  # noqa: E402  (bench/throughput.py: the yardstick)

CLAIMS = {"garcia-molina": SLE1, "stoller": SLE1, "ring": SLE1, "epoch-bully": SLE2}
CRASHES_ONLY = ("crash", "recover", "elect")


def timed(hunt: Hunt, workers: int):
    started = time.perf_counter()
    result = search(hunt, workers)
    return result, time.perf_counter() - started


def cpu_here() -> float:
    """CPU seconds of this process and of its children that have ended (a pool's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed_with_cpu(hunt: Hunt, workers: int):
    """(result, wall seconds, CPU seconds of every process that took part)."""
    wall, cpu = time.perf_counter(), cpu_here()
    result = search(hunt, workers)
    return result, time.perf_counter() - wall, cpu_here() - cpu


def on_a_cluster(hunt: Hunt, address: str):
    from playground.run.hunt_cluster import on_cluster

    with on_cluster(address) as batches:  # (connecting is not timed: the cluster runs already)
        workers = batches.client.run(_worker_cpu)
        wall, cpu = time.perf_counter(), cpu_here()
        result = search(hunt, batches=batches)
        wall, cpu = time.perf_counter() - wall, cpu_here() - cpu
        spent = sum(batches.client.run(_worker_cpu).values()) - sum(workers.values())
        return result, wall, cpu + spent


def _worker_cpu() -> float:
    import psutil  # (distributed's own dependency)

    times = psutil.Process().cpu_times()
    return times.user + times.system


@contextmanager
def local_cluster() -> Iterator[str | None]:
    """A local Dask cluster of two worker processes (one thread each): its address, or
    None without the cluster extra."""
    try:
        from distributed import LocalCluster
    except ImportError:
        print("(no Dask cluster: pip install 'bully-tui[cluster]')")
        yield None
        return
    started = time.perf_counter()
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster:
        print(f"(a local Dask cluster of 2 worker processes, started in {time.perf_counter() - started:.1f} s)")
        yield cluster.scheduler_address


def speed(schedules: int) -> None:
    print(f"speed: {schedules:,} schedules each, N = 2..8, within the model; schedules a second of wall time "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores), and a second of CPU, every process "
          "that took part (on a shared machine, the steadier figure)")
    with local_cluster() as address:
        print("| algorithm | property | 1 process | 2 processes | Dask cluster of 2 |")
        print("|---|---|---:|---:|---:|")
        for algorithm, prop in (*CLAIMS.items(), ("classic", SLE2)):
            hunt = Hunt(Space(algorithm), prop, 1, schedules)
            runs = [timed_with_cpu(hunt, 1), timed_with_cpu(hunt, 2),
                    *([on_a_cluster(hunt, address)] if address else [])]
            rates = [f"{r.searched.schedules / wall:,.0f}/s ({r.searched.schedules / cpu:,.0f}/s CPU)"
                     for r, wall, cpu in runs] + ["-"] * (3 - len(runs))
            print(f"| {algorithm} | {prop} | {' | '.join(rates)} |", flush=True)
    exhaustive_rate()


def exhaustive_rate() -> None:
    from playground.core.config import ClusterConfig
    from playground.run.explore import Bounds, Model, explore

    edge = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
    wall, cpu = time.perf_counter(), time.process_time()
    _, explored = explore(Model("garcia-molina", 3, edge, True), None, Bounds(faults=2))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"exhaustive: Garcia-Molina, 3 nodes, timed, two faults: {explored.states:,} states in {wall:.1f} s "
          f"({cpu:.1f} s of CPU): {explored.states / wall:,.0f} states/s ({explored.states / cpu:,.0f} a second of CPU)",
          flush=True)


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


def yardstick(items: int = 200_000) -> None:
    print(f"bare trio hand-off today: {items / min(baseline_run(items) for _ in range(3)):,.0f} items/s "
          "(bench/throughput.py's baseline: compare figures of one day)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedules", type=int, default=10_000)
    p.add_argument("--speed-schedules", type=int, default=1000, help="schedules of each speed search")
    p.add_argument("--speed-only", action="store_true")
    p.add_argument("--exhaustive-only", action="store_true")
    args = p.parse_args()
    if args.exhaustive_only:
        exhaustive()
        return
    yardstick()
    speed(args.speed_schedules)
    if not args.speed_only:
        claims(args.schedules)
        exhaustive()


if __name__ == "__main__":
    main()
