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


@dataclass(slots=True)
class _Search:
    """One search: what it looks for, up to where, and the engine it steps."""

    timed: bool
    prop: str | None
    bounds: Bounds
    stepper: Stepper
    explored: Explored
    delays_us: tuple[int, ...]  # (the model's, asked for each state)
    horizon_us: int


def explore(model: Model, prop: str | None, bounds: Bounds = Bounds(),
            on_progress: Callable[[Explored], None] | None = None) -> tuple[Counterexample | None, Explored]:
    """Search breadth first for a run that breaks `prop` (None: any safety property):
    rule 2, with rule 3's bounds. A signal is raised between two states (the caller
    may take the signals `interrupt.checked()`)."""
    explored = Explored()
    seen: set[bytes] = set()
    frontier: deque[_Node] = deque()
    search, state, trail = _start(model, prop, bounds, explored)
    stepper = search.stepper
    violation = _broken(stepper.h, prop)  # (asynchronous: the start-up's instant is over)
    if violation is not None:
        return Counterexample(violation.property, describe(violation), trail.steps()), explored
    choices = _delays(search, state, {})
    for arrivals in choices:
        frontier.append((state, arrivals, 0, trail))
    state.waiting = len(choices)
    try:
        while frontier:
            interrupt.raise_if_stopped()
            node = frontier.popleft()
            parent = node[0]
            parent.waiting -= 1
            if node[3].depth >= bounds.depth:  # rule 3
                explored.bound = "depth"
                continue
            for child, faults, trail, choices, violation in _successors(search, node):
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
                    child.waiting += 1
            if not parent.waiting:
                parent.taken = None  # (its successors are all made: _take's memo)
        return None, explored
    finally:
        explored.seen_bytes = _seen_bytes(seen) + stepper.table_bytes()


def steps_taken(steps: tuple[str, ...]) -> int:
    """Steps of a run (the `at` lines say when; they are no step)."""
    return sum(1 for step in steps if not step.startswith("at "))


def _start(model: Model, prop: str | None, bounds: Bounds, explored: Explored) -> tuple[_Search, State, _Trail]:
    """The cluster, booted: every node starts at t=0."""
    interaction = Interaction()
    interaction.run(model.cluster_line)
    h = interaction.h
    search = _Search(model.timed, prop, bounds, Stepper(h, model.timed), explored, model.delays_us,
                     to_us(bounds.horizon))
    h.events.clear()
    h.boot()
    own = _tick(search, h, ())
    return search, search.stepper.start(), _Trail(None, own, 0, None)


def _successors(search: _Search, node: _Node):
    """(state, faults, steps, the arrivals each choice of delays gives, what it broke) of
    every state one step on: a fault, or what the model lets happen next."""
    state, arrivals, faults, trail = node
    ids = search.stepper.ids
    actions: list[tuple] = []
    if faults < search.bounds.faults:
        # Rule 3: a node crashes right after a step of its own (or at the start), which
        # is as good as any later moment before its next step.
        stepped = trail.stepper
        actions += [("crash", i) for i, host in zip(ids, state.hosts) if host.up and stepped in (None, i)]
        actions += [("recover", i) for i, host in zip(ids, state.hosts) if not host.up and not host.left]
    for action in actions:
        child, own, who, violation = _take(search, state, action)
        yield child, faults + 1, trail.then(own, who), _delays(search, child, arrivals), violation
    if search.timed:
        action = _timed_next(search, state, arrivals)
        if action is None:
            return
        child, own, who, violation = _take(search, state, action)
        if action[0] == "deliver":
            arrivals = dict(arrivals)
            del arrivals[state.flight[action[1:3]][0][0]]
        yield child, faults, trail.then(own, who), _delays(search, child, arrivals), violation
        return
    actions = [("deliver", src, dst) for src, dst in state.flight]
    actions += [("fire", i, name) for i, host in zip(ids, state.hosts) if host.up for name in sorted(host.timers)]
    for action in actions:
        child, own, who, violation = _take(search, state, action)
        yield child, faults, trail.then(own, who), [{}], violation


