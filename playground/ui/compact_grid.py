"""The node grid for many nodes: one line per node, wrapped into rows, in one widget.

One widget and not a card widget per node, because a frame's cost is per widget line:
at 32 nodes that is 3 lines instead of 32, and a key press shows on screen sooner.
When the rows do not fit in their share of the screen, it shows a window of rows that
keeps the selected node in view, and says how many rows are above and below.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from .model import ClusterModel
from .node_card import card_content, card_key, compact_width

SCREEN_SHARE = 0.6  # of the screen's height, at most


class CompactGrid(Widget):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.digits = max(map(len, model.label.values()))
        self.cell_width = compact_width(self.digits)
        self._cells: dict[int, tuple[tuple, Content]] = {}
        self._layout: tuple | None = None
        self._first_row = 0
        self._content = Content("")

    @property
    def columns(self) -> int:
        return max(1, (self.size.width - 2) // self.cell_width)

    def show(self, now: float, selected: int) -> None:
        changed = False
        digits = max(map(len, self.model.label.values()))
        if digits != self.digits:  # a node joined whose label is longer: every cell again
            self.digits, self.cell_width, self._cells = digits, compact_width(digits), {}
        for node_id, node in self.model.nodes.items():
            key = card_key(node, now, compact=True)
            cached = self._cells.get(node_id)
            if cached is None or cached[0] != key:
                self._cells[node_id] = (key, card_content(node, key, True, self.model.label, self.digits))
                changed = True
        layout = (selected, self.columns, self.app.size.height)
        if changed or layout != self._layout:
            rows_before = self._content.plain.count("\n")
            self._layout = layout
            self._content = self._draw(selected)
            self.refresh(layout=self._content.plain.count("\n") != rows_before)

    def _draw(self, selected: int) -> Content:
        cells = []
        for node_id in self.model.ids:
            cell = self._cells[node_id][1]
            cell = cell.pad_right(self.cell_width - cell.cell_length)
            cells.append(cell.stylize("on $accent 40%") if node_id == selected else cell)
        columns = self.columns
        rows = [Content("").join(cells[i:i + columns]) for i in range(0, len(cells), columns)]
        fit = max(2, int(self.app.size.height * SCREEN_SHARE))
        if len(rows) <= fit:
            self._first_row = 0
            return Content("\n").join(rows)
        fit -= 1  # a line to say what is out of view
        row = list(self._cells).index(selected) // columns
        if not self._first_row <= row < self._first_row + fit:
            self._first_row = max(0, min(len(rows) - fit, row - fit // 2))
        first, last = self._first_row, self._first_row + fit
        note = Content.styled(f"  rows {first + 1}–{last} of {len(rows)}: {first} above, "
                              f"{len(rows) - last} below (arrows move)", "$text-muted")
        return Content("\n").join([*rows[first:last], note])

    def render(self) -> Content:
        return self._content

    def node_text(self, node: int) -> str:
        return self._cells[node][1].plain if node in self._cells else ""
