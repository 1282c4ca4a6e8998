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

In both, a node may crash, or a crashed one recover, between steps, up to `faults` in
all. (A timer drawn from a range, Raft's election timeout, takes the run's own draw:
the search enumerates delays and orders, not draws.) A node crashes right after a step of its own: any later moment before its next
step is the same to every node (messages to it are lost either way, it sends nothing
in between), and it being up longer can only add to what the monitor sees.

Rules:
  1. A state is every node's machine (its variables and safe storage), whether it is up,
     its running timers, and every message in flight; in the timed model, with the
     times of timers and arrivals relative to now, so that a state reached at two
     moments is one. A state seen before is not explored again.
  2. Breadth first: the first counterexample found has the fewest steps.
  3. Bounds: the faults; the steps of a run (`depth`); in the timed model its virtual
     time (`horizon`); and the states in all (`most`). The result says which bound
     was reached, so "no counterexample" always says up to where.
  4. Safety only (SLE1, split brain): the monitor judges each instant as it ends. What
     must happen eventually needs time, which the asynchronous model does not have.
  5. A finding is written as an interaction file (interaction.py): the cluster, then
     each step (`at T`, `deliver A B`, `fire N NAME`, `crash N`, `recover N`) with what
     it did, so a person can read it and a test can run it; and as a transcript marked
     as stepped by hand, to replay and export (no settings and commands re-create it).
"""

from __future__ import annotations

import itertools
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import ClusterConfig, to_seconds, to_us
from ..core.events import ViolationEvent
from ..core.monitor import SLE1, SPLIT_BRAIN, describe
from ..record.recorder import Recorder
from ..record.transcript import Header
from . import interrupt
from .explore_state import SKIP, State, Stepper
from .harness import Harness
from .interaction import Block, Interaction, write_blocks

__all__ = ["SAFETY", "SKIP", "Bounds", "Counterexample", "Explored", "Model", "explore", "interaction_text", "record",
           "steps_taken"]

SAFETY = (SLE1, SPLIT_BRAIN)
ASYNC_STEP_US = 1000  # the asynchronous model's steps each come 1 ms apart: instants, not time


@dataclass(frozen=True, slots=True)
class Bounds:
    faults: int = 2
    depth: int = 40
    horizon: float = 60.0  # timed: virtual seconds
    most: int = 200_000  # states


@dataclass(frozen=True, slots=True)
class Model:
    algorithm: str
    nodes: int
    config: ClusterConfig
    timed: bool = True
    midpoint: bool = False  # timed: a delay may also be the midpoint of the bounds

    @property
    def cluster_line(self) -> str:
        """The interaction file's first command: this cluster."""
        c = self.config
        delay = f"{c.delay_min:g}:{c.delay_max:g}"
        parts = [f"cluster {self.algorithm} {self.nodes}", f"timeout={c.timeout:g}", f"delay={delay}",
                 f"probe-interval={c.probe_interval:g}"]
        if c.coordinator_timeout is not None:
            parts.append(f"coordinator-timeout={c.coordinator_timeout:g}")
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


class _Trail:
    """The steps that led to a state: its own (a step, with the `at` that says when) after
    those of the state it came from, shared with it."""

    __slots__ = ("before", "depth", "own", "stepper")

    def __init__(self, before: _Trail | None, own: tuple[str, ...], depth: int, stepper: int | None):
        self.before, self.own = before, own
        self.depth = depth  # steps taken (the `at` lines are no step)
        self.stepper = stepper  # the node that took the last step (-1: a crash, nobody's step; None: the start)

    def then(self, own: tuple[str, ...], stepper: int | None = None) -> _Trail:
        """`own`: a step and its `at`; `stepper`: the node that took it (None: time only
        moved on, and `own` is an `at`)."""
        if stepper is None:
            return _Trail(self, own, self.depth, self.stepper)
        return _Trail(self, own, self.depth + 1, stepper)

    def steps(self) -> tuple[str, ...]:
        trails, trail = [], self
        while trail is not None:
            trails.append(trail.own)
            trail = trail.before
        return tuple(step for own in reversed(trails) for step in own)


# A state on the frontier: the engine as it was (explore_state.py), the arrival of each
# message in flight (timed), the faults so far and the steps that led to it.
_Node = tuple[State, dict[int, int], int, _Trail]


