"""The safety and liveness monitor: it reads the trace and reports broken properties.

It lives in the runtime (the engine feeds it every event in trace order), so every
observer sees its reports in the stream: the transcript records them, the summary
lists them, the UI raises an alert. It judges only what the trace says (who is up, each
node's leader and the role of its status), so it works for every algorithm without
knowing any of them.

Rules:
  1. Judged at the end of each instant. Virtual time is discrete: what happens at one
     instant (two messages a node handles at the same t) happens at once, so a state
     that lasts no time at all is never reported. The engine says when an instant ends
     (`close`), and the reports come after that instant's events.
  2. SLE1: two up nodes in a normal status follow different leaders.
  3. Split brain: two up nodes each believe they lead (leader == itself); for an
     algorithm that declares one leader per epoch (Raft: per term), two that lead in
     the same epoch (an old leader that has not heard of a later term yet is allowed).
  4. SLE1 and split brain are episodes: one event when they begin, one when they end,
     with the duration.
  5. Agreement: every up node is normal under the highest up node; or, for an
     algorithm that declares the highest need not win (Raft: whoever wins a term's
     majority), under one up node. One definition, for everyone: an `agreement` event
     says when it is reached (and under whom) and when it is lost; the comparison and
     the UI read those.
  6. SLE2: c seconds after the last fault, there is agreement (for an algorithm that
     declares it needs a majority of the members up to elect, Raft's, only while a
     majority is up). A fault is a crash or a recovery (start-up counts as one), a
     join or a leave, a change of the links (held, released, partitioned, healed), an
     `elect` (an election started on purpose is under way, not broken) or new T or
     delays: the cluster needs its time after each (the hunt found `elect` missing:
     SLE2 was reported mid-election).
     Checked once per quiet period, at that instant's end. The monitor says when that
     is (`deadline`), so a cluster with nothing else to do still checks. Its report
     says when the last fault was (`since`), and its text calls it that.
  7. Members. A node that joins is up from then on, like one that recovers; one that
     leaves is down for good, like one that crashes. "The highest up node" is so among
     the current members.
  8. Mutual exclusion (with a mutex beside the election): at most one up node holds the
     critical section. Two or more is an episode, as in rule 4; a node that crashes
     holding it holds it no more.
  9. Its liveness: nobody waits for ever for a free critical section. When up nodes
     want it and nobody holds it for c seconds on end (SLE2's c: time enough for any
     election, and for any request to be served), that is reported once, naming who
     waits, until someone enters or nobody waits any more (a lost token, a request
     sent to a leader that crashed, a reply a crashed node never sends).
 10. Groups. For an algorithm that declares groups (the Invitation algorithm: its
     promise is per group, and a node's epoch is its group's number, which no other
     group has), SLE1 is two normal nodes of one group following different leaders,
     and split brain two leaders of one group: nodes of different groups may disagree.
     Agreement (rule 5) is one group of every up node (one epoch) under one leader. SLE2 is
     judged on each side of the links held (partitions and held links, as the engine
     holds them): c after the last fault, the up nodes of each side (those that can
     reach one another, both ways, directly or through others) are one group, normal
     under one of them; so a partition that lasts is two
     groups, not a violation, and after `heal` they must merge within c. `groups_of`
     is what a group is, for the monitor and for whoever shows the groups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from protocol import CsState, StatusRole

from .commands import LINK_COMMANDS, UNSETTLING_COMMANDS
from .config import duration_text, to_us
from .events import (
    UNSET,
    AgreementEvent,
    CommandEvent,
    CrashEvent,
    CsEvent,
    Event,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    StartEvent,
    StateEvent,
    ViolationEvent,
)
from .settings import held_after

# What the monitor reads (the trace hands it nothing else): the one list, beside `observe`.
OBSERVED = (StateEvent, CsEvent, CrashEvent, StartEvent, RecoverEvent, JoinEvent, LeaveEvent, CommandEvent)
SLE1, SPLIT_BRAIN, SLE2, MUTEX, CS_WAIT = "sle1", "split_brain", "sle2", "mutex", "cs_wait"
PROPERTY_NAMES = {SLE1: "SLE1", SPLIT_BRAIN: "split brain", SLE2: "SLE2", MUTEX: "mutual exclusion",
                  CS_WAIT: "critical section liveness"}
ONCE = (SLE2, CS_WAIT)  # the properties checked at one moment: reported when they begin, with no end


class Monitor:
    def __init__(self, ids: tuple[int, ...], settle: Callable[[], float | None], *, highest_wins: bool = True,
                 leaders_per_epoch: bool = False, needs_majority: bool = False, groups: bool = False):
        """`settle()` is c, in seconds, as the settings have it when a fault happens
        (None: SLE2 is not checked). `highest_wins`, `leaders_per_epoch`,
        `needs_majority` and `groups`: what the algorithm declares it guarantees (rules
        3, 5, 6 and 10)."""
        self._highest_wins = highest_wins
        self._per_epoch = leaders_per_epoch or groups
        self._groups = groups
        self._held: frozenset[tuple[int, int]] = frozenset()  # the links held (rule 10)
        self._needs_majority = needs_majority
        self._members = len(ids)  # (an algorithm that needs a majority has fixed members)
        self.epoch: dict[int, int] = dict.fromkeys(ids, 0)  # each node's epoch at its last state event
        self.up: set[int] = set()
        self.leader: dict[int, int | None] = dict.fromkeys(ids)
        self.normal: dict[int, bool] = dict.fromkeys(ids, False)
        self._sle2_at: int | None = None  # when SLE2 is next checked (us)
        self._wait_at: int | None = None  # when a wait for a free critical section becomes too long (rule 9)
        self._wanting: dict[int, float] = {}  # up nodes that want the critical section -> since when
        self._free_since: float | None = None  # since when nodes have waited with nobody inside
        self._settle = settle
        self._last_fault = 0.0
        self._top: int | None = None  # the highest up node
        self._normal_leaders: Counter[int | None] = Counter()  # over up nodes in a normal status
        self._leading: set[int] = set()  # up nodes whose leader is themselves
        self._holding: set[int] = set()  # up nodes in the critical section (rule 8)
        self._open: dict[str, ViolationEvent] = {}  # property -> its begin event, while it lasts
        self._agreed: int | None = None  # the leader of the agreement, as last reported
        self._changed = False  # since the last close

    @classmethod
    def for_algorithm(cls, algorithm: type, ids: tuple[int, ...], settle: Callable[[], float | None]) -> Monitor:
        """A monitor judging what `algorithm` declares it guarantees (the one place the
        declarations become a monitor: the engine's, and a real run's merge)."""
        return cls(ids, settle, highest_wins=algorithm.highest_wins, leaders_per_epoch=algorithm.leaders_per_epoch,
                   needs_majority=algorithm.needs_majority, groups=algorithm.groups)

    # --- in: the trace --------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        """Take one event, in trace order."""
        kind = type(event)
        if kind is StateEvent:
            node = event.node
            self._forget(node)
            self.leader[node], self.normal[node] = event.leader, event.role is StatusRole.NORMAL
            self.epoch[node] = event.epoch
            self._count(node)
        elif kind is CsEvent:  # rules 8 and 9
            if event.state is CsState.HELD and event.node in self.up:
                self._holding.add(event.node)
            else:
                self._holding.discard(event.node)
            if event.state is CsState.WANTED and event.node in self.up:
                self._wanting[event.node] = event.t
            else:
                self._wanting.pop(event.node, None)
            self._waits(event.t)
        elif kind is CrashEvent or kind is LeaveEvent:  # rule 7
            self._forget(event.node)
            self.up.discard(event.node)
            self._holding.discard(event.node)
            self._wanting.pop(event.node, None)
            self._waits(event.t)
            self._fault(event.t)
        elif kind is StartEvent or kind is RecoverEvent or kind is JoinEvent:
            if kind is JoinEvent:  # rule 7
                self.leader[event.node], self.normal[event.node] = None, False
            self.up.add(event.node)
            self._count(event.node)
            self._fault(event.t)
        elif kind is CommandEvent:
            if self._groups and event.command in LINK_COMMANDS:  # rule 10
                self._held = held_after(self._held, event.command, event.args, tuple(self.leader))
            if event.command in UNSETTLING_COMMANDS:
                self._fault(event.t)
            return
        else:
            return
        self._changed = True

    def close(self, t: float) -> list[Event]:
        """The instant t is over: what it began or ended (rule 1)."""
        out: list[Event] = []
        if self._changed:
            self._changed = False
            self._episodes(t, out)
            agreed = self.agreed_on()
            if agreed != self._agreed:
                self._agreed = agreed
                out.append(AgreementEvent(UNSET, t, agreed))
        if self._sle2_at is not None and to_us(t) >= self._sle2_at:
            self._sle2_at = None
            self._check_settled(t, out)
        if self._wait_at is not None and to_us(t) >= self._wait_at:  # rule 9
            self._wait_at = None
            waiting = tuple(sorted(self._wanting))
            out.append(ViolationEvent(UNSET, t, CS_WAIT, "begin", waiting, (None,) * len(waiting),
                                      since=self._free_since))
        return out

    @property
    def deadline(self) -> int | None:
        """When the monitor must next look, with nothing else due (us): SLE2's check, or a
        wait for a free critical section growing too long."""
        due = [d for d in (self._sle2_at, self._wait_at) if d is not None]
        return min(due) if due else None

    def _waits(self, t: float) -> None:
        """Rule 9's clock: it runs while nodes want the CS and nobody holds it."""
        if self._wanting and not self._holding:
            if self._free_since is None:
                self._free_since = t
                c = self._settle()
                self._wait_at = None if c is None else to_us(t + c)
        else:
            self._free_since, self._wait_at = None, None

    # --- the one definition of agreement (rule 5) ---------------------------------------------

    def agreed_on(self) -> int | None:
        """The expected leader, if every up node is normal under it; else None."""
        top = self._expected()
        if top is not None and self._normal_leaders.get(top, 0) == len(self.up) and self._one_group(top):
            return top
        return None

    def _one_group(self, top: int) -> bool:
        """Rule 10: with groups, one group, too (members of an old group under a leader
        that has moved on to a new one are not in it)."""
        return not self._groups or all(self.epoch[i] == self.epoch[top] for i in self.up)

    def _expected(self) -> int | None:
        """Whom every up node should follow: the highest up node; or, where the highest
        need not win, the up node most normal nodes follow (None: none does)."""
        if self._highest_wins:
            return self._top
        followed = [(count, leader) for leader, count in self._normal_leaders.items() if leader in self.up]
        return max(followed)[1] if followed else None

    def _unsettled_sides(self) -> list[int]:
        """Rule 10: on each side of the cut, the up nodes not normal under the leader most
        of that side follow (in one group, and on that side)."""
        behind = []
        for side in self._sides():
            followed = Counter((self.leader[i], self.epoch[i]) for i in side if self.normal[i] and self.leader[i] in side)
            top = max(followed.items(), key=lambda item: (item[1], item[0][0]))[0] if followed else None
            behind += [i for i in side if not (self.normal[i] and (self.leader[i], self.epoch[i]) == top)]
        return sorted(behind)

    def unsettled(self) -> list[int]:
        """The up nodes not (yet) normal under the expected leader: none means agreement."""
        top = self._expected()
        return sorted(i for i in self.up if not (self.normal[i] and self.leader[i] == top
                                                  and (not self._groups or self.epoch[i] == self.epoch[top])))

    # --- bookkeeping ----------------------------------------------------------------------

    def _fault(self, t: float) -> None:
        self._top = max(self.up, default=None)
        self._last_fault = t
        c = self._settle()
        self._sle2_at = None if c is None else to_us(t + c)

    def _forget(self, node: int) -> None:
        if node in self.up:
            if self.normal[node]:
                leader = self.leader[node]
                self._normal_leaders[leader] -= 1
                if not self._normal_leaders[leader]:
                    del self._normal_leaders[leader]
            self._leading.discard(node)

    def _count(self, node: int) -> None:
        if node in self.up:
            if self.normal[node]:
                self._normal_leaders[self.leader[node]] += 1
            if self.leader[node] == node:
                self._leading.add(node)

    def _episodes(self, t: float, out: list[Event]) -> None:
        sle1 = len(self._normal_leaders) > 1 and (not self._groups or bool(self._disagree()))
        for prop, broken in ((SLE1, sle1), (SPLIT_BRAIN, len(self._split()) > 1),
                             (MUTEX, len(self._holding) > 1)):
            if broken and prop not in self._open:
                nodes = self._involved(prop)
                began = ViolationEvent(UNSET, t, prop, "begin", nodes, tuple(self.leader[i] for i in nodes))
                self._open[prop] = began
                out.append(began)
            elif not broken and prop in self._open:  # rule 4
                began = self._open.pop(prop)
                lasted = round(t - began.t, 6)  # whole microseconds, as virtual time is
                out.append(ViolationEvent(UNSET, t, prop, "end", began.nodes, began.leaders, duration=lasted))

    def _split(self) -> set[int]:
        """The up nodes that lead beside another (rule 3): any two, or two of one epoch."""
        if not self._per_epoch or len(self._leading) < 2:
            return self._leading
        epochs = Counter(self.epoch[i] for i in self._leading)
        return {i for i in self._leading if epochs[self.epoch[i]] > 1}

    def _disagree(self) -> list[int]:
        """The normal up nodes that disagree (rule 2): all of them, if any two follow
        different leaders; for an algorithm with groups, those of each group that does
        (rule 10)."""
        if len(self._normal_leaders) < 2:
            return []
        if not self._groups:
            return sorted(i for i in self.up if self.normal[i])
        found = groups_of((i, self.leader[i], self.epoch[i]) for i in self.up if self.normal[i])
        return sorted(i for members in found.values() if len({leader for _, leader in members}) > 1 for i, _ in members)

    def _sides(self) -> list[set[int]]:
        """The up nodes, in sets that can reach one another both ways (rule 10)."""
        sides: list[set[int]] = []
        for i in sorted(self.up):
            joined = [s for s in sides if any((i, j) not in self._held and (j, i) not in self._held for j in s)]
            merged = {i}.union(*joined)
            sides = [s for s in sides if not any(s is j for j in joined)] + [merged]
        return sides

    def _involved(self, prop: str) -> tuple[int, ...]:
        if prop == SPLIT_BRAIN:
            return tuple(sorted(self._split()))
        if prop == MUTEX:
            return tuple(sorted(self._holding))
        return tuple(self._disagree())

    def _check_settled(self, t: float, out: list[Event]) -> None:  # rule 6
        if self._needs_majority and 2 * len(self.up) <= self._members:
            return  # no majority up: no leader is promised
        behind = self._unsettled_sides() if self._groups and self._held else self.unsettled()
        if behind:
            leaders = tuple(self.leader[i] if self.normal[i] else None for i in behind)
            out.append(ViolationEvent(UNSET, t, SLE2, "begin", tuple(behind), leaders, self._expected(), self._last_fault))


