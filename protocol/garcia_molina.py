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

Election(i) runs in phases, each waiting at most T for its replies ("reply_wait") and
ending as soon as every reply is in: ask (AreYouThere to every higher node), halt (Halt
to every lower node), reorganize (NewCoordinator to Up), ready (Ready(d) to Up). Every
message is a request with a reply; anything a node receives that no rule below takes is
ignored (so its sender's wait runs out). The periodic procedures run every P (P = 0
turns both off): the coordinator's Check and a follower's Timeout. The Election's
AreYouThere and the Timeout's are the same question asked for different reasons, so the
message names its procedure and the Yes repeats it: a Yes to one is never taken for the
other, and observers can count failure detection apart.

Rules (i is this node):
  1. Start (GM's recovery: start-up *is* one; s := down first), or the elect command
     while no Election runs: Election(i) begins: AreYouThere to every higher node.
  2. A Yes from a higher node to the Election's AreYouThere: it is that node's turn:
     i stops its Election, and keeps watching the coordinator it has (rule 12), if any;
     else it waits to be taken in (rule 14).
  3. No higher node answered within T: i halts the lower nodes: s := election, h := i,
     Up := {}, Halt to every lower node; each HaltAck puts its sender in Up.
  4. The halt phase over (every Ack in, or T): c := i, s := reorganization,
     NewCoordinator to Up.
  5. Every NewCoordinator acked: Ready(d) to Up; every Ready acked: s := normal, and
     the Check procedure begins (rule 11).
  6. A NewCoordinator or Ready unacked within T: i restarts its Election (rule 1).
  7. Halt from j: s := election, h := j, c := none; i drops its own Election, acks
     (HaltAck), and waits T' for NewCoordinator.
  8. NewCoordinator from h while in election: c := h, s := reorganization; i acks and
     waits T' for Ready.
  9. Ready(d) from c while in reorganization: s := normal, the task is d; i acks, and
     the Timeout procedure begins (rule 12).
  10. AreYouThere: i answers Yes, naming the same procedure. AreYouNormal: i answers,
      yes only if its status is normal.
  11. Check, every P at a normal coordinator: AreYouNormal to every other node; a "no"
      (a node outside the group) starts an Election, which takes it in.
  12. Timeout, every P at a node in normal or reorganization: AreYouThere to its
      coordinator; a Yes keeps the procedure going, no answer within T starts an
      Election.
  13. A halted node that hears nothing for T' (NewCoordinator or Ready never comes,
      because the candidate crashed) starts an Election; GM's Timeout procedure covers
      that case.
  14. A node outside any group (recovered, or halted by a candidate that died) whose
      Election a higher node stopped waits P + T' to be halted by the coordinator's
      Check; if the coordinator died meanwhile, nobody would, so it runs its Election
      again.
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

