"""The message log: one line per send, delivery, drop, state change, command and report.

A line-API scroll view, as Textual's own Log is: it renders only the lines on screen, has
a scrollbar, and scrolls with the mouse wheel and the app's page keys. At the bottom it
follows new lines; scrolled back, it stays where it is (and says how far back).

It shows the model's lines (the model keeps the last LOG_CAP) through its filters: one
node, one message type, and failure-detector traffic (probes, heartbeats and their
replies), which is hidden until asked for, since it would drown the election.
"""

from __future__ import annotations

from collections import deque
from itertools import islice

from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from .look import line_colour
from .model import DETECTOR, LOG_CAP, ClusterModel, LogLine

TIME_WIDTH = 9  # "1234.567 "


class MessageLog(ScrollView, can_focus=False):  # keys are the app's: home and end move through time
    DEFAULT_CSS = """
    MessageLog { overflow-x: hidden; overflow-y: scroll; }
    """

    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.node_filter: int | None = None
        self.topic_filter: str | None = None
        self.show_detector = False
        self._lines: deque[LogLine] = deque(maxlen=LOG_CAP)  # the model's lines that pass the filters
        self._taken = 0  # model.logged when the last new line was looked at
        self._loads = 0  # model.loads then: a model loaded with another moment is filtered afresh
        self.following = True  # at the bottom, following new lines (until scrolled back)
        self.border_title = "messages"

    # --- filters ------------------------------------------------------------------------

    def matches(self, line: LogLine) -> bool:
        return ((self.node_filter is None or self.node_filter in line.nodes)
                and (self.topic_filter is None or line.topic == self.topic_filter)
                and (self.show_detector or line.role != DETECTOR or self.topic_filter == line.topic))

    def set_filters(self, node: int | None, topic: str | None) -> None:
        self.node_filter, self.topic_filter = node, topic
        self._refilter()

    def toggle_detector(self) -> None:
        self.show_detector = not self.show_detector
        self._refilter()

    def _refilter(self) -> None:
        self._lines = deque(filter(self.matches, self.model.log), maxlen=LOG_CAP)
        self._taken = self.model.logged
        self._resize(follow=True)

    # --- new lines ------------------------------------------------------------------------

    def show(self) -> None:
        """Take the lines logged since the last call (all of them, if the model has become
        another moment)."""
        if self._loads != self.model.loads:
            self._loads = self.model.loads
            self._refilter()
            return
        new = self.model.logged - self._taken
        if not new:
            return
        self._taken = self.model.logged
        following = self.following
        before = len(self._lines)
        newest = list(islice(reversed(self.model.log), min(new, LOG_CAP)))
        fresh = [line for line in reversed(newest) if self.matches(line)]
        self._lines.extend(fresh)
        dropped = before + len(fresh) - len(self._lines)  # fell off the front
        if not following and dropped:
            self.scroll_to(y=max(0, self.scroll_y - dropped), animate=False, immediate=True)
        self._resize(follow=following)

    def _resize(self, follow: bool) -> None:
        self.virtual_size = Size(self.size.width, len(self._lines))
        if follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self._title()
        self.refresh()

    def _title(self) -> None:
        label = self.model.label
        filters = [f"node {label[self.node_filter]}" if self.node_filter is not None else "", self.topic_filter or "",
                   "" if self.show_detector else "detector hidden (h)"]
        back = max(0, len(self._lines) - int(self.scroll_y) - self.scrollable_content_region.height)
        self.border_subtitle = " · ".join(
            [f"{len(self._lines)} of {len(self.model.log)} shown", *filter(None, filters)] + ([f"{back} back"] if back else []))

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.following = new >= self.max_scroll_y
        self._title()

    def on_resize(self) -> None:
        if self.following:  # a taller alert bar must not push the newest lines out of view
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True, x_axis=False)

    # --- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        line = self._lines[index]
        content = Content.assemble((f"{line.t:{TIME_WIDTH - 1}.3f} ", "$text-muted"),
                                   (line.text, line_colour(line.kind, line.role)))
        strip = Visual.to_strips(self, content, width, 1, self.visual_style, pad=True)[0]
        return strip.crop(0, width)

    def visible_text(self) -> list[str]:
        """The lines on screen, as text (for tests)."""
        top = int(self.scroll_y)
        return [f"{line.t:{TIME_WIDTH - 1}.3f} {line.text}"
                for line in list(self._lines)[top:top + self.scrollable_content_region.height]]
