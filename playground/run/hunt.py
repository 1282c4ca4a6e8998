"""`bully-tui hunt`: search schedules for a run that breaks a property, and shrink it.

A schedule is what a person could have typed: how many nodes, the seed (which draws
every message's delay), T, the delay bounds, the probe interval, and a few commands at
their times (crash, recover, elect; join and leave where the algorithm takes them; want
with a mutex). It is run on the engine alone (no trio, no transcript) and stopped at
the monitor's first report of the property: the monitor is the judge, as in every run.

Rules:
  1. The model. Unless told to break it, T >= 2 x max delay (the synchrony every
     algorithm here assumes); links stay lossless and FIFO (no partitions, no held
     links), so a finding is a flaw of the algorithm in its own model, not of the model.
     Told to (--link-faults loss,duplicate,reorder), a schedule may also draw a loss or
     a duplication probability and links that reorder (config.Faults), none first: the
     shrinker takes each away if the property still breaks without it.
  2. Commands mean something: each names a node the command can act on then (the
     parser's own Members says which), so no schedule is refused.
  3. The search and the shrinking are hypothesis's (`find`): its generator draws
     schedules, and its shrinker makes a finding smaller (fewer nodes, fewer commands,
     earlier times, the first of each list of values) until no single simplification
     it knows still breaks the property. Writing a shrinker by hand would mean
     re-inventing what its choice-sequence shrinker already does for any strategy.
  4. Batches. The search is cut into batches of BATCH schedules; batch k draws from
     its own generator, seeded by (seed, k), and shrinks what it finds. The finding is
     that of the lowest batch that has one, so a budget in schedules gives the same
     finding, byte for byte, however many processes share the batches. (Hypothesis
     also draws, now and then, constants it finds in the source of local modules,
     which would make the search depend on which modules are loaded and on how the
     playground is installed; the hunt turns that off: `_no_local_constants`.)
  5. Each run lasts until c (SLE2's settle time) after its last command, and a second
     time c with a mutex (the liveness of the critical section is judged after c of
     waiting), so every property has the time to be judged.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from random import Random
from typing import Protocol, Self

# Hypothesis runs every package's plugin as it loads; trio's loads pytest (0.2 s of CPU per
# hunt) to seed a scheduler the hunt never runs. (In the suite it is loaded already.)
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from protocol import machine

from ..core.command_lines import Line, parse_command, parse_lines
from ..core.commands import Crash, Elect, Leave, Members, Recover, WantCs
from ..core.config import ClusterConfig, Workload
from ..core.engine import Engine, steps
from ..core.events import ViolationEvent
from ..core.monitor import describe
from . import interrupt
from .forked import worker_ignores_signals as _worker_ignores_signals
from .hunt_space import Space
from .session import Session

BATCH = 100  # schedules a batch draws (rule 4)
MAX_COMMANDS = 6
MAX_JOINS = 2
MAX_GAP = 15.0  # seconds between two commands, at most
# The values each number is drawn from, the simplest first: the shrinker moves to the front.
DELAY_MIN = (1.0, 0.5, 0.1)
DELAY_SPREAD = (0.0, 0.5, 1.0)
T_OVER_TWO_DELAYS = (1.0, 1.5, 2.0)  # T / (2 x max delay), within the model
T_UNDER_TWO_DELAYS = (1.0, 0.5, 0.25, 0.75, 1.5, 2.0)  # --break-synchrony: below 1 too
PROBE_INTERVAL = (5.0, 2.0, 1.0)
LOSS = (0.0, 0.1, 0.2, 0.5)  # with --link-faults loss (0, the first: none)
DUPLICATE = (0.0, 0.1, 0.3)
# A node's command, by name, with the class the parser's Members judges it by.
NODE_COMMANDS = {"crash": Crash, "recover": Recover, "elect": Elect, "want": WantCs, "leave": Leave}


@dataclass(frozen=True, slots=True)
class Schedule:
    nodes: int
    seed: int
    config: ClusterConfig
    lines: tuple[tuple[float, str], ...]  # (time, "crash 3"): nodes by rank, as a scenario names them

    def session(self, algorithm: str, transcript: str | None = None) -> Session:
        """The run this schedule is, as the command line would make it from its scenario."""
        ids = tuple(range(1, self.nodes + 1))
        commands = parse_lines([Line(f"{at:g} {text}", "scenario", f"hunt line {n}")
                                for n, (at, text) in enumerate(self.lines, 1)], ids, self.seed)
        workload = Workload() if machine(algorithm).mutex is not None else None
        return Session(algorithm, self.nodes, self.seed, self.config, tuple(commands), transcript, overwrite=True,
                       workload=workload)

    def until(self, algorithm: str) -> float:
        """When a run of it ends (rule 5)."""
        return self.ends(self.session(algorithm).recipe.engine())

    def ends(self, engine: Engine) -> float:
        """When a run of it on `engine` (its run, not yet started) ends (rule 5)."""
        last = max((at for at, _ in self.lines), default=0.0)
        return round(last + engine.settle_time() * (2 if engine.algorithm.mutex is not None else 1) + 1, 3)


@st.composite
def schedules(draw, space: Space) -> Schedule:
    nodes = draw(st.integers(*space.nodes))
    delay_min = draw(st.sampled_from(DELAY_MIN))
    delay_max = delay_min + draw(st.sampled_from(DELAY_SPREAD))
    ratio = draw(st.sampled_from(T_OVER_TWO_DELAYS if space.synchrony else T_UNDER_TWO_DELAYS))
    config = ClusterConfig(timeout=round(2 * delay_max * ratio, 3), probe_interval=draw(st.sampled_from(PROBE_INTERVAL)),
                           delay_min=delay_min, delay_max=delay_max)
    faults = {}
    if "loss" in space.link_faults and (loss := draw(st.sampled_from(LOSS))):
        faults["loss"] = loss
    if "duplicate" in space.link_faults and (duplicate := draw(st.sampled_from(DUPLICATE))):
        faults["duplicate"] = duplicate
    if "reorder" in space.link_faults and delay_max > delay_min and draw(st.booleans()):  # (one delay: none overtakes)
        faults["reorder"] = True
    if faults:
        config = config.with_faults(**faults)
    seed = draw(st.integers(0, 2**16))
    members = Members(tuple(range(1, nodes + 1)))
    lines: list[tuple[float, str]] = []
    t, joins = 0.0, 0
    for _ in range(draw(st.integers(0, MAX_COMMANDS))):
        t = round(t + draw(st.integers(0, int(MAX_GAP * 10))) / 10, 1)
        name = draw(st.sampled_from(space.commands))
        if name == "join":
            if joins == MAX_JOINS:
                continue
            joins += 1
            command, text = parse_command(["join"], members.every, seed), "join"
        else:  # rule 2: a node it can act on, the highest first
            kind = NODE_COMMANDS[name]
            able = [n for n in reversed(members.every) if members.refusal(kind(n)) is None]
            if not able:
                continue
            node = able[draw(st.integers(0, len(able) - 1))]
            command, text = kind(node), f"{name} {members.every.index(node) + 1}"
        members.apply(command)
        lines.append((t, text))
    return Schedule(nodes, seed, config, tuple(lines))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One schedule's run: the report that broke the property (None: nothing did), the
    events the run made and the virtual seconds it lasted."""

    violation: ViolationEvent | None
    events: int
    seconds: float


