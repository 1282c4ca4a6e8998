"""The node grid for many nodes: one line per node, wrapped into rows, in one widget.

One widget and not a card widget per node, because a frame's cost is per widget line:
at 32 nodes that is 3 lines instead of 32, and a key press shows on screen sooner.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from .model import ClusterModel
from .node_card import COMPACT_WIDTH, card_content, card_key


class CompactGrid(Widget):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self._cells: dict[int, tuple[tuple, Content]] = {}
        self._layout: tuple | None = None
        self._content = Content("")

    @property
    def columns(self) -> int:
        return max(1, (self.size.width - 2) // COMPACT_WIDTH)

    def show(self, now: float, selected: int) -> None:
        changed = False
        for node_id, node in self.model.nodes.items():
            key = card_key(node, now, compact=True)
            cached = self._cells.get(node_id)
            if cached is None or cached[0] != key:
                self._cells[node_id] = (key, card_content(node, key, compact=True))
                changed = True
        layout = (selected, self.columns)
        if changed or layout != self._layout:
            rows_before = self._content.plain.count("\n")
            self._layout = layout
            self._content = self._draw(selected)
            self.refresh(layout=self._content.plain.count("\n") != rows_before)

    def _draw(self, selected: int) -> Content:
        cells = []
        for node_id, (_, cell) in self._cells.items():
            cell = cell.pad_right(COMPACT_WIDTH - cell.cell_length)
            cells.append(cell.stylize("on $accent 40%") if node_id == selected else cell)
        columns = self.columns
        rows = [Content("").join(cells[i:i + columns]) for i in range(0, len(cells), columns)]
        return Content("\n").join(rows)

    def render(self) -> Content:
        return self._content

    def node_text(self, node: int) -> str:
        return self._cells[node][1].plain if node in self._cells else ""
