"""Chang & Roberts ring election (lecture 3-9), as PROTOCOLS.md section 4 reads it, made
to tolerate crashes and recoveries (the lecture's self-study question; this is our answer).

Theory in one paragraph. The nodes form a logical ring, and each node talks only to its
successor. The ring is laid out in Config.ring's order (ring_order.py): by default in id
order (each node's successor is the next higher id, the highest wraps round to the
lowest). An initiator sends Election(its id) round the ring. A node forwards a larger
id, swaps a smaller one for its own (unless it already takes part, then it swallows
it), and the node whose own id comes back is the largest alive: it sends Elected round
the ring, and everyone follows it. With one initiator just after the highest id that is
N-1 messages up to the highest id, N for its id to come back and N for the
announcement: 3N-1, in any order. When every node starts at once the order decides:
2N-1 Election messages with the ids ascending round the ring (the default), N(N+1)/2
descending (`--ring reversed`), about N ln N on a random ring.

Crashes (what the lecture leaves out). C&R assumes nobody fails. Here a node can crash
and recover at any time, so messages get lost with the nodes that held them, a node
comes back knowing nothing, and two elections can overlap. What makes it heal:
  - every hop is acked, and a successor that does not ack within T is skipped; one that
    stays silent is presumed down and skipped at once, until it is heard from;
  - a node that comes back says so first, and takes no ring message for T; what is
    meant for it meanwhile waits for it, so that the election going by takes it in;
  - a node that skips another asks every member whether it is up, and presumes down
    all that stay silent: a run of dead nodes costs one wait, not one each;
  - a participant starts again, or asks its candidate to, as soon as it learns its
    election cannot end well: its candidate is down or has given the election up, did
    not ack its Election coming back, or leads while no Elected comes; a leader at
    least as high was announced; its own id came back in vain; a node its Election
    went past has come back. At the latest it starts again when no Elected came
    within a lap;
  - a participant keeps its election's Election once handed on, and sends it on past
    the node holding it if that node goes down: an Election lost with a crashed node
    goes on within P + T, where otherwise its participants would wait a lap;
  - a leader starts again when a lower node comes back, so that its own Election
    takes that node in at once, rather than after the node's Election has come round;
  - a node never follows a node lower than itself: an announcement of a lower leader
    means that election went round while this node was away, so it starts its own;
  - followers probe their leader, and the reply says whether it still leads.
What makes it safe is Garcia-Molina's idea (a node takes NewCoordinator only from the
node that last halted it), in ring form: a node follows only the election it backs, the
one whose Election last passed through it (or its own). An Election goes all the way
round before its candidate leads, so by then every node that was up when it came by
backs it or has taken part in a later one since, and a stale announcement finds nobody
backing it: two normal nodes never follow different leaders (SLE1). That rests on
skipping only nodes that are down: with T >= 2 * max delay a node that does not ack
within T was down when the message came. A node presumed down (rule 10) is skipped
without waiting, and that is no different: a node that comes back first says so (Back,
which arrives within max delay) and then takes no ring message for T >= 2 * max delay,
so any message that skips it unheard of would have reached it while it was down or
still quiet. (A node silent for T when asked whether it is up was down when asked: a
quiet node answers.) Rule 13 only holds a message back until its node can take it.
Rules 11, 12 and 14 make nobody follow anyone: they only start elections, and send on
an Election that a crashed node held. Nobody follows on a candidate's word that it
leads, either: a node higher than the leader that did not back the election (it was
quiet when the Election came by) swallows Elected on its way round, and may then lead
by an election that skipped a node further on while that node was quiet; that node,
following on the word, would follow the lower leader beside it.
With T >= 2 * max delay, once crashes and recoveries stop, every up node is normal
under the highest up node within `settle_time` (SLE2). The property tests check both;
bench/healing.py measures how long it takes, beside Garcia-Molina.

Rules (Q is this node; an election is named by its candidate, initiator and round; P is
the probe interval, T the timeout):
  1. First start with the cluster: Q initiates (nobody can have presumed it down).
     Recovery, or joining: Q sends Back to every other member and is quiet for T: it
     takes no Election or Elected (it leaves them unacked, as a down node would, rules
     7 and 10) and ignores the elect command; then it initiates. (A node that joins at
     the same moment is known to it by then, its Join arriving within max delay <= T/2,
     so its election goes round a ring with every joiner in it.) Q also initiates when
     the failure detector fires: the leader did not answer a probe within T, answered
     that it no longer leads, or did not ack a ring message within T (rule 7); and when
     it leads and a lower node says it is back: its Election takes that node in when
     the node's quiet is over (rule 13), where the node's own Election would first go
     round to Q. Initiating: Q sends Election(Q) to its successor, takes part and backs
     its own election.
  2. Election(c) with c > Q: Q takes part, forwards it and backs it, whatever it backed
     before: a node backs the last Election to come by (the safety argument rests on
     it). (It got to Q past every node above c since its initiator while they were
     down or quiet, rule 3.)
  3. Election(c) with c < Q: if Q does not take part yet, it takes part, backs and
     forwards Election(Q) instead. If it takes part and backs its own election, it
     swallows the message: its own Election will come by the sender's initiator. If it
     backs a higher node's election, that Election has come by the initiator already
     (who was down then, or has started again since): Q forwards Election(Q), still
     backing what it backed, so that the initiator's election goes on to the nodes above.
  4. Election(Q) comes back: if Q still backs it, Q is the largest alive. It leads, and
     sends Elected(Q). If it does not, the nodes it went through back it in vain (rule
     2): Q initiates if it is normal, and otherwise swallows it.
  5. Elected(L) with L > Q: Q forwards it, and follows L if it backs that election. If
     it does not, but takes part in an election whose candidate is at most L, that
     election was swallowed, or can only end in L taking it over: Q asks L to start
     again (rule 14), whose Election comes by Q sooner than one of Q's own would reach L
     (if L is down, rules 8 and 11 start one). Elected(Q) back at Q: the announcement
     has gone round.
  6. Elected(L) with L < Q: Q never follows a lower node. It swallows the message and,
     unless it already takes part in an election (which will decide), initiates (rule 1).
  7. (Rules 7, 10, 12 and 13 are the hops: ring_hops.py.)
     Every ring message is acked by its receiver, and the ack names the message. Each
     message Q sends must be acked within T; one that is not goes to the node after the
     receiver, which again must ack it within T (or it goes on to the next). An ack for
     a later message means the earlier ones were lost (the successor was down when they
     came; it has come back since, and runs its own election). Each new message first
     tries the immediate successor (unless it is presumed down, rule 10), so a node that
     comes back is part of the ring again at once. A message going back to its
     candidate or leader that does not ack it has gone round: it is dropped (a candidate
     that comes back backs a new election), and if Q backs that Election, Q initiates.
     If every other node is skipped, Q is alone: the message has come back, and Q leads
     if it backs its own election; if it backs another's, that candidate was skipped
     too, and Q initiates. Acks are transport, not election: the 3N-1 counts Election
     and Elected only.
  8. A participant that sees no Elected within ELECTED_WAIT_LAPS laps of the ring, N * T
     (the Election or the announcement was lost with a crashed node), initiates again.
     One lap is enough: from the Election Q took part in to the next one it takes part
     in or the Elected that answers it is at most once round (on to the candidate and
     back; or on to the highest node, whose own Election then comes by Q), and a lap
     takes less than N * T (a live hop at most max delay <= T/2, each node skipped T).
     A node waited for in its quiet (rule 13) can make a lap longer: then this starts
     an election that was not needed, which costs time, not safety.
  9. Copies. If T is too short, a slow successor is skipped although it is alive, and
     both it and the node after it pass the message on; every late ack would double the
     traffic, and the copies would go round for ever. So ring messages name their
     election: its initiator and the initiator's epoch when it began (`round`; epochs
     live in safe storage and each start bumps them, so no initiator reuses one). A
     node drops a message it has already taken (it remembers the last 4N).
 10. Presumed down. A node that did not ack within T, and from which no Back came within
     2T before that message was sent or since, is presumed down: everything else Q has
     sent it goes on at once, and later messages skip it without waiting, until it says
     it is back or sends anything. A lap on, Q asks it again whether it is up (Probe),
     and if it stays silent for T, presumes it down for another lap (a held link can
     hide a live node: once released, its answer ends the presumption). The roll call:
     when Q skips a node, it also asks every other member it does not presume down
     whether it is up (Probe; one roll call at a time), and presumes down each that
     sends nothing within T: what waits for it goes on at once, so a run of k dead
     nodes costs one T, not k.
 11. A participant that backs another's election asks that candidate every P how it
     stands (Ask; with P = 0, never). The candidate tells (Told) that it leads, elected
     by that election; that it still takes part in an election (that one, or one that
     took it over: a higher node's, or a later one of its own, which will come by Q too);
     or that the election is lost (it follows a leader another election made, or it
     crashed since and backs nothing). Q initiates in the last case, or when no answer
     comes within T (the candidate is down), and otherwise asks again after P: it follows
     only on Elected (rule 5), never on the word. Told that its candidate leads, Q waits
     for Elected T a node from the candidate round to itself at most, and then asks the
     candidate to start again (rule 14): the announcement was lost with a node that
     crashed holding it.
 12. A participant keeps the Election of the election it backs once its successor has
     acked it (that node holds it now), until it backs another or follows, and every P
     asks that node whether it is up (a roll call, rule 10). One presumed down may have
     crashed holding it: it goes on past it (rule 7); a copy that got through is dropped
     there (rule 9).
 13. Quiet nodes are waited for. A message for a node whose Back came within T (it is
     quiet, rule 1) waits until T after that Back, and then goes to it; so does one that
     awaited its ack when the Back came (it was lost there). Skipped, the node would miss
     the election going by, and need another one.
 14. Again. A participant whose election's Election has gone on past a node that says it
     is back (skipped while the node was down, or handed to it before it crashed, rule
     12) asks the candidate to start again (Again, naming the election), or initiates if
     it is the candidate: the node that came back is then taken in at once, where it
     would otherwise find itself left out only when Elected came by (rule 5). A candidate
     asked so initiates if it still takes part in that election or leads by it
     (otherwise a later election of its own is under way, and will come by the asker).

Statuses: election (a participant, or quiet after a recovery), normal (following a leader).
"""

