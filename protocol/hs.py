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

Crashes (what HS leaves out: it assumes nobody fails during the election). Its hops are
the ring's (ring_hops.py), both ways. What makes it heal, once crashes and recoveries
stop:
  - every hop is acked, and a neighbour that does not ack within T is presumed down:
    what awaited its ack goes on to the next node the same way, and later messages skip
    it at once, until it is heard from again (a lap on, it is asked again); a skip asks
    every member whether it is up, and presumes down all that stay silent, so a run of
    dead nodes costs one wait, not one each;
  - a node keeps the probes and replies it has passed on, once acked, until they have
    got past (the reply or the next phase's probe comes) or its round is over; if one
    is overdue, it asks the node holding it whether it is up (less often each time),
    and sends it on past that node if not: a phase does not wait for rule 8's bound
    when a message of it was lost with a crashed node;
  - a message whose next node would be its own candidate (or leader) presumed down is
    dropped: that election cannot end in it;
  - an election is named by its round, the epoch its initiator started it in (epochs
    live in safe storage, and every message carries the sender's): the first message of
    a later round makes a node a candidate again in phase 0, and messages of an earlier
    round are stale;
  - a relay asks the candidate that put it out whether it is up, as rule 10 asks, and
    initiates a new round if it is not; a participant that sees no Elected within a
    bound on a whole election (the announcement was lost with a node that crashed
    holding it) does the same, as does a node that recovers, a leader that hears a
    lower node has come back, one whose leader stops answering its probes or no longer
    leads, and one that hears a lower node announced;
  - a node that follows a leader and gets a probe of its own round from a node higher
    than itself that is not its leader knows that a second election has come in its
    round (a node that recovered with an epoch the others had used already; or a late
    probe of its own election, which costs a needless round, never a wrong leader): it
    initiates a new round.
Once faults stop, a run of dead nodes costs each of its two neighbours a wait of T or
two, the last round runs as in the failure-free case over the nodes that are up, and
every up node follows the highest up node (SLE2, within `settle_time`). While faults go
on, a node follows only the leader of the latest round it took part in, and a leader's
probe has passed every up node before it leads; we have not argued SLE1 from that as
ring.py argues its own, but the property tests (random crash and recovery schedules,
recoveries mid-election included) and `bully-tui hunt` (20,000 schedules of crashes,
recoveries, elects, joins and leaves) find no violation of SLE1, split brain or SLE2.

Rules (Q is this node, r the round it takes part in; T the timeout, P the probe interval):
  1. First start with the cluster: Q initiates. Recovery, or joining: Q sends Back to
     every other member (whoever presumes it down stops, rule 9), and initiates. Q also
     initiates on `elect`, when its leader does not answer a probe within T, answers
     that it no longer leads or does not ack a message within T (rule 9), by rules 7, 8
     and 12, and when it leads and a lower node says it is back: a node that comes back
     may start a round the others have run already (its epoch is behind), whose probes
     they swallow (rule 4) while it waits out rule 8; Q's new round takes it in.
     Initiating: a new epoch is the round, and Q takes part in it (rule 2).
  2. Taking part in round r: Q is a candidate in phase 0, sends Probe(Q, 0, hop 1) both
     ways, and waits for Elected (rule 8). The first HS message of a round later than
     Q's makes Q take part in that round, before it handles the message; a message of
     an earlier round is stale, and dropped (but acked, and the ack carries Q's epoch:
     a participant acked from a later round than its own initiates, rather than wait
     for rule 8; a node that was down while the others went on is back in step at once).
  3. Probe(c, k, hop h) with c > Q: Q is out (a relay, if it was a candidate; rule 12).
     If h < 2^k, Q passes the probe on the way it was going, hop h+1; otherwise it sends
     Reply(c, k) back. But if Q is normal and c is not its leader, Q's round has been
     taken by a second election: Q initiates (rule 1).
  4. Probe(c, ...) with c < Q: swallowed.
  5. Probe(Q, ...) back at Q: it went round the ring, Q is the highest alive: Q leads,
     and sends Elected(Q) to the right. A second one (from the other way) is dropped.
  6. Reply(c, k) with c != Q: passed on towards c. Reply(Q, k): once both of phase k's
     have come, and Q is still a candidate, Q sends phase k+1's probes.
  7. Elected(L): L > Q: Q follows L, and passes it on unless the next node is L.
     L < Q: Q never follows a lower node; it initiates. L = Q: it has gone round.
  8. A participant that sees no Elected within ELECTED_WAIT_LAPS laps of the ring
     (`elected_wait`, more than a whole failure-free election takes) initiates again.
  9. Hops, as the ring's rules 7 and 10 (ring_hops.py), both ways. Every HS message is
     acked (by its `seq`, the sender's number for it); an ack for a later message means
     the earlier ones were lost. One not acked within T goes on to the next node the
     same way, and its receiver is presumed down unless it has said it is back since
     (then it was down when the message came, and runs a later round now): everything
     else awaiting its ack goes on at once, later messages skip it, and a lap on Q asks
     it again whether it is up (Probe), presuming it down for another lap if it stays
     silent for T. A skip calls the roll: Q asks every other member it does not presume
     down whether it is up, and presumes down each that sends nothing within T. A
     message is dropped rather than sent past its own candidate or leader, and Elected
     is not sent to its leader. If every other node is skipped, a probe of Q's own has
     come round (rule 5); anything else is dropped. Acks are transport, not election:
     the counts above leave them out.
 10. Keeping, as the ring's rule 12: Q keeps each probe and reply of its round that it
     has passed on, once acked, until it has got past its holder (Q takes the reply to
     a probe, or that candidate's next probe on that side after a reply) or the round is
     over for it (it follows, or takes part in a later one). Once the last one Q handed
     on is overdue (`overdue`: for phase k, 2^(k+2) hops of T/2, two laps at most, and
     2T), Q asks the nodes holding what it keeps whether they are up (a roll call, rule
     9), and again after twice as long each time while it keeps any; the next one it
     hands on sets the wait afresh. (Asking every P, as the ring does, would cost every
     relay two messages a P for the whole round.) One presumed down may have crashed
     holding it: it goes on past that node, the same way. One that says it is back lost
     what it held, and what awaited its ack: Q sends them to it again at once (it takes
     part at once, rule 1).
 11. Copies. Q drops an HS message of its round that it has already taken (a probe or
     reply of one candidate, phase and way, or an Elected): one kept by rule 10 and
     sent on past a node that had passed it on before it crashed.
 12. A relay asks the candidate that put it out (the highest whose probe it took in its
     round) whether it is up, in rule 10's roll call (that candidate's probe sets the
     wait afresh, as what Q hands on does), and initiates if that candidate is found
     down (silent for T, or it did not ack a message within T): the round cannot end in
     it, and the relay would otherwise wait out rule 8. (With P = 0, only the ack.)

Statuses: candidate (electing), relay (out, waiting for Elected), normal.
"""

from __future__ import annotations

from .hs_messages import HsAck, HsElected, HsProbe, HsReply
from .interface import Config, Message, Status, StatusRole
from .probing import Probe, ProbeReply, ProbingNode
from .ring_hops import WATCH, Back, Hops
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
    9: "Every message is acked; one not acked within T goes on past its receiver, which is presumed down and "
       "skipped, and a roll call asks the other members whether they are up (the ring's hops, both ways).",
    10: "The node keeps the probes and replies of its round it has passed on until they have got past their holder; "
        "once overdue it asks the holders whether they are up, and again after twice as long each time; it sends "
        "them on past a holder found down, and again to one that says it is back.",
    11: "Copies: a probe, reply or Elected of its round the node has taken before is dropped.",
    12: "A relay asks the candidate that put it out whether it is up, once its next message is overdue (and again "
        "after twice as long each time), and initiates if it is found down.",
}


class HsStatus(Status):
    CANDIDATE = "candidate", StatusRole.ELECTING
    RELAY = "relay", StatusRole.WAITING
    NORMAL = "normal", StatusRole.NORMAL


CANDIDATE, RELAY, NORMAL = HsStatus

RIGHT, LEFT = AFTER, BEFORE  # directions round the ring: to the successor, to the predecessor
ELECTED_WAIT = "elected_wait"
ELECTED_WAIT_LAPS = 6  # a failure-free election: under 8n hops of phases and n of Elected, each <= T/2


class HirschbergSinclair(OnARing, Hops, ProbingNode):
    name = "hs"
    title = "Hirschberg & Sinclair"
    messages = (HsProbe, HsReply, HsElected, HsAck, Back, Probe, ProbeReply)
    statuses = HsStatus
    rules = RULES
    quiet_after_back = False  # (a node that comes back takes part at once: rule 1)
    ACK_RULE, DOWN_RULE, KEEP_RULE, QUIET_RULE = 9, 9, 10, 9  # rules 9 and 10: the hops' (ring_hops.py)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.round = 0  # the round Q takes part in, or last took part in (volatile: rule 1 starts a new one)
        self.phase = 0
        self.replies: set[int] = set()  # the ways this phase's replies came back from
        self.seq = 0  # numbers the messages Q sends, for their acks (rule 9)
        self.seen: set[tuple] = set()  # the HS messages of its round it has taken (rule 11)
        self.outbid_by: int | None = None  # the candidate that put Q out of its round (rule 12)
        self.watch_wait = 0.0  # how long Q waits before it asks again whether they are up (rules 10 and 12)

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
    def overdue(cls, phase: int, n: int, config: Config) -> float:
        """Rules 10 and 12: how long after a node hands on a probe or reply of phase k, or
        is put out by a probe of phase k, the next message of that candidate is overdue.
        It comes within 2^(k+2) hops: the probe out to 2^k and back, the other way's reply,
        and the next phase's probe out to the node again (the last phase's probe round the
        ring and Elected after it: two laps at most); each hop takes at most T/2 (T >= 2 *
        max delay), and 2T more covers a skip of a node down and the roll call after it."""
        return min(2 ** (phase + 2), 2 * n) * config.timeout / 2 + 2 * config.timeout

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """On top of the default: a round broken by the last crash is noticed when its
        participants' wait runs out (rule 8), and the new round takes at most that long."""
        return super().settle_time(n, config, max_delay) + 2 * cls.elected_wait(n, config)

    def variables(self) -> dict[str, object]:
        return {
            "round": self.round,
            "phase": self.phase if self.status is CANDIDATE else None,
            "left": self.ring_next(self.id, LEFT),
            "right": self.ring_next(self.id, RIGHT),
            "presumed down": sorted(self.presumed_down),
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        if self.storage.incarnation > 1 or self.joined:
            self.broadcast(self.others, Back)
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
        self._up(src)  # rule 9: whoever sends anything is not down
        if type(msg) is Back:  # rule 9
            self.heard_back(src)
            if self.normal and self.leader == self.id and src < self.id:  # rule 1
                self.rule(1)
                self._initiate()
            return
        if self.handle_probe(src, msg):
            return
        if type(msg) is HsAck:  # rule 9
            self.rule(9)
            self._acked(src, msg.acked)
            if msg.epoch > self.round and self.status is not NORMAL:  # rule 2: Q's round is stale
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
        if msg.sighting in self.seen:  # rule 11: a copy
            self.rule(11)
            return
        self.seen.add(msg.sighting)
        if type(msg) is not HsElected:
            self._got_past(msg)  # rule 10
        match msg:
            case HsProbe(candidate=c) if c == self.id:  # rule 5
                if self.status is CANDIDATE:
                    self.rule(5)
                    self._lead()
            case HsProbe(candidate=c) if c > self.id and self.normal and c != self.leader:  # rule 3
                self.rule(3)
                self._initiate()  # a second election in Q's round: Q's is over, so Q's round is taken
            case HsProbe(candidate=c) if c > self.id:  # rule 3
                self.rule(3)
                self._out(msg)
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
            # Otherwise: a reply of a phase gone by, or Q's own Elected come round (rule 7).

    def on_member_left(self, node: int) -> None:
        """What awaited the leaver's ack, or what it holds (rule 10), goes on past it at
        once, as a skip does (rule 9); and if it led, the leader is gone (rule 1)."""
        self.left(node)
        if node == self.leader:
            self.leader = None
            self.on_leader_lost()

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name) or self.hop_timer(name):
            return
        if name == ELECTED_WAIT:  # rule 8
            self.rule(8)
            self._initiate()

    # --- the election -----------------------------------------------------------------

    def _initiate(self) -> None:  # rule 1
        self.announce_election()
        self._take_part(self.epoch)

    def _take_part(self, round: int) -> None:  # rule 2
        self.round = round
        self.leader = None
        self.stop_probing()
        self.forget_handed()  # rule 10: the round before is over for Q
        self.seen = set()  # rule 11
        self.outbid_by = None  # rule 12
        self.set_timer(ELECTED_WAIT, self.elected_wait(len(self.ids), self.config))
        self.status = CANDIDATE
        self._probe(0)

    def _probe(self, phase: int) -> None:
        self.phase, self.replies = phase, set()
        for way in (LEFT, RIGHT):
            if self.status is CANDIDATE:  # (its first probe may have come round already: rule 5)
                self._pass(HsProbe, self.id, phase, 1, way)

    def _out(self, probe: HsProbe) -> None:  # rule 3
        by = probe.candidate
        if self.status is CANDIDATE:
            self.status = RELAY
        if self.status is RELAY and by > (self.outbid_by or by - 1):  # rule 12
            self.rule(12)
            self.outbid_by = by
            self.watch(probe)
            self.rule(3)  # (what it passes on)

    def _lead(self) -> None:  # rule 5
        self._follow(self.id)
        self._pass(HsElected, self.id, RIGHT)

    def _follow(self, leader: int) -> None:
        self.cancel_timer(ELECTED_WAIT)
        self.forget_handed()  # rule 10: the round is over for Q
        self.status, self.leader = NORMAL, leader
        if leader == self.id:
            self.stop_probing()
        else:
            self.schedule_probe()

    def _pass(self, kind: type[HsProbe | HsReply | HsElected], *fields: int) -> None:
        """Send a new message the way it goes (its last field), from this node, in its
        round's name (rule 2)."""
        self.seq += 1
        self._send_on(self.id, [kind(*fields, self.seq, epoch=self.round)])  # rule 9

    # --- the hops' questions (ring_hops.py) ---------------------------------------------

    def _keeps(self, msg: Message) -> bool:  # rule 10
        return self.status is not NORMAL and msg.epoch == self.round and type(msg) is not HsElected

    def _got_past(self, msg: HsProbe | HsReply) -> None:  # rule 10
        """What Q keeps of `msg`'s candidate on `msg`'s side from before `msg` has got past
        the node holding it (the reply to a probe has come back, or the next phase's probe
        after a reply): it is forgotten."""
        candidate, side, at = msg.place
        for holder, kept in list(self.handed.items()):
            kept[:] = [m for m in kept if m.place[:2] != (candidate, side) or m.place[2] >= at]
            if not kept:
                del self.handed[holder]

    def watch(self, msg: HsProbe | HsReply | None = None) -> None:  # rules 10 and 12
        """Ask the holders and Q's candidate once `msg`, just handed on (or the probe that
        put Q out), is overdue."""
        if msg is not None and self.config.probe_interval > 0:
            self.watch_wait = self.overdue(msg.phase, len(self.ids), self.config)
            self.set_timer(WATCH, self.watch_wait)

    def _watch_again(self) -> float:  # rules 10 and 12: all were up, so twice as long
        self.watch_wait *= 2
        return self.watch_wait

    def _watched(self) -> set[int]:  # rule 12
        return {self.outbid_by} if self.status is RELAY and self.outbid_by not in self.presumed_down else set()

    def _gone(self, silent: set[int]) -> int | None:  # rules 1 and 12
        return super()._gone(silent) or (12 if self.status is RELAY and self.outbid_by in silent else None)

    def _ends_before(self, msg: Message, dst: int) -> bool:  # rule 7: not back to L
        return type(msg) is HsElected and dst == msg.leader

    def _alone(self, msg: Message) -> bool:  # rule 9
        if type(msg) is HsProbe and msg.candidate == self.id and self.status is CANDIDATE:
            self.rule(5)
            self._lead()  # rule 5: everyone else is down
        return False
