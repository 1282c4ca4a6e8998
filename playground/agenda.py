"""The agenda: node work due at future instants (message arrivals and timer firings).

Work is kept per instant, in the order it was queued, deliveries apart from timers: a
node's work at one instant runs deliveries first (work.py's ranks), each kind in the
order the engine queued it, which is the trace's order. Instants are whole
microseconds, and many messages share one (every constant-delay broadcast does), so
an instant holds a list, and only the distinct instants go through a heap.
"""

from __future__ import annotations

import heapq

from .work import DELIVERY, TIMER, Fire, Work, deliver_from

Entry = tuple[int, int, int, Work]  # (time, rank, order, item): what a host runs


class Agenda:
    def __init__(self):
        self._instants: dict[int, tuple[list, list]] = {}  # time -> (deliveries, timers), each [(node, item)]
        self._times: list[int] = []  # heap of the keys of _instants

    def deliver(self, time: int, node: int, src: int) -> None:
        """At `time`, `node` takes the head of the link from `src`."""
        self._at(time)[0].append((node, deliver_from(src)))

    def fire(self, time: int, node: int, item: Fire) -> None:
        self._at(time)[1].append((node, item))

    def _at(self, time: int) -> tuple[list, list]:
        instant = self._instants.get(time)
        if instant is None:
            instant = self._instants[time] = ([], [])
            heapq.heappush(self._times, time)
        return instant

    def next_time(self) -> int | None:
        return self._times[0] if self._times else None

    def take(self, end: int) -> dict[int, list[Entry]]:
        """Remove everything due before `end`: each node's entries, in the order it runs them."""
        work: dict[int, list[Entry]] = {}
        times, instants = self._times, self._instants
        while times and times[0] < end:
            time = heapq.heappop(times)
            deliveries, timers = instants.pop(time)
            for rank, queued in ((DELIVERY, deliveries), (TIMER, timers)):
                for node, item in queued:
                    entries = work.get(node)
                    if entries is None:
                        entries = work[node] = []
                    entries.append((time, rank, 0, item))
        return work

    def __bool__(self) -> bool:
        return bool(self._times)
