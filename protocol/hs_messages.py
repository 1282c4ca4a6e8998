"""Hirschberg & Sinclair's messages (hs.py): the probes and replies of a candidate's
phases, the announcement, and the acks its hops (ring_hops.py) take, both ways round the
ring. Each names its way and its number (`seq`), which its ack names; the rules cited
are hs.py's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .ring_hops import Announcement


class OfAPhase(Message):
    """A probe or reply: its subclasses' fields `candidate`, `phase`, `way` and `seq`."""

    __slots__ = ()
    back: ClassVar[bool] = False  # a reply: it comes back from the side its probe went out to

    @property
    def key(self) -> int:
        return self.seq  # (its ack names it: rule 9)

    @property
    def towards(self) -> int:
        return self.candidate  # rule 9: it is never sent on past its candidate

    @property
    def sighting(self) -> tuple:
        return (self.type, self.candidate, self.phase, self.way)  # rule 11: a node takes each once a round

    @property
    def place(self) -> tuple[int, int, tuple[int, int]]:
        """Its candidate, the side of it that it went out to, and how far on that side's
        election is (rule 10: a later one taken shows an earlier one got past its holder)."""
        return self.candidate, -self.way if self.back else self.way, (self.phase, int(self.back))


@dataclass(frozen=True, slots=True)
class HsProbe(OfAPhase):
    """Candidate `candidate`'s phase `phase` probe, `hop` nodes out, going `way`."""

    type: ClassVar[str] = "hs_probe"  # (the failure detector's is "probe")
    label: ClassVar[str] = "Probe"
    candidate: int
    phase: int
    hop: int
    way: int
    seq: int


@dataclass(frozen=True, slots=True)
class HsReply(OfAPhase):
    """The probe of `candidate`'s phase `phase` went its 2^k hops; going back `way`."""

    type: ClassVar[str] = "reply"
    label: ClassVar[str] = "Reply"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    back: ClassVar[bool] = True
    candidate: int
    phase: int
    way: int
    seq: int


@dataclass(frozen=True, slots=True)
class HsElected(Announcement):
    label: ClassVar[str] = "Elected"
    way: int
    seq: int

    @property
    def key(self) -> int:
        return self.seq

    @property
    def sighting(self) -> tuple:
        return (self.type, self.leader)


@dataclass(frozen=True, slots=True)
class HsAck(Message):
    """The neighbour got the message numbered `acked` (transport; not counted)."""

    type: ClassVar[str] = "ack"
    label: ClassVar[str] = "Ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    acked: int
