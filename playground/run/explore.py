"""`bully-tui hunt --exhaustive`: every run of a tiny cluster, up to a bound.

The random hunt (hunt.py) samples schedules; this one enumerates them. It drives the
engine stepped by hand (harness.py), as the interaction files do, and searches breadth
first over what can happen next:

  timed (the default)   each message's delay is one of the delay bounds (or also their
                        midpoint, `midpoint`: many times the states), chosen when it is
                        sent; what happens next is what is due first (deliveries before
                        timers at one instant, as the engine runs them). The synchronous
                        model, made finite.
  asynchronous          no time: any link's head message may arrive next, any running
                        timer may fire. FIFO per link is all that holds: a timeout says
                        nothing about a peer (lecture 3-1's asynchronous model).

In both, between steps, a node may crash or a crashed one recover (up to `faults` in
all), and, each up to its own bound, an `elect`, a `want` (with a lock), a join or a
leave may come (explore_steps.py says when). (A timer drawn from a range, Raft's
election timeout, takes the run's own draw: the search enumerates delays and orders,
not draws.)

Rules:
  1. A state is every node's machine (its variables and safe storage), whether it is up,
     its running timers, and every message in flight; in the timed model, with the
     times of timers and arrivals relative to now, so that a state reached at two
     moments is one. A state seen before is not explored again.
  2. Breadth first: the first counterexample found has the fewest steps.
  3. Bounds: the faults, elects, requests (`want`), joins and leaves; the steps of a run
     (`depth`); in the timed model its virtual time (`horizon`); and the states in all
     (`most`). The result says which bound was reached, so "no counterexample" always
     says up to where.
  4. Safety (SLE1, split brain, mutual exclusion): the monitor judges each instant as it
     ends. What must happen eventually (SLE2, the critical section's liveness) needs
     time: the timed model judges it within the horizon; the asynchronous one has none.
  5. A finding is written as an interaction file (interaction.py): the cluster, then
     each step (`at T`, `deliver A B`, `fire N NAME`, `crash N`, ...) with what it did,
     so a person can read it and a test can run it; and as a transcript marked as
     stepped by hand, to replay and export (no settings and commands re-create it).
  6. With a lock, nodes hold the critical section `hold` seconds and ask for it only by
     `want` (the workload's think time is none): the cluster line says so.
  7. The network (`network`): lossless FIFO links (none of the faults: the model every
     algorithm assumes), or links that may drop, duplicate or reorder, as DSLabs'
     checker lets them, the drops and the copies each within their bound
     (explore_steps.py's rule 5). A finding on such a network is a run of the user as
     the network (core/by_hand.py): `by-hand` at the start, then each step as its
     command at its time (`deliver ID`, `drop ID`, `duplicate ID`, `fire K NAME`, `crash
     K`, ...), written as a scenario and a transcript that `verify` re-creates
     (explore_network.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from protocol import machine

from ..core.config import ClusterConfig, Workload, to_us
from ..core.monitor import describe
from ..record.recorder import Recorder
from ..record.transcript import Header
from . import interrupt
from .explore_state import SKIP, State, Stepper
from .explore_steps import (
    DROP,
    DUPLICATE,
    NOTHING_SPENT,
    SAFETY,
    Node,
    Search,
    Trail,
    broken,
    delays,
    successors,
    tick,
)
from .hunt_space import LIVENESS  # (judged in the timed model only: rule 4)
from .interaction import Block, Interaction, write_blocks
from .session import fewer_gc_passes

__all__ = ["LIVENESS", "SAFETY", "SKIP", "Bounds", "Counterexample", "Explored", "Model", "explore", "interaction_text",
           "record", "steps_taken"]


@dataclass(frozen=True, slots=True)
class Bounds:
    faults: int = 2  # crashes and recoveries
    depth: int = 40
    horizon: float = 60.0  # timed: virtual seconds
    most: int = 200_000  # states
    elects: int = 0
    requests: int = 0  # `want`, with a lock
    joins: int = 0
    leaves: int = 0
    drops: int = 1  # rule 7, with a network that drops
    duplicates: int = 1  # rule 7, with a network that duplicates


@dataclass(frozen=True, slots=True)
class Model:
    algorithm: str
    nodes: int
    config: ClusterConfig
    timed: bool = True
    midpoint: bool = False  # timed: a delay may also be the midpoint of the bounds
    hold: float = Workload().hold[0]  # with a lock: seconds a node holds the critical section (rule 6)
    network: frozenset[str] = frozenset()  # rule 7: what the links may do besides lossless FIFO (drop, duplicate, reorder)

    @property
    def cluster_line(self) -> str:
        """The interaction file's first command: this cluster."""
        c = self.config
        delay = f"{c.delay_min:g}:{c.delay_max:g}"
        parts = [f"cluster {self.algorithm} {self.nodes}", f"timeout={c.timeout:g}", f"delay={delay}",
                 f"probe-interval={c.probe_interval:g}"]
        if c.coordinator_timeout is not None:
            parts.append(f"coordinator-timeout={c.coordinator_timeout:g}")
        if machine(self.algorithm).mutex is not None:
            parts += ["cs-think=none", f"cs-hold={self.hold:g}"]
        return " ".join(parts)

    @property
    def delays_us(self) -> tuple[int, ...]:
        c = self.config
        delays = {c.delay_min, c.delay_max} | ({(c.delay_min + c.delay_max) / 2} if self.midpoint else set())
        return tuple(sorted(to_us(d) for d in delays))


