"""How fast each algorithm heals: from the last crash or recovery to agreement.

    python bench/healing.py [--family wide|old] [--schedules N] [--seed 1] [--algorithms ring garcia-molina ...]

Random crash/recover schedules from random.Random(--seed), in one of two families:

  old   the shape of the hypothesis strategy in tests/test_random_schedules.py (which
        draws 2 to 6 nodes and 0 to 8 faults): 3 to 8 nodes, link delays in [min, max]
        with min one of 0.1, 0.25, 0.5, 1 and max that plus 0, 0.3, 0.5 or 1, T = 2 x max
        delay plus 0, 0.5 or 1 (the synchrony bound holds, sometimes exactly), P one of
        1, 2, 5; then 1 to 8 crashes and recoveries of random nodes (a down node
        recovers, an up one crashes), the first at t = 5 plus up to 2T + P, each next up
        to 2T + P after the one before, so they land mid-election. 31 schedules.
  wide  (the default) what an independent checker found the old one missed: 3 to 16
        nodes, 1 to 16 faults, T = 2 x max delay plus 0, 0.5, 1 or 3, faults closer
        together or further apart (each schedule draws its gap bound: T/2, 2T + P or
        6T + 2P), and the ring in a random order (sorted, reversed or shuffled: --ring;
        the other algorithms have none). 100 schedules.

A schedule that leaves every node down is drawn again. Every algorithm runs the same
schedules, on the engine (run_sync, no trio), for the algorithm's own settle_time
after the last fault and a second more (the monitor's SLE2 check is then in the
trace). `wall` is the time this process took to run them.

Healing time: from the last fault to the monitor's agreement (every up node normal
under the highest up node) that follows it; 0 if the cluster still agrees just after
the fault (a follower crashed, say). "never" if no agreement comes before the run ends.
Violations are the monitor's: SLE1 and split-brain episodes begun, and SLE2 reports.

The goal (issue 18): the ring's median at most 1.5 x Garcia-Molina's, its worst at
most 2 x Garcia-Molina's worst, and no SLE1 or split brain for the ring (a ring
schedule with any violation, or no agreement, is listed with its faults).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.core.commands import Crash, Recover, Scheduled  # noqa: E402
from playground.core.config import ClusterConfig  # noqa: E402
from playground.core.engine import Engine, run_sync  # noqa: E402
from playground.core.ids import ring_order  # noqa: E402
from protocol import ALGORITHMS  # noqa: E402

DEFAULT_ALGORITHMS = ("ring", "garcia-molina", "stoller", "epoch-bully", "classic")
FAMILIES = {"wide": 100, "old": 31}  # and how many schedules each draws by default
MEDIAN_GOAL, WORST_GOAL = 1.5, 2.0  # ring / garcia-molina


@dataclass(frozen=True)
class Schedule:
    nodes: int
    seed: int
    config: ClusterConfig
    faults: tuple[Scheduled, ...]

    @property
    def last_fault(self) -> float:
        return max((f.at for f in self.faults), default=0.0)

    def describe(self) -> str:
        c = self.config
        faults = " ".join(f"{f.at:g}:{f.command.name[0]}{f.command.node}" for f in self.faults)
        ring = "" if c.ring is None else f" ring={','.join(map(str, c.ring))}"
        return (f"n={self.nodes} delay={c.delay_min:g}-{c.delay_max:g} T={c.timeout:g} P={c.probe_interval:g} "
                f"seed={self.seed}{ring} [{faults}]")

    def command_line(self, algorithm: str) -> str:
        """The bully-tui command that runs it (to trace it: add --transcript FILE)."""
        c = self.config
        ring = "" if c.ring is None or not ALGORITHMS[algorithm].on_a_ring else f" --ring {','.join(map(str, c.ring))}"
        at = " ".join(f"--at '{f.at:g} {f.command.name} {f.command.node}'" for f in self.faults)
        return (f"bully-tui --headless --algorithm {algorithm} --nodes {self.nodes} --delay {c.delay_min:g}:{c.delay_max:g} "
                f"--timeout {c.timeout:g} --probe-interval {c.probe_interval:g} --seed {self.seed}{ring} {at} "
                f"--until {self.last_fault + 120:g}")


def draw_schedule(rng: random.Random, family: str = "old") -> Schedule:
    """One schedule of the family; drawn again until somebody is up at the end."""
    if family == "wide":
        return draw_wide(rng)
    while True:
        nodes = rng.randint(3, 8)
        delay_min = rng.choice([0.1, 0.25, 0.5, 1.0])
        delay_max = delay_min + rng.choice([0.0, 0.3, 0.5, 1.0])
        margin = rng.choice([0.0, 0.5, 1.0])
        config = ClusterConfig(timeout=2 * delay_max + margin, probe_interval=rng.choice([1.0, 2.0, 5.0]),
                               delay_min=delay_min, delay_max=delay_max)
        seed = rng.randint(0, 2**16)
        faults: list[Scheduled] = []
        t = 5.0
        down: set[int] = set()
        for _ in range(rng.randint(1, 8)):
            node = rng.randint(1, nodes)
            recovery = node in down
            t = round(t + rng.uniform(0, 2 * config.timeout + config.probe_interval), 3)
            (down.discard if recovery else down.add)(node)
            faults.append(Scheduled(t, (Recover if recovery else Crash)(node), "bench"))
        if len(down) < nodes:
            return Schedule(nodes, seed, config, tuple(faults))


def draw_wide(rng: random.Random) -> Schedule:
    """One schedule of the wide family (see the module's docstring)."""
    while True:
        nodes = rng.randint(3, 16)
        delay_min = rng.choice([0.1, 0.25, 0.5, 1.0])
        delay_max = delay_min + rng.choice([0.0, 0.3, 0.5, 1.0])
        margin = rng.choice([0.0, 0.5, 1.0, 3.0])
        config = ClusterConfig(timeout=2 * delay_max + margin, probe_interval=rng.choice([1.0, 2.0, 5.0]),
                               delay_min=delay_min, delay_max=delay_max)
        order = rng.choice(["sorted", "reversed", "shuffled"])
        config = replace(config, ring=ring_order(order, tuple(range(1, nodes + 1)), rng.randint(0, 2**16)))
        seed = rng.randint(0, 2**16)
        gap = rng.choice([config.timeout / 2, 2 * config.timeout + config.probe_interval,
                          6 * config.timeout + 2 * config.probe_interval])
        faults: list[Scheduled] = []
        t = 5.0
        down: set[int] = set()
        for _ in range(rng.randint(1, 16)):
            node = rng.randint(1, nodes)
            recovery = node in down
            t = round(t + rng.uniform(0, gap), 3)
            (down.discard if recovery else down.add)(node)
            faults.append(Scheduled(t, (Recover if recovery else Crash)(node), "bench"))
        if len(down) < nodes:
            return Schedule(nodes, seed, config, tuple(faults))


@dataclass
class Result:
    healing: float | None  # seconds from the last fault to agreement; None: never
    sle1: int
    split_brain: int
    sle2: int


def run(algorithm: str, schedule: Schedule) -> Result:
    cls = ALGORITHMS[algorithm]
    engine = Engine(cls, range(1, schedule.nodes + 1), schedule.config, schedule.seed)
    events = []
    engine.subscribe(events.extend)
    engine.schedule(schedule.faults)
    last = schedule.last_fault
    settle = cls.settle_time(schedule.nodes, schedule.config.protocol, schedule.config.delay_max)
    run_sync(engine, last + settle + 1)
    agreed_at_fault: int | None = None
    healing = None
    for e in events:
        if e.kind != "agreement":
            continue
        if e.t <= last:
            agreed_at_fault = e.leader  # the verdict as the fault's instant closed
        elif e.leader is not None and healing is None and agreed_at_fault is None:
            healing = round(e.t - last, 6)
    if agreed_at_fault is not None:
        healing = 0.0

    def begun(prop: str) -> int:
        return sum(1 for e in events if e.kind == "violation" and e.property == prop and e.phase == "begin")

    return Result(healing, begun("sle1"), begun("split_brain"), begun("sle2"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=list(FAMILIES), default="wide")
    parser.add_argument("--schedules", type=int, help="how many (default: 100 wide, 31 old)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--algorithms", nargs="+", default=list(DEFAULT_ALGORITHMS), choices=list(ALGORITHMS))
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per schedule")
    args = parser.parse_args(argv)

    count = args.schedules or FAMILIES[args.family]
    rng = random.Random(args.seed)
    schedules = [draw_schedule(rng, args.family) for _ in range(count)]
    results: dict[str, list[Result]] = {}
    wall: dict[str, float] = {}
    for algorithm in args.algorithms:
        start = time.perf_counter()
        results[algorithm] = [run(algorithm, s) for s in schedules]
        wall[algorithm] = time.perf_counter() - start

    print(f"{count} random crash/recover schedules, the {args.family} family, seed {args.seed}: "
          "seconds from the last fault to agreement\n")
    if args.verbose:
        print("  ".join(f"{a:>13}" for a in args.algorithms) + "  schedule")
        for i, s in enumerate(schedules):
            cells = []
            for a in args.algorithms:
                h = results[a][i].healing
                cells.append(f"{'never' if h is None else f'{h:g}':>13}")
            print("  ".join(cells) + f"  {s.describe()}")
        print()

    header = f"| {'algorithm':<13} | {'median':>8} | {'worst':>8} | {'never':>5} | {'SLE1':>4} | {'split brain':>11} " \
             f"| {'SLE2':>4} | {'wall':>6} |"
    print(header)
    print("|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|")
    summary: dict[str, tuple[float, float]] = {}
    for a in args.algorithms:
        rs = results[a]
        times = [r.healing for r in rs if r.healing is not None]
        never = len(rs) - len(times)
        median = statistics.median(times) if times else float("nan")
        worst = float("inf") if never else max(times, default=float("nan"))
        summary[a] = (median, worst)
        print(f"| {a:<13} | {median:>8.2f} | {worst:>8.2f} | {never:>5} | {sum(r.sle1 for r in rs):>4} "
              f"| {sum(r.split_brain for r in rs):>11} | {sum(r.sle2 for r in rs):>4} | {wall[a]:>5.1f}s |")

    ring = results.get("ring", [])
    for i, r in enumerate(ring):
        if r.healing is None or r.sle1 or r.split_brain or r.sle2:
            print(f"ring, schedule {i}: {r}  {schedules[i].command_line('ring')}")
    if "ring" in summary and "garcia-molina" in summary:
        (rm, rw), (gm, gw) = summary["ring"], summary["garcia-molina"]
        unsafe = sum(r.sle1 + r.split_brain for r in ring)
        median_ok, worst_ok = rm <= MEDIAN_GOAL * gm, rw <= WORST_GOAL * gw

        def verdict(ok: bool) -> str:
            return "met" if ok else "NOT met"

        print()
        print(f"ring / garcia-molina: median {rm / gm:.2f} (goal <= {MEDIAN_GOAL:g}: {verdict(median_ok)}), "
              f"worst {rw / gw:.2f} (goal <= {WORST_GOAL:g}: {verdict(worst_ok)}), "
              f"ring SLE1 + split brain {unsafe} ({'none: safe' if not unsafe else 'UNSAFE'})")
        print("goal met" if median_ok and worst_ok and not unsafe else "goal NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
