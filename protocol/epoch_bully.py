"""The Bully of the gsharma design: epochs that decide, heartbeats, safe storage.

Theory in one paragraph. This is the classic Bully (classic.py) with the three things
the gsharma design adds. The cluster epoch names a leader's reign: a new election round bumps
it, and "from leader election to leader death, the cluster's epoch does not change"
(notes 3-4). Election, Answer and Coordinator carry it, so a node can tell a message
from a round that is over, and ignores it instead of starting the race again: that is
what turns classic's start-up storm (5.2 million messages for 64 nodes, every late
Election restarting a finished race) into a few thousand. The leader sends heartbeats,
and a member that hears none within T suspects it (note 8). And a node keeps the
members, its leader and that leader's epoch in safe storage (note 5), so a node that
comes back knows which rounds are over.

Rules, each a handler below (P is this node; its reign is the epoch in which its
stored leader was elected):
  1. Start (start-up, recovery, joining), the detector fires, or the leader leaves: a
     new round (the epoch is bumped). If P has the highest id of the members, it leads
     (rule 2); otherwise it sends Election to every higher member and waits T.
  2. No Answer within T: P leads. It sends Coordinator to every other member; its
     reign is its epoch.
  3. An Answer of this round (its epoch is at least the round's) from a higher node:
     P waits T' for a Coordinator; none within T': P starts over (rule 1).
  4. Election from a lower node: P answers. If P is normal and the Election's epoch
     is not above P's reign, it comes from a round that is over, or from a node that
     missed the news: P starts nothing, and if P leads it sends that node its
     Coordinator again. Otherwise a normal P starts a round of its own (rule 1).
  5. Coordinator from Q with epoch e. If Q is lower than P, P does not follow it: it
     starts a round if it is not in one, which it wins (a node that came back can share
     a round's epoch with the cluster's, having missed a bump while down). Otherwise
     it is stale, and ignored, if Q is lower than P's stored
     leader and e is not above the reign, or Q is that leader and e is below it (a
     late announcement from a finished round: classic's crossing Coordinators).
     Otherwise Q leads from reign e. If P knows a later epoch than e (Q came back with
     an old one), P tells Q so with an Answer, and Q starts a new reign above it
     (rule 7): one epoch for all members again.
  6. The leader sends Heartbeat to every other member every T/2. A follower that hears
     none from its leader within T starts a round (rule 1). One that hears a heartbeat
     from a node higher than its leader (two reigns: after a partition, or a node that
     came back) starts a round too: the Bully settles which one stands.
  7. A leader that gets an Answer with an epoch above its reign starts a new reign:
     it bumps the epoch and sends Coordinator to every other member again.
  P = 0 turns the heartbeats off (elections start only on start, recovery and `elect`).

What it guarantees, with T >= 2 x max delay, lossless FIFO links and crashes and
recoveries at any moment (test_epoch_bully.py shows each with random schedules):
  - SLE2, with the default c (Node.settle_time): after the last crash, recovery, join
    or leave, every up member is normal under the highest up member within c. Classic
    has no such c once a node recovers mid-election: a follower of a stale
    Coordinator keeps it for ever, since its probes say only "alive". Here the higher
    leader's heartbeats reach it (rule 6).
  - Not SLE1. Coordinators can still cross for a moment (a node that comes back
    announces itself without asking, as in classic), and a follower can still follow
    a leader that has just crashed. Each such episode ends by itself, within c.
  - Messages: late messages of a finished round cost an Answer each (and the leader's
    Coordinator again, to their sender) and start nothing. No bound holds for a round
    (worst_case_messages stays None): followers that time out at different moments
    each run theirs, and those re-sent Coordinators come on top; measured, 43 messages
    in a round at N = 7 after one `elect`, above classic's one-initiator worst case (42).

Statuses: election, waiting, normal, as in classic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .classic import (
    ANSWER_WAIT,
    COORDINATOR_WAIT,
    ELECTION,
    NORMAL,
    WAITING,
    Answer,
    ClassicStatus,
    Coordinator,
    Election,
)
from .interface import Message, MessageRole, Node, SafeStorage

RULES = {
    1: "Start, recovery or joining, the detector fires, or the leader leaves: a new round (the epoch bumped); "
       "the highest member leads, any other sends Election to every higher member and waits T.",
    2: "No Answer within T: the node leads: it sends Coordinator to every other member, its reign its epoch.",
    3: "An Answer of this round from a higher node: the node waits T' for a Coordinator; none within T': "
       "it starts over.",
    4: "Election from a lower node: the node answers; a normal node starts a round of its own, unless the "
       "Election is from a round that is over (then a leader sends its Coordinator again).",
    5: "Coordinator from a node: a lower one is bullied by a round of this node's own, a stale one ignored; "
       "any other leads from its epoch on (told with an Answer if its epoch is behind).",
    6: "The leader sends Heartbeat to every other member every T/2; a follower that hears none within T, "
       "or one from a node above its leader, starts a round.",
    7: "A leader that gets an Answer with an epoch above its reign starts a new reign: it bumps the epoch "
       "and sends Coordinator again.",
}

HEARTBEAT = "heartbeat"  # the leader's period, T/2
HEARTBEAT_WAIT = "heartbeat_wait"  # a follower's patience, T


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """The leader is alive, and leads (sent every T/2 to every other member)."""

    type: ClassVar[str] = "heartbeat"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(slots=True)
class EpochStorage(SafeStorage):
    """The gsharma design's note 5: besides the members and the epoch, the leader and its reign."""

    leader: int | None = None
    reign: int = 0  # the epoch in which `leader` was elected