RULES = {
    1: "Start (a recovery: status down first), or elect while no Election runs: the node asks every higher "
       "node AreYouThere.",
    2: "A Yes from a higher node to the Election's question: it is that node's turn; this node stops its "
       "Election.",
    3: "No higher node answered within T: the node halts every lower node (Halt); each that acks joins its Up.",
    4: "The halt phase over: the node is the coordinator, in reorganization, and sends NewCoordinator to Up.",
    5: "Every NewCoordinator acked: Ready to Up; every Ready acked: the node is normal, and checks its group "
       "every P.",
    6: "A NewCoordinator or Ready unacked within T: the node restarts its Election.",
    7: "Halt: the node is in election, halted by the sender; it drops its own Election, acks, and waits T' "
       "for NewCoordinator.",
    8: "NewCoordinator from the node that halted it: the sender is its coordinator (reorganization); it acks "
       "and waits T' for Ready.",
    9: "Ready from its coordinator in reorganization: the node is normal, acks, and asks the coordinator "
       "every P whether it is there.",
    10: "AreYouThere: the node answers Yes, naming the procedure; AreYouNormal: it answers, yes only if normal.",
    11: "Check, every P at a normal coordinator: AreYouNormal to every other node; a no starts an Election.",
    12: "Timeout, every P at a follower: AreYouThere to its coordinator; no answer within T starts an Election.",
    13: "Halted, and no NewCoordinator or Ready within T': the candidate is gone; the node starts an Election.",
    14: "Outside any group, stopped by a higher node, and not halted within P + T': the node runs its "
        "Election again.",
}

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
    rules = RULES

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

    def on_start(self) -> None:  # rule 1: Recovery: s := Down, then Election
        self.rule(1)
        self.storage.incarnation += 1
        self.status = DOWN
        self._election()

    def on_suspect(self) -> None:
        if self.phase is None:  # rule 1
            self.rule(1)
            self._election()

    def on_message(self, src: int, msg: Message) -> None:
        match msg:
            case AreYouThere(procedure=procedure):  # rule 10
                self.rule(10)
                self.send(src, Yes, procedure)
            case AreYouNormal():  # rule 10
                self.rule(10)
                self.send(src, NormalReply, self.status is NORMAL)
            case Halt():  # rule 7
                self.rule(7)
                self._halted(src)
            case NewCoordinator() if self.status is ELECTION and self.halted_by == src:  # rule 8
                self.rule(8)
                self.cancel_timer(HALTED_WAIT)
                self.status, self.leader = REORGANIZATION, src
                self.set_timer(HALTED_WAIT, self.config.coordinator_wait)
                self.send(src, NewCoordinatorAck)
            case Ready(task=task) if self.status is REORGANIZATION and self.leader == src:  # rule 9
                self.rule(9)
                self.cancel_timer(HALTED_WAIT)
                self.status, self.task = NORMAL, task
                self.send(src, ReadyAck)
                self._every_p(TIMEOUT)
            case Yes() if msg.procedure == ELECTION_PROCEDURE and self.phase == ASK and src > self.id:  # rule 2
                self.rule(2)
                self._stop_election()  # a higher node is up: it is its turn
            case Yes() if msg.procedure == TIMEOUT_PROCEDURE and src == self.leader and TIMEOUT_WAIT in self.timers:
                self.rule(12)  # rule 12
                self.cancel_timer(TIMEOUT_WAIT)
                self._every_p(TIMEOUT)
            case NormalReply(normal=False) if self.leader == self.id and self.phase is None:  # rule 11
                self.rule(11)
                self._election()  # Check found a node outside the group
            case HaltAck() if self.phase == HALT:  # rule 3
                self.rule(3)
                self.up.add(src)
                self._replied(src)
            case NewCoordinatorAck() if self.phase == REORGANIZE:  # rule 5
                self.rule(5)
                self._replied(src)
            case ReadyAck() if self.phase == READY:  # rule 5
                self.rule(5)
                self._replied(src)
            # Anything else is stale: a reply to a phase or a procedure that is over.

    def on_timer(self, name: str) -> None:
        if name == REPLY_WAIT:
            if self.phase in (ASK, HALT):
                self._next_phase()  # no higher node answered / whoever acked is in Up
            else:  # rule 6
                self.rule(6)
                self._election()  # someone in Up did not ack: restart
        elif name == CHECK and self.leader == self.id and self.status is NORMAL:  # rule 11
            self.rule(11)
            self.broadcast(self.others, AreYouNormal)
            self._every_p(CHECK)
        elif name == TIMEOUT and self.status in (NORMAL, REORGANIZATION) and self.leader != self.id:  # rule 12
            self.rule(12)
            self.send(self.leader, AreYouThere, TIMEOUT_PROCEDURE)
            self.set_timer(TIMEOUT_WAIT, self.config.timeout)
        elif name == TIMEOUT_WAIT:  # rule 12: the coordinator is gone
            self.rule(12)
            self._election()
        elif name == HALTED_WAIT:  # rule 13: the candidate that halted us is gone
            self.rule(13)
            self._election()
        elif name == JOIN_WAIT:  # rule 14
            self.rule(14)
            self._election()

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
        """The phase is over: the next, under its rule (3, 4, 5)."""
        self.awaiting = set()
        if self.phase == ASK:  # rule 3: nobody higher is up: halt the lower nodes
            self.rule(3)
            self.phase, self.status = HALT, ELECTION
            self.halted_by, self.leader, self.up = self.id, None, set()
            self._ask(self.lower, Halt)
        elif self.phase == HALT:  # rule 4
            self.rule(4)
            self.phase, self.status, self.leader = REORGANIZE, REORGANIZATION, self.id
            self._ask(self.up, NewCoordinator)
        elif self.phase == REORGANIZE:  # rule 5
            self.rule(5)
            self.phase, self.task = READY, f"task of epoch {self.epoch}"
            self._ask(self.up, Ready, self.task)
        elif self.phase == READY:  # rule 5
            self.rule(5)
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
