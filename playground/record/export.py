"""A transcript as a space-time diagram, for people's notes: SVG, Mermaid, or a ShiViz log.

    bully-tui export FILE --format svg|mermaid|shiviz [-o OUT] [--from T] [--to T]
                          [--nodes K,...] [--types T,...]

`collect` reads a transcript once (streamed: it may be large) into a `Diagram`: the
messages (sent, delivered or dropped, or still in flight at the end), what happened on
each node's lane (start, crash, recovery, state changes) and the violations, plus one
list of all of it in the transcript's order. The three writers draw that:

  - SVG: lanes across in id order, virtual time down to scale; an arrow from (sender,
    send time) to (receiver, delivery time), a drop ending with a cross at the down
    receiver; a down node's lane dashed; state changes as dots in their role's colour;
    a violation as a red band across the lanes while it lasts; a legend.
  - Mermaid `sequenceDiagram`: participants in id order, one arrow per message when it
    arrives (a cross when it is dropped), notes for crashes, recoveries, state changes.
  - ShiViz, its default format (line 1 the parsing expression, line 2 the executions
    delimiter, left empty): each event a line, then `host {"host": n, ...}`, its vector
    clock. Every event ticks its own host's entry by one, and a delivery first takes the
    maximum with the clock its message was sent with; so a host's entries count 1, 2, 3
    with no gap, and a clock only names events that are in the log (the rules ShiViz
    checks; `tests/test_export.py` checks them too).

Filters: a time window (a message is in it if it was sent in it), nodes by rank (a
message if both its ends are), message types by label. Colours and glyphs come by role
from the app's own look (`ui/look.py`) and its light theme, so an export names no
algorithm's statuses or messages either.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from html import escape

import themes
from protocol import ALGORITHMS, MessageRole, StatusRole

from ..core.config import InputError
from ..core.events import (
    COMES_UP_KINDS,
    GOES_DOWN_KINDS,
    CommandEvent,
    CrashEvent,
    DeliverEvent,
    DropEvent,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    ViolationEvent,
)
from ..core.monitor import PROPERTY_NAMES, describe
from .labels import node_labels
from .look import MESSAGE_COLOUR, ROLE_LOOK, role_look
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
    """Something on one node's lane: start, crash, recover, or a state change."""

    t: float
    node: int
    kind: str
    text: str
    role: StatusRole | None = None  # a state change's status role


@dataclass(slots=True)
class Band:
    """A violation, from its begin to its end (None: it lasts to the end)."""

    t: float
    text: str
    nodes: tuple[int, ...]
    end: float | None = None


