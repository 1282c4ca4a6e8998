"""What the screen shows: the timeline's state of the moment shown, node labels, and the
log's lines.

Plain Python, no Textual. The state (run/state.py) is the runtime's: the timeline folds
the trace into it, so this model keeps no copy of a node's status, the settings or the
rounds, and only reads them for the widgets. What is the UI's own is the words: each
node's label, and the log lines made from the events as they come (the last LOG_CAP),
which the widgets read when they redraw (at most ~20 times a second), so a burst of
ten thousand events costs ten thousand cheap lines and not ten thousand redraws.

It knows no algorithm: messages are shown by the name (`label`) and colour (`role`) their
algorithm declares, statuses by their role, violations in the monitor's words. A send, a
change of state and of critical-section state end with the rule that made them ("3→7
Election #12 · rule 1", "· probing 2"), whose sentence the run's table has (`rules`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from protocol import CsState, MessageRole, Status

from ..core.events import (
    COMES_UP,
    GOES_DOWN,
    AgreementEvent,
    CommandEvent,
    CsEvent,
    DeliverEvent,
    DropEvent,
    DuplicateEvent,
    Event,
    HeldEvent,
    SendEvent,
    StateEvent,
    ViolationEvent,
)
from ..record.look import CS_LOOK, PROPERTY_NAMES, command_text, describe, node_labels, rule_sentence, rule_text
from ..run.control import ClusterConfig, ClusterState, NodeState

NodeView = NodeState  # (the widgets' name for it)
LOG_CAP = 5000  # lines kept for the log; memory stays flat however long the run
LOG_TAIL = 2 * LOG_CAP  # events of one batch that make log lines: the rest would fall off the log unseen
_GOES_DOWN = dict(zip(GOES_DOWN, ("crashed", "left"), strict=True))  # what the log says of each
_COMES_UP = dict(zip(COMES_UP, ("started", "recovered", "joined"), strict=True))


@dataclass(frozen=True, slots=True)
class LogLine:
    t: float
    kind: str  # the event's kind: send, deliver, drop, state, crash, command, ...
    topic: str  # the message's label, or the kind for other lines
    role: MessageRole | None  # the message's role (None for other lines)
    nodes: tuple[int, ...]
    text: str
    state: Status | CsState | None = None  # a state line's status, a cs line's place: the diagram's mark
    rule: str | None = None  # the key of the rule that made it (a node's send, state or cs line)

    @property
    def detector(self) -> bool:
        """Failure-detector traffic, which the log can hide."""
        return self.role is MessageRole.DETECTOR


# Why a line that names no rule happened, by its kind (the runtime's, the network's, ...).
NO_RULE = {
    "deliver": "the network delivered it: the send's line names its rule",
    "drop": "the network dropped it (its receiver was down or had left, the link lost it, or you did, by hand): "
            "no rule of the algorithm",
    "held": "the link is held: the message waits at its end until the link is released",
    "duplicate": "the link copied it (a duplicating link, or you, by hand): the copy arrives as a second delivery; "
                 "no rule of the algorithm",
    "command": "a command (yours, the scenario's or a schedule's): no rule of the algorithm",
    "agreement": "the monitor's verdict on the nodes' states, not a node's doing",
    "violation": "the monitor's verdict on the nodes' states, not a node's doing",
}
NO_RULE_NAMED = ("the runtime's doing (a crash, a start, a join or leave, the workload), or a transcript "
                 "from before rules were recorded: no rule is named")


def why(line: LogLine, rules: Mapping[str, str]) -> str:
    """What made a log line, in a sentence: the rule and its text ("rule 4: Election from a
    lower node: ..."), or why no rule did (`rules`: the run's table)."""
    return rule_sentence(line.rule, rules) or NO_RULE.get(line.kind, NO_RULE_NAMED)


class ClusterModel:
    def __init__(self, state: ClusterState, worst_case: int | None):
        self.state = state
        self.label = node_labels(state.ids)
        self.worst_case = worst_case
        self.log: deque[LogLine] = deque(maxlen=LOG_CAP)
        self.logged = 0  # every line ever logged, kept or not
        self.loads = 0  # times its log stopped following on from the last lines: another moment, or a backlog

    @classmethod
    def fresh(cls, ids: tuple[int, ...], worst_case: int | None, config: ClusterConfig) -> ClusterModel:
        """A model of a state of its own (tests, and a widget on its own)."""
        return cls(ClusterState(ids, config), worst_case)

    # --- the state's, which the widgets read most (the rest: model.state) ----------------------

    @property
    def ids(self) -> tuple[int, ...]:
        return self.state.ids

    @property
    def nodes(self) -> dict[int, NodeState]:
        return self.state.nodes

    # --- the log ----------------------------------------------------------------------------

    def add(self, events: list[Event]) -> None:
        """Log lines for events the state has just taken in (a backlog: its last ones only,
        which are all the log can keep)."""
        self._relabel()
        if len(events) > LOG_TAIL:
            events = events[-LOG_TAIL:]
            self.loads += 1  # (the log no longer follows on from its last lines: whoever reads it, afresh)
        self._lines(events)

    def reload(self, events: Iterable[Event]) -> None:
        """The state shows another moment: the log becomes the lines of the events that led to it."""
        self._relabel()
        self.log.clear()
        self.loads += 1
        self._lines(events)

    def _relabel(self) -> None:
        """Labels for nodes that joined (a new UUID can need a longer prefix), in the same
        dict, which widgets hold."""
        if len(self.label) != len(self.state.ids):
            self.label.update(node_labels(self.state.ids))

    def _lines(self, events: Iterable[Event]) -> None:
        label, line, messages = self.label, self._log, self.state.messages
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                text = f"{self._link(e)} {e.msg.label} #{e.id}"
                line(e, e.msg.label, e.msg.role, (e.src, e.dst), text + rule_suffix(e.rule), rule=e.rule)
            elif kind is DeliverEvent:
                topic, role = messages.get(e.id)
                line(e, topic, role, (e.src, e.dst), f"{self._link(e)} {topic} #{e.id} delivered")
            elif kind is DropEvent:
                topic, role = messages.get(e.id)
                line(e, topic, role, (e.src, e.dst), f"{self._link(e)} {topic} #{e.id} dropped: {e.reason}")
            elif kind is StateEvent:
                leader = "none" if e.leader is None else label[e.leader]
                text = f"node {label[e.node]} {e.status}, leader {leader}"
                line(e, "state", None, (e.node,), text + rule_suffix(e.rule), e.status, e.rule)
            elif kind is CsEvent:
                text = f"node {label[e.node]} {CS_LOOK[e.state][2]}"
                line(e, "cs", None, (e.node,), text + rule_suffix(e.rule), e.state, e.rule)
            elif kind is AgreementEvent:
                text = "agreement lost" if e.leader is None else f"agreement: every up node follows {label[e.leader]}"
                line(e, "agreement", None, () if e.leader is None else (e.leader,), text)
            elif kind in _GOES_DOWN:
                line(e, e.kind, None, (e.node,), f"node {label[e.node]} {_GOES_DOWN[kind]}")
            elif kind in _COMES_UP:
                line(e, e.kind, None, (e.node,), f"node {label[e.node]} {_COMES_UP[kind]}")
            elif kind is HeldEvent:
                topic, role = messages.get(e.id)
                line(e, topic, role, (e.src, e.dst), f"{self._link(e)} {topic} #{e.id} waits: the link is held")
            elif kind is DuplicateEvent:
                topic, role = messages.get(e.id)
                line(e, topic, role, (e.src, e.dst),
                     f"{self._link(e)} {topic} #{e.id} copied by the link: the copy arrives at {e.arrives:.3f}")
            elif kind is CommandEvent:
                line(e, "command", None, (), f"{e.source}: {command_text(e.command, e.args, label)}")
            elif kind is ViolationEvent:
                broken = next((ep.broken for ep in reversed(self.state.episodes.all) if ep.began is e), "")
                text = describe(e, label.__getitem__, broken)
                line(e, "violation", None, e.nodes, f"⚠ {PROPERTY_NAMES[e.property]}: {text}" if e.phase == "begin" else text)

    def _link(self, e: SendEvent | DeliverEvent | DropEvent | HeldEvent) -> str:
        return f"{self.label[e.src]}→{self.label[e.dst]}"

    def _log(self, e: Event, topic: str, role: MessageRole | None, nodes: tuple[int, ...], text: str,
             state: Status | CsState | None = None, rule: str | None = None) -> None:
        self.logged += 1
        self.log.append(LogLine(e.t, e.kind, topic, role, nodes, text, state, rule))


def rule_suffix(rule: str | None) -> str:
    """" · rule 4" at a line's end (nothing where no rule made it): a narrow log cuts the
    line before it, never it (message_log.fitted)."""
    return "" if rule is None else f" · {rule_text(rule)}"
