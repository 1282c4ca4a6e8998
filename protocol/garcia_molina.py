"""Garcia-Molina's original Bully algorithm (Garcia-Molina 1982), as PROTOCOLS.md section 2 reads it.

Theory in one paragraph. The classic Bully lets a node declare itself coordinator
while others may still follow someone else; Garcia-Molina closes that gap with a
two-phase change of government. A candidate first *halts* every lower node (they stop
what they do and remember who halted them), and only then announces itself
(NewCoordinator) and hands out the new task (Ready). A node accepts NewCoordinator only
from the node that halted it, and Ready only from its coordinator, so no node ever goes
back to Normal under a coordinator that has not halted it first. Under synchrony (every
request answered within T by an up peer) any two Normal nodes therefore agree on the
coordinator: SLE1. Every message is a request with a reply; a reply that does not come
within T means the peer is down.

State (node i): status s (down, election, reorganization, normal), coordinator c
(`leader`), h the node that halted i (`halted_by`), d the task, Up the nodes i halted.
"down" is also the status of an up node that has recovered but not yet been taken in:
GM's recovery sets s := Down and then runs Election(i), which stops at once if a higher
node answers; the coordinator's Check then finds i not Normal and re-elects, taking i in.

Election(i), one phase per step, each waiting at most T ("reply_wait"):
  ask         AreYouThere to every higher node. Any Yes: stop.
  halt        s := election, h := i, Up := {}. Halt to every lower node; Ack -> into Up.
  reorganize  c := i, s := reorganization. NewCoordinator to Up; a missing Ack restarts.
  ready       Ready(d) to Up; a missing Ack restarts. Then s := normal.
A phase ends as soon as every reply is in, or at T.

Received: Halt -> s := election, h := sender, Ack. NewCoordinator from h while in
election -> c := h, s := reorganization, Ack. Ready from c while in reorganization ->
s := normal, Ack. Anything else is ignored (so the sender's wait runs out).

Periodic procedures, every P (P = 0 turns both off):
  Check    the coordinator asks everyone AreYouNormal; a "no" starts an Election.
  Timeout  a node in normal or reorganization asks its coordinator AreYouThere; no
           answer within T starts an Election.
The Election's AreYouThere and the Timeout's are the same question asked for different
reasons, so the message names its procedure and the Yes repeats it: a Yes to one is
never taken for the other, and observers can count failure detection apart.
A halted node that hears nothing for T' (NewCoordinator or Ready never comes, because
the candidate crashed) starts an Election too; GM's Timeout procedure covers that case.
And a node outside any group (recovered, or halted by a candidate that died) whose
Election a higher node stopped waits P + T' to be halted by the coordinator's Check;
if the coordinator died meanwhile, nobody would, so it runs its Election again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Ids, Message, MessageRole, Node, Status, StatusRole


class GarciaMolinaStatus(Status):
    # Down is also an up node that recovered and has not been taken in: it waits for a
    # coordinator's Check to find it (the crashed are the runtime's "down").
    DOWN = "down", StatusRole.WAITING
    ELECTION = "election", StatusRole.ELECTING
    REORGANIZATION = "reorganization", StatusRole.WAITING
    NORMAL = "normal", StatusRole.NORMAL


DOWN, ELECTION, REORGANIZATION, NORMAL = GarciaMolinaStatus

# Election phases (None when not running one).
ASK, HALT, REORGANIZE, READY = "ask", "halt", "reorganize", "ready"

REPLY_WAIT = "reply_wait"  # T for the current election phase
CHECK = "check"  # the coordinator's Check procedure
TIMEOUT = "timeout"  # a follower's Timeout procedure
TIMEOUT_WAIT = "timeout_wait"  # T for the coordinator's answer
HALTED_WAIT = "halted_wait"  # T' for NewCoordinator or Ready after a Halt
JOIN_WAIT = "join_wait"  # P + T' for a Halt, after a higher node stopped our Election


ELECTION_PROCEDURE = "election"  # an AreYouThere's `procedure`: Election(i)...
TIMEOUT_PROCEDURE = "timeout"  # ...or the Timeout procedure (failure detection)


@dataclass(frozen=True, slots=True)
class AreYouThere(Message):
    type: ClassVar[str] = "are_you_there"
    procedure: str

    @property
    def role(self) -> MessageRole:
        return MessageRole.REQUEST if self.procedure == ELECTION_PROCEDURE else MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class Yes(Message):
    """The reply to AreYouThere, naming the same procedure."""

    type: ClassVar[str] = "yes"
    procedure: str

    @property
    def role(self) -> MessageRole:
        return MessageRole.REPLY if self.procedure == ELECTION_PROCEDURE else MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class AreYouNormal(Message):
    type: ClassVar[str] = "are_you_normal"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class NormalReply(Message):
    """The reply to AreYouNormal: yes only if the sender's status is normal."""

    type: ClassVar[str] = "normal_reply"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    normal: bool


