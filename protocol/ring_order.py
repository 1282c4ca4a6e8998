"""The order of the nodes round a ring (Config.ring), for the algorithms whose nodes talk
round one: Chang & Roberts (ring.py) and Hirschberg & Sinclair (hs.py).

An order is None, the ids ascending (each node's successor is the next higher id, the
highest wraps round to the lowest), or a tuple of ids in their order round the ring
(the last one's successor is the first). It costs these algorithms very different
amounts: ascending is Chang & Roberts' cheapest case when every node starts at once
(2N-1 Election messages) and Hirschberg & Sinclair's too; descending is Chang &
Roberts' worst (N(N+1)/2).

Every id has a place, so that a node's neighbours are defined whoever has left or
joined: a listed id, its index; an id the tuple does not list (a node that joined after
the order was made) goes after the last listed node, before the first; several such
go in ascending order of id (with ids 1..N, the order they joined in). A node's
neighbours are the members next to a place each way, and a node that has left still has
its place, so a message meant for it can go on to the member after it.
"""

from __future__ import annotations

import bisect
from functools import lru_cache
from typing import ClassVar

AFTER, BEFORE = 1, -1  # the ways round: to the successor, to the predecessor


class RingLayout:
    """The members round the ring in one order: `ring` (in that order) and `keys` (each
    member's place, ascending, for bisect). Immutable and shared: every node with the
    same members and order uses one (ring_layout)."""

    __slots__ = ("_index", "keys", "members", "order", "ring")

    def __init__(self, members: tuple[int, ...], order: tuple[int, ...] | None):
        self.members, self.order = members, order
        if order is None:  # ids ascending: the members as they are (they are kept sorted)
            self._index = None
            self.ring = self.keys = members
        else:
            self._index = {node: i for i, node in enumerate(order)}
            self.ring = tuple(sorted(members, key=self.key))
            self.keys = [self.key(node) for node in self.ring]

    def key(self, node: int) -> object:
        """Where `node` is round the ring (see the module's docstring)."""
        if self._index is None:
            return node
        i = self._index.get(node)
        return (len(self._index), node) if i is None else (i, 0)

    def next(self, node: int, way: int = AFTER) -> int:
        """The member next to `node`'s place going `way` (`node` itself if it is the only
        member; `node` need not be a member)."""
        if way == AFTER:
            return self.ring[bisect.bisect_right(self.keys, self.key(node)) % len(self.ring)]
        return self.ring[bisect.bisect_left(self.keys, self.key(node)) - 1]

    def __deepcopy__(self, memo: dict) -> RingLayout:
        return self  # immutable: a copy of a run shares it


@lru_cache(maxsize=64)
def ring_layout(members: tuple[int, ...], order: tuple[int, ...] | None) -> RingLayout:
    """One layout for all the nodes that know the same members (at N = 1,000 a layout of
    each node's own would be a million places)."""
    return RingLayout(members, order)


class OnARing:
    """Mixin for a Node whose nodes talk round a ring in Config.ring's order. It declares
    what its theory counts: `counted`, the messages the formulas count (acks and Backs are
    transport), and `all_start_messages`."""

    on_a_ring = True
    counted: ClassVar[tuple[type, ...]] = ()

    @classmethod
    def all_start_messages(cls, n: int) -> tuple[int | None, int | None]:
        """The fewest and the most `counted` messages of a failure-free election that every
        node starts at once, over every order round the ring (None where no formula says)."""
        return None, None
    _layout: RingLayout | None = None
    _laid_out: tuple[object, object] = (None, None)  # the members and order _layout was looked up for

    def ring_next(self, node: int, way: int = AFTER) -> int:
        """The member next to `node` round the ring going `way`, as this node knows the
        members now (this node itself if it is alone)."""
        ids, order = self.ids, self.config.ring  # type: ignore[attr-defined]
        if self._laid_out[0] is not ids or self._laid_out[1] is not order:  # (they change only with the members)
            self._layout, self._laid_out = ring_layout(ids, order), (ids, order)
        return self._layout.next(node, way)  # type: ignore[union-attr]
