"""The selected node in full: every protocol variable of its algorithm, its timers with
the time left, its safe storage (cluster epoch included), and its message counters."""

from __future__ import annotations

from textual.content import Content
from textual.markup import escape
from textual.widget import Widget

from .look import status_look
from .model import NodeView


class NodePanel(Widget):
    def __init__(self):
        super().__init__()
        self._drawn = Content("")

    def show(self, node: NodeView, snapshot: dict, now: float, labels: dict[int, str]) -> None:
        glyph, colour = status_look(node.status, node.normal)
        self.border_title = f"node {labels[node.id]}"
        lines = [f"[{colour}]{glyph} {node.status}[/]" + (" [b $secondary]★ leader[/]" if node.leads else "")]
        lines.append("[b]variables[/]")
        for name, value in snapshot["variables"].items():
            lines.append(f"  {name} = {_show(value, labels)}")
        if not snapshot["up"]:
            lines.append("  [$text-muted](lost in the crash)[/]")
        lines.append("[b]timers[/]")
        for name, fires in snapshot["timers"].items():
            lines.append(f"  {name}  [$primary]{max(0.0, fires - now):.2f}s[/] left")
        if not snapshot["timers"]:
            lines.append("  [$text-muted]none running[/]")
        lines.append("[b]safe storage[/]")
        lines += [f"  {name} = {_show(value, labels)}" for name, value in snapshot["storage"].items()]
        lines.append("[b]messages[/]  sent / received")
        for topic in sorted(set(node.sent) | set(node.received)):
            lines.append(f"  {topic:<12} {node.sent[topic]:>5} / {node.received[topic]:<5}")
        content = Content.from_markup("\n".join(lines))
        if content != self._drawn:
            self._drawn = content
            self.refresh()

    def render(self) -> Content:
        return self._drawn


def _show(value: object, labels: dict[int, str]) -> str:
    """A variable's value as escaped markup (a list would otherwise read as a tag), with
    node ids by their short names."""
    return escape(_plain(value, labels))


def _plain(value: object, labels: dict[int, str]) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return labels.get(value, str(value))
    if isinstance(value, dict):
        return "; ".join(f"{_plain(k, labels)}: {_plain(v, labels)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(_plain(v, labels) for v in value) or "none"
    return str(value)
