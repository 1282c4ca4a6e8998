"""The node grid for a few nodes: one bordered card per node, in id order, wrapping."""

from __future__ import annotations

import math

from textual.containers import Container
from textual.events import Resize

from .model import ClusterModel
from .node_card import FULL_WIDTH, NodeCard

WIDEST = 34  # a card's width at most: room for a long status and timer name, and a bar of 8


class NodeGrid(Container):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.cards = {i: NodeCard(node, model.label, model.state.epoch_text) for i, node in model.nodes.items()}

    def compose(self):
        yield from self.cards.values()

    @property
    def columns(self) -> int:
        """As few as make no more rows than need be: rows of even length, and spare room
        widens the cards (9 cards where 8 fit: 5 and 4, not 8 and 1)."""
        cards = max(1, len(self.cards))
        rows = math.ceil(cards / max(1, (self.size.width - 2) // FULL_WIDTH))
        return math.ceil(cards / rows)

    def on_resize(self, event: Resize) -> None:
        self._lay_out()

    def _lay_out(self) -> None:
        """Columns of one width (so every card has the same room, and the same names), at
        most WIDEST: a few cards on a wide screen are not stretched across it."""
        columns = self.columns
        width = min(WIDEST, max(FULL_WIDTH, (self.size.width - 2) // columns))
        self.styles.grid_size_columns = columns
        self.styles.grid_columns = str(width)
        for card in self.cards.values():
            card.inner = width - 3

    def show(self, now: float, selected: int) -> None:
        if len(self.cards) < len(self.model.nodes):  # a node joined: its card goes in id order
            for i in self.model.ids:
                if i not in self.cards:
                    self.cards[i] = NodeCard(self.model.nodes[i], self.model.label, self.model.state.epoch_text)
                    later = [self.cards[k] for k in self.model.ids if k > i and k in self.cards]
                    self.mount(self.cards[i], before=later[0] if later else None)
            self._lay_out()
        for node_id, card in self.cards.items():
            card.show(now, node_id == selected)

    def node_text(self, node: int) -> str:
        return self.cards[node].render().plain
