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

from array import array
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol import MessageRole, Status, StatusRole

from ..core.commands import NODE_ARGUMENTS, held_after
from ..core.config import ClusterConfig
from ..core.events import (
    COMES_UP,
    GOES_DOWN,
    AgreementEvent,
    CommandEvent,
    DeliverEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    HeldEvent,
    JoinEvent,
    SendEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
    ViolationEvent,
)
from ..core.host import HostStatus
from ..core.monitor import LINK_COMMANDS, PROPERTY_NAMES, Episodes, Rounds, describe
from ..record.labels import node_labels

LOG_CAP = 5000  # lines kept for the log; memory stays flat however long the run
LOG_TAIL = 2 * LOG_CAP  # events of one batch that make log lines: the rest would fall off the log unseen
_GOES_DOWN = dict(zip(GOES_DOWN, ("crashed", "left"), strict=True))  # what the log says of each
_COMES_UP = dict(zip(COMES_UP, ("started", "recovered", "joined"), strict=True))


class ViewStatus(Status):
    NOT_JOINED = "not joined yet", StatusRole.DOWN  # a node shown at a moment before it joined


@dataclass(slots=True)
class NodeView:
    id: int
    up: bool = False
    status: Status = HostStatus.DOWN
    leader: int | None = None
    epoch: int = 0
    timers: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (set at, fires)
    sent: Counter[str] = field(default_factory=Counter)  # by message label
    received: Counter[str] = field(default_factory=Counter)
    waiting: int = 0  # messages to this node waiting at the end of a held link

    @property
    def role(self) -> StatusRole:
        return self.status.role

    @property
    def leads(self) -> bool:
        return self.up and self.leader == self.id

    def copy(self) -> NodeView:
        return NodeView(self.id, self.up, self.status, self.leader, self.epoch, dict(self.timers),
                        Counter(self.sent), Counter(self.received), self.waiting)

    def become(self, other: NodeView) -> None:
        """Take `other`'s state, keeping this object (widgets hold it)."""
        self.up, self.status, self.leader, self.epoch = other.up, other.status, other.leader, other.epoch
        self.timers, self.sent, self.received = dict(other.timers), Counter(other.sent), Counter(other.received)
        self.waiting = other.waiting


@dataclass(frozen=True, slots=True)
class LogLine:
    t: float
    kind: str  # the event's kind: send, deliver, drop, state, crash, command, ...
    topic: str  # the message's label, or the kind for other lines
    role: MessageRole | None  # the message's role (None for other lines)
    nodes: tuple[int, ...]
    text: str
    state: Status | None = None  # a state line's status: the diagram's mark

    @property
    def detector(self) -> bool:
        """Failure-detector traffic, which the log can hide."""
        return self.role is MessageRole.DETECTOR


class Messages:
    """What each message of a session is, by its id: its label and role. A transcript's
    sends count their ids 0, 1, 2, ... (the reader checks), so this is a table that only
    grows, two bytes a message, and a fact of the session: every model of one history
    shares it, and a checkpoint keeps only how many messages had been sent, not a copy
    of the messages in flight (80,000 of them at a time in a broadcast storm)."""

    def __init__(self):
        self._kinds = array("H")  # message id -> index in `_names`
        self._names: list[tuple[str, MessageRole]] = []  # (label, role)
        self._index: dict[tuple[str, MessageRole], int] = {}

    def add(self, msg_id: int, label: str, role: MessageRole) -> None:
        kind = self._index.get((label, role))
        if kind is None:
            kind = self._index[label, role] = len(self._names)
            self._names.append((label, role))
        if msg_id == len(self._kinds):
            self._kinds.append(kind)
        elif msg_id > len(self._kinds) or self._kinds[msg_id] != kind:  # (another model of this history folded it)
            raise ValueError(f"message #{msg_id} out of order, or not what this session sent as #{msg_id}")

    def get(self, msg_id: int) -> tuple[str, str | None]:
        return self._names[self._kinds[msg_id]] if 0 <= msg_id < len(self._kinds) else ("?", None)

    def __len__(self) -> int:
        return len(self._kinds)

    def until(self, count: int) -> Messages:
        """A table of the first `count` messages (a branch goes on from there with its own)."""
        twin = Messages()
        twin._kinds, twin._names, twin._index = self._kinds[:count], list(self._names), dict(self._index)
        return twin


