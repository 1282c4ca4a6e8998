"""A transcript as a space-time diagram, for people's notes: SVG, Mermaid, or a ShiViz log.

    bully-tui export FILE --format svg|mermaid|shiviz [-o OUT] [--from T] [--to T]
                          [--nodes K,...] [--types T,...]

`collect` reads a transcript once (streamed: it may be large) into a `Diagram`: the
messages (sent, delivered or dropped, or still in flight at the end), what happened on
each node's lane (start, crash, recovery, join, leave, state changes), the violations
and the commands, plus one list of all of it in the transcript's order. The three
writers draw that:

  - SVG: lanes across in id order, virtual time down to scale; an arrow from (sender,
    send time) to (receiver, delivery time), a drop ending with a cross at the down
    receiver; a down node's lane dashed; what happens on a lane at an instant as one
    label (▲● normal → 5); a violation as a red band across the lanes while it lasts,
    an instant's commands as a dotted row; a legend.
  - Mermaid `sequenceDiagram`: participants in id order, one arrow per message when it
    arrives (a cross when it is dropped), notes for crashes, recoveries, state changes.
  - ShiViz, its default format (line 1 the parsing expression, line 2 the executions
    delimiter, left empty): each event a line, then `host {"host": n, ...}`, its vector
    clock. Every event ticks its own host's entry by one, and a delivery first takes the
    maximum with the clock its message was sent with; so a host's entries count 1, 2, 3
    with no gap, and a clock only names events that are in the log (the rules ShiViz
    checks; `tests/test_export.py` checks them too).

Filters: a time window (a message is in it if it was sent in it), nodes by rank (a
message if both its ends are; for one node, if either is), message types by label. Colours and glyphs come by role
from the app's own look (`record/look.py`) and its light theme, so an export names no
algorithm's statuses or messages either.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from html import escape

import themes
from protocol import CsState, MessageRole, StatusRole, machine

from ..core.config import InputError, duration_text, instant_text
from ..core.events import (
    COMES_UP,
    GOES_DOWN,
    CommandEvent,
    CrashEvent,
    CsEvent,
    DeliverEvent,
    DropEvent,
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
from .labels import command_text, node_labels
from .look import CS_LOOK, CS_WORD, EVENT_COLOUR, MESSAGE_COLOUR, ROLE_LOOK, role_look
from .reader import Reader

FORMATS = ("svg", "mermaid", "shiviz")


# --- what is drawn ------------------------------------------------------------------


@dataclass(slots=True)
class Flight:
    """One message: sent, and then delivered, dropped, or (ended None) still in flight."""

    id: int
    src: int
    dst: int
    label: str
    role: MessageRole
    sent: float
    ended: float | None = None
    dropped: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """Something on one node's lane: start, crash, recover, join, leave, or a state change."""

    t: float
    node: int
    kind: str
    text: str  # all of it (Mermaid, ShiViz, the tooltip): "normal, leader 7"
    word: str  # what the lane says beside its glyph: "normal → 7", "recovered"
    role: StatusRole | None = None  # a state change's status role
    look: tuple[str, str] | None = None  # a glyph and colour of its own (the critical section's), instead of the role's


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
    stop: float  # the last event's time
    flights: list[Flight] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    commands: list[Note] = field(default_factory=list)
    down: frozenset[int] = frozenset()  # the lanes' nodes down (or not yet joined) when the window opens
    inside: list[tuple[int, float, float]] = field(default_factory=list)  # (node, from, to) in the critical section
    # Everything in the transcript's order: ("send" | "deliver" | "drop", Flight) or ("mark", Mark).
    order: list[tuple[str, Flight | Mark]] = field(default_factory=list)


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
        diagram = Diagram(chosen, node_labels(ids), filters.start, filters.start)
        flights: dict[int, Flight] = {}
        order, marks = diagram.order, diagram.marks
        down: frozenset[int] = frozenset()  # followed from the first event: a lane may begin dashed
        entered: dict[int, float] = {}  # node -> since when it has held the critical section
        for e in reader.events():
            if e.t > filters.stop:
                break
            kind = type(e)
            if kind is SendEvent:
                if e.t < filters.start or (e.src in inside) + (e.dst in inside) < ends:
                    continue
                if types and e.msg.label not in types or not filters.detector and e.msg.role is MessageRole.DETECTOR:
                    continue
                flight = flights[e.id] = Flight(e.id, e.src, e.dst, e.msg.label, e.msg.role, e.t)
                diagram.flights.append(flight)
                order.append(("send", flight))
            elif kind is DeliverEvent or kind is DropEvent:
                flight = flights.pop(e.id, None)
                if flight is not None:
                    flight.ended, flight.dropped = e.t, kind is DropEvent
                    order.append(("drop" if flight.dropped else "deliver", flight))
            else:
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
                    _violation(e, diagram)
                elif kind is CommandEvent:
                    _command(e, diagram)
                else:
                    mark = _mark(e, diagram.labels)
                    if mark is not None:
                        marks.append(mark)
                        order.append(("mark", mark))
            diagram.stop = e.t
    diagram.inside += [(node, max(since, filters.start), diagram.stop) for node, since in entered.items()]
    for m in reversed(marks):  # who was down when the window opened, from who is at its end
        down = down_before(down, m.kind, m.node)
    if picked:
        _keep_lanes(diagram, ids)
    diagram.down = down & frozenset(diagram.ids)
    return diagram


