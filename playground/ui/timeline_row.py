"""The timeline's row: one line, the session from its start to its latest instant, with its
markers (crashes, recoveries, commands, election rounds, violations) and where you are.
`,` `.` move by an instant, `{` `}` by a marker, home and end to either end. It opens
with the name of the algorithm that runs, so the screen always says what it shows.

What it draws is its `span`: the markers' times and kinds, the latest instant's time,
and the time shown; a new span (new markers, another instant) redraws it."""

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
    # ((time, kind) of each marker, the latest instant's time, the time shown); None: no instant yet
    span: reactive[tuple[tuple[tuple[float, str], ...], float, float] | None] = reactive(None)

    def __init__(self, title: str):
        super().__init__()
        self.title = title  # the algorithm's name, for people
        self._markers: tuple[tuple, tuple[tuple[float, str], ...]] = ((), ())  # ((history, how many), markers)

    def show(self, history, position: int | None) -> None:
        """The timeline's history (its instants' times, its markers) and the instant shown (None: the latest)."""
        if not history.instants:
            self.span = None
            return
        markers, key = history.markers, (id(history), len(history.markers))  # (they only grow; a branch has its own)
        if key != self._markers[0]:
            self._markers = (key, tuple((m.t, m.kind) for m in markers))
        at = history.instants - 1 if position is None else position
        self.span = (self._markers[1], history.times[-1], history.times[at])

    def render(self) -> Content:
        title = Content.styled(f"{self.title} ", "b $primary")
        width = max(1, self.content_size.width - title.cell_length)
        if self.span is None:
            return title
        markers, latest, shown = self.span
        span = latest or 1.0
        cells: list[tuple[str, str]] = [("─", "$panel")] * width
        rank = {kind: i for i, kind in enumerate(MARKS)}
        placed: dict[int, str] = {}
        for t, kind in markers:
            column = min(width - 1, int(t / span * (width - 1)))
            if column not in placed or rank[kind] < rank[placed[column]]:
                placed[column] = kind
                cells[column] = MARKS[kind]
        column = min(width - 1, int(shown / span * (width - 1)))
        glyph, _ = cells[column]
        cells[column] = (glyph if glyph != "─" else "┃", "reverse b $accent")
        return Content.assemble(title, *cells)
