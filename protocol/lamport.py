"""Lamport's mutual exclusion, 1978 (lecture 3-6), as PROTOCOLS.md section 5 reads it.

Theory in one paragraph. Every node keeps a Lamport clock and a queue of requests
ordered by (timestamp, id), a total order. To enter, a node stamps a request, puts it
in its own queue and sends it to all others; each puts it in its queue and replies with
a stamped Reply. The node enters when its request heads its own queue and it has heard
from every other node with a later stamp (their Replies: links are FIFO, so nothing
older can still be on its way, which is why the algorithm needs FIFO links, and ours
are). Leaving, it removes its request and sends Release to all, who remove it too.
3(N-1) messages per entry; the synchronization delay is one message (the Release). No
failures are tolerated: a node that crashes never replies, and everyone who asks after
that waits for ever (the monitor reports it); and one that recovers has forgotten the
queue, with its clock back at 0: its request looks older than the holder's, everyone
replies, and it enters beside the holder (the monitor reports two inside). Nothing
here mends that: it is the lecture's model meeting a crash.

Rules (P is this node, C its clock):
  1. Every message P sends carries C after incrementing it; on every message P
     receives, C becomes max(C, its stamp) + 1.
  2. Want: P is wanted; it puts (C, P) in its queue and sends Request(C) to every
     other member, then waits for a Reply from each.
  3. Request (ts, Q): P puts (ts, Q) in its queue and sends Reply to Q.
  4. Reply from Q: Q has answered P's request.
  5. P enters (holds) when wanted, its request heads its queue, and every other member
     has answered (rule 4; members that left need not).
  6. Exit: P is released, removes its request from its queue, and sends Release to
     every other member.
  7. Release from Q: P removes Q's request from its queue (and may now enter, rule 5).
  8. A member joins: a wanted or holding P sends it its request (as rule 2 would have),
     so the newcomer's queue has it before P's reply to the newcomer's own request
     (FIFO); a member leaves: P needs no reply from it, and drops its request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .mutex import HELD, RELEASED, WANTED, Figures, Serves, StampedRequests

RULES = {
    1: "Every message carries the sender's clock, advanced by one; a message received sets the clock "
       "past its stamp (max of the two, plus one).",
    2: "Want: the node is wanted; it queues its stamped request and sends Request to every other member.",
    3: "Request from a node: the request joins the queue, and the node sends Reply.",
    4: "Reply from a node: that node has answered the request.",
    5: "The node enters the critical section: it is wanted, its request heads its queue, "
       "and every other member has answered.",
    6: "Exit: the node is released, removes its request from its queue, and sends Release to every other member.",
    7: "Release from a node: its request leaves the queue.",
    8: "Members change: a wanted or holding node sends a newcomer its request; "
       "one that left needs answer no more, and its request leaves the queue.",
}


@dataclass(frozen=True, slots=True)
class LamportRequest(Message):
    type: ClassVar[str] = "lamport_request"
    label: ClassVar[str] = "Request"
    serves: ClassVar[Serves] = Serves.SENDER
    ts: int


@dataclass(frozen=True, slots=True)
class LamportReply(Message):
    type: ClassVar[str] = "lamport_reply"
    label: ClassVar[str] = "Reply"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    serves: ClassVar[Serves] = Serves.RECEIVER
    ts: int


@dataclass(frozen=True, slots=True)
class LamportRelease(Message):
    type: ClassVar[str] = "lamport_release"
    label: ClassVar[str] = "Release"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    serves: ClassVar[Serves] = Serves.SENDER
    ts: int


class Lamport(StampedRequests):
    name = "lamport"
    title = "Lamport's mutual exclusion"
    messages = (LamportRequest, LamportReply, LamportRelease)
    request = LamportRequest
    rules = RULES

    def __init__(self, node):
        super().__init__(node)
        self.queue: list[tuple[int, int]] = []  # (ts, id), lowest first
        self._members = set(node.ids)  # as last heard (rule 8)

    @classmethod
    def figures(cls, n: int) -> Figures:
        return Figures(f"3(N-1) = {3 * (n - 1)}", "1 (Release)")

    def on_want(self) -> None:  # rule 2 (and rule 1: the clock, by tick and heard)
        self.rule(2)
        self.ask()
        self._enqueue(self.mine)
        self._maybe_enter()

    def on_message(self, src: int, msg: Message) -> None:
        self.heard(msg)  # rule 1
        kind = type(msg)
        if kind is LamportRequest:  # rule 3
            self.rule(3)
            self._enqueue((msg.ts, src))
            self.send(src, LamportReply, self.tick())
        elif kind is LamportReply:  # rule 4
            self.rule(4)
            self.awaiting.discard(src)
        elif kind is LamportRelease:  # rule 7
            self.rule(7)
            self.queue = [r for r in self.queue if r[1] != src]
        self._maybe_enter()

    def _enqueue(self, request: tuple[int, int]) -> None:
        self.queue = sorted({*self.queue, request})

    def _maybe_enter(self) -> None:  # rule 5
        if self.state is WANTED and not self.awaiting and self.queue and self.queue[0] == self.mine:
            self.rule(5)
            self.state = HELD

    def on_exit(self) -> None:  # rule 6
        self.rule(6)
        self.state = RELEASED
        self.queue = [r for r in self.queue if r != self.mine]
        self.mine = None
        self.broadcast(LamportRelease, self.tick())

    def on_members(self) -> None:  # rule 8
        self.rule(8)
        members = set(self.node.ids)
        if self.mine is not None:
            for newcomer in sorted(members - self._members):
                self.send(newcomer, LamportRequest, self.mine[0])
        self._members = members
        self.awaiting &= members
        self.queue = [r for r in self.queue if r[1] in members]
        self._maybe_enter()

    def variables(self) -> dict[str, object]:
        return {"clock": self.clock, "queue": [f"({ts}, {k})" for ts, k in self.queue],
                "awaiting replies from": sorted(self.awaiting)}
