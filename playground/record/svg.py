"""A space-time diagram as SVG, for people's notes: lanes across, virtual time down.

Lanes in id order, virtual time down to scale; an arrow from (sender, send time) to
(receiver, delivery time), a drop dotted and ending with a cross at the down receiver, a
message that arrives after the view dotted and stopping where it had got to by its end;
a down node's lane dashed; what happens on a lane at an instant as one label (▲● normal
→ 5); a violation as a red band across the lanes while it lasts (whole, across a quiet
stretch cut short), an instant's commands as a dotted row; a legend with a piece of
each kind of line. A word that lines pass under is drawn on a halo, a stroked copy in
the paper's colour under it (`Words`), so that a line does not strike it through in any
renderer (`paint-order`, the one-element way, is not drawn by every renderer: cairosvg
drew the paper's colour over the letters, and every label vanished).

Colours and glyphs come by role from the app's own look (`look.py`) and its light
theme, so an export names no algorithm's statuses or messages either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

import themes
from protocol import CsState, StatusRole

from ..core.config import duration_text, instant_text
from ..core.events import down_after
from .look import CS_LOOK, EVENT_COLOUR, MESSAGE_COLOUR, ROLE_LOOK, role_look, rule_sentence
from .spacetime import Band, Diagram, Flight, Mark

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
    legend, top = _legend(d, left, width, room)
    y, cuts = rows(times, axis, top + 28)
    frame = Frame({node: left + LANE // 2 + k * LANE for k, node in enumerate(d.ids)}, y, left, lanes_end, width)
    height = int(y[times[-1]]) + 40
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, monospace" font-size="11">')
    out = [svg, f'<rect width="100%" height="100%" fill="{THEME.background}"/>', "<defs>"]
    for role, variable in MESSAGE_COLOUR.items():
        out.append(f'<marker id="arrow-{role}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                   f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour(variable)}"/></marker>')
    out.append("</defs>")
    words = Words()  # what goes over the lines, on halos
    out += legend
    out += _violations(d, frame, room, words)
    out += _commands(d, frame, room, words)
    out += _lanes(d, frame, top, room)
    out += _inside(d, frame)
    out += _cuts(cuts, _band_spans(d, frame), frame, room)
    out += _time_column(times, frame, room)  # room is claimed in order of importance,
    _marks(d, frame, room, words)
    out += _messages(d, frame, room, words)
    out += words.drawn()  # and words are drawn over the lines
    out.append("</svg>")
    return "\n".join(out) + "\n"


def text(attributes: str, body: str) -> str:
    return f"<text {attributes}>{body}</text>"


class Words:
    """Words that lines pass under (a lane's marks, messages' names, the notes), each on a
    halo of the paper's colour: the same words stroked, all of them drawn before the
    words themselves, so that no halo covers another's letters. (Words no line reaches,
    the legend, the lanes' names, the time column, are drawn plain.)"""

    def __init__(self):
        self._halos: list[str] = []
        self._shown: list[str] = []

    def add(self, where: str, look: str, body: str, title: str = "") -> None:
        """`where` it goes (x, y, anchor, size), its `look` (fill), and a tooltip if any."""
        self._halos.append(text(where, body))
        shown = text(f"{where} {look}" if look else where, body)
        self._shown.append(f"<g><title>{title}</title>{shown}</g>" if title else shown)

    def drawn(self) -> list[str]:
        halo = (f'<g class="halo" fill="{THEME.background}" stroke="{THEME.background}" stroke-width="3" '
                f'stroke-linejoin="round">')
        return [halo, *self._halos, "</g>", *self._shown]


def _told(said: str, y: float, fill: str, f: Frame, room: Room, words: Words) -> None:
    """`said` in the column right of the lanes, at `y` or the first free line below it."""
    while not room.label(f.lanes_end + NOTES_GAP, y, said, 11):
        y += ROW
    words.add(f'x="{f.lanes_end + NOTES_GAP}" y="{y:.1f}"', f'fill="{fill}"', escape(said))


def _band_spans(d: Diagram, f: Frame) -> list[tuple[float, float]]:
    """Each violation band's top and bottom: the rows of the instants it begins and ends at
    whole, so its edges run between rows, not through words."""
    return [(f.y[b.t] - ROW / 2, f.y[b.end if b.end is not None else d.stop] + ROW / 2) for b in d.bands]


