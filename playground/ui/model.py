"""What the screen shows, folded from the trace stream: per-node state, the log, counts.

Plain Python, no Textual: the app feeds it event batches as they come and the widgets
read it when they redraw (at most ~20 times a second), so a burst of ten thousand
events costs ten thousand cheap updates and not ten thousand redraws.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from ..commands import NODE_COMMANDS
from ..events import (
    CommandEvent,
    CrashEvent,
    DeliverEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
    ViolationEvent,
)
from .labels import node_labels

LOG_CAP = 5000  # lines kept for the log; memory stays flat however long the run


@dataclass(slots=True)
class NodeView:
    id: int
    up: bool = False
    status: str = "down"
    leader: int | None = None
    normal: bool = False
    epoch: int = 0
    timers: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (set at, fires)
    sent: Counter[str] = field(default_factory=Counter)
    received: Counter[str] = field(default_factory=Counter)

    @property
    def leads(self) -> bool:
        return self.up and self.leader == self.id


@dataclass(frozen=True, slots=True)
class LogLine:
    t: float
    kind: str  # send, deliver, drop, state, crash, recover, start, command
    topic: str  # the message type, or the kind for non-message lines
    nodes: tuple[int, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Violation:
    """A property the monitor saw broken: since `t`, among `nodes`, as `text` says;
    `lasted` once it is over."""

    property: str
    t: float
    nodes: tuple[int, ...]
    text: str
    lasted: float | None = None


PROPERTY_NAMES = {"sle1": "SLE1", "split_brain": "split brain", "sle2": "SLE2"}


class ClusterModel:
    def __init__(self, ids: tuple[int, ...], worst_case: int | None):
        self.ids = ids
        self.label = node_labels(ids)
        self.nodes = {i: NodeView(i) for i in ids}
        self.violations: list[Violation] = []  # every one, in order
        self.open_violations: dict[str, Violation] = {}  # those still going on
        self.worst_case = worst_case
        self.log: deque[LogLine] = deque(maxlen=LOG_CAP)
        self.logged = 0  # every line ever logged, kept or not
        self.topics: set[str] = set()
        self.elections = 0  # election rounds: from a first election_start to agreement
        self.in_election = False
        self.election_messages = 0  # sent in the current (or last) round
        self._types: dict[int, str] = {}  # message id -> type, while in flight

    def apply(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                t = e.msg.type
                self._types[e.id] = t
                self.nodes[e.src].sent[t] += 1
                if self.in_election:
                    self.election_messages += 1
                self._log(e, t, (e.src, e.dst), f"{self._link(e)} {t} #{e.id}")
            elif kind is DeliverEvent:
                t = self._types.pop(e.id, "?")
                self.nodes[e.dst].received[t] += 1
                self._log(e, t, (e.src, e.dst), f"{self._link(e)} {t} #{e.id} delivered")
            elif kind is DropEvent:
                t = self._types.pop(e.id, "?")
                self._log(e, t, (e.src, e.dst), f"{self._link(e)} {t} #{e.id} dropped: {e.reason}")
            elif kind is StateEvent:
                self._state(e)
            elif kind is TimerSetEvent:
                self.nodes[e.node].timers[e.name] = (e.t, e.fires)
            elif kind is TimerEvent or kind is TimerCancelEvent:
                self.nodes[e.node].timers.pop(e.name, None)
            elif kind is ElectionStartEvent:
                if not self.in_election:
                    self.in_election = True
                    self.elections += 1
                    self.election_messages = 0
            elif kind is CrashEvent:
                node = self.nodes[e.node]
                node.up = False
                node.timers.clear()
                self._log(e, "crash", (e.node,), f"node {self.label[e.node]} crashed")
            elif kind is RecoverEvent or kind is StartEvent:
                self.nodes[e.node].up = True
                verb = "recovered" if kind is RecoverEvent else "started"
                self._log(e, e.kind, (e.node,), f"node {self.label[e.node]} {verb}")
            elif kind is CommandEvent:
                args = " ".join(self.label.get(a, f"{a:g}") if e.command in NODE_COMMANDS else f"{a:g}" for a in e.args)
                self._log(e, "command", (), f"{e.source}: {e.command} {args}".rstrip())
            elif kind is ViolationEvent:
                self._violation(e)

    def _link(self, e: SendEvent | DeliverEvent | DropEvent) -> str:
        return f"{self.label[e.src]}→{self.label[e.dst]}"

    def names(self, nodes) -> str:
        return ", ".join(self.label[i] for i in nodes)

    def _violation(self, e: ViolationEvent) -> None:
        name = PROPERTY_NAMES.get(e.property, e.property)
        if e.phase == "end":
            began = self.open_violations.pop(e.property, None)
            if began is not None:
                ended = Violation(e.property, began.t, began.nodes, began.text, e.duration)
                self.violations[self.violations.index(began)] = ended
            self._log(e, "violation", e.nodes, f"{name} over after {e.duration:g}s")
            return
        v = Violation(e.property, e.t, e.nodes, self._describe(e))
        self.violations.append(v)
        if e.property != "sle2":  # SLE2 is a check at one moment, not an episode
            self.open_violations[e.property] = v
        self._log(e, "violation", e.nodes, f"⚠ {name}: {v.text}")

    def _describe(self, e: ViolationEvent) -> str:
        """What was broken, in the UI's names for the nodes (the event's own detail
        spells out full ids, which for UUIDs are 39 digits)."""
        if e.property == "split_brain":
            return f"nodes {self.names(e.nodes)} each lead"
        if e.property == "sle1":  # who follows whom, as of this moment
            groups: dict[int | None, list[int]] = {}
            for i in e.nodes:
                groups.setdefault(self.nodes[i].leader, []).append(i)
            return "; ".join(f"{self.names(members)} → {self.label.get(leader, '?')}" for leader, members in groups.items())
        return f"nodes {self.names(e.nodes)} not settled under the highest up node"

    def _state(self, e: StateEvent) -> None:
        node = self.nodes[e.node]
        changed = (node.status, node.leader) != (e.status, e.leader)
        node.status, node.leader, node.normal, node.epoch = e.status, e.leader, e.normal, e.epoch
        if changed:  # not for an epoch alone: that would double the log's state lines
            leader = "none" if e.leader is None else self.label[e.leader]
            self._log(e, "state", (e.node,), f"node {self.label[e.node]} {e.status}, leader {leader}")
        if self.in_election and self.agreed():
            self.in_election = False

    def agreed(self) -> bool:
        """Every up node is normal under one leader (there may be no up node)."""
        leaders = {n.leader for n in self.nodes.values() if n.up}
        return all(n.normal for n in self.nodes.values() if n.up) and len(leaders) <= 1

    def _log(self, e: Event, topic: str, nodes: tuple[int, ...], text: str) -> None:
        self.logged += 1
        self.topics.add(topic)
        self.log.append(LogLine(e.t, e.kind, topic, nodes, text))

    def leaders(self) -> list[int]:
        """Up nodes that believe they lead (more than one is split brain)."""
        return [n.id for n in self.nodes.values() if n.leads]