@dataclass(slots=True)
class Diagram:
    ids: tuple[int, ...]
    labels: dict[int, str]
    start: float
    stop: float  # the last event's time
    flights: list[Flight] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    # Everything in the transcript's order: ("send" | "deliver" | "drop", Flight) or ("mark", Mark).
    order: list[tuple[str, Flight | Mark]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Filters:
    start: float = 0.0
    stop: float = math.inf
    ranks: tuple[int, ...] = ()  # nodes by rank; none: all
    types: tuple[str, ...] = ()  # message labels, any case; none: all
    detector: bool = True  # failure-detector traffic too (the app's log hides it until asked)


def collect(path: str, filters: Filters = Filters()) -> Diagram:
    """Read a transcript into what a diagram draws (every check the Reader makes)."""
    with Reader.open(path) as reader:
        header = reader.header
        ids = header.nodes
        for rank in filters.ranks:
            if not 1 <= rank <= len(ids):
                raise InputError(f"--nodes: there is no node {rank} (the transcript has {len(ids)}, by rank 1 to {len(ids)})")
        chosen = ids if not filters.ranks else tuple(ids[r - 1] for r in sorted(set(filters.ranks)))
        known = {m.label.lower(): m.label for m in ALGORITHMS[header.algorithm].wire_messages()}
        for name in filters.types:
            if name.lower() not in known:
                raise InputError(f"--types: {header.algorithm} has no message {name!r} (its messages: {', '.join(known.values())})")
        types = {known[n.lower()] for n in filters.types}
        inside = set(chosen)
        diagram = Diagram(chosen, node_labels(ids), filters.start, filters.start)
        flights: dict[int, Flight] = {}
        order, marks = diagram.order, diagram.marks
        for e in reader.events():
            if e.t > filters.stop:
                break
            kind = type(e)
            if kind is SendEvent:
                if e.t < filters.start or e.src not in inside or e.dst not in inside:
                    continue
                if types and e.msg.label not in types or not filters.detector and e.msg.role is MessageRole.DETECTOR:
                    continue
                flight = flights[e.id] = Flight(e.id, e.src, e.dst, e.msg.label, e.msg.role, e.t)
                diagram.flights.append(flight)
                order.append(("send", flight))
            elif kind is CommandEvent and e.command == "join":  # a lane for the newcomer
                ids = tuple(sorted((*ids, *e.args)))
                diagram.labels.update(node_labels(ids))
                if not filters.ranks:
                    diagram.ids = ids
                    inside.update(e.args)
            elif kind is DeliverEvent or kind is DropEvent:
                flight = flights.pop(e.id, None)
                if flight is not None:
                    flight.ended, flight.dropped = e.t, kind is DropEvent
                    order.append(("drop" if flight.dropped else "deliver", flight))
            elif e.t < filters.start:
                continue
            elif kind is ViolationEvent:
                if e.phase == "begin":
                    text = f"{PROPERTY_NAMES[e.property]}: {describe(e, diagram.labels.__getitem__)}"
                    diagram.bands.append(Band(e.t, text, e.nodes))
                else:
                    for band in reversed(diagram.bands):
                        if band.end is None and band.text.startswith(PROPERTY_NAMES[e.property] + ":"):
                            band.end = e.t
                            break
            else:
                mark = _mark(e, diagram.labels)
                if mark is not None and mark.node in inside:
                    marks.append(mark)
                    order.append(("mark", mark))
            diagram.stop = e.t
    return diagram


def _mark(e: object, labels: dict[int, str]) -> Mark | None:
    kind = type(e)
    if kind is StateEvent:
        leader = "none" if e.leader is None else labels[e.leader]
        return Mark(e.t, e.node, "state", f"{e.status}, leader {leader}", e.role)
    if kind is CrashEvent:
        return Mark(e.t, e.node, "crash", "crashed", StatusRole.DOWN)
    if kind is RecoverEvent:
        return Mark(e.t, e.node, "recover", "recovered")
    if kind is StartEvent:
        return Mark(e.t, e.node, "start", "started")
    if kind is JoinEvent:
        return Mark(e.t, e.node, "join", "joined")
    if kind is LeaveEvent:
        return Mark(e.t, e.node, "leave", "left", StatusRole.DOWN)
    return None


# --- SVG ----------------------------------------------------------------------------

LANE = 110  # px between lanes
LEFT = 90  # px for the time column
TOP = 100  # px for the legend and the lanes' names
ROW = 16  # px: the least room an instant gets, a line of text, so that no two instants' words meet
SCALE = 60  # px per virtual second, while an instant's room follows the time to the next
QUIET = 180  # px: a longer quiet stretch is cut to this, and says how long it was
NOTES_GAP = 24  # px between the last lane's end and the column on the right where the violations are told
THEME = themes.LIGHT  # paper is light
MUTED = "#8A8A8A"
LEGEND_WIDTH = 760  # px the legend needs: a narrower diagram is widened to it
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
        return self.take(x0 - 3, y - size * 0.85, x0 + width + 3, y + size * 0.25)  # (a little air between words)


def rows(times: list[float], axis: str) -> tuple[dict[float, float], list[tuple[float, float, float]]]:
    """Each instant's y, time flowing down: at least ROW apart, so that what happens at
    one instant never sits on another's words; apart as far as the time between them on
    the `scaled` axis (`instants`: every instant a row); a quiet stretch longer than
    QUIET px is cut to QUIET and noted (its middle y, its top, its seconds). So the
    drawing's height follows the number of instants, never the time span."""
    y_of: dict[float, float] = {}
    cuts = []
    y = TOP + 28.0
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
                    *(m.t for m in d.marks), *(b.t for b in d.bands), *(b.end for b in d.bands if b.end is not None)})
    y, cuts = rows(times, axis)
    x = {node: LEFT + LANE // 2 + k * LANE for k, node in enumerate(d.ids)}
    lanes_end = LEFT + LANE * max(1, len(d.ids))
    notes = max((text_width(_note(band), 11) for band in d.bands), default=0)
    width, height = int(max(lanes_end + NOTES_GAP + notes + 20, LEGEND_WIDTH)), int(y[times[-1]]) + 40
    room = Room()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="{THEME.background}"/>', "<defs>"]
    for role, variable in MESSAGE_COLOUR.items():
        out.append(f'<marker id="arrow-{role}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour(variable)}"/></marker>')
    out.append("</defs>")
    out += _legend(room)
    out += _violations(d, y, lanes_end, width, room)
    for node in d.ids:  # lanes: solid while up, dashed while down
        room.label(x[node], TOP, d.labels[node], 11, "middle")
        out.append(f'<text x="{x[node]}" y="{TOP}" text-anchor="middle" font-weight="bold" '
                   f'fill="{THEME.foreground}">{escape(d.labels[node])}</text>')
        for (a, b), up in _lane_spans(d, node):
            dash = "" if up else ' stroke-dasharray="3,4"'
            out.append(f'<line x1="{x[node]}" x2="{x[node]}" y1="{y[a]:.1f}" y2="{y[b]:.1f}" '
                       f'stroke="{THEME.foreground if up else MUTED}" stroke-width="{1.5 if up else 1}"{dash}/>')
    out += _time_column(times, y, cuts, lanes_end, room)
    out += _marks(d, x, y, room)
    out += _messages(d, x, y, room)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _violations(d: Diagram, y: dict[float, float], lanes_end: int, width: int, room: Room) -> list[str]:
    """A red band across the lanes while each violation lasts, under everything, and its
    words in the column on the right, a line each (one that would sit on another's goes
    lower)."""
    out = []
    for band in d.bands:
        top, bottom = y[band.t], y[band.end if band.end is not None else d.stop]
        out.append(f'<rect x="{LEFT}" y="{top - ROW / 2:.1f}" width="{width - LEFT - 10}" '
                   f'height="{max(4.0, bottom - top + ROW / 2):.1f}" fill="{THEME.error}" fill-opacity="0.10" '
                   f'stroke="{THEME.error}" stroke-width="0.5"/>')
        text, line = _note(band), top + 4
        while not room.label(lanes_end + NOTES_GAP, line, text, 11):
            line += ROW
        out.append(f'<text x="{lanes_end + NOTES_GAP}" y="{line:.1f}" fill="{THEME.error}">{escape(text)}</text>')
    return out


def _note(band: Band) -> str:
    return "⚠ " + band.text + ("" if band.end is None else f" (until {band.end:g} s)")


def _time_column(times: list[float], y: dict[float, float], cuts: list[tuple[float, float, float]], lanes_end: int,
                 room: Room) -> list[str]:
    """The time of each instant that has room for it on the left; a cut quiet stretch as
    a gap across the lanes that says how long it was."""
    out = []
    for middle, _, seconds in cuts:  # the lanes broken, with how long it was quiet
        text = f"+{seconds:,.6g} s"
        room.label(LEFT - 8, middle + 4, text, 10, "end")
        out.append(f'<g><title>{seconds:,.6g} s of nothing to draw, cut short</title>'
                   f'<rect x="{LEFT}" y="{middle - 6:.1f}" width="{lanes_end - LEFT}" height="12" fill="{THEME.background}"/>'
                   f'<text x="{LEFT - 8}" y="{middle + 4:.1f}" text-anchor="end" font-size="10" fill="{MUTED}">'
                   f'{escape(text)}</text></g>')
    for t in times:
        text = f"{t:g}s"
        if room.label(LEFT - 8, y[t] + 4, text, 11, "end"):
            out.append(f'<text x="{LEFT - 8}" y="{y[t] + 4:.1f}" text-anchor="end" fill="{MUTED}">{text}</text>')
    return out


def _marks(d: Diagram, x: dict[int, int], y: dict[float, float], room: Room) -> list[str]:
    """What happens on a lane: its glyph in its role's colour, and a word when there is
    room (the tooltip has it all). Not the start (the lane's beginning says it), nor a
    crash's "down" state (the crash says it); at one instant, a lane's last word only."""
    shown = [m for m in d.marks if m.kind != "start" and not (m.kind == "state" and m.role is StatusRole.DOWN)]
    last = {(m.node, m.t): m for m in shown}
    out = []
    for m in shown:
        if last[m.node, m.t] is not m:
            continue
        glyph, variable = role_look(m.role) if m.role else ("▲", "$success")
        word = f"{glyph} {m.text.split(',')[0]}"
        for text in (word, glyph):
            if room.label(x[m.node] + 5, y[m.t] + 4, text, 11):
                break
        else:
            continue
        out.append(f'<g><title>{escape(d.labels[m.node])} at {m.t:g}s: {escape(m.text)}</title>'
                   f'<text x="{x[m.node] + 5}" y="{y[m.t] + 4:.1f}" fill="{colour(variable)}">{escape(text)}</text></g>')
    return out


def _messages(d: Diagram, x: dict[int, int], y: dict[float, float], room: Room) -> list[str]:
    """An arrow from (sender, send time) to (receiver, delivery time), coloured by its
    role; a drop ends in ✕ at the down receiver; one still in flight at the end is
    dotted, half way. Its name where it fits along it (a broadcast's names part as their
    arrows do); every detail in its tooltip."""
    out = []
    for f in d.flights:
        c = colour(MESSAGE_COLOUR.get(f.role, "$foreground"))
        end = f.ended if f.ended is not None else d.stop
        x1, y1, x2, y2 = x[f.src], y[f.sent], x[f.dst], y[end]
        if f.ended is None:
            x2, y2 = (x1 + x2) / 2, (y1 + y2) / 2
        style = ' stroke-dasharray="2,3"' if f.ended is None or f.dropped else ""
        arrow = "" if f.dropped or f.ended is None else f' marker-end="url(#arrow-{f.role})"'
        what = "dropped" if f.dropped else "in flight" if f.ended is None else f"delivered at {end:g}s"
        out.append(f'<g><title>{escape(f.label)} #{f.id} {escape(d.labels[f.src])}→{escape(d.labels[f.dst])}, '
                   f'sent at {f.sent:g}s, {what}</title>'
                   f'<line x1="{x1}" y1="{y1:.1f}" x2="{x2}" y2="{y2:.1f}" stroke="{c}" stroke-width="1.2"{style}{arrow}/>')
        if f.dropped and room.label(x2, y2 + 4, "✕", 11, "middle"):  # (one ✕ for the drops at one place)
            out.append(f'<text x="{x2}" y="{y2 + 4:.1f}" text-anchor="middle" fill="{THEME.error}">✕</text>')
        for along in (0.66, 0.5, 0.8, 0.35):
            lx, ly = x1 + (x2 - x1) * along, y1 + (y2 - y1) * along - 3
            if room.label(lx, ly, f.label, 9, "middle"):
                out.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" fill="{c}" '
                           f'font-size="9">{escape(f.label)}</text>')
                break
        out.append("</g>")
    return out