def _keep_lanes(d: Diagram, ids: tuple[int, ...]) -> None:
    """Only the lanes drawn, and what happens on them: the chosen nodes', and for one
    chosen node, the lanes of the nodes its messages went to or came from too."""
    lanes = set(d.ids)
    if len(d.ids) == 1:
        lanes.update(n for f in d.flights for n in (f.src, f.dst))
        d.ids = tuple(i for i in ids if i in lanes)
    d.marks[:] = [m for m in d.marks if m.node in lanes]
    d.order[:] = [(what, item) for what, item in d.order if what != "mark" or item.node in lanes]


def _violation(e: ViolationEvent, d: Diagram) -> None:
    """A violation begins a band, or ends the last one of its property still open."""
    name = PROPERTY_NAMES[e.property]
    if e.phase == "begin":
        d.bands.append(Band(e.t, f"{name}: {describe(e, d.labels.__getitem__)}", e.nodes))
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


def _mark(e: object, labels: dict[int, str]) -> Mark | None:
    kind = type(e)
    if kind is StateEvent:
        leader = "none" if e.leader is None else labels[e.leader]
        word = f"{e.status}" if e.leader is None else f"{e.status} ★" if e.leader == e.node else f"{e.status} → {leader}"
        return Mark(e.t, e.node, "state", f"{e.status}, leader {leader}", word, e.role)
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
        return Mark(e.t, e.node, "cs", words, CS_WORD[e.state], look=(glyph, variable))
    return None



# --- SVG ----------------------------------------------------------------------------

LANE = 110  # px between lanes
LEFT = 90  # px for the time column, at least (a time of many digits widens it)
ROW = 16  # px: the least room an instant gets, a line of text, so that no two instants' words meet
SCALE = 60  # px per virtual second, while an instant's room follows the time to the next
QUIET = 180  # px: a longer quiet stretch is cut to this, and says how long it was
NOTES_GAP = 80  # px from the last lane's end to the column where violations and commands are told: room for its words ("▲● normal → 10")
THEME = themes.LIGHT  # paper is light
MUTED = "#8A8A8A"
MIN_WIDTH = 600  # px: a narrower diagram is widened to this (the legend wraps to the width)
LEGEND_ROW = 20  # px from one row of the legend to the next
AXES = ("scaled", "instants")


def colour(variable: str) -> str:
    """A theme variable of the app's look ($warning) as the light theme's colour."""
    name = variable.removeprefix("$").replace("-", "_")
    return MUTED if name == "text_muted" else getattr(THEME, name, None) or THEME.foreground


def text_width(text: str, size: float) -> float:
    """A text's width in a monospace font: 0.6 em a character, a whole em for the wide
    glyphs (✕ ◆ ⚠) that fonts draw from elsewhere."""
    return sum(0.6 if ch.isascii() else 1.0 for ch in text) * size


