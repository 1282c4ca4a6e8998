"""The network as the user sees it by hand (the by-hand screen's list): every message in
flight, by when it would arrive, then every timer set, by when it would fire, one row
each, one of them selected.

A line-API scroll view, as the log is: it renders only the rows on screen, so ten
thousand messages in flight cost a key what a screenful does. The rows come whole
(`show`): the screen makes them from the timeline's network (run/timeline.py) when the
run has moved on.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

SELECTED = Style(reverse=True)
MUTED = Style(dim=True)


@dataclass(frozen=True, slots=True)
class Row:
    """One row: a message in flight (`msg`: its id) or a timer set (`node` and `timer`)."""

    text: str
    msg: int | None = None
    node: int | None = None
    timer: str | None = None
    muted: bool = False  # drawn dim (a message the link has lost already: it will only be dropped)


class NetworkPane(ScrollView, can_focus=False):  # keys are the screen's
    DEFAULT_CSS = """
    NetworkPane { overflow-x: hidden; overflow-y: scroll; height: 1fr; }
    """
    selected: reactive[int] = reactive(0, init=False)

    def __init__(self):
        super().__init__()
        self.rows: list[Row] = []

    def show(self, rows: list[Row]) -> None:
        """New rows: the selection stays on the same message or timer if it is still
        there, else at the same place."""
        picked = self.rows[self.selected] if 0 <= self.selected < len(self.rows) else None
        self.rows = rows
        place = next((k for k, row in enumerate(rows) if picked is not None and (row.msg, row.node, row.timer)
                      == (picked.msg, picked.node, picked.timer)), self.selected)
        self.virtual_size = Size(self.size.width, len(rows))
        self.set_reactive(NetworkPane.selected, max(0, min(place, len(rows) - 1)))
        self.refresh()

    @property
    def picked(self) -> Row | None:
        return self.rows[self.selected] if 0 <= self.selected < len(self.rows) else None

    def move(self, by: int) -> None:
        """The selection `by` rows on (a page: the pane's height), kept in view."""
        if self.rows:
            self.selected = max(0, min(self.selected + by, len(self.rows) - 1))

    def watch_selected(self, selected: int) -> None:
        top, height = int(self.scroll_offset.y), max(1, self.size.height)
        if selected < top:
            self.scroll_to(y=selected, animate=False)
        elif selected >= top + height:
            self.scroll_to(y=selected - height + 1, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.size.width
        if index >= len(self.rows):
            return Strip.blank(width)
        row = self.rows[index]
        style = SELECTED if index == self.selected else MUTED if row.muted else Style()
        text = row.text[:width].ljust(width)
        return Strip([Segment(text, style)], width)