@dataclass(slots=True)
class Explored:
    states: int = 0  # distinct states reached
    steps: int = 0  # steps taken (a state reached again counts as a step)
    deepest: int = 0
    bound: str | None = None  # the bound that cut the search short (None: it ran out of states)
    seen_bytes: int = 0  # what telling a state seen before from a new one holds, in bytes (at the end)


@dataclass(frozen=True, slots=True)
class Counterexample:
    property: str
    text: str
    steps: tuple[str, ...]  # after `cluster` and `boot`


def explore(model: Model, prop: str | None, bounds: Bounds = Bounds(),
            on_progress: Callable[[Explored], None] | None = None,
            workers: int = 1) -> tuple[Counterexample | None, Explored]:
    """Search breadth first for a run that breaks `prop` (None: any safety property):
    rule 2, with rule 3's bounds; on `workers` processes, once a level is wide enough to
    share (explore_workers.py: the same search, the same finding). A signal is raised
    between two states (the caller may take the signals `interrupt.checked()`)."""
    with fewer_gc_passes():  # (its states hold no cycles, and the collector's passes would rescan them)
        return _explore(model, prop, bounds, on_progress, workers)


def _explore(model: Model, prop: str | None, bounds: Bounds, on_progress: Callable[[Explored], None] | None,
             workers: int) -> tuple[Counterexample | None, Explored]:
    explored = Explored()
    seen: set[bytes] = set()
    search, state, trail = _start(model, prop, bounds, explored)
    stepper = search.stepper
    try:
        violation = broken(stepper.h, prop)  # (asynchronous: the start-up's instant is over)
        if violation is not None:
            return Counterexample(violation.property, describe(violation), trail.steps()), explored
        choices = delays(search, state, {})
        level: list[Node] = [(state, arrivals, NOTHING_SPENT, trail) for arrivals in choices]
        state.waiting = len(choices)
        while level:
            if workers > 1 and len(level) >= SHARED_FROM * workers:
                from .explore_workers import shared

                return shared(search, level, seen, workers, on_progress)
            found, level = _level(search, level, seen, on_progress)
            if found is not None or level is None:
                return found, explored
        return None, explored
    finally:
        explored.seen_bytes = _seen_bytes(seen) + stepper.table_bytes()


# Entries of a level for each worker before the level is shared: a wider level gives each
# worker a more even share of what is to come (docs/benchmarks.md measures it), and a
# narrow one is not worth a fork.
SHARED_FROM = 1000
DEPTH, HORIZON = "depth", "horizon"  # what `grow` says of a node past the depth, and when the horizon was reached


