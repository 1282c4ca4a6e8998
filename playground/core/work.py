"""Work for one node: what its host (host.py, a real node's runner) runs, at a time: its
start-up (Boot), the commands aimed at it (core/commands.py's Crash, Recover, Elect,
Join, Leave, WantCs: the command itself is the work), a message that arrives (Deliver),
waits at a held link (Held) or never arrives (Lost: the link lost it, or the user dropped
it by hand), and a timer that fires (Fire).

The engine hands a node its work as (time, rank, order, item) entries, sorted. Rank
orders the kinds due at one instant: commands first (in the order given), then
deliveries, then timers, since "answered within T" includes T: a message that arrives
exactly when a timeout expires is in time.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import Message

from .commands import Crash, Elect, Join, Leave, Recover, WantCs

COMMAND, DELIVERY, TIMER = 0, 1, 2  # ranks


@dataclass(frozen=True, slots=True)
class Boot:
    """Start-up at t=0 (to the protocol, the same as a recovery)."""


@dataclass(frozen=True, slots=True)
class Deliver:
    """Message `msg_id` from `src` arrives (links.py hands them over in FIFO order)."""

    src: int
    msg_id: int
    msg: Message
    lamport: int = 0  # the sender's Lamport clock as it sent it (a real node's frame says; the simulation's is 0)


@dataclass(frozen=True, slots=True)
class Held:
    """Message `msg_id` from `src` reached the end of a held link: it waits (links.py)."""

    src: int
    msg_id: int


@dataclass(frozen=True, slots=True)
class Lost:
    """Message `msg_id` from `src` never arrives: the link lost it (`reason` says how). It
    is noted when it would have arrived, where a drawing ends its arrow."""

    src: int
    msg_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Fire:
    """The timer `name` fires, if it is still the one set as `generation`."""

    name: str
    generation: int


Work = Boot | Crash | Recover | Elect | Join | Leave | WantCs | Deliver | Held | Lost | Fire


def _same(item: Work, memo: dict) -> Work:
    return item


for _immutable in (Boot, Crash, Recover, Elect, Join, Leave, WantCs, Deliver, Held, Lost, Fire):
    _immutable.__deepcopy__ = _same  # an engine's copy shares them (a generic copy of each: a visible stall)
Entry = tuple[int, int, int, Work]  # (time, rank, order, item): how a host is handed its work