# --- what people read ------------------------------------------------------------------------


def describe(v: ViolationEvent, name: Callable[[int], str] = str, broken: str = "") -> str:
    """One line for a violation event, with nodes named by `name` (full ids in the
    summary, the UI's short labels on screen), and for one that begins, what was broken
    then (`broken`: faults.BrokenSince.text(), "links lossy since t=3.20"), after " · ".
    The one place this text is made."""
    said = _describe(v, name)
    return f"{said} · {broken}" if broken and v.phase == "begin" else said


def _describe(v: ViolationEvent, name: Callable[[int], str]) -> str:
    if v.phase == "end":
        return f"{PROPERTY_NAMES[v.property]} over after {duration_text(v.duration)}"
    if v.property == SPLIT_BRAIN:
        return f"nodes {_names(v.nodes, name)} each lead"
    if v.property == MUTEX:
        return f"{len(v.nodes)} in the critical section: nodes {_names(v.nodes, name)}"
    if v.property == CS_WAIT:
        waited = round(v.t - v.since, 6) if v.since is not None else 0
        return (f"node{'s' if len(v.nodes) > 1 else ''} {_names(v.nodes, name)} still waiting, and nobody has held the "
                f"critical section for {duration_text(waited)}")
    if v.property == SLE1:  # who follows whom, as the cards write it: "1, 2 → 5"
        groups: dict[int | None, list[int]] = {}
        for node, leader in zip(v.nodes, v.leaders, strict=True):
            groups.setdefault(leader, []).append(node)
        sides = "; ".join(f"{_names(members, name)} → {_name(leader, name)}" for leader, members in groups.items())
        return f"normal nodes disagree: {sides}"
    waited = round(v.t - v.since, 6) if v.since is not None else 0
    when = f" (at {duration_text(v.since)})" if v.since is not None else ""
    under = "one up leader" if v.expected is None else _name(v.expected, name)
    return (f"{duration_text(waited)} after the last fault{when}, "
            f"node{'s' if len(v.nodes) > 1 else ''} {_names(v.nodes, name)} not normal under {under}")