from __future__ import annotations

from .interface import Config, Message, Status, StatusRole
from .probing import Probe, ProbeReply, ProbingNode
from .ring_hops import LEADS, LOST, WAITING, Again, Ask, Back, Elected, Election, Hops, RingAck, Told, restamped
from .ring_order import OnARing

RULES = {
    1: "Start, recovery or joining, elect, the failure detector fires, or a lower node comes back while this one "
       "leads: the node initiates (after a recovery or a join, once it has sent Back and been quiet for T): it "
       "sends Election with its id to its successor, takes part and backs it.",
    2: "Election of a higher candidate: the node takes part, backs that election and forwards it.",
    3: "Election of a lower candidate: a node not taking part yet backs its own election and forwards Election "
       "with its id instead; one backing its own swallows it; one backing a higher one forwards Election with its id.",
    4: "Its own Election back round: if it still backs that election, the node leads and sends Elected; if not, "
       "a normal node initiates.",
    5: "Elected of a higher node: the node forwards it, and follows that leader if it backed that election; "
       "if not, and its own candidate is no higher, it asks that leader to start again.",
    6: "Elected of a lower node: the node never follows a lower node: it swallows it and, unless it takes part "
       "in an election, initiates.",
    7: "Every ring message is acked; one not acked within T goes on to the node after its receiver.",
    8: "A participant that sees no Elected within a lap of the ring (N times T) initiates again.",
    9: "Copies: a ring message the node has taken before (it names its election) is dropped.",
    10: "A node that did not ack within T, with no Back from it lately, is presumed down and skipped at once, "
        "and a roll call asks the other members whether they are up.",
    11: "A participant asks the candidate it backs every P how their election stands; lost, or no answer "
        "within T: it initiates; told it leads, and no Elected comes in time: it asks it to start again.",
    12: "A participant keeps the Election its successor acked and asks that node every P whether it is up; "
        "if it is presumed down, the Election goes on past it.",
    13: "A message for a node that is quiet after saying it is back waits until its quiet is over.",
    14: "A participant whose election went past a node that has come back asks its candidate to start again "
        "(Again); a candidate asked so initiates if it still takes part in that election or leads by it.",
}


