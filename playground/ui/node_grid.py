"""The node grid for a few nodes: one bordered card per node, in id order, wrapping."""

from __future__ import annotations

from textual.containers import Container
from textual.events import Resize

from .model import ClusterModel
from .node_card import FULL_WIDTH, NodeCard


class NodeGrid(Container):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.cards = {i: NodeCard(node, model.label) for i, node in model.nodes.items()}

    def compose(self):
        yield from self.cards.values()

    @property
    def columns(self) -> int:
        return max(1, (self.size.width - 2) // FULL_WIDTH)

    def on_resize(self, event: Resize) -> None:
        self.styles.grid_size_columns = self.columns

    def show(self, now: float, selected: int) -> None:
        if len(self.cards) < len(self.model.nodes):  # a node joined: its card goes in id order
            for i in self.model.ids:
                if i not in self.cards:
                    self.cards[i] = NodeCard(self.model.nodes[i], self.model.label)
                    later = [self.cards[k] for k in self.model.ids if k > i and k in self.cards]
                    self.mount(self.cards[i], before=later[0] if later else None)
        for node_id, card in self.cards.items():
            card.show(now, node_id == selected)

    def node_text(self, node: int) -> str:
        return self.cards[node].render().plain
