"""Commands that steer a run, and the one parser for `--at` and scenario files.

Syntax, one per line: `TIME COMMAND ARGS`; `#` starts a comment; blank lines are skipped.
  crash K | recover K | elect K | timeout T | delay MIN[:MAX]
  hold K L | release K L | partition K,L,... | heal | join | leave K
K names a node by rank: 1 is the lowest id, N the highest. With the default ids 1..N
rank and id are the same number; with `--ids uuid` the rank is how to name a node. The
parser turns ranks into ids, so a command holds ids from then on (and so does the trace).

`join` adds a node with a new id (ids.next_id: N+1, or a new UUID), which starts as a
recovering node; `leave K` makes node K leave for good, telling the others. Ranks count
every node the cluster has had, those that left too: the lines are read in time order,
so a command after a join can name the newcomer (with 1..N ids, the newcomer is N+1).

Every check happens before anything runs, and a failure names where the line came
from (a scenario file's line: scenario.py reads those files).

Each command is a small typed value. `words()` gives its name and arguments as the
trace records them, and `from_words` reads them back (a transcript's commands are the
recipe that re-creates its run). The keys' "raise T by 0.5 s" and "lower the delay by
0.25 s" are relative (`ChangeTimeout`, `ChangeDelay`): the engine resolves them against
the settings it has when they run, and records the absolute command they became.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from protocol import machine, split_name

from .config import (
    INSTANT,
    TIMEOUT,
    ClusterConfig,
    InputError,
    check_delay,
    parse_number,
    parse_whole,
    shown,
    shown_json,
)
from .ids import next_id


@dataclass(frozen=True, slots=True)
class Crash:
    name: ClassVar[str] = "crash"
    node: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


@dataclass(frozen=True, slots=True)
class Recover:
    name: ClassVar[str] = "recover"
    node: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


@dataclass(frozen=True, slots=True)
class Elect:
    """The node's failure detector fires: it starts an election."""

    name: ClassVar[str] = "elect"
    node: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


@dataclass(frozen=True, slots=True)
class SetTimeout:
    name: ClassVar[str] = "timeout"
    seconds: float

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.seconds,)


@dataclass(frozen=True, slots=True)
class SetDelay:
    name: ClassVar[str] = "delay"
    low: float
    high: float

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.low, self.high)


@dataclass(frozen=True, slots=True)
class Hold:
    """Messages from `src` to `dst` wait at the link's end, in order, until released."""

    name: ClassVar[str] = "hold"
    src: int
    dst: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.src, self.dst)


@dataclass(frozen=True, slots=True)
class Release:
    """The link from `src` to `dst` delivers again: what waited arrives now, in order."""

    name: ClassVar[str] = "release"
    src: int
    dst: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.src, self.dst)


@dataclass(frozen=True, slots=True)
class Partition:
    """Cut `group` off from every other node, both ways: each link across the cut held."""

    name: ClassVar[str] = "partition"
    group: tuple[int, ...]

    def words(self) -> tuple[str, tuple]:
        return self.name, self.group


@dataclass(frozen=True, slots=True)
class Heal:
    """Release every held link."""

    name: ClassVar[str] = "heal"

    def words(self) -> tuple[str, tuple]:
        return self.name, ()


@dataclass(frozen=True, slots=True)
class Join:
    """A new node, `node`, joins and starts as a recovering node (ids.next_id makes its
    id: when the line is read, or for a live key, None, when it runs)."""

    name: ClassVar[str] = "join"
    node: int | None = None

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


@dataclass(frozen=True, slots=True)
class Leave:
    """Node `node` leaves for good, telling the others."""

    name: ClassVar[str] = "leave"
    node: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


@dataclass(frozen=True, slots=True)
class Want:
    """Node `node` asks for the critical section now (a mutex runs beside the election)."""

    name: ClassVar[str] = "want"
    node: int

    def words(self) -> tuple[str, tuple]:
        return self.name, (self.node,)


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
LinkCommand = Hold | Release | Partition | Heal
Command = Crash | Recover | Elect | SetTimeout | SetDelay | Hold | Release | Partition | Heal | Join | Leave | Want
Request = Command | ChangeTimeout | ChangeDelay  # what a user may ask for live
NODE_COMMANDS: tuple[type, ...] = (Crash, Recover, Elect, Leave, Want)
MEMBERSHIP_COMMANDS = ("join", "leave")
LINK_COMMANDS = ("hold", "release", "partition", "heal")
# Commands after which the cluster needs its time, as after a fault (monitor rule 6): a
# change of the links, an election started on purpose, new T or delays (c changes too).
UNSETTLING_COMMANDS = (*LINK_COMMANDS, "elect", "timeout", "delay")
COMMANDS: dict[str, type] = {cls.name: cls for cls in (Crash, Recover, Elect, SetTimeout, SetDelay,
                                                         Hold, Release, Partition, Heal, Join, Leave, Want)}