UP_DOWN = COMES_UP_KINDS + GOES_DOWN_KINDS


def _lane_spans(d: Diagram, node: int) -> list[tuple[tuple[float, float], bool]]:
    """A lane cut where its node goes down and comes back: ((from, to), up)."""
    spans, since, up = [], d.start, True
    first = next((m for m in d.marks if m.node == node and m.kind in UP_DOWN), None)
    if first is not None and first.kind in COMES_UP_KINDS and first.t > d.start:
        up = False  # it comes up in the window (or joins): it was down (or not there) before
    for m in d.marks:
        if m.node == node and m.kind in UP_DOWN and (m.kind in GOES_DOWN_KINDS) == up:
            spans.append(((since, m.t), up))
            since, up = m.t, not up
    spans.append(((since, d.stop), up))
    return spans


def _legend(room: Room) -> list[str]:
    out, lx = [], LEFT
    room.take(0, 0, LEFT + LEGEND_WIDTH, TOP - 30)
    for role, variable in MESSAGE_COLOUR.items():
        out.append(f'<line x1="{lx}" x2="{lx + 24}" y1="16" y2="16" stroke="{colour(variable)}" stroke-width="1.5" '
                   f'marker-end="url(#arrow-{role})"/><text x="{lx + 30}" y="20" fill="{THEME.foreground}">{role}</text>')
        lx += 130
    lx = LEFT
    for role, (glyph, variable) in ROLE_LOOK.items():
        out.append(f'<text x="{lx}" y="42" fill="{colour(variable)}">{glyph} {role}</text>')
        lx += 100
    out.append(f'<text x="{LEFT}" y="62" fill="{THEME.foreground}">✕ dropped at a down node · dashed lane: down · '
               f'▲ recovered · red band: a violation · hover for details</text>')
    return out


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

