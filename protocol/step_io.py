"""What a machine's step takes in and gives out, and what it starts with: the inputs
(Start, Receive, TimerFired, Suspect, Joining, Leaving), the outputs (Send, SetTimer,
CancelTimer, ElectionStarted, each carrying the key of the rule that made it), the
protocol's knobs (Config) and what survives a crash (SafeStorage). The machine that
takes and gives them, and the design they serve, are interface.py's (its header); an
algorithm imports them from there, with the rest of the contract."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (an annotation only: interface.py imports this module)
    from .interface import Message

# --- inputs -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    """The node starts or recovers with only its safe storage."""


@dataclass(frozen=True, slots=True)
class Receive:
    src: int
    msg: Message


@dataclass(frozen=True, slots=True)
class TimerFired:
    name: str


@dataclass(frozen=True, slots=True)
class Suspect:
    """The failure detector says the coordinator is gone (the `elect` command)."""


@dataclass(frozen=True, slots=True)
class Joining:
    """The node starts for the first time as a new member: it tells the members, then
    starts as a recovering node does."""


@dataclass(frozen=True, slots=True)
class Leaving:
    """The node leaves gracefully: it tells the members; the caller then stops it for good."""


Input = Start | Receive | TimerFired | Suspect | Joining | Leaving


# --- outputs ----------------------------------------------------------------------


# Each output carries the key of the rule that made it (`rule`, see "Rules, as data"): why
# the node did it, not what it does, so it takes no part in comparing outputs.
def _rule() -> object:
    return field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Send:
    dst: int
    msg: Message
    rule: str | None = _rule()


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Fire `name` after `delay` seconds; or, with `longest`, after a delay the runtime
    draws uniformly from [delay, longest] (Raft's randomized election timeout: the
    machine stays pure, and the run's seed decides, as it decides the links' delays)."""

    name: str
    delay: float
    longest: float | None = None
    rule: str | None = _rule()


@dataclass(frozen=True, slots=True)
class CancelTimer:
    name: str
    rule: str | None = _rule()


@dataclass(frozen=True, slots=True)
class ElectionStarted:
    """This node has just begun an election run (for counting; it changes nothing)."""

    rule: str | None = _rule()


Output = Send | SetTimer | CancelTimer | ElectionStarted


# --- configuration and storage ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """The protocol's knobs, in seconds.

    timeout             T: how long a request may go unanswered before the peer is
                        presumed down. The synchrony assumption is T >= 2 * max delay.
    coordinator_timeout T': how long to wait for the Coordinator after an Answer;
                        None means 2T (see PROTOCOLS.md: T' = T races the Coordinator).
    probe_interval      P: how often a follower probes its coordinator; 0 turns it off.
    ring                the ring algorithms' order of the ids round the ring (ring_order.py);
                        None: ascending, each node's successor the next higher id.
    """

    timeout: float = 4.0
    coordinator_timeout: float | None = None
    probe_interval: float = 5.0
    ring: tuple[int, ...] | None = None

    @property
    def coordinator_wait(self) -> float:
        if self.coordinator_timeout is not None:
            return self.coordinator_timeout
        return 2 * self.timeout


@dataclass(slots=True)
class SafeStorage:
    """What survives a crash. Everything a node keeps outside this object is volatile.

    `incarnation` counts starts, `epoch` is the latest cluster epoch this node knows,
    `members` the cluster's members as this node knows them (itself included). An
    algorithm that needs more cells subclasses it and names the subclass in its
    `storage_class`.
    """

    incarnation: int = 0
    epoch: int = 0
    members: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
