"""The message log: one line per send, delivery, drop, state change, command and report.

A line-API scroll view, as Textual's own Log is: it renders only the lines on screen, has
a scrollbar, and scrolls with the mouse wheel and the app's page keys. At the bottom it
follows new lines; scrolled back, it stays where it is (and says how far back).

It shows the model's lines (the model keeps the last LOG_CAP) through its filters: one
node, one message type, and failure-detector traffic (probes, heartbeats and their
replies), which is hidden until asked for, since it would drown the election. New
filters (`filters`) or a new drawing (`diagram`) redraw it as they are set.

The same lines can be drawn as a space-time diagram (`diagram`, the app's `d`): one lane
per node, a row per line that draws something on the lanes kept (`diagram.py`). For that
each kept line remembers who was down when it happened, so a lane is drawn dashed while
its node is down.

A line can be picked (a click, or the screen's y and Y keys): it is drawn highlighted,
and the log says what made it (`Picked`: the rule and its sentence, from the run's
table, or why no rule did), for the screen to show beside it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.content import Content
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from ..record.look import instant_text, line_colour
from . import diagram as drawing
from .model import LOG_CAP, ClusterModel, LogLine, rule_suffix, why
from .redraws import retitle

TIME_WIDTH = 9  # "1234.567 "
PICKED = Style(reverse=True)  # a picked line, whatever its colours
# Text lines drawn, kept: the whole log is drawn again whenever its title changes or it
# scrolls by a line, and making a line into a strip is the dear part.
STRIPS_KEPT = 1000
HEAD_KEPT = 8  # cells of a line kept before its rule, at the least, for the rule to be kept whole


def fitted(text: str, rule: str, room: int) -> str:
    """A log line in `room` cells: cut where too long, and said so ("…"). The rule that
    ends it (`rule`, " · rule 3") is the line's why, so it stays whole and the words
    before it give way, whole words first ("node 12 election,… · rule 1"), while they
    keep some cells; otherwise the line's end is cut, as for a line with no rule, whose
    end is often its point ("dropped: receiver down")."""
    if cell_len(text) <= room:
        return text
    cells = room - cell_len(rule) - 1  # for the words before the rule, and "…"
    if rule and text.endswith(rule) and cells >= HEAD_KEPT:
        head = set_cell_size(text[: -len(rule)], cells + 1)  # (a cell more: does a word end in `cells`?)
        words = head.rsplit(" ", 1)[0].rstrip()
        return (words if " " in head else head[:-1]) + "…" + rule
    return set_cell_size(text, max(0, room - 1)) + "…"


class MessageLog(ScrollView, can_focus=False):  # keys are the app's: home and end move through time
    DEFAULT_CSS = """
    MessageLog { overflow-x: hidden; overflow-y: scroll; }
    """
    diagram: reactive[bool] = reactive(False, init=False)  # drawn as a space-time diagram
    # What it shows: one node's lines only, one message type's, failure-detector traffic or not.
    filters: reactive[tuple[int | None, str | None, bool]] = reactive((None, None, False), init=False)

    @dataclass
    class Picked(Message):
        """A line was picked (None: let go): its text, and what made it in a sentence."""

        line: LogLine | None
        why: str | None

    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self._lines: deque[LogLine] = deque(maxlen=LOG_CAP)  # the model's lines that pass the filters
        self._down: deque[frozenset[int]] = deque(maxlen=LOG_CAP)  # who was down at each of them
        self._down_now: frozenset[int] = frozenset()  # ... after the last line looked at
        self._within: deque[frozenset[int]] = deque(maxlen=LOG_CAP)  # who was in the critical section at each
        self._within_now: frozenset[int] = frozenset()
        self.selected: int | None = None  # the app's selected node: the diagram keeps its lane
        self._lanes: tuple[tuple, tuple[tuple[int, ...], int]] | None = None  # (key, lanes): drawn once per change
        self._rows: tuple[tuple, list[int]] | None = None  # (key, the diagram's rows: indices of the lines drawn on them)
        self._lanes_drawn: tuple[int, ...] = ()  # the lanes the diagram was last sized for
        self._styles: dict[tuple[str, str], Style] = {}  # (theme, colour variable) -> style, for the diagram
        self._strips: dict[tuple, Strip] = {}  # (line, width, picked, style, theme) -> the text line drawn
        self._taken = 0  # model.logged when the last new line was looked at
        self._loads = 0  # model.loads then: a model loaded with another moment is filtered afresh
        self.following = True  # at the bottom, following new lines (until scrolled back)
        self.picked: LogLine | None = None  # the line picked, drawn highlighted while it is shown
        self.border_title = "messages"

    # --- filters ------------------------------------------------------------------------

    @property
    def node_filter(self) -> int | None:
        return self.filters[0]

    @property
    def topic_filter(self) -> str | None:
        return self.filters[1]

    @property
    def show_detector(self) -> bool:
        return self.filters[2]

    def set_filters(self, node: int | None, topic: str | None) -> None:
        self.filters = (node, topic, self.filters[2])

    def toggle_detector(self) -> None:
        node, topic, detector = self.filters
        self.filters = (node, topic, not detector)

    def watch_filters(self) -> None:
        self._refilter()

    def matcher(self) -> Callable[[LogLine], bool]:
        """Whether a line passes the filters (read once, for a whole batch of lines)."""
        node, topic, detector = self.filters

        def matches(line: LogLine) -> bool:
            return ((node is None or node in line.nodes) and (topic is None or line.topic == topic)
                    and (detector or not line.detector or topic == line.topic))

        return matches

    def toggle_diagram(self) -> None:
        self.diagram = not self.diagram

    def watch_diagram(self) -> None:
        self._lanes = None
        self._resize(follow=self.following)

    def _refilter(self) -> None:
        log = self.model.log
        down = frozenset(drawing.down_at_start(log, {i for i, n in self.model.nodes.items() if not n.up}))
        self._lines, self._down, self._within = deque(maxlen=LOG_CAP), deque(maxlen=LOG_CAP), deque(maxlen=LOG_CAP)
        self._within_now = frozenset()  # (from the oldest line on: what began before it is not drawn)
        self._lanes = self._rows = None  # (other lines: other lanes, other rows, however many there are)
        self._keep(log, down)
        self._taken = self.model.logged
        self._resize(follow=True)

    def _keep(self, lines, down: frozenset[int]) -> int:
        """Keep the lines that pass the filters, each with who was down then; how many kept."""
        kept, within = 0, self._within_now
        matches, keep_line, keep_down = self.matcher(), self._lines.append, self._down.append
        keep_within = self._within.append
        for line in lines:
            down = drawing.after(line, down)
            within = drawing.within_after(line, within)
            if matches(line):
                keep_line(line)
                keep_down(down)
                keep_within(within)
                kept += 1
        self._down_now, self._within_now = down, within
        return kept

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
            if self.diagram and self._lanes_now()[0] != self._lanes_drawn:  # another node selected, or resized
                self._resize(follow=self.following)
            return
        if new >= LOG_CAP:  # all of it is new: who was down is known only from the model
            self._refilter()
            return
        following = self.following
        rows_before = self._drawn() if self.diagram and not following else None
        self._taken = self.model.logged
        before = len(self._lines)
        newest = list(islice(reversed(self.model.log), new))
        kept = self._keep(reversed(newest), self._down_now)
        dropped = before + kept - len(self._lines)  # lines that fell off the front
        if rows_before is not None:  # ... and the diagram's rows they had
            dropped = bisect_left(rows_before, dropped)
        if not following and dropped:
            self.scroll_to(y=max(0, self.scroll_y - dropped), animate=False, immediate=True)
        self._resize(follow=following)

    @property
    def _top(self) -> int:
        """Rows above the lines: the diagram's row of lane names."""
        return 1 if self.diagram else 0

    def _count(self) -> int:
        """Rows below the header: a line each, or in the diagram, a line drawn on its lanes each."""
        return len(self._drawn()) if self.diagram else len(self._lines)

    def _resize(self, follow: bool) -> None:
        if self.diagram:
            self._lanes_drawn = self._lanes_now()[0]
        size = Size(self.size.width, self._count() + self._top)
        if size.width == self.virtual_size.width and self.container_size:
            # Only the rows' count changed, so only the scrollbar: Textual's virtual_size
            # would lay the whole screen out again (dear), for every new line.
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
        else:
            self.virtual_size = size
        if follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self._title()
        self.refresh()

    def _title(self) -> None:
        label = self.model.label
        filters = [f"node {label[self.node_filter]}" if self.node_filter is not None else "", self.topic_filter or "",
                   "" if self.show_detector else "detector hidden (h)"]
        count = self._count()
        back = max(0, count + self._top - int(self.scroll_y) - self.scrollable_content_region.height)
        title = "messages"
        if self.diagram:
            lanes, _ = self._lanes_now()
            left_out = len(self.model.ids) - len(lanes)
            title = "diagram" + (f" · {len(lanes)} of {len(self.model.ids)} lanes" if left_out else "") + " (d: text)"
        retitle(self, title, " · ".join(
            [f"{count:,} of {len(self.model.log):,} shown", *filter(None, filters)] + ([f"{back:,} back"] if back else [])))

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.following = new >= self.max_scroll_y
        self._title()

    def on_resize(self) -> None:
        if self.diagram:  # the lanes that fit, so the rows, follow the width
            self.call_after_refresh(self._resize, self.following)
        elif self.following:  # a taller alert bar must not push the newest lines out of view
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True, x_axis=False)

    # --- picking a line -----------------------------------------------------------------------

    def pick(self, step: int) -> None:
        """Pick the line `step` rows below the one picked (-1: above); with none picked, or
        that one no longer shown, the newest on screen."""
        count = self._count()
        if not count:
            return
        row = self._row_of(self.picked)
        if row is None:
            row = min(count - 1, int(self.scroll_y) + self.scrollable_content_region.height - self._top - 1)
        else:
            row = max(0, min(count - 1, row + step))
        self._pick(self._line_at(row), row)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < self._top:
            return
        row = int(self.scroll_y) + offset.y - self._top
        if row < self._count():
            line = self._line_at(row)
            self._pick(None if line is self.picked else line, row)  # (a picked line clicked again is let go)

    def _pick(self, line: LogLine | None, row: int) -> None:
        self.picked = line
        if line is not None:  # in view
            rows = self.scrollable_content_region.height - self._top
            if row < int(self.scroll_y):
                self.scroll_to(y=row, animate=False, immediate=True)
            elif row >= int(self.scroll_y) + rows:
                self.scroll_to(y=row - rows + 1, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Picked(line, None if line is None else why(line, self.model.state.rules)))

    def _line_at(self, row: int) -> LogLine:
        return self._lines[self._drawn()[row] if self.diagram else row]

    def _row_of(self, line: LogLine | None) -> int | None:
        """The row `line` is drawn on, if it is shown."""
        if line is None:
            return None
        lines = self._lines
        index = next((k for k in range(len(lines) - 1, -1, -1) if lines[k] is line), None)
        if index is None or not self.diagram:
            return index
        rows = self._drawn()
        at = bisect_left(rows, index)
        return at if at < len(rows) and rows[at] == index else None

    # --- drawing ----------------------------------------------------------------------------

    def _lanes_now(self) -> tuple[tuple[int, ...], int]:
        """The diagram's lanes and their width, worked out again only when something they
        depend on changed: new lines only while following them (scrolled back, the lanes
        stay, so that the rows being read stay put)."""
        width = max(1, self.scrollable_content_region.width - TIME_WIDTH)
        selected = self.selected if self.selected is not None else self.model.ids[-1]
        key = (width, selected, self.model.loads, *((self._taken, len(self._lines)) if self.following else ()))
        if self._lanes is None or self._lanes[0] != key:
            self._lanes = (key, drawing.choose_lanes(self.model.ids, width, selected, self._lines))
        return self._lanes[1]

    def _drawn(self) -> list[int] | range:
        """The diagram's rows: the indices of the kept lines that draw something on its lanes
        (all of them when every node has a lane)."""
        lanes, _ = self._lanes_now()
        if len(lanes) == len(self.model.ids):
            return range(len(self._lines))
        key = (self._lanes[0], lanes, self._taken, len(self._lines))
        if self._rows is None or self._rows[0] != key:
            chosen, draws = frozenset(lanes), drawing.draws
            self._rows = (key, [k for k, line in enumerate(self._lines) if draws(line, chosen)])
        return self._rows[1]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if self.diagram and y == 0:  # the lanes' names stay on top as the rows scroll
            lanes, lane_width = self._lanes_now()
            names = drawing.header(lanes, lane_width, self.model.label, max(1, width - TIME_WIDTH))
            segments = [Segment(f"{'node':>{TIME_WIDTH - 1}} ", self._style("$text-muted"))]
            segments += [Segment(text, self._style("$secondary" if kind else "")) for text, kind in names]
            return Strip(segments).adjust_cell_length(width, self.rich_style).crop(0, width)
        index = int(self.scroll_y) + y - self._top
        rows = self._drawn() if self.diagram else None
        if index >= (len(self._lines) if rows is None else len(rows)):
            return Strip.blank(width, self.rich_style)
        if rows is not None:
            index = rows[index]
        line = self._lines[index]
        if self.diagram:
            lanes, lane_width = self._lanes_now()
            runs = drawing.row(line, lanes, lane_width, self._down[index], self.model.label, max(1, width - TIME_WIDTH),
                               self._within[index])
            style = self._style
            time = style("$text-muted") + PICKED if line is self.picked else style("$text-muted")
            segments = [Segment(f"{instant_text(line.t):>{TIME_WIDTH - 1}} ", time)]
            segments += [Segment(text, style(variable)) for text, variable in runs]
            return Strip(segments).adjust_cell_length(width, self.rich_style).crop(0, width)
        key = (line, width, line is self.picked, self.visual_style, self.app.theme)
        strip = self._strips.get(key)
        if strip is None:
            text = fitted(line.text, rule_suffix(line.rule), width - TIME_WIDTH)
            content = Content.assemble((f"{instant_text(line.t):>{TIME_WIDTH - 1}} ", "$text-muted"),
                                       (text, line_colour(line.kind, line.role)))
            strip = Visual.to_strips(self, content, width, 1, self.visual_style, pad=True)[0]
            strip = (strip.apply_style(PICKED) if line is self.picked else strip).crop(0, width)
            if len(self._strips) >= STRIPS_KEPT:
                self._strips.clear()
            self._strips[key] = strip
        return strip

    def _style(self, variable: str) -> Style:
        """A theme colour variable ($warning; "" the widget's own) as a rich Style, worked
        out once per theme."""
        key = (self.app.theme, variable)
        style = self._styles.get(key)
        if style is None:
            base = self.rich_style
            value = self.app.theme_variables.get(variable.removeprefix("$"), "") if variable else ""
            if not value:
                style = base
            else:
                if value.startswith("auto"):  # "auto 60%": the text colour, that strong, on the background
                    alpha = float(value.split()[1].rstrip("%")) / 100 if len(value.split()) > 1 else 1.0
                    colour = Color.from_rich_color(base.color).with_alpha(alpha)
                else:
                    colour = Color.parse(value)
                style = Style(color=(Color.from_rich_color(base.bgcolor) + colour).rich_color, bgcolor=base.bgcolor)
            self._styles[key] = style
        return style

    def visible_text(self) -> list[str]:
        """The lines on screen, as text (for tests)."""
        top = int(self.scroll_y)
        rows = min(self.scrollable_content_region.height, self._count() + self._top - top)
        return [self.render_line(y).text for y in range(rows)]
