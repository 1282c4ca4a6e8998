"""A trace observer that keeps the counts and final states a run's summary reports."""

from __future__ import annotations

from collections import Counter

from .events import (
    CrashEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    ViolationEvent,
)


class Summary:
    def __init__(self, ids: tuple[int, ...], message_types: tuple[str, ...], down_status: str):
        self.ids = ids
        self.message_types = message_types
        self.sent: Counter[str] = Counter()
        self.dropped = 0
        self.elections_started = 0
        self.up: set[int] = set()
        self.status = dict.fromkeys(ids, down_status)
        self.leader: dict[int, int | None] = dict.fromkeys(ids)
        self.epoch = dict.fromkeys(ids, 0)
        self.violations: list[dict[str, object]] = []
        self._open: dict[str, dict[str, object]] = {}  # property -> its entry, while it lasts

    def __call__(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                self.sent[e.msg.type] += 1
            elif kind is StateEvent:
                self.status[e.node] = e.status
                self.leader[e.node] = e.leader
                self.epoch[e.node] = e.epoch
            elif kind is DropEvent:
                self.dropped += 1
            elif kind is ElectionStartEvent:
                self.elections_started += 1
            elif kind is StartEvent or kind is RecoverEvent:
                self.up.add(e.node)
            elif kind is CrashEvent:
                self.up.discard(e.node)
            elif kind is ViolationEvent:
                self._violation(e)

    def _violation(self, e: ViolationEvent) -> None:
        """One entry per episode: its start, and its duration once it is over
        (None while it lasts)."""
        if e.phase == "end":
            entry = self._open.pop(e.property, None)
            if entry is not None:
                entry["duration"] = e.duration
            return
        entry = {"property": e.property, "t": e.t, "nodes": list(e.nodes), "detail": e.detail}
        if e.property != "sle2":
            entry["duration"] = None
            self._open[e.property] = entry
        self.violations.append(entry)

    def report(self) -> dict[str, object]:
        messages = {t: self.sent[t] for t in self.message_types}
        messages["total"] = sum(self.sent.values())
        return {
            "up": sorted(self.up),
            "status": {str(i): self.status[i] for i in self.ids},
            "leader": {str(i): self.leader[i] for i in self.ids},
            "messages": messages,
            "dropped": self.dropped,
            "elections_started": self.elections_started,
            "epoch": {str(i): self.epoch[i] for i in self.ids},
            "violations": self.violations,
        }
