"""Hirschberg & Sinclair's election on a bidirectional ring (1980; lecture 3-8), made to
heal after crashes and recoveries as our ring does (ring.py), though more simply.

Theory in one paragraph. The nodes form a ring, and each talks to its two neighbours:
"right" is its successor in Config.ring's order (ring_order.py; by default the next
higher id, the highest wrapping round to the lowest), "left" its predecessor. Every
node is a candidate, and works in phases k = 0, 1, 2, ...:
in phase k it sends a probe both ways, to reach 2^k nodes on each side. A node passes on
a probe of a higher candidate and swallows a lower one's. A probe that has gone its 2^k
hops turns back as a reply, and a candidate with both replies of phase k goes on to
phase k+1; one whose probe was swallowed hears nothing more, and is out. A candidate
whose own probe comes back round the ring is the highest: it announces itself (Elected,
round the ring). A candidate is still in at phase k only if it is the highest within
2^(k-1) on both sides, so at most n / (2^(k-1) + 1) candidates probe in phase k, each
with at most 4 * 2^k messages: at most 8n messages a phase, 8n(1 + ceil(log2 n)) in
all, where Chang & Roberts' one-way ring can take n(n+1)/2 (ids descending the way
its messages go). With the ring in id order (or reversed: a mirror image) and every
node starting at once, only the highest survives phase 0: N = 64 costs 568 probes and
replies (and 63 Elected). On a random ring more survive: 1,219 on average over ten
shuffles, where C&R takes 308.5 Elections on the same rings; C&R costs more only near
its worst order, 2,080 reversed (scenarios/hs-vs-chang-roberts.scenario, `--compare`).

Crashes (what HS leaves out: it assumes nobody fails during the election). What makes
it heal, once crashes and recoveries stop:
  - every hop is acked, and a neighbour that does not ack within T is presumed down:
    what awaited its ack goes on to the next node the same way, and later messages skip
    it at once, until it is heard from again or for a lap at most (a held link can hide
    a live node);
  - a message whose next node would be its own candidate (or leader) presumed down is
    dropped: that election cannot end in it;
  - an election is named by its round, the epoch its initiator started it in (epochs
    live in safe storage, and every message carries the sender's): the first message of
    a later round makes a node a candidate again in phase 0, and messages of an earlier
    round are stale;
  - a participant that sees no Elected within a bound on a whole election (messages
    were lost with a node that crashed holding them) initiates a new round, as does a
    node that recovers, one whose leader stops answering its probes or no longer leads,
    and one that hears a lower node announced;
  - a node that follows a leader and gets a probe of its own round from a node higher
    than itself that is not its leader knows that a second election has come in its
    round (a node that recovered with an epoch the others had used already; or a late
    probe of its own election, which costs a needless round, never a wrong leader): it
    initiates a new round.
Once faults stop, each dead node costs each of its two neighbours one wait of T, the
last round runs as in the failure-free case over the nodes that are up, and every up
node follows the highest up node (SLE2, within `settle_time`). While faults go on, a
node follows only the leader of the latest round it took part in, and a leader's probe
has passed every up node before it leads; we have not argued SLE1 from that as ring.py
argues its own, but the property tests (random crash and recovery schedules, recoveries
mid-election included) and `bully-tui hunt` (20,000 schedules of crashes, recoveries,
elects, joins and leaves) find no violation of SLE1, split brain or SLE2.

Rules (P is this node, r the round it takes part in):
  1. First start with the cluster: P initiates. Recovery, or joining: P sends Back to
     every other member (whoever presumes it down stops, rule 9), and initiates. P also
     initiates on `elect`, when its leader does not answer a probe within T or answers
     that it no longer leads, and by rules 7 and 8. Initiating: a new epoch is the round,
     and P takes part in it (rule 2).
  2. Taking part in round r: P is a candidate in phase 0, sends Probe(P, 0, hop 1) both
     ways, and waits for Elected (rule 8). The first HS message of a round later than
     P's makes P take part in that round, before it handles the message; a message of
     an earlier round is stale, and dropped (but acked, and the ack carries P's epoch:
     a participant acked from a later round than its own initiates, rather than wait
     for rule 8; a node that was down while the others went on is back in step at once).
  3. Probe(c, k, hop h) with c > P: P is out (a relay, if it was a candidate). If
     h < 2^k, P passes the probe on the way it was going, hop h+1; otherwise it sends
     Reply(c, k) back. But if P is normal and c is not its leader, P's round has been
     taken by a second election: P initiates (rule 1).
  4. Probe(c, ...) with c < P: swallowed.
  5. Probe(P, ...) back at P: it went round the ring, P is the highest alive: P leads,
     and sends Elected(P) to the right. A second one (from the other way) is dropped.
  6. Reply(c, k) with c != P: passed on towards c. Reply(P, k): once both of phase k's
     have come, and P is still a candidate, P sends phase k+1's probes.
  7. Elected(L): L > P: P follows L, and passes it on unless the next node is L.
     L < P: P never follows a lower node; it initiates. L = P: it has gone round.
  8. A participant that sees no Elected within ELECTED_WAIT_LAPS laps of the ring
     (`elected_wait`, more than a whole failure-free election takes) initiates again.
  9. Every HS message is acked (by its `seq`, the sender's number for it). One not acked
     within T: its receiver is presumed down, and it and everything else awaiting that
     node's ack go on to the next node the same way, without waiting; until the node
     is heard from, or for a lap at most, messages skip it at once. A message is
     dropped rather than sent past its own candidate or leader. If every other node
     is skipped, a probe of P's own has come round (rule 5); anything else is dropped.
     Acks are transport, not election: the counts above leave them out.

Statuses: candidate (electing), relay (out, waiting for Elected), normal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Config, Message, MessageRole, Status, StatusRole
from .probing import Probe, ProbeReply, ProbingNode
from .ring_order import AFTER, BEFORE, OnARing

RULES = {
    1: "Start, recovery or joining (after sending Back), elect, or the leader lost: the node initiates a new "
       "round, its new epoch, and takes part in it.",
    2: "Taking part in a round: the node is a candidate in phase 0 and probes both ways; a message of a later "
       "round makes it take part in that round, one of an earlier round is stale.",
    3: "Probe of a higher candidate: the node is out, and passes it on, or sends a Reply back once it has gone "
       "its 2^k hops; a normal node that does not follow that candidate initiates.",
    4: "Probe of a lower candidate: swallowed.",
    5: "Its own probe back round the ring: the node is the highest alive; it leads and sends Elected.",
    6: "Reply: passed on towards its candidate; a candidate with both replies of its phase probes in the next.",
    7: "Elected of a higher node: the node follows it and passes it on; of a lower node: it initiates.",
    8: "A participant that sees no Elected within six laps of the ring initiates again.",
    9: "Every message is acked; a neighbour that does not ack within T is presumed down and skipped, and what "
       "awaited its ack goes on past it.",
}


class HsStatus(Status):
    CANDIDATE = "candidate", StatusRole.ELECTING
    RELAY = "relay", StatusRole.WAITING
    NORMAL = "normal", StatusRole.NORMAL


CANDIDATE, RELAY, NORMAL = HsStatus

RIGHT, LEFT = AFTER, BEFORE  # directions round the ring: to the successor, to the predecessor
ELECTED_WAIT = "elected_wait"
ELECTED_WAIT_LAPS = 6  # a failure-free election: under 8n hops of phases and n of Elected, each <= T/2
HOP_WAIT = "hop_wait "  # + the node whose ack is awaited, a space and the message's seq
PRESUMED_DOWN = "presumed_down "  # + a node presumed down: when this fires, it is tried again (rule 9)


@dataclass(frozen=True, slots=True)
class HsProbe(Message):
    """Candidate `candidate`'s phase `phase` probe, `hop` nodes out, going `way`."""

    type: ClassVar[str] = "hs_probe"  # (the failure detector's is "probe")
    label: ClassVar[str] = "Probe"
    candidate: int
    phase: int
    hop: int
    way: int
    seq: int

    @property
    def towards(self) -> int:
        return self.candidate  # rule 9: it is never sent on past its candidate