def _band(top: float, bottom: float, x0: float, x1: float, edge: bool = True) -> str:
    line = f' stroke="{THEME.error}" stroke-width="0.5"' if edge else ""
    return (f'<rect x="{x0}" y="{top:.1f}" width="{x1 - x0}" height="{bottom - top:.1f}" '
            f'fill="{THEME.error}" fill-opacity="0.10"{line}/>')


def _violations(d: Diagram, f: Frame, room: Room, words: Words) -> list[str]:
    """A red band across the lanes while each violation lasts, under everything, and its
    words in the column on the right, a line each."""
    out = []
    for band, (top, bottom) in zip(d.bands, _band_spans(d, f), strict=True):
        out.append(_band(top, bottom, f.left, f.width - 10))
        _told(_note(band), f.y[band.t] + 4, THEME.error, f, room, words)
    return out


def _note(band: Band) -> str:
    return "⚠ " + band.text + ("" if band.end is None else f" (until {instant_text(band.end)} s)")


def _commands(d: Diagram, f: Frame, room: Room, words: Words) -> list[str]:
    """What people and scenarios asked for (a partition, T raised, a crash), as the app's
    `d` draws it, a row: a dotted line across the lanes just above its instant (what it
    causes comes after it), and its words in the column on the right."""
    out, fill = [], colour(EVENT_COLOUR["command"])
    for note in d.commands:
        line = f.y[note.t] - ROW / 2
        out.append(f'<line x1="{f.left}" x2="{f.width - 10}" y1="{line:.1f}" y2="{line:.1f}" stroke="{fill}" '
                   f'stroke-width="1" stroke-dasharray="1,3"/>')
        _told(note.text, f.y[note.t] + 4, fill, f, room, words)
    return out


def _lanes(d: Diagram, f: Frame, top: float, room: Room) -> list[str]:
    """Each lane's name on top, and its line: solid while its node is up, dashed while it
    is down (or not yet joined)."""
    out = [text(f'x="{f.left - 8}" y="{top}" text-anchor="end" fill="{MUTED}"', "t (s)")]
    room.label(f.left - 8, top, "t (s)", 11, "end")
    for node, spans in _lane_spans(d).items():
        x = f.x[node]
        room.label(x, top, d.labels[node], 11, "middle")
        out.append(text(f'x="{x}" y="{top}" text-anchor="middle" font-weight="bold" fill="{THEME.foreground}"',
                        escape(d.labels[node])))
        for a, b, up in spans:
            dash = "" if up else ' stroke-dasharray="3,4"'
            out.append(f'<line x1="{x}" x2="{x}" y1="{f.y[a]:.1f}" y2="{f.y[b]:.1f}" '
                       f'stroke="{THEME.foreground if up else MUTED}" stroke-width="{1.5 if up else 1}"{dash}/>')
    return out


def _inside(d: Diagram, f: Frame) -> list[str]:
    """A bar on the lane while its node is in the critical section (a mutex's run)."""
    _, variable, _ = CS_LOOK[CsState.HELD]
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


def _cuts(cuts: list[tuple[float, float, float]], bands: list[tuple[float, float]], f: Frame, room: Room) -> list[str]:
    """A quiet stretch cut short: a gap across the lanes that says how long it was. A
    violation band goes on through the gap, whole (its tint drawn again over it)."""
    out = []
    for middle, _, seconds in cuts:
        said = f"+{duration_text(seconds)}"
        room.label(f.left - 8, middle + 4, said, 10, "end")
        gap = (middle - 6, middle + 6)
        x0 = f.left + 1  # (the band's edge at f.left stays)
        out.append(f'<g><title>{seconds:,.6g} s of nothing to draw, cut short</title>'
                   f'<rect x="{x0}" y="{gap[0]:.1f}" width="{f.lanes_end - x0}" height="12" fill="{THEME.background}"/>'
                   + text(f'x="{f.left - 8}" y="{middle + 4:.1f}" text-anchor="end" font-size="10" fill="{MUTED}"',
                          escape(said)) + "</g>")
        out += [_band(max(gap[0], top), min(gap[1], bottom), x0, f.lanes_end, edge=False) for top, bottom in bands
                if top < gap[1] and gap[0] < bottom]
    return out