def run(algorithm: str, schedule: Schedule, prop: str | None) -> Outcome:
    """The schedule on the engine alone, to its end or to the first report of `prop`."""
    engine = schedule.session(algorithm).recipe.engine()
    seen: list[ViolationEvent] = []
    count = [0]

    def watch(events) -> None:
        count[0] += len(events)
        for e in events:
            if type(e) is ViolationEvent and e.phase == "begin" and (prop is None or e.property == prop) and not seen:
                seen.append(e)

    engine.subscribe(watch)
    for _ in steps(engine, schedule.ends(engine)):
        interrupt.raise_if_stopped()  # (the search runs `checked`: see search)
        if seen:
            break
    return Outcome(seen[0] if seen else None, count[0], engine.now)


@dataclass(frozen=True, slots=True)
class Finding:
    schedule: Schedule
    property: str  # the monitor's name of what broke
    t: float  # when
    text: str  # the monitor's line for it

    @property
    def size(self) -> str:
        """"4 nodes, 3 commands"; with joiners, every node the run had: "3 nodes (2 at the
        start, 1 joining), 4 commands" (the monitor's line may name a joiner)."""
        s = self.schedule
        joins = sum(1 for _, text in s.lines if text == "join")
        nodes = _count(s.nodes + joins, "node") + (f" ({s.nodes} at the start, {joins} joining)" if joins else "")
        return f"{nodes}, {_count(len(s.lines), 'command')}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(slots=True)
