"""The node panel's text (node_panel.py): its rows, each wrapped under itself at the
panel's width, a row's list of nodes shortened to the room left ("1–64 (64)") before
it wraps. A new set of rows redraws it, and lays it out again only when its height
changes, and not while it is hidden."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from ..record.look import short_list

HANG = 4  # a wrapped line goes on this far in
LIST_ROOM = 12  # cells a list gets at least before it wraps instead of shrinking further

# A line of the panel: markup, and a list to shorten to the room left after it (None: none).
Row = tuple[str, tuple | None]


class PanelText(Widget):
    DEFAULT_CSS = "PanelText { height: auto; }"

    rows: reactive[tuple[Row, ...]] = reactive(())

    def __init__(self):
        super().__init__()
        self.labels: Mapping[int, str] = {}
        self._made: tuple[tuple | None, list[Content]] = (None, [])  # ((rows, width, labels), the lines)

    def watch_rows(self) -> None:
        """A layout (of the whole screen: dear) only when the height shown changes; hidden (a
        narrow screen, a lesson's pane beside the log) or not laid out yet, none: the
        layout that shows it measures it."""
        width = self.content_size.width
        if width and self._on_screen() and len(self.lines(width)) != self.size.height:
            self.refresh(layout=True)

    def _on_screen(self) -> bool:
        """Shown: neither it nor a widget around it has display none (a hidden widget keeps
        the size it last had)."""
        return all(node.display for node in self.ancestors_with_self if isinstance(node, Widget))

    def lines(self, width: int) -> list[Content]:
        """Each row at `width`: its list shortened to the room left, wrapped with a hanging indent
        (made once for its rows and width: the height, the layout and the drawing each ask)."""
        key = (self.rows, width, len(self.labels))
        if self._made[0] != key:
            self._made = (key, self._wrapped(width))
        return self._made[1]

    def _wrapped(self, width: int) -> list[Content]:
        width = max(width, HANG + 8)
        out = []
        for markup, items in self.rows:
            line = Content.from_markup(markup)
            if items is not None:
                line = line + Content(short_list(items, self.labels, max(LIST_ROOM, width - line.cell_length)))
            first, *rest = line.wrap(width)
            out.append(first)
            if rest:  # the rest again, narrower, under the first line's words
                rest_of = line[len(first.plain):]
                skip = len(rest_of.plain) - len(rest_of.plain.lstrip(" "))
                out += [wrapped.pad_left(HANG) for wrapped in rest_of[skip:].wrap(width - HANG)]
        return out

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render(self) -> Content:
        return Content("\n").join(self.lines(self.content_size.width))
