"""A transcript read into what a space-time diagram draws: messages, lanes, violations, commands.

`collect` reads a transcript once (streamed: it may be large) into a `Diagram`: the
messages (sent, delivered or dropped, or not yet arrived when the window closes), what
happened on each node's lane (start, crash, recovery, join, leave, state changes, the
critical section), the violations and the commands, plus one list of all of it in the
transcript's order. The writers (`svg.py`, `mermaid_shiviz.py`) draw that.

A message the link lost is a drop ("lost on the link") where it would have arrived; a copy
the link made (a `duplicate` event) is a flight of its own from the copy's making, labelled
"(copy)", which arrives as a second delivery (or drop) of the same message id.

A node's send and change of state name the rule that made them (`rule`, transcripts of
version 4 on): the text writers say its key ("· rule 4", "· probing 2"), the SVG's
tooltips its sentence too (`Diagram.rules`, the algorithm's table).

Filters: a time window (a message is in it if it was sent in it), nodes by rank (a
message if both its ends are; for one node, if either is), message types by label. A
message sent in the window that has not arrived when it closes is read on for: its
delivery or drop after the window (`Flight.later`) is what the drawing tells of it, not
"in flight" (reading on stops once no message of the window is left open). A window
that ends before the transcript does ends the view there (`--to 11.5`: at 11.5).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain

from protocol import CsState, MessageRole, StatusRole, machine

from ..core.config import InputError
from ..core.events import (
    COMES_UP,
    GOES_DOWN,
    CommandEvent,
    CrashEvent,
    CsEvent,
    DeliverEvent,
    DropEvent,
    DuplicateEvent,
    Event,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    ViolationEvent,
    down_after,
    down_before,
)
from ..core.monitor import PROPERTY_NAMES, describe
from ..core.settings import Assumptions
from .labels import command_text, node_labels, rule_text
from .look import CS_LOOK, CS_WORD
from .reader import Reader


@dataclass(slots=True)
class Flight:
    """One message: sent, and then delivered or dropped in the window, or (ended None) not
    by the window's end: then `later` says what became of it after, if the transcript
    says (when, dropped), None if it never arrived."""

    id: int
    src: int
    dst: int
    label: str
    role: MessageRole
    sent: float
    ended: float | None = None
    dropped: bool = False
    why: str = ""  # a drop's reason: "receiver down"
    later: tuple[float, bool] | None = None
    due: float | None = None  # when the link said it would arrive (a copy's and its original's may differ)
    rule: str | None = None  # the rule that sent it


@dataclass(frozen=True, slots=True)
class Mark:
    """Something on one node's lane: start, crash, recover, join, leave, or a state change."""

    t: float
    node: int
    kind: str
    text: str  # all of it (Mermaid, ShiViz, the tooltip): "normal, leader 7 · rule 5"
    word: str  # what the lane says beside its glyph: "normal → 7", "recovered"
    role: StatusRole | None = None  # a state change's status role
    look: tuple[str, str] | None = None  # a glyph and colour of its own (the critical section's), instead of the role's
    rule: str | None = None  # the rule that made it (a change of state)


@dataclass(slots=True)
class Band:
    """A violation, from its begin to its end (None: it lasts to the end)."""

    t: float
    text: str
    nodes: tuple[int, ...]
    end: float | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """The commands one source gave at one instant, as the log tells them: "at: crash 5 · elect 1"."""

    t: float
    text: str


@dataclass(slots=True)
class Diagram:
    ids: tuple[int, ...]
    labels: dict[int, str]
    start: float
    stop: float  # where the view ends: the window's end, if the transcript goes on past it; else its last event's time
    flights: list[Flight] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    commands: list[Note] = field(default_factory=list)
    down: frozenset[int] = frozenset()  # the lanes' nodes down (or not yet joined) when the window opens
    inside: list[tuple[int, float, float]] = field(default_factory=list)  # (node, from, to) in the critical section
    # Everything in the transcript's order: ("send" | "copy" | "deliver" | "drop", Flight) or ("mark", Mark).
    order: list[tuple[str, Flight | Mark]] = field(default_factory=list)
    rules: dict[str, str] = field(default_factory=dict)  # the algorithm's rules, key -> sentence


@dataclass(frozen=True, slots=True)
class Filters:
    start: float = 0.0
    stop: float = math.inf
    # Nodes by rank; none: all. Several: the messages between them, and their lanes. One
    # (the app's log filtered to a node): its messages with any node, its lane and the
    # lanes of the nodes it exchanged them with, as the app's `d` draws it.
    ranks: tuple[int, ...] = ()
    types: tuple[str, ...] = ()  # message labels, any case; none: all
    detector: bool = True  # failure-detector traffic too (the app's log hides it until asked)
    nodes: tuple[int, ...] = ()  # instead of ranks, by id (the app's: a node that joined has no rank in the header)


