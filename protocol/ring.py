"""Chang & Roberts ring election (lecture 3-9), as PROTOCOLS.md section 4 reads it.

Theory in one paragraph. The nodes form a logical ring in id order (each node's
successor is the next higher id, the highest wraps round to the lowest), and each node
talks only to its successor. An initiator sends Election(its id) round the ring. A node
forwards a larger id, swaps a smaller one for its own (unless it already takes part,
then it swallows it), and the node whose own id comes back is the largest alive: it
sends Elected round the ring, and everyone follows it. With one initiator just after
the highest id that is N-1 messages up to the highest id, N for its id to come back and
N for the announcement: 3N-1. When every node starts at once with ids in the worst
order it is N(N+1)/2 Election messages.

Failures (an addition the lecture leaves out). Every ring message is acked by the
successor. A successor that does not ack within T is presumed down and skipped: the
unacked messages go to the node after it, which again must ack within T. Each new
message first tries the immediate successor, so a node that comes back is part of the
ring again at once. Acks are transport, not election: the 3N-1 counts Election and
Elected only. A participant that sees no Elected within NT' (twice the time an
election takes to go round twice when T' = 2T: the announcement has been lost with a
crashed node) starts again. Followers probe the leader like the
classic Bully's (every P; P = 0 turns it off), and a node that starts or recovers
initiates an election.

Copies. If T is too short, a slow successor is skipped although it is alive, and both
it and the node after it pass the message on. Without a check every late ack would
double the traffic, and the copies would go round for ever. So ring messages name
their election: its initiator and the initiator's epoch when it began (`round`; epochs
live in safe storage and each start bumps them, so no initiator reuses one). A node
drops a message it has already taken, and remembers the last 4N it took. Without that, every late
ack doubles the traffic and the copies go round for ever.

Statuses: election (a participant: the flag is set), normal (following a leader).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole, StatusRole
from .probing import Probe, ProbeReply, ProbingNode

ELECTION, NORMAL = "election", "normal"

ELECTED_WAIT = "elected_wait"
HOP_WAIT = "hop_wait "  # + the node whose ack is awaited


@dataclass(frozen=True, slots=True)
class Election(Message):
    """`initiator` and `round` (its epoch when it started) name the election; a node
    that swaps in its own id keeps them."""

    type: ClassVar[str] = "election"
    candidate: int
    initiator: int
    round: int

    @property
    def key(self) -> tuple:
        return (self.type, self.candidate, self.initiator, self.round)


@dataclass(frozen=True, slots=True)
class Elected(Message):
    type: ClassVar[str] = "elected"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    leader: int
    initiator: int
    round: int

    @property
    def key(self) -> tuple:
        return (self.type, self.leader, self.initiator, self.round)


@dataclass(frozen=True, slots=True)
class RingAck(Message):
    """The successor got the ring message (link-level; not part of the election count)."""

    type: ClassVar[str] = "ack"
    label: ClassVar[str] = "Ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY


class Ring(ProbingNode):
    name = "ring"
    title = "Chang & Roberts ring"
    messages = (Election, Elected, RingAck, Probe, ProbeReply)
    statuses = {ELECTION: StatusRole.ELECTING, NORMAL: StatusRole.NORMAL}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.participant = False
        self.seen: dict[tuple, None] = {}  # keys of ring messages taken, oldest first
        # Messages sent and not yet acked, per node they were sent to (oldest first):
        # FIFO links bring that node's acks back in the same order.
        self.unacked: dict[int, list[tuple[type[Message], tuple]]] = {}

    @classmethod
    def worst_case_messages(cls, n: int) -> int:
        """One initiator just after the highest id: 3N-1 Election and Elected messages."""
        return 3 * n - 1 if n > 1 else 0

    def variables(self) -> dict[str, object]:
        return {
            "participant": self.participant,
            "successor": self._successor_of(self.id),
            "unacked": {node: [f"{kind.type} {fields[0]}" for kind, fields in items] for node, items in self.unacked.items()},
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:
        self.storage.incarnation += 1
        self._initiate()

    def on_suspect(self) -> None:
        if not self.participant:
            self._initiate()

    def on_leader_lost(self) -> None:
        self._initiate()

    def on_message(self, src: int, msg: Message) -> None:
        if self.handle_probe(src, msg):
            return
        match msg:
            case RingAck():
                self._acked(src)
                return
            case Election() | Elected() if msg.key in self.seen:
                pass  # a copy (see "Copies")
            case Election(candidate=c) if c > self.id:
                self._take_part()
                self._forward(Election, c, msg.initiator, msg.round)
            case Election(candidate=c) if c < self.id and not self.participant:
                self._take_part()
                self._forward(Election, self.id, msg.initiator, msg.round)
            case Election(candidate=c) if c == self.id:  # my id came back: I am the largest alive
                self._follow(self.id)
                self._forward(Elected, self.id, msg.initiator, msg.round)
            case Elected(leader=leader) if leader != self.id:
                self._follow(leader)
                self._forward(Elected, leader, msg.initiator, msg.round)
            # Otherwise: a participant swallows a smaller id, or Elected(my id): the
            # announcement has gone round.
        self._remember(msg.key)
        self.send(src, RingAck)

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name):
            return
        if name == ELECTED_WAIT and self.participant:
            self._initiate()
        elif name.startswith(HOP_WAIT):
            self._skip(int(name.removeprefix(HOP_WAIT)))

    # --- the ring ---------------------------------------------------------------------

    def _initiate(self) -> None:
        self.announce_election()
        self._take_part()
        self._forward(Election, self.id, self.id, self.epoch)

    def _take_part(self) -> None:
        self.participant = True
        self.status, self.leader = ELECTION, None
        self.stop_probing()
        self.set_timer(ELECTED_WAIT, len(self.ids) * self.config.coordinator_wait)

    def _follow(self, leader: int) -> None:
        """The election is over for this node: `leader` leads (perhaps this node)."""
        self.participant = False
        if leader == self.id:
            self.stop_probing()
        self.cancel_timer(ELECTED_WAIT)
        self.status, self.leader = NORMAL, leader
        if leader != self.id:
            self.schedule_probe()

    def _successor_of(self, node: int) -> int | None:
        """The next id round the ring after `node`, never this node itself."""
        ids = self.ids
        nxt = ids[(ids.index(node) + 1) % len(ids)]
        return None if nxt == self.id else nxt

    def _remember(self, key: tuple) -> None:
        self.seen[key] = None
        if len(self.seen) > 4 * len(self.ids):
            del self.seen[next(iter(self.seen))]

    def _forward(self, kind: type[Message], *fields: int) -> None:
        self._send_on(self._successor_of(self.id), [(kind, fields)])

    def _send_on(self, dst: int | None, items: list[tuple[type[Message], tuple]]) -> None:
        if dst is None:  # everyone else is down: the ring is this node alone
            for kind, _ in items:
                self._alone(kind)
            return
        queue = self.unacked.setdefault(dst, [])
        if not queue:
            self.set_timer(HOP_WAIT + str(dst), self.config.timeout)
        queue.extend(items)
        for kind, fields in items:
            self.send(dst, kind, *fields)

    def _acked(self, src: int) -> None:
        queue = self.unacked.get(src)
        if not queue:
            return  # stale: those messages were already sent on past src
        queue.pop(0)
        self.cancel_timer(HOP_WAIT + str(src))
        if queue:
            self.set_timer(HOP_WAIT + str(src), self.config.timeout)
        else:
            del self.unacked[src]

    def _skip(self, dead: int) -> None:
        """`dead` did not ack within T: send what it did not ack to the node after it."""
        items = self.unacked.pop(dead, [])
        if items:
            self._send_on(self._successor_of(dead), items)

    def _alone(self, kind: type[Message]) -> None:
        """No other node acks: the message would come straight back, so take it now."""
        if kind is Election:  # (a probe timer it had as a follower is left to lapse)
            self.participant = False
            self.cancel_timer(ELECTED_WAIT)
            self.status, self.leader = NORMAL, self.id
