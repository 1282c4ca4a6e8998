"""The screen both apps show (cluster_app.py): the node grid on top, the log (or its
space-time diagram) beside the node panel, the alert, the app's own rows (the
simulation's timeline and status, the real view's status) and the footer; and the keys
that change only what is shown, never the run: selecting a node, the log's filters,
diagram and scrolling, picking a log line to see the rule that made it, the theme and
the help. One list and one set of actions, so a key
means the same in both apps and both help screens list it.

The widgets are the app's (it draws them from its model, and tests read them there);
the screen lays them out and moves the selection, which the app redraws from."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget

import themes

from .help_screen import HelpScreen
from .message_log import MessageLog
from .node_panel import NodePanel
from .steady_footer import SteadyFooter

PANEL_NEEDS = 70  # columns below which the node panel gives its room to the log

VIEW_BINDINGS = [
    Binding("t", "next_theme", "theme", show=False, tooltip="next theme (dark, light)"),
    Binding("f", "filter_node", "log node", show=False, tooltip="log: only the selected node (again: all)"),
    Binding("m", "filter_topic", "log type", show=False, tooltip="log: next message type filter"),
    Binding("d", "toggle_diagram", "diagram", show=False,
            tooltip="the log as a space-time diagram: a lane per node, time flowing down (again: the text)"),
    Binding("h", "toggle_detector", "log detector", show=False,
            tooltip="log: show or hide failure-detector traffic (probes, heartbeats)"),
    Binding("pageup", "scroll_log(-1)", show=False, tooltip="scroll the log back a page"),
    Binding("pagedown", "scroll_log(1)", show=False, tooltip="scroll the log forward a page"),
    Binding("y", "pick_line(-1)", "why", show=False,
            tooltip="why: pick the log's line above (first the newest shown; a click picks one too) and say which "
                    "rule made it"),
    Binding("Y", "pick_line(1)", show=False, tooltip="why: pick the log's line below"),
    Binding("shift+pageup", "scroll_panel(-1)", show=False, tooltip="scroll the node panel back a page"),
    Binding("shift+pagedown", "scroll_panel(1)", show=False, tooltip="scroll the node panel forward a page"),
    Binding("left", "move(-1, 0)", show=False, tooltip="select a node"),
    Binding("right", "move(1, 0)", show=False, tooltip="select a node"),
    Binding("up", "move(0, -1)", show=False, tooltip="select a node"),
    Binding("down", "move(0, 1)", show=False, tooltip="select a node"),
    *(Binding(str(i), f"select_rank({i})", show=False, tooltip="select a node") for i in range(1, 10)),
]
# The help key is the app's (the footer lists the app's keys first, and it is one of them).
HELP_BINDING = Binding("question_mark", "screen.help", "help", tooltip="this screen")


class ClusterScreen(Screen[None]):
    BINDINGS = VIEW_BINDINGS

    def __init__(self, grid: Widget, log_view: MessageLog, panel: NodePanel, rows: tuple[Widget, ...]):
        """`rows`: the app's own, under the log and the panel (its alert and status lines)."""
        super().__init__()
        self.grid, self.log_view, self.panel, self.rows = grid, log_view, panel, rows

    def compose(self) -> ComposeResult:
        yield self.grid
        with Horizontal(id="middle"):
            yield self.log_view
            yield self.panel
            yield from self.beside()
        yield from self.rows
        yield SteadyFooter(compact=True)

    def beside(self) -> tuple[Widget, ...]:
        """What a screen shows beside the log and the panel (none here)."""
        return ()

    def on_resize(self, event: Resize) -> None:
        self.fit(event.size.width)

    def fit(self, width: int) -> None:
        """The widgets' room for the screen's width."""
        self.panel.display = width >= PANEL_NEEDS  # a narrow screen keeps the log readable

    # --- the selection --------------------------------------------------------------------

    def action_select(self, node: int) -> None:
        if node in self.app.model.nodes:
            self.app.selected = node

    def action_select_rank(self, rank: int) -> None:
        """Digit keys: the rank-th node from the lowest id (the id itself for ids 1..N)."""
        ids = self.app.model.ids
        if rank <= len(ids):
            self.action_select(ids[rank - 1])

    def action_move(self, dx: int, dy: int) -> None:
        ids = self.app.model.ids
        index = ids.index(self.app.selected) + dx + dy * self.grid.columns
        self.action_select(ids[max(0, min(len(ids) - 1, index))])

    # --- the log ----------------------------------------------------------------------------

    def action_filter_node(self) -> None:
        log = self.log_view
        log.set_filters(None if log.node_filter == self.app.selected else self.app.selected, log.topic_filter)

    def action_filter_topic(self) -> None:
        log = self.log_view
        topics = [None, *self.app.state.topics]
        current = topics.index(log.topic_filter) if log.topic_filter in topics else 0
        log.set_filters(log.node_filter, topics[(current + 1) % len(topics)])

    def action_toggle_detector(self) -> None:
        self.log_view.toggle_detector()
        self.notify(f"Failure-detector traffic {'shown' if self.log_view.show_detector else 'hidden'} in the log.")

    def action_toggle_diagram(self) -> None:
        self.log_view.toggle_diagram()

    def action_pick_line(self, step: int) -> None:
        self.log_view.pick(step)

    def on_message_log_picked(self, picked: MessageLog.Picked) -> None:
        """What made the line: in the panel, or said where the panel has no room."""
        text = None if picked.line is None else picked.line.text
        self.panel.show_picked(text, picked.why)
        if text is not None and not self.panel.display:
            self.notify(f"{text}: {picked.why}", timeout=8)

    def action_scroll_log(self, pages: int) -> None:
        _scroll_page(self.log_view, pages)

    def action_scroll_panel(self, pages: int) -> None:
        _scroll_page(self.panel, pages)

    # --- the rest -----------------------------------------------------------------------------

    def action_next_theme(self) -> None:
        names = [t.name for t in themes.THEMES]
        app = self.app
        app.theme = names[(names.index(app.theme) + 1) % len(names)] if app.theme in names else names[0]
        self.notify(f"Theme: {app.theme}")

    def action_help(self, term: str | None = None) -> None:
        """Every key: the app's, then this screen's (its own class's first); `term`: open
        at that term of the glossary instead."""
        mine = [b for cls in type(self).__mro__ if issubclass(cls, ClusterScreen)
                for b in cls.__dict__.get("BINDINGS", ())]
        self.app.push_screen(HelpScreen([*self.app.BINDINGS, *mine], self.app.PALETTE_NOTE, term))


def _scroll_page(view: Widget, pages: int) -> None:
    if pages < 0:
        view.scroll_page_up(animate=False)
    else:
        view.scroll_page_down(animate=False)
