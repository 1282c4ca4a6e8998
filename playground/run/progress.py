"""A headless run's progress, on stderr, while it lasts more than a second: virtual time
against --until, events per second and messages in flight (against --max-in-flight once
they near it), with rich's progress display. Only when stderr is a terminal: pipes and
CI stay clean. A trace observer: it sees each batch go by."""

from __future__ import annotations

import time

from rich.console import Console, ConsoleDimensions
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..core.config import seconds_text
from ..core.engine import Engine
from ..core.events import Event
from .in_flight import in_flight

SHOW_AFTER = 1.0  # seconds of wall time before anything is shown
REFRESH = 0.1  # seconds between redraws
NEAR = 0.5  # the share of --max-in-flight in flight from which the line shows the bound
ECHO_ROOM = 2  # columns the line leaves free at its end (StderrShort)


class StderrShort(Console):
    """stderr for a progress line (a run's, a hunt's), as wide as the terminal is now,
    less ECHO_ROOM: the terminal echoes Ctrl-C as "^C" at the cursor, and at the end of a
    line as wide as the terminal that echo wraps to the next line, one below where rich
    then wipes the line: it stayed."""

    def __init__(self) -> None:
        super().__init__(stderr=True)

    @property
    def size(self) -> ConsoleDimensions:
        width, height = super().size
        return ConsoleDimensions(max(1, width - ECHO_ROOM), height)


class RunProgress:
    def __init__(self, engine: Engine, until: float, console: Console | None = None, *, max_in_flight: int = 0):
        self.engine = engine
        self.until = until
        self.max_in_flight = max_in_flight  # 0: no bound
        self.events = 0
        self._console = console or StderrShort()
        self._start = self._drawn = time.monotonic()
        self._display: Progress | None = None
        self._task = None

    def __call__(self, events: list[Event]) -> None:
        self.events += len(events)
        now = time.monotonic()
        if now - self._drawn < REFRESH or now - self._start < SHOW_AFTER:
            return
        self._drawn = now
        if self._display is None:
            self._display = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                                     console=self._console, transient=True, auto_refresh=False)
            self._display.start()
            self._task = self._display.add_task("", total=self.until or 1)
        t = self.engine.now
        rate = self.events / (now - self._start)
        flying = in_flight(self.engine.links)
        near = self.max_in_flight and flying >= NEAR * self.max_in_flight  # (then the bound, where Ctrl-C was: 80 columns)
        self._display.update(self._task, completed=t,
                             description=f"t = {t:,.1f} s of {seconds_text(self.until)} · {rate:,.0f} events/s · "
                                         + (f"{flying:,} of {self.max_in_flight:,} in flight" if near
                                            else f"{flying:,} in flight · Ctrl-C stops"))
        self._display.refresh()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *_: object) -> None:
        if self._display is not None:
            self._display.stop()
