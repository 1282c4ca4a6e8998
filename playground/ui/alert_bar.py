"""The monitor's alert, above the status bar, shown once a property has been broken. Red
while violations last, a line each (what, since when, which nodes); afterwards, quieter,
one line for the last one with how long it lasted. The log has every one. The words are
the monitor's (monitor.describe), with the nodes' short names; after a violation's time,
the model's assumptions broken when it began, since when ("SLE1 since t=9.10s · links
lossy since t=0.00").

A line says what and when first, and how long it lasted, then the monitor's words; when
it is wider than the screen, the lists of nodes in those words are shortened ("1–40
(40)", "1, 2, …, 40 (40)"), and only then is its end cut, at a word."""

from __future__ import annotations

import re

from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from ..record.look import PROPERTY_NAMES, describe, describe_groups, duration_text, short_list
from .model import ClusterModel

NODE_LIST = re.compile(r"\b\w+(?:, \w+)+\b")  # "3, 4, 5" in the monitor's words: a list, if they are all nodes
SINCE = re.compile(r" since t=[0-9.]+")  # in what was broken when a violation began: since when


class AlertBar(Widget):
    # (open, lines): each line its essentials, the monitor's words, how many so far, and what was broken when it
    # began. Empty: nothing broken yet.
    alert: reactive[tuple[bool, tuple[tuple[str, str, str, str], ...]]] = reactive((False, ()), layout=True)

    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.display = False

    def show(self) -> None:
        episodes, name = self.model.state.episodes, self.model.label.__getitem__
        total = len(episodes.all)
        if episodes.open:
            lines = [(f"⚠ {PROPERTY_NAMES[e.property]} since t={e.began.t:.2f}s", describe(e.began, name), "", e.broken)
                     for e in episodes.open.values()]
            if total > len(lines):  # some are over already: how many in all, on the last line
                lines[-1] = (*lines[-1][:2], f"{total:,} violations so far", lines[-1][3])
        elif episodes.all:
            # the last to end (of those ending together, the last to begin)
            _, _, last = max((e.began.t + (e.lasted or 0.0), k, e) for k, e in enumerate(episodes.all))
            lasted = f", lasted {duration_text(last.lasted)}" if last.lasted is not None else ""
            lines = [(f"⚠ {PROPERTY_NAMES[last.property]} at t={last.began.t:.2f}s{lasted}", describe(last.began, name),
                      f"the last of {total:,} violations" if total > 1 else "", last.broken)]
        else:
            lines = []
        state = self.model.state
        if state.has_groups and len(found := state.groups()) > 1:  # allowed: not a violation (monitor rule 10)
            lines.append((f"◇ {len(found)} groups", describe_groups(found, name, state.epoch_text), "", ""))
        self.alert = (bool(episodes.open), tuple(lines))

    def watch_alert(self, alert: tuple[bool, tuple]) -> None:
        is_open, lines = alert
        self.display = bool(lines)
        self.set_class(is_open, "active")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.alert[1])  # a line each, fitted to the width when drawn

    def render(self) -> Content:
        is_open, lines = self.alert
        width = self.content_size.width or 1_000  # (0: not laid out yet, as when just shown: whole lines)
        shown = Content("\n").join(Content(fit(*line[:3], self.model.label, width, line[3])) for line in lines)
        return shown.stylize("b") if is_open else shown


def fit(head: str, words: str, tail: str, labels: dict[int, str], width: int, broken: str = "") -> str:
    """"head · broken: words · tail" in `width` cells if it can be: the lists of nodes in
    `words` shortened, the longest first; else without the tail; else with what was
    broken named without since when ("links lossy since t=3.20" -> "links lossy"); else
    without it; else cut at a word's end."""
    full = f"{head} · {broken}" if broken else head
    candidates = [f"{full}: {words} · {tail}" if tail else "", f"{full}: {words}"]
    if broken:
        candidates += [f"{head} · {SINCE.sub('', broken)}: {words}", f"{head}: {words}"]
    for line in candidates:
        line = shorten_lists(line, labels, len(line) - width) if line else ""
        if line and len(line) <= width:
            return line
    cut = line[:width - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def shorten_lists(text: str, labels: dict[int, str], over: int) -> str:
    """`text` with its lists of nodes shortened, the longest first, until it is `over`
    cells shorter or they are as short as they go."""
    ids = {label: node for node, label in labels.items()}
    lists = [m for m in NODE_LIST.finditer(text) if all(item in ids for item in m[0].split(", "))]
    shorter = {m.start(): m[0] for m in lists}
    for m in sorted(lists, key=lambda m: len(m[0]), reverse=True):
        if over <= 0:
            break
        shorter[m.start()] = short_list([ids[item] for item in m[0].split(", ")], labels, len(m[0]) - over)
        over -= len(m[0]) - len(shorter[m.start()])
    parts, end = [], 0
    for m in lists:
        parts += [text[end:m.start()], shorter[m.start()]]
        end = m.end()
    return "".join(parts) + text[end:]
