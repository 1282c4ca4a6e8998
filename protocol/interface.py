"""The interface every election algorithm implements: a pure, sans-I/O state machine.

A node is driven the way etcd's raft `Step` or h11's connection is driven: the caller
feeds it one input at a time and gets back a list of outputs to carry out. The node
never sleeps, sends or reads a clock. Time exists only as named timers that the caller
runs ("call TimerFired('answer_wait') in 4 seconds"), and the network only as Send
outputs. That keeps every rule testable by calling `step` and reading the result.

Inputs:   Start (start-up or recovery; Garcia-Molina 1982: start-up *is* a recovery),
          Receive (a message arrived), TimerFired, Suspect (the failure detector fired),
          Joining (start as a new member), Leaving (leave the cluster for good).
Outputs:  Send, SetTimer (replaces a running timer of the same name), CancelTimer,
          and ElectionStarted, a pure announcement so observers can count elections
          without knowing any algorithm's internals.

Crash is not an input: a crashed node simply stops being called, and the caller throws
the object away. What survives is the `storage` object the caller hands to the next
incarnation, so the line between safe storage and volatile state is a line in the code.

Epochs (the gsharma design). Every node keeps a cluster epoch in safe storage. Starting an
election bumps it, every message carries the sender's epoch, and a node that hears a
higher epoch adopts it, so from one election to the next the cluster shares one number.
The base class does all of this: algorithms send through `send`/`broadcast`, which
stamp the epoch, and announce elections through `announce_election`, which bumps it.
In most algorithms the epoch is a label for people reading a run; epoch-bully decides
by it (epoch_bully.py), and the ring uses it to name its elections, so it can tell a
copy from a new one.

Members (the gsharma design, notes 5 and 7). Each node is handed the members whenever it starts
(assumption 6: every process knows every other; the runtime keeps that list, so a node
that was down when a change went round starts with it anyway), keeps them in safe
storage, and the base class keeps them up to date from there. A node that joins
broadcasts Join to every member, then starts as a recovering node; one that leaves
broadcasts Leave and stops. An algorithm reacts in `on_member_joined` and
`on_member_left` (by default: a leader that leaves is gone, as if the detector had
fired). One whose model cannot take a change of members says why in `fixed_members`,
and the runtime refuses join and leave with that.

Rules, as data (why each thing happened). Each algorithm numbers its rules in its header
and tags the code that applies one with `# rule N`; it declares them once more as data,
RULES in its module (number -> the rule in one sentence), so that a screen can say why a
node did what it did. The code names the rule it applies where its tags are, by
calling `self.rule(N)`; every output from then on carries that rule's key (`rule` on
Send, SetTimer, CancelTimer and ElectionStarted) until the next call, and so does a
change of status or leader (`state_rule`, as the runtime reports it). A step begins
with no rule. A key is a short string:
  "4"           an election's own rule 4 (one election per node: its rules need no name);
  "probing 2"   rule 2 of code several elections share, keyed by its module's word:
                "members" (this module's rules below, every algorithm's), "probing"
                (probing.py's), and the ring's shared code names its own;
  "central 3"   a mutex's rule, keyed by the mutex's name (central, token-ring, lamport,
                ricart-agrawala): it runs beside an election whose rules are numbered too.
`rule_key` makes one, `Node.rule_table()` gives a machine's whole table (key -> sentence,
its own rules first), and the runtime hands that table to the screens, which never read
protocol/ themselves.

The members rules (this module's, applied by the base class for every algorithm that
takes joins and leaves; P is this node):
  1. Joining: P sends Join to every member it was told of, then starts as a recovering
     node does.
  2. Leaving: P sends Leave to every member it knows; the caller then stops it for good.
  3. Join from Q: Q is a member from now on (the algorithm's `on_member_joined` says what
     else follows).
  4. Leave from Q: Q is a member no more; if Q led, the leader is gone, as if the
     failure detector had fired (unless the algorithm's `on_member_left` says otherwise).
The epoch rules above make no output of their own: a message carries its sender's
epoch, and an election's bump is its algorithm's rule's.

What an algorithm declares for everyone else. Nothing outside an algorithm's module
spells out its names: the runtime, the monitor and the UI read these declarations.
  - its statuses, as a `Status` enum whose members carry their `StatusRole` (electing,
    waiting, normal): the monitor judges by "normal", the UI picks a glyph and a colour
    by role, a transcript writes the status's name;
  - a `MessageRole` for each message (request, reply, announcement, failure detection):
    the comparison counts detector traffic apart, the UI colours and hides by role;
  - display names (`title`, each message's `label`);
  - `settle_time`: how long after the last crash or recovery it needs to agree again;
  - its rules (`rules`, its module's RULES), as above.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from operator import attrgetter
from typing import ClassVar

from .step_io import (  # (inputs, outputs, Config, SafeStorage: step_io.py)
    CancelTimer,
    Config,
    ElectionStarted,
    Input,
    Joining,
    Leaving,
    Output,
    Receive,
    SafeStorage,
    Send,
    SetTimer,
    Start,
    Suspect,
    TimerFired,
)

MEMBERS = "members"  # the key word of this module's rules

RULES = {
    1: "Joining: the node sends Join to every member it was told of, then starts as a recovering node does.",
    2: "Leaving: the node sends Leave to every member it knows, then stops for good.",
    3: "Join from a node: it is a member from now on.",
    4: "Leave from a node: it is a member no more; if it led, the leader is gone, as if the failure detector had fired.",
}


@cache
def rule_key(number: int, space: str | None = None) -> str:
    """Rule `number`'s key: "4" for an election's own, "probing 2" for a shared module's
    or a mutex's (`space`: its word)."""
    return str(number) if space is None else f"{space} {number}"


