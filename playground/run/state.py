"""A cluster's state at one moment, as its trace stream tells it: each node's status,
leader, timers and counts, the settings (T, the delays, the links held), the election
rounds and the violations under way.

Plain Python. The timeline (timeline.py) folds the stream into one of these as a run
goes, keeps copies at checkpoints (`snapshot`), and loads one to show an instant of the
past again; the app renders it. It is the runtime's reading of the trace, so a screen
keeps no copy of what the runtime owns: the settings come from the commands the trace
records, worked out by the same code the engine runs (settings.Settings).

A snapshot shares the table of messages (`Messages`): it only grows, so a checkpoint
keeps how many messages had been sent, not the 80,000 in flight in a storm.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

from protocol import CsState, MessageRole, Status, StatusRole, machine

from ..core.config import ClusterConfig
from ..core.cs_entries import CsEntries
from ..core.events import (
    COMES_UP,
    GOES_DOWN,
    AgreementEvent,
    CommandEvent,
    CsEvent,
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
from ..core.faults import ASSUMPTIONS, SYNCHRONY
from ..core.host import HostStatus
from ..core.monitor import Episodes, groups_of
from ..core.rounds import Rounds
from ..core.settings import Assumptions, Settings


class ViewStatus(Status):
    NOT_JOINED = "not joined yet", StatusRole.DOWN  # a node shown at a moment before it joined


@dataclass(slots=True)
class NodeState:
    id: int
    up: bool = False
    status: Status = HostStatus.DOWN
    leader: int | None = None
    epoch: int = 0
    timers: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (set at, fires)
    sent: Counter[str] = field(default_factory=Counter)  # by message label
    received: Counter[str] = field(default_factory=Counter)
    waiting: int = 0  # messages to this node waiting at the end of a held link
    cs: CsState | None = None  # with a mutex: its place with respect to the critical section
    rule: str | None = None  # the key of the last rule it applied: its latest event that named one

    @property
    def role(self) -> StatusRole:
        return self.status.role

    @property
    def leads(self) -> bool:
        return self.up and self.leader == self.id

    @property
    def left(self) -> bool:
        return self.status is HostStatus.LEFT

    def copy(self) -> NodeState:
        return NodeState(self.id, self.up, self.status, self.leader, self.epoch, dict(self.timers),
                         Counter(self.sent), Counter(self.received), self.waiting, self.cs, self.rule)

    def become(self, other: NodeState) -> None:
        """Take `other`'s state, keeping this object (widgets hold it)."""
        self.up, self.status, self.leader, self.epoch = other.up, other.status, other.leader, other.epoch
        self.timers, self.sent, self.received = dict(other.timers), Counter(other.sent), Counter(other.received)
        self.cs, self.rule = other.cs, other.rule
        self.waiting = other.waiting


class Messages:
    """What each message of a session is, by its id: its label and role. A transcript's
    sends count their ids 0, 1, 2, ... (the reader checks), so this is a table that only
    grows, two bytes a message, and a fact of the session: every state of one history
    shares it."""

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
        elif msg_id > len(self._kinds) or self._kinds[msg_id] != kind:  # (another state of this history folded it)
            raise ValueError(f"message #{msg_id} out of order, or not what this session sent as #{msg_id}")

    def get(self, msg_id: int) -> tuple[str, MessageRole | None]:
        return self._names[self._kinds[msg_id]] if 0 <= msg_id < len(self._kinds) else ("?", None)

    def __len__(self) -> int:
        return len(self._kinds)

    def until(self, count: int) -> Messages:
        """A table of the first `count` messages (a branch goes on from there with its own)."""
        twin = Messages()
        twin._kinds, twin._names, twin._index = self._kinds[:count], list(self._names), dict(self._index)
        return twin


@dataclass(slots=True)
class Snapshot:
    """A ClusterState at one moment (copies, not shared): what the history keeps to show
    that moment again."""

    ids: tuple[int, ...]
    nodes: dict[int, NodeState]
    episodes: Episodes
    assumptions: Assumptions
    topics: dict[str, MessageRole]
    rounds: Rounds
    messages: Messages = field(compare=False)  # shared, not copied: it only grows (its labels count in `nodes`)
    sent: int  # how many messages had been sent
    held: dict[int, int]
    cs: CsEntries | None = None


