"""When the screen is drawn. The widgets read the model when they are drawn, and
drawing costs, so:

  - a tick draws the cards and the status REDRAW_HZ times a second while the run
    moves, and stops while it stands still (paused, or a replay), so that a still app
    uses no CPU;
  - the log and the node panel are drawn at most TEXT_HZ times a second (nobody reads
    text that scrolls faster, and it is dear), unless a redraw asks for them (what a
    key did: at once);
  - served in a browser (`bully-tui serve`), both rates are lower (SERVED): a
    classroom's tabs share the server's cores, a tab drawn at 20 Hz takes a fifth of
    one, and the browser shows the cards' tenths as well at 10 Hz; what a key does is
    drawn at once all the same;
  - a burst of events while paused, however many messages announce it, is drawn once
    (`soon`);
  - a widget's border title is set only when it says something new (`retitle`):
    Textual redraws the whole widget on every setting, the same words or not."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App
from textual.timer import Timer
from textual.widget import Widget

REDRAW_HZ = 20
TEXT_HZ = 8
SERVED = (10, 6)  # (REDRAW_HZ, TEXT_HZ) of an app served in a browser (App.is_web)


class Redraws:
    def __init__(self, app: App, redraw: Callable[..., None]):
        """`redraw(text=...)`: the app's drawing (text True: the log and the panel too)."""
        self._app = app
        self._redraw = redraw
        self._ticker: Timer | None = None
        self._text_drawn = 0.0  # wall time of the last log and panel drawing
        self._due = False  # a redraw is set for the end of a burst

    @property
    def rates(self) -> tuple[float, float]:
        """(ticks, text drawings) a second, at most."""
        return SERVED if self._app.is_web else (REDRAW_HZ, TEXT_HZ)

    def tick(self, paused: bool) -> None:
        """Start the tick (on mount), paused or not."""
        self._ticker = self._app.set_interval(1 / self.rates[0], self._redraw, pause=paused)

    def pause(self) -> None:
        if self._ticker is not None:
            self._ticker.pause()

    def resume(self) -> None:
        if self._ticker is not None:
            self._ticker.resume()

    def text_due(self, asked: bool | None) -> bool:
        """Whether this drawing draws the text too: as `asked`, or (None) if the last
        was long enough ago."""
        wall = time.monotonic()
        if asked is None:
            asked = wall - self._text_drawn >= 1 / self.rates[1]
        if asked:
            self._text_drawn = wall
        return asked

    def soon(self) -> None:
        """One drawing of everything, a tick from now, for a whole burst."""
        if not self._due:
            self._due = True
            self._app.set_timer(1 / self.rates[0], self._burst_drawn)

    def _burst_drawn(self) -> None:
        self._due = False
        self._redraw(text=True)


def retitle(widget: Widget, title: str | None = None, subtitle: str | None = None) -> None:
    """`widget`'s border title and subtitle (None: left as they are), set only if they changed."""
    if title is not None and widget.border_title != title:
        widget.border_title = title
    if subtitle is not None and widget.border_subtitle != subtitle:
        widget.border_subtitle = subtitle
