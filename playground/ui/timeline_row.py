"""The timeline's row: one line, the session from its start to its latest instant, with its
markers (crashes, recoveries, commands, election rounds, violations) and where you are.
`,` `.` move by an instant, `{` `}` by a marker, home and end to either end. It opens
with the name of the algorithm that runs, so the screen always says what it shows."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from ..run.history import History

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

    def __init__(self, title: str):
        super().__init__()
        self.title = title  # the algorithm's name, for people
        self.history: History | None = None  # the timeline's, once there is one
        self.position: int | None = None  # the instant shown; None: now
        self._drawn: tuple | None = None

    def show(self, history: History, position: int | None) -> None:
        key = (id(history), history.instants, len(history.markers), position, self.size.width)
        if key != self._drawn:
            self._drawn, self.history, self.position = key, history, position
            self.refresh()

    def render(self) -> Content:
        title = Content.styled(f"{self.title} ", "b $primary")
        h, width = self.history, max(1, self.content_size.width - title.cell_length)
        if h is None or not h.instants:
            return title
        span = h.times[-1] or 1.0
        cells: list[tuple[str, str]] = [("─", "$panel")] * width
        rank = {kind: i for i, kind in enumerate(MARKS)}
        placed: dict[int, str] = {}
        for marker in h.markers:
            column = min(width - 1, int(marker.t / span * (width - 1)))
            if column not in placed or rank[marker.kind] < rank[placed[column]]:
                placed[column] = marker.kind
                cells[column] = MARKS[marker.kind]
        at = h.instants - 1 if self.position is None else self.position
        column = min(width - 1, int(h.times[at] / span * (width - 1)))
        glyph, _ = cells[column]
        cells[column] = (glyph if glyph != "─" else "┃", "reverse b $accent")
        return Content.assemble(title, *cells)