def explore(model: Model, prop: str | None, bounds: Bounds = Bounds(),
            on_progress: Callable[[Explored], None] | None = None) -> tuple[Counterexample | None, Explored]:
    """Search breadth first for a run that breaks `prop` (None: any safety property):
    rule 2, with rule 3's bounds. A signal is raised between two states (the caller
    may take the signals `interrupt.checked()`)."""
    explored = Explored()
    seen: set[bytes] = set()
    frontier: deque[_Node] = deque()
    stepper, state, trail, choices = _start(model)
    violation = _broken(stepper.h, prop)  # (asynchronous: the start-up's instant is over)
    if violation is not None:
        return Counterexample(violation.property, describe(violation), trail.steps()), explored
    for arrivals in choices:
        frontier.append((state, arrivals, 0, trail))
    try:
        while frontier:
            interrupt.raise_if_stopped()
            node = frontier.popleft()
            if node[3].depth >= bounds.depth:  # rule 3
                explored.bound = "depth"
                continue
            for child, faults, trail, choices in _successors(model, stepper, node, bounds, explored):
                violation = _broken(stepper.h, prop)
                if violation is not None:
                    return Counterexample(violation.property, describe(violation), trail.steps()), explored
                for arrivals in choices:
                    explored.steps += 1
                    key = stepper.key(child, arrivals, faults)
                    if key in seen:  # rule 1
                        continue
                    seen.add(key)
                    explored.states += 1
                    explored.deepest = max(explored.deepest, trail.depth)
                    if explored.states >= bounds.most:
                        explored.bound = "states"
                        return None, explored
                    if on_progress is not None and explored.states % 1000 == 0:
                        on_progress(explored)
                    frontier.append((child, arrivals, faults, trail))
        return None, explored
    finally:
        explored.seen_bytes = _seen_bytes(seen) + stepper.table_bytes()


def steps_taken(steps: tuple[str, ...]) -> int:
    """Steps of a run (the `at` lines say when; they are no step)."""
    return sum(1 for step in steps if not step.startswith("at "))


def _start(model: Model) -> tuple[Stepper, State, _Trail, list[dict[int, int]]]:
    """The cluster, booted: every node starts at t=0 (what it sends, each delay chosen)."""
    interaction = Interaction()
    interaction.run(model.cluster_line)
    h = interaction.h
    stepper = Stepper(h, model.timed)
    h.events.clear()
    h.boot()
    own = _tick(model, h, ())
    state = stepper.start()
    return stepper, state, _Trail(None, own, 0, None), _delays(model, state, {})


def _successors(model: Model, stepper: Stepper, node: _Node, bounds: Bounds, explored: Explored):
    """(state, faults, steps, the arrivals each choice of delays gives) of every state one
    step on: a fault, or what the model lets happen next. Each is yielded as soon as it
    is made, while the engine's trace still holds what its step did (_broken)."""
    state, arrivals, faults, trail = node
    if faults < bounds.faults:
        # Rule 3: a node crashes right after a step of its own (or at the start), which
        # is as good as any later moment before its next step.
        stepped = trail.stepper
        for i, host in zip(stepper.ids, state.hosts):
            if host.up and stepped in (None, i):
                stepper.restore(state, i).crash(i)
                own = _tick(model, stepper.h, (f"crash {i}",))
                child = stepper.after(state, i)
                yield child, faults + 1, trail.then(own, -1), _delays(model, child, arrivals)
        for i, host in zip(stepper.ids, state.hosts):
            if not host.up and not host.left:
                stepper.restore(state, i).recover(i)
                own = _tick(model, stepper.h, (f"recover {i}",))
                child = stepper.after(state, i)
                yield child, faults + 1, trail.then(own, i), _delays(model, child, arrivals)
    if model.timed:
        yield from _timed_next(model, stepper, node, bounds, explored)
        return
    for src, dst in state.flight:
        stepper.restore(state, dst)
        stepper.deliver(src, dst)
        own = _tick(model, stepper.h, (f"deliver {src} {dst}",))
        yield stepper.after(state, dst, (src, dst)), faults, trail.then(own, dst), [{}]
    for i, host in zip(stepper.ids, state.hosts):
        for name in sorted(host.timers) if host.up else ():
            stepper.restore(state, i)
            stepper.fire(i, name)
            own = _tick(model, stepper.h, (f"fire {i} {name}",))
            yield stepper.after(state, i), faults, trail.then(own, i), [{}]


