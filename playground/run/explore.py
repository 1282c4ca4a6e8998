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

import dataclasses
import hashlib
import itertools
import pickle
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..core.config import ClusterConfig, to_seconds, to_us
from ..core.events import ViolationEvent
from ..core.monitor import SLE1, SPLIT_BRAIN, describe
from ..record.recorder import Recorder
from ..record.transcript import Header
from . import interrupt
from .harness import Harness
from .interaction import Block, Interaction, write_blocks

SAFETY = (SLE1, SPLIT_BRAIN)
ASYNC_STEP_US = 1000  # the asynchronous model's steps each come 1 ms apart: instants, not time
# A machine's variables that are no part of its state: its outbox and knobs, and which
# rule it applied last (why it did something, not what it is: two runs that reach one
# state by different rules are one state).
SKIP = frozenset({"_outbox", "config", "applying", "state_rule"})


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


@dataclass(frozen=True, slots=True)
class Counterexample:
    property: str
    text: str
    steps: tuple[str, ...]  # after `cluster` and `boot`


@dataclass(slots=True)
class _Node:
    """A state on the frontier: its engine (pickled), the arrival of each
    message in flight (timed), the faults so far and the steps that led to it."""

    engine: bytes
    now_us: int
    arrivals: dict[int, int]
    faults: int
    steps: tuple[str, ...]


def explore(model: Model, prop: str | None, bounds: Bounds = Bounds(),
            on_progress: Callable[[Explored], None] | None = None) -> tuple[Counterexample | None, Explored]:
    """Search breadth first for a run that breaks `prop` (None: any safety property):
    rule 2, with rule 3's bounds. A signal is raised between two states (the caller
    may take the signals `interrupt.checked()`)."""
    explored = Explored()
    seen: set[bytes] = set()
    frontier: deque[_Node] = deque()
    for child, faults, steps, choices in _start(model):
        violation = _broken(child, prop)  # (asynchronous: the start-up's instant is over)
        if violation is not None:
            return Counterexample(violation.property, describe(violation), steps), explored
        for arrivals in choices:
            frontier.append(_Node(_pack(child), child.now_us, arrivals, faults, steps))
    while frontier:
        interrupt.raise_if_stopped()
        node = frontier.popleft()
        if steps_taken(node.steps) >= bounds.depth:  # rule 3
            explored.bound = "depth"
            continue
        for child, faults, steps, choices in _successors(model, node, bounds, explored):
            violation = _broken(child, prop)
            if violation is not None:
                return Counterexample(violation.property, describe(violation), steps), explored
            packed = None
            for arrivals in choices:
                explored.steps += 1
                key = _key(child, arrivals if model.timed else None, faults)
                if key in seen:  # rule 1
                    continue
                seen.add(key)
                explored.states += 1
                explored.deepest = max(explored.deepest, steps_taken(steps))
                if explored.states >= bounds.most:
                    explored.bound = "states"
                    return None, explored
                if on_progress is not None and explored.states % 1000 == 0:
                    on_progress(explored)
                packed = packed or _pack(child)
                frontier.append(_Node(packed, child.now_us, arrivals, faults, steps))
    return None, explored


def steps_taken(steps: tuple[str, ...]) -> int:
    """Steps of a run (the `at` lines say when; they are no step)."""
    return sum(1 for step in steps if not step.startswith("at "))


def _start(model: Model):
    """The cluster, booted: every node starts at t=0 (what it sends, each delay chosen)."""
    interaction = Interaction()
    interaction.run(model.cluster_line)
    h = interaction.h
    h.events.clear()
    h.boot()
    yield h, 0, _tick(model, h, ()), _delays(model, h, {})


def _successors(model: Model, node: _Node, bounds: Bounds, explored: Explored):
    """(harness, faults, steps, the arrivals each choice of delays gives) of every state
    one step on: a fault, or what the model lets happen next."""
    h = _unpack(node)
    up = [i for i, host in sorted(h.hosts.items()) if host.up]
    down = [i for i, host in sorted(h.hosts.items()) if not host.up and not host.left]
    if node.faults < bounds.faults:
        # Rule 3: a node crashes right after a step of its own (or at the start), which
        # is as good as any later moment before its next step.
        stepped = _last_stepper(node.steps)
        crashable = up if stepped is None else [i for i in up if i == stepped]
        for name, who in (("crash", crashable), ("recover", down)):
            for i in who:
                child = _unpack(node)
                child.command(f"{name} {i}")
                steps = _tick(model, child, (*node.steps, f"{name} {i}"))
                yield child, node.faults + 1, steps, _delays(model, child, node.arrivals)
    if model.timed:
        yield from _timed_next(model, node, h, bounds, explored)  # (h is its to step on: nothing else uses it)
        return
    for src, dst in h.in_flight():
        child = _unpack(node)
        child.deliver(src, dst)
        yield child, node.faults, _tick(model, child, (*node.steps, f"deliver {src} {dst}")), [{}]
    for i in up:
        for name in h.timers(i):
            child = _unpack(node)
            child.fire(i, name)
            yield child, node.faults, _tick(model, child, (*node.steps, f"fire {i} {name}")), [{}]


def _last_stepper(steps: tuple[str, ...]) -> int | None:
    """The node that took the last step (a delivery's receiver, a timer's owner, one
    that recovered); None at the start, when all have just stepped."""
    for step in reversed(steps):
        words = step.split()
        if words[0] == "deliver":
            return int(words[2])
        if words[0] in ("fire", "recover"):
            return int(words[1])
        if words[0] == "crash":
            return -1  # a crash is nobody's step
    return None