class Room:
    """Where words already are on the drawing. A label goes where it overlaps nothing,
    or is left to the element's tooltip: a crowded instant shows what fits, not a smear."""

    CELL = 64  # px: boxes are filed by the cells of a grid they touch, so a look is local

    def __init__(self):
        self._cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}

    def take(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """Claim the box if it is free; whether it was."""
        cell = self.CELL
        cells = [(cx, cy) for cx in range(int(x0 // cell), int(x1 // cell) + 1)
                 for cy in range(int(y0 // cell), int(y1 // cell) + 1)]
        for key in cells:
            for a0, b0, a1, b1 in self._cells.get(key, ()):
                if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                    return False
        for key in cells:
            self._cells.setdefault(key, []).append((x0, y0, x1, y1))
        return True

    def label(self, x: float, y: float, text: str, size: float, anchor: str = "start") -> bool:
        """Claim the box of `text` drawn at (x, y) (its baseline) with `anchor`."""
        width = text_width(text, size)
        x0 = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
        # (air between words: two names side by side must not read as one)
        return self.take(x0 - 4, y - size * 0.9, x0 + width + 4, y + size * 0.3)


@dataclass(frozen=True, slots=True)
class Frame:
    """Where things go on the drawing."""

    x: dict[int, float]  # each lane's
    y: dict[float, float]  # each instant's
    left: float  # where the lanes begin: the time column is on their left
    lanes_end: float  # ... and end: violations and commands are told on their right
    width: int


def rows(times: list[float], axis: str, first: float) -> tuple[dict[float, float], list[tuple[float, float, float]]]:
    """Each instant's y, from `first`, time flowing down: at least ROW apart, so that what
    happens at one instant never sits on another's words; apart as far as the time
    between them on the `scaled` axis (`instants`: every instant a row); a quiet stretch
    longer than QUIET px is cut to QUIET and noted (its middle y, its top, its seconds).
    So the drawing's height follows the number of instants, never the time span."""
    y_of: dict[float, float] = {}
    cuts = []
    y = first
    for k, t in enumerate(times):
        if k:
            gap = t - times[k - 1]
            room = ROW if axis == "instants" else max(ROW, gap * SCALE)
            if room > QUIET:
                cuts.append((y + QUIET / 2, y, gap))
                room = QUIET
            y += room
        y_of[t] = y
    return y_of, cuts


def to_svg(d: Diagram, axis: str = "scaled") -> str:
    times = sorted({d.start, d.stop, *(f.sent for f in d.flights), *(f.ended for f in d.flights if f.ended is not None),
                    *(m.t for m in d.marks), *(b.t for b in d.bands), *(b.end for b in d.bands if b.end is not None),
                    *(n.t for n in d.commands)})
    left = max(LEFT, text_width(instant_text(times[-1]), 11) + 24)  # (+24: a cut's "+12.5 s" can be a little wider)
    lanes_end = left + LANE * max(1, len(d.ids))
    notes = max((text_width(text, 11) for text in (*map(_note, d.bands), *(n.text for n in d.commands))), default=0)
    width = int(max(lanes_end + NOTES_GAP + notes + 20, MIN_WIDTH))
    room = Room()
    legend, top = _legend(left, width, room)
    y, cuts = rows(times, axis, top + 28)
    frame = Frame({node: left + LANE // 2 + k * LANE for k, node in enumerate(d.ids)}, y, left, lanes_end, width)
    height = int(y[times[-1]]) + 40
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, monospace" font-size="11">')
    # Words are drawn over the lines, each on a rim of the paper's colour, so that a line
    # passing under a label does not strike it through.
    rim = f"<style>text {{ paint-order: stroke; stroke: {THEME.background}; stroke-width: 3px; stroke-linejoin: round; }}</style>"
    out = [svg, rim, f'<rect width="100%" height="100%" fill="{THEME.background}"/>', "<defs>"]
    for role, variable in MESSAGE_COLOUR.items():
        out.append(f'<marker id="arrow-{role}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour(variable)}"/></marker>')
    out.append("</defs>")
    out += legend
    out += _violations(d, frame, room)
    out += _commands(d, frame, room)
    out += _lanes(d, frame, top, room)
    out += _inside(d, frame)
    out += _cuts(cuts, frame, room)
    times_told = _time_column(times, frame, room)  # room is claimed in order of importance,
    marks = _marks(d, frame, room)
    arrows, names = _messages(d, frame, room)
    out += arrows + times_told + marks + names  # and words are drawn over the lines
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _told(text: str, y: float, fill: str, f: Frame, room: Room) -> str:
    """`text` in the column right of the lanes, at `y` or the first free line below it."""
    while not room.label(f.lanes_end + NOTES_GAP, y, text, 11):
        y += ROW
    return f'<text x="{f.lanes_end + NOTES_GAP}" y="{y:.1f}" fill="{fill}">{escape(text)}</text>'


def _violations(d: Diagram, f: Frame, room: Room) -> list[str]:
    """A red band across the lanes while each violation lasts, under everything, and its
    words in the column on the right, a line each. The band takes in the rows of the
    instants it begins and ends at whole: its edges run between rows, not through words."""
    out = []
    for band in d.bands:
        top, bottom = f.y[band.t], f.y[band.end if band.end is not None else d.stop]
        out.append(f'<rect x="{f.left}" y="{top - ROW / 2:.1f}" width="{f.width - f.left - 10}" '
                   f'height="{bottom - top + ROW:.1f}" fill="{THEME.error}" fill-opacity="0.10" '
                   f'stroke="{THEME.error}" stroke-width="0.5"/>')
        out.append(_told(_note(band), top + 4, THEME.error, f, room))
    return out


def _note(band: Band) -> str:
    return "⚠ " + band.text + ("" if band.end is None else f" (until {instant_text(band.end)} s)")


def _commands(d: Diagram, f: Frame, room: Room) -> list[str]:
    """What people and scenarios asked for (a partition, T raised, a crash), as the app's
    `d` draws it, a row: a dotted line across the lanes just above its instant (what it
    causes comes after it), and its words in the column on the right."""
    out, fill = [], colour(EVENT_COLOUR["command"])
    for note in d.commands:
        line = f.y[note.t] - ROW / 2
        out.append(f'<line x1="{f.left}" x2="{f.width - 10}" y1="{line:.1f}" y2="{line:.1f}" stroke="{fill}" '
                   f'stroke-width="1" stroke-dasharray="1,3"/>')
        out.append(_told(note.text, f.y[note.t] + 4, fill, f, room))
    return out


def _lanes(d: Diagram, f: Frame, top: float, room: Room) -> list[str]:
    """Each lane's name on top, and its line: solid while its node is up, dashed while it
    is down (or not yet joined)."""
    out = [f'<text x="{f.left - 8}" y="{top}" text-anchor="end" fill="{MUTED}">t (s)</text>']
    room.label(f.left - 8, top, "t (s)", 11, "end")
    for node, spans in _lane_spans(d).items():
        x = f.x[node]
        room.label(x, top, d.labels[node], 11, "middle")
        out.append(f'<text x="{x}" y="{top}" text-anchor="middle" font-weight="bold" '
                   f'fill="{THEME.foreground}">{escape(d.labels[node])}</text>')
        for a, b, up in spans:
            dash = "" if up else ' stroke-dasharray="3,4"'
            out.append(f'<line x1="{x}" x2="{x}" y1="{f.y[a]:.1f}" y2="{f.y[b]:.1f}" '
                       f'stroke="{THEME.foreground if up else MUTED}" stroke-width="{1.5 if up else 1}"{dash}/>')
    return out


def _inside(d: Diagram, f: Frame) -> list[str]:
    """A bar on the lane while its node is in the critical section (a mutex's run)."""
    glyph, variable, _ = CS_LOOK[CsState.HELD]
    return [f'<g><title>{escape(d.labels[node])} in the critical section from {a:g}s to {b:g}s</title>'
            f'<rect x="{f.x[node] - 3}" y="{f.y[a]:.1f}" width="6" height="{max(f.y[b] - f.y[a], 2):.1f}" '
            f'fill="{colour(variable)}" opacity="0.55"/></g>' for node, a, b in d.inside if node in f.x]


def _lane_spans(d: Diagram) -> dict[int, list[tuple[float, float, bool]]]:
    """Each lane cut where its node goes down and comes back, (from, to, up), by the rule
    the app's `d` draws its lanes by (core/events.py)."""
    spans: dict[int, list[tuple[float, float, bool]]] = {node: [] for node in d.ids}
    since = dict.fromkeys(d.ids, d.start)
    down = d.down
    for m in d.marks:
        now = down_after(down, m.kind, m.node)
        if (m.node in now) != (m.node in down):
            if m.t > since[m.node]:
                spans[m.node].append((since[m.node], m.t, m.node not in down))
            since[m.node] = m.t
        down = now
    for node in d.ids:
        spans[node].append((since[node], d.stop, node not in down))
    return spans


def _cuts(cuts: list[tuple[float, float, float]], f: Frame, room: Room) -> list[str]:
    """A quiet stretch cut short: a gap across the lanes that says how long it was."""
    out = []
    for middle, _, seconds in cuts:
        text = f"+{duration_text(seconds)}"
        room.label(f.left - 8, middle + 4, text, 10, "end")
        out.append(f'<g><title>{seconds:,.6g} s of nothing to draw, cut short</title>'
                   f'<rect x="{f.left}" y="{middle - 6:.1f}" width="{f.lanes_end - f.left}" height="12" fill="{THEME.background}"/>'
                   f'<text x="{f.left - 8}" y="{middle + 4:.1f}" text-anchor="end" font-size="10" fill="{MUTED}">'
                   f'{escape(text)}</text></g>')
    return out


def _time_column(times: list[float], f: Frame, room: Room) -> list[str]:
    """The time of each instant that has room for it on the left, to the millisecond as
    the app's log shows it (not again for an instant that reads the same as the one above)."""
    out, above = [], None
    for t in times:
        text = instant_text(t)
        if text != above and room.label(f.left - 8, f.y[t] + 4, text, 11, "end"):
            out.append(f'<text x="{f.left - 8}" y="{f.y[t] + 4:.1f}" text-anchor="end" fill="{MUTED}">{text}</text>')
            above = text
    return out


def _marks(d: Diagram, f: Frame, room: Room) -> list[str]:
    """What happens on a lane at an instant, as one label: each thing's glyph in its
    colour (✖ down, ▲ up again, its role's for a status), then the last one's words,
    "▲● normal → 7" (a recovery, and whom it follows then); only the glyphs if the words
    do not fit, nothing if they do not either (the tooltip has it all). Not the start (the
    lane's beginning says it), nor a crash's "down" status (the crash says it), nor a
    status that another replaces at the same instant."""
    at: dict[tuple[int, float], list[Mark]] = {}
    for m in d.marks:
        if m.kind != "start" and not (m.kind == "state" and m.role is StatusRole.DOWN):
            at.setdefault((m.node, m.t), []).append(m)
    out = []
    for (node, t), marks in at.items():
        shown = [m for m, then in zip(marks, [*marks[1:], None])
                 if not (m.kind == "state" and then is not None and then.kind == "state")]
        looks = [m.look or (role_look(m.role) if m.role else ("▲", "$success")) for m in shown]
        glyphs = "".join(glyph for glyph, _ in looks)
        x, y = f.x[node] + 5, f.y[t] + 4
        words = f" {shown[-1].word}"
        if not room.label(x, y, glyphs + words, 11):
            words = ""
            if not room.label(x, y, glyphs, 11):
                continue
        told = "".join(f'<tspan fill="{colour(variable)}">{glyph}</tspan>' for glyph, variable in looks)
        if words:
            told += f'<tspan fill="{colour(looks[-1][1])}">{escape(words)}</tspan>'
        what = "; ".join(m.text for m in marks)
        out.append(f'<g><title>{escape(d.labels[node])} at {t:g}s: {escape(what)}</title>'
                   f'<text x="{x}" y="{y:.1f}" xml:space="preserve">{told}</text></g>')
    return out


def _messages(d: Diagram, f: Frame, room: Room) -> tuple[list[str], list[str]]:
    """An arrow from (sender, send time) to (receiver, delivery time), coloured by its
    role; a drop ends in ✕ at the down receiver; one still in flight at the end is
    dotted, half way. Its name where it fits along it (a broadcast's names part as their
    arrows do); every detail in its tooltip. The arrows, and apart, the words that go
    over everything."""
    arrows, words = [], []
    for m in d.flights:
        c = colour(MESSAGE_COLOUR.get(m.role, "$foreground"))
        end = m.ended if m.ended is not None else d.stop
        x1, y1, x2, y2 = f.x[m.src], f.y[m.sent], f.x[m.dst], f.y[end]
        if m.ended is None:
            x2, y2 = (x1 + x2) / 2, (y1 + y2) / 2
        style = ' stroke-dasharray="2,3"' if m.ended is None or m.dropped else ""
        arrow = "" if m.dropped or m.ended is None else f' marker-end="url(#arrow-{m.role})"'
        what = "dropped" if m.dropped else "in flight" if m.ended is None else f"delivered at {end:g}s"
        arrows.append(f'<g><title>{escape(m.label)} #{m.id} {escape(d.labels[m.src])}→{escape(d.labels[m.dst])}, '
                      f'sent at {m.sent:g}s, {what}</title>'
                      f'<line x1="{x1}" y1="{y1:.1f}" x2="{x2}" y2="{y2:.1f}" stroke="{c}" stroke-width="1.2"{style}{arrow}/></g>')
        if m.dropped and room.label(x2, y2 + 4, "✕", 11, "middle"):  # (one ✕ for the drops at one place)
            words.append(f'<text x="{x2}" y="{y2 + 4:.1f}" text-anchor="middle" fill="{THEME.error}">✕</text>')
        for along in (0.66, 0.5, 0.8, 0.35):
            lx, ly = x1 + (x2 - x1) * along, y1 + (y2 - y1) * along - 3
            if room.label(lx, ly, m.label, 9, "middle"):
                words.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" fill="{c}" '
                             f'font-size="9">{escape(m.label)}</text>')
                break
    return arrows, words


def _legend(left: float, width: int, room: Room) -> tuple[list[str], float]:
    """The legend on top, a row for each kind of thing (messages, statuses, the rest),
    wrapped to the drawing's width; and the y of the lanes' names below it."""
    command = colour(EVENT_COLOUR["command"])
    kinds = [
        [(str(role), THEME.foreground, role) for role in MESSAGE_COLOUR],
        [(f"{glyph} {role}", colour(variable), None) for role, (glyph, variable) in ROLE_LOOK.items()],
        [("✕ dropped at a down node", THEME.foreground, None), ("dashed lane: down", THEME.foreground, None),
         ("▲ up again: recovered, joined", colour("$success"), None), ("red band: a violation", THEME.error, None),
         ("dotted row: a command", command, None), ("hover for details", THEME.foreground, None)],
    ]
    out, y = [], 20.0
    for items in kinds:
        x = left
        for text, fill, role in items:
            swatch = 30 if role else 0
            if x > left and x + swatch + text_width(text, 11) > width - 10:
                x, y = left, y + LEGEND_ROW
            if role:
                out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" stroke="{colour(MESSAGE_COLOUR[role])}" '
                           f'stroke-width="1.5" marker-end="url(#arrow-{role})"/>')
            out.append(f'<text x="{x + swatch}" y="{y}" fill="{fill}">{escape(text)}</text>')
            x += swatch + text_width(text, 11) + 24
        y += LEGEND_ROW
    bottom = y - LEGEND_ROW
    room.take(0, 0, width, bottom + 8)
    return out, bottom + 38


# --- Mermaid ---------------------------------------------------------------------------


def to_mermaid(d: Diagram) -> str:
    name = {node: f"n{k + 1}" for k, node in enumerate(d.ids)}
    out = ["sequenceDiagram"]
    out += [f"    participant {name[node]} as {_mermaid_text(d.labels[node])}" for node in d.ids]
    bands = sorted(d.bands, key=lambda b: b.t)
    everyone = f"{name[d.ids[0]]},{name[d.ids[-1]]}" if len(d.ids) > 1 else name[d.ids[0]] if d.ids else ""
    b = 0
    for what, item in d.order:
        while b < len(bands) and bands[b].t < _time(what, item):  # judged at the end of its instant
            out.append(f"    Note over {everyone}: ⚠ {_mermaid_text(bands[b].text)}")
            b += 1
        if what == "deliver":
            out.append(f"    {name[item.src]}->>{name[item.dst]}: {_mermaid_text(item.label)}")
        elif what == "drop":
            out.append(f"    {name[item.src]}-x{name[item.dst]}: {_mermaid_text(item.label)} (dropped: down)")
        elif what == "mark":
            out.append(f"    Note over {name[item.node]}: {_mermaid_text(item.text)}")
    out += [f"    Note over {everyone}: ⚠ {_mermaid_text(band.text)}" for band in bands[b:]]
    return "\n".join(out) + "\n"


def _time(what: str, item: Flight | Mark) -> float:
    return item.t if what == "mark" else item.sent if what == "send" else item.ended


def _mermaid_text(text: str) -> str:
    """Mermaid reads `;` as a statement's end and `#` as an entity's start."""
    return text.replace(";", ",").replace("#", "no. ")


# --- ShiViz ------------------------------------------------------------------------------

SHIVIZ_REGEX = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})"


SHIVIZ_ENTRIES = 20_000_000  # clock entries (events x nodes, at most) a ShiViz log may hold: some hundreds of MB


def to_shiviz(d: Diagram) -> str:
    if len(d.order) * len(d.ids) > SHIVIZ_ENTRIES:  # every line carries its node's whole clock
        raise InputError(f"a ShiViz log gives every event its node's vector clock: {len(d.order):,} events x "
                         f"{len(d.ids)} nodes is more than {SHIVIZ_ENTRIES:,} entries; choose fewer with --nodes, "
                         f"--from and --to, or --types")
    host = {node: f"node{d.labels[node]}" for node in d.ids}
    clocks: dict[int, dict[str, int]] = {node: {} for node in d.ids}
    sent_with: dict[int, dict[str, int]] = {}  # message id -> its sender's clock at the send
    out = [SHIVIZ_REGEX, ""]  # line 1: how to read it (ShiViz's default); line 2: one execution
    for what, item in d.order:
        if what == "send":
            node, text = item.src, f"t={item.sent:g} send {item.label} #{item.id} to {d.labels[item.dst]}"
        elif what == "deliver":
            node, text = item.dst, f"t={item.ended:g} receive {item.label} #{item.id} from {d.labels[item.src]}"
            clock = clocks[node]
            for h, n in sent_with.pop(item.id).items():
                if clock.get(h, 0) < n:
                    clock[h] = n
        elif what == "drop":
            sent_with.pop(item.id, None)  # it never arrives: nothing happens at the down receiver
            continue
        else:
            node, text = item.node, f"t={item.t:g} {item.text}"
        clock = clocks[node]
        clock[host[node]] = clock.get(host[node], 0) + 1
        if what == "send":
            sent_with[item.id] = dict(clock)
        out.append(text)
        out.append(f"{host[node]} {json.dumps(clock)}")
    return "\n".join(out) + "\n"


WRITERS = {"svg": to_svg, "mermaid": to_mermaid, "shiviz": to_shiviz}


def export(path: str, fmt: str, filters: Filters = Filters(), axis: str = "scaled") -> str:
    diagram = collect(path, filters)
    return to_svg(diagram, axis) if fmt == "svg" else WRITERS[fmt](diagram)


def parse_list(text: str, what: str, item: type) -> tuple:
    """`1,2,5` -> (1, 2, 5): a comma-separated option, each item checked."""
    items = [part.strip() for part in text.split(",")]
    if not text.strip() or not all(items):
        raise InputError(f"{what} must be a comma-separated list, not {text!r}")
    try:
        return tuple(item(part) for part in items)
    except ValueError:
        raise InputError(f"{what} must be a comma-separated list of {'ranks' if item is int else 'names'}, not {text!r}") from None

