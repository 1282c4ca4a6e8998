"""The message log: one line per send, delivery, drop, state change and command.

It renders only the lines that fit, from the model's capped buffer, so a redraw costs
the same at line 50 or line 5,000,000. The mouse wheel scrolls back; new lines are
followed again once you scroll to the bottom. Filters: one node, one message type.
"""

from __future__ import annotations

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
        shown = [line for line in log if self.matches(line)]
        height = max(1, self.content_size.height)
        self.back = min(self.back, max(0, len(shown) - height))
        end = len(shown) - self.back
        filters = [f"node {self.node_filter}" if self.node_filter is not None else "",
                   self.topic_filter or ""]
        label = " · ".join(f for f in filters if f)
        self.border_subtitle = f"{len(shown)} of {len(log)} shown" + (f" · {label}" if label else "") + (
            f" · {self.back} back" if self.back else "")
        return Content("\n").join(
            Content.assemble((f"{line.t:8.3f} ", "$text-muted"), (line.text, topic_colour(line.topic)))
            for line in shown[max(0, end - height):end]
        )

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        self.back += 3
        self.refresh()

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        self.back = max(0, self.back - 3)
        self.refresh()
