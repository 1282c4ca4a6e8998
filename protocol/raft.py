"""Raft's leader election (Ongaro & Ousterhout 2014, section 5.2), without the log.

Theory in one paragraph. Time is cut into terms, numbered; each term begins with an
election and has at most one leader. A follower that hears nothing from a leader for
an election timeout becomes a candidate: it starts a new term, votes for itself and
asks every other node for its vote (RequestVote). Each node gives one vote per term,
to the first candidate that asks, and keeps it in safe storage, so a crash cannot
make it vote twice. A candidate with the votes of a majority leads, and says so with
heartbeats (empty AppendEntries), which also keep the followers from starting
elections of their own. Two candidates can split the vote, and then nobody wins the
term; the election timeouts are drawn at random, from [T, T'] here, so that next time
one of them is, most likely, alone. Any message from a later term makes a node adopt
that term and step down to follower. The highest id has no priority: whoever wins a
term's majority first leads.

What it guarantees, declared for the monitor (interface.Node): at most one leader per
term (`leaders_per_epoch`: the term is the epoch every message carries), and, once
faults stop with a majority of the members up (`needs_majority`: a minority cannot
elect anyone), a leader that every up node follows within c, with high probability (a
split vote can repeat; with no spread, T' = T, and equal delays it can repeat for
ever: bench/raft_split_votes.py measures it). Not that the highest up node leads
(`highest_wins` is False), nor SLE1 at every instant: a follower of a leader that has
crashed follows it until its own timeout, while another node may already lead.

No worst case in messages (worst_case_messages stays None): an election without a split
vote takes a RequestVote and a Vote per other node, 2(n-1), but each split vote costs
another term's requests and votes, and nothing bounds how many terms split in a row;
the randomized timeouts make a long run of them unlikely, not impossible.

Rules (P is this node, its term the epoch in safe storage):
  1. Start (start-up or recovery): P is a follower that knows no leader, in the term
     it stored, and sets its election timeout, drawn from [T, T'] (the runtime draws
     it: host rule 8).
  2. The election timeout fires: P becomes a candidate. It starts a new term (the
     epoch, bumped), votes for itself (stored), asks every other member for its vote
     and sets a new election timeout (a split vote ends in another election). Alone
     in the cluster, it leads at once.
  3. RequestVote from C in P's term: P grants it if it has not voted in this term, or
     voted for C (a request sent again); then it stores its vote and sets its election
     timeout anew. Otherwise it refuses. Either way it answers (Vote) in its term.
  4. A granted Vote in P's term, while P is a candidate: a majority of the members'
     votes (its own included) makes P the leader (rule 6).
  5. Heartbeat from L in P's term: L leads this term: P follows it (a candidate of the
     same term steps down) and sets its election timeout anew.
  6. A leader sends Heartbeat to every other member every T/2; with T >= 2 x max delay
     each reaches its followers before their timeout (at least T) runs out.
  7. Terms. A message from a later term makes P adopt it, forget its vote and become a
     follower that knows no leader, before the message is handled (rules 3-5); a
     message from an earlier term is ignored. A leader that leaves is gone: as if its
     heartbeats had stopped, P's timeout will tell.
Members are fixed: Raft changes its members by joint consensus (section 6), which
belongs with the log left out here.

Statuses: follower (normal, following the term's leader), leader (normal, leading),
waiting (a follower that knows no leader in its term yet), candidate (electing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Config, Message, MessageRole, Node, SafeStorage, Status, StatusRole


class RaftStatus(Status):
    FOLLOWER = "follower", StatusRole.NORMAL
    LEADER = "leader", StatusRole.NORMAL
    WAITING = "waiting", StatusRole.WAITING
    CANDIDATE = "candidate", StatusRole.ELECTING


FOLLOWER, LEADER, WAITING, CANDIDATE = RaftStatus

RULES = {
    1: "Start: the node is a follower that knows no leader, in the term it stored, and sets its election "
       "timeout, drawn from [T, T'].",
    2: "The election timeout fires: the node becomes a candidate of a new term, votes for itself, asks every "
       "other member for its vote and sets a new timeout.",
    3: "RequestVote in the node's term: it grants its vote if it has not voted in this term or voted for that "
       "candidate; either way it answers with Vote.",
    4: "A granted Vote while a candidate: the votes of a majority of the members make the node the leader.",
    5: "Heartbeat in the node's term: the sender leads this term; the node follows it and sets its election "
       "timeout anew.",
    6: "A leader sends Heartbeat to every other member every T/2.",
    7: "A message from a later term: the node adopts the term and becomes a follower that knows no leader; "
       "one from an earlier term is ignored.",
}

ELECTION_TIMEOUT = "election_timeout"
HEARTBEAT = "heartbeat"


@dataclass(frozen=True, slots=True)
class RequestVote(Message):
    type: ClassVar[str] = "request_vote"


@dataclass(frozen=True, slots=True)
class Vote(Message):
    type: ClassVar[str] = "vote"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    granted: bool


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """An empty AppendEntries: the term's leader is alive."""

    type: ClassVar[str] = "heartbeat"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(slots=True)
