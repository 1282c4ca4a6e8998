"""Stoller's Bully with a failure detector (Stoller's notes), as PROTOCOLS.md section 3 reads it.

Theory in one paragraph. Instead of request timeouts, every node runs a heartbeat
failure detector and trusts it. A node that wants to lead first lets every higher node
have its chance (Elec1: it waits while any higher node is trusted), then halts the lower
nodes *one at a time, in priority order*, each until it acks or is detected down
(Elec2), and only then tells the nodes that acked who leads (Ldr). A halted node (Wait)
takes Ldr only from the node that halted it, and restarts if the detector says that
node died. Two nodes in Norm therefore always share a leader (SLE1) as long as the
detector never suspects a live node, which synchrony (T >= 2 * max delay) guarantees.
Highest id has priority here, as everywhere in this project (Stoller writes it the
other way round; that is only a renaming).

The failure detector. Every H = T/2 a node sends Heartbeat to every other node and
counts, per peer, the ticks since it last heard anything from it. Three silent ticks
(more than T without a word) make the peer suspected; any message from it clears that.
Heartbeats arrive at most H + (max delay - min delay) apart, which is no more than T
when T >= 2 * max delay, so under synchrony no live node is ever suspected, and a crash
is noticed within 1.5T plus one delay. A new incarnation trusts everyone at first.

Heartbeats also say whom the sender follows (`leader`) and who halted it (`halted_by`).
The reference is silent on how a node that comes back gets a leader when a higher node
is up (it waits in Elec1 "giving the higher nodes their chance", but nothing makes them
take it). Here the leader takes it in: a Norm leader that hears from a lower node that
neither follows it nor has been halted by it halts that node and sends it Ldr, by the
same Halt/Ack/Ldr rules. With FIFO links a stale heartbeat always arrives before the
Ack, so nobody is taken in twice.

A Halt can be lost: its target crashes and recovers so quickly that the detector never
suspects it, and the halter would wait for its Ack for ever. So a Halt still unacked
after more than T, while heartbeats show its target was not halted, is sent again.

A halter can also give up: halted in its turn by a higher node, it drops its election,
and a node it halted would wait in Wait for ever for a Ldr that never comes (its halter
is alive, so the detector never frees it). So a node in Wait whose halter's heartbeat
shows that it gave up (it was halted itself, or follows another leader) starts again
(Elec1). A halter that leads may still be taking this node in (Halt, Ack, then Ldr),
so that is no sign.

Members that join and leave (the gsharma design, note 7; rules 11 and 12 below). With
them, two nodes can be in Elec2 at once: one that joined does not know another that
joined at the same moment, and takes itself for the highest. That is what left a node in
Wait for ever (random schedules found it) before the rescue above.

Rules (P is this node):
  1. The failure detector: every T/2 P sends Heartbeat (whom it follows, who halted
     it) to every other node; a peer silent for three ticks (more than T) is
     suspected, and any message from it clears that.
  2. Start, recovery, or the elect command in Norm: P enters Elec1. A new incarnation
     trusts everyone, and heartbeats at once.
  3. Elec1: P waits while any higher node is trusted. Once none is, Elec2: P halts
     the lower nodes one at a time, highest first, each until it acks (Ack) or is
     suspected.
  4. Elec2 done: P leads (Norm) and sends Ldr to the nodes that acked.
  5. Halt from Q: P is in Wait, halted by Q; it drops any election of its own and acks.
  6. Ldr from the node that halted P, while P is in Wait: P is in Norm under it.
  7. A node P waits on is suspected: its halter (in Wait) or its leader (in Norm):
     Elec1 again; the node it is halting (Elec2): the next one; a higher node (Elec1):
     P looks again whether any is trusted.
  8. A leader in Norm that hears a heartbeat from a lower node that neither follows it
     nor was halted by it (one that came back, or a newcomer) takes it in: Halt, then
     Ldr on its Ack, by the same rules as an election's.
  9. A Halt unacked for more than T, while heartbeats show its target was not halted,
     is sent again (it was lost, see above).
  10. In Wait, a heartbeat from the halter showing that it gave up (it was halted
      itself, or follows another leader): Elec1 again (see above).
  11. A node that joins starts as a recovering node, and is trusted by everyone from
      its Join on, as a new incarnation trusts everyone: its heartbeats (right behind
      its Join on each link) then keep it so. The others learn of it only when its
      Join arrives, and heartbeat it from their next tick: their first heartbeats reach
      it up to max delay + T/2 + max delay <= 1.5T after it joined. So it suspects a
      peer only after two more ticks (T) of silence than usual; else it would take the
      members for down at its third tick (T), and lead over them (random schedules
      found that: SLE1 after a single join).
  12. A node that leaves is gone for good: whatever waited on it goes on at once, as
      if the detector had found it down (its Halt's Ack, its Ldr, its claim as a
      higher node in Elec1), and it is nobody's to halt or to tell any more.

Statuses: elec1, elec2, wait, norm (only norm counts as normal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Message, MessageRole, Node, Status, StatusRole


class StollerStatus(Status):
    ELEC1 = "elec1", StatusRole.ELECTING
    ELEC2 = "elec2", StatusRole.ELECTING
    WAIT = "wait", StatusRole.WAITING
    NORM = "norm", StatusRole.NORMAL


ELEC1, ELEC2, WAIT, NORM = StollerStatus

RULES = {
    1: "The failure detector: every T/2 the node sends Heartbeat to every other node; a peer silent for "
       "three ticks (more than T) is suspected, and any message from it clears that.",
    2: "Start, recovery, or elect while normal: the node enters Elec1 (a new incarnation trusts everyone "
       "and heartbeats at once).",
    3: "Elec1: the node waits while any higher node is trusted; then Elec2: it halts the lower nodes one at "
       "a time, highest first, each until it acks or is suspected.",
    4: "Elec2 done: the node leads (Norm) and sends Ldr to the nodes that acked.",
    5: "Halt: the node waits (Wait), halted by the sender; it drops any election of its own and acks.",
    6: "Ldr from the node that halted it, while in Wait: the node is normal under it.",
    7: "A node this one waits on is suspected: its halter or its leader: Elec1 again; the node being "
       "halted: the next one; a higher node: Elec1 looks again.",
    8: "A leader that hears a heartbeat from a lower node neither following it nor halted by it takes it in: "
       "Halt, then Ldr on its Ack.",
    9: "A Halt unacked for more than T, while heartbeats show its target was not halted, is sent again.",
    10: "In Wait, a heartbeat from the halter showing that it gave up (halted itself, or following another): "
        "Elec1 again.",
    11: "A node that joins is trusted from its Join on, and waits two ticks longer than usual before "
        "suspecting a peer.",
    12: "A node that leaves is gone for good: whatever waited on it goes on at once, as if it had been "
        "suspected.",
}

TICK = "heartbeat"  # the failure detector's period, T/2
SILENT_TICKS = 3  # ticks without a word before a peer is suspected
JOIN_GRACE_TICKS = 2  # rule 11: a newcomer waits this much longer to hear from each peer


@dataclass(frozen=True, slots=True)
class Halt(Message):
    type: ClassVar[str] = "halt"


@dataclass(frozen=True, slots=True)
class Ack(Message):
    type: ClassVar[str] = "ack"
    role: ClassVar[MessageRole] = MessageRole.REPLY


@dataclass(frozen=True, slots=True)
class Ldr(Message):
    type: ClassVar[str] = "ldr"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    type: ClassVar[str] = "heartbeat"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    leader: int | None
    halted_by: int | None


class Stoller(Node):
    name = "stoller"
    title = "Stoller's Bully"
    messages = (Halt, Ack, Ldr, Heartbeat)
    statuses = StollerStatus
    rules = RULES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.halted_by: int | None = None
        self.silent = dict.fromkeys(self.others, 0)  # ticks since each peer was heard
        self.suspected: set[int] = set()
        self.to_halt: list[int] = []  # Elec2: lower nodes still to halt, next first
        self.halting: int | None = None  # Elec2: the node whose Ack we wait for
        self.acked: list[int] = []  # Elec2: the nodes that acked, to get Ldr
        self.halts: dict[int, int] = {}  # Halts awaiting an Ack: node -> tick sent at
        self.ticks = 0

    def variables(self) -> dict[str, object]:
        return {
            "halted_by": self.halted_by,
            "suspected": sorted(self.suspected),
            "halting": self.halting,
            "to_halt": list(self.to_halt),
            "acked": list(self.acked),
            "halts_unacked": sorted(self.halts),
            "ticks": self.ticks,
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:
        self.storage.incarnation += 1
        if self.joined:  # rule 11
            self.rule(11)
            self.silent = dict.fromkeys(self.others, -JOIN_GRACE_TICKS)
        self.rule(2)  # rule 2
        self._tick()
        self._elec1()

    def on_suspect(self) -> None:
        if self.status is NORM:  # rule 2
            self.rule(2)
            self._elec1()

    def on_timer(self, name: str) -> None:
        if name == TICK:  # rule 1
            self.rule(1)
            self._tick()

    def on_message(self, src: int, msg: Message) -> None:
        self.rule(1)  # rule 1: any message clears a suspicion
        self.silent[src] = 0
        if src in self.suspected:
            self.suspected.discard(src)
        match msg:
            case Halt():  # rule 5
                self.rule(5)
                self._halted(src)
            case Ack() if src in self.halts:
                del self.halts[src]
                if src == self.halting:  # rule 3
                    self.acked.append(src)
                    self._halt_next()
                else:  # rule 8: taken in by a leader
                    self.rule(8)
                    self.send(src, Ldr)
            case Ldr() if self.status is WAIT and self.halted_by == src:  # rule 6
                self.rule(6)
                self.status, self.leader = NORM, src
            case Heartbeat(leader=leader, halted_by=halted_by) if (
                    self.status is WAIT and src == self.halted_by and (halted_by is not None or leader not in (None, src))):
                self.rule(10)  # rule 10
                self._elec1()  # its election is over, and no Ldr came for us: it gave up (see above)
            case Heartbeat(leader=leader, halted_by=halted_by) if self.id not in (leader, halted_by):
                if src in self.halts:
                    if self.ticks - self.halts[src] >= SILENT_TICKS:  # rule 9
                        self.rule(9)
                        self._halt(src)  # unacked for more than T: it was lost (see above)
                elif self.status is NORM and self.leader == self.id and src < self.id:  # rule 8
                    self.rule(8)
                    self._halt(src)  # a lower node outside the group: take it in
            # Anything else is stale: an Ack or Ldr from an election that is over.

    def on_member_joined(self, node: int) -> None:  # rule 11
        self.rule(11)
        self.silent[node] = 0

    def on_member_left(self, node: int) -> None:  # rule 12
        self.rule(12)
        self.silent.pop(node, None)
        self.suspected.discard(node)
        if node in self.to_halt:
            self.to_halt.remove(node)
        if node in self.acked:
            self.acked.remove(node)
        self._detected_down(node)

    # --- the failure detector ---------------------------------------------------------

    def _tick(self) -> None:
        self.ticks += 1
        self.broadcast(self.others, Heartbeat, self.leader, self.halted_by)
        self.set_timer(TICK, self.config.timeout / 2)
        newly = []
        for peer in self.others:
            self.silent[peer] += 1
            if self.silent[peer] >= SILENT_TICKS and peer not in self.suspected:
                self.suspected.add(peer)
                newly.append(peer)
        for peer in newly:  # rule 7
            self.rule(7)
            self._detected_down(peer)

    def _detected_down(self, peer: int) -> None:
        """Rule 7's (or rule 12's: a node that left, as if found down)."""
        self.halts.pop(peer, None)
        if self.status is WAIT and peer == self.halted_by:
            self._elec1()
        elif self.status is NORM and peer == self.leader and peer != self.id:
            self._elec1()
        elif self.status is ELEC2 and peer == self.halting:
            self._halt_next()
        elif self.status is ELEC1:
            self._elec1_check()

    # --- the election -----------------------------------------------------------------

    def _elec1(self) -> None:
        self.announce_election()
        self.status, self.leader, self.halted_by = ELEC1, None, None
        self.halts = {}
        self._elec1_check()

    def _elec1_check(self) -> None:  # rule 3
        """Wait while a higher node is trusted: it has the better claim."""
        if all(h in self.suspected for h in self.higher):
            self.rule(3)
            self.status = ELEC2
            self.to_halt = sorted((i for i in self.ids if i < self.id), reverse=True)
            self.acked = []
            self._halt_next()

    def _halt_next(self) -> None:  # rules 3 and 4
        """Halt the next lower node that is not suspected; after the last, lead."""
        while self.to_halt:
            node = self.to_halt.pop(0)
            if node not in self.suspected:
                self.rule(3)
                self.halting = node
                self._halt(node)
                return
        self.rule(4)
        self.halting = None
        self.status, self.leader = NORM, self.id
        self.broadcast(tuple(self.acked), Ldr)
        self.acked = []

    def _halt(self, node: int) -> None:
        self.halts[node] = self.ticks
        self.send(node, Halt)

    def _halted(self, src: int) -> None:
        self.status, self.halted_by, self.leader = WAIT, src, None
        self.to_halt, self.halting, self.acked, self.halts = [], None, [], {}
        self.send(src, Ack)
