"""A trace observer that keeps the counts and final states a run's summary reports."""

from __future__ import annotations

import statistics
from collections import Counter

from ..core.config import ClusterConfig
from ..core.cs_entries import CsEntries
from ..core.events import (
    AgreementEvent,
    CommandEvent,
    CrashEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    ViolationEvent,
)
from ..core.host import HostStatus
from ..core.monitor import CS_WAIT, MUTEX, Episodes, describe
from ..core.rounds import Rounds
from ..core.settings import Assumptions


class Summary:
    def __init__(self, ids: tuple[int, ...], message_types: tuple[str, ...], mutex: type | None = None,
                 config: ClusterConfig | None = None):
        """`mutex`: the run's, whose entries are counted and measured, beside the
        lecture's figures for as many members as the run ends with. `config`: the run's
        settings, from which its commands say what was broken when a violation began."""
        self.mutex = mutex
        self.cs = None if mutex is None else CsEntries.of(mutex)
        self.ids = list(ids)  # every node the run has had, in the order they came
        self.members = set(ids)
        self.message_types = message_types
        self.sent: Counter[str] = Counter()
        self.dropped = 0
        self.elections_started = 0
        self.up: set[int] = set()
        self.status = dict.fromkeys(ids, HostStatus.DOWN)
        self.leader: dict[int, int | None] = dict.fromkeys(ids)
        self.epoch = dict.fromkeys(ids, 0)
        self.episodes = Episodes()
        self.rounds = Rounds(kept=[])
        self.assumptions = None if config is None else Assumptions(config, tuple(ids))

    def __call__(self, events: list[Event]) -> None:
        cs = self.cs
        for e in events:
            kind = type(e)
            if cs is not None:
                cs.observe(e)
            if kind is SendEvent:
                self.sent[e.msg.type] += 1
                if e.msg.epoch > self.epoch[e.src]:  # (bumped without a change of status: state.py says why)
                    self.epoch[e.src] = e.msg.epoch
                self.rounds.observe(e)
            elif kind is StateEvent:
                self.status[e.node] = e.status
                self.leader[e.node] = e.leader
                self.epoch[e.node] = e.epoch
            elif kind is DropEvent:
                self.dropped += 1
            elif kind is ElectionStartEvent:
                self.elections_started += 1
                self.rounds.observe(e)
            elif kind is AgreementEvent:
                self.rounds.observe(e)
            elif kind is StartEvent or kind is RecoverEvent:
                self.up.add(e.node)
            elif kind is CrashEvent:
                self.up.discard(e.node)
            elif kind is JoinEvent:
                self.ids.append(e.node)
                self.members.add(e.node)
                self.up.add(e.node)
                self.epoch[e.node] = 0
            elif kind is LeaveEvent:
                self.members.discard(e.node)
                self.up.discard(e.node)
            elif kind is ViolationEvent:
                self.episodes.add(e, self.assumptions.text() if self.assumptions else "")
            elif kind is CommandEvent and self.assumptions is not None:
                self.assumptions.observe(e)

    def report(self) -> dict[str, object]:
        messages = {t: self.sent[t] for t in self.message_types}
        messages.update((t, n) for t, n in self.sent.items() if t not in messages)  # join, leave
        messages["total"] = sum(self.sent.values())
        violations = []
        for episode in self.episodes.all:
            v = episode.began
            entry = {"property": v.property, "t": v.t, "nodes": list(v.nodes), "detail": describe(v)}
            if episode.broken:  # the model's assumptions broken when it began, since when
                entry["broken"] = episode.broken
            if v.property in self.episodes.lasting:
                entry["duration"] = episode.lasted
            violations.append(entry)
        mutex = {} if self.cs is None else {"mutex": self._mutex(violations)}
        return {
            "members": sorted(self.members),
            "up": sorted(self.up),
            "status": {str(i): self.status[i] for i in sorted(self.ids)},
            "leader": {str(i): self.leader[i] for i in sorted(self.ids)},
            "messages": messages,
            "dropped": self.dropped,
            "elections_started": self.elections_started,
            "rounds": [{"began": r.began, "by": r.by, "agreed": r.agreed, "leader": r.leader,
                        "messages": {**r.messages, "total": sum(r.messages.values())}} for r in self.rounds.kept],
            "epoch": {str(i): self.epoch[i] for i in sorted(self.ids)},
            "violations": violations,
            **mutex,
        }

    def _mutex(self, violations: list[dict]) -> dict[str, object]:
        cs = self.cs
        return {"entries": cs.entries, "messages": cs.messages, "requests_completed": cs.completed,
                "messages_per_entry": cs.messages_per_entry, "client_delay": _spread(cs.client_delays),
                "sync_delay": _spread(cs.sync_delays), "sync_delay_left_out": cs.sync_left_out,
                "unfair_entries": cs.unfair, "out_of_order_entries": cs.out_of_order,
                "violations": sum(v["property"] == MUTEX for v in violations),
                "stuck": sum(v["property"] == CS_WAIT for v in violations), "lecture": self._lecture()}

    def _lecture(self) -> dict[str, str]:
        figures = self.mutex.figures(len(self.members))
        return {"messages_per_entry": figures.entry_messages, "sync_delay_messages": figures.sync_delay}


def _spread(values: list[float]) -> dict[str, float] | None:
    """Median and worst, in seconds (None: nothing measured)."""
    return {"median": round(statistics.median(values), 6), "worst": max(values)} if values else None