class StatusRole(StrEnum):
    """What a status means to someone watching, whatever the algorithm calls it."""

    DOWN = "down"  # crashed: the runtime's, no algorithm status has it
    ELECTING = "electing"  # running an election
    WAITING = "waiting"  # waiting for another node's election to finish
    NORMAL = "normal"  # operating under an agreed leader (what SLE1 and SLE2 speak of)


class Status(StrEnum):
    """Base of each algorithm's statuses (and the runtime's down and left): a member is
    its name, as transcripts write it, and carries the role it plays. Two algorithms may
    use one name (Garcia-Molina's "down" is a waiting status), so compare members, or
    roles, not names.

        class ClassicStatus(Status):
            ELECTION = "election", StatusRole.ELECTING
    """

    role: StatusRole

    def __new__(cls, name: str, role: StatusRole) -> Status:
        member = str.__new__(cls, name)
        member._value_ = name
        member.role = role
        return member


class MessageRole(StrEnum):
    """What a message is for."""

    REQUEST = "request"  # asks, and waits for a reply or a timeout (Election, Halt)
    REPLY = "reply"  # answers a request (Answer, Ack)
    ANNOUNCEMENT = "announcement"  # says who leads (Coordinator, Ldr, Elected)
    DETECTOR = "detector"  # failure detection: probes, heartbeats and their replies
    MEMBERSHIP = "membership"  # a node joins or leaves (Join, Leave)

