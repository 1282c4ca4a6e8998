"""Trace events: the one stream the runtime emits and every observer reads.

The recorder writes them as transcript lines, the summary counts them, the UI draws
them. Each carries `seq` (its place in the stream, from 0) and `t` (virtual seconds);
`kind` is the tag a transcript line carries. Node fields hold ids, never ranks.

A node's send, timer set or cancelled, election begun, and change of state (or of its
place with respect to the critical section) carries `rule`: the key of its algorithm's
rule that made it ("1", "probing 2", "central 3": protocol/interface.py, "Rules, as
data"), or None where the runtime made it (a crash's "down", the workload's timers).

Observers share the same objects, so they treat them as read-only. (They are not frozen
because the cluster stamps `seq`, and a send's `id` and `arrives`, when it merges the
nodes' records; frozen dataclasses cost three times as much to build, and a big run
builds half a million of them.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol import CsState, Message, Status, StatusRole

UNSET = 0  # seq, a send's id and arrival, until the engine stamps them


@dataclass(slots=True)
class Event:
    kind: ClassVar[str] = "event"
    seq: int
    t: float


@dataclass(slots=True)
class SendEvent(Event):
    kind: ClassVar[str] = "send"
    src: int
    dst: int
    id: int
    msg: Message
    arrives: float  # when the link will hand it over (an extension: lets a UI draw it in flight)
    rule: str | None = None  # the rule that sent it


@dataclass(slots=True)
class DeliverEvent(Event):
    kind: ClassVar[str] = "deliver"
    id: int
    src: int
    dst: int


@dataclass(slots=True)
class DropEvent(Event):
    kind: ClassVar[str] = "drop"
    id: int
    src: int
    dst: int
    reason: str


@dataclass(slots=True)
class HeldEvent(Event):
    """A message reached the end of a held link: it waits there, in order, until the
    link is released, and is delivered (or dropped) then."""

    kind: ClassVar[str] = "held"
    id: int
    src: int
    dst: int


@dataclass(slots=True)
class DuplicateEvent(Event):
    """The link copied message `id` (a duplicating link's draw, or the user's by hand): the
    copy arrives at `arrives`, after a delay of its own, as a second arrival of the same
    message (a deliver or drop of the same id)."""

    kind: ClassVar[str] = "duplicate"
    id: int
    src: int
    dst: int
    arrives: float


@dataclass(slots=True)
class StateEvent(Event):
    """A node's status or leader changed. `role` is the one its status carries (what
    its algorithm declares the status to mean: down, electing, waiting, normal), written
    out for readers of a transcript."""

    kind: ClassVar[str] = "state"
    node: int
    status: Status
    leader: int | None
    role: StatusRole
    epoch: int = 0  # the node's cluster epoch at this change
    rule: str | None = None  # the rule that made the change (None: the runtime's, a crash)

    @property
    def normal(self) -> bool:
        return self.role is StatusRole.NORMAL


@dataclass(slots=True)
class CsEvent(Event):
    """A node's place with respect to the critical section changed (a mutex runs beside
    the election): released, wanted or held."""

    kind: ClassVar[str] = "cs"
    node: int
    state: CsState
    stamp: int | None = None  # its request's timestamp, where requests are ordered by (timestamp, id)
    rule: str | None = None  # the mutex's rule that made the change


@dataclass(slots=True)
class StartEvent(Event):
    """A node boots at time 0 (protocol-wise the same as a recovery)."""

    kind: ClassVar[str] = "start"
    node: int


@dataclass(slots=True)
class CrashEvent(Event):
    kind: ClassVar[str] = "crash"
    node: int


@dataclass(slots=True)
class RecoverEvent(Event):
    kind: ClassVar[str] = "recover"
    node: int


@dataclass(slots=True)
class JoinEvent(Event):
    """A new node joined the cluster and started (as a recovering node does)."""

    kind: ClassVar[str] = "join"
    node: int


@dataclass(slots=True)
class LeaveEvent(Event):
    """A node left the cluster for good, having told the others."""

    kind: ClassVar[str] = "leave"
    node: int


@dataclass(slots=True)
class TimerEvent(Event):
    """A timer fired."""

    kind: ClassVar[str] = "timer"
    node: int
    name: str


@dataclass(slots=True)
class TimerSetEvent(Event):
    kind: ClassVar[str] = "timer_set"
    node: int
    name: str
    fires: float
    rule: str | None = None  # the rule that set it (None: the workload's)


@dataclass(slots=True)
class TimerCancelEvent(Event):
    kind: ClassVar[str] = "timer_cancel"
    node: int
    name: str
    rule: str | None = None


@dataclass(slots=True)
class ElectionStartEvent(Event):
    """A node began an election run (the protocol's ElectionStarted output)."""

    kind: ClassVar[str] = "election_start"
    node: int
    rule: str | None = None


@dataclass(slots=True)
class CommandEvent(Event):
    """A command took effect: `command` with `args`, from `source` (scenario, at, user)."""

    kind: ClassVar[str] = "command"
    command: str
    args: tuple[int | float | str, ...]  # (a string: a timer's name, `fire K NAME`)
    source: str


@dataclass(slots=True)
class ViolationEvent(Event):
    """The monitor saw a property broken (`phase` "begin"), or an episode of it end
    ("end", with its `duration`). SLE2 is checked at one moment, so it only begins.
    monitor.describe() makes the one line people read from these fields.

    property  "sle1" (normal nodes disagree on the leader), "split_brain" (two nodes
              each lead), "sle2" (not settled c seconds after the last fault); with a
              mutex, "mutex" (two in the critical section) and "cs_wait" (nodes wait,
              nobody has held it for c seconds: it only begins)
    nodes     the nodes involved when it began
    leaders   whom each of `nodes` followed then (None: nobody)
    expected  SLE2: the highest up node, whom all should follow
    since     SLE2: the last fault (monitor rule 6), c seconds before; cs_wait: since
              when nodes have waited with nobody inside
    """

    kind: ClassVar[str] = "violation"
    property: str
    phase: str
    nodes: tuple[int, ...]
    leaders: tuple[int | None, ...]
    expected: int | None = None
    since: float | None = None
    duration: float | None = None


@dataclass(slots=True)
class AgreementEvent(Event):
    """The monitor's verdict at the end of an instant, when it changes: every up node
    is normal under the highest up node (`leader`), or no longer (None)."""

    kind: ClassVar[str] = "agreement"
    leader: int | None


# A node's lane: after these it is down (crashed, or gone for good), after those up. The
# one place that says so, for the monitor's view of who is up, the UI and the exports.
GOES_DOWN: tuple[type[Event], ...] = (CrashEvent, LeaveEvent)
COMES_UP: tuple[type[Event], ...] = (StartEvent, RecoverEvent, JoinEvent)
GOES_DOWN_KINDS = tuple(cls.kind for cls in GOES_DOWN)
COMES_UP_KINDS = tuple(cls.kind for cls in COMES_UP)


def down_after(down: frozenset[int], kind: str, node: int) -> frozenset[int]:
    """Who is down after an event of `kind` on `node` (crashed, left, or not yet joined),
    from who was down before it: the one rule the diagram (`d`) and the SVG export draw
    their lanes by."""
    if kind in GOES_DOWN_KINDS:
        return down | {node}
    if kind in COMES_UP_KINDS:
        return down - {node}
    return down


def down_before(down: frozenset[int], kind: str, node: int) -> frozenset[int]:
    """The same rule backwards: who was down before the event, from who is after it (a
    node that comes up in a window, or joins, was down, or not there, before)."""
    if kind in GOES_DOWN_KINDS:
        return down - {node}
    if kind in COMES_UP_KINDS:
        return down | {node}
    return down


EVENT_TYPES: tuple[type[Event], ...] = (
    SendEvent,
    DeliverEvent,
    DropEvent,
    HeldEvent,
    DuplicateEvent,
    StateEvent,
    CsEvent,
    StartEvent,
    CrashEvent,
    RecoverEvent,
    JoinEvent,
    LeaveEvent,
    TimerEvent,
    TimerSetEvent,
    TimerCancelEvent,
    ElectionStartEvent,
    CommandEvent,
    ViolationEvent,
    AgreementEvent,
)