def _tick(model: Model, h: Harness, steps: tuple[str, ...]) -> tuple[str, ...]:
    """Asynchronous: each step is an instant of its own, over 1 ms on (so the monitor
    judges it); the steps, with the `at` that says so. Timed: the instant stays open
    until the next thing due comes later."""
    if model.timed:
        return steps
    t = to_seconds(h.now_us + ASYNC_STEP_US)
    h.at(t)
    return (*steps, f"at {t:g}")


def _timed_next(model: Model, stepper: Stepper, node: _Node, bounds: Bounds, explored: Explored):
    """The one thing due first (deliveries before timers, then by node), with the delays
    of what it sends."""
    state, arrivals, faults, trail = node
    due = [(arrivals[queue[0][0]], 0, dst, src, "") for (src, dst), queue in state.flight.items()]
    for i, host in zip(stepper.ids, state.hosts):
        if host.up:
            due += [(fires, 1, i, 0, name) for name, (fires, _) in host.timers.items()]
    if not due:
        return  # nothing will ever happen again: a run that ends here
    t_us, kind, i, src, name = min(due)
    horizon = to_us(bounds.horizon)
    if t_us > horizon:
        explored.bound = "horizon"
        if state.now_us < horizon:
            stepper.restore(state, None).at(bounds.horizon)  # the last instant before the horizon is judged
            yield stepper.after(state, None), faults, trail.then((f"at {bounds.horizon:g}",)), [arrivals]
        return
    h = stepper.restore(state, i)
    own: tuple[str, ...] = ()
    if t_us > h.now_us:
        h.at(to_seconds(t_us))
        own = (f"at {to_seconds(t_us):g}",)
    if kind == 0:
        arrivals = dict(arrivals)
        del arrivals[state.flight[(src, i)][0][0]]
        stepper.deliver(src, i)
        child = stepper.after(state, i, (src, i))
        own += (f"deliver {src} {i}",)
    else:
        stepper.fire(i, name)
        child = stepper.after(state, i)
        own += (f"fire {i} {name}",)
    yield child, faults, trail.then(own, i), _delays(model, child, arrivals)


def _delays(model: Model, state: State, arrivals: dict[int, int]) -> list[dict[int, int]]:
    """Timed: the arrival of every message in flight, for each choice of delay for
    those just sent (FIFO: none before the one ahead of it). Asynchronous: none."""
    if not model.timed:
        return [{}]
    new: list[tuple[tuple[int, int], int]] = []
    kept: dict[int, int] = {}
    last: dict[tuple[int, int], int] = {}
    for link, queue in state.flight.items():
        for msg_id, _, _ in queue:
            arrives = arrivals.get(msg_id)
            if arrives is None:
                new.append((link, msg_id))
            else:
                kept[msg_id] = arrives
                if arrives > last.get(link, 0):
                    last[link] = arrives
    if not new:
        return [kept]
    out = []
    for delays in itertools.product(model.delays_us, repeat=len(new)):
        chosen, ahead = dict(kept), dict(last)
        for (link, msg_id), delay in zip(new, delays, strict=True):
            chosen[msg_id] = ahead[link] = max(state.now_us + delay, ahead.get(link, 0))
        out.append(chosen)
    return out


def _broken(h: Harness, prop: str | None) -> ViolationEvent | None:
    """The first report of `prop` (or of any safety property) in what the last step did (rule 4)."""
    events, h.events[:] = list(h.events), []
    for e in events:
        if type(e) is ViolationEvent and e.phase == "begin" and e.property in SAFETY and prop in (None, e.property):
            return e
    return None


def _seen_bytes(seen: set[bytes]) -> int:
    """The seen set's own bytes: its table and its keys (16-byte digests, one size)."""
    return sys.getsizeof(seen) + len(seen) * (sys.getsizeof(next(iter(seen))) if seen else 0)


def record(model: Model, found: Counterexample, path: str, overwrite: bool = False) -> None:
    """Rule 5: the finding as a transcript too, marked as stepped by hand (no recipe re-creates
    it): to replay it in the app, go back and forth in it, and export its diagram."""
    interaction = Interaction()
    interaction.run(model.cluster_line)
    engine = interaction.h.engine
    header = Header(model.algorithm, list(engine.ids), engine.seed, model.config, by_hand=True)
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