@dataclass(frozen=True, slots=True)
class HsReply(Message):
    """The probe of `candidate`'s phase `phase` went its 2^k hops; going back `way`."""

    type: ClassVar[str] = "reply"
    label: ClassVar[str] = "Reply"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    candidate: int
    phase: int
    way: int
    seq: int

    @property
    def towards(self) -> int:
        return self.candidate


@dataclass(frozen=True, slots=True)
class HsElected(Message):
    type: ClassVar[str] = "elected"
    label: ClassVar[str] = "Elected"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    leader: int
    way: int
    seq: int

    @property
    def towards(self) -> int:
        return self.leader


@dataclass(frozen=True, slots=True)
class HsAck(Message):
    """The neighbour got the message numbered `acked` (transport; not counted)."""

    type: ClassVar[str] = "ack"
    label: ClassVar[str] = "Ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    acked: int


@dataclass(frozen=True, slots=True)
class HsBack(Message):
    """The sender has just started again (rule 1): it is not down (rule 9)."""

    type: ClassVar[str] = "back"
    label: ClassVar[str] = "Back"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


RING_MESSAGES = (HsProbe, HsReply, HsElected)


class HirschbergSinclair(OnARing, ProbingNode):
    name = "hs"
    title = "Hirschberg & Sinclair"
    messages = (HsProbe, HsReply, HsElected, HsAck, HsBack, Probe, ProbeReply)
    statuses = HsStatus
    rules = RULES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.round = 0  # the round P takes part in, or last took part in (volatile: rule 1 starts a new one)
        self.phase = 0
        self.replies: set[int] = set()  # the ways this phase's replies came back from
        self.seq = 0  # numbers the messages P sends, for their acks (rule 9)
        self.unacked: dict[int, dict[int, HsProbe | HsReply | HsElected]] = {}  # per neighbour, by seq
        self.presumed_down: set[int] = set()

    counted = (HsProbe, HsReply, HsElected)  # (acks and Backs are transport)

    @classmethod
    def bound(cls, n: int) -> int:
        """Hirschberg & Sinclair's bound, 8n(1 + ceil(log2 n)) probes and replies, and the
        n - 1 Elected: what one election's `counted` messages take at most."""
        return 8 * n * (1 + (n - 1).bit_length()) + n - 1 if n > 1 else 0

    @classmethod
    def worst_case_messages(cls, n: int) -> int:
        """A round as the status bar counts it, faults one at a time: the bound twice over,
        for every probe, reply and Elected is acked once. A skip of a crashed neighbour
        costs a send that is not acked, and the send again; the bound's slack covers that
        (it counts every phase's probes as if each went its whole way out and back, and
        all n nodes as candidates). tests/test_worst_cases.py runs random rings and
        schedules against it: at most about half of it."""
        return 2 * cls.bound(n)

    @classmethod
    def all_start_messages(cls, n: int) -> tuple[None, int]:
        """At most the bound, in any order round the ring."""
        return None, cls.bound(n)

    @classmethod
    def lap(cls, n: int, config: Config) -> float:
        return n * config.timeout

    @classmethod
    def elected_wait(cls, n: int, config: Config) -> float:
        """Rule 8: more than a failure-free election takes, skips of nodes down included."""
        return ELECTED_WAIT_LAPS * cls.lap(n, config)

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """On top of the default: a round broken by the last crash is noticed when its
        participants' wait runs out (rule 8), and the new round takes at most that long."""
        return super().settle_time(n, config, max_delay) + 2 * cls.elected_wait(n, config)

    def variables(self) -> dict[str, object]:
        return {
            "round": self.round,
            "phase": self.phase if self.status is CANDIDATE else None,
            "left": self._next(self.id, LEFT),
            "right": self._next(self.id, RIGHT),
            "presumed down": sorted(self.presumed_down),
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        if self.storage.incarnation > 1 or self.joined:
            self.broadcast(self.others, HsBack)
        self._initiate()

    def on_suspect(self) -> None:  # rule 1
        self.rule(1)
        self._initiate()

    def on_leader_lost(self) -> None:  # rule 1
        self.rule(1)
        self._initiate()

    def leader_confirmed(self, reply: ProbeReply) -> bool:  # rule 1: it must still lead
        return reply.leads

    def on_message(self, src: int, msg: Message) -> None:
        self._heard(src)  # rule 9: whoever sends anything is not down
        if self.handle_probe(src, msg) or type(msg) is HsBack:
            return
        if type(msg) is HsAck:  # rule 9
            self.rule(9)
            self._acked(src, msg.acked)
            if msg.epoch > self.round and self.status is not NORMAL:  # rule 2: P's round is stale
                self.rule(2)
                self._initiate()
            return
        self.rule(9)
        self.send(src, HsAck, msg.seq)  # rule 9
        if msg.epoch < self.round:  # rule 2: stale
            return
        if msg.epoch > self.round:  # rule 2
            self.rule(2)
            self._take_part(msg.epoch)
        match msg:
            case HsProbe(candidate=c) if c == self.id:  # rule 5
                if self.status is CANDIDATE:
                    self.rule(5)
                    self._lead()
            case HsProbe(candidate=c) if c > self.id and self.normal and c != self.leader:  # rule 3
                self.rule(3)
                self._initiate()  # a second election in P's round: P's is over, so P's round is taken
            case HsProbe(candidate=c) if c > self.id:  # rule 3
                self.rule(3)
                self._out()
                if msg.hop < 2 ** msg.phase:
                    self._pass(HsProbe, c, msg.phase, msg.hop + 1, msg.way)
                else:
                    self._pass(HsReply, c, msg.phase, -msg.way)
            case HsProbe():  # rule 4: a lower candidate's, swallowed
                self.rule(4)
            case HsReply(candidate=c) if c != self.id:  # rule 6
                self.rule(6)
                self._pass(HsReply, c, msg.phase, msg.way)
            case HsReply(phase=k) if k == self.phase and self.status is CANDIDATE:  # rule 6
                self.rule(6)
                self.replies.add(msg.way)
                if len(self.replies) == 2:
                    self._probe(k + 1)
            case HsElected(leader=leader) if leader > self.id:  # rule 7
                self.rule(7)
                self._follow(leader)
                self._pass(HsElected, leader, msg.way)
            case HsElected(leader=leader) if leader < self.id:  # rule 7
                self.rule(7)
                self._initiate()
            # Otherwise: a reply of a phase gone by, or P's own Elected come round (rule 7).

    def on_member_left(self, node: int) -> None:
        """What awaited the leaver's ack goes on past it at once, as a skip does (rule 9);
        and if it led, the leader is gone (rule 1)."""
        self.presumed_down.discard(node)
        self.cancel_timer(PRESUMED_DOWN + str(node))
        self._skip(node)
        if node == self.leader:
            self.leader = None
            self.on_leader_lost()

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name):
            return
        if name == ELECTED_WAIT:  # rule 8
            self.rule(8)
            self._initiate()
        elif name.startswith(HOP_WAIT):  # rule 9
            self.rule(9)
            node = int(name.removeprefix(HOP_WAIT).split()[0])
            self.presumed_down.add(node)
            self.set_timer(PRESUMED_DOWN + str(node), self.lap(len(self.ids), self.config))
            self._skip(node)
        elif name.startswith(PRESUMED_DOWN):  # rule 9
            self.rule(9)
            self.presumed_down.discard(int(name.removeprefix(PRESUMED_DOWN)))

    # --- the election -----------------------------------------------------------------

    def _initiate(self) -> None:  # rule 1
        self.announce_election()
        self._take_part(self.epoch)

    def _take_part(self, round: int) -> None:  # rule 2
        self.round = round
        self.leader = None
        self.stop_probing()
        self.set_timer(ELECTED_WAIT, self.elected_wait(len(self.ids), self.config))
        self.status = CANDIDATE
        self._probe(0)

    def _probe(self, phase: int) -> None:
        self.phase, self.replies = phase, set()
        for way in (LEFT, RIGHT):
            if self.status is CANDIDATE:  # (its first probe may have come round already: rule 5)
                self._pass(HsProbe, self.id, phase, 1, way)

    def _out(self) -> None:  # rule 3
        if self.status is CANDIDATE:
            self.status = RELAY

    def _lead(self) -> None:  # rule 5
        self._follow(self.id)
        self._pass(HsElected, self.id, RIGHT)

    def _follow(self, leader: int) -> None:
        self.cancel_timer(ELECTED_WAIT)
        self.status, self.leader = NORMAL, leader
        if leader == self.id:
            self.stop_probing()
        else:
            self.schedule_probe()

    # --- hops, acks and skips (rule 9) -------------------------------------------------

    def _next(self, node: int, way: int) -> int:
        """The member next to `node` going `way` (node itself if it is alone)."""
        return self.ring_next(node, way)

    def _pass(self, kind: type[HsProbe | HsReply | HsElected], *fields: int) -> None:
        """Send a new message the way it goes (its last field), from this node."""
        self.seq += 1
        self._send_on(self.id, kind(*fields, self.seq, epoch=self.round))

    def _send_on(self, after: int, msg: HsProbe | HsReply | HsElected) -> None:
        """Send `msg` to the first node after `after`, going its way, that is not
        presumed down, to be acked within T. Dropped rather than sent past its own
        candidate or leader; back at this node, only a probe of its own is taken."""
        dst = self._next(after, msg.way)
        while dst in self.presumed_down:
            if dst == msg.towards:
                return
            dst = self._next(dst, msg.way)
        if dst == self.id or (dst == msg.towards and type(msg) is HsElected):  # (rule 7: not back to L)
            if type(msg) is HsProbe and msg.candidate == self.id and self.status is CANDIDATE:
                self._lead()  # rule 5: everyone else is down
            return
        self.unacked.setdefault(dst, {})[msg.seq] = msg
        self.send_as_is(dst, msg)  # (in its round's name: rule 2)
        self.set_timer(f"{HOP_WAIT}{dst} {msg.seq}", self.config.timeout)

    def _acked(self, src: int, seq: int) -> None:
        if self.unacked.get(src, {}).pop(seq, None) is not None:
            self.cancel_timer(f"{HOP_WAIT}{src} {seq}")

    def _skip(self, node: int) -> None:
        """Everything awaiting `node`'s ack goes on past it, at once (rule 9)."""
        for seq, msg in self.unacked.pop(node, {}).items():
            self.cancel_timer(f"{HOP_WAIT}{node} {seq}")
            if msg.towards != node:
                self._send_on(node, msg)

    def _heard(self, node: int) -> None:  # rule 9
        if node in self.presumed_down:
            self.rule(9)
            self.presumed_down.discard(node)
            self.cancel_timer(PRESUMED_DOWN + str(node))

