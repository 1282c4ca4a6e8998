"""The message log: one line per send, delivery, drop, state change and command.

It renders only the lines that fit, from the model's capped buffer, so a redraw costs
the same at line 50 or line 5,000,000. The mouse wheel scrolls back; new lines are
followed again once you scroll to the bottom. Filters: one node, one message type.
"""

from __future__ import annotations

from itertools import islice

from textual.content import Content
from textual.events import MouseScrollDown, MouseScrollUp
from textual.widget import Widget

from .look import topic_colour
from .model import ClusterModel, LogLine


class MessageLog(Widget):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.node_filter: int | None = None
        self.topic_filter: str | None = None
        self.back = 0  # lines scrolled back from the newest
        self._seen = -1
        self.border_title = "messages"

    def matches(self, line: LogLine) -> bool:
        return (self.node_filter is None or self.node_filter in line.nodes) and (
            self.topic_filter is None or line.topic == self.topic_filter
        )

    def show(self, force: bool = False) -> None:
        if force or self.model.logged != self._seen:
            self._seen = self.model.logged
            self.refresh()

    def set_filters(self, node: int | None, topic: str | None) -> None:
        self.node_filter, self.topic_filter = node, topic
        self.back = 0
        self.show(force=True)

    def render(self) -> Content:
        log = self.model.log
        height = max(1, self.content_size.height)
        if self.node_filter is None and self.topic_filter is None:
            count = len(log)  # the common case costs only the lines on screen
            self.back = min(self.back, max(0, count - height))
            window = list(islice(reversed(log), self.back, self.back + height))[::-1]
        else:
            shown = [line for line in log if self.matches(line)]
            count = len(shown)
            self.back = min(self.back, max(0, count - height))
            window = shown[max(0, count - self.back - height):count - self.back]
        filters = [f"node {self.node_filter}" if self.node_filter is not None else "", self.topic_filter or ""]
        label = " · ".join(f for f in filters if f)
        self.border_subtitle = f"{count} of {len(log)} shown" + (f" · {label}" if label else "") + (
            f" · {self.back} back" if self.back else "")
        return Content("\n").join(
            Content.assemble((f"{line.t:8.3f} ", "$text-muted"), (line.text, topic_colour(line.topic)))
            for line in window
        )

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        self.back += 3
        self.refresh()

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        self.back = max(0, self.back - 3)
        self.refresh()
