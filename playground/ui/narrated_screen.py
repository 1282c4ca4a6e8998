"""The simulation's screen with the narration pane (narration.py) beside the log, where a
lesson's steps and a scenario's claim show (lesson_guide.py drives them), and its keys:
`→` the next step, `←` the one before, escape leaves the lesson (or closes the claim),
`L` shows it again, shift+up and shift+down scroll the narration.

The lesson's keys take →, ← and escape only while the pane narrates a lesson
(`check_action`): otherwise the arrows select nodes as ever. The pane takes its room
from the node panel and the log, by the screen's width: half the middle row below
WIDE, a column of PANE_WIDTH beside the log up to ROOMY, and the node panel shown
too from there on."""

from __future__ import annotations

from textual.binding import Binding
from textual.widget import Widget

from .timeline_screen import TimelineScreen

WIDE = 100  # columns from which the pane is a column of its own width, not half the row
ROOMY = 150  # columns from which the node panel shows beside the pane
PANE_WIDTH = 48

NARRATION_BINDINGS = [
    Binding("right", "lesson_next", "next", show=False, priority=True,
            tooltip="lesson: the next step (on a step that still waits, press twice to skip it)"),
    Binding("left", "lesson_back", "back", show=False, priority=True,
            tooltip="lesson: back to the previous step, the run back to the moment it began"),
    Binding("escape", "narration_hide", "leave", show=False, priority=True,
            tooltip="leave the lesson (or close a scenario's claim): the run goes on as it is, every key works"),
    Binding("L", "narration_show", "lesson", show=False, tooltip="show the lesson (or the scenario's claim) again"),
    Binding("shift+down", "narration_scroll(1)", show=False, tooltip="scroll the narration forward a page"),
    Binding("shift+up", "narration_scroll(-1)", show=False, tooltip="scroll the narration back a page"),
]


class NarratedScreen(TimelineScreen):
    BINDINGS = NARRATION_BINDINGS

    def beside(self) -> tuple[Widget, ...]:
        return (self.app.guide.pane,)

    def on_mount(self) -> None:
        self.fit(self.size.width)

    def fit(self, width: int) -> None:
        """The pane's room, and the node panel's, for the screen's width (and again when
        the pane shows or hides)."""
        pane = self.app.guide.pane
        showing = self.app.guide.showing is not None
        pane.display = showing
        if not showing:
            super().fit(width)
            return
        pane.styles.width = "1fr" if width < WIDE else PANE_WIDTH
        self.panel.display = width >= ROOMY

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        guide = self.app.guide
        if action in ("lesson_next", "lesson_back"):
            return guide.narrating
        if action in ("narration_hide", "narration_scroll"):
            return guide.showing is not None
        if action == "narration_show":
            return guide.showing is None and guide.has_something
        return True

    def action_lesson_next(self) -> None:
        self.app.guide.next()

    def action_lesson_back(self) -> None:
        self.app.guide.back()

    def action_narration_hide(self) -> None:
        self.app.guide.hide()

    def action_narration_show(self) -> None:
        self.app.guide.show_again()

    def action_narration_scroll(self, pages: int) -> None:
        self.app.guide.pane.scroll_text(pages)
