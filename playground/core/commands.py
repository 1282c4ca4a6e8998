"""Commands that steer a run: each a small typed value that declares what it takes and
what it is (`Command`), and the tables derived from those declarations; and `Members`
(who is in the cluster and who is down, so that a command that could only do nothing is
refused). settings.py says what they leave set.
command_lines.py parses `--at` and scenario lines into them.

The commands, as a line writes them (K names a node by rank: 1 is the lowest id):
  crash K | recover K | elect K | timeout T | delay MIN[:MAX]
  hold K L | release K L | partition K,L,... | heal | join | leave K | want K
  lossy K L P | by-hand | by-clock | deliver ID | drop ID | duplicate ID | fire K NAME
`join` adds a node with a new id (ids.next_id: N+1, or a new UUID), which starts as a
recovering node; `leave K` makes node K leave for good, telling the others; `lossy K L P` makes the
link from K to L lose each message with probability P (0: lossless, whatever --loss says).
`by-hand` makes the user the network (engine rule 8): nothing arrives and no timer fires
by itself, and the clock stands still, until `by-clock`; meanwhile `deliver ID`, `drop ID`
and `duplicate ID` say what becomes of message ID in flight (the id the trace gives it),
and `fire K NAME` fires node K's timer NAME (by_hand.py).

`words()` gives a command's name and arguments as the trace records them (ids, not
ranks), and `from_words` reads them back (a transcript's commands are the recipe that
re-creates its run). The keys' "raise T by 0.5 s" and "lower the delay by 0.25 s" are
relative (`ChangeTimeout`, `ChangeDelay`): the engine resolves them against the
settings it has when they run, and records the absolute command they became.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import ClassVar

from protocol import machine, split_name

from .config import (
    TIMEOUT,
    InputError,
    check_delay,
    check_probability,
    shown_json,
)

# --- what a command takes ------------------------------------------------------------------


@dataclass(frozen=True)
class Takes:
    """One kind of argument a command takes: how it is written (`shown`, for the usage),
    how many words it is typed as and how many values the trace records of it (None: one
    or more), and whether it names nodes the cluster has."""

    shown: str
    typed: int
    recorded: int | None
    names_nodes: bool = False


NODE = Takes("K", 1, 1, names_nodes=True)
LINK = Takes("K L", 2, 2, names_nodes=True)  # two different nodes: a link's ends
NODES = Takes("K,L,...", 1, None, names_nodes=True)
SECONDS = Takes("T", 1, 1)
DELAY = Takes("MIN[:MAX]", 1, 2)
PROBABILITY = Takes("P", 1, 1)  # from 0 to 1
MESSAGE = Takes("ID", 1, 1)  # a message in flight, by the id the trace gave it
TIMER = Takes("NAME", 1, 1)  # a timer of the node named before it: the rest of the line (ring: "hop_wait 3 7")
TIMER_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}( [a-z0-9_]{1,20}){0,4}")
NEWCOMER = Takes("", 0, 1)  # a new node's id: made when the line is read, recorded


class Command:
    """A command that steers a run. Each declares its `name` (as typed and recorded),
    what it `takes`, and what it is to the monitor (`unsettling`: the cluster needs its
    time after it, monitor rule 6; `changes_links`; `membership`); its fields are its
    arguments, in order. Every table the parser, the reader, the monitor and the labels
    use is derived from these declarations."""

    __slots__ = ()
    name: ClassVar[str]
    takes: ClassVar[tuple[Takes, ...]] = ()
    unsettling: ClassVar[bool] = False
    changes_links: ClassVar[bool] = False
    membership: ClassVar[bool] = False
    needs_up: ClassVar[str | None] = None  # what only an up node can do ("leave"): refused at a down node

    def named(self) -> tuple[int, ...]:
        """The nodes the cluster has that it names (a join's newcomer is none of them)."""
        return _node_arguments(type(self), self.words()[1])

    def words(self) -> tuple[str, tuple]:
        """Its name and arguments as the trace records them (ids, seconds)."""
        values: list = []
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            values.extend(value if type(value) is tuple else (value,))
        return self.name, tuple(values)

    @classmethod
    def usage(cls) -> str:
        return " ".join([cls.name, *(t.shown for t in cls.takes if t.shown)])


@dataclass(frozen=True, slots=True)
class Crash(Command):
    name: ClassVar[str] = "crash"
    takes: ClassVar[tuple[Takes, ...]] = (NODE,)
    node: int


@dataclass(frozen=True, slots=True)
class Recover(Command):
    name: ClassVar[str] = "recover"
    takes: ClassVar[tuple[Takes, ...]] = (NODE,)
    node: int


@dataclass(frozen=True, slots=True)
class Elect(Command):
    """The node's failure detector fires: it starts an election (on purpose: the cluster
    needs its time after it, as after a fault)."""

    name: ClassVar[str] = "elect"
    takes: ClassVar[tuple[Takes, ...]] = (NODE,)
    unsettling: ClassVar[bool] = True
    needs_up: ClassVar[str | None] = "start an election"
    node: int


@dataclass(frozen=True, slots=True)
class SetTimeout(Command):
    name: ClassVar[str] = "timeout"
    takes: ClassVar[tuple[Takes, ...]] = (SECONDS,)
    unsettling: ClassVar[bool] = True
    seconds: float


@dataclass(frozen=True, slots=True)
class SetDelay(Command):
    name: ClassVar[str] = "delay"
    takes: ClassVar[tuple[Takes, ...]] = (DELAY,)
    unsettling: ClassVar[bool] = True
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class HoldLink(Command):
    """Messages from `src` to `dst` wait at the link's end, in order, until released."""

    name: ClassVar[str] = "hold"
    takes: ClassVar[tuple[Takes, ...]] = (LINK,)
    unsettling: ClassVar[bool] = True
    changes_links: ClassVar[bool] = True
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class ReleaseLink(Command):
    """The link from `src` to `dst` delivers again: what waited arrives now, in order."""

    name: ClassVar[str] = "release"
    takes: ClassVar[tuple[Takes, ...]] = (LINK,)
    unsettling: ClassVar[bool] = True
    changes_links: ClassVar[bool] = True
    src: int
    dst: int


@dataclass(frozen=True, slots=True)
class LossyLink(Command):
    """The link from `src` to `dst` loses each message with probability `p`, whatever
    --loss says for the others (0: it is lossless again)."""

    name: ClassVar[str] = "lossy"
    takes: ClassVar[tuple[Takes, ...]] = (LINK, PROBABILITY)
    unsettling: ClassVar[bool] = True
    src: int
    dst: int
    p: float


@dataclass(frozen=True, slots=True)
class Partition(Command):
    """Cut `group` off from every other node, both ways: each link across the cut held."""

    name: ClassVar[str] = "partition"
    takes: ClassVar[tuple[Takes, ...]] = (NODES,)
    unsettling: ClassVar[bool] = True
    changes_links: ClassVar[bool] = True
    group: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Heal(Command):
    """Release every held link."""

    name: ClassVar[str] = "heal"
    unsettling: ClassVar[bool] = True
    changes_links: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Join(Command):
    """A new node, `node`, joins and starts as a recovering node (ids.next_id makes its
    id: when the line is read, or for a live key, None, when it runs)."""

    name: ClassVar[str] = "join"
    takes: ClassVar[tuple[Takes, ...]] = (NEWCOMER,)
    membership: ClassVar[bool] = True
    node: int | None = None


@dataclass(frozen=True, slots=True)
class Leave(Command):
    """Node `node` leaves for good, telling the others."""

    name: ClassVar[str] = "leave"
    takes: ClassVar[tuple[Takes, ...]] = (NODE,)
    membership: ClassVar[bool] = True
    needs_up: ClassVar[str | None] = "leave"
    node: int


@dataclass(frozen=True, slots=True)
class WantCs(Command):
    """Node `node` asks for the critical section now (a mutex runs beside the election)."""

    name: ClassVar[str] = "want"
    takes: ClassVar[tuple[Takes, ...]] = (NODE,)
    needs_up: ClassVar[str | None] = "ask for the critical section"
    node: int


@dataclass(frozen=True, slots=True)
class EnterByHand(Command):
    """The user is the network: nothing arrives and no timer fires by itself, and the
    clock stands still, until `by-clock` (engine rule 8)."""

    name: ClassVar[str] = "by-hand"


@dataclass(frozen=True, slots=True)
class LeaveByHand(Command):
    """The network runs by itself again, from where the clock stands."""

    name: ClassVar[str] = "by-clock"


@dataclass(frozen=True, slots=True)
class DeliverMessage(Command):
    """Message `msg` arrives now, whatever its place on its link."""

    name: ClassVar[str] = "deliver"
    takes: ClassVar[tuple[Takes, ...]] = (MESSAGE,)
    msg: int


@dataclass(frozen=True, slots=True)
class DropMessage(Command):
    """Message `msg` never arrives (a fault: the cluster needs its time after it)."""

    name: ClassVar[str] = "drop"
    takes: ClassVar[tuple[Takes, ...]] = (MESSAGE,)
    unsettling: ClassVar[bool] = True
    msg: int


@dataclass(frozen=True, slots=True)
class DuplicateMessage(Command):
    """A copy of message `msg` goes on its link, to arrive after a delay of its own."""

    name: ClassVar[str] = "duplicate"
    takes: ClassVar[tuple[Takes, ...]] = (MESSAGE,)
    unsettling: ClassVar[bool] = True
    msg: int


@dataclass(frozen=True, slots=True)
class FireTimer(Command):
    """Node `node`'s timer `timer` fires now (a fault, as an early timeout is)."""

    name: ClassVar[str] = "fire"
    takes: ClassVar[tuple[Takes, ...]] = (NODE, TIMER)
    unsettling: ClassVar[bool] = True
    needs_up: ClassVar[str | None] = "fire a timer"
    node: int
    timer: str


@dataclass(frozen=True, slots=True)
class ChangeTimeout:
    """T + by, never below |by| (a key's step); recorded as the SetTimeout it becomes."""

    by: float


@dataclass(frozen=True, slots=True)
class ChangeDelay:
    """Both delay bounds + by, whole or not at all (the minimum never below 0: a step back
    undoes a step); recorded as the SetDelay it becomes."""

    by: float


NodeCommand = Crash | Recover | Elect | Join | Leave
LinkCommand = HoldLink | ReleaseLink | Partition | Heal | LossyLink
HAND_COMMANDS = (DeliverMessage, DropMessage, DuplicateMessage, FireTimer)  # what the user as the network does
LiveCommand = Command | ChangeTimeout | ChangeDelay  # what a user may ask for live
COMMANDS: dict[str, type[Command]] = {cls.name: cls for cls in (Crash, Recover, Elect, SetTimeout, SetDelay,
                                                                 HoldLink, ReleaseLink, Partition, Heal, Join, Leave, WantCs,
                                                                 LossyLink, EnterByHand, LeaveByHand, DeliverMessage, DropMessage,
                                                                 DuplicateMessage, FireTimer)}
# Derived from the declarations: the commands' usage, those that change membership or
# the links, and those after which the cluster needs its time (monitor rule 6); which
# arguments name nodes is `node_places`.
USAGE = {name: cls.usage() for name, cls in COMMANDS.items()}
MEMBERSHIP_COMMANDS = tuple(name for name, cls in COMMANDS.items() if cls.membership)
LINK_COMMANDS = tuple(name for name, cls in COMMANDS.items() if cls.changes_links)
UNSETTLING_COMMANDS = tuple(name for name, cls in COMMANDS.items() if cls.unsettling)


def membership_refused(algorithm: str) -> str | None:
    """Why `algorithm` cannot take join and leave (one line), or None if it can."""
    why = machine(algorithm).fixed_members
    return f"{split_name(algorithm)[0]} cannot add or remove nodes: {why}" if why else None


def want_refused(algorithm: str) -> str | None:
    """Why `want` means nothing with `algorithm` (one line), or None if it can take it."""
    return None if machine(algorithm).mutex else "want asks for the critical section: run a mutex beside the election (--mutex)"


def delay_refused(algorithm: type | str, high: float) -> str | None:
    """Why links whose delay is at most `high` cannot carry `algorithm` (one line), or
    None: a mutex's traffic that never rests (a token) would go round for ever at one
    instant with no delay. The parser, the reader, the keys and --compare all ask here."""
    mutex = (machine(algorithm) if isinstance(algorithm, str) else algorithm).mutex
    if high > 0 or mutex is None or mutex.never_rests is None:
        return None
    return f"the {mutex.never_rests} of {mutex.name} would go round for ever at one instant with no link delay"


def from_words(name: str, args: tuple) -> Command:
    """A command from the name and arguments the trace recorded (ids, not ranks), as
    `check_words` has checked them."""
    cls = COMMANDS[name]
    return cls(tuple(args)) if NODES in cls.takes else cls(*args)


def check_words(name: object, args: object, nodes: set[int] | tuple[int, ...]) -> Command:
    """A command from the name and arguments a transcript recorded, checked as the command
    line's are: a node one of `nodes` (every node so far; a join's newcomer not yet among
    them), a time in its range. The transcript reader checks every command here, so
    verify, replay and export take and refuse the same ones. A problem raises
    ValueError("field '...': what is wrong")."""
    cls = COMMANDS.get(name) if type(name) is str else None
    if cls is None:
        raise ValueError(f"field 'command': unknown command {shown_json(name)} (expected one of: {', '.join(COMMANDS)})")
    if type(args) is not tuple:
        raise ValueError(f"field 'args': expected a list, got {shown_json(args)}")
    counts = [t.recorded for t in cls.takes]
    if None in counts:  # one or more (a partition's group)
        if not args:
            raise ValueError(f"field 'args': {name} takes one or more nodes, not {shown_json(list(args))}")
    elif len(args) != sum(counts):
        raise ValueError(f"field 'args': {name} takes {arguments_count(sum(counts))}, not {shown_json(list(args))}")
    if any(t.names_nodes for t in cls.takes):
        named = _node_arguments(cls, args)
        for node in named:
            if type(node) is not int or node not in nodes:
                raise ValueError(f"field 'args': {shown_json(list(args))} names a node that is not one of the header's")
        if len(set(named)) != len(named):
            raise ValueError(f"field 'args': {name} names a node twice in {shown_json(list(args))}")
    try:
        if SECONDS in cls.takes:
            args = (TIMEOUT.check(_seconds(args[0]), "timeout"),)
        elif DELAY in cls.takes:
            args = check_delay(_seconds(args[0]), _seconds(args[1]))
        elif PROBABILITY in cls.takes:
            args = (*args[:-1], check_probability(_number(args[-1]), "probability"))
        elif MESSAGE in cls.takes and (type(args[0]) is not int or args[0] < 0):
            raise InputError(f"expected a message's id (0 or more), got {shown_json(args[0])}")
        elif TIMER in cls.takes and (type(args[-1]) is not str or not TIMER_NAME.fullmatch(args[-1])):
            raise InputError(f"expected a timer's name, got {shown_json(args[-1])}")
    except InputError as e:
        raise ValueError(f"field 'args': {e}") from None
    if NEWCOMER in cls.takes and (type(args[0]) is not int or args[0] in nodes):
        raise ValueError(f"field 'args': a join names one new node, not {shown_json(list(args))}")
    return from_words(name, args)


def _node_arguments(cls: type[Command], args: tuple) -> tuple:
    """The arguments of a `cls` that name nodes (a lossy link's ends, not its probability)."""
    return tuple(a for a, node in zip(args, node_places(cls, len(args)), strict=False) if node)


def node_places(cls: type[Command], count: int, newcomer: bool = False) -> list[bool]:
    """Which of a `cls` command's `count` recorded arguments name nodes the cluster has
    (with `newcomer`, a join's new node too)."""
    places: list[bool] = []
    for t in cls.takes:
        n = t.recorded if t.recorded is not None else count - len(places)
        places += [t.names_nodes or (newcomer and t is NEWCOMER)] * n
    return places


def _seconds(value: object) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InputError(f"expected a number of seconds, got {shown_json(value)}")
    return value


def _number(value: object) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InputError(f"expected a number, got {shown_json(value)}")
    return value


def arguments_count(arity: int) -> str:
    return {0: "no arguments", 1: "one argument", 2: "two arguments", 3: "three arguments"}[arity]


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A command to run at virtual time `at`; `source` says where it came from."""

    at: float
    command: Command
    source: str


@dataclass(slots=True)
class Members:
    """Who is in the cluster, as commands read in time order leave it: every node it has
    had (ranks count them all, and so do ids), those that left for good, and those down
    (only commands crash a node and bring it back, so they say which are down). The one
    place that says which commands cannot mean anything: the parser asks it of every
    line, and the app of every key, before the cluster records a command that would do
    nothing."""

    every: tuple[int, ...]
    left: set[int] = field(default_factory=set)
    down: set[int] = field(default_factory=set)  # crashed and not recovered (those that left are `left`)

    @property
    def members(self) -> tuple[int, ...]:
        return tuple(i for i in self.every if i not in self.left)

    def refusal(self, command: Command, name: Callable[[int], str] = str) -> str | None:
        """Why `command` cannot mean anything now (one line, nodes named by `name`), or None."""
        named = command.named()
        strangers = [n for n in named if n not in self.every]
        if strangers:
            return f"node {name(strangers[0])} has not joined the cluster yet"
        gone = [n for n in named if n in self.left]
        if gone:
            return f"node {name(gone[0])} has left the cluster: {command.name} cannot reach it"
        kind, node = type(command), getattr(command, "node", None)
        if kind is Crash and node in self.down:
            return f"node {name(node)} is down already"
        if kind is Recover and node not in self.down:
            return f"node {name(node)} is up: only a crashed node recovers"
        if command.needs_up and node in self.down:
            return f"node {name(node)} is down: only an up node can {command.needs_up}"
        members = self.members
        if type(command) is Leave and members == (command.node,):
            return f"node {name(command.node)} is the last member: the cluster would be empty"
        if type(command) is Partition and len(command.group) >= len(members):
            return "a partition cuts some members off from the others (not none, not all)"
        return None

    def apply(self, command: Command) -> None:
        if type(command) is Join and command.node is not None:
            self.every = tuple(sorted((*self.every, command.node)))
        elif type(command) is Leave:
            self.left.add(command.node)
        elif type(command) is Crash:
            self.down.add(command.node)
        elif type(command) is Recover:
            self.down.discard(command.node)
