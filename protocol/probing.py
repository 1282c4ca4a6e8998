"""Failure detection by probing the leader, shared by the classic Bully and the ring.

Every P seconds a follower in a normal status asks its leader "are you there?" (Probe)
and waits T for the reply. No reply means the leader is gone, and the algorithm's
`on_leader_lost` runs. P = 0 turns probing off, so elections start only when a node
starts, recovers or is told to (the `elect` command).

The reply also says whether the probed node still leads. The classic Bully, as the
textbook has it, asks only "are you alive?" and ignores that; the ring takes a reply
that says "I do not lead" as a lost leader (`leader_confirmed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole, Node

PROBE = "probe"
PROBE_WAIT = "probe_wait"


@dataclass(frozen=True, slots=True)
class Probe(Message):
    """Failure-detector request: are you still there?"""

    type: ClassVar[str] = "probe"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class ProbeReply(Message):
    """Yes, I am; and whether I lead (`leads`)."""

    type: ClassVar[str] = "probe_reply"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    leads: bool


class ProbingNode(Node):
    """A Node whose followers probe their leader. Subclasses call `handle_probe` and
    `probe_timer` first in their handlers, `schedule_probe` when they start following,
    and implement `on_leader_lost`."""

    def on_leader_lost(self) -> None:
        raise NotImplementedError

    def leader_confirmed(self, reply: ProbeReply) -> bool:
        """Whether a reply from the leader means all is well: by default, that it came."""
        return True

    def schedule_probe(self) -> None:
        self.cancel_timer(PROBE_WAIT)
        if self.config.probe_interval > 0:
            self.set_timer(PROBE, self.config.probe_interval)

    def stop_probing(self) -> None:
        self.cancel_timer(PROBE, PROBE_WAIT)

    def handle_probe(self, src: int, msg: Message) -> bool:
        """Answer a Probe, or take a ProbeReply; True if `msg` was one of them."""
        if type(msg) is Probe:
            self.send(src, ProbeReply, self.leader == self.id)
            return True
        if type(msg) is ProbeReply:
            if src == self.leader and PROBE_WAIT in self.timers:
                if self.leader_confirmed(msg):
                    self.schedule_probe()
                else:  # alive, but no longer leading: as good as gone
                    self.cancel_timer(PROBE_WAIT)
                    self.leader = None
                    self.on_leader_lost()
            return True  # otherwise a reply from a former leader: stale
        return False

    def probe_timer(self, name: str) -> bool:
        """Run a probe timer; True if `name` was one of them."""
        if name == PROBE:
            if self.normal and self.leader != self.id:
                self.send(self.leader, Probe)
                self.set_timer(PROBE_WAIT, self.config.timeout)
            return True
        if name == PROBE_WAIT:
            if self.normal:  # the detector fires
                self.leader = None
                self.on_leader_lost()
            return True
        return False
