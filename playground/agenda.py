"""The agenda: timer firings due at future instants.

Kept per instant, in the order queued (the trace's order). Messages in flight are the
links' (links.py); the engine merges both into each node's work, deliveries first.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from .work import Fire


class Agenda:
    def __init__(self):
        self._instants: dict[int, list[tuple[int, Fire]]] = {}  # time -> [(node, firing)]
        self._times: list[int] = []  # heap of the keys of _instants

    def fire(self, time: int, node: int, item: Fire) -> None:
        instant = self._instants.get(time)
        if instant is None:
            instant = self._instants[time] = []
            heapq.heappush(self._times, time)
        instant.append((node, item))

    def next_time(self) -> int | None:
        return self._times[0] if self._times else None

    def take(self, end: int) -> Iterator[tuple[int, int, Fire]]:
        """Remove and yield (time, node, firing) for everything due before `end`, in order."""
        while self._times and self._times[0] < end:
            time = heapq.heappop(self._times)
            for node, item in self._instants.pop(time):
                yield time, node, item
