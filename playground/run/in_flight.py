"""A headless run's messages in flight: counted for its progress line, and bounded
(--max-in-flight), so that a run that never settles (the classic Bully's storm with a
delay range, or with --reorder: docs/guide/bad-input.md) stops with its transcript and
summary whole, instead of growing until the machine swaps.

The count costs nothing per message: the links keep theirs (`len(links)`), and what
waits at a held link's end is counted only while a link is held. The bound is looked at
once per batch the engine publishes (a window of at most WINDOW_ENTRIES work items, or
a slice of a crowded instant), so a run stops at the end of the first batch that takes
it past the bound: past it by at most that batch's sends."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (light to import: the command line takes its bounds from here before anything runs)
    from ..core.engine import Engine
    from ..core.events import Event
    from ..core.links import Links

# Above what a run that settles has in flight at once (the classic Bully's start-up at
# N = 1000 with one delay for all, the most: 1.5 million, 2.2 million with --duplicate
# 0.2), and what a storm reaches in one or two minutes of CPU, with 0.55 to 1.9 GB
# resident by how its messages spread over instants (docs/benchmarks.md).
MAX_IN_FLIGHT = 3_000_000
MOST_ALLOWED = 10**12  # the largest bound --max-in-flight takes (0: none)


def in_flight(links: Links) -> int:
    """Messages in flight: on their links, and waiting at the end of a held one."""
    count = len(links)
    if links.held:
        count += sum(links.waiting_at().values())
    return count


def stopped_line(stopped: dict, transcript: str | None) -> str:
    """The one line on stderr for a run its bound stopped (`stopped`: the summary's entry)."""
    kept = f"; the transcript so far is in {transcript}" if transcript else ""
    return (f"bully-tui: stopped at t={stopped['t']:g} s: {stopped['in_flight']:,} messages in flight, over the bound "
            f"of {stopped['max_in_flight']:,} (this run may never settle; a larger --max-in-flight raises it, 0 removes "
            f"it){kept}")


class InFlightBound:
    """A trace observer that stops the run once more than `most` messages are in flight
    after a batch: it cancels `scope`, which the run is to be inside, and the run stops
    as a signal stops it, at its next step, every batch published so far in the summary
    and the transcript."""

    def __init__(self, engine: Engine, most: int):
        import trio

        self.engine = engine
        self.most = most
        self.scope = trio.CancelScope()
        self.reached: dict[str, object] | None = None  # the summary's "stopped": when, and how many

    def __call__(self, events: list[Event]) -> None:
        if self.reached is None and (count := in_flight(self.engine.links)) > self.most:
            self.reached = {"t": self.engine.now, "reason": "max-in-flight", "in_flight": count, "max_in_flight": self.most}
            self.scope.cancel()
