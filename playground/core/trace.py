"""The one trace stream: every event gets its place (`seq`), the monitor's judgement of
each instant follows that instant's events, and every batch goes to the observers (the
recorder, the summary, the UI, ...). The engine and the test harness both publish
through it, so their traces are stamped and judged alike."""

from __future__ import annotations

from collections.abc import Callable

from .events import Event
from .monitor import OBSERVED, Monitor

Observer = Callable[[list[Event]], None]


class Trace:
    def __init__(self, monitor: Monitor):
        self.monitor = monitor
        self.open: float | None = None  # an instant with events out, not yet over
        self._observers: list[Observer] = []
        self._seq = 0

    @property
    def count(self) -> int:
        """Events published so far (the next one's seq)."""
        return self._seq

    def subscribe(self, observer: Observer) -> None:
        """`observer(events)` is called with each batch of new events, in order."""
        self._observers.append(observer)

    def publish(self, events: list[Event]) -> None:
        """Events in trace order, none before an instant already over. An instant they
        leave behind is over: the monitor's reports on it go in after its events."""
        monitor = self.monitor
        out: list[Event] = []
        open_t = self.open
        for e in events:
            t = e.t
            if t != open_t:
                if open_t is not None:
                    out += monitor.close(open_t)
                open_t = t
            if type(e) in OBSERVED:
                monitor.observe(e)
            out.append(e)
        self.open = open_t
        self._emit(out)

    def end_instant(self, t: float) -> None:
        """Nothing more will happen at or before t: the monitor judges what is open."""
        reports = []
        if self.open is not None and self.open != t:
            reports += self.monitor.close(self.open)
        self.open = None
        reports += self.monitor.close(t)
        self._emit(reports)

    def _emit(self, events: list[Event]) -> None:
        if not events:
            return
        seq = self._seq
        for e in events:
            e.seq = seq
            seq += 1
        self._seq = seq
        for observer in self._observers:
            observer(events)
