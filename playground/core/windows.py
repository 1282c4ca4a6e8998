"""Windows: the node work the engine hands out at once (engine rule 4), and one crowded
instant's work cut in slices of a bounded size, in merged order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .work import Entry

SLICE_EVENTS = 65_536  # the most events one slice of a crowded instant may give (engine rule 4)


@dataclass(frozen=True, slots=True)
class Window:
    """Node work to run: each node's entries, all before `end` (microseconds)."""

    time: int
    end: int
    work: dict[int, list[Entry]]


def slices(time: int, work: Iterable[tuple[int, Iterable[Entry]]], size: int) -> Iterator[Window]:
    """One instant's work, node by node, as windows of `size` entries in merged order
    (by node, and a node's own entries in order, a long list cut where it must be).
    Drawn lazily: only the slice being run is in memory."""
    current: dict[int, list[Entry]] = {}
    taken = 0
    for node, entries in work:
        for entry in entries:
            queue = current.get(node)
            if queue is None:
                queue = current[node] = []
            queue.append(entry)
            taken += 1
            if taken == size:
                yield Window(time, time + 1, current)
                current, taken = {}, 0
    if current:
        yield Window(time, time + 1, current)
