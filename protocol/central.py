"""A central lock on the elected leader (lecture 3-4), as PROTOCOLS.md section 5 reads it.

Theory in one paragraph. Whichever election runs beside it, the node that leads is the
lock server: it keeps who holds the lock and a FIFO queue of who waits. A client asks
its leader (Request), enters when the leader grants (Grant) and tells it when it leaves
(Release): two messages to enter, one round trip of client delay, one to leave. It is
safe, live and fair while the leader lives. The lecture then asks what each failure
does; here they happen: a new leader knows no holder and grants again, so a leader
crash while a follower holds the lock puts two nodes in the critical section, and a
split brain gives two lock servers.

Rules (P is this node, L the leader P follows):
  1. Want: P is wanted. If P leads, it serves itself (rule 4's grant, with no message);
     otherwise, if it follows a leader, it sends Request to L (with none, it waits for
     one: rule 6).
  2. A Grant while wanted: P holds the lock (from any server: one that crashed since may
     have granted it on its way down). A Grant P no longer wants (it crashed and came
     back, or left the queue) goes back as a Release, so the lock is not held for nobody.
  3. Exit: P is released, and sends Release to the node that granted it the lock (or,
     leading, frees the lock itself). To the granter, not to L: L may be nobody for the
     moment (an election under way), and the granter, should it lead again, would
     otherwise hold the lock for P for ever.
  4. As the server (P leads): a Request while the lock is free grants it at once (Grant,
     or P enters if the request is its own); while it is held, the requester joins the
     back of the queue. A Request from the holder itself (it crashed and asks again) is
     granted again.
  5. As the server, a Release from the holder frees the lock and grants it to the head
     of the queue. A Release from a node that does not hold it changes nothing.
  6. The leader changes: a wanted P asks its new leader (rule 1), since the old one may
     be gone with P's request. A P that stops leading forgets the lock's state; one that
     starts leading knows no queue, and no holder but itself if it is inside (there is
     nothing to learn the rest from).
  7. Members leave: the server drops them from the queue, and frees the lock if one held it.

Message counts: 3 per entry for a client (2 to enter, 1 to leave), 0 for the leader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .mutex import HELD, RELEASED, WANTED, Figures, Mutex, Serves

RULES = {
    1: "Want: the node is wanted; a leader serves itself, a follower sends Request to its leader "
       "(with no leader, it waits for one).",
    2: "A Grant while wanted: the node holds the lock; a Grant it no longer wants goes back as a Release.",
    3: "Exit: the node is released, and sends Release to the node that granted it the lock "
       "(a leader frees the lock itself).",
    4: "As the server, a Request: the lock, if free, is granted at once (Grant); if held, the requester joins the queue.",
    5: "As the server, a Release from the holder: the lock is free, and granted to the head of the queue.",
    6: "The leader changes: a wanted node asks its new leader; a node that starts leading knows no queue, "
       "and no holder but itself.",
    7: "Members leave: the server drops them from the queue, and frees the lock if one of them held it.",
}


@dataclass(frozen=True, slots=True)
class Request(Message):
    type: ClassVar[str] = "cs_request"
    label: ClassVar[str] = "Request"
    serves: ClassVar[Serves] = Serves.SENDER


@dataclass(frozen=True, slots=True)
class Grant(Message):
    type: ClassVar[str] = "cs_grant"
    label: ClassVar[str] = "Grant"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    serves: ClassVar[Serves] = Serves.RECEIVER


@dataclass(frozen=True, slots=True)
class Release(Message):
    type: ClassVar[str] = "cs_release"
    label: ClassVar[str] = "Release"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    serves: ClassVar[Serves] = Serves.SENDER


class CentralLock(Mutex):
    name = "central"
    title = "central lock"
    messages = (Request, Grant, Release)
    needs_leader = True
    rules = RULES

    def __init__(self, node):
        super().__init__(node)
        self.holder: int | None = None  # as the server: who holds the lock
        self.queue: list[int] = []  # as the server: who waits, first come first
        self.granter: int | None = None  # as a client: who granted P the lock it holds

    @classmethod
    def figures(cls, n: int) -> Figures:
        return Figures("3 (Request, Grant, Release; 0 at the leader)", "2 (Release, Grant)")

    @property
    def leading(self) -> bool:
        return self.node.leader == self.node.id

    def on_want(self) -> None:  # rule 1
        self.rule(1)
        self.state = WANTED
        self._ask()

    def _ask(self) -> None:
        if self.leading:
            self._request(self.node.id)
        elif self.node.leader is not None:
            self.send(self.node.leader, Request)

    def on_exit(self) -> None:  # rule 3
        self.rule(3)
        self.state = RELEASED
        granter, self.granter = self.granter, None
        if self.leading:
            self._release(self.node.id)
        elif granter is not None:
            self.send(granter, Release)

    def on_message(self, src: int, msg: Message) -> None:
        kind = type(msg)
        if kind is Grant:  # rule 2
            self.rule(2)
            if self.state is WANTED:
                self.state, self.granter = HELD, src
            elif self.state is RELEASED:
                self.send(src, Release)
        elif kind is Request:
            if self.leading:  # rule 4
                self.rule(4)
                self._request(src)
        elif kind is Release:
            if self.leading:  # rule 5
                self.rule(5)
                self._release(src)

    def _request(self, node: int) -> None:  # rule 4
        if self.holder is None or node == self.holder:
            self._grant(node)
        elif node not in self.queue:
            self.queue.append(node)

    def _release(self, node: int) -> None:  # rule 5
        if node != self.holder:
            return
        self.holder = None
        if self.queue:
            self._grant(self.queue.pop(0))

    def _grant(self, node: int) -> None:
        self.holder = node
        if node == self.node.id:
            if self.state is WANTED:
                self.state = HELD
        else:
            self.send(node, Grant)

    def on_leader(self, leader: int | None) -> None:  # rule 6
        self.rule(6)
        self.holder = self.node.id if self.leading and self.state is HELD else None
        self.queue = []
        if self.state is WANTED:
            self._ask()

    def on_members(self) -> None:  # rule 7
        self.rule(7)
        members = set(self.node.ids)
        self.queue = [k for k in self.queue if k in members]
        if self.holder is not None and self.holder not in members:
            self._release(self.holder)

    def variables(self) -> dict[str, object]:
        if not self.leading:
            return {}
        return {"lock holder": self.holder, "lock queue": list(self.queue)}