class RaftStorage(SafeStorage):
    """Besides the term (the epoch): whom this node voted for in it (rule 3)."""

    voted_for: int | None = None


class Raft(Node):
    name = "raft"
    title = "Raft's election"
    messages = (RequestVote, Vote, Heartbeat)
    statuses = RaftStatus
    storage_class = RaftStorage
    storage: RaftStorage
    fixed_members = "Raft changes its members by joint consensus, which belongs with the log left out here"
    highest_wins = False
    leaders_per_epoch = True
    needs_majority = True
    rules = RULES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.votes: set[int] = set()  # a candidate's votes in its term

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """A leader's crash is noticed within T' of its last heartbeat; an election takes a
        round trip; a split vote costs another timeout. Ten of those: generous, as the
        Bully's default is, so that missing it means liveness really failed (or, with no
        spread, that the split votes never end)."""
        return 10 * (config.coordinator_wait + 2 * max_delay)

    def variables(self) -> dict[str, object]:
        return {"voted_for": self.storage.voted_for, "votes": sorted(self.votes)}

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        self.status, self.leader = WAITING, None
        self._election_timeout()

    def on_suspect(self) -> None:  # `elect`: as if the timeout had fired (rule 2)
        if self.status is not LEADER:
            self.rule(2)
            self._stand()

    def on_timer(self, name: str) -> None:
        if name == ELECTION_TIMEOUT and self.status is not LEADER:  # rule 2
            self.rule(2)
            self._stand()
        elif name == HEARTBEAT and self.status is LEADER:  # rule 6
            self.rule(6)
            self._heartbeat()

    def adopt_epoch(self, msg: Message) -> None:
        """Terms are rule 7's, in on_message: it must see a later term before adopting it."""

    def on_message(self, src: int, msg: Message) -> None:
        if msg.epoch < self.storage.epoch:  # rule 7: a finished term
            self.rule(7)
            return
        if msg.epoch > self.storage.epoch:  # rule 7
            self.rule(7)
            self.storage.epoch, self.storage.voted_for = msg.epoch, None
            self._step_down(WAITING, None)
        kind = type(msg)
        if kind is RequestVote:  # rule 3
            self.rule(3)
            granted = self.storage.voted_for in (None, src)
            if granted:
                self.storage.voted_for = src
                self._election_timeout()
            self.send(src, Vote, granted)
        elif kind is Vote:  # rule 4
            if self.status is CANDIDATE and msg.granted:
                self.rule(4)
                self.votes.add(src)
                if self._majority():
                    self._lead()
        elif kind is Heartbeat:  # rule 5
            self.rule(5)
            if self.status is not FOLLOWER or self.leader != src:
                self._step_down(FOLLOWER, src)
            self._election_timeout()

    # --- rules ---------------------------------------------------------------------------

    def _stand(self) -> None:  # rule 2
        self.announce_election()  # a new term: the epoch, bumped
        self.storage.voted_for = self.id
        self.status, self.leader, self.votes = CANDIDATE, None, {self.id}
        self.broadcast(self.others, RequestVote)
        self._election_timeout()
        if self._majority():  # alone
            self._lead()

    def _majority(self) -> bool:
        return 2 * len(self.votes) > len(self.ids)

    def _lead(self) -> None:  # rule 4
        self.status, self.leader = LEADER, self.id
        self.cancel_timer(ELECTION_TIMEOUT)
        self._heartbeat()

    def _heartbeat(self) -> None:  # rule 6
        self.broadcast(self.others, Heartbeat)
        self.set_timer(HEARTBEAT, self.config.timeout / 2)

    def _step_down(self, status: RaftStatus, leader: int | None) -> None:
        if self.status is LEADER:
            self.cancel_timer(HEARTBEAT)
            self._election_timeout()
        self.status, self.leader, self.votes = status, leader, set()

    def _election_timeout(self) -> None:  # rules 1-3, 5: drawn by the runtime from [T, T']
        self.set_timer(ELECTION_TIMEOUT, self.config.timeout, max(self.config.timeout, self.config.coordinator_wait))