@dataclass(slots=True)
class ModelState:
    """A ClusterModel's state at one moment, apart from its log (copies, not shared):
    what the history keeps to show that moment again."""

    nodes: dict[int, NodeView]
    episodes: Episodes
    config: ClusterConfig
    topics: dict[str, str]
    rounds: Rounds
    messages: Messages = field(compare=False)  # shared, not copied: it only grows (its labels count in `nodes`)
    sent: int  # how many messages had been sent
    held_links: frozenset[tuple[int, int]]
    held: dict[int, int]


class ClusterModel:
    def __init__(self, ids: tuple[int, ...], worst_case: int | None, config: ClusterConfig):
        self.ids = ids
        self.label = node_labels(ids)
        self.nodes = {i: NodeView(i) for i in ids}
        self.episodes = Episodes()
        self.worst_case = worst_case
        self.config = config  # T and the delays, as the trace's commands have set them
        self.log: deque[LogLine] = deque(maxlen=LOG_CAP)
        self.logged = 0  # every line ever logged, kept or not
        self.loads = 0  # times its log stopped following on from the last lines: another moment, or a backlog
        self.topics: dict[str, MessageRole] = {}  # message labels seen -> their role, in order of appearance
        self.rounds = Rounds()  # election rounds, as the monitor's module defines them
        self.messages = Messages()  # message id -> (label, role): the history's, once the model shows a moment of it
        self.sent = 0  # messages sent so far
        self.held_links: frozenset[tuple[int, int]] = frozenset()  # as the trace's link commands left them
        self._held: dict[int, int] = {}  # message id -> its receiver, while it waits at a held link's end

    def apply(self, events: list[Event], log: bool = True) -> None:
        """Fold events in; `log=False` keeps the state only (the history's checkpoints
        need no log lines, and making them is most of the cost)."""
        if log and len(events) > LOG_TAIL:  # a backlog: only its last lines can stay in the log
            self.apply(events[:-LOG_TAIL], log=False)
            events = events[-LOG_TAIL:]
            self.loads += 1  # (the log no longer follows on from its last lines: whoever reads it, afresh)
        line = self._log if log else None
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                label, role = e.msg.label, e.msg.role
                self.messages.add(e.id, label, role)
                self.sent = e.id + 1
                self.nodes[e.src].sent[label] += 1
                self.rounds.observe(e)
                if label not in self.topics:
                    self.topics[label] = role
                if line:
                    line(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id}")
            elif kind is DeliverEvent:
                label, role = self.messages.get(e.id)
                self.nodes[e.dst].received[label] += 1
                if self._held and e.id in self._held:
                    self.nodes[self._held.pop(e.id)].waiting -= 1
                if line:
                    line(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id} delivered")
            elif kind is DropEvent:
                label, role = self.messages.get(e.id)
                if self._held and e.id in self._held:
                    self.nodes[self._held.pop(e.id)].waiting -= 1
                if line:
                    line(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id} dropped: {e.reason}")
            elif kind is StateEvent:
                node = self.nodes[e.node]
                node.status, node.leader, node.epoch = e.status, e.leader, e.epoch
                if line:
                    leader = "none" if e.leader is None else self.label[e.leader]
                    line(e, "state", None, (e.node,), f"node {self.label[e.node]} {e.status}, leader {leader}",
                         e.status)
            elif kind is TimerSetEvent:
                self.nodes[e.node].timers[e.name] = (e.t, e.fires)
            elif kind is TimerEvent or kind is TimerCancelEvent:
                self.nodes[e.node].timers.pop(e.name, None)
            elif kind is ElectionStartEvent:
                self.rounds.observe(e)
            elif kind is AgreementEvent:
                self.rounds.observe(e)
                if line:
                    text = "agreement lost" if e.leader is None else f"agreement: every up node follows {self.label[e.leader]}"
                    line(e, "agreement", None, () if e.leader is None else (e.leader,), text)
            elif kind in _GOES_DOWN:
                node = self.nodes[e.node]
                node.up = False
                node.timers.clear()
                if line:
                    line(e, e.kind, None, (e.node,), f"node {self.label[e.node]} {_GOES_DOWN[kind]}")
            elif kind in _COMES_UP:
                if kind is JoinEvent:
                    self._admit(e.node)
                self.nodes[e.node].up = True
                if line:
                    line(e, e.kind, None, (e.node,), f"node {self.label[e.node]} {_COMES_UP[kind]}")
            elif kind is HeldEvent:
                self._held[e.id] = e.dst
                self.nodes[e.dst].waiting += 1
                if line:
                    label, role = self.messages.get(e.id)
                    line(e, label, role, (e.src, e.dst), f"{self._link(e)} {label} #{e.id} waits: the link is held")
            elif kind is CommandEvent:
                if e.command == "timeout":
                    self.config = self.config.with_timeout(*e.args)
                elif e.command == "delay":
                    self.config = self.config.with_delay(*e.args)
                elif e.command in LINK_COMMANDS:
                    self.held_links = held_after(self.held_links, e.command, e.args, self.ids)
                elif e.command == "join":
                    self._admit(*e.args)
                if line:
                    line(e, "command", None, (), f"{e.source}: {self.command_text(e)}")
            elif kind is ViolationEvent:
                self.episodes.add(e)
                if line:
                    text = describe(e, self.label.__getitem__)
                    line(e, "violation", None, e.nodes, f"⚠ {PROPERTY_NAMES[e.property]}: {text}" if e.phase == "begin" else text)

    def _admit(self, node: int) -> None:
        """A node that joins: a view of its own, and labels worked out again (a new UUID
        can need a longer prefix), in the same dict, which widgets hold."""
        if node not in self.nodes:
            self.ids = tuple(sorted((*self.ids, node)))
            self.nodes[node] = NodeView(node)
            self.label.update(node_labels(self.ids))

    @property
    def agreed(self) -> int | None:
        """The leader every up node follows, while they all do (the monitor's agreement)."""
        return self.rounds.agreed

    def command_text(self, e: CommandEvent) -> str:
        args = (self.label[a] if e.command in NODE_ARGUMENTS or e.command == "join" else f"{a:g}" for a in e.args)
        return " ".join([e.command, *args])

    def _link(self, e: SendEvent | DeliverEvent | DropEvent) -> str:
        return f"{self.label[e.src]}→{self.label[e.dst]}"

    def _log(self, e: Event, topic: str, role: MessageRole | None, nodes: tuple[int, ...], text: str,
             state: Status | None = None) -> None:
        self.logged += 1
        self.log.append(LogLine(e.t, e.kind, topic, role, nodes, text, state))

    @property
    def synchronous(self) -> bool:
        """The synchrony bound holds: T >= 2 x max delay, and no link is held."""
        return self.config.synchronous and not self.held_links

    def leaders(self) -> list[int]:
        """Up nodes that believe they lead (more than one is split brain)."""
        return [n.id for n in self.nodes.values() if n.leads]

    # --- keeping and showing again --------------------------------------------------------

    def state(self) -> ModelState:
        return ModelState(
            {i: n.copy() for i, n in self.nodes.items()}, self.episodes.copy(), self.config, dict(self.topics),
            self.rounds.copy(), self.messages, self.sent, self.held_links, dict(self._held))

    def load(self, state: ModelState, log: Iterable[LogLine] = ()) -> None:
        """Become `state` (with these log lines), in place: widgets hold this model and
        its node views, so they show the new state without being told."""
        for i in state.nodes.keys() - self.nodes.keys():  # one that had joined by then: a view of its own
            self._admit(i)
        for i, node in self.nodes.items():  # one that joins later: not there yet
            node.become(state.nodes.get(i) or NodeView(i, status=ViewStatus.NOT_JOINED))
        self.episodes = state.episodes.copy()
        self.config, self.topics = state.config, dict(state.topics)
        self.rounds = state.rounds.copy()
        self.messages, self.sent = state.messages, state.sent
        self.held_links, self._held = state.held_links, dict(state.held)
        self.log.clear()
        self.log.extend(log)
        self.loads += 1
