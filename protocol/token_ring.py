"""A token on a logical ring (lecture 3-5), as PROTOCOLS.md section 5 reads it.

Theory in one paragraph. The members form a ring in id order (the highest passes to
the lowest). One token goes round; only the node that has it may enter the critical
section, and it passes the token on when it leaves, or at once when it does not want
to enter. Safe, because there is one token; live, because every node does finite work
and passes it on. A node waits 0 to N hops for the token (client delay), and the next
waiting node may be 1 to N hops away (synchronization delay). The token goes round even
when nobody wants the CS, and costs bandwidth all the time. Failures are the lecture's
open questions (3-5): a crash of the node that has it, or of the next node while the
token is on its way there, loses the token, and nobody enters again (a liveness break
the monitor reports); nothing here regenerates it.

Rules (P is this node):
  1. The token is born once, at the lowest node's first start (not a recovery, not a
     newcomer's join, whose id may be the lowest), and passed on (rule 4).
  2. Want: P is wanted; if it has the token, it enters at once.
  3. Token arrives: if P is wanted, it holds the CS (keeping the token); otherwise it
     passes the token on.
  4. Passing on: to the next member above P in id order, or the lowest after the highest.
     A ring of one keeps the token.
  5. Exit: P is released and passes the token on.
  6. Leave (for good, gracefully): P passes the token on if it has it. (A token on its
     way to a node that leaves meanwhile is lost, as with a crash.)

Message counts: 1 per hop of the token, whether anyone wants the CS or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole
from .mutex import HELD, RELEASED, WANTED, Figures, Mutex

RULES = {
    1: "The token is born once, at the lowest node's first start, and passed on.",
    2: "Want: the node is wanted; if it has the token, it enters at once.",
    3: "The token arrives: a wanted node holds the critical section, keeping the token; any other passes it on.",
    4: "Passing on: to the next member above the node in id order, or the lowest after the highest.",
    5: "Exit: the node is released and passes the token on.",
    6: "Leave: the node passes the token on if it has it.",
}


@dataclass(frozen=True, slots=True)
class Token(Message):
    type: ClassVar[str] = "token"
    role: ClassVar[MessageRole] = MessageRole.REPLY  # it grants the CS


class TokenRing(Mutex):
    name = "token-ring"
    title = "token ring"
    messages = (Token,)
    never_rests = "token"
    rules = RULES

    def __init__(self, node):
        super().__init__(node)
        self.token = False  # P has the token

    @classmethod
    def figures(cls, n: int) -> Figures:
        return Figures(f"1 to {n} hops of the token (it goes round even when unused)", f"1 to {n}")

    def on_start(self) -> None:  # rule 1
        node = self.node
        if node.storage.incarnation == 1 and node.id == min(node.ids):
            self.rule(1)
            self.token = True
            self._pass()

    def on_join(self) -> None:  # rule 1: a newcomer makes no token
        pass

    def on_leave(self) -> None:  # rule 6
        if self.token:
            self.rule(6)
            self.state = RELEASED
            self._pass(without_me=True)

    def on_want(self) -> None:  # rule 2
        self.rule(2)
        self.state = WANTED
        if self.token:
            self.state = HELD

    def on_message(self, src: int, msg: Message) -> None:  # rule 3
        if type(msg) is Token:
            self.rule(3)
            self.token = True
            if self.state is WANTED:
                self.state = HELD
            else:
                self._pass()

    def on_exit(self) -> None:  # rule 5
        self.rule(5)
        self.state = RELEASED
        self._pass()

    def _pass(self, without_me: bool = False) -> None:  # rule 4
        ids = self.node.ids
        after = [k for k in ids if k > self.node.id]
        nxt = after[0] if after else ids[0]
        if nxt != self.node.id:
            self.token = False
            self.send(nxt, Token)
        elif without_me:  # the last member leaves: the token goes with it
            self.token = False

    def variables(self) -> dict[str, object]:
        return {"has the token": self.token}
