"""The agenda: timer firings due at future instants.

Kept per instant, in the order queued (the trace's order). Messages in flight are the
links' (links.py); the engine merges both into each node's work, deliveries first.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from .work import Fire


class Agenda:
    """Timer firings due, by instant. A firing is kept as a tuple of plain values (node,
    name, generation), not as its Fire: the garbage collector stops tracking such tuples,
    and a classic storm at N = 64 keeps 250,000 firings queued (most of them for timers
    set again since), which every full collection otherwise walked (300 ms, a stall the
    app shows). The Fire is made when the firing is due.

    A firing superseded at its own instant (the node set the timer again, to fire then
    too: at N = 1000 each node sets its probe timer 999 times at t = 2, once for each
    Coordinator, a million firings at t = 7) can never fire (host rule 3), so its tuple
    goes: its place keeps only the node's id (`_last` says where each timer's latest
    firing is). The instant stays due, the live firings keep their order, and a crowded
    instant's slices count it (engine rule 4: where they are cut does not depend on
    which firings are live)."""

    def __init__(self):
        self._instants: dict[int, list[tuple[int, str, int] | int]] = {}  # time -> [(node, name, generation) or node]
        self._times: list[int] = []  # heap of the keys of _instants
        self._last: dict[tuple[int, str], tuple[int, int]] = {}  # (node, name) -> (time, place) of its latest firing

    def __deepcopy__(self, memo: dict) -> Agenda:
        """A copy for an engine's copy: the lists copied, the entries in them shared (they
        are immutable). A generic deep copy walks every entry, one by one."""
        twin = Agenda.__new__(Agenda)
        twin._instants = {time: list(entries) for time, entries in self._instants.items()}
        twin._times = list(self._times)
        twin._last = dict(self._last)
        return twin

    def fire(self, time: int, node: int, item: Fire) -> None:
        instant = self._instants.get(time)
        if instant is None:
            instant = self._instants[time] = []
            heapq.heappush(self._times, time)
        timer = (node, item.name)
        last = self._last.get(timer)
        if last is not None and last[0] == time and last[1] < len(instant):  # (a place taken or retimed is not it)
            before = instant[last[1]]
            if type(before) is tuple and before[:2] == timer and before[2] < item.generation:
                instant[last[1]] = node  # superseded at its own instant
        self._last[timer] = (time, len(instant))
        instant.append((node, item.name, item.generation))

    def retime(self, now: int) -> None:
        """What is due before `now` is due at `now` instead, in the order it was due, ahead
        of what is due then already (the clock runs again after standing still by hand)."""
        overdue = sorted(t for t in self._instants if t < now)
        if overdue:
            merged = [entry for t in [*overdue, now] for entry in self._instants.pop(t, [])]
            self._times = [t for t in self._times if t > now] + [now]
            heapq.heapify(self._times)
            self._instants[now] = merged
            self._last.clear()  # (the places moved)

    def next_time(self) -> int | None:
        return self._times[0] if self._times else None

    def take(self, end: int, superseded: bool = False) -> Iterator[tuple[int, int, Fire]]:
        """Remove and yield (time, node, firing) for everything due before `end`, in order;
        with `superseded`, a superseded firing too, as SUPERSEDED (a crowded instant's
        slices count it)."""
        while self._times and self._times[0] < end:
            time = heapq.heappop(self._times)
            for firing in self._instants.pop(time):
                if type(firing) is tuple:
                    node, name, generation = firing
                    yield time, node, Fire(name, generation)
                elif superseded:
                    yield time, firing, SUPERSEDED


SUPERSEDED = Fire("", 0)  # a firing no host runs: no timer has that name (generations count from 1)
