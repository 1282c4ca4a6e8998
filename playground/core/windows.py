"""Windows: the node work the engine hands out at once (engine rule 4): the work of the
instants before a window's end, taken until a budget of entries is spent (`gather`), or
one crowded instant's work cut in slices of a bounded size, in merged order (`slices`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .work import DELIVERY, TIMER, Entry

if TYPE_CHECKING:
    from .agenda import Agenda
    from .links import Links

SLICE_EVENTS = 65_536  # the most events one slice of a crowded instant may give (engine rule 4)
# The entries after which a window of several instants ends (engine rule 4), whatever its
# span: a storm's windows (a few events an entry) stay about as small as a slice, so each
# is run, published and freed in a fraction of a second, and trio, which stops a run only
# between two windows, takes a signal soon. (With the whole minimum delay as its span, a
# window of the classic Bully's storm at N = 300 held millions of events. Fewer entries
# would mean more hand-offs to the nodes' tasks for the same work.)
WINDOW_ENTRIES = 4_096


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


def gather(links: Links, agenda: Agenda, start: int, end: int, budget: int) -> Window:
    """The node work due from `start` until `end`, each node's entries in order (at each
    instant, deliveries before timers), taken an instant at a time. Once `budget` entries
    are taken, the window ends where the next instant begins: a window may end at any
    instant (engine rule 4), and the first one is always taken whole."""
    work: dict[int, list[Entry]] = {}
    taken = 0
    while True:
        arrival, due = links.next_arrival(), agenda.next_time()
        t = due if arrival is None or (due is not None and due < arrival) else arrival
        if t is None or t >= end:
            break
        if taken >= budget:
            end = t
            break
        for rank, take in ((DELIVERY, links.take), (TIMER, agenda.take)):  # (deliveries first: work.py's rank)
            for _, node, item in take(t + 1):
                entries = work.get(node)
                if entries is None:
                    entries = work[node] = []
                entries.append((t, rank, 0, item))
                taken += 1
    return Window(start, end, work)