@dataclass(frozen=True, slots=True)
class Halt(Message):
    type: ClassVar[str] = "halt"


@dataclass(frozen=True, slots=True)
class HaltAck(Message):
    type: ClassVar[str] = "halt_ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY


@dataclass(frozen=True, slots=True)
class NewCoordinator(Message):
    """"I am elected"."""

    type: ClassVar[str] = "new_coordinator"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT


@dataclass(frozen=True, slots=True)
class NewCoordinatorAck(Message):
    type: ClassVar[str] = "new_coordinator_ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY


@dataclass(frozen=True, slots=True)
class Ready(Message):
    type: ClassVar[str] = "ready"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    task: str


@dataclass(frozen=True, slots=True)
class ReadyAck(Message):
    type: ClassVar[str] = "ready_ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY


class GarciaMolina(Node):
    name = "garcia-molina"
    title = "Garcia-Molina's Bully"
    messages = (
        AreYouThere, Yes, AreYouNormal, NormalReply, Halt, HaltAck,
        NewCoordinator, NewCoordinatorAck, Ready, ReadyAck,
    )
    statuses = GarciaMolinaStatus

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.halted_by: int | None = None
        self.task: str | None = None
        self.up: set[int] = set()  # GM's Up: the nodes this node halted
        self.phase: str | None = None
        self.awaiting: set[int] = set()  # replies the current phase still waits for
        self.lower = Ids(i for i in self.ids if i < self.id)

    def variables(self) -> dict[str, object]:
        return {
            "halted_by": self.halted_by,
            "task": self.task,
            "Up": sorted(self.up),
            "phase": self.phase,
            "awaiting": sorted(self.awaiting),
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # Recovery: s := Down, then Election
        self.storage.incarnation += 1
        self.status = DOWN
        self._election()

    def on_suspect(self) -> None:
        if self.phase is None:
            self._election()

    def on_message(self, src: int, msg: Message) -> None:
        match msg:
            case AreYouThere(procedure=procedure):
                self.send(src, Yes, procedure)
            case AreYouNormal():
                self.send(src, NormalReply, self.status is NORMAL)
            case Halt():
                self._halted(src)
            case NewCoordinator() if self.status is ELECTION and self.halted_by == src:
                self.cancel_timer(HALTED_WAIT)
                self.status, self.leader = REORGANIZATION, src
                self.set_timer(HALTED_WAIT, self.config.coordinator_wait)
                self.send(src, NewCoordinatorAck)
            case Ready(task=task) if self.status is REORGANIZATION and self.leader == src:
                self.cancel_timer(HALTED_WAIT)
                self.status, self.task = NORMAL, task
                self.send(src, ReadyAck)
                self._every_p(TIMEOUT)
            case Yes() if msg.procedure == ELECTION_PROCEDURE and self.phase == ASK and src > self.id:
                self._stop_election()  # a higher node is up: it is its turn
            case Yes() if msg.procedure == TIMEOUT_PROCEDURE and src == self.leader and TIMEOUT_WAIT in self.timers:
                self.cancel_timer(TIMEOUT_WAIT)
                self._every_p(TIMEOUT)
            case NormalReply(normal=False) if self.leader == self.id and self.phase is None:
                self._election()  # Check found a node outside the group
            case HaltAck() if self.phase == HALT:
                self.up.add(src)
                self._replied(src)
            case NewCoordinatorAck() if self.phase == REORGANIZE:
                self._replied(src)
            case ReadyAck() if self.phase == READY:
                self._replied(src)
            # Anything else is stale: a reply to a phase or a procedure that is over.

    def on_timer(self, name: str) -> None:
        if name == REPLY_WAIT:
            if self.phase in (ASK, HALT):
                self._next_phase()  # no higher node answered / whoever acked is in Up
            else:
                self._election()  # someone in Up did not ack: restart
        elif name == CHECK and self.leader == self.id and self.status is NORMAL:
            self.broadcast(self.others, AreYouNormal)
            self._every_p(CHECK)
        elif name == TIMEOUT and self.status in (NORMAL, REORGANIZATION) and self.leader != self.id:
            self.send(self.leader, AreYouThere, TIMEOUT_PROCEDURE)
            self.set_timer(TIMEOUT_WAIT, self.config.timeout)
        elif name in (TIMEOUT_WAIT, HALTED_WAIT, JOIN_WAIT):
            self._election()  # the coordinator (or the candidate that halted us) is gone

    # --- Election(i) ------------------------------------------------------------------

    def _election(self) -> None:
        self.announce_election()
        self.cancel_timer(CHECK, TIMEOUT, TIMEOUT_WAIT, REPLY_WAIT, HALTED_WAIT, JOIN_WAIT)
        self.phase = ASK
        self._ask(self.higher, AreYouThere, ELECTION_PROCEDURE)

    def _ask(self, nodes: tuple[int, ...] | set[int], kind: type[Message], *fields: object) -> None:
        """Send one phase's requests and wait for their replies (at most T)."""
        self.awaiting = set(nodes)
        if not self.awaiting:
            self._next_phase()
            return
        self.broadcast(tuple(sorted(nodes)), kind, *fields)
        self.set_timer(REPLY_WAIT, self.config.timeout)

    def _replied(self, src: int) -> None:
        self.awaiting.discard(src)
        if not self.awaiting:
            self.cancel_timer(REPLY_WAIT)
            self._next_phase()

    def _next_phase(self) -> None:
        self.awaiting = set()
        if self.phase == ASK:  # nobody higher is up: halt the lower nodes
            self.phase, self.status = HALT, ELECTION
            self.halted_by, self.leader, self.up = self.id, None, set()
            self._ask(self.lower, Halt)
        elif self.phase == HALT:
            self.phase, self.status, self.leader = REORGANIZE, REORGANIZATION, self.id
            self._ask(self.up, NewCoordinator)
        elif self.phase == REORGANIZE:
            self.phase, self.task = READY, f"task of epoch {self.epoch}"
            self._ask(self.up, Ready, self.task)
        elif self.phase == READY:
            self.phase, self.status = None, NORMAL
            self._every_p(CHECK)

    def _stop_election(self) -> None:
        self.cancel_timer(REPLY_WAIT)
        self.phase, self.awaiting = None, set()
        if self.status in (NORMAL, REORGANIZATION) and self.leader is not None:
            self._every_p(TIMEOUT)  # keep watching the coordinator we have
        elif self.config.probe_interval > 0:
            self.set_timer(JOIN_WAIT, self.config.probe_interval + self.config.coordinator_wait)

    def _halted(self, src: int) -> None:
        self.cancel_timer(REPLY_WAIT, CHECK, TIMEOUT, TIMEOUT_WAIT, JOIN_WAIT)
        self.phase, self.awaiting = None, set()
        self.status, self.halted_by, self.leader = ELECTION, src, None
        self.set_timer(HALTED_WAIT, self.config.coordinator_wait)
        self.send(src, HaltAck)

    def _every_p(self, name: str) -> None:
        if self.config.probe_interval > 0:
            self.set_timer(name, self.config.probe_interval)