class EpochBully(Node):
    name = "epoch-bully"
    title = "epoch Bully"
    messages = (Election, Answer, Coordinator, Heartbeat)
    statuses = ClassicStatus
    storage_class = EpochStorage
    storage: EpochStorage
    rules = RULES

    round = 0  # the epoch of this node's latest election round (volatile)

    def variables(self) -> dict[str, object]:
        return {"round": self.round}

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        self._start_round()

    def on_suspect(self) -> None:  # rule 1; a round under way already answers it
        if self.status is NORMAL:
            self.rule(1)
            self._start_round()

    def on_member_left(self, node: int) -> None:  # rule 1: a leader that leaves is gone
        if node == self.leader:
            self.rule(1)
            self._start_round()

    def on_message(self, src: int, msg: Message) -> None:
        kind = type(msg)
        if kind is Heartbeat:  # rule 6
            self.rule(6)
            if src == self.leader:
                self._watch_leader()
            elif self.status is NORMAL and src > self.leader:
                self._start_round()
        elif kind is Election:  # rule 4
            if src < self.id:
                self.rule(4)
                self.send(src, Answer)
                if self.status is NORMAL:
                    if msg.epoch > self.storage.reign:
                        self._start_round()
                    elif self.leader == self.id:
                        self.send(src, Coordinator)
        elif kind is Answer:
            if self.status is ELECTION and src > self.id and msg.epoch >= self.round:  # rule 3
                self.rule(3)
                self.status = WAITING
                self.cancel_timer(ANSWER_WAIT)
                self.set_timer(COORDINATOR_WAIT, self.config.coordinator_wait)
            elif self.leader == self.id and msg.epoch > self.storage.reign:  # rule 7
                self.rule(7)
                self.announce_election()
                self._lead()
        elif kind is Coordinator:  # rule 5
            self.rule(5)
            if src < self.id:  # a lower node thinks it is the highest up: bully it
                if self.status is NORMAL:
                    self._start_round()
                return
            stored, reign = self.storage.leader, self.storage.reign
            if stored is not None and (src < stored and msg.epoch <= reign or src == stored and msg.epoch < reign):
                return  # stale
            self._follow(src, msg.epoch)
            if msg.epoch < self.storage.epoch:  # Q's epoch is behind: say so
                self.send(src, Answer)

    def on_timer(self, name: str) -> None:
        if name == ANSWER_WAIT and self.status is ELECTION:  # rule 2
            self.rule(2)
            self._lead()
        elif name == COORDINATOR_WAIT and self.status is WAITING:  # rule 3
            self.rule(3)
            self._start_round()
        elif name == HEARTBEAT and self.leader == self.id:  # rule 6
            self.rule(6)
            self.broadcast(self.others, Heartbeat)
            self.set_timer(HEARTBEAT, self.config.timeout / 2)
        elif name == HEARTBEAT_WAIT and self.status is NORMAL:  # rule 6: the detector fires
            self.rule(6)
            self._start_round()

    # --- transitions ----------------------------------------------------------------

    def _start_round(self) -> None:  # rule 1
        self.announce_election()
        self.round = self.epoch
        self.leader = None
        self.cancel_timer(COORDINATOR_WAIT, HEARTBEAT, HEARTBEAT_WAIT)
        if not self.higher:
            self._lead()
            return
        self.status = ELECTION
        self.broadcast(self.higher, Election)
        self.set_timer(ANSWER_WAIT, self.config.timeout)

    def _lead(self) -> None:  # rules 2 and 7
        self.cancel_timer(ANSWER_WAIT, COORDINATOR_WAIT, HEARTBEAT_WAIT)
        self.status, self.leader = NORMAL, self.id
        self.storage.leader, self.storage.reign = self.id, self.epoch
        self.broadcast(self.others, Coordinator)
        if self.config.probe_interval > 0:
            self.set_timer(HEARTBEAT, self.config.timeout / 2)

    def _follow(self, leader: int, reign: int) -> None:
        self.cancel_timer(ANSWER_WAIT, COORDINATOR_WAIT, HEARTBEAT)
        self.status, self.leader = NORMAL, leader
        self.storage.leader, self.storage.reign = leader, reign
        self._watch_leader()

    def _watch_leader(self) -> None:
        if self.config.probe_interval > 0:
            self.set_timer(HEARTBEAT_WAIT, self.config.timeout)
