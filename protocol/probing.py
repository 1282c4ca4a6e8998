"""Failure detection by probing the leader, shared by the classic Bully and the ring.

Every P seconds a follower in a normal status asks its leader "are you there?" (Probe)
and waits T for the reply. No reply means the leader is gone, and the algorithm's
`on_leader_lost` runs. P = 0 turns probing off, so elections start only when a node
starts, recovers or is told to (the `elect` command).

The reply also says whether the probed node still leads. The classic Bully, as the
textbook has it, asks only "are you alive?" and ignores that; the ring takes a reply
that says "I do not lead" as a lost leader (`leader_confirmed`).

Rules (P is this node; keyed "probing N" beside the algorithm's own, interface.py):
  1. A follower in a normal status sends Probe to its leader every P seconds ("probe")
     and waits T for the reply ("probe_wait").
  2. Probe from Q: P answers ProbeReply, saying whether it leads, whatever its status.
  3. The leader's ProbeReply in time: all is well, and the next probe is due in P
     seconds; unless the algorithm takes the reply to say the leader is gone (it no
     longer leads: the ring's), which is then as rule 4.
  4. No reply within T: the leader is gone; P forgets it, and the algorithm's
     `on_leader_lost` runs (its own rule says what it does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole, Node

PROBE = "probe"
PROBE_WAIT = "probe_wait"

PROBING = "probing"  # the key word of these rules
RULES = {
    1: "A follower sends Probe to its leader every P seconds and waits T for the reply.",
    2: "Probe: the node answers ProbeReply, saying whether it leads, whatever its status.",
    3: "The leader's ProbeReply in time: all is well, and the next probe is due in P seconds.",
    4: "No reply from the leader within T: the leader is gone, and the node looks for another.",
}


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

    rules = RULES
    rule_space = PROBING

    def on_leader_lost(self) -> None:
        raise NotImplementedError

    def leader_confirmed(self, reply: ProbeReply) -> bool:
        """Whether a reply from the leader means all is well: by default, that it came."""
        return True

    def schedule_probe(self) -> None:
        """The next probe (under the rule being applied: the one that made P a follower, or rule 3)."""
        self.cancel_timer(PROBE_WAIT)
        if self.config.probe_interval > 0:
            self.set_timer(PROBE, self.config.probe_interval)

    def stop_probing(self) -> None:
        self.cancel_timer(PROBE, PROBE_WAIT)

    def handle_probe(self, src: int, msg: Message) -> bool:
        """Answer a Probe, or take a ProbeReply; True if `msg` was one of them."""
        if type(msg) is Probe:  # rule 2
            self.rule(2, PROBING)
            self.send(src, ProbeReply, self.leader == self.id)
            return True
        if type(msg) is ProbeReply:
            if src == self.leader and PROBE_WAIT in self.timers:  # rule 3
                self.rule(3, PROBING)
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
            if self.normal and self.leader != self.id:  # rule 1
                self.rule(1, PROBING)
                self.send(self.leader, Probe)
                self.set_timer(PROBE_WAIT, self.config.timeout)
            return True
        if name == PROBE_WAIT:
            if self.normal:  # rule 4: the detector fires
                self.rule(4, PROBING)
                self.leader = None
                self.on_leader_lost()
            return True
        return False
