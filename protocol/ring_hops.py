"""The crash-tolerant rings' messages and hops: the ring's messages (ring.py), and how a
message gets to the next node that is up, going its way round the ring, and what happens
to one lost with a crashed node. Chang & Roberts (ring.py) sends every message to the
successor; Hirschberg & Sinclair (hs.py) sends both ways. The hops' rules are the ring's
7, 10, 12 and 13, stated with the others in ring.py's header and tagged here; hs.py's
rules 9 and 10 take them both ways (its nodes are not quiet after a recovery, so rule 13
is the ring's alone).

A hop in one sentence: every message is acked by the node it is sent to, and one not
acked within T goes on to the node after, the same way (with T >= 2 * max delay, a node
that does not ack within T was down when it came); a node silent for T is presumed down
and skipped at once (so is every node silent for T when asked, in the roll call that a
skip starts); a message a participant keeps once acked (rule 12) goes on past its
holder again if the holder is found down when asked, every P; and a message for a ring
node that has just said it is back waits until its quiet is over (rule 13).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from .interface import Message, MessageRole
from .probing import Probe
from .ring_order import AFTER

HOP_WAIT = "hop_wait "  # + the node whose ack is awaited, a space and the message's number
BACK_SEEN = "back_seen "  # + a node whose Back came within the last 2T (rule 10: not to be presumed down)
QUIET_OF = "quiet_of "  # + a node whose Back came within T: messages for it wait until this fires (rule 13)
PRESUMED_DOWN = "presumed_down "  # + a node presumed down: when this fires, it is asked again (rule 10)
RECHECK = "recheck "  # + a node presumed down for a lap and asked again: silent until this fires, another lap
ROLL_CALL = "roll_call"  # rule 10: the nodes asked whether they are up, and silent when this fires, are presumed down
WATCH = "watch"  # rule 12: when a participant next asks the nodes holding what it keeps whether they are up
LEADS, WAITING, LOST = "leads", "waiting", "lost"  # ring rule 11: what a candidate tells of an election


@dataclass(frozen=True, slots=True)
class Election(Message):
    """`initiator` and `round` (its epoch when it started) name the election; a node
    that swaps in its own id keeps them."""

    type: ClassVar[str] = "election"
    way: ClassVar[int] = AFTER  # (the ring's messages all go to the successor)
    candidate: int
    initiator: int
    round: int

    @property
    def key(self) -> tuple:
        return (self.type, self.candidate, self.initiator, self.round)

    @property
    def towards(self) -> int:
        return self.candidate

    @property
    def election(self) -> tuple[int, int, int]:
        return (self.candidate, self.initiator, self.round)


@dataclass(frozen=True, slots=True)
class Announcement(Message):
    """Elected, in both rings: `leader` leads. Chang & Roberts' names the election it
    ends (Elected, below), Hirschberg & Sinclair's its way and number (hs.py)."""

    type: ClassVar[str] = "elected"
    label: ClassVar[str] = "Elected"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    leader: int

    @property
    def towards(self) -> int:
        return self.leader


@dataclass(frozen=True, slots=True)
class Elected(Announcement):
    way: ClassVar[int] = AFTER
    initiator: int
    round: int

    @property
    def key(self) -> tuple:
        return (self.type, self.leader, self.initiator, self.round)

    @property
    def election(self) -> tuple[int, int, int]:
        return (self.leader, self.initiator, self.round)


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
    """The sender has just started again: whoever presumes it down stops doing so (rule
    10); a ring node takes no ring message for T (rules 1 and 13)."""

    type: ClassVar[str] = "back"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class Ask(Message):
    """A participant asks the candidate of the election it backs how that election
    stands (rule 11)."""

    type: ClassVar[str] = "ask"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    initiator: int
    round: int


@dataclass(frozen=True, slots=True)
class Told(Message):
    """The candidate's answer (rule 11): it leads, elected by that election; it still
    takes part in an election; or that election is lost."""

    type: ClassVar[str] = "told"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    initiator: int
    round: int
    outcome: str  # LEADS, WAITING or LOST


@dataclass(frozen=True, slots=True)
class Again(Message):
    """Start the election named (initiator, round) again (rule 14): it left a node out,
    or its announcement was lost."""

    type: ClassVar[str] = "again"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    initiator: int
    round: int