class Searched:
    """How much a search ran: schedules drawn (before a finding), runs in all (the
    shrinking's too), their events and virtual seconds, and the (nodes, commands) shapes.
    A schedule tried again is counted again, as the run it was (run_batch keeps it)."""

    schedules: int = 0
    runs: int = 0
    events: int = 0
    seconds: float = 0.0
    shapes: set[tuple[int, int]] = field(default_factory=set)

    def add(self, other: Searched) -> None:
        self.schedules += other.schedules
        self.runs += other.runs
        self.events += other.events
        self.seconds += other.seconds
        self.shapes |= other.shapes


@dataclass(frozen=True, slots=True)
class Hunt:
    space: Space
    property: str | None  # the monitor's name (None: any)
    seed: int = 1
    schedules: int | None = 5000  # the budget in schedules; or
    seconds: float | None = None  # in seconds of wall time

    @property
    def batches(self) -> int | None:
        return None if self.schedules is None else -(-self.schedules // BATCH)

    def batch_size(self, index: int) -> int:
        if self.schedules is None:
            return BATCH
        return min(BATCH, self.schedules - index * BATCH)


@dataclass(frozen=True, slots=True)
class BatchResult:
    index: int
    searched: Searched
    finding: Finding | None


def run_batch(hunt: Hunt, index: int) -> BatchResult:
    """Batch `index` of the search (rule 4): draw, run, and shrink what breaks."""
    searched = Searched()
    found = [False]
    # Hypothesis tries some schedules again (different draws can make the same schedule:
    # a command with no node to act on is left out; the shrinker's steps meet); a run is
    # decided by its schedule, so its outcome is kept, not run again (5 to 20 % of a batch).
    outcomes: dict[Schedule, Outcome] = {}

    def breaks(schedule: Schedule) -> bool:
        outcome = outcomes.get(schedule)
        if outcome is None:
            outcome = outcomes[schedule] = run(hunt.space.algorithm, schedule, hunt.property)
        searched.runs += 1
        searched.events += outcome.events
        searched.seconds += outcome.seconds
        if not found[0]:
            searched.schedules += 1
            searched.shapes.add((schedule.nodes, len(schedule.lines)))
        found[0] = found[0] or outcome.violation is not None
        return outcome.violation is not None

    rules = settings(settings.get_profile("default"), max_examples=hunt.batch_size(index), database=None, deadline=None,
                     derandomize=False, phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
                     suppress_health_check=list(HealthCheck), print_blob=False)
    try:
        with _no_local_constants():
            smallest = find(schedules(hunt.space), breaks, settings=rules, random=Random(f"{hunt.seed}/{index}"))
    except NoSuchExample:
        return BatchResult(index, searched, None)
    v = (outcomes.get(smallest) or run(hunt.space.algorithm, smallest, hunt.property)).violation
    return BatchResult(index, searched, Finding(smallest, v.property, v.t, describe(v)))


@contextmanager
def _no_local_constants() -> Iterator[None]:
    """Rule 4's aside. Hypothesis has no setting for it, so its provider's source of local
    constants is emptied while a batch runs (and its cache of them, which other searches
    in this process, a test suite's, may have filled). It also keeps the constants it
    finds in a folder it makes in the current one, which a hunt must not leave behind."""
    from hypothesis.internal.conjecture import providers

    source = getattr(providers, "_get_local_constants", None)
    cached = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if source is None or cached is None:  # another version of hypothesis: nothing to turn off
        yield
        return
    cached.clear()  # (a cache: emptied, it fills again)
    providers._get_local_constants = providers.Constants
    try:
        yield
    finally:
        providers._get_local_constants = source
        cached.clear()


@dataclass(slots=True)
class Result:
    finding: Finding | None
    searched: Searched
    batches: int  # batches whose schedules count (those up to the finding's)


class Batches(Protocol):
    """Where batches run side by side: a pool of this machine's processes (`_Pool`), or
    a Dask cluster's workers (hunt_cluster.py). `search` decides which batches run and
    which finding wins (rule 4); a Batches only runs them."""

    def room(self) -> int:
        """How many batches may be under way at once."""

    def submit(self, hunt: Hunt, index: int) -> None: ...

    def next(self) -> BatchResult:
        """A batch that is done (whichever ends first); what one raised is raised here."""

    def drop(self, indices: set[int]) -> None:
        """Batches whose schedules no longer count (rule 4): stop them where it can."""


def search(hunt: Hunt, workers: int = 1, on_batch: Callable[[Result, int | None], None] | None = None,
           batches: Batches | None = None) -> Result:
    """Run the batches, `workers` processes at a time (or on `batches`: a cluster), until
    the budget is spent or a batch finds (then those before it finish: rule 4).
    `on_batch(result so far, batch that found or None)` after each batch."""
    deadline = None if hunt.seconds is None else time.monotonic() + hunt.seconds
    done: dict[int, BatchResult] = {}
    best: int | None = None  # the lowest batch that found

    def more(index: int) -> bool:
        if best is not None and index >= best:
            return False
        if hunt.batches is not None:
            return index < hunt.batches
        return time.monotonic() < deadline

    def so_far() -> Result:
        searched = Searched()
        counted = [r for i, r in sorted(done.items()) if best is None or i <= best]
        for r in counted:
            searched.add(r.searched)
        return Result(done[best].finding if best is not None else None, searched, len(counted))

    def take(result: BatchResult) -> None:
        nonlocal best
        done[result.index] = result
        if result.finding is not None and (best is None or result.index < best):
            best = result.index
        if on_batch is not None:
            on_batch(so_far(), result.index if result.finding is not None else None)

    def share(batches: Batches) -> Result:
        pending: set[int] = set()
        index = 0
        while True:
            while len(pending) < batches.room() and more(index):
                batches.submit(hunt, index)
                pending.add(index)
                index += 1
            late = {i for i in pending if best is not None and i >= best}  # rule 4: they no longer count
            if late:
                batches.drop(late)
                pending -= late
            if not pending:
                return so_far()
            result = batches.next()
            pending.discard(result.index)
            take(result)

    if batches is not None:
        return share(batches)
    if workers <= 1:
        # Here hypothesis runs in this process, and a signal's Stopped raised inside its
        # garbage-collector callback would be lost (the hunt then ran its whole budget):
        # a signal is only noted, and each step of a run raises it (run, above).
        with interrupt.checked():
            index = 0
            while more(index):
                take(run_batch(hunt, index))
                index += 1
        return so_far()
    with _Pool(workers) as pool:
        return share(pool)


class _Pool:
    """`workers` processes of this machine, forked for one search and ended after it."""

    def __init__(self, workers: int):
        self.workers = workers
        self.results: queue.SimpleQueue = queue.SimpleQueue()

    def __enter__(self) -> Self:
        # Forked before anything else runs (no thread yet: the progress display starts
        # later), with the signals that stop the hunt blocked: a worker is born with the
        # hunt's handler, and one that came before the worker ignored it raised there
        # (a traceback from "Process ForkPoolWorker-1"). One that comes meanwhile is the
        # hunt's when the block ends.
        self.pool = None
        try:
            with interrupt.held():
                self.pool = multiprocessing.get_context("fork").Pool(self.workers, initializer=_worker_ignores_signals)
        except BaseException:  # (the signal held meanwhile, raised as the block ends)
            self.__exit__()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()

    def room(self) -> int:
        return self.workers

    def submit(self, hunt: Hunt, index: int) -> None:
        self.pool.apply_async(run_batch, (hunt, index), callback=self.results.put, error_callback=self.results.put)

    def next(self) -> BatchResult:
        result = self.results.get()
        if isinstance(result, BaseException):
            raise result
        return result

    def drop(self, indices: set[int]) -> None:
        pass  # (a pool's task cannot be taken back: what it returns is not counted, `search`)