def _tick(model: Model, h: Harness, steps: tuple[str, ...]) -> tuple[str, ...]:
    """Asynchronous: each step is an instant of its own, over 1 ms on (so the monitor
    judges it); the steps, with the `at` that says so. Timed: the instant stays open
    until the next thing due comes later."""
    if model.timed:
        return steps
    t = to_seconds(h.now_us + ASYNC_STEP_US)
    h.at(t)
    return (*steps, f"at {t:g}")


def _timed_next(model: Model, node: _Node, h: Harness, bounds: Bounds, explored: Explored):
    """The one thing due first (deliveries before timers, then by node), with the delays
    of what it sends."""
    heads = {link: queue[0][0] for link, queue in h.engine.links.in_flight().items()}
    due = [(node.arrivals[msg_id], 0, dst, src, "") for (src, dst), msg_id in heads.items()]
    for i, host in h.hosts.items():
        if host.up:
            due += [(fires, 1, i, 0, name) for name, (fires, _) in host.timers.items()]
    if not due:
        return  # nothing will ever happen again: a run that ends here
    t_us, kind, i, src, name = min(due)
    child = h
    if t_us > to_us(bounds.horizon):
        explored.bound = "horizon"
        if child.now_us < to_us(bounds.horizon):
            child.at(bounds.horizon)  # the last instant before the horizon is judged
            yield child, node.faults, (*node.steps, f"at {bounds.horizon:g}"), [node.arrivals]
        return
    steps = node.steps
    if t_us > child.now_us:
        child.at(to_seconds(t_us))
        steps = (*steps, f"at {to_seconds(t_us):g}")
    arrivals = dict(node.arrivals)
    if kind == 0:
        del arrivals[heads[(src, i)]]
        child.deliver(src, i)
        step = f"deliver {src} {i}"
    else:
        child.fire(i, name)
        step = f"fire {i} {name}"
    yield child, node.faults, (*steps, step), _delays(model, child, arrivals)


def _delays(model: Model, h: Harness, arrivals: dict[int, int]) -> list[dict[int, int]]:
    """Timed: the arrival of every message in flight, for each choice of delay for
    those just sent (FIFO: none before the one ahead of it). Asynchronous: none."""
    if not model.timed:
        return [{}]
    in_flight = h.engine.links.in_flight()
    new = [(link, msg_id) for link, queue in in_flight.items() for msg_id, _ in queue if msg_id not in arrivals]
    kept = {msg_id: arrivals[msg_id] for queue in in_flight.values() for msg_id, _ in queue if msg_id in arrivals}
    last: dict[tuple[int, int], int] = {}
    for link, queue in in_flight.items():
        for msg_id, _ in queue:
            if msg_id in kept:
                last[link] = max(last.get(link, 0), kept[msg_id])
    out = []
    for delays in itertools.product(model.delays_us, repeat=len(new)):
        chosen, ahead = dict(kept), dict(last)
        for (link, msg_id), delay in zip(new, delays, strict=True):
            chosen[msg_id] = ahead[link] = max(h.now_us + delay, ahead.get(link, 0))
        out.append(chosen)
    return out


def _broken(h: Harness, prop: str | None) -> ViolationEvent | None:
    """The first report of `prop` (or of any safety property) in what the last step did (rule 4)."""
    events, h.events[:] = list(h.events), []
    for e in events:
        if type(e) is ViolationEvent and e.phase == "begin" and e.property in SAFETY and prop in (None, e.property):
            return e
    return None


def _pack(h: Harness) -> bytes:
    """An engine to come back to: pickled (a tenth of deepcopy's memory, about its time)."""
    return pickle.dumps(h.engine, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(node: _Node) -> Harness:
    engine = pickle.loads(node.engine)
    return Harness.of(engine, node.now_us)


def _key(h: Harness, arrivals: dict[int, int] | None, faults: int) -> bytes:
    """Rule 1: the state, whatever the time and the message ids."""
    now = h.now_us
    hosts = []
    for i, host in sorted(h.hosts.items()):
        timers = sorted((name, fires - now if arrivals is not None else 0) for name, (fires, _) in host.timers.items())
        machine = None if host.machine is None else {k: v for k, v in vars(host.machine).items() if k not in SKIP}
        hosts.append((i, host.up, _frozen(host.storage), _frozen(machine), timers))
    links = []
    for link, queue in h.engine.links.in_flight().items():
        links.append((link, tuple((_frozen(msg), arrivals[msg_id] - now if arrivals is not None else 0)
                                  for msg_id, msg in queue)))
    return hashlib.blake2b(repr((hosts, links, faults)).encode(), digest_size=16).digest()



_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, by class


def _frozen(value: object) -> object:
    """A value's content, comparable by repr: dicts in their order (it can mean something:
    oldest first), sets sorted, objects by their fields."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, type):  # (the ring keeps the class of each message it awaits an ack for)
        return value.__name__
    if isinstance(value, dict):
        return tuple((_frozen(k), _frozen(v)) for k, v in value.items())
    if isinstance(value, (set, frozenset)):
        return tuple(sorted((_frozen(v) for v in value), key=repr))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    names = _FIELDS.get(type(value))
    if names is None and dataclasses.is_dataclass(value):
        names = _FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return (type(value).__name__, tuple(_frozen(getattr(value, name)) for name in names))
    if hasattr(value, "__dict__"):
        return (type(value).__name__, _frozen({k: v for k, v in vars(value).items() if k not in SKIP}))
    return repr(value)


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
