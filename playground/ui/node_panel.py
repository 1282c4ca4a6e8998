"""The selected node in full, each fact once: its status and leader, the last rule it
applied with the rule's sentence (the run's table of rules), its timers with the time
left and its message counters (what the trace says, from the model), then its
algorithm's own variables and its safe storage, the live epoch among it (what only the
engine knows), written as the cards write it (the Invitation's group: g2.7). Above it,
while one is picked, the log's line and what made it (`show_picked`).

Written for people, whatever the algorithm: names without underscores, yes and no,
node ids by their short names, long lists shortened to the room they have ("1–64 (64)"),
long lines wrapped under themselves. Taller than its room, it scrolls."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from textual.containers import VerticalScroll
from textual.markup import escape
from textual.reactive import reactive

from ..record.look import LEADER_MARK, leader_text, role_look, rule_sentence, timer_label
from .model import NodeView
from .panel_text import HANG, PanelText, Row  # noqa: F401 (HANG: how far a wrapped line goes in, for tests)
from .redraws import retitle


class Internals(Protocol):
    """What the panel reads of a node's internals (core/host.py's, as the control surface gives them)."""

    up: bool
    variables: Mapping[str, object]
    storage: Mapping[str, object]
    rate: float  # how fast its clock runs (1: it keeps time; --drift)


class NodePanel(VerticalScroll, can_focus=False):  # keys are the app's: arrows select nodes
    DEFAULT_CSS = "NodePanel { scrollbar-size-vertical: 1; }"

    node: reactive[int | None] = reactive(None)  # whose facts are shown

    def __init__(self, epoch_text: Callable[[int], str] | None = None, rules: Mapping[str, str] | None = None):
        """`epoch_text`: the algorithm's way of writing an epoch, as the cards write it
        (the Invitation's is a group: "g2.7", not 2,000,007); `rules`: its rules, key ->
        sentence (the run's table)."""
        super().__init__()
        self.text = PanelText()
        self.epoch_text = epoch_text
        self.rules = rules or {}
        self._node_rows: tuple[Row, ...] = ()
        self._picked_rows: tuple[Row, ...] = ()

    def compose(self):
        yield self.text

    def show(self, node: NodeView, internals: Internals | None, now: float, labels: dict[int, str],
             unknown: str | None = None) -> None:
        """`internals` None: not known at this moment (a replay's re-run has not got
        there; or, `unknown` says why, never will be). Given with `unknown`, only its
        storage is known (a real node's, from its state file)."""
        retitle(self, f"node {labels[node.id]}")
        self.text.labels = labels
        self._node_rows = rows(node, internals, now, labels, unknown, self.epoch_text, self.rules)
        self.text.rows = self._picked_rows + self._node_rows
        self.node = node.id

    def show_picked(self, text: str | None, why: str | None) -> None:
        """The log's picked line (`text`) and what made it, above the node's facts (None:
        none picked)."""
        self._picked_rows = () if text is None else (
            ("[b]picked in the log[/]", None), (f"  {escape(text)}", None), (f"  [$accent]{escape(why or '')}[/]", None))
        self.text.rows = self._picked_rows + self._node_rows
        self.scroll_home(animate=False)

    def watch_node(self) -> None:
        self.scroll_home(animate=False)  # another node: its facts from the top

    def shown_text(self) -> str:
        """The lines as drawn at the panel's width, for tests."""
        return "\n".join(line.plain for line in self.text.lines(self.text.content_size.width))


def rows(node: NodeView, internals: Internals | None, now: float, labels: Mapping[int, str],
         unknown: str | None = None, epoch_text: Callable[[int], str] | None = None,
         rules: Mapping[str, str] | None = None) -> tuple[Row, ...]:
    glyph, colour = role_look(node.role)
    if node.leads:
        leader = f" [b $secondary]{LEADER_MARK} leader[/]"
    elif node.up:
        leader = f" {escape(leader_text(node.leader, labels))}"
    else:
        leader = ""
    out: list[Row] = [(f"[{colour}]{glyph} {escape(node.status)}[/]{leader}", None)]
    if node.waiting:
        many = node.waiting > 1
        text = (f"[b $warning]⏸ {node.waiting:,} message{'s' if many else ''} to it "
                f"{'wait' if many else 'waits'} on held links[/]")
        out.append((text, None))
    out.append(("[b]last rule applied[/]", None))
    said = rule_sentence(node.rule, rules or {})
    out.append((f"  {escape(said)}" if said else "  [$text-muted]none named yet[/]", None))
    out.append(("[b]timers[/]" + ("  time left" if node.timers else ""), None))
    names = {name: timer_label(name, labels) for name in sorted(node.timers)}
    for name, shown in names.items():
        left = max(0.0, node.timers[name][1] - now)
        out.append((f"  {escape(shown):<{max(map(len, names.values()))}}  [$primary]{left:.2f}s[/]", None))
    if not node.timers:
        out.append(("  [$text-muted]none running[/]", None))
    if internals is not None and internals.rate != 1:  # (--drift: each timer fires after its delay / rate)
        out.append((f"  [$error]its clock runs at ×{internals.rate:g}[/]", None))
    kinds = sorted(set(node.sent) | set(node.received))
    out.append(("[b]messages[/]" + ("  sent / received" if kinds else ""), None))
    if kinds:
        name_w = max(map(len, kinds))
        sent_w = max(len(f"{node.sent[k]:,}") for k in kinds)
        for kind in kinds:
            out.append((f"  {escape(kind):<{name_w}}  {node.sent[kind]:>{sent_w},} / {node.received[kind]:,}", None))
    else:
        out.append(("  [$text-muted]none yet[/]", None))
    out.append(("[b]variables[/]", None))
    if internals is None or unknown:  # (a real node's: not known, but its storage is, from its state file)
        why = escape(f"not known: {unknown}") if unknown else "being worked out (the replay is re-run in the background)"
        out.append((f"  [$text-muted]{why}[/]", None))
        if internals is None:
            return tuple(out)
    else:
        out += [_variable(name, value, labels) for name, value in internals.variables.items()]
        if not internals.up:
            gone = "it left" if node.left else "lost in the crash"
            out.append((f"  [$text-muted]({gone})[/]", None))
        elif not internals.variables:
            out.append(("  [$text-muted]none of its own[/]", None))
    out.append(("[b]safe storage[/]", None))
    out += [_variable(name, epoch_text(value) if name == "epoch" and epoch_text and type(value) is int else value, labels)
            for name, value in internals.storage.items()]
    return tuple(out)


def _variable(name: str, value: object, labels: Mapping[int, str]) -> Row:
    """"halted_by", 4 -> "halted by: 4"; a list is kept as its items, to fit when drawn."""
    head = f"  {escape(name.replace('_', ' '))}: "
    if isinstance(value, (list, tuple, set, frozenset)) and not any(isinstance(v, (list, tuple, set, frozenset, dict))
                                                                    for v in value):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return head, tuple(_plain(v, labels) if not isinstance(v, int) or isinstance(v, bool) else v for v in items)
    return head + escape(_plain(value, labels)), None


def _plain(value: object, labels: Mapping[int, str]) -> str:
    """A value for people: yes and no, node ids by their short names, counts with separators."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return labels.get(value, f"{value:,}")
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "; ".join(f"{_plain(k, labels)}: {_plain(v, labels)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(_plain(v, labels) for v in value) or "none"
    return str(value)