# --- messages ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every protocol message. `type` is the wire name used in transcripts,
    `label` the name people read (the class name unless set), `role` what it is for
    (a subclass may make it depend on the message's fields).

    `epoch` is keyword-only so that subclasses can add positional fields of their own."""

    type: ClassVar[str] = "message"
    label: ClassVar[str] = "Message"
    role: ClassVar[MessageRole] = MessageRole.REQUEST
    epoch: int = field(default=0, kw_only=True)

    def __init_subclass__(cls) -> None:
        # (no super(): slots=True rebuilds the class, and object has nothing to chain)
        if "label" not in cls.__dict__:
            cls.label = cls.__name__

    def __deepcopy__(self, memo: dict) -> Message:
        return self  # immutable: a copy of a run shares its messages


@dataclass(frozen=True, slots=True)
class Join(Message):
    """The sender is a new member (sent to every member it was told of)."""

    type: ClassVar[str] = "join"
    role: ClassVar[MessageRole] = MessageRole.MEMBERSHIP


@dataclass(frozen=True, slots=True)
class Leave(Message):
    """The sender leaves the cluster for good (sent to every member it knows)."""

    type: ClassVar[str] = "leave"
    role: ClassVar[MessageRole] = MessageRole.MEMBERSHIP


MEMBERSHIP_MESSAGES: tuple[type[Message], ...] = (Join, Leave)


class Ids(tuple):
    """Node ids, lowest first. Immutable, so a copy of a run (the runtime copies whole
    runs to look back in time) shares them, as it shares messages: at N = 400 each node
    holds several lists of 400 ids, and copying them item by item was most of a copy."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> Ids:
        return self


# --- the node ---------------------------------------------------------------------


class Node:
    """One participant's state machine. Subclasses implement the four `on_*` handlers.

    Class attributes every algorithm sets:
      name             the name used on the command line and in transcripts
      title            its name for people
      messages         its message classes (the transcript codec is built from them)
      statuses         its Status enum: every status an up node can be in, in display order
      storage_class    its SafeStorage subclass
      fixed_members    why it cannot take joins and leaves, or None if it can
      highest_wins     whether the highest up node is the one to lead (default True)
      leaders_per_epoch  whether a split brain is two leaders of one epoch only (default False)
      needs_majority   whether it elects only while a majority of the members is up (default False)
      groups           whether its promise is per group, the epoch naming the group (default False)
      on_a_ring        whether its nodes talk round a ring laid out in Config.ring's order (default False)
      mutex            (set by mutex.with_mutex) the mutual exclusion beside it, or None
      rules            its rules (number -> sentence: its module's RULES), and `rule_space`
                       the word that keys them (None: an election's own rules)

    What it holds of its rules: `applying`, the key of the rule being applied (None
    until the step names one), and `state_rule`, the key of the rule that last changed
    its status or leader (both properties, which note it).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    messages: ClassVar[tuple[type[Message], ...]]
    statuses: ClassVar[type[Status]]
    storage_class: ClassVar[type[SafeStorage]] = SafeStorage
    fixed_members: ClassVar[str | None] = None
    # What it guarantees, for the monitor to judge (monitor rules 3, 5 and 6): whether
    # the highest up node is the one to lead (Raft's leader is whoever wins a term
    # first), whether two leaders are a split brain only within one epoch (Raft: at most
    # one leader per term; an old one may not have heard of the next term yet), and
    # whether a leader is promised only while a majority of the members is up.
    highest_wins: ClassVar[bool] = True
    leaders_per_epoch: ClassVar[bool] = False
    needs_majority: ClassVar[bool] = False  # a leader only while a majority of the members is up
    # The Invitation algorithm's nodes form groups, each named by a number no other group
    # has, and it is their epoch: SLE1 and split brain are judged within a group, and after
    # faults each side of a cut is expected to end as one group (monitor rule 10).
    groups: ClassVar[bool] = False
    on_a_ring: ClassVar[bool] = False  # its nodes form a ring in Config.ring's order (ring_order.py)
    mutex: ClassVar[type | None] = None  # the mutual exclusion beside it, if any (mutex.with_mutex)
    rules: ClassVar[dict[int, str]] = RULES
    rule_space: ClassVar[str | None] = MEMBERS

    def __init__(self, node_id: int, ids: tuple[int, ...], config: Config, storage: SafeStorage):
        if node_id not in ids:
            raise ValueError(f"node {node_id} is not one of the cluster's ids")
        self.id = node_id
        self.config = config
        self.storage = storage
        # Not yet started: the caller's first input is always Start, which sets a status.
        self._status: Status = None  # type: ignore[assignment]
        self._leader: int | None = None
        self.applying: str | None = None  # the key of the rule being applied
        self.state_rule: str | None = None  # ... and of the one that last changed status or leader
        self.joined = False  # it came in by joining, not with the cluster's start
        self._set_members(ids)
        # Names of the timers this node has asked for and not yet seen fire or cancelled,
        # so that cancels are emitted only for running timers and a stray firing is ignored.
        self.timers: set[str] = set()
        self._outbox: list[Output] = []

    # The one entry point. Dispatch is explicit so the transition rules read as a table
    # (an if-chain on the exact type, not `match`: it runs for every message of a run).
    def step(self, event: Input) -> list[Output]:
        self.applying = None
        kind = type(event)
        if kind is Receive:  # by far the most common: first
            msg, src = event.msg, event.src
            self.adopt_epoch(msg)
            if type(msg) is Join:  # rule 3
                self.rule(3, MEMBERS)
                self._set_members((*self.ids, src))
                self.on_member_joined(src)
            elif type(msg) is Leave:  # rule 4
                self.rule(4, MEMBERS)
                self._set_members(tuple(i for i in self.ids if i != src))
                self.on_member_left(src)
            else:
                self.on_message(src, msg)
        elif kind is TimerFired:
            if event.name in self.timers:
                self.timers.discard(event.name)
                self.on_timer(event.name)
        elif kind is Start:
            self.on_start()
        elif kind is Suspect:
            self.on_suspect()
        elif kind is Joining:  # rule 1
            self.rule(1, MEMBERS)
            self.joined = True
            self.broadcast(self.others, Join)
            self.on_start()
        elif kind is Leaving:  # rule 2
            self.rule(2, MEMBERS)
            self.broadcast(self.others, Leave)
        else:
            raise TypeError(f"not a protocol input: {event!r}")
        out, self._outbox = self._outbox, []
        return out

    @classmethod
    def wire_messages(cls) -> tuple[type[Message], ...]:
        """Every message it may send: its own, and Join and Leave if it takes them."""
        return cls.messages if cls.fixed_members else cls.messages + MEMBERSHIP_MESSAGES

    @classmethod
    def rule_table(cls) -> dict[str, str]:
        """Every rule this machine applies, key -> sentence: its own first, then those of
        the code it shares (an election's own rules are its most derived class's), and
        a mutex's beside it."""
        table: dict[str, str] = {}
        own = False
        for klass in cls.__mro__:
            rules = klass.__dict__.get("rules")
            if rules is None:
                continue
            space = klass.__dict__.get("rule_space")
            if space is None:
                if own:  # (an election built on another: the other's rules are not its own)
                    continue
                own = True
            elif space == MEMBERS and cls.fixed_members:
                continue
            table.update({rule_key(number, space): sentence for number, sentence in rules.items()})
        if cls.mutex is not None:
            table.update(cls.mutex.rule_table())
        return table

    @classmethod
    def worst_case_messages(cls, n: int) -> int | None:
        """The most messages one election round can take for n nodes, as the status bar
        counts a round (from the election that begins it to agreement again, failure
        detection apart: acks included), when faults come one at a time: a crash, a
        recovery or an `elect` while all agree, and nothing else until all agree again,
        with T >= 2 x max delay and no link held. None where nothing bounds such a round
        (several nodes noticing one crash at different moments, split votes). Whoever
        declares one shows why it holds; tests/test_worst_cases.py checks it on random
        schedules of that kind."""
        return None

    @classmethod
    def epoch_text(cls, epoch: int) -> str:
        """An epoch as people read it (the Invitation algorithm's are group numbers)."""
        return f"e{epoch}"

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """How long after the last crash or recovery n nodes need, at most, to be normal
        under the highest up node again (SLE2's c), when every up peer answers within T.

        This default is generous on purpose, so that missing it means liveness really
        failed: two probe periods to notice, then ten rounds (a round trip within T is
        what synchrony promises) for the election and its restarts, plus one round per
        node for an algorithm that works through the nodes one at a time. An algorithm
        whose own recovery takes longer says so by overriding it."""
        round_trip = max(config.timeout, 2 * max_delay)
        return 2 * config.probe_interval + (10 + n) * round_trip

    def _set_members(self, ids: tuple[int, ...]) -> None:
        # (a set: a node that recovers is handed the members, a newcomer among them, and
        # then that newcomer's Join, sent while it was down, may still arrive)
        self.ids = self.storage.members = Ids(sorted(set(ids)))
        self.higher = Ids(i for i in self.ids if i > self.id)
        self.others = Ids(i for i in self.ids if i != self.id)

    def adopt_epoch(self, msg: Message) -> None:
        """A higher epoch heard is this node's from now on (every message carries one)."""
        if msg.epoch > self.storage.epoch:
            self.storage.epoch = msg.epoch

    def reconfigure(self, config: Config) -> None:
        """New knobs apply to timers set from now on; running timers keep their time."""
        self.config = config

    # Status and leader note the rule that changes them (`state_rule`): the runtime reports
    # a change with the rule that made it. (Read through a C getter: they are read often.)
    def _set_status(self, status: Status) -> None:
        if status is not self._status:
            self._status = status
            self.state_rule = self.applying

    def _set_leader(self, leader: int | None) -> None:
        if leader != self._leader:
            self._leader = leader
            self.state_rule = self.applying

    status = property(attrgetter("_status"), _set_status)
    leader = property(attrgetter("_leader"), _set_leader)

    def rule(self, number: int, space: str | None = None) -> None:
        """Rule `number` (of `space`'s rules; None: the algorithm's own) is being applied:
        what the node outputs or becomes from here carries it."""
        self.applying = rule_key(number, space)

    @property
    def role(self) -> StatusRole:
        return self.status.role

    @property
    def normal(self) -> bool:
        return self.status.role is StatusRole.NORMAL

    def variables(self) -> dict[str, object]:
        """The algorithm's own volatile variables, for display. Status, leader and
        timers are not among them: every observer already has those from the trace."""
        return {}

    # --- handlers -------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.storage.epoch

    def on_start(self) -> None:
        raise NotImplementedError

    def on_message(self, src: int, msg: Message) -> None:
        raise NotImplementedError

    def on_timer(self, name: str) -> None:
        raise NotImplementedError

    def on_suspect(self) -> None:
        raise NotImplementedError

    def on_member_joined(self, node: int) -> None:
        """`node` is a new member (its own start will make itself known)."""

    def on_member_left(self, node: int) -> None:
        """`node` has left for good: if it led, the leader is gone."""
        if node == self.leader:
            self.on_suspect()

    # --- output helpers for subclasses ----------------------------------------------

    def send(self, dst: int, kind: type[Message], *fields: object) -> None:
        """Send a `kind` message with these fields, stamped with this node's epoch."""
        self._outbox.append(Send(dst, kind(*fields, epoch=self.storage.epoch), self.applying))

    def send_as_is(self, dst: int, msg: Message) -> None:
        """Send `msg` with the epoch it has (a message that belongs to an election round,
        passed on in that round's name; hs.py)."""
        self._outbox.append(Send(dst, msg, self.applying))

    def broadcast(self, dsts: tuple[int, ...], kind: type[Message], *fields: object) -> None:
        """The same message to each of `dsts` (one object: messages are immutable)."""
        msg, rule = kind(*fields, epoch=self.storage.epoch), self.applying
        self._outbox.extend(Send(dst, msg, rule) for dst in dsts)

    def set_timer(self, name: str, delay: float, longest: float | None = None) -> None:
        """`longest`: the runtime draws the delay from [delay, longest] (see SetTimer)."""
        self.timers.add(name)
        self._outbox.append(SetTimer(name, delay, longest, self.applying))

    def cancel_timer(self, *names: str) -> None:
        for name in names:
            if name in self.timers:
                self.timers.discard(name)
                self._outbox.append(CancelTimer(name, self.applying))

    def announce_election(self) -> None:
        """This node begins an election: a new epoch, and an announcement to observers."""
        self.storage.epoch += 1
        self._outbox.append(ElectionStarted(self.applying))
