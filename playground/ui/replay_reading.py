"""A replay's file read while its screen is up: the first block was read before (an
empty or bad file is one line, before any screen: cli/live.replay_app); the rest is
read a batch at a time between frames and keys, the screen following the latest
instant read a few times a second unless the user went elsewhere (`following`), and
opening, once all is read, at its last instant or the one asked for (a time, or the
first violation: a hunt's finding). Then its recipe is run again in the background, a
slice at a time, so that the panel can show a node's variables and the session can
branch (run/timeline.py's re_run). A bad line far into the file ends the app with one
line, as it would have before any screen."""

from __future__ import annotations

import asyncio
import bisect
import time

from textual.app import App

from ..run.control import InputError

READ_BATCH = 16  # blocks of a replay's file read at once (8,192 events)
LOADING_SHOWN_EVERY = 0.5  # seconds between two screens of a replay being read (each costs a fold)


class ReplayReading:
    def __init__(self, app: App, open_at: float | str | None):
        """`open_at`: the instant to open at once read (the latest at or before a time,
        or "violation": the first one); None: the last."""
        self.app = app
        self.open_at = open_at
        self.following = True  # the screen shows the latest instant read, as it comes
        self._shown_at = 0.0  # wall time the latest instant read was last shown

    def start(self) -> None:
        """Read on in the background, if there is more to read; else re-run."""
        if self.app.timeline.loading is not None:
            self.app.run_worker(self._read(), group="read")
        else:
            self._read_all()

    async def _read(self) -> None:
        app, timeline = self.app, self.app.timeline
        try:
            while not timeline.read(READ_BATCH):
                if time.monotonic() - self._shown_at >= LOADING_SHOWN_EVERY:
                    self._shown_at = time.monotonic()
                    app.show(timeline.history.instants - 1) if self.following else app.redraw()
                await asyncio.sleep(0)
        except InputError as e:  # a bad line far into the file: one line, as before any screen
            app.fail(2, f"bully-tui: error: {e}")
            return
        if self.following:
            app.show(self._opening(timeline.history))
        self._read_all()

    def _opening(self, history) -> int:
        """The instant a replay opens at, once read: its last, or the one asked for."""
        last = history.instants - 1
        if self.open_at is None:
            return last
        if self.open_at == "violation":
            found = history.first_marker("violation")
            if found is None:
                self.app.notify("This transcript has no violation: here is its end.")
            return last if found is None else found
        return max(0, bisect.bisect_right(history.times, self.open_at) - 1)

    def _read_all(self) -> None:
        """The whole file is read: re-create its engines in the background (for the
        panel's variables, and to branch)."""
        self.app.run_worker(self._re_run(), exclusive=True)
        self.app.redraw(text=True)

    async def _re_run(self) -> None:
        for _ in self.app.timeline.re_run():  # a slice of work at a time: a key pressed meanwhile waits at most one
            await asyncio.sleep(0.01)
        self.app.redraw(text=True)
