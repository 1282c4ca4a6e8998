"""One node as a card: id, status (glyph and colour), leader, its next timer, traffic
and its cluster epoch.

`card_key` says what a card shows right now, and `card_content` draws it; both serve
the full card widget below and the compact grid's one-line cells. The key lets a
caller rebuild only what changed, since building Content is the dear part.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from ..record.look import LEADER_MARK, countdown, role_look, short_status, timer_label
from .model import NodeView

FULL_WIDTH = 19  # border, one space, then 16 cells: "answer ████ 3.9s" fits


def compact_width(digits: int) -> int:
    """A one-line cell: id, glyph, "→" and the leader's id, a 4-cell bar, one space between."""
    return 2 * digits + 10


def card_key(n: NodeView, now: float, compact: bool) -> tuple:
    timer = min(n.timers.items(), key=lambda item: item[1][1], default=None)
    name = timer[0] if timer else None
    bar = countdown(*timer[1], now) if timer else ""
    if compact:
        return (n.up, n.status, n.role, n.leader, name, bar)
    left = round(max(0.0, timer[1][1] - now), 1) if timer else 0.0
    return (n.up, n.status, n.role, n.leader, name, bar, left, sum(n.sent.values()), sum(n.received.values()), n.epoch,
            n.waiting)


def card_content(n: NodeView, key: tuple, compact: bool, labels: dict[int, str], digits: int = 2) -> Content:
    glyph, colour = role_look(n.role)
    name, bar = key[4], key[5]
    if not n.up:
        leader: tuple = ("",)
    elif n.leads:
        leader = (" ", (LEADER_MARK, "b $secondary"))
    else:
        leader = (f" →{'?' if n.leader is None else labels[n.leader]}",)
    if compact:
        ident = (f"{labels[n.id]:>{digits}}", "b" if n.up else "$text-disabled")
        return Content.assemble(ident, " ", (glyph, colour), *leader, " ", (bar, "$text-muted"))
    left, sent, received, epoch, waiting = key[6:]
    status = (short_status(n.status), colour if n.up else f"{colour} strike")
    first = Content.assemble((labels[n.id], "b"), " ", (f"{glyph} ", colour), status, *leader)
    second = Content.assemble(f"{timer_label(name):<6} ", (bar, "$primary"), f"{left:4.1f}s") if name else Content("")
    third = Content.assemble((f"↑{sent} ↓{received} e{epoch}", "$text-muted"),
                             *(((f" ⏸{waiting}", "b $warning"),) if waiting else ()))
    return Content("\n").join([first, second, third])


class NodeCard(Widget):
    def __init__(self, node: NodeView, labels: dict[int, str]):
        super().__init__()
        self.node = node
        self.labels = labels
        self._key: tuple | None = None
        self._content = Content("")

    def show(self, now: float, selected: bool) -> None:
        self.set_class(selected, "selected")
        self.set_class(not self.node.up, "down")
        key = card_key(self.node, now, compact=False)
        if key != self._key:
            self._key = key
            self._content = card_content(self.node, key, compact=False, labels=self.labels)
            self.refresh()

    def render(self) -> Content:
        return self._content