USAGE = {"crash": "crash K", "recover": "recover K", "elect": "elect K", "timeout": "timeout T", "delay": "delay MIN[:MAX]",
         "hold": "hold K L", "release": "release K L", "partition": "partition K,L,...", "heal": "heal",
         "join": "join", "leave": "leave K", "want": "want K"}
ARITY = {"hold": 2, "release": 2, "heal": 0, "join": 0}  # arguments each takes as typed (the others: one)
RECORDED_ARITY = {**ARITY, "delay": 2, "join": 1}  # ... and as the trace records them (words())
# whose arguments are nodes the cluster already has (join's is the newcomer)
NODE_ARGUMENTS = ("crash", "recover", "elect", "hold", "release", "partition", "leave", "want")
NODE_ARGUMENT_COMMANDS = tuple(COMMANDS[name] for name in NODE_ARGUMENTS)


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


@dataclass(frozen=True, slots=True)
class Settings:
    """What commands set that everyone watching a run must see alike: T and the delays
    (`config`) and the links held. The engine and every fold of a trace (the app's state
    at any instant) work them out here, from the command's recorded words, so the two
    cannot disagree."""

    config: ClusterConfig
    held: frozenset[tuple[int, int]] = frozenset()

    def after(self, name: str, args: tuple, ids: tuple[int, ...]) -> Settings:
        """The settings once the command `name` with `args` (as recorded: ids, seconds) has run."""
        if name == "timeout":
            return Settings(self.config.with_timeout(*args), self.held)
        if name == "delay":
            return Settings(self.config.with_delay(*args), self.held)
        if name in LINK_COMMANDS:
            return Settings(self.config, held_after(self.held, name, args, ids))
        return self

    @property
    def synchronous(self) -> bool:
        """The synchrony bound holds: T >= 2 x max delay, and no link is held."""
        return self.config.synchronous and not self.held


def held_after(held: frozenset[tuple[int, int]], name: str, args: tuple, ids: tuple[int, ...]) -> frozenset[tuple[int, int]]:
    if name == "hold":
        return held | {tuple(args)}
    if name == "release":
        return held - {tuple(args)}
    if name == "partition":
        inside, outside = set(args), set(ids) - set(args)
        return held | {(a, b) for a in inside for b in outside} | {(b, a) for a in inside for b in outside}
    return frozenset()  # heal


def from_words(name: str, args: tuple) -> Command:
    """A command from the name and arguments the trace recorded (ids, not ranks), as
    `check_words` has checked them."""
    cls = COMMANDS[name]
    return Partition(tuple(args)) if cls is Partition else cls(*args)


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
    arity = RECORDED_ARITY.get(name, 1)
    if len(args) != arity and not (cls is Partition and args):
        raise ValueError(f"field 'args': {name} takes {_count(arity)}, not {shown_json(list(args))}")
    if cls in NODE_ARGUMENT_COMMANDS:
        for node in args:
            if type(node) is not int or node not in nodes:
                raise ValueError(f"field 'args': {shown_json(list(args))} names a node that is not one of the header's")
        if len(set(args)) != len(args):
            raise ValueError(f"field 'args': {name} names a node twice in {shown_json(list(args))}")
    try:
        if cls is SetTimeout:
            return SetTimeout(TIMEOUT.check(_seconds(args[0]), "timeout"))
        if cls is SetDelay:
            return SetDelay(*check_delay(_seconds(args[0]), _seconds(args[1])))
    except InputError as e:
        raise ValueError(f"field 'args': {e}") from None
    if cls is Join and (type(args[0]) is not int or args[0] in nodes):
        raise ValueError(f"field 'args': a join names one new node, not {shown_json(list(args))}")
    return from_words(name, args)


def _seconds(value: object) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InputError(f"expected a number of seconds, got {shown_json(value)}")
    return value


def _count(arity: int) -> str:
    return {0: "no arguments", 1: "one argument", 2: "two arguments"}[arity]


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A command to run at virtual time `at`; `source` says where it came from."""

    at: float
    command: Command
    source: str


def parse_delay(text: str, what: str | None = None) -> tuple[float, float]:
    """`MIN` (a constant delay) or `MIN:MAX`, in seconds; a problem names `what` (the
    option, `--delay`) before the bound it is about."""
    try:
        low, sep, high = text.partition(":")
        delay_min = parse_number(low, "minimum delay")
        delay_max = parse_number(high, "maximum delay") if sep else delay_min
        return check_delay(delay_min, delay_max)
    except InputError as e:
        raise InputError(f"{what}: {e}" if what else str(e)) from None


def parse_node(text: str, ids: tuple[int, ...]) -> int:
    """A rank (1 is the lowest id), as the id it names."""
    rank = parse_whole(text, "node", 1)
    if rank > len(ids):
        raise InputError(f"there is no node {rank} (nodes are 1..{len(ids)})")
    return ids[rank - 1]


def parse_list(text: str, what: str) -> list[str]:
    """`1,2,5` -> ["1", "2", "5"]: a comma-separated list, no item empty."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise InputError(f"{what} must be a comma-separated list, not {shown(text)}")
    return items


