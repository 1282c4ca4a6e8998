"""Mutual exclusion, the second kind of protocol here: what an elected leader is for
(lecture 3-3 to 3-7), as PROTOCOLS.md section 5 reads it.

A mutex machine rides on a node's election machine. It is pure as the elections are:
its inputs are Want (the node's user asks for the critical section, the CS), Exit (the
user leaves it), a message of its own, and "the leader changed" or "the members
changed" (read from the election beside it); its outputs are the node's own Sends,
stamped with the node's epoch. It sets no timers. Its state is one of the lecture's
three (3-7): released (outside the CS), wanted (asked, waiting), held (inside). The
runtime reports each change of state, and the monitor checks that at most one node
holds the CS at any instant, whatever the algorithm.

`with_mutex(Election, Mutex)` is the election's class with a mutex machine beside it
(`node.cs`), and is what the runtime hosts: one machine per node, on the same links, so
that a split brain or a crashed leader shows what it costs. What survives a crash:
nothing of the mutex. A node that starts or recovers is released, with no requests
and no queue (the lecture's model has no failures; the playground keeps them, to show
what each one does).

What each mutex algorithm declares, so nothing outside its module spells its names:
its `name` and `title`, its messages (each with a `MessageRole`), whether it needs a
leader, what of its traffic never rests (`never_rests`: the token, which needs a link
delay above 0), a request's timestamp where requests are ordered by one (`stamp`: the
runtime reports it, and the order of entries is checked), and the lecture's figures
(`figures`): messages per entry, and the synchronization delay in messages, for N nodes.
Each of its messages declares whose request it serves (`serves`: the sender's, which
asks or lets go, or the receiver's, which is answered or granted), so that messages are
counted per request, as the lecture counts them (per entry and exit); a message that
serves no one request (the token going round) declares none.

Its rules, as each mutex's header numbers them, are declared as data too (`rules`, its
module's RULES) and keyed by its name: "central 3" (interface.py, "Rules, as data"). Its
handlers name the rule they apply (`self.rule(N)`), so that its Sends carry it, and so
does each change of its state (`state_rule`). `with_mutex` applies no rule of its own:
it hands each input to the election or to the mutex, whose rules say what follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from .interface import Joining, Leaving, Message, Node, Receive, Start, rule_key


class CsState(StrEnum):
    """Where a node is with respect to the critical section (lecture 3-7's names)."""

    RELEASED = "released"  # outside, not asking
    WANTED = "wanted"  # asked, waiting to enter
    HELD = "held"  # inside


RELEASED, WANTED, HELD = CsState


class Serves(StrEnum):
    """Whose critical-section request a mutex message serves."""

    SENDER = "sender"  # it asks (Request) or lets go (Release)
    RECEIVER = "receiver"  # it answers (Reply) or grants (Grant)


def serves(message: type[Message]) -> Serves | None:
    """Whose request a mutex message class serves (None: no one request, the token's)."""
    return getattr(message, "serves", None)


@dataclass(frozen=True, slots=True)
class Want:
    """The node's user asks to enter the critical section (ignored unless released)."""


@dataclass(frozen=True, slots=True)
class Exit:
    """The node's user leaves the critical section (ignored unless held)."""


@dataclass(frozen=True, slots=True)
class Figures:
    """The lecture's figures for one algorithm at N nodes (PROTOCOLS.md section 5)."""

    entry_messages: str  # messages per entry and exit, as the lecture counts them
    sync_delay: str  # from one node's exit to the next waiting node's entry, in messages


class Mutex:
    """One node's mutual-exclusion machine. Subclasses implement the handlers.

    Class attributes: `name` (command line, transcripts), `title` (for people),
    `messages` (its message classes), `needs_leader` (it asks the election who leads),
    `never_rests` (what of its traffic never stops, if any).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    messages: ClassVar[tuple[type[Message], ...]]
    needs_leader: ClassVar[bool] = False
    # What of its traffic never rests, if any (a token): with no link delay it would go
    # round for ever at one instant, so the runtime refuses a delay of 0 beside it.
    never_rests: ClassVar[str | None] = None

    rules: ClassVar[dict[int, str]] = {}  # its rules: number -> sentence (its module's RULES)

    def __init__(self, node: Node):
        self.node = node
        self._state = RELEASED
        self.state_rule: str | None = None  # the key of the rule that last changed `state`

    @classmethod
    def figures(cls, n: int) -> Figures:
        raise NotImplementedError

    @classmethod
    def rule_table(cls) -> dict[str, str]:
        """Its rules, key -> sentence ("central 3")."""
        return {rule_key(number, cls.name): sentence for number, sentence in cls.rules.items()}

    def rule(self, number: int) -> None:
        """Its rule `number` is being applied: the node's outputs from here carry it."""
        self.node.applying = rule_key(number, self.name)

    @property
    def state(self) -> CsState:
        return self._state

    @state.setter
    def state(self, state: CsState) -> None:
        if state is not self._state:
            self._state = state
            self.state_rule = self.node.applying

    # --- handlers -------------------------------------------------------------------

    def on_start(self) -> None:
        """The node has started or recovered."""

    def on_join(self) -> None:
        """The node has joined the cluster (a first start, as a newcomer)."""
        self.on_start()

    def on_leave(self) -> None:
        """The node leaves the cluster for good, gracefully: what it must hand on, now."""

    def on_want(self) -> None:
        raise NotImplementedError

    def on_exit(self) -> None:
        raise NotImplementedError

    def on_message(self, src: int, msg: Message) -> None:
        raise NotImplementedError

    def on_leader(self, leader: int | None) -> None:
        """The node's election changed who it follows (None: nobody, for now)."""

    def on_members(self) -> None:
        """The members changed (`self.node.ids`): a join or a graceful leave."""

    def variables(self) -> dict[str, object]:
        """Its volatile variables, for display (its state is in the trace)."""
        return {}

    def stamp(self) -> int | None:
        """The timestamp of the node's request while it wants or holds the CS, for an
        algorithm that orders requests by (timestamp, id); None for the others. The
        runtime reports it with the request, so that the order of entries can be checked."""
        return None

    # --- helpers ----------------------------------------------------------------------

    def send(self, dst: int, kind: type[Message], *fields: object) -> None:
        self.node.send(dst, kind, *fields)

    def broadcast(self, kind: type[Message], *fields: object) -> None:
        self.node.broadcast(self.node.others, kind, *fields)


def with_mutex(election: type[Node], mutex: type[Mutex]) -> type[Node]:
    """`election`'s class with a `mutex` machine beside it on every node: the mutex's
    messages go to it, Want and Exit too, and it hears when the leader or the members
    change; everything else is the election's, as before."""
    own = frozenset(mutex.messages)

    class WithMutex(election):  # type: ignore[valid-type, misc]
        def __init__(self, *args: object):
            super().__init__(*args)
            self.cs = mutex(self)

        def step(self, event: object) -> list:
            self.applying = None
            kind = type(event)
            if kind is Want:
                if self.cs.state is RELEASED:
                    self.cs.on_want()
            elif kind is Exit:
                if self.cs.state is HELD:
                    self.cs.on_exit()
            elif kind is Receive and type(event.msg) in own:  # type: ignore[attr-defined]
                self.adopt_epoch(event.msg)  # type: ignore[attr-defined]
                self.cs.on_message(event.src, event.msg)  # type: ignore[attr-defined]
            else:
                leader, ids = self.leader, self.ids
                if kind is Leaving:  # (before the election's last words: the node stops after them)
                    self.cs.on_leave()
                out = super().step(event)
                if kind is Start:
                    self.cs.on_start()
                elif kind is Joining:
                    self.cs.on_join()
                if self.ids != ids:
                    self.cs.on_members()
                if self.leader != leader and self.status is not None:
                    self.cs.on_leader(self.leader)
                out += self._outbox
                self._outbox = []
                return out
            out, self._outbox = self._outbox, []
            return out

        def variables(self) -> dict[str, object]:
            return {**super().variables(), **self.cs.variables()}

        @classmethod
        def worst_case_messages(cls, n: int) -> None:
            """None: an election round's count takes in the mutex's messages sent while it runs."""

    WithMutex.__name__ = WithMutex.__qualname__ = f"{election.__name__}With{mutex.__name__}"
    WithMutex.name = f"{election.name}+{mutex.name}"
    WithMutex.title = f"{election.title} + {mutex.title}"
    WithMutex.messages = election.messages + mutex.messages
    WithMutex.mutex = mutex
    return WithMutex


class StampedRequests(Mutex):
    """Base of the mutexes that order requests by Lamport timestamps, (ts, id): a total
    order (lecture 3-6, 3-7). What they share: the clock, advanced on every send and on
    every message heard (each of their messages carries a stamp, `ts`); P's own request
    while wanted or held (`mine`); and the members whose reply it still needs."""

    request: ClassVar[type[Message]]  # the message that asks

    def __init__(self, node: Node):
        super().__init__(node)
        self.clock = 0
        self.mine: tuple[int, int] | None = None  # P's request while wanted or held
        self.awaiting: set[int] = set()  # members whose Reply P still needs

    def tick(self) -> int:
        """The clock, advanced for a message P sends (its stamp)."""
        self.clock += 1
        return self.clock

    def heard(self, msg: Message) -> None:
        """The clock, past a message P received."""
        self.clock = max(self.clock, msg.ts) + 1  # type: ignore[attr-defined]

    def ask(self) -> None:
        """Want: P stamps its request and sends it to every other member, whose replies it now needs."""
        self.state = WANTED
        self.mine = (self.tick(), self.node.id)
        self.awaiting = set(self.node.others)
        self.broadcast(self.request, self.mine[0])

    def stamp(self) -> int | None:
        return None if self.mine is None else self.mine[0]