def _timed_next(search: _Search, state: State, arrivals: dict[int, int]) -> tuple | None:
    """Timed: the one thing due first (deliveries before timers, then by node), as an
    action at its time; at the horizon, time moving on to it (or nothing, once there)."""
    due = [(arrivals[queue[0][0]], 0, dst, src, "") for (src, dst), queue in state.flight.items()]
    for i, host in zip(search.stepper.ids, state.hosts):
        if host.up:
            due += [(fires, 1, i, 0, name) for name, (fires, _) in host.timers.items()]
    if not due:
        return None  # nothing will ever happen again: a run that ends here
    t_us, kind, i, src, name = min(due)
    if t_us > search.horizon_us:
        search.explored.bound = "horizon"
        return ("at", search.bounds.horizon) if state.now_us < search.horizon_us else None
    return ("deliver", src, i, t_us) if kind == 0 else ("fire", i, name, t_us)


def _take(search: _Search, state: State, action: tuple):
    """(the state after `action`, its steps, the node that took it, what it broke).
    Made once per state and action (a state on the frontier with each choice of delays
    is one state: its crash, say, is one state too): kept in `state.taken` until the
    state's last frontier entry has had its successors made."""
    taken = state.taken.get(action) if state.taken is not None else None
    if taken is not None:
        return taken
    stepper = search.stepper
    kind = action[0]
    delivered = None
    if kind in ("crash", "recover"):
        node = action[1]
        h = stepper.restore(state, node)
        h.crash(node) if kind == "crash" else h.recover(node)
        own: tuple[str, ...] = (f"{kind} {node}",)
        who = -1 if kind == "crash" else node  # (a crash is nobody's step)
    elif kind == "at":  # (the horizon: the last instant before it is judged)
        stepper.restore(state, None).at(action[1])
        node, who, own = None, None, (f"at {action[1]:g}",)
    else:
        node = who = action[2] if kind == "deliver" else action[1]
        h = stepper.restore(state, node)
        own = ()
        if search.timed and action[3] > h.now_us:
            h.at(to_seconds(action[3]))
            own = (f"at {to_seconds(action[3]):g}",)
        if kind == "deliver":
            delivered = action[1:3]
            stepper.deliver(*delivered)
            own += (f"deliver {action[1]} {action[2]}",)
        else:
            stepper.fire(node, action[2])
            own += (f"fire {node} {action[2]}",)
    own = _tick(search, stepper.h, own)
    taken = (stepper.after(state, node, delivered), own, who, _broken(stepper.h, search.prop))
    if state.taken is None:
        state.taken = {}
    state.taken[action] = taken
    return taken


def _tick(search: _Search, h: Harness, steps: tuple[str, ...]) -> tuple[str, ...]:
    """Asynchronous: each step is an instant of its own, over 1 ms on (so the monitor
    judges it); the steps, with the `at` that says so. Timed: the instant stays open
    until the next thing due comes later."""
    if search.timed:
        return steps
    t = to_seconds(h.now_us + ASYNC_STEP_US)
    h.at(t)
    return (*steps, f"at {t:g}")


def _delays(search: _Search, state: State, arrivals: dict[int, int]) -> list[dict[int, int]]:
    """Timed: the arrival of every message in flight, for each choice of delay for
    those just sent (FIFO: none before the one ahead of it). `arrivals`: those of the
    messages that were in flight already (the state's before, but the one delivered).
    Asynchronous: none."""
    if not search.timed:
        return [{}]
    new: list[tuple[tuple[int, int], int]] = []
    last: dict[tuple[int, int], int] = {}  # a link with new messages: the arrival of its last one before them
    for link, queue in state.flight.items():
        if queue[-1][0] not in arrivals:  # (new messages are at the end of their link)
            for msg_id, _, _ in queue:
                arrives = arrivals.get(msg_id)
                if arrives is None:
                    new.append((link, msg_id))
                else:
                    last[link] = arrives
    if not new:
        return [arrivals]
    out = []
    for delays in itertools.product(search.delays_us, repeat=len(new)):
        chosen, ahead = dict(arrivals), dict(last)
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