def parse_command(words: list[str], ids: tuple[int, ...], seed: int = 1) -> Command:
    """A command's words, its nodes named by rank among `ids` (every node so far);
    a join's newcomer gets its id from `ids` and the seed."""
    name, args = words[0].lower(), words[1:]
    if name not in COMMANDS:
        raise InputError(f"unknown command {shown(words[0])} (expected one of: {', '.join(COMMANDS)})")
    arity = ARITY.get(name, 1)
    if len(args) != arity:
        raise InputError(f"{name} takes {_count(arity)}: {USAGE[name]}")
    cls = COMMANDS[name]
    if cls in NODE_COMMANDS:
        return cls(parse_node(args[0], ids))
    if cls is SetTimeout:
        return SetTimeout(TIMEOUT.check(parse_number(args[0], "timeout")))
    if cls is SetDelay:
        return SetDelay(*parse_delay(args[0]))
    if cls in (Hold, Release):
        src, dst = parse_node(args[0], ids), parse_node(args[1], ids)
        if src == dst:
            raise InputError(f"{name} needs two different nodes: {USAGE[name]}")
        return cls(src, dst)
    if cls is Partition:
        return Partition(tuple(sorted({parse_node(k, ids) for k in parse_list(args[0], "partition's nodes")})))
    if cls is Join:
        return Join(next_id(ids, seed))
    return Heal()


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
        nodes = getattr(command, "node", None), getattr(command, "src", None), getattr(command, "dst", None)
        named = [n for n in (*nodes, *getattr(command, "group", ())) if n is not None]
        strangers = [n for n in named if n not in self.every]
        if strangers and type(command) is not Join:
            return f"node {name(strangers[0])} has not joined the cluster yet"
        gone = [n for n in named if n in self.left]
        if gone:
            return f"node {name(gone[0])} has left the cluster: {command.name} cannot reach it"
        kind, node = type(command), getattr(command, "node", None)
        if kind is Crash and node in self.down:
            return f"node {name(node)} is down already"
        if kind is Recover and node not in self.down:
            return f"node {name(node)} is up: only a crashed node recovers"
        if (kind is Elect or kind is Leave or kind is Want) and node in self.down:
            can = {Elect: "start an election", Leave: "leave", Want: "ask for the critical section"}[kind]
            return f"node {name(node)} is down: only an up node can {can}"
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


@dataclass(frozen=True, slots=True)
class Line:
    """A `TIME COMMAND ARGS` line from a scenario or --at, not yet parsed: `where` names it."""

    text: str
    source: str
    where: str


def parse_lines(lines: list[Line], ids: tuple[int, ...], seed: int,
                ends: tuple[float, str] | None = None) -> list[Scheduled]:
    """Command lines, blank and comment lines skipped, into commands in time order (lines
    of one time in the order given). They are read in that order so that a rank can
    name a node that joined before it, and a command on a node that has left by then,
    which could only do nothing, is refused (Members). `ends`: when the run ends, and
    what says so (a headless run's --until): a command after it would never run."""
    timed = []
    for line in lines:
        words = line.text.split("#", 1)[0].split()
        if not words and line.source == "scenario":
            continue  # a file's blank lines and comments; an --at must say something
        try:
            if len(words) < 2:
                raise InputError("expected TIME COMMAND ARGS")
            at = INSTANT.check(parse_number(words[0], "time"))
            if ends is not None and at > ends[0]:
                raise InputError(f"at {at:g} s, after the run ends at {ends[0]:g} s ({ends[1]}): it would never run")
            timed.append((at, words[1:], line))
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
    timed.sort(key=lambda entry: entry[0])  # stable
    out = []
    members = Members(tuple(ids))
    for at, words, line in timed:
        try:
            command = parse_command(words, members.every, seed)
            if why := members.refusal(command, lambda node: str(members.every.index(node) + 1)):
                raise InputError(f"at {at:g} s, {why}")
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
        members.apply(command)
        out.append(Scheduled(at, command, line.source))
    return out


def at_lines(texts: list[str]) -> list[Line]:
    return [Line(text, "at", f"--at {shown(text)}") for text in texts]


def parse_at(texts: list[str], ids: tuple[int, ...], seed: int = 1) -> list[Scheduled]:
    return parse_lines(at_lines(texts), ids, seed)