def _time_column(times: list[float], f: Frame, room: Room) -> list[str]:
    """The time of each instant that has room for it on the left, to the millisecond as
    the app's log shows it (not again for an instant that reads the same as the one above)."""
    out, above = [], None
    for t in times:
        said = instant_text(t)
        if said != above and room.label(f.left - 8, f.y[t] + 4, said, 11, "end"):
            out.append(text(f'x="{f.left - 8}" y="{f.y[t] + 4:.1f}" text-anchor="end" fill="{MUTED}"', said))
            above = said
    return out


def _marks(d: Diagram, f: Frame, room: Room, words: Words) -> None:
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
    for (node, t), marks in at.items():
        shown = [m for m, then in zip(marks, [*marks[1:], None])
                 if not (m.kind == "state" and then is not None and then.kind == "state")]
        looks = [m.look or (role_look(m.role) if m.role else ("▲", "$success")) for m in shown]
        glyphs = "".join(glyph for glyph, _ in looks)
        x, y = f.x[node] + 5, f.y[t] + 4
        said = f" {shown[-1].word}"
        if not room.label(x, y, glyphs + said, 11):
            said = ""
            if not room.label(x, y, glyphs, 11):
                continue
        told = "".join(f'<tspan fill="{colour(variable)}">{glyph}</tspan>' for glyph, variable in looks)
        if said:
            told += f'<tspan fill="{colour(looks[-1][1])}">{escape(said)}</tspan>'
        what = "; ".join(m.text if m.rule not in d.rules else f"{m.text}: {d.rules[m.rule]}" for m in marks)
        words.add(f'x="{x}" y="{y:.1f}" xml:space="preserve"', "", told,
                  title=f"{escape(d.labels[node])} at {t:g}s: {escape(what)}")


def sent_by(m: Flight, rules: dict[str, str]) -> str:
    """The rule that sent a message, for its tooltip: "; sent by rule 4: Election from a
    lower node: ..." ("" if none is named)."""
    said = rule_sentence(m.rule, rules)
    return "" if said is None else f"; sent by {said}"


def fate(m: Flight) -> str:
    """What became of a message, for its tooltip: in the window, or after it."""
    if m.ended is not None:
        return f"dropped at {m.ended:g}s: {m.why}" if m.dropped else f"delivered at {m.ended:g}s"
    if m.later is None:
        return "still in flight when the transcript ends"
    t, dropped = m.later
    return f"{'dropped' if dropped else 'arrives'} at t={t:g}s (after this view)"


