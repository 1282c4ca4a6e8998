"""Garcia-Molina's Invitation algorithm (1982, section 5; Stoller's notes' "disjoint groups"),
as PROTOCOLS.md section 6 reads it.

Theory in one paragraph. The Bully assumes the network never fails: after a partition
heals, Garcia-Molina's keeps two coordinators for ever. The Invitation algorithm gives
that up on purpose. The nodes form disjoint groups, each with a coordinator and a group
number no other group has; its only promise is that nodes that are normal in the same
group follow the same coordinator (SLE1 per group, which the monitor judges so). A
coordinator keeps asking everyone "are you a coordinator?"; when others answer, it merges
their groups into a new one of its own: a new group number, an Invitation to the other
coordinators (which pass it on to their members) and to its own members, an Accept from
each that comes, then Ready to those. A coordinator that found a higher one waits longer
before merging, so that the higher one invites it first rather than both inviting each
other. A member keeps asking its coordinator "are you there, in my group?"; when it does
not answer, or says no, the member forms a group of its own, and the coordinators'
questions merge it back in. A partition leaves a group on each side (no violation);
after `heal`, the coordinators find each other and merge into one group within c.

Group numbers. A group is named by its creator and the creator's count of the groups it
has made (kept in safe storage, so a node that recovers never reuses one): the number is
`count * GROUP_STRIDE + creator`, and it is the node's epoch, what every message carries
and a state event reports (so the monitor can tell groups apart without knowing this
module). A node's epoch changes only when it joins or makes a group: unlike the other
algorithms, it does not take a higher epoch from a message. `epoch_text` writes a group
number as people read it: "g2.6" is node 6's second group.

Rules (P is this node; the probe interval P' drives rules 6 and 7; T is the timeout):
  1. Start, recovery or joining, `elect`, and rule 7's and rule 5's failures: P forms a
     group of its own (a new group number, P coordinates it, nobody else in it) and
     checks at once (rule 6).
  2. Invitation(c, g): P, if normal, leaves its group for c's group g: it passes the
     invitation on to its own members if it coordinates, takes g as its group and c as
     its leader, sends Accept(g) to c, and waits for Ready (invited). A node that is not
     normal (merging, or invited by another) ignores it: the inviter's wait runs out.
  3. Accept(g) at the coordinator merging into g: the sender is a member.
  4. Merge: P makes a new group (rule 1's number), sends Invitation(P, g) to the
     coordinators it found and to its own members, and waits 2T for Accepts (an Accept
     from a member of another group comes by that group's coordinator: two hops, each
     within T/2). Then it sends Ready(g) to those that accepted, and is normal.
  5. Ready(g) from the inviter of the group P was invited to: P is normal in it. No
     Ready within 3T of the Invitation: P forms a group of its own (rule 1).
  6. Check, every P' (and at once on rule 1) while P coordinates and is normal: P sends
     AreYouCoordinator to every other member; the normal coordinators answer yes. After
     T, if any did: P waits 2T for each of them higher than itself (so the highest one
     merges first and invites the rest), then, if it still coordinates and is normal,
     merges with those it found (rule 4).
  7. Are you there, every P' while P is a normal member: AreYouThere(g) to its
     coordinator, which answers yes if it coordinates group g, is normal or merging, and
     has P among its members. No answer within T, or a no while P is still normal in g:
     P forms a group of its own (rule 1).
  8. A member that leaves is taken out of its coordinator's members; a coordinator that
     leaves is gone for its members (rule 1).

Statuses: merging (a coordinator inviting: electing), invited (waiting for Ready:
waiting), normal (in a group: its coordinator, or a member).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .interface import Config, Message, MessageRole, Node, SafeStorage, Status, StatusRole


class InvitationStatus(Status):
    MERGING = "merging", StatusRole.ELECTING
    INVITED = "invited", StatusRole.WAITING
    NORMAL = "normal", StatusRole.NORMAL


MERGING, INVITED, NORMAL = InvitationStatus

# A group number is count * GROUP_STRIDE + creator: ids below a million are their own
# names (`--ids` 1..N), the others 128-bit UUIDs; either way no two creators share one.
SMALL_IDS, UUID_SPAN = 10**6, 2**128

RULES = {
    1: "Start, recovery, joining, or elect: the node forms a group of its own (a new group number, it "
       "coordinates, nobody else in it) and checks at once for other coordinators.",
    2: "Invitation while normal: the node leaves its group for the inviter's, passes the invitation on to its "
       "own members if it coordinates, sends Accept, and waits for Ready.",
    3: "Accept at the coordinator merging into that group: the sender is a member.",
    4: "Merge: the node makes a new group, invites the coordinators it found and its own members, waits 2T "
       "for Accepts, then sends Ready to those that accepted.",
    5: "Ready from the inviter: the node is normal in the new group; no Ready within 3T: it forms a group of "
       "its own.",
    6: "Check, every P while a normal coordinator: the node asks every other member AreYouCoordinator; if "
       "some say yes, it waits 2T for each higher one, then merges with them.",
    7: "Every P a normal member asks its coordinator AreYouThere; no answer within T, or a no: it forms a "
       "group of its own.",
    8: "A member that leaves is taken out of its coordinator's group; a coordinator that leaves is gone, and "
       "each of its members forms a group of its own.",
}

CHECK = "check"  # rule 6: time to ask who else coordinates
CHECK_WAIT = "check_wait"  # rule 6: the answers are in
MERGE_DELAY = "merge_delay"  # rule 6: the wait before merging, longer for a lower coordinator
ACCEPT_WAIT = "accept_wait"  # rule 4
READY_WAIT = "ready_wait"  # rule 5
THERE = "ask_leader"  # rule 7: time to ask the coordinator "are you there?"
THERE_WAIT = "ask_wait"  # rule 7


def group_stride(node: int) -> int:
    return SMALL_IDS if node < SMALL_IDS else UUID_SPAN


@dataclass(slots=True)
class InvitationStorage(SafeStorage):
    """Besides the group number (the epoch): how many groups this node has made."""

    groups_made: int = 0


@dataclass(frozen=True, slots=True)
class AreYouCoordinator(Message):
    type: ClassVar[str] = "are_you_coordinator"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR


@dataclass(frozen=True, slots=True)
class CoordinatorReply(Message):
    type: ClassVar[str] = "coordinator_reply"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    coordinates: bool


@dataclass(frozen=True, slots=True)
class AreYouThere(Message):
    type: ClassVar[str] = "are_you_there"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    group: int


@dataclass(frozen=True, slots=True)
class ThereReply(Message):
    type: ClassVar[str] = "there_reply"
    role: ClassVar[MessageRole] = MessageRole.DETECTOR
    group: int
    member: bool


@dataclass(frozen=True, slots=True)
class Invitation(Message):
    type: ClassVar[str] = "invitation"
    inviter: int
    group: int


@dataclass(frozen=True, slots=True)
class Accept(Message):
    type: ClassVar[str] = "accept"
    role: ClassVar[MessageRole] = MessageRole.REPLY
    group: int


@dataclass(frozen=True, slots=True)
class Ready(Message):
    type: ClassVar[str] = "ready"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT
    group: int


class InvitationNode(Node):
    name = "invitation"
    title = "Garcia-Molina's Invitation"
    messages = (AreYouCoordinator, CoordinatorReply, AreYouThere, ThereReply, Invitation, Accept, Ready)
    statuses = InvitationStatus
    storage_class = InvitationStorage
    storage: InvitationStorage
    highest_wins = False  # whoever merges first coordinates the merged group
    groups = True
    rules = RULES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.members: set[int] = set()  # as coordinator: the others in its group
        self.found: set[int] = set()  # rule 6: coordinators that answered this check

    @classmethod
    def epoch_text(cls, epoch: int) -> str:
        """"g2.6": node 6's second group (0 before any: "g0")."""
        if epoch < UUID_SPAN:
            return "g{}.{}".format(*divmod(epoch, SMALL_IDS)) if epoch else "g0"
        count, creator = divmod(epoch, UUID_SPAN)
        return f"g{count}.{creator:032x}"

    @classmethod
    def settle_time(cls, n: int, config: Config, max_delay: float) -> float:
        """On top of the default: a member notices its coordinator gone (P' and T), then
        two checks (P', T, the merge delay of up to 2T for each higher coordinator,
        the Accepts' 2T and Ready)."""
        check = config.probe_interval + config.timeout + 2 * config.timeout * n + 3 * config.timeout
        return (super().settle_time(n, config, max_delay) + config.probe_interval + config.timeout + 2 * check)

    def adopt_epoch(self, msg: Message) -> None:
        """The epoch is the group number: set by joining or making a group, never taken
        from a message."""

    def variables(self) -> dict[str, object]:
        return {
            "group": self.epoch_text(self.epoch),
            "members": sorted(self.members) if self.leader == self.id else None,
            "found": sorted(self.found) or None,
        }

    # --- inputs ---------------------------------------------------------------------

    def on_start(self) -> None:  # rule 1
        self.rule(1)
        self.storage.incarnation += 1
        self._own_group()

    def on_suspect(self) -> None:  # rule 1
        self.rule(1)
        self._own_group()

    def on_message(self, src: int, msg: Message) -> None:
        match msg:
            case AreYouCoordinator():  # rule 6
                self.rule(6)
                self.send(src, CoordinatorReply, self._coordinates())
            case CoordinatorReply(coordinates=True) if CHECK_WAIT in self.timers:  # rule 6
                self.rule(6)
                self.found.add(src)
            case AreYouThere(group=g):  # rule 7
                self.rule(7)
                member = (self.leader == self.id and self.epoch == g and self.status is not INVITED
                          and src in self.members)
                self.send(src, ThereReply, g, member)
            case ThereReply(group=g, member=member) if self._member_of(g) and src == self.leader:  # rule 7
                self.rule(7)
                self.cancel_timer(THERE_WAIT)
                if member:
                    self._ask_later()
                else:
                    self._own_group()
            case Invitation(inviter=c, group=g) if self.status is NORMAL:  # rule 2
                self.rule(2)
                if self.leader == self.id:
                    self.broadcast(tuple(sorted(self.members - {c})), Invitation, c, g)
                self._stop_periodic()
                self.members, self.found = set(), set()
                self.storage.epoch, self.leader, self.status = g, c, INVITED
                self.send(c, Accept, g)
                self.set_timer(READY_WAIT, 3 * self.config.timeout)
            case Accept(group=g) if self.status is MERGING and self.epoch == g:  # rule 3
                self.rule(3)
                self.members.add(src)
            case Ready(group=g) if self.status is INVITED and self.epoch == g and src == self.leader:  # rule 5
                self.rule(5)
                self.cancel_timer(READY_WAIT)
                self.status = NORMAL
                self._ask_later()

    def on_member_left(self, node: int) -> None:  # rule 8
        self.rule(8)
        self.members.discard(node)
        self.found.discard(node)
        if node == self.leader:
            self._own_group()

    def on_timer(self, name: str) -> None:
        if name == CHECK and self._coordinates():  # rule 6
            self.rule(6)
            self._check()
        elif name == CHECK_WAIT:  # rule 6
            self.rule(6)
            higher = sum(1 for c in self.found if c > self.id)
            if self.found:
                self.set_timer(MERGE_DELAY, 2 * self.config.timeout * higher)
            else:
                self._check_later()
        elif name == MERGE_DELAY:  # rule 6
            if self._coordinates():
                self._merge()
        elif name == ACCEPT_WAIT and self.status is MERGING:  # rule 4
            self.rule(4)
            self.broadcast(tuple(sorted(self.members)), Ready, self.epoch)
            self.status = NORMAL
            self._check_later()
        elif name == READY_WAIT and self.status is INVITED:  # rule 5
            self.rule(5)
            self._own_group()
        elif name == THERE and self.status is NORMAL and self.leader != self.id:  # rule 7
            self.rule(7)
            self.send(self.leader, AreYouThere, self.epoch)
            self.set_timer(THERE_WAIT, self.config.timeout)
        elif name == THERE_WAIT and self.status is NORMAL and self.leader != self.id:  # rule 7
            self.rule(7)
            self._own_group()

    # --- groups -----------------------------------------------------------------------

    def _coordinates(self) -> bool:
        return self.status is NORMAL and self.leader == self.id

    def _member_of(self, g: int) -> bool:
        return self.status is NORMAL and self.leader != self.id and self.epoch == g

    def _new_group(self) -> int:
        """Rule 1's number: this node's next count, never one it used before."""
        self.storage.groups_made += 1
        self.announce_election()  # (for observers: a group made is an election run)
        self.storage.epoch = self.storage.groups_made * group_stride(self.id) + self.id
        return self.storage.epoch

    def _own_group(self) -> None:  # rule 1
        self._stop_periodic()
        self.cancel_timer(READY_WAIT, ACCEPT_WAIT)
        self._new_group()
        self.members, self.found = set(), set()
        self.status, self.leader = NORMAL, self.id
        self._check()

    def _check(self) -> None:  # rule 6
        self.found = set()
        self.broadcast(self.others, AreYouCoordinator)
        self.set_timer(CHECK_WAIT, self.config.timeout)

    def _merge(self) -> None:  # rule 4
        self.rule(4)  # (rule 6's merge delay ends in it: the Invitations are rule 4's)
        invited = tuple(sorted(self.found | self.members))
        self._stop_periodic()
        g = self._new_group()
        self.members, self.found = set(), set()
        self.status, self.leader = MERGING, self.id
        self.broadcast(invited, Invitation, self.id, g)
        self.set_timer(ACCEPT_WAIT, 2 * self.config.timeout)

    def _check_later(self) -> None:
        if self.config.probe_interval > 0:
            self.set_timer(CHECK, self.config.probe_interval)

    def _ask_later(self) -> None:
        if self.config.probe_interval > 0:
            self.set_timer(THERE, self.config.probe_interval)

    def _stop_periodic(self) -> None:
        self.cancel_timer(CHECK, CHECK_WAIT, MERGE_DELAY, THERE, THERE_WAIT)
