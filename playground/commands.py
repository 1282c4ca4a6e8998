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

A scenario file may also hold settings, `set NAME VALUE`, with the names of the command
line options (`set algorithm ring`, `set nodes 8`, `set delay 1`). They are defaults:
an option given on the command line wins. Every check happens before anything runs,
and a failure names the file and line.

Each command is a small typed value. `words()` gives its name and arguments as the
trace records them, and `from_words` reads them back (a transcript's commands are the
recipe that re-creates its run). The keys' "raise T by 0.5 s" and "lower the delay by
0.25 s" are relative (`ChangeTimeout`, `ChangeDelay`): the engine resolves them against
the settings it has when they run, and records the absolute command they became.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from protocol import ALGORITHMS

from .config import INSTANT, TIMEOUT, InputError, check_delay
from .files import read_text
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
class ChangeTimeout:
    """T + by, never below |by| (a key's step); recorded as the SetTimeout it becomes."""

    by: float


@dataclass(frozen=True, slots=True)
class ChangeDelay:
    """Both delay bounds + by, never below 0; recorded as the SetDelay it becomes."""

    by: float


NodeCommand = Crash | Recover | Elect | Join | Leave
LinkCommand = Hold | Release | Partition | Heal
Command = Crash | Recover | Elect | SetTimeout | SetDelay | Hold | Release | Partition | Heal | Join | Leave
Request = Command | ChangeTimeout | ChangeDelay  # what a user may ask for live
NODE_COMMANDS: tuple[type, ...] = (Crash, Recover, Elect, Leave)
MEMBERSHIP_COMMANDS = ("join", "leave")
COMMANDS: dict[str, type] = {cls.name: cls for cls in (Crash, Recover, Elect, SetTimeout, SetDelay,
                                                         Hold, Release, Partition, Heal, Join, Leave)}
USAGE = {"crash": "crash K", "recover": "recover K", "elect": "elect K", "timeout": "timeout T", "delay": "delay MIN[:MAX]",
         "hold": "hold K L", "release": "release K L", "partition": "partition K,L,...", "heal": "heal",
         "join": "join", "leave": "leave K"}
ARITY = {"hold": 2, "release": 2, "heal": 0, "join": 0}  # arguments each takes (the others: one)
# whose arguments are nodes the cluster already has (join's is the newcomer)
NODE_ARGUMENTS = ("crash", "recover", "elect", "hold", "release", "partition", "leave")


def membership_refused(algorithm: str) -> str | None:
    """Why `algorithm` cannot take join and leave (one line), or None if it can."""
    why = ALGORITHMS[algorithm].fixed_members
    return f"{algorithm} cannot add or remove nodes: {why}" if why else None


def held_after(held: frozenset[tuple[int, int]], name: str, args: tuple, ids: tuple[int, ...]) -> frozenset[tuple[int, int]]:
    """The links held once the link command `name` with `args` (ids) has run: for whoever
    follows them from the trace (the engine holds the links themselves)."""
    if name == "hold":
        return held | {tuple(args)}
    if name == "release":
        return held - {tuple(args)}
    if name == "partition":
        inside, outside = set(args), set(ids) - set(args)
        return held | {(a, b) for a in inside for b in outside} | {(b, a) for a in inside for b in outside}
    return frozenset()  # heal


