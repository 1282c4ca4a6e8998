"""The selected node in full, each fact once: its status and leader, its timers with the
time left and its message counters (what the trace says, from the model), then its
algorithm's own variables and its safe storage, the live epoch among it (what only the
engine knows)."""

from __future__ import annotations

from textual.content import Content
from textual.markup import escape
from textual.widget import Widget

from ..core.host import HostStatus, Internals
from ..record.look import LEADER_MARK, role_look
from .model import NodeView


class NodePanel(Widget):
    def __init__(self):
        super().__init__()
        self._drawn = Content("")

    def show(self, node: NodeView, internals: Internals | None, now: float, labels: dict[int, str]) -> None:
        """`internals` None: not known at this moment (a replay's re-run has not got there)."""
        glyph, colour = role_look(node.role)
        self.border_title = f"node {labels[node.id]}"
        if node.leads:
            leader = f" [b $secondary]{LEADER_MARK} leader[/]"
        elif node.up:
            leader = f" → {_show(node.leader, labels)}"
        else:
            leader = ""
        lines = [f"[{colour}]{glyph} {escape(node.status)}[/]{leader}"]
        if node.waiting:
            lines.append(f"[b $warning]⏸ {node.waiting} message{'s' if node.waiting > 1 else ''} to it wait on held links[/]")
        lines.append("[b]timers[/]")
        for name, (_, fires) in sorted(node.timers.items()):
            lines.append(f"  {escape(name)}  [$primary]{max(0.0, fires - now):.2f}s[/] left")
        if not node.timers:
            lines.append("  [$text-muted]none running[/]")
        lines.append("[b]variables[/]")
        if internals is None:
            lines.append("  [$text-muted]being worked out (the replay is re-run in the background)[/]")
        else:
            for name, value in internals.variables.items():
                lines.append(f"  {escape(name)} = {_show(value, labels)}")
            if not internals.up:
                gone = "it left" if node.status is HostStatus.LEFT else "lost in the crash"
                lines.append(f"  [$text-muted]({gone})[/]")
            elif not internals.variables:
                lines.append("  [$text-muted]none of its own[/]")
            lines.append("[b]safe storage[/]")
            lines += [f"  {escape(name)} = {_show(value, labels)}" for name, value in internals.storage.items()]
        lines.append("[b]messages[/]  sent / received")
        for label in sorted(set(node.sent) | set(node.received)):
            lines.append(f"  {escape(label):<14} {node.sent[label]:>5} / {node.received[label]:<5}")
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
        items = [_plain(v, labels) for v in value]
        if len(items) > LONG_LIST:  # 64 members would fill the panel: the ends and the count
            items = [*items[:3], "…", *items[-2:], f"({len(value)})"]
        return ", ".join(items) or "none"
    return str(value)


LONG_LIST = 8
