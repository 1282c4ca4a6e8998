"""One node as a card: id, status (glyph and colour), leader, its next timer, traffic
and its cluster epoch; with a mutex, its place with respect to the critical section.

`card_key` says what a card shows right now, and `card_content` draws it; both serve
the full card widget below and the compact grid's one-line cells. The key lets a
caller rebuild only what changed, since building Content is the dear part; and a full
card sends again only the lines whose part of the key changed (LINES): while a run
moves, its countdown changes ten times a second, the rest seldom.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.geometry import Region
from textual.reactive import reactive
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from ..record.look import LEADER_MARK, countdown, cs_badge, leader_text, role_look, short_status, timer_label
from .model import NodeView

FULL_WIDTH = 19  # border, one space, then 16 cells: "timeout ███ 3.9s" fits (4 columns at 80)
# A full card's timer line: its name, a bar, up to 4 cells of time. A wider card gives its
# name up to TIMER_NAME cells, and the bar the rest.
TIMER_BAR, TIMER_NAME = 3, 12
# Which parts of a full card's key (card_key) each of its three lines shows: the status
# line (up, status, role, leader, the critical section's badge), the timer's, the counters'.
LINES = ((0, 1, 2, 3, 6), (4, 5, 7), (8, 9, 10, 11))


def compact_width(digits: int) -> int:
    """A one-line cell: id, glyph, "→" and the leader's id, a 4-cell bar, one space between."""
    return 2 * digits + 10


def card_key(n: NodeView, now: float, compact: bool, cells: int = TIMER_BAR) -> tuple:
    """What a card shows now; a full card's bar `cells` long."""
    timer = min(n.timers.items(), key=lambda item: item[1][1], default=None)
    name = timer[0] if timer else None
    cs = n.cs if n.up else None
    if compact:
        return (n.up, n.status, n.role, n.leader, name, countdown(*timer[1], now) if timer else "", cs)
    bar = countdown(*timer[1], now, cells) if timer else ""
    left = round(max(0.0, timer[1][1] - now), 1) if timer else 0.0
    return (n.up, n.status, n.role, n.leader, name, bar, cs, left, sum(n.sent.values()), sum(n.received.values()),
            n.epoch, n.waiting)


def card_content(n: NodeView, key: tuple, compact: bool, labels: dict[int, str], digits: int = 2,
                 width: int = FULL_WIDTH - 3, epoch_text: Callable[[int], str] | None = None) -> Content:
    """A compact cell; or a full card's three lines, `width` cells wide: a card wider than
    the least has room for longer names, and the epoch written as its algorithm writes
    it (`epoch_text`, which a full card needs)."""
    if compact:
        glyph, colour, gap, leader = _status_parts(n, key, labels)
        ident = (f"{labels[n.id]:>{digits}}", "b" if n.up else "$text-disabled")
        return Content.assemble(ident, " ", (glyph, colour), *leader, gap, (key[5], "$text-muted"))
    return Content("\n").join([card_line(n, key, y, labels, width, epoch_text) for y in range(len(LINES))])


def card_line(n: NodeView, key: tuple, y: int, labels: dict[int, str], width: int = FULL_WIDTH - 3,
              epoch_text: Callable[[int], str] | None = None) -> Content:
    """Line `y` of a full card (LINES says what each shows)."""
    if y == 1:
        name, bar, left = key[4], key[5], key[7]
        if not name:
            return Content("")
        # Tenths while they matter; whole seconds from 10 s on, so the time keeps to 4 cells.
        seconds = f"{left:.1f}s" if left < 10 else f"{left:.0f}s"
        room = width - len(bar) - 6
        return Content.assemble(f"{timer_label(name, labels, room):<{room}} ", (bar, "$primary"), f" {seconds:>4}")
    if y == 2:
        sent, received, epoch, waiting = key[8:]
        return Content.assemble((f"↑{sent:,} ↓{received:,} {epoch_text(epoch)}", "$text-muted"),
                                *(((f" ⏸{waiting}", "b $warning"),) if waiting else ()))
    glyph, colour, gap, leader = _status_parts(n, key, labels)
    room = width - len(labels[n.id]) - 3 - Content.assemble(*leader).cell_length
    status = (short_status(n.status, max(8, room)), colour if n.up else f"{colour} strike")
    return Content.assemble((labels[n.id], "b"), gap, (f"{glyph} ", colour), status, *leader)


def _status_parts(n: NodeView, key: tuple, labels: dict[int, str]) -> tuple:
    """What a card's status line and a compact cell share: the role's glyph and colour,
    the critical section's badge (or a space) and the leader."""
    glyph, colour = role_look(n.role)
    # In or waiting for the critical section: a glyph where a space was (the same width).
    badge = cs_badge(key[6])
    gap = (badge[0], f"b {badge[1]}") if badge else " "
    if not n.up:
        leader: tuple = ("",)
    elif n.leads:
        leader = (" ", (LEADER_MARK, "b $secondary"))
    else:
        leader = (f" {leader_text(n.leader, labels)}",)
    return glyph, colour, gap, leader


class NodeCard(Widget):
    key: reactive[tuple | None] = reactive(None, repaint=False)  # what the card shows (card_key): its lines that
    # changed are drawn again (watch_key)
    inner: reactive[int] = reactive(FULL_WIDTH - 3)  # cells inside, the same on every card of a grid (NodeGrid sets it)

    def __init__(self, node: NodeView, labels: dict[int, str], epoch_text):
        super().__init__()
        self.node = node
        self.labels = labels
        self.epoch_text = epoch_text  # the algorithm's way of writing an epoch (a group, for the Invitation's)
        self._now = 0.0  # the time it was last shown at

    def show(self, now: float, selected: bool) -> None:
        self.set_class(selected, "selected")
        self.set_class(not self.node.up, "down")
        self._now = now
        self.key = self._key()

    def _key(self) -> tuple:
        return card_key(self.node, self._now, compact=False, cells=max(TIMER_BAR, self.inner - 6 - TIMER_NAME))

    def watch_key(self, old: tuple | None, new: tuple | None) -> None:
        """Only the lines whose part of the key changed are drawn again (and sent)."""
        width = self.content_size.width
        if old is None or new is None or not width:
            self.refresh()
            return
        changed = [y for y, parts in enumerate(LINES) if any(old[k] != new[k] for k in parts)]
        self.refresh(*(Region(0, y, width, 1) for y in changed))

    def render_line(self, y: int) -> Strip:
        """Line `y` alone: after a change of its part of the key (watch_key), the widget's
        styles ask for that line only, and making lines into strips is the dear part of
        drawing a card."""
        if self.text_selection is not None:  # (a selection is drawn across the lines: the whole card)
            return super().render_line(y)
        if self.key is None or y >= len(LINES):
            return Strip.blank(self.size.width, self.visual_style.rich_style)
        line = card_line(self.node, self.key, y, self.labels, self.inner, self.epoch_text)
        # (below y empty lines, which cost nothing: each cell of a line says where it is in
        # the card, its row too, for a mouse selection)
        return Visual.to_strips(self, Content("\n" * y) + line, self.size.width, y + 1, self.visual_style)[y]

    def watch_inner(self) -> None:
        """A new width: the bar follows it now, not at the next drawing (a paused replay
        has none: it kept a bar for the width it opened at)."""
        if self.key is not None:
            self.key = self._key()

    def render(self) -> Content:  # on a new key or width
        if self.key is None:
            return Content("")
        return card_content(self.node, self.key, compact=False, labels=self.labels, width=self.inner,
                            epoch_text=self.epoch_text)
