"""The timeline's row: one line, the session from its start to its latest instant, with its
markers (crashes, recoveries, commands, election rounds, violations) and where you are.
`,` `.` move by an instant, `{` `}` by a marker, home and end to either end. It opens
with the name of the algorithm that runs, so the screen always says what it shows.

What it draws is its `span`: the timeline's history as far as it went (its markers and
instants so far) and the instant shown; a new span (a marker, an instant, another
history after a branch) redraws it if it moves a cell of the row (a new instant
mostly moves none)."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

# A marker's glyph and colour; where several share a cell, the first kind here wins.
MARKS = {
    "violation": ("⚠", "$error"),
    "crash": ("✖", "$error"),
    "recover": ("●", "$success"),
    "command": ("▪", "$secondary"),
    "election": ("◆", "$warning"),
}


class TimelineRow(Widget):
    DEFAULT_CSS = """
    TimelineRow { height: 1; padding: 0 1; }
    """
    # (the history, how many markers it has, how many instants, the instant shown); None: no instant yet
    span: reactive[tuple[object, int, int, int] | None] = reactive(None, repaint=False)

    def __init__(self, title: str):
        super().__init__()
        self.title = title  # the algorithm's name, for people
        self._drawn: tuple | None = None  # the cells last drawn, and their width

    def watch_span(self) -> None:
        if self._cells() != self._drawn:
            self.refresh()

    def show(self, history, position: int | None) -> None:
        """The timeline's history (its instants' times, its markers, which only grow) and
        the instant shown (None: the latest)."""
        last = history.instants - 1
        self.span = None if last < 0 else (history, len(history.markers), last, last if position is None else position)

    def _title(self) -> Content:
        return Content.styled(f"{self.title} ", "b $primary")

    def _cells(self) -> tuple | None:
        """The row's cells at its width: the markers' (column, kind) and the column shown
        (None: no instant yet)."""
        width = max(1, self.content_size.width - self._title().cell_length)
        if self.span is None:
            return None
        history, count, last, shown = self.span
        times = history.times
        span = times[last] or 1.0
        rank = {kind: i for i, kind in enumerate(MARKS)}
        placed: dict[int, str] = {}
        for marker in history.markers[:count]:
            column = min(width - 1, int(marker.t / span * (width - 1)))
            if column not in placed or rank[marker.kind] < rank[placed[column]]:
                placed[column] = marker.kind
        return width, tuple(sorted(placed.items())), min(width - 1, int(times[shown] / span * (width - 1)))

    def render(self) -> Content:
        title, self._drawn = self._title(), self._cells()
        if self._drawn is None:
            return title
        width, placed, shown = self._drawn
        cells: list[tuple[str, str]] = [("─", "$panel")] * width
        for column, kind in placed:
            cells[column] = MARKS[kind]
        glyph, _ = cells[shown]
        cells[shown] = (glyph if glyph != "─" else "┃", "reverse b $accent")
        return Content.assemble(title, *cells)
