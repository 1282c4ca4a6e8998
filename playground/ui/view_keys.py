"""The keys that change only what is shown, never the run: selecting a node, the log's
filters, diagram and scrolling, the node panel's room, the theme and the help. One list
and one set of actions, shared by the simulation's app (app.py) and the real one
(real_app.py), so a key means the same in both and both help screens list it.

An app that mixes this in has `model` (ClusterModel), `state` (ClusterState), `grid`,
`log_view` (MessageLog), `panel` (NodePanel) and `selected`, and says how to show a new
selection (`show_selection`)."""

from __future__ import annotations

from textual.binding import Binding
from textual.events import Resize

import themes

from .help_screen import HelpScreen

PANEL_NEEDS = 70  # columns below which the node panel gives its room to the log

VIEW_BINDINGS = [
    Binding("question_mark", "help", "help", tooltip="this screen"),
    Binding("t", "next_theme", "theme", show=False, tooltip="next theme (dark, light)"),
    Binding("f", "filter_node", "log node", show=False, tooltip="log: only the selected node (again: all)"),
    Binding("m", "filter_topic", "log type", show=False, tooltip="log: next message type filter"),
    Binding("d", "toggle_diagram", "diagram", show=False,
            tooltip="the log as a space-time diagram: a lane per node, time flowing down (again: the text)"),
    Binding("h", "toggle_detector", "log detector", show=False,
            tooltip="log: show or hide failure-detector traffic (probes, heartbeats)"),
    Binding("pageup", "scroll_log(-1)", show=False, tooltip="scroll the log back a page"),
    Binding("pagedown", "scroll_log(1)", show=False, tooltip="scroll the log forward a page"),
    Binding("shift+pageup", "scroll_panel(-1)", show=False, tooltip="scroll the node panel back a page"),
    Binding("shift+pagedown", "scroll_panel(1)", show=False, tooltip="scroll the node panel forward a page"),
    Binding("left", "move(-1, 0)", show=False, tooltip="select a node"),
    Binding("right", "move(1, 0)", show=False, tooltip="select a node"),
    Binding("up", "move(0, -1)", show=False, tooltip="select a node"),
    Binding("down", "move(0, 1)", show=False, tooltip="select a node"),
    *(Binding(str(i), f"select_rank({i})", show=False, tooltip="select a node") for i in range(1, 10)),
]


class ViewKeys:
    def show_selection(self) -> None:
        """Draw what depends on the selected node again (the app's own way)."""
        raise NotImplementedError

    def action_select_rank(self, rank: int) -> None:
        """Digit keys: the rank-th node from the lowest id (the id itself for ids 1..N)."""
        if rank <= len(self.model.ids):
            self.action_select(self.model.ids[rank - 1])

    def action_select(self, node: int) -> None:
        if node in self.model.nodes:
            self.selected = node
            self.show_selection()

    def action_move(self, dx: int, dy: int) -> None:
        ids = self.model.ids
        index = ids.index(self.selected) + dx + dy * self.grid.columns
        self.action_select(ids[max(0, min(len(ids) - 1, index))])

    def action_filter_node(self) -> None:
        node = None if self.log_view.node_filter == self.selected else self.selected
        self.log_view.set_filters(node, self.log_view.topic_filter)

    def action_filter_topic(self) -> None:
        topics = [None, *self.state.topics]
        current = topics.index(self.log_view.topic_filter) if self.log_view.topic_filter in topics else 0
        self.log_view.set_filters(self.log_view.node_filter, topics[(current + 1) % len(topics)])

    def action_toggle_detector(self) -> None:
        self.log_view.toggle_detector()
        self.notify("Failure-detector traffic " + ("shown" if self.log_view.show_detector else "hidden") + " in the log.")

    def action_toggle_diagram(self) -> None:
        self.log_view.toggle_diagram()

    def action_scroll_log(self, pages: int) -> None:
        _scroll_page(self.log_view, pages)

    def action_scroll_panel(self, pages: int) -> None:
        _scroll_page(self.panel, pages)

    def action_next_theme(self) -> None:
        names = [t.name for t in themes.THEMES]
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"Theme: {self.theme}")

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.BINDINGS, self.PALETTE_NOTE))

    def on_resize(self, event: Resize) -> None:
        self.panel.display = event.size.width >= PANEL_NEEDS  # a narrow screen keeps the log readable


def _scroll_page(view, pages: int) -> None:
    if pages < 0:
        view.scroll_page_up(animate=False)
    else:
        view.scroll_page_down(animate=False)