class ClusterState:
    def __init__(self, ids: tuple[int, ...], config: ClusterConfig, algorithm: str = "classic"):
        """`algorithm`: the run's, whose mutex (if any) has its entries measured (`cs`)."""
        declared = machine(algorithm)
        mutex = declared.mutex
        self.cs = None if mutex is None else CsEntries.of(mutex)
        self.epoch_text = declared.epoch_text  # how its epochs read ("e3"; the Invitation's groups: "g2.6")
        self.has_groups = declared.groups  # its promise is per group (monitor rule 10)
        self.rules = declared.rule_table()  # key -> sentence: what the events' `rule` names (protocol/interface.py)
        self.ids = ids  # every node the cluster has had, lowest first (joins add to it)
        self.nodes = {i: NodeState(i) for i in ids}
        self.episodes = Episodes()
        self.assumptions = Assumptions(config, ids)  # the settings as the trace's commands have set them, and what they break
        self.topics: dict[str, MessageRole] = {}  # message labels seen -> their role, in order of appearance
        self.rounds = Rounds()  # election rounds, as the monitor's module defines them
        self.messages = Messages()  # message id -> (label, role)
        self.sent = 0  # messages sent so far
        self._held: dict[int, int] = {}  # message id -> its receiver, while it waits at a held link's end

    def groups(self) -> dict[int, list[tuple[int, int | None]]]:
        """The groups of normal up nodes, as the monitor tells them apart (rule 10)."""
        return groups_of((n.id, n.leader, n.epoch) for n in self.nodes.values()
                         if n.up and n.status is not None and n.status.role is StatusRole.NORMAL)

    def apply(self, events: list[Event]) -> None:
        """Fold events in, in trace order."""
        nodes, cs = self.nodes, self.cs
        for e in events:
            kind = type(e)
            if cs is not None:
                cs.observe(e)
            if kind is SendEvent:
                label, role = e.msg.label, e.msg.role
                self.messages.add(e.id, label, role)
                self.sent = e.id + 1
                sender = nodes[e.src]
                sender.sent[label] += 1
                if e.rule is not None:
                    sender.rule = e.rule
                if e.msg.epoch > sender.epoch:  # an epoch bumped without a change of status (Raft's candidate standing again)
                    sender.epoch = e.msg.epoch
                self.rounds.observe(e)
                if label not in self.topics:
                    self.topics[label] = role
            elif kind is DeliverEvent:
                nodes[e.dst].received[self.messages.get(e.id)[0]] += 1
                if self._held and e.id in self._held:
                    nodes[self._held.pop(e.id)].waiting -= 1
            elif kind is DropEvent:
                if self._held and e.id in self._held:
                    nodes[self._held.pop(e.id)].waiting -= 1
            elif kind is StateEvent:
                node = nodes[e.node]
                node.status, node.leader, node.epoch = e.status, e.leader, e.epoch
                if e.rule is not None:
                    node.rule = e.rule
            elif kind is CsEvent:
                node = nodes[e.node]
                node.cs = e.state
                if e.rule is not None:
                    node.rule = e.rule
            elif kind is TimerSetEvent:
                node = nodes[e.node]
                node.timers[e.name] = (e.t, e.fires)
                if e.rule is not None:
                    node.rule = e.rule
            elif kind is TimerEvent or kind is TimerCancelEvent:
                node = nodes[e.node]
                node.timers.pop(e.name, None)
                if kind is TimerCancelEvent and e.rule is not None:
                    node.rule = e.rule
            elif kind is ElectionStartEvent or kind is AgreementEvent:
                self.rounds.observe(e)
                if kind is ElectionStartEvent and e.rule is not None:
                    nodes[e.node].rule = e.rule
            elif kind in GOES_DOWN:
                node = nodes[e.node]
                node.up = False
                node.timers.clear()
            elif kind in COMES_UP:
                if kind is JoinEvent:
                    self._admit(e.node)
                nodes[e.node].up = True
            elif kind is HeldEvent:
                self._held[e.id] = e.dst
                nodes[e.dst].waiting += 1
            elif kind is CommandEvent:
                self.assumptions.observe(e)
                if e.command == "join":
                    self._admit(*e.args)
            elif kind is ViolationEvent:
                self.episodes.add(e, self.assumptions.text())

    def _admit(self, node: int) -> None:
        if node not in self.nodes:
            self.ids = tuple(sorted((*self.ids, node)))
            self.nodes[node] = NodeState(node)

    # --- what it says -------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.assumptions.settings

    @property
    def faults_broken(self) -> tuple[str, ...]:
        """The model's assumptions broken now, in words ("links lossy", "clocks drift"),
        but synchrony (the status line says it beside T)."""
        return tuple(ASSUMPTIONS[key] for key, _ in self.assumptions.since.items() if key != SYNCHRONY)

    @property
    def config(self) -> ClusterConfig:
        return self.settings.config

    @property
    def held_links(self) -> frozenset[tuple[int, int]]:
        return self.settings.held

    @property
    def agreed(self) -> int | None:
        """The leader every up node follows, while they all do (the monitor's agreement)."""
        return self.rounds.agreed

    def leaders(self) -> list[int]:
        """Up nodes that believe they lead (more than one is split brain)."""
        return [n.id for n in self.nodes.values() if n.leads]

    @property
    def joined(self) -> tuple[int, ...]:
        """Every node the cluster has had by the moment shown, those that left too."""
        return tuple(i for i in self.ids if self.nodes[i].status is not ViewStatus.NOT_JOINED)

    @property
    def left(self) -> set[int]:
        return {i for i, n in self.nodes.items() if n.left}

    @property
    def down(self) -> set[int]:
        """Members that are down (crashed, not left; one not joined yet is not a member)."""
        return {i for i, n in self.nodes.items() if not n.up and n.status is HostStatus.DOWN}

    # --- keeping and showing again --------------------------------------------------------

    def snapshot(self) -> Snapshot:
        return Snapshot(self.ids, {i: n.copy() for i, n in self.nodes.items()}, self.episodes.copy(), self.assumptions.copy(),
                        dict(self.topics), self.rounds.copy(), self.messages, self.sent, dict(self._held),
                        self.cs and self.cs.copy())

    def load(self, snapshot: Snapshot) -> None:
        """Become `snapshot`, in place: whoever holds this state and its node states (the
        app's widgets) shows the new moment without being told. A node that joins later
        than that moment keeps its place, shown as not joined yet."""
        for i in snapshot.ids:
            self._admit(i)
        for i, node in self.nodes.items():
            node.become(snapshot.nodes.get(i) or NodeState(i, status=ViewStatus.NOT_JOINED))
        self.episodes = snapshot.episodes.copy()
        self.assumptions, self.topics = snapshot.assumptions.copy(), dict(snapshot.topics)
        self.rounds = snapshot.rounds.copy()
        self.messages, self.sent = snapshot.messages, snapshot.sent
        self._held = dict(snapshot.held)
        self.cs = snapshot.cs and snapshot.cs.copy()