UP_DOWN_EVENTS = (*GOES_DOWN, *COMES_UP)


def collect(path: str, filters: Filters = Filters()) -> Diagram:
    """Read a transcript into what a diagram draws (every check the Reader makes)."""
    with Reader.open(path) as reader:
        header = reader.header
        ids = header.nodes
        for rank in filters.ranks:
            if not 1 <= rank <= len(ids):
                raise InputError(f"--nodes: there is no node {rank} (the transcript has {len(ids)}, by rank 1 to {len(ids)})")
        picked = bool(filters.ranks or filters.nodes)
        chosen = tuple(sorted(set(filters.nodes))) or tuple(ids[r - 1] for r in sorted(set(filters.ranks))) or ids
        ends = 1 if len(chosen) == 1 and picked else 2  # how many of a message's ends must be chosen
        known = {m.label.lower(): m.label for m in machine(header.algorithm).wire_messages()}
        for name in filters.types:
            if name.lower() not in known:
                raise InputError(f"--types: {header.algorithm} has no message {name!r} (its messages: {', '.join(known.values())})")
        types = {known[n.lower()] for n in filters.types}
        inside = set(chosen)
        diagram = Diagram(chosen, node_labels(ids), filters.start, filters.start,
                          rules=machine(header.algorithm).rule_table())
        flights: dict[int, list[Flight]] = {}  # id -> its flights not yet arrived: the message, and any copy
        assumptions = Assumptions(header.config, tuple(ids))  # what is broken, for a violation's band
        order, marks = diagram.order, diagram.marks
        down: frozenset[int] = frozenset()  # followed from the first event: a lane may begin dashed
        entered: dict[int, float] = {}  # node -> since when it has held the critical section
        events = reader.events()
        for e in events:
            if e.t > filters.stop:
                diagram.stop = filters.stop
                _after_the_window(e, events, flights)
                break
            kind = type(e)
            if kind is SendEvent:
                if e.t < filters.start or (e.src in inside) + (e.dst in inside) < ends:
                    continue
                if types and e.msg.label not in types or not filters.detector and e.msg.role is MessageRole.DETECTOR:
                    continue
                flight = Flight(e.id, e.src, e.dst, e.msg.label, e.msg.role, e.t, due=e.arrives, rule=e.rule)
                flights[e.id] = [flight]
                diagram.flights.append(flight)
                order.append(("send", flight))
            elif kind is DuplicateEvent:
                original = flights.get(e.id)
                if original:  # (a copy of a message the view draws)
                    first = original[0]
                    flight = Flight(e.id, e.src, e.dst, f"{first.label} (copy)", first.role, e.t, due=e.arrives)
                    original.append(flight)
                    diagram.flights.append(flight)
                    order.append(("copy", flight))
            elif kind is DeliverEvent or kind is DropEvent:
                flight = _arrived(flights, e)
                if flight is not None:
                    flight.ended, flight.dropped = e.t, kind is DropEvent
                    flight.why = e.reason if flight.dropped else ""
                    order.append(("drop" if flight.dropped else "deliver", flight))
            else:
                if kind is CommandEvent:
                    assumptions.observe(e)
                if kind is CommandEvent and e.command == "join":  # a lane for the newcomer
                    ids = tuple(sorted((*ids, *e.args)))
                    diagram.labels.update(node_labels(ids))
                    if not picked:
                        diagram.ids = ids
                        inside.update(e.args)
                elif kind in UP_DOWN_EVENTS:
                    down = down_after(down, e.kind, e.node)
                if kind is CsEvent or kind in GOES_DOWN:  # a stay in the critical section begins or ends
                    if e.node in entered and (kind is not CsEvent or e.state is not CsState.HELD):
                        since = max(entered.pop(e.node), filters.start)
                        if e.t >= filters.start:
                            diagram.inside.append((e.node, since, e.t))
                    elif kind is CsEvent and e.state is CsState.HELD and e.node in inside:
                        entered[e.node] = e.t
                if e.t < filters.start:
                    continue
                if kind is ViolationEvent:
                    _violation(e, diagram, assumptions.text())
                elif kind is CommandEvent:
                    _command(e, diagram)
                else:
                    mark = _mark(e, diagram.labels)
                    if mark is not None:
                        marks.append(mark)
                        order.append(("mark", mark))
            diagram.stop = max(diagram.stop, e.t)  # (a delivery before the window is not in it)
    diagram.inside += [(node, max(since, filters.start), diagram.stop) for node, since in entered.items()]
    for m in reversed(marks):  # who was down when the window opened, from who is at its end
        down = down_before(down, m.kind, m.node)
    if picked:
        _keep_lanes(diagram, ids)
    diagram.down = down & frozenset(diagram.ids)
    return diagram