def groups_of(normal: Iterable[tuple[int, int | None, int]]) -> dict[int, list[tuple[int, int | None]]]:
    """Rule 10: normal up nodes, given as (node, leader, epoch), by group (the epoch of an
    algorithm with groups is its group number): each group's (node, leader) pairs."""
    found: dict[int, list[tuple[int, int | None]]] = {}
    for node, leader, epoch in normal:
        found.setdefault(epoch, []).append((node, leader))
    return found


def describe_groups(found: dict[int, list[tuple[int, int | None]]], name: Callable[[int], str],
                    epoch_text: Callable[[int], str]) -> str:
    """"1, 2, 3 → 3 (g3.3); 4, 5, 6 → 6 (g2.6)": each group, largest first."""
    sides = sorted(found.items(), key=lambda g: (-len(g[1]), g[1]))
    return "; ".join(f"{_names(sorted(n for n, _ in members), name)} → {_name(members[0][1], name)} ({epoch_text(epoch)})"
                     for epoch, members in sides)


def _name(node: int | None, name: Callable[[int], str]) -> str:
    return "nobody" if node is None else name(node)


def _names(nodes, name: Callable[[int], str]) -> str:
    return ", ".join(name(i) for i in nodes)


@dataclass(slots=True)
class Episode:
    """A violation from its begin to its end: `lasted` is None while it goes on (and
    always for SLE2, which is checked at one moment)."""

    began: ViolationEvent
    lasted: float | None = None
    broken: str = ""  # the model's assumptions broken when it began, and since when ("links lossy since t=3.20")

    @property
    def property(self) -> str:
        return self.began.property


@dataclass
class Episodes:
    """Pairs the monitor's begin and end events into episodes, for whoever lists them
    (the summary, the UI's alert). The one place begins and ends are paired."""

    lasting: ClassVar[tuple[str, ...]] = tuple(p for p in PROPERTY_NAMES if p not in ONCE)  # episodes with a duration
    all: list[Episode] = field(default_factory=list)  # in the order they began
    open: dict[str, Episode] = field(default_factory=dict)  # property -> the episode still going on

    def copy(self) -> Episodes:
        """An independent copy (episodes still open get their end later, separately)."""
        twin = Episodes()
        for episode in self.all:
            mine = Episode(episode.began, episode.lasted, episode.broken)
            twin.all.append(mine)
            if self.open.get(episode.property) is episode:
                twin.open[episode.property] = mine
        return twin

    def add(self, v: ViolationEvent, broken: str = "") -> None:
        """`broken`: what was broken when `v` began (a fold of the settings says: Assumptions)."""
        if v.phase == "end":
            episode = self.open.pop(v.property, None)
            if episode is not None:
                episode.lasted = v.duration
            return
        episode = Episode(v, broken=broken)
        self.all.append(episode)
        if v.property in self.lasting:
            self.open[v.property] = episode
