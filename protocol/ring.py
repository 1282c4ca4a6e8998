"""Chang & Roberts ring election (lecture 3-9), as PROTOCOLS.md section 4 reads it, made
to tolerate crashes and recoveries (the lecture's self-study question; this is our answer).

Theory in one paragraph. The nodes form a logical ring in id order (each node's
successor is the next higher id, the highest wraps round to the lowest), and each node
talks only to its successor. An initiator sends Election(its id) round the ring. A node
forwards a larger id, swaps a smaller one for its own (unless it already takes part,
then it swallows it), and the node whose own id comes back is the largest alive: it
sends Elected round the ring, and everyone follows it. With one initiator just after
the highest id that is N-1 messages up to the highest id, N for its id to come back and
N for the announcement: 3N-1. When every node starts at once with ids in the worst
order it is N(N+1)/2 Election messages.

Crashes (what the lecture leaves out). C&R assumes nobody fails. Here a node can crash
and recover at any time, so messages get lost with the nodes that held them, a node
comes back knowing nothing, and two elections can overlap. What makes it heal:
  - every hop is acked, and a successor that does not ack within T is skipped;
  - a participant that sees no Elected in time starts again;
  - a node never follows a node lower than itself: an announcement of a lower leader
    means that election went round while this node was away, so it starts its own;
  - followers probe their leader, and the reply says whether it still leads.
What makes it safe is Garcia-Molina's idea (a node takes NewCoordinator only from the
node that halted it), in ring form: a node follows only the election it backs, the one
whose Election last passed through it with the highest candidate. An Election goes all
the way round before its candidate leads, so by then every live node backs it or a
higher one, and none can take a stale announcement: two normal nodes never follow
different leaders (SLE1). With T >= 2 * max delay, once crashes and recoveries stop,
every up node is normal under the highest up node within `settle_time` (SLE2). The
property tests check both.

Rules (P is this node; an election is named by its candidate, initiator and round):
  1. Start, recovery, or the failure detector fires (the leader did not answer a probe
     within T, or answered that it no longer leads): P initiates, sending
     Election(P) to its successor, takes part, and backs its own election.
  2. Election(c) with c > P: P takes part and forwards it. P backs it if P was not
     taking part yet, or if c is at least the candidate P backs.
  3. Election(c) with c < P: if P does not take part yet, it takes part, backs and
     forwards Election(P) instead; if it does, it swallows the message.
  4. Election(P) comes back: if P still backs it, P is the largest alive. It leads, and
     sends Elected(P). If P has since backed a higher candidate, it swallows it.
  5. Elected(L) with L > P: P forwards it, and follows L if it backs that election.
     Elected(P) back at P: the announcement has gone round.
  6. Elected(L) with L < P: P never follows a lower node. It swallows the message and,
     unless it already takes part in an election (which will decide), initiates (rule 1).
  7. Every ring message is acked by its receiver, and the ack names the message. A
     successor that does not ack the oldest message it was sent within T is presumed
     down: that message goes to the node after it, which again must ack within T, and
     the next waits T more. An ack for a later message means the earlier ones were lost
     (the successor was down when they came; it has come back since, and runs its own
     election). Each new message first tries the immediate successor, so a node that
     comes back is part of the ring again at once. If every other node is skipped, P
     is alone: the message has come back, and P leads if it backs that election. Acks
     are transport, not election: the 3N-1 counts Election and Elected only.
  8. A participant that sees no Elected within ELECTED_WAIT_LAPS laps of the ring, a hop
     each T (the announcement was lost with a crashed node), initiates again.
  9. Copies. If T is too short, a slow successor is skipped although it is alive, and
     both it and the node after it pass the message on; every late ack would double the
     traffic, and the copies would go round for ever. So ring messages name their
     election: its initiator and the initiator's epoch when it began (`round`; epochs
     live in safe storage and each start bumps them, so no initiator reuses one). A
     node drops a message it has already taken (it remembers the last 4N).

Statuses: election (a participant: the flag is set), normal (following a leader).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import ClassVar

from .interface import Config, Message, MessageRole, StatusRole
from .probing import Probe, ProbeReply, ProbingNode

ELECTION, NORMAL = "election", "normal"

ELECTED_WAIT = "elected_wait"
ELECTED_WAIT_LAPS = 3  # Election up to twice round (to the largest, and back), then Elected
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
    """The successor got the ring message with this key (link-level; not part of the
    election count)."""

    type: ClassVar[str] = "ack"
    label: ClassVar[str] = "Ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    acked: str  # the acked message's type
    value: int  # its candidate or leader
    initiator: int
    round: int

    @property
    def key(self) -> tuple:
        return (self.acked, self.value, self.initiator, self.round)


class Ring(ProbingNode):
    name = "ring"
    title = "Chang & Roberts ring"
    messages = (Election, Elected, RingAck, Probe, ProbeReply)
    statuses = {ELECTION: StatusRole.ELECTING, NORMAL: StatusRole.NORMAL}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.participant = False
        self.backing: tuple[int, int, int] | None = None  # (candidate, initiator, round) of the election it backs
        self.seen: dict[tuple, None] = {}  # keys of ring messages taken, oldest first
        # Messages sent and not yet acked, per node they were sent to (oldest first):
        # FIFO links bring that node's acks back in the same order.
        self.unacked: dict[int, list[tuple[type[Message], tuple]]] = {}

    @classmethod
    def worst_case_messages(cls, n: int) -> int:
        """One initiator just after the highest id: 3N-1 Election and Elected messages."""
        return 3 * n - 1 if n > 1 else 0

    @classmethod
    def elected_wait(cls, n: int, config: Config) -> float:
        """Rule 8: how long a participant waits for Elected."""
        return ELECTED_WAIT_LAPS * n * config.timeout

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """On top of the default: an election lost with a crashed node is noticed only
        when its participants' wait runs out (rule 8), and then the new one goes round
        the ring, a hop at a time, up to three laps; and a follower notices a leader
        that no longer leads only at its next probe."""
        lap = n * max(config.timeout, 2 * max_delay)
        return super().settle_time(n, config, max_delay) + cls.elected_wait(n, config) + ELECTED_WAIT_LAPS * lap

    def variables(self) -> dict[str, object]:
        return {
            "participant": self.participant,
            "backing": None if self.backing is None else self.backing[0],
            "successor": self._successor_of(self.id),
            "unacked": {node: [f"{kind.type} {fields[0]}" for kind, fields in items] for node, items in self.unacked.items()},
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.storage.incarnation += 1
        self._initiate()

    def on_suspect(self) -> None:  # rule 1
        if not self.participant:
            self._initiate()

    def on_leader_lost(self) -> None:  # rule 1
        self._initiate()

    def leader_confirmed(self, reply: ProbeReply) -> bool:  # rule 1: it must still lead
        return reply.leads

    def on_message(self, src: int, msg: Message) -> None:
        if self.handle_probe(src, msg):
            return
        match msg:
            case RingAck():  # rule 7
                self._acked(src, msg.key)
                return
            case Election() | Elected() if msg.key in self.seen:
                pass  # rule 9: a copy
            case Election(candidate=c) if c > self.id:  # rule 2
                self._take_part(c, msg.initiator, msg.round)
                self._forward(Election, c, msg.initiator, msg.round)
            case Election(candidate=c) if c < self.id and not self.participant:  # rule 3
                self._take_part(self.id, msg.initiator, msg.round)
                self._forward(Election, self.id, msg.initiator, msg.round)
            case Election(candidate=c) if c == self.id and self.backing == (c, msg.initiator, msg.round):  # rule 4
                self._follow(self.id)
                self._forward(Elected, self.id, msg.initiator, msg.round)
            case Elected(leader=leader) if leader > self.id:  # rule 5
                if self.backing == (leader, msg.initiator, msg.round):
                    self._follow(leader)
                self._forward(Elected, leader, msg.initiator, msg.round)
            case Elected(leader=leader) if leader < self.id and not self.participant:  # rule 6
                self._initiate()
            # Otherwise: a participant swallows a smaller id (rule 3) or a lower leader
            # (rule 6), my id back from an election I no longer back (rule 4), or
            # Elected(my id) has gone round (rule 5).
        self._remember(msg.key)
        self.send(src, RingAck, *msg.key)  # rule 7

    def on_member_left(self, node: int) -> None:
        """What waited for the leaver's ack goes on past it at once (rule 7's skip,
        without waiting T); and if it led, the leader is gone (rule 1)."""
        queue = self.unacked.pop(node, None)
        if queue:
            self.cancel_timer(HOP_WAIT + str(node))
            self._send_on(self._successor_of(node), queue)
        if node == self.leader:
            self.leader = None
            self.on_leader_lost()

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name):
            return
        if name == ELECTED_WAIT and self.participant:  # rule 8
            self._initiate()
        elif name.startswith(HOP_WAIT):  # rule 7
            self._skip(int(name.removeprefix(HOP_WAIT)))

    # --- the ring ---------------------------------------------------------------------

    def _initiate(self) -> None:
        self.announce_election()
        self.backing = None  # whatever it backed is over: back this one
        self._take_part(self.id, self.id, self.epoch)
        self._forward(Election, self.id, self.id, self.epoch)

    def _take_part(self, candidate: int, initiator: int, round: int) -> None:
        """Rules 2 and 3: take part, backing this election if it is the first since the
        node last followed a leader, or its candidate is at least the one it backs."""
        if not self.participant or self.backing is None or candidate >= self.backing[0]:
            self.backing = (candidate, initiator, round)
        self.participant = True
        self.status, self.leader = ELECTION, None
        self.stop_probing()
        self.set_timer(ELECTED_WAIT, self.elected_wait(len(self.ids), self.config))

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
        """The next id round the ring after `node` (a member or one that has left), never
        this node itself."""
        ids = self.ids
        nxt = ids[bisect.bisect_right(ids, node) % len(ids)]
        return None if nxt == self.id else nxt

    def _remember(self, key: tuple) -> None:
        self.seen[key] = None
        if len(self.seen) > 4 * len(self.ids):
            del self.seen[next(iter(self.seen))]

    def _forward(self, kind: type[Message], *fields: int) -> None:
        self._send_on(self._successor_of(self.id), [(kind, fields)])

    def _send_on(self, dst: int | None, items: list[tuple[type[Message], tuple]]) -> None:
        if dst is None:  # everyone else is down: the ring is this node alone
            for kind, fields in items:
                self._alone(kind, fields)
            return
        queue = self.unacked.setdefault(dst, [])
        if not queue:
            self.set_timer(HOP_WAIT + str(dst), self.config.timeout)
        queue.extend(items)
        for kind, fields in items:
            self.send(dst, kind, *fields)

    def _acked(self, src: int, key: tuple) -> None:
        queue = self.unacked.get(src, [])
        keys = [(kind.type, *fields) for kind, fields in queue]
        if key not in keys:
            return  # stale: that message was already sent on past src
        del queue[:keys.index(key) + 1]  # and any before it were lost (rule 7)
        self._wait_for(src)

    def _wait_for(self, dst: int) -> None:
        """(Re)start the wait for dst's ack of the oldest message it has not acked."""
        self.cancel_timer(HOP_WAIT + str(dst))
        if self.unacked.get(dst):
            self.set_timer(HOP_WAIT + str(dst), self.config.timeout)
        else:
            self.unacked.pop(dst, None)

    def _skip(self, dead: int) -> None:
        """`dead` did not ack its oldest message within T: send that on to the node after it."""
        queue = self.unacked.get(dead)
        if queue:
            item = queue.pop(0)
            self._wait_for(dead)
            self._send_on(self._successor_of(dead), [item])

    def _alone(self, kind: type[Message], fields: tuple) -> None:
        """Every other node was skipped: the message has come back round. An Election this
        node backs makes it the leader (there is nobody to announce it to)."""
        if kind is Election and self.backing == fields:  # (a probe timer from before is left to lapse)
            self.participant = False
            self.cancel_timer(ELECTED_WAIT)
            self.status, self.leader = NORMAL, self.id
