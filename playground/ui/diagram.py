"""The log as a space-time diagram: one lane per node, time flowing down, a row per line.

The message log (`message_log.py`) shows it when `d` is pressed: the same lines, through
the same filters, scrolled the same way, at the moment shown (time travel included); only
the drawing differs. A row is one log line:

  - a send: ○ on the sender's lane, and where it goes (→5 Election);
  - a delivery: an arrow from the sender's lane to the receiver's, with the message's
    name on it, coloured by its role; a drop ends in ✕ at the down receiver; a message
    waiting at a held link ends in ⏸;
  - a state change: the role's glyph on the node's lane, and the status beside it;
  - a crash ✖, a recovery or start ▲;
  - with a mutex, the critical section: ⧖ wants, ▣ in, □ out, on the node's lane;
  - a violation, an agreement or a command: the whole row, in its colour (a violation red).

A lane is │ while its node is up and ┊ while it is down, and ┃ in the critical
section's colour while its node is inside (from the log's lines: a stay that began
before the oldest line kept is not drawn). When the lanes do not fit, the
diagram keeps the selected node and the nodes it talks with in the lines, and says how
many it left out; a line that would draw nothing on the lanes kept (a message between
two nodes left out, a left-out node's state) gets no row (`draws`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.events import COMES_UP_KINDS, GOES_DOWN_KINDS, down_after, down_before
from ..record.look import CS_LOOK, CS_WORD, inside, line_colour, role_look
from .model import LogLine

MIN_LANE = 6  # columns a lane needs: room for an arrow head and a few letters
MAX_LANE = 16
MESSAGE_KINDS = ("deliver", "drop", "held")
WHOLE_ROW = ("violation", "agreement", "command")
LANE_COLOUR = "$text-muted"
HELD_STATE = next(state for state in CS_LOOK if inside(state))  # (the look of a stay inside)


def choose_lanes(ids: tuple[int, ...], width: int, selected: int, lines: Iterable[LogLine]) -> tuple[tuple[int, ...], int]:
    """The nodes that get a lane in `width` columns, and the lane width. All of them if they
    fit; else the selected node and those it exchanged messages with (most lines first),
    and if room is left, the nodes with most lines of their own (the others draw no row)."""
    if len(ids) * MIN_LANE <= width:
        return ids, max(MIN_LANE, min(MAX_LANE, width // max(1, len(ids))))
    room = max(1, width // MIN_LANE)
    talk: dict[int, int] = {}
    busy: dict[int, int] = {}
    for line in lines:
        for node in line.nodes:
            busy[node] = busy.get(node, 0) + 1
        if line.kind in MESSAGE_KINDS and selected in line.nodes:
            for node in line.nodes:
                if node != selected:
                    talk[node] = talk.get(node, 0) + 1
    partners = sorted(talk, key=lambda n: -talk[n])[: room - 1]
    others = sorted((n for n in busy if n != selected and n not in talk and n in ids), key=lambda n: -busy[n])
    chosen = tuple(sorted({selected, *partners, *others[: room - 1 - len(partners)]}, key=ids.index))
    return chosen, max(MIN_LANE, min(MAX_LANE, width // len(chosen)))


def draws(line: LogLine, lanes: frozenset[int] | dict[int, int]) -> bool:
    """Whether `row` draws anything for `line` on `lanes` besides the lanes themselves: a
    row that would be only │ │ │ is left out of the diagram."""
    kind, nodes = line.kind, line.nodes
    if kind in MESSAGE_KINDS:  # (most lines: first)
        return nodes[0] in lanes or nodes[1] in lanes
    if kind in WHOLE_ROW:
        return True
    if not nodes or nodes[0] not in lanes:
        return False
    if kind in ("state", "cs"):
        return line.state is not None
    return kind == "send" or kind in GOES_DOWN_KINDS or kind in COMES_UP_KINDS


def row(line: LogLine, lanes: tuple[int, ...], lane_width: int, down: frozenset[int], label: dict[int, str],
        width: int, within: frozenset[int] = frozenset()) -> list[tuple[str, str]]:
    """One line of the log as one row of the diagram, `width` columns wide: runs of
    (text, theme colour variable or ""). `within`: the nodes in the critical section."""
    cells = [" "] * width
    styles: list[str | None] = [None] * width
    column = {node: k * lane_width + lane_width // 2 for k, node in enumerate(lanes)}
    for node, x in column.items():
        if x < width:
            if node in down:
                cells[x], styles[x] = "┊", LANE_COLOUR
            elif node in within:
                cells[x], styles[x] = "┃", CS_LOOK[HELD_STATE][1]
            else:
                cells[x], styles[x] = "│", LANE_COLOUR
    colour = line_colour(line.kind, line.role)

    def put(x: int, text: str, style: str) -> None:
        for k, ch in enumerate(text):
            if 0 <= x + k < width:
                cells[x + k], styles[x + k] = ch, style

    if line.kind in WHOLE_ROW:
        for x in range(width):
            if cells[x] == " ":
                cells[x], styles[x] = ("━" if line.kind == "violation" else "┈"), colour
        text = f" {line.text} "
        put(max(0, (width - len(text)) // 2), text, colour)
    elif line.kind in MESSAGE_KINDS and len(line.nodes) == 2 and all(n in column for n in line.nodes):
        src, dst = line.nodes
        a, b = column[src], column[dst]
        step = 1 if b > a else -1
        for x in range(a + step, b, step):
            cells[x], styles[x] = "─", colour
        head = {"deliver": "▶" if step > 0 else "◀", "drop": "✕", "held": "⏸"}[line.kind]
        put(b - step, head, colour)
        span = abs(b - a) - 3
        if span > 0:
            name = line.topic[:span]
            put(min(a, b) + 2 + (span - len(name)) // 2, name, colour)
    elif line.kind == "send" and line.nodes and line.nodes[0] in column:
        src, dst = line.nodes
        put(column[src], "○", colour)
        put(column[src] + 1, f"→{label[dst]} {line.topic}"[: lane_width - 1], colour)
    elif line.kind in MESSAGE_KINDS:  # one end has no lane: the end that has, and who the other is
        src, dst = line.nodes
        if dst in column:
            head = {"deliver": "◀", "drop": "✕", "held": "⏸"}[line.kind]
            put(column[dst], f"{head}{label[src]} {line.topic}"[: lane_width], colour)
        elif src in column:
            put(column[src], f"─→{label[dst]} {line.topic}"[: lane_width], colour)
    elif line.nodes and line.nodes[0] in column:
        node = line.nodes[0]
        if line.kind == "state" and line.state is not None:
            status = line.state
            glyph, glyph_colour = role_look(status.role)
            put(column[node], glyph, glyph_colour)
            put(column[node] + 1, status[: lane_width - 2], glyph_colour)
        elif line.kind == "cs" and line.state is not None:  # the critical section: its glyph, and where
            glyph, glyph_colour, _ = CS_LOOK[line.state]
            put(column[node], glyph, glyph_colour)
            put(column[node] + 1, CS_WORD[line.state][: lane_width - 2], glyph_colour)
        elif line.kind in GOES_DOWN_KINDS:
            put(column[node], "✖", colour)
        elif line.kind in COMES_UP_KINDS:
            put(column[node], "▲", colour)
    return _runs(cells, styles)


def header(lanes: tuple[int, ...], lane_width: int, label: dict[int, str], width: int) -> list[tuple[str, str]]:
    """The row above the lanes: each lane's node, centred on it (cut to fit), as runs of
    (text, "name" or "")."""
    cells = [" "] * width
    styles: list[str | None] = [""] * width
    for k, node in enumerate(lanes):
        name = label[node][: max(1, lane_width - 1)]
        x = k * lane_width + lane_width // 2 - (len(name) - 1) // 2
        for j, ch in enumerate(name):
            if 0 <= x + j < width:
                cells[x + j], styles[x + j] = ch, "name"
    return _runs(cells, styles)


def _runs(cells: list[str], styles: list[str | None]) -> list[tuple[str, str]]:
    """Cells and their styles as runs of one style each. (Drawn as plain segments: a
    Content of a hundred spans costs milliseconds a row, too dear at 20 frames a second.)"""
    runs, start = [], 0
    for x in range(1, len(cells) + 1):
        if x == len(cells) or styles[x] != styles[start]:
            runs.append(("".join(cells[start:x]), styles[start] or ""))
            start = x
    return runs


def down_at_start(lines: Iterable[LogLine], down_now: set[int]) -> frozenset[int]:
    """Who was down before the first of `lines`, from who is down after the last of them."""
    down = frozenset(down_now)
    for line in reversed(list(lines)):
        if line.nodes:
            down = down_before(down, line.kind, line.nodes[0])
    return down


def within_after(line: LogLine, within: frozenset[int]) -> frozenset[int]:
    """Who is in the critical section after `line`: its cs lines say, and a node that goes
    down is out."""
    if not line.nodes:
        return within
    node = line.nodes[0]
    if line.kind == "cs":
        return within | {node} if inside(line.state) else within - {node}
    return within - {node} if line.kind in GOES_DOWN_KINDS else within


def after(line: LogLine, down: frozenset[int]) -> frozenset[int]:
    """Who is down after `line` (crashed, left, or not yet joined)."""
    return down_after(down, line.kind, line.nodes[0]) if line.nodes else down
