"""One node in the grid: id, status (glyph and colour), leader, its next timer, traffic."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from .look import LEADER_MARK, countdown, status_look, timer_label
from .model import NodeView

FULL_WIDTH = 19  # border, one space, then 16 cells: "answer ████ 3.9s" fits
COMPACT_WIDTH = 15


class NodeCard(Widget):
    def __init__(self, node: NodeView, compact: bool):
        super().__init__(classes="compact" if compact else "")
        self.node = node
        self.compact = compact
        self._key: tuple | None = None
        self._content = Content("")

    def show(self, now: float, selected: bool) -> None:
        """Rebuild and redraw only when something the card shows has changed, so 32
        cards at 20 frames a second cost little (building Content is the dear part)."""
        self.set_class(selected, "selected")
        self.set_class(not self.node.up, "down")
        n = self.node
        timer = min(n.timers.items(), key=lambda item: item[1][1], default=None)
        bar = countdown(*timer[1], now) if timer else ""
        left = round(max(0.0, timer[1][1] - now), 1) if timer else 0.0
        traffic = () if self.compact else (sum(n.sent.values()), sum(n.received.values()))
        key = (n.up, n.status, n.normal, n.leader, timer and timer[0], bar, 0.0 if self.compact else left, traffic)
        if key != self._key:
            self._key = key
            self._content = self._build(timer and timer[0], bar, left, traffic)
            self.refresh()

    def render(self) -> Content:
        return self._content

    def _build(self, timer: str | None, bar: str, left: float, traffic: tuple) -> Content:
        n = self.node
        glyph, colour = status_look(n.status, n.normal)
        if not n.up:
            leader: tuple = ("",)
        elif n.leads:
            leader = (" ", (LEADER_MARK, "b $secondary"))
        else:
            leader = (f" →{'?' if n.leader is None else n.leader}",)
        if self.compact:
            return Content.assemble((f"{n.id:>3}", "b"), " ", (glyph, colour), *leader, " ", (bar, "$text-muted"))
        status = ("down", f"{colour} strike") if not n.up else (n.status, colour)
        first = Content.assemble((str(n.id), "b"), " ", (f"{glyph} ", colour), status, *leader)
        second = Content.assemble(f"{timer_label(timer):<6} ", (bar, "$primary"), f"{left:4.1f}s") if timer else Content("")
        third = Content.assemble((f"↑{traffic[0]} ↓{traffic[1]}", "$text-muted"))
        return Content("\n").join([first, second, third])