def from_words(name: str, args: tuple) -> Command:
    """A command from the name and arguments the trace recorded (ids, not ranks)."""
    cls = COMMANDS[name]
    return Partition(tuple(args)) if cls is Partition else cls(*args)


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A command to run at virtual time `at`; `source` says where it came from."""

    at: float
    command: Command
    source: str


def parse_number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, not {text!r}")
    return value


def parse_delay(text: str) -> tuple[float, float]:
    """`MIN` (a constant delay) or `MIN:MAX`, in seconds."""
    low, sep, high = text.partition(":")
    delay_min = parse_number(low, "minimum delay")
    delay_max = parse_number(high, "maximum delay") if sep else delay_min
    return check_delay(delay_min, delay_max)


def parse_node(text: str, ids: tuple[int, ...]) -> int:
    """A rank (1 is the lowest id), as the id it names."""
    try:
        rank = int(text)
    except ValueError:
        raise InputError(f"node must be a whole number, not {text!r}") from None
    if not 1 <= rank <= len(ids):
        raise InputError(f"there is no node {rank} (nodes are 1..{len(ids)})")
    return ids[rank - 1]


def parse_command(words: list[str], ids: tuple[int, ...], seed: int = 1) -> Command:
    """A command's words, its nodes named by rank among `ids` (every node so far);
    a join's newcomer gets its id from `ids` and the seed."""
    name, args = words[0].lower(), words[1:]
    if name not in COMMANDS:
        raise InputError(f"unknown command {words[0]!r} (expected one of: {', '.join(COMMANDS)})")
    arity = ARITY.get(name, 1)
    if len(args) != arity:
        count = {0: "no arguments", 1: "one argument", 2: "two arguments"}[arity]
        raise InputError(f"{name} takes {count}: {USAGE[name]}")
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
        group = tuple(sorted({parse_node(k, ids) for k in args[0].split(",") if k}))
        if not group or len(group) == len(ids):
            raise InputError(f"partition cuts some nodes off from the others: {USAGE[name]} (not none, not all)")
        return Partition(group)
    if cls is Join:
        return Join(next_id(ids, seed))
    return Heal()


@dataclass(frozen=True, slots=True)
class Line:
    """A `TIME COMMAND ARGS` line from a scenario or --at, not yet parsed: `where` names it."""

    text: str
    source: str
    where: str


def parse_lines(lines: list[Line], ids: tuple[int, ...], seed: int) -> list[Scheduled]:
    """Command lines, blank and comment lines skipped, into commands in time order (lines
    of one time in the order given). They are read in that order so that a rank can
    name a node that joined before it (`ids` grows with each join)."""
    timed = []
    for line in lines:
        words = line.text.split("#", 1)[0].split()
        if not words:
            continue
        try:
            if len(words) < 2:
                raise InputError("expected TIME COMMAND ARGS")
            timed.append((INSTANT.check(parse_number(words[0], "time")), words[1:], line))
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
    timed.sort(key=lambda entry: entry[0])  # stable
    out = []
    every = tuple(ids)
    for at, words, line in timed:
        try:
            command = parse_command(words, every, seed)
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
        if type(command) is Join:
            every = tuple(sorted((*every, command.node)))
        out.append(Scheduled(at, command, line.source))
    return out


# The options a scenario may set (`set NAME VALUE`), as the command line spells them.
SETTINGS = ("algorithm", "nodes", "ids", "seed", "timeout", "coordinator-timeout", "delay", "probe-interval", "settle")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario file, read but not yet checked against a cluster: its settings
    (name -> (value, where)) and its command lines ((where, text), in order)."""

    path: str
    settings: dict[str, tuple[str, str]]
    lines: tuple[tuple[str, str], ...]

    def lines_to_run(self) -> list[Line]:
        return [Line(text, "scenario", where) for where, text in self.lines]


SCENARIO_LIMIT = 1_000_000  # bytes: a scenario is a page of commands, not a data set


def read_scenario(path: str) -> Scenario:
    text = read_text(path, "scenario", SCENARIO_LIMIT)
    settings: dict[str, tuple[str, str]] = {}
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path} line {n}"
        words = line.split("#", 1)[0].split()
        if words and words[0].lower() == "set":
            if len(words) != 3:
                raise InputError(f"{where}: expected set NAME VALUE")
            name = words[1].lower()
            if name not in SETTINGS:
                raise InputError(f"{where}: unknown setting {words[1]!r} (expected one of: {', '.join(SETTINGS)})")
            if name in settings:
                raise InputError(f"{where}: {name} is already set on {settings[name][1]}")
            settings[name] = (words[2], where)
        else:
            lines.append((where, line))
    return Scenario(path, settings, tuple(lines))


def at_lines(texts: list[str]) -> list[Line]:
    return [Line(text, "at", f"--at {text!r}") for text in texts]


def parse_at(texts: list[str], ids: tuple[int, ...], seed: int = 1) -> list[Scheduled]:
    return parse_lines(at_lines(texts), ids, seed)