def _messages(d: Diagram, f: Frame, room: Room, words: Words) -> list[str]:
    """An arrow from (sender, send time) to (receiver, delivery time), coloured by its
    role; a drop is dotted and ends in ✕ at the down receiver; one that arrives after the
    window is dotted and goes as far as it got by the view's end (the share of its time
    on the way), one that never arrives half way, and says when it arrives where that
    fits. Its name where it fits along it (a broadcast's names part as their arrows do);
    every detail in its tooltip. The arrows; their words go to `words`."""
    arrows = []
    for m in d.flights:
        c = colour(MESSAGE_COLOUR.get(m.role, "$foreground"))
        end = m.ended if m.ended is not None else d.stop
        x1, y1, x2, y2 = f.x[m.src], f.y[m.sent], f.x[m.dst], f.y[end]
        if m.ended is None:  # as far as it got by the view's end (half way, if it never arrives)
            t, _ = m.later or (math.nan, False)
            x2 = x1 + (x2 - x1) * (min(1.0, (d.stop - m.sent) / (t - m.sent)) if m.later else 0.5)
            y2 = max(y2, y1 + ROW / 2)  # (one sent at the view's last instant: a stub below it)
        style = ' stroke-dasharray="2,3"' if m.ended is None or m.dropped else ""
        arrow = "" if m.dropped or m.ended is None else f' marker-end="url(#arrow-{m.role})"'
        arrows.append(f'<g><title>{escape(m.label)} #{m.id} {escape(d.labels[m.src])}→{escape(d.labels[m.dst])}, '
                      f'sent at {m.sent:g}s, {fate(m)}{escape(sent_by(m, d.rules))}</title>'
                      f'<line x1="{x1}" y1="{y1:.1f}" x2="{x2}" y2="{y2:.1f}" stroke="{c}" stroke-width="1.2"{style}{arrow}/></g>')
        if m.dropped and room.label(x2, y2 + 4, "✕", 11, "middle"):  # (one ✕ for the drops at one place)
            words.add(f'x="{x2}" y="{y2 + 4:.1f}" text-anchor="middle"', f'fill="{THEME.error}"', "✕")
        if m.ended is None:
            when = "never arrives" if m.later is None else f"{'dropped' if m.later[1] else 'arrives'} {instant_text(m.later[0])}"
            ahead = 1 if x2 >= x1 else -1  # (its words go on the way it was going)
            anchor = "start" if ahead > 0 else "end"
            if room.label(x2 + 3 * ahead, y2 + 3, when, 9, anchor):
                words.add(f'x="{x2 + 3 * ahead:.1f}" y="{y2 + 3:.1f}" text-anchor="{anchor}" font-size="9"',
                          f'fill="{MUTED}"', escape(when))
        for along in (0.66, 0.5, 0.8, 0.35):
            lx, ly = x1 + (x2 - x1) * along, y1 + (y2 - y1) * along - 3
            if room.label(lx, ly, m.label, 9, "middle"):
                words.add(f'x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" font-size="9"', f'fill="{c}"',
                          escape(m.label))
                break
    return arrows


SWATCH = 30  # px: a legend item's line, before its words


def _swatch(x: float, y: float, stroke: str, dotted: bool = False, end: str = "") -> str:
    """A legend item's line: as the drawing draws that kind of message."""
    dash = ' stroke-dasharray="2,3"' if dotted else ""
    return f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" stroke="{stroke}" stroke-width="1.5"{dash}{end}/>'


def _legend(d: Diagram, left: float, width: int, room: Room) -> tuple[list[str], float]:
    """The legend on top, a row for each kind of thing (messages, statuses, the rest),
    wrapped to the drawing's width; and the y of the lanes' names below it. Each kind of
    line the drawing draws is in it, with a piece of that line."""
    command, cs = colour(EVENT_COLOUR["command"]), colour(CS_LOOK[CsState.HELD][1])
    kinds = [
        [(str(role), THEME.foreground, lambda x, y, role=role: _swatch(
            x, y, colour(MESSAGE_COLOUR[role]), end=f' marker-end="url(#arrow-{role})"')) for role in MESSAGE_COLOUR],
        [(f"{glyph} {role}", colour(variable), None) for role, (glyph, variable) in ROLE_LOOK.items()],
        [("dropped: at a down node, or lost", THEME.foreground, lambda x, y: _swatch(x, y, MUTED, dotted=True) + text(
            f'x="{x + 24}" y="{y}" text-anchor="middle" fill="{THEME.error}"', "✕")),
         ("arrives after this view, or never", THEME.foreground, lambda x, y: _swatch(x, y, MUTED, dotted=True)),
         ("dashed lane: down", THEME.foreground, None), ("▲ up again: recovered, joined", colour("$success"), None),
         *([("bar on a lane: in the critical section", cs, None)] if d.inside else []),
         ("red band: a violation", THEME.error, None), ("dotted row: a command", command, None),
         ("hover for details", THEME.foreground, None)],
    ]
    out, y = [], 20.0
    for items in kinds:
        x = left
        for said, fill, swatch in items:
            room_for = (SWATCH + 6 if swatch else 0)  # (+6: a ✕ at a swatch's end)
            if x > left and x + room_for + text_width(said, 11) > width - 10:
                x, y = left, y + LEGEND_ROW
            if swatch:
                out.append(swatch(x, y))
            out.append(text(f'x="{x + room_for}" y="{y}" fill="{fill}"', escape(said)))
            x += room_for + text_width(said, 11) + 24
        y += LEGEND_ROW
    bottom = y - LEGEND_ROW
    room.take(0, 0, width, bottom + 8)
    return out, bottom + 38
