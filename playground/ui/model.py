"""What the screen shows, folded from the trace stream: per-node state, the log, counts.

Plain Python, no Textual: the app feeds it event batches as they come and the widgets
read it when they redraw (at most ~20 times a second), so a burst of ten thousand
events costs ten thousand cheap updates and not ten thousand redraws. It is the UI's
reading of the stream, nothing more: what the stream does not say (a node's protocol
variables) the panel asks the engine for, and the settings are the cluster's.

It knows no algorithm: messages are shown by the name (`label`) and colour (`role`) their
algorithm declares, statuses by their role, violations in the monitor's words.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from ..events import (
    AgreementEvent,
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
from ..monitor import PROPERTY_NAMES, Episodes, describe
from .labels import node_labels

LOG_CAP = 5000  # lines kept for the log; memory stays flat however long the run
DETECTOR = "detector"  # the message role of failure-detector traffic, which the log can hide
NODE_ARGS = ("crash", "recover", "elect")  # commands whose argument is a node


@dataclass(slots=True)
class NodeView:
    id: int
    up: bool = False
    status: str = "down"
    role: str = "down"
    leader: int | None = None
    epoch: int = 0
    timers: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (set at, fires)
    sent: Counter[str] = field(default_factory=Counter)  # by message label
    received: Counter[str] = field(default_factory=Counter)

    @property
    def leads(self) -> bool:
        return self.up and self.leader == self.id


@dataclass(frozen=True, slots=True)
class LogLine:
    t: float
    kind: str  # the event's kind: send, deliver, drop, state, crash, command, ...
    topic: str  # the message's label, or the kind for other lines
    role: str | None  # the message's role (None for other lines)
    nodes: tuple[int, ...]
    text: str


class ClusterModel:
    def __init__(self, ids: tuple[int, ...], worst_case: int | None):
        self.ids = ids
        self.label = node_labels(ids)
        self.nodes = {i: NodeView(i) for i in ids}
        self.episodes = Episodes()
        self.worst_case = worst_case
        self.log: deque[LogLine] = deque(maxlen=LOG_CAP)
        self.logged = 0  # every line ever logged, kept or not
        self.topics: dict[str, str] = {}  # message labels seen -> their role, in order of appearance
        self.elections = 0  # election rounds: from a first election_start to the monitor's agreement
        self.in_election = False
        self.election_messages = 0  # sent in the current (or last) round, failure detection apart
        self._in_flight: dict[int, tuple[str, str]] = {}  # message id -> (label, role)

    def apply(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                label, role = e.msg.label, str(e.msg.role)
                self._in_flight[e.id] = (label, role)
                self.nodes[e.src].sent[label] += 1
                if self.in_election and role != DETECTOR:
                    self.election_messages += 1
                if label not in self.topics:
                    self.topics[label] = role
                self._log(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id}")
            elif kind is DeliverEvent:
                label, role = self._in_flight.pop(e.id, ("?", None))
                self.nodes[e.dst].received[label] += 1
                self._log(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id} delivered")
            elif kind is DropEvent:
                label, role = self._in_flight.pop(e.id, ("?", None))
                self._log(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id} dropped: {e.reason}")
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
            elif kind is AgreementEvent:
                if e.leader is not None:
                    self.in_election = False
                    self._log(e, "agreement", None, (e.leader,), f"agreement: every up node follows {self.label[e.leader]}")
            elif kind is CrashEvent:
                node = self.nodes[e.node]
                node.up = False
                node.timers.clear()
                self._log(e, "crash", None, (e.node,), f"node {self.label[e.node]} crashed")
            elif kind is RecoverEvent or kind is StartEvent:
                self.nodes[e.node].up = True
                verb = "recovered" if kind is RecoverEvent else "started"
                self._log(e, e.kind, None, (e.node,), f"node {self.label[e.node]} {verb}")
            elif kind is CommandEvent:
                self._log(e, "command", None, (), f"{e.source}: {self.command_text(e)}")
            elif kind is ViolationEvent:
                self.episodes.add(e)
                text = describe(e, self.label.__getitem__)
                if e.phase == "begin":
                    text = f"⚠ {PROPERTY_NAMES[e.property]}: {text}"
                self._log(e, "violation", None, e.nodes, text)

    def command_text(self, e: CommandEvent) -> str:
        args = (self.label[a] if e.command in NODE_ARGS else f"{a:g}" for a in e.args)
        return " ".join([e.command, *args])

    def _link(self, e: SendEvent | DeliverEvent | DropEvent) -> str:
        return f"{self.label[e.src]}→{self.label[e.dst]}"

    def _state(self, e: StateEvent) -> None:
        node = self.nodes[e.node]
        node.status, node.role, node.leader, node.epoch = e.status, e.role, e.leader, e.epoch
        leader = "none" if e.leader is None else self.label[e.leader]
        self._log(e, "state", None, (e.node,), f"node {self.label[e.node]} {e.status}, leader {leader}")

    def _log(self, e: Event, topic: str, role: str | None, nodes: tuple[int, ...], text: str) -> None:
        self.logged += 1
        self.log.append(LogLine(e.t, e.kind, topic, role, nodes, text))

    def leaders(self) -> list[int]:
        """Up nodes that believe they lead (more than one is split brain)."""
        return [n.id for n in self.nodes.values() if n.leads]
