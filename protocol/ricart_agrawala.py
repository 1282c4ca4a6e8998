"""Ricart & Agrawala's mutual exclusion, 1981 (lecture 3-7), as PROTOCOLS.md section 5 reads it.

Theory in one paragraph. A node that wants the critical section stamps a request with
its Lamport clock and sends it to every other node; it enters when all N-1 have
replied. A node replies at once unless it holds the CS, or wants it with an older
request of its own ((ts, id) order, a total order): then it defers the reply until it
leaves. 2(N-1) messages per entry, and no Release: the deferred replies are it, so the
synchronization delay is one message. Safe because two requesters cannot both be the
older; live and fair in timestamp order. No failures are tolerated: a node that
crashes never replies, and every later request waits for ever.

The lecture's pseudo code (3-7), followed literally, with the choices it leaves open:
  On initialization: state = RELEASED.
  Enter_CS(): state = WANTED; broadcast a timestamped request; wait until n-1 replies;
    state = HELD.
  On a request (ts_i, i) at P_k: if state == HELD or (state == WANTED and (ts_k, k) <
    (ts_i, i)), queue it without replying; else reply.
  Exit_CS(): state = RELEASED; reply to all queued requests.
Choices: the clock is Lamport's (rule 1: advanced on every send and receive; the
request's stamp is the clock when it is sent); "n-1 replies" are from the members
when P asked, less those that left since.

Rules (P is this node, C its clock):
  1. Every message P sends carries C after incrementing it; on every message P
     receives, C becomes max(C, its stamp) + 1.
  2. Want: P is wanted, stamps its request (C, P), and sends Request to every other member.
  3. Request (ts, Q): if P holds the CS, or wants it and (P's stamp, P) < (ts, Q), P
     defers its reply; otherwise it sends Reply at once.
  4. Reply from Q: one fewer to wait for; with none left, P holds the CS.
  5. Exit: P is released and sends Reply to every deferred requester.
  6. A member leaves: P needs no reply from it, and owes it none (which may let P enter,
     rule 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .mutex import HELD, RELEASED, WANTED, Figures, Serves, StampedRequests

RULES = {
    1: "Every message carries the sender's clock, advanced by one; a message received sets the clock "
       "past its stamp (max of the two, plus one).",
    2: "Want: the node is wanted, stamps its request, and sends Request to every other member.",
    3: "Request from a node: a node inside the critical section, or wanting it with an older request, "
       "defers its reply; any other sends Reply at once.",
    4: "Reply from a node: one fewer to wait for; with none left, the node holds the critical section.",
    5: "Exit: the node is released and sends Reply to every deferred requester.",
    6: "A member leaves: the node needs no reply from it, and owes it none.",
}


@dataclass(frozen=True, slots=True)
class RaRequest(Message):
    type: ClassVar[str] = "ra_request"
    label: ClassVar[str] = "Request"
    serves: ClassVar[Serves] = Serves.SENDER
    ts: int


@dataclass(frozen=True, slots=True)
class RaReply(Message):
    type: ClassVar[str] = "ra_reply"
    label: ClassVar[str] = "Reply"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    serves: ClassVar[Serves] = Serves.RECEIVER
    ts: int


class RicartAgrawala(StampedRequests):
    name = "ricart-agrawala"
    title = "Ricart & Agrawala"
    messages = (RaRequest, RaReply)
    request = RaRequest
    rules = RULES

    def __init__(self, node):
        super().__init__(node)
        self.deferred: list[int] = []  # requesters P answers when it leaves

    @classmethod
    def figures(cls, n: int) -> Figures:
        return Figures(f"2(N-1) = {2 * (n - 1)}", "1 (Reply)")

    def on_want(self) -> None:  # rule 2 (and rule 1: the clock, by tick and heard)
        self.rule(2)
        self.ask()
        self._maybe_enter()

    def on_message(self, src: int, msg: Message) -> None:
        self.heard(msg)  # rule 1
        if type(msg) is RaRequest:  # rule 3
            self.rule(3)
            older_mine = self.state is WANTED and self.mine < (msg.ts, src)  # type: ignore[operator]
            if self.state is HELD or older_mine:
                if src not in self.deferred:
                    self.deferred.append(src)
            else:
                self.send(src, RaReply, self.tick())
        elif type(msg) is RaReply:  # rule 4
            self.rule(4)
            self.awaiting.discard(src)
            self._maybe_enter()

    def _maybe_enter(self) -> None:
        if self.state is WANTED and not self.awaiting:
            self.state = HELD

    def on_exit(self) -> None:  # rule 5
        self.rule(5)
        self.state = RELEASED
        self.mine = None
        deferred, self.deferred = self.deferred, []
        for node in deferred:
            self.send(node, RaReply, self.tick())

    def on_members(self) -> None:  # rule 6
        self.rule(6)
        members = set(self.node.ids)
        self.awaiting &= members
        self.deferred = [k for k in self.deferred if k in members]
        self._maybe_enter()

    def variables(self) -> dict[str, object]:
        return {"clock": self.clock, "request": None if self.mine is None else f"{self.mine}",
                "awaiting replies from": sorted(self.awaiting), "deferred replies to": list(self.deferred)}
