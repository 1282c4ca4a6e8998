"""The node grid: one card per node in id order, wrapping to the width it is given."""

from __future__ import annotations

from textual.containers import Container
from textual.events import Resize

from .model import ClusterModel
from .node_card import COMPACT_WIDTH, FULL_WIDTH, NodeCard

COMPACT_ABOVE = 9  # more nodes than this get one-line cards


class NodeGrid(Container):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.compact = len(model.ids) > COMPACT_ABOVE
        self.cards = {i: NodeCard(node, self.compact) for i, node in model.nodes.items()}

    def compose(self):
        yield from self.cards.values()

    @property
    def columns(self) -> int:
        width = COMPACT_WIDTH if self.compact else FULL_WIDTH
        return max(1, (self.size.width - 2) // width)

    def on_resize(self, event: Resize) -> None:
        self.styles.grid_size_columns = self.columns

    def show(self, now: float, selected: int) -> None:
        for node_id, card in self.cards.items():
            card.show(now, node_id == selected)