def _level(search: Search, level: list[Node], seen: set[bytes],
           on_progress: Callable[[Explored], None] | None) -> tuple[Counterexample | None, list[Node] | None]:
    """One level of the search, in order: (a finding, the next level; None: the search
    is over)."""
    explored, stepper, most = search.explored, search.stepper, search.bounds.most
    after: list[Node] = []
    for node in level:
        interrupt.raise_if_stopped()
        for item in grow(search, node):
            if type(item) is not tuple:
                if type(item) is Counterexample:
                    return item, None
                explored.bound = item
                continue
            child, spent, trail, choices = item
            for arrivals in choices:
                new = visit(explored, seen, stepper.key(child, arrivals, spent), trail.depth, most, on_progress)
                if new is None:
                    return None, None
                if new:
                    after.append((child, arrivals, spent, trail))
                    child.waiting += 1
    return None, after


def grow(search: Search, node: Node) -> Iterator[tuple | Counterexample | str]:
    """A node's successors, in order: (state, what it has used, its steps, its choices of
    arrivals) each, a finding (the last), or a bound reached (DEPTH, HORIZON) where it
    was (rule 3)."""
    parent = node[0]
    parent.waiting -= 1
    if node[3].depth >= search.bounds.depth:  # rule 3
        yield DEPTH
        return
    for child, spent, trail, choices, violation in successors(search, node):
        if search.horizon_met:  # (on the way to this one)
            search.horizon_met = False
            yield HORIZON
        if violation is not None:
            yield Counterexample(violation.property, describe(violation), trail.steps())
            return
        yield child, spent, trail, choices
    if search.horizon_met:
        search.horizon_met = False
        yield HORIZON
    if not parent.waiting:
        parent.taken = None  # (its successors are all made: explore_steps' rule 4)


def visit(explored: Explored, seen: set[bytes], key: bytes, depth: int, most: int,
          on_progress: Callable[[Explored], None] | None) -> bool | None:
    """A state one step on (rule 1): whether it is new (None: the states bound is reached)."""
    explored.steps += 1
    if key in seen:
        return False
    seen.add(key)
    explored.states += 1
    explored.deepest = max(explored.deepest, depth)
    if explored.states >= most:
        explored.bound = "states"
        return None
    if on_progress is not None and explored.states % 1000 == 0:
        on_progress(explored)
    return True


def steps_taken(steps: tuple[str, ...]) -> int:
    """Steps of a run (the `at` lines say when; they are no step)."""
    return sum(1 for step in steps if not step.startswith("at "))


def _start(model: Model, prop: str | None, bounds: Bounds, explored: Explored) -> tuple[Search, State, Trail]:
    """The cluster, booted: every node starts at t=0."""
    interaction = Interaction()
    said = interaction.run(model.cluster_line)
    if said != ["ok"]:
        raise ValueError(f"{model.cluster_line}: {' '.join(said)}")
    h = interaction.h
    faulty = bool(model.network & {DROP, DUPLICATE})
    search = Search(model.timed, prop, bounds, Stepper(h, model.timed, faulty), explored, model.delays_us,
                    to_us(bounds.horizon), model.timed and prop in LIVENESS, model.network)
    h.events.clear()
    h.boot()
    own = tick(search, h, ())
    return search, search.stepper.start(), Trail(None, own, 0, None)


def _seen_bytes(seen: set[bytes]) -> int:
    """The seen set's own bytes: its table and its keys (16-byte digests, one size)."""
    return sys.getsizeof(seen) + len(seen) * (sys.getsizeof(next(iter(seen))) if seen else 0)


def record(model: Model, found: Counterexample, path: str, overwrite: bool = False) -> None:
    """Rule 5: the finding as a transcript too, marked as stepped by hand (no recipe re-creates
    it): to replay it in the app, go back and forth in it, and export its diagram."""
    interaction = Interaction()
    interaction.run(model.cluster_line)
    engine = interaction.h.engine
    header = Header(model.algorithm, list(engine.ids), engine.seed, model.config, workload=engine.workload, by_hand=True)
    with Recorder.create(path, header, overwrite) as recorder:
        engine.subscribe(recorder)
        for step in ("boot", *found.steps):
            interaction.run(step)


def interaction_text(model: Model, found: Counterexample, claim: list[str]) -> str:
    """Rule 5: the finding as an interaction file, each step with what it did."""
    interaction = Interaction()
    commands = [model.cluster_line, "boot", *found.steps]
    blocks = [Block([*(f"# {line}" for line in claim), ""] if n == 0 else [], command, []) for n, command in enumerate(commands)]
    outputs = [interaction.run(command) for command in commands]
    return write_blocks(blocks, outputs, [])
