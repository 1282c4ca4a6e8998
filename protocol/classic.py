"""The classic Bully algorithm (the gsharma design and Wikipedia's Bully article, lecture 3-10), as PROTOCOLS.md reads it.

Theory in one paragraph. Ids are totally ordered and the highest up id should lead. A
node that suspects the leader asks every higher node "are you there?" (Election). Any
higher node that is up bullies it out of the race (Answer) and runs its own election, so
the question climbs the id order until it reaches the highest up node, which hears no
Answer within T and announces itself (Coordinator). This is correct only while the
synchrony assumption holds (an up peer answers within T, so T >= 2 * max delay) and
nobody comes back mid-election: a recovering node announces itself without asking, and
its Coordinator can cross another's. PROTOCOLS.md "Known flaw"; the playground shows it.

Rules, each a handler below (P is this node):
  1. Start, or the failure detector fires: if P has the highest id, it sends Coordinator
     to all others and leads; otherwise it sends Election to every higher node and waits
     T for an Answer ("answer_wait").
  2. No Answer within T: P sends Coordinator to all others and leads.
  3. An Answer: P sends nothing more and waits T' for a Coordinator
     ("coordinator_wait"). No Coordinator within T': P starts over (rule 1).
  4. Election from a lower node: P sends Answer and, if it has not already started an
     election, starts one (rule 1).
  5. Coordinator from Q: Q is P's leader, whoever Q is (the textbook rule; this is what
     lets a late Coordinator from a lower node win).

Failure detection: a follower probes its leader every P seconds ("probe") and starts an
election when a probe goes unanswered for T ("probe_wait"). P = 0 turns probing off.

Messages: one initiator, the lowest node, noticing the leader's crash alone costs at
most n(n-1)/2 Elections + (n-1)(n-2)/2 Answers + n-1 Coordinators (PROTOCOLS.md;
scenarios/classic-worst-case.scenario). No bound holds for a round (worst_case_messages
stays None): followers that notice the crash at different moments send Elections that
land after the new leader announced itself, and each restarts its election (rule 4),
Coordinators again; measured, 72 messages in a round at N = 8 after one crash.

Statuses: election (Elections out, awaiting Answers), waiting (answered, awaiting the
Coordinator), normal (operating under a leader). Only normal counts as normal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole, Status, StatusRole
from .probing import Probe, ProbeReply, ProbingNode

RULES = {
    1: "Start, or the failure detector fires: the highest node sends Coordinator to all others and leads; "
       "any other sends Election to every higher node and waits T for an Answer.",
    2: "No Answer within T: the node sends Coordinator to all others and leads.",
    3: "An Answer: the node sends nothing more and waits T' for a Coordinator; none within T': it starts over.",
    4: "Election from a lower node: the node sends Answer and, unless it is already electing, starts an election.",
    5: "Coordinator from a node: that node is the leader, whoever it is (even one lower than this node).",
}


class ClassicStatus(Status):
    ELECTION = "election", StatusRole.ELECTING
    WAITING = "waiting", StatusRole.WAITING
    NORMAL = "normal", StatusRole.NORMAL


ELECTION, WAITING, NORMAL = ClassicStatus

ANSWER_WAIT = "answer_wait"
COORDINATOR_WAIT = "coordinator_wait"


@dataclass(frozen=True, slots=True)
class Election(Message):
    type: ClassVar[str] = "election"


@dataclass(frozen=True, slots=True)
class Answer(Message):
    type: ClassVar[str] = "answer"
    role: ClassVar[MessageRole] = MessageRole.REPLY


@dataclass(frozen=True, slots=True)
class Coordinator(Message):
    type: ClassVar[str] = "coordinator"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT


class ClassicBully(ProbingNode):
    name = "classic"
    title = "classic Bully"
    messages = (Election, Answer, Coordinator, Probe, ProbeReply)
    statuses = ClassicStatus
    rules = RULES

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        self._start_election()

    def on_suspect(self) -> None:
        # An election under way already answers the question the detector raises.
        if self.status is NORMAL:  # rule 1
            self.rule(1)
            self.leader = None
            self._start_election()

    def on_message(self, src: int, msg: Message) -> None:
        if self.handle_probe(src, msg):
            return
        match msg:
            case Election() if src < self.id:  # rule 4
                self.rule(4)
                self.send(src, Answer)
                if self.status is NORMAL:
                    self._start_election()
            case Answer() if self.status is ELECTION and src > self.id:  # rule 3
                self.rule(3)
                self.status = WAITING
                self.cancel_timer(ANSWER_WAIT)
                self.set_timer(COORDINATOR_WAIT, self.config.coordinator_wait)
            case Coordinator():  # rule 5
                self.rule(5)
                self.cancel_timer(ANSWER_WAIT, COORDINATOR_WAIT)
                self._follow(src)
            # Anything else is stale (a late Answer, a reply from a former leader): ignore.

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name):
            return
        if name == ANSWER_WAIT and self.status is ELECTION:  # rule 2
            self.rule(2)
            self._lead()
        elif name == COORDINATOR_WAIT and self.status is WAITING:  # rule 3, start over
            self.rule(3)
            self._start_election()

    def on_leader_lost(self) -> None:
        self._start_election()  # (under the probing rule that found it gone)

    # --- transitions ----------------------------------------------------------------

    def _start_election(self) -> None:  # rule 1
        self.announce_election()
        self.stop_probing()
        self.cancel_timer(COORDINATOR_WAIT)
        if not self.higher:
            self._lead()
            return
        self.status = ELECTION
        self.broadcast(self.higher, Election)
        self.set_timer(ANSWER_WAIT, self.config.timeout)

    def _lead(self) -> None:
        self.cancel_timer(ANSWER_WAIT)
        self.stop_probing()
        self.status = NORMAL
        self.leader = self.id
        self.broadcast(self.others, Coordinator)

    def _follow(self, leader: int) -> None:
        self.status = NORMAL
        self.leader = leader
        self.schedule_probe()