class Hops:
    """The hop layer of a ring node (a mixin: it uses the node's members, timers and
    election state). A message it carries has a `way` round the ring, a `towards` (its
    candidate or leader: it is never sent on past that node) and a `key` that its ack
    names. The node implements `_initiate` and the hooks below."""

    quiet_after_back: ClassVar[bool] = True  # rule 13: a node that says it is back takes no message for T
    # The rules the hops apply, as the ring (ring.py) numbers them; hs.py numbers its own.
    ACK_RULE, DOWN_RULE, KEEP_RULE, QUIET_RULE = 7, 10, 12, 13

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Messages sent and not yet acked, per node they were sent to (oldest first; FIFO
        # links bring that node's acks back in the same order): the message, the count
        # of that node's Backs when it was sent or None if a Back had come within 2T
        # (rule 10), and the number of its ack timer (rule 7).
        self.unacked: dict[int, list[tuple[Message, int | None, int]]] = {}
        self.sent_count = 0  # numbers the ack timers
        self.presumed_down: set[int] = set()  # skipped without waiting (rule 10)
        self.roll_call: set[int] = set()  # asked whether they are up, and not heard from since (rule 10)
        self.handed: dict[int, list[Message]] = {}  # what it keeps, by the node that acked it (rule 12)
        self.waiting: dict[int, list[Message]] = {}  # for a node that is quiet, until its quiet is over (rule 13)
        self.backs: dict[int, int] = {}  # Backs heard from each node

    # --- what each ring says --------------------------------------------------------

    def _alone(self, msg: Message) -> bool:
        """Every other node was skipped: `msg` has come back round to this node. True if
        this node is to initiate."""
        return False

    def _lost(self, msg: Message) -> bool:
        """`msg` is dropped, its own candidate or leader being down: True if this node
        is to initiate (rule 7)."""
        return False

    def _keeps(self, msg: Message) -> bool:
        """Whether to keep `msg` once acked, and watch its holder (rule 12)."""
        return False

    def _ends_before(self, msg: Message, dst: int) -> bool:
        """Whether `msg` goes no further than this node when `dst` is next."""
        return False

    def _transmit(self, dst: int, msg: Message) -> None:
        self.send_as_is(dst, msg)

    def _watched(self) -> set[int]:
        """Nodes to ask whether they are up every P besides the holders (rule 12)."""
        return set()

    def _gone(self, silent: set[int]) -> int | None:
        """The roll call found `silent` down: the rule by which this node initiates, if
        it does (by default, when its leader is among them: rule 1)."""
        return 1 if self.leader in silent and self.normal else None  # rule 1

    def watch(self, msg: Message | None = None) -> None:
        """Ask the holders (rule 12), and `_watched`, every P from now on (`msg`: the
        message just handed on; hs.py asks when it is overdue)."""
        if WATCH not in self.timers and self.config.probe_interval > 0:
            self.set_timer(WATCH, self.config.probe_interval)

    def _watch_again(self) -> float:
        """When to ask the holders again, all having answered the last time (rule 12)."""
        return self.config.probe_interval

    # --- inputs ---------------------------------------------------------------------

    def heard_back(self, src: int) -> None:  # rules 10 and 13
        """`src` has started again: what awaited its ack was lost there. A ring node is
        quiet, and it waits (rule 13); a node that is not takes part at once, and gets it
        again now, with what it held of what this node keeps (hs.py's rule 10)."""
        self.rule(self.DOWN_RULE)
        self.backs[src] = self.backs.get(src, 0) + 1
        if self.quiet_after_back:
            self.set_timer(BACK_SEEN + str(src), 2 * self.config.timeout)
            self.rule(self.QUIET_RULE)
            self.set_timer(QUIET_OF + str(src), self.config.timeout)
            self.waiting.setdefault(src, []).extend(self._take(src, None))
        else:
            self._send_to(src, self.handed.pop(src, []) + self._take(src, None))

    def hop_timer(self, name: str) -> bool:
        """Run a hop timer; True if `name` was one of them."""
        if name.startswith(HOP_WAIT):  # rule 7
            self.rule(self.ACK_RULE)
            node, number = name.removeprefix(HOP_WAIT).split()
            self._skip(int(node), int(number))
        elif name == ROLL_CALL:  # rule 10
            self.rule(self.DOWN_RULE)
            silent, self.roll_call = sorted(self.roll_call), set()
            restart = self._gone(set(silent))
            for node in silent:  # all of them first: what goes on skips them all
                self._presumed(node)
            if any([self._send_past(node) for node in silent]) or restart:  # (a list: every one of them)
                if restart:
                    self.rule(restart)
                self._initiate()
        elif name == WATCH:  # rule 12
            self.rule(self.KEEP_RULE)
            holders = {node for node in self.handed if node not in self.presumed_down} | self._watched()
            if holders:
                self._call_the_roll(holders)
                self.set_timer(WATCH, self._watch_again())
        elif name.startswith(QUIET_OF):  # rule 13
            self.rule(self.QUIET_RULE)
            node = int(name.removeprefix(QUIET_OF))
            self._send_to(node, self.waiting.pop(node, []))
        elif name.startswith(PRESUMED_DOWN):  # rule 10: a lap on, asked again
            self.rule(self.DOWN_RULE)
            node = int(name.removeprefix(PRESUMED_DOWN))
            self.send(node, Probe)
            self.set_timer(RECHECK + str(node), self.config.timeout)
        elif name.startswith(RECHECK):  # rule 10: still silent, another lap
            self.rule(self.DOWN_RULE)
            node = int(name.removeprefix(RECHECK))
            if node in self.presumed_down:
                self._presumed(node)
        else:
            return name.startswith(BACK_SEEN)
        return True

    def left(self, node: int) -> bool:
        """`node` has left: what it holds, and what waits for it, goes on past it at once,
        as rule 7 skips a node (without waiting T); True if this node is to initiate."""
        self.presumed_down.discard(node)
        self.cancel_timer(*(timer + str(node) for timer in (PRESUMED_DOWN, RECHECK, BACK_SEEN, QUIET_OF)))
        self.handed.setdefault(node, []).extend(self.waiting.pop(node, []))
        return self._send_past(node)

    def forget_handed(self) -> None:
        """Rule 12: what this node kept is no longer its to watch."""
        self.handed = {}
        self.cancel_timer(WATCH)

    def went_past(self, node: int, way: int) -> bool:
        """Whether a message this node keeps (rule 12) has gone on past `node`, going
        `way`: handed to it or to a node further round, or sent to one beyond it. (One
        awaiting `node`'s own ack waits for it: rule 13.)"""
        sent = [dst for dst, queue in self.unacked.items() if any(self._keeps(msg) for msg, _, _ in queue)]
        for holder in [*self.handed, *sent]:
            between = self._next(self.id, way)
            while between not in (holder, None):
                if between == node:
                    return True
                between = self._next(between, way)
            if holder == node and holder in self.handed:
                return True
        return False

    def hops_from(self, node: int, way: int) -> int:
        """How many hops a message going `way` takes from `node` round to this node, at most."""
        hops = 1
        while (node := self._next(node, way)) is not None:
            hops += 1
        return hops

    # --- sending --------------------------------------------------------------------

    def _next(self, node: int, way: int) -> int | None:
        """The next member round the ring after `node` going `way` (a member or one that
        has left), never this node itself."""
        nxt = self.ring_next(node, way)
        return None if nxt == self.id else nxt

    def _send_on(self, after: int, msgs: list[Message]) -> bool:
        """Send each of `msgs` to the first node after `after`, going its way, that is not
        presumed down (rule 10), to be acked within T (rule 7). True if this node is to
        initiate (a message dropped before its own candidate, presumed down, or come back
        round to this node alone: `_lost`, `_alone`)."""
        lost = False
        for way in sorted({msg.way for msg in msgs}, reverse=True):  # (the successor's first)
            batch = [msg for msg in msgs if msg.way == way]
            dst = self._next(after, way)
            while dst is not None and dst in self.presumed_down:
                batch, gone = self._past(dst, batch)
                lost |= gone
                dst = self._next(dst, way)
            if dst is None:  # everyone else is down: the ring is this node alone
                lost |= any([self._alone(msg) for msg in batch])  # (a list: each of them)
            else:
                self._send_to(dst, [msg for msg in batch if not self._ends_before(msg, dst)])
        return lost

    def _send_to(self, dst: int, msgs: list[Message]) -> None:
        """Send `msgs` to `dst`, each to be acked within T (rule 7); if `dst` is quiet,
        once its quiet is over (rule 13)."""
        if not msgs:
            return
        if QUIET_OF + str(dst) in self.timers:  # rule 13
            self.waiting.setdefault(dst, []).extend(msgs)
            return
        queue = self.unacked.setdefault(dst, [])
        backs = None if BACK_SEEN + str(dst) in self.timers else self.backs.get(dst, 0)
        for msg in msgs:
            self.sent_count += 1
            queue.append((msg, backs, self.sent_count))
            self._transmit(dst, msg)
            self.set_timer(f"{HOP_WAIT}{dst} {self.sent_count}", self.config.timeout)

    def _take(self, dst: int, upto: int | None) -> list[Message]:
        """Take dst's unacked messages off its queue, up to and including the `upto`-th
        (all of them if None), and stop waiting for their acks."""
        queue = self.unacked.get(dst, [])
        count = len(queue) if upto is None else upto + 1
        taken, queue[:count] = queue[:count], []
        if not queue:
            self.unacked.pop(dst, None)
        for _, _, number in taken:
            self.cancel_timer(f"{HOP_WAIT}{dst} {number}")
        return [msg for msg, _, _ in taken]

    def _acked(self, src: int, key: object) -> None:
        keys = [msg.key for msg, _, _ in self.unacked.get(src, [])]
        if key in keys:  # otherwise stale: that message was already sent on past src
            msg = self._take(src, keys.index(key))[-1]  # and any before it were lost (rule 7)
            if self._keeps(msg):  # rule 12: src holds it now
                self.handed.setdefault(src, []).append(msg)
                self.watch(msg)

    # --- skipping -------------------------------------------------------------------

    def _up(self, node: int) -> None:
        """Rule 10: a node heard from is no longer presumed down."""
        self.roll_call.discard(node)
        if node in self.presumed_down:
            self.rule(self.DOWN_RULE)
            self.presumed_down.discard(node)
            self.cancel_timer(PRESUMED_DOWN + str(node), RECHECK + str(node))

    def _skip(self, dead: int, number: int) -> None:
        """`dead` did not ack the `number`-th message within T: it goes on to the node after
        it (rule 7); and if no Back from it came within 2T before that message was sent or
        since, it is presumed down: everything else queued for it goes on too (rule 10)."""
        queue = self.unacked.get(dead, [])
        at = next((i for i, item in enumerate(queue) if item[2] == number), None)
        if at is None:
            return
        backs = queue[at][1]
        restart = self._gone({dead})  # (rule 1: the leader did not ack)
        if backs is not None and backs == self.backs.get(dead, 0):
            lost = self._presume_down(dead)
        else:
            on, lost = self._past(dead, self._take(dead, at))
            lost |= self._send_on(dead, on)
        self.rule(self.DOWN_RULE)
        self._call_the_roll({node for node in self.others if node not in self.presumed_down})  # rule 10
        if restart or lost:
            self.rule(restart or self.ACK_RULE)
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
        self.rule(self.DOWN_RULE)
        self._presumed(node)
        return self._send_past(node)

    def _presumed(self, node: int) -> None:
        self.presumed_down.add(node)  # (rule 10: for a lap, then it is asked again)
        self.set_timer(PRESUMED_DOWN + str(node), self.lap(len(self.ids), self.config))

    def _send_past(self, node: int) -> bool:
        """What `node` holds of what this node keeps (rule 12) and what waits for its ack go
        on to the node after it (rule 7); True if this node is to initiate."""
        on, lost = self._past(node, self.handed.pop(node, []) + self._take(node, None))
        return self._send_on(node, on) or lost

    def _past(self, dead: int, msgs: list[Message]) -> tuple[list[Message], bool]:
        """Rule 7: of the messages going on past `dead`, those going back to it (its
        Election or Elected, come round) are dropped; and whether that makes this node
        initiate (`_lost`)."""
        on = [msg for msg in msgs if msg.towards != dead]
        lost = any([self._lost(msg) for msg in msgs if msg.towards == dead])
        return on, lost


def restamped(msg: Message, epoch: int) -> Message:
    """`msg` with this epoch (a message passed on carries its sender's epoch)."""
    return msg if msg.epoch == epoch else replace(msg, epoch=epoch)