def _arrived(flights: dict[int, list[Flight]], e: DeliverEvent | DropEvent) -> Flight | None:
    """The flight a delivery or drop ends: of message e.id's (it and any copy), the one due
    then, else the first (by hand, the user delivers at a time of their own)."""
    open_ = flights.get(e.id)
    if not open_:
        return None
    flight = next((f for f in open_ if f.due == e.t), open_[0])
    open_.remove(flight)
    if not open_:
        del flights[e.id]
    return flight


def _after_the_window(first: Event, events: Iterator[Event], open_: dict[int, list[Flight]]) -> None:
    """What became of the window's messages still open when it closes: their deliveries
    and drops after it, read on until none is left open (or the transcript ends)."""
    if not open_:
        return
    for e in chain((first,), events):
        kind = type(e)
        if kind is DeliverEvent or kind is DropEvent:
            flight = _arrived(open_, e)
            if flight is not None:
                flight.later = (e.t, kind is DropEvent)
                if not open_:
                    return


def _keep_lanes(d: Diagram, ids: tuple[int, ...]) -> None:
    """Only the lanes drawn, and what happens on them: the chosen nodes', and for one
    chosen node, the lanes of the nodes its messages went to or came from too."""
    lanes = set(d.ids)
    if len(d.ids) == 1:
        lanes.update(n for f in d.flights for n in (f.src, f.dst))
        d.ids = tuple(i for i in ids if i in lanes)
    d.marks[:] = [m for m in d.marks if m.node in lanes]
    d.order[:] = [(what, item) for what, item in d.order if what != "mark" or item.node in lanes]


def _violation(e: ViolationEvent, d: Diagram, broken: str) -> None:
    """A violation begins a band (saying what was broken then), or ends the last one of its
    property still open."""
    name = PROPERTY_NAMES[e.property]
    if e.phase == "begin":
        d.bands.append(Band(e.t, f"{name}: {describe(e, d.labels.__getitem__, broken)}", e.nodes))
        return
    for band in reversed(d.bands):
        if band.end is None and band.text.startswith(name + ":"):
            band.end = e.t
            return


def _command(e: CommandEvent, d: Diagram) -> None:
    """A command joins its source's note of the instant, or begins one."""
    said = command_text(e.command, e.args, d.labels)
    last = d.commands[-1] if d.commands else None
    if last is not None and last.t == e.t and last.text.startswith(e.source + ": "):
        d.commands[-1] = Note(e.t, f"{last.text} · {said}")
    else:
        d.commands.append(Note(e.t, f"{e.source}: {said}"))


def by_rule(text: str, rule: str | None) -> str:
    """`text`, and the rule that made it: "Election · rule 1" (a text writer's words)."""
    return text if rule is None else f"{text} · {rule_text(rule)}"


def _mark(e: object, labels: dict[int, str]) -> Mark | None:
    kind = type(e)
    if kind is StateEvent:
        leader = "none" if e.leader is None else labels[e.leader]
        word = f"{e.status}" if e.leader is None else f"{e.status} ★" if e.leader == e.node else f"{e.status} → {leader}"
        return Mark(e.t, e.node, "state", by_rule(f"{e.status}, leader {leader}", e.rule), word, e.role, rule=e.rule)
    if kind is CrashEvent:
        return Mark(e.t, e.node, "crash", "crashed", "crashed", StatusRole.DOWN)
    if kind is RecoverEvent:
        return Mark(e.t, e.node, "recover", "recovered", "recovered")
    if kind is StartEvent:
        return Mark(e.t, e.node, "start", "started", "started")
    if kind is JoinEvent:
        return Mark(e.t, e.node, "join", "joined", "joined")
    if kind is LeaveEvent:
        return Mark(e.t, e.node, "leave", "left", "left", StatusRole.DOWN)
    if kind is CsEvent:
        glyph, variable, words = CS_LOOK[e.state]
        return Mark(e.t, e.node, "cs", by_rule(words, e.rule), CS_WORD[e.state], look=(glyph, variable), rule=e.rule)
    return None
