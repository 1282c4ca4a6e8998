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
        self.now = 0.0
        self._drawn: Content | None = None

    def show(self, now: float, selected: bool) -> None:
        """Redraw only if something visible changed: 32 cards at 20 Hz stay cheap."""
        self.now = now
        self.set_class(selected, "selected")
        self.set_class(not self.node.up, "down")
        content = self._content()
        if content != self._drawn:
            self._drawn = content
            self.refresh()

    def render(self) -> Content:
        return self._drawn if self._drawn is not None else self._content()

    def _content(self) -> Content:
        n = self.node
        glyph, colour = status_look(n.status, n.normal)
        if not n.up:
            leader = ""
        elif n.leads:
            leader = f" [b $secondary]{LEADER_MARK}[/]"
        else:
            leader = f" →{n.leader}" if n.leader is not None else " →?"
        timer = min(n.timers.items(), key=lambda item: item[1][1], default=None)
        if self.compact:
            bar = countdown(*timer[1], self.now) if timer else ""
            return Content.from_markup(f"[b]{n.id:>3}[/] [{colour}]{glyph}[/]{leader} [$text-muted]{bar}[/]")
        status = "[strike]down[/]" if not n.up else n.status
        lines = [f"[b]{n.id}[/] [{colour}]{glyph} {status}[/]{leader}"]
        if timer:
            name, (set_at, fires) = timer
            left = max(0.0, fires - self.now)
            lines.append(f"{timer_label(name):<6} [$primary]{countdown(set_at, fires, self.now)}[/]{left:4.1f}s")
        else:
            lines.append("")
        lines.append(f"[$text-muted]↑{sum(n.sent.values())} ↓{sum(n.received.values())}[/]")
        return Content.from_markup("\n".join(lines))
