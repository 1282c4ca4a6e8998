"""The crash-tolerant ring's messages and hops (ring.py): how each ring message gets to
the next node that is up, and what happens to one lost with a crashed node. Its rules,
7, 9, 10 and 12, are stated with the others in ring.py's header, and tagged here.

A hop in one sentence: every Election and Elected is acked by the node it is sent to,
and one not acked within T goes on to the node after (a node that does not ack within T
was down when it came, with T >= 2 * max delay); a node silent for T is presumed down
and skipped at once (so is any node that is silent for T when asked, in the roll call
that a skip starts); and a participant keeps the Election of the election it backs,
once its successor has acked it, until its election is over, asking every P whether
that node is still up: if it is not, the Election goes on past it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .probing import Probe

HOP_WAIT = "hop_wait "  # + the node whose ack is awaited, a space and the message's number
BACK_SEEN = "back_seen "  # + a node whose Back came within the last 2T (rule 10: not to be presumed down)
PRESUMED_DOWN = "presumed_down "  # + a node presumed down: when this fires, messages try it again (rule 10)
ROLL_CALL = "roll_call"  # rule 10: the nodes asked whether they are up, and silent when this fires, are presumed down

Item = tuple[type[Message], tuple]  # a ring message: its class and fields


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


@dataclass(frozen=True, slots=True)
class Back(Message):
    """The sender has just recovered, and takes no ring message for T (rule 1): whoever
    presumes it down stops doing so (rule 10)."""

    type: ClassVar[str] = "back"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


class Hops:
    """The hop layer of a Ring node (a mixin: it uses the node's members, timers and
    election state, and calls its `_initiate` and `_alone`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen: dict[tuple, None] = {}  # keys of ring messages taken, oldest first
        # Messages sent and not yet acked, per node they were sent to (oldest first; FIFO
        # links bring that node's acks back in the same order): (class, fields, the count
        # of that node's Backs when it was sent or None if a Back had come within 2T
        # (rule 10), the number of its ack timer (rule 7)).
        self.unacked: dict[int, list[tuple[type[Message], tuple, int | None, int]]] = {}
        self.sent_count = 0  # numbers the ack timers
        self.presumed_down: set[int] = set()  # skipped without waiting (rule 10)
        self.roll_call: set[int] = set()  # asked whether they are up, and not heard from since (rule 10)
        self.handed: dict[int, list[Item]] = {}  # the Election of the election it backs, and who acked it (rule 12)
        self.backs: dict[int, int] = {}  # Backs heard from each node

    def heard_back(self, src: int) -> None:  # rule 10
        self.rule(10)
        self.backs[src] = self.backs.get(src, 0) + 1
        self.set_timer(BACK_SEEN + str(src), 2 * self.config.timeout)

    def hop_timer(self, name: str) -> bool:
        """Run a hop timer; True if `name` was one of them."""
        if name.startswith(HOP_WAIT):  # rule 7
            self.rule(7)
            node, number = name.removeprefix(HOP_WAIT).split()
            self._skip(int(node), int(number))
        elif name == ROLL_CALL:  # rule 10
            self.rule(10)
            silent, self.roll_call = sorted(self.roll_call), set()
            restart = self.leader in silent and self.normal  # rule 1: the leader is down
            for node in silent:  # all of them first: what goes on skips them all
                self._presumed(node)
            if any([self._send_past(node) for node in silent]) or restart:  # (a list: every one of them)
                if restart:
                    self.rule(1)
                self._initiate()
        elif name.startswith(PRESUMED_DOWN):  # rule 10
            self.rule(10)
            self.presumed_down.discard(int(name.removeprefix(PRESUMED_DOWN)))
        else:
            return name.startswith(BACK_SEEN)
        return True

    def left(self, node: int) -> bool:
        """`node` has left: what it holds goes on past it at once, as rule 7 skips a node
        (without waiting T); True if this node is to initiate."""
        self.presumed_down.discard(node)
        self.cancel_timer(PRESUMED_DOWN + str(node), BACK_SEEN + str(node))
        return self._send_past(node)

    def _successor_of(self, node: int) -> int | None:
        """The next member round the ring after `node` (a member or one that has left),
        never this node itself."""
        nxt = self.ring_next(node)
        return None if nxt == self.id else nxt

    def _remember(self, key: tuple) -> None:
        self.seen[key] = None
        if len(self.seen) > 4 * len(self.ids):
            del self.seen[next(iter(self.seen))]

    def _forward(self, kind: type[Message], *fields: int) -> None:  # rule 7
        if self._send_on(self._successor_of(self.id), [(kind, fields)]):
            self._initiate()

    def _send_on(self, dst: int | None, items: list[Item]) -> bool:
        """Send `items` to dst, or the first node after it not presumed down (rule 10),
        each to be acked within T (rule 7). True if this node is to initiate: an Election
        it backs had gone round to a candidate presumed down, or came back to it alone."""
        lost = False
        while dst is not None and dst in self.presumed_down:
            items, gone = self._past(dst, items)
            lost |= gone
            dst = self._successor_of(dst)
        if dst is None:  # everyone else is down: the ring is this node alone
            restart = [self._alone(kind, fields) for kind, fields in items]  # each of them
            return any(restart) or lost
        queue = self.unacked.setdefault(dst, [])
        backs = None if BACK_SEEN + str(dst) in self.timers else self.backs.get(dst, 0)
        for kind, fields in items:
            self.sent_count += 1
            queue.append((kind, fields, backs, self.sent_count))
            self.send(dst, kind, *fields)
            self.set_timer(f"{HOP_WAIT}{dst} {self.sent_count}", self.config.timeout)
        return lost

    def _take(self, dst: int, upto: int | None) -> list[Item]:
        """Take dst's unacked messages off its queue, up to and including the `upto`-th
        (all of them if None), and stop waiting for their acks."""
        queue = self.unacked.get(dst, [])
        count = len(queue) if upto is None else upto + 1
        taken, queue[:count] = queue[:count], []
        if not queue:
            self.unacked.pop(dst, None)
        for _, _, _, number in taken:
            self.cancel_timer(f"{HOP_WAIT}{dst} {number}")
        return [(kind, fields) for kind, fields, _, _ in taken]

    def _acked(self, src: int, key: tuple) -> None:
        keys = [(kind.type, *fields) for kind, fields, *_ in self.unacked.get(src, [])]
        if key in keys:  # otherwise stale: that message was already sent on past src
            kind, fields = self._take(src, keys.index(key))[-1]  # and any before it were lost (rule 7)
            if self.participant and kind is Election and fields == self.backing:  # rule 12: src holds it now
                self.handed = {src: [(kind, fields)]}

    def _up(self, node: int) -> None:
        """Rule 10: a node heard from is no longer presumed down."""
        self.roll_call.discard(node)
        if node in self.presumed_down:
            self.rule(10)
            self.presumed_down.discard(node)
            self.cancel_timer(PRESUMED_DOWN + str(node))

    def _skip(self, dead: int, number: int) -> None:
        """`dead` did not ack the `number`-th message within T: it goes on to the node after
        it (rule 7); and if no Back from it came within 2T before that message was sent or
        since, it is presumed down: everything else queued for it goes on too (rule 10)."""
        queue = self.unacked.get(dead, [])
        at = next((i for i, item in enumerate(queue) if item[3] == number), None)
        if at is None:
            return
        backs = queue[at][2]
        restart = dead == self.leader and self.normal  # rule 1: the leader did not ack
        if backs is not None and backs == self.backs.get(dead, 0):
            lost = self._presume_down(dead)
        else:
            on, lost = self._past(dead, self._take(dead, at))
            if on:
                lost |= self._send_on(self._successor_of(dead), on)
        self.rule(10)
        self._call_the_roll({node for node in self.others if node not in self.presumed_down})  # rule 10
        if restart or lost:
            self.rule(1 if restart else 7)
            self._initiate()

    def _call_the_roll(self, nodes: set[int]) -> None:
        """Rule 10: ask `nodes` whether they are up (unless a roll call is on already)."""
        if nodes and ROLL_CALL not in self.timers:
            self.roll_call = nodes
            self.broadcast(tuple(sorted(nodes)), Probe)
            self.set_timer(ROLL_CALL, self.config.timeout)

    def _presume_down(self, node: int) -> bool:
        """Rule 10: `node` is skipped without waiting from now on, and what it holds goes
        on at once; True if this node is to initiate (see _send_on)."""
        self.rule(10)
        self._presumed(node)
        return self._send_past(node)

    def _presumed(self, node: int) -> None:
        self.presumed_down.add(node)  # (rule 10: for a lap at most)
        self.set_timer(PRESUMED_DOWN + str(node), self.lap(len(self.ids), self.config))

    def _send_past(self, node: int) -> bool:
        """What `node` holds of this node's election (rule 12) and what waits for its ack go
        on to the node after it (rule 7); True if this node is to initiate."""
        on, lost = self._past(node, self.handed.pop(node, []) + self._take(node, None))
        if on:
            lost |= self._send_on(self._successor_of(node), on)
        return lost

    def _past(self, dead: int, items: list[Item]) -> tuple[list, bool]:
        """Rule 7: of the messages going on past `dead`, those going back to it (its
        Election or Elected, come round) are dropped; and whether this node backs one of
        those Elections (then it initiates)."""
        on = [(kind, fields) for kind, fields in items if fields[0] != dead]
        lost = any(kind is Election and self.backing == fields for kind, fields in items if fields[0] == dead)
        return on, lost