class RingStatus(Status):
    ELECTION = "election", StatusRole.ELECTING
    NORMAL = "normal", StatusRole.NORMAL


ELECTION, NORMAL = RingStatus

ELECTED_WAIT = "elected_wait"
ELECTED_WAIT_LAPS = 1  # what a participant still needs, at most: its Election to the candidate, then Elected back
QUIET = "quiet"  # rule 1: a node that has just recovered takes no ring message until this fires
ASK, ASK_WAIT = "ask", "ask_wait"  # rule 11: when a participant asks its candidate next, and waits for the answer
ANNOUNCE_WAIT = "announce_wait"  # rule 11: how long a participant told its candidate leads waits for Elected


class Ring(OnARing, Hops, ProbingNode):
    name = "ring"
    title = "Chang & Roberts ring"
    messages = (Election, Elected, RingAck, Back, Ask, Told, Again, Probe, ProbeReply)
    statuses = RingStatus
    rules = RULES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.participant = False
        self.backing: tuple[int, int, int] | None = None  # (candidate, initiator, round) of the election it backs
        self.seen: dict[tuple, None] = {}  # keys of ring messages taken, oldest first (rule 9)

    counted = (Election, Elected)  # (acks and Backs are transport)

    # No worst_case_messages: one initiator just after the highest id costs 3N-1 Election
    # and Elected messages, in any order round the ring (its Election reaches the highest
    # id within N-1 hops), but a round counts each hop's ack too, and followers that
    # notice a crash start elections of their own: measured, 40 messages in a round at
    # N = 8 after one crash.

    @classmethod
    def all_start_messages(cls, n: int) -> tuple[int, int]:
        """Every node starts at once: each Election goes at least one hop, the highest's
        N: 2N-1 (ids ascending round the ring), and at most N(N+1)/2 (descending); then N
        Elected."""
        return (3 * n - 1, n * (n + 1) // 2 + n) if n > 1 else (0, 0)

    @classmethod
    def lap(cls, n: int, config: Config) -> float:
        """The longest a message takes round the ring: T a hop (a skip takes T, a live
        hop at most max delay <= T/2)."""
        return n * config.timeout

    @classmethod
    def elected_wait(cls, n: int, config: Config) -> float:
        """Rule 8: how long a participant waits for Elected."""
        return ELECTED_WAIT_LAPS * cls.lap(n, config)

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """On top of the default: a node that recovered last is quiet for T (rule 1); an
        election lost with a crashed node may be noticed only when its participants' wait
        runs out (rule 8, a lap); and then the new one goes round the ring, a hop at a
        time, up to three laps (to the highest up node, round, and Elected)."""
        lap = n * max(config.timeout, 2 * max_delay)
        return (super().settle_time(n, config, max_delay) + config.timeout
                + cls.elected_wait(n, config) + 3 * lap)

    def variables(self) -> dict[str, object]:
        return {
            "participant": self.participant,
            "backing": None if self.backing is None else self.backing[0],
            "successor": self._next(self.id, Election.way),
            "unacked": {node: [f"{msg.type} {msg.towards}" for msg, _, _ in items]
                        for node, items in self.unacked.items()},
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        if self.storage.incarnation == 1 and not self.joined:  # its first start: nobody can have presumed it down
            self._initiate()
            return
        self.status, self.leader = ELECTION, None
        self.broadcast(self.others, Back)
        self.set_timer(QUIET, self.config.timeout)

    def on_suspect(self) -> None:  # rule 1
        if not self.participant and QUIET not in self.timers:
            self.rule(1)
            self._initiate()

    def on_leader_lost(self) -> None:  # rule 1
        self.rule(1)
        self._initiate()

    def leader_confirmed(self, reply: ProbeReply) -> bool:  # rule 1: it must still lead
        return reply.leads

    def on_message(self, src: int, msg: Message) -> None:
        self._up(src)  # rule 10: whoever sends anything is not down
        if type(msg) is Back:
            self._back(src)
            return
        if self.handle_probe(src, msg):
            return
        match msg:
            case Ask():  # rule 11 (a quiet node answers too: it backs nothing)
                self.rule(11)
                self.send(src, Told, msg.initiator, msg.round, self._outcome(msg.initiator, msg.round))
                return
            case Told():  # rule 11
                self.rule(11)
                self._told(src, msg)
                return
            case Again():  # rule 14
                self.rule(14)
                if self.backing == (self.id, msg.initiator, msg.round) and (self.participant or self.leader == self.id):
                    self._initiate()
                return
            case RingAck():  # rule 7
                self.rule(7)
                self._acked(src, msg.key)
                return
            case Election() | Elected() if QUIET in self.timers:  # rule 1: as if still down
                return
            case Election() | Elected() if msg.key in self.seen:
                self.rule(9)  # rule 9: a copy
            case Election(candidate=c) if c > self.id:  # rule 2
                self.rule(2)
                self._take_part(c, msg.initiator, msg.round)
                self._forward(Election, c, msg.initiator, msg.round)
            case Election(candidate=c) if c < self.id and not self.participant:  # rule 3
                self.rule(3)
                self._take_part(self.id, msg.initiator, msg.round)
                self._forward(Election, self.id, msg.initiator, msg.round)
            case Election(candidate=c) if c < self.id and self.backing[0] > self.id:  # rule 3
                self.rule(3)
                self._forward(Election, self.id, msg.initiator, msg.round)
            case Election(candidate=c) if c == self.id and self.backing == msg.election:  # rule 4
                self.rule(4)
                self._follow(self.id)
                self._forward(Elected, self.id, msg.initiator, msg.round)
            case Election(candidate=c) if c == self.id and self.normal:  # rule 4
                self.rule(4)
                self._initiate()
            case Elected(leader=leader) if leader > self.id:  # rule 5
                self.rule(5)
                backed = self.backing == msg.election
                if backed:
                    self._follow(leader)
                self._forward(Elected, leader, msg.initiator, msg.round)
                if not backed and self.participant and leader >= self.backing[0]:
                    self.rule(14)
                    self.send(leader, Again, msg.initiator, msg.round)  # rule 14
            case Elected(leader=leader) if leader < self.id and not self.participant:  # rule 6
                self.rule(6)
                self._initiate()
            # Otherwise: a participant backing its own election swallows a smaller id (rule
            # 3), a participant swallows a lower leader (rule 6), my id back from an
            # election I no longer back (rule 4), or Elected(my id) has gone round (rule 5).
        self._remember(msg.key)
        self.rule(7)
        self.send(src, RingAck, *msg.key)  # rule 7

    def on_member_left(self, node: int) -> None:
        """What waited for the leaver's ack goes on past it at once, as rule 7 skips a node
        (without waiting T); and if it led, the leader is gone (rule 1)."""
        lost = self.left(node)
        if node == self.leader:
            self.leader = None
            self.on_leader_lost()
        elif lost:
            self._initiate()

    def on_timer(self, name: str) -> None:
        if self.probe_timer(name) or self.hop_timer(name):
            return
        if name == ELECTED_WAIT and self.participant:  # rule 8
            self.rule(8)
            self._initiate()
        elif name == ASK and self.participant:  # rule 11
            self.rule(11)
            self.send(self.backing[0], Ask, *self.backing[1:])
            self.set_timer(ASK_WAIT, self.config.timeout)
        elif name == ASK_WAIT and self.participant:  # rule 11: the candidate is down
            self.rule(11)
            self._initiate()
        elif name == ANNOUNCE_WAIT and self.participant:  # rule 11: the announcement was lost
            self.rule(11)
            self.send(self.backing[0], Again, *self.backing[1:])
        elif name == QUIET:  # rule 1
            self.rule(1)
            self._initiate()

    # --- the ring ---------------------------------------------------------------------

    def _initiate(self) -> None:
        self.announce_election()
        self._take_part(self.id, self.id, self.epoch)
        self._forward(Election, self.id, self.id, self.epoch)

    def _take_part(self, candidate: int, initiator: int, round: int) -> None:
        """Rules 1 to 3: take part, backing this election."""
        self.backing = (candidate, initiator, round)
        self.participant = True
        self.status, self.leader = ELECTION, None
        self.stop_probing()
        self.set_timer(ELECTED_WAIT, self.elected_wait(len(self.ids), self.config))
        self.cancel_timer(ASK, ASK_WAIT, ANNOUNCE_WAIT)
        self.forget_handed()  # rule 12: it backs this election now
        if candidate != self.id and self.config.probe_interval > 0:  # rule 11
            self.set_timer(ASK, self.config.probe_interval)

    def _follow(self, leader: int) -> None:
        """The election is over for this node: `leader` leads (perhaps this node)."""
        self.participant = False
        if leader == self.id:
            self.stop_probing()
        self.cancel_timer(ELECTED_WAIT, ASK, ASK_WAIT, ANNOUNCE_WAIT)
        self.forget_handed()  # rule 12: the election is over for this node
        self.status, self.leader = NORMAL, leader
        if leader != self.id:
            self.schedule_probe()

    def _forward(self, kind: type[Message], *fields: int) -> None:  # rule 7
        if self._send_on(self.id, [kind(*fields, epoch=self.epoch)]):
            self._initiate()

    def _remember(self, key: tuple) -> None:  # rule 9
        self.seen[key] = None
        if len(self.seen) > 4 * len(self.ids):
            del self.seen[next(iter(self.seen))]

    def _back(self, src: int) -> None:
        """`src` has started again (rules 10 and 13); if this node leads, it starts again
        (rule 1); if its election went past src, it has that election started again
        (rule 14)."""
        missed = self.went_past(src, Election.way)
        self.heard_back(src)
        if self.normal and self.leader == self.id and src < self.id:  # rule 1
            self.rule(1)
            self._initiate()
        elif missed:  # rule 14
            self.rule(14)
            if self.backing[0] == self.id:
                self._initiate()
            else:
                self.send(self.backing[0], Again, *self.backing[1:])

    def _outcome(self, initiator: int, round: int) -> str:
        """Rule 11: how this node's election named (initiator, round) stands."""
        if self.participant:  # that one, or one that will come by the asker too
            return WAITING
        return LEADS if self.backing == (self.id, initiator, round) and self.leader == self.id else LOST

    def _told(self, src: int, msg: Told) -> None:
        """Rule 11: the answer of the candidate this node backs, if it still backs it."""
        if not self.participant or self.backing != (src, msg.initiator, msg.round) or ASK_WAIT not in self.timers:
            return
        self.cancel_timer(ASK_WAIT)
        if msg.outcome == LOST:
            self._initiate()
            return
        if msg.outcome == LEADS and ANNOUNCE_WAIT not in self.timers:  # Elected is on its way round to this node
            self.set_timer(ANNOUNCE_WAIT, self.hops_from(src, Election.way) * self.config.timeout)
        self.set_timer(ASK, self.config.probe_interval)

    # --- the hops' questions (ring_hops.py) ---------------------------------------------

    def _transmit(self, dst: int, msg: Message) -> None:
        self.send_as_is(dst, restamped(msg, self.epoch))  # (passed on in this node's epoch)

    def _keeps(self, msg: Message) -> bool:  # rule 12
        return self.participant and type(msg) is Election and msg.election == self.backing

    def _lost(self, msg: Message) -> bool:  # rule 7
        return type(msg) is Election and msg.election == self.backing

    def _alone(self, msg: Message) -> bool:
        """Every other node was skipped: the message has come back round. An Election this
        node backs makes it the leader if it is its own (there is nobody to announce it
        to); if it is another's, that candidate was skipped too: True, this node is to
        initiate (rule 7)."""
        if type(msg) is Election and self.backing == msg.election:  # (a probe timer from before is left to lapse)
            if msg.candidate != self.id:
                return True
            self.participant = False
            self.cancel_timer(ELECTED_WAIT)
            self.status, self.leader = NORMAL, self.id
        return False
