"""The lesson menu: what `bully-tui lesson` opens on a terminal, and `bully-tui serve`'s
first page. A line saying what the playground is; the shipped lessons in their order,
each with its number, title, step count and one line about it; the keys under them.

↑/↓ (or a lesson's number: two digits typed within DIGIT_PAUSE make 10 to 14) pick a
lesson, enter (or a click) opens it, ? shows the keys and the glossary, q quits. The
menu only picks: it ends with `chosen`, and the command line (cli/lesson.py) plays
that lesson in the live app, then opens the menu again, at that lesson, once the
student leaves it (ctrl+q)."""

from __future__ import annotations

from time import monotonic

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import ListItem, ListView, Static

import themes

from ..run.control import QuitOnSignals
from .help_screen import HelpScreen

ABOUT = ("bully-tui is a playground for leader election and mutual exclusion: a simulated cluster to crash, split "
         "and rewind, and lessons that walk you through it.")
DIGIT_PAUSE = 1.0  # seconds within which a second digit makes a two-digit number
HELP_NOTE = ("A lesson opens in the live app, its narration beside the cluster: → goes on, ← back, escape hides it. "
             "ctrl+q leaves the lesson and comes back here. bully-tui lesson NAME opens one directly.")


class LessonMenu(App[None]):
    CSS_PATH = str(themes.STYLESHEET)
    CSS = """
    LessonMenu Screen { align: center top; }
    #menu { max-width: 110; height: 1fr; }
    #about { padding: 0 1; color: $text; }
    #lessons { height: 1fr; margin: 1 1 0 1; border: round $primary; background: $background; }
    #lessons > ListItem { padding: 0 1 0 0; background: $background; }
    #lessons Horizontal, #lessons Vertical { height: auto; }
    #lessons > ListItem.-highlight { background: $panel; }
    #lessons .number { width: 4; text-align: right; padding-right: 1; color: $secondary; text-style: bold; }
    #lessons .title { text-style: bold; }
    #lessons .about { color: $text-muted; }
    #keys { padding: 0 1; color: $text-muted; }
    """
    TITLE = "bully-tui lessons"
    BINDINGS = [
        *(Binding(str(d), f"digit({d})", show=False) for d in range(10)),
        Binding("question_mark", "help", "help"),
        Binding("q,ctrl+q", "quit", "quit"),
    ]

    def __init__(self, lessons: list, at: int = 0):
        """`lessons`: record/lesson.py's Lessons, in their order; `at`: the one picked first."""
        super().__init__()
        self.lessons = lessons
        self.at = max(0, min(at, len(lessons) - 1))
        self.chosen: int | None = None  # the lesson to open, once the menu has ended
        self.stopped_by: int | None = None  # (cli/output.finished, as for the other apps)
        self.failure: str | None = None
        self.kept_transcript = None
        self._typed, self._typed_at = "", -DIGIT_PAUSE  # the digits typed so far, and when the last came

    def compose(self) -> ComposeResult:
        count = len(self.lessons)
        items = []
        for number, lesson in enumerate(self.lessons, 1):
            heading = Content.assemble((lesson.title, "b"), (f" · {len(lesson.steps)} steps", "$text-muted"))
            items.append(ListItem(Horizontal(Static(str(number), classes="number"),
                                             Vertical(Static(heading, classes="title"),
                                                      Static(lesson.about, classes="about")))))
        lessons = ListView(*items, initial_index=self.at, id="lessons")
        lessons.border_title = "Lessons"
        picks = f"1–{count}" if count > 1 else "1"
        with Vertical(id="menu"):
            yield Static(ABOUT, id="about")
            yield lessons
            yield Static(Content.from_markup(
                f"[b]↑/↓ {picks}[/] pick · [b]enter[/] opens · [b]?[/] help · [b]q[/] quits · [b]ctrl+q[/] in a lesson: "
                "back here"), id="keys")

    def on_mount(self) -> None:
        self.signals = QuitOnSignals(self.exit)
        themes.use_ours(self)
        self.query_one(ListView).focus()

    def on_unmount(self) -> None:
        self.signals.give_back()
        self.stopped_by = self.signals.by

    def on_list_view_highlighted(self, event: ListView.Highlighted) -> None:
        if event.list_view.index is not None:
            self.at = event.list_view.index
            event.list_view.border_subtitle = f"bully-tui lesson {self.lessons[self.at].name}"

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        self.chosen = event.list_view.index
        self.exit()

    def action_digit(self, digit: int) -> None:
        """A lesson by its number: a digit right after another makes a two-digit number
        where there is such a lesson."""
        now = monotonic()
        typed = self._typed + str(digit) if now - self._typed_at < DIGIT_PAUSE else str(digit)
        if not 1 <= int(typed) <= len(self.lessons):
            typed = str(digit)
        self._typed, self._typed_at = typed, now
        if 1 <= int(typed) <= len(self.lessons):
            self.query_one(ListView).index = int(typed) - 1

    def action_help(self) -> None:
        keys = [Binding("up,down", "", tooltip="pick a lesson (home, end, page up and down too)"),
                Binding(",".join(map(str, range(1, 10))), "", tooltip=f"pick a lesson by its number (1 to "
                        f"{len(self.lessons)}: two digits typed quickly make 10 and above)"),
                Binding("enter", "", tooltip="open the lesson picked (a click opens one too)"),
                Binding("question_mark", "", tooltip="this help"), Binding("q,ctrl+q", "", tooltip="quit")]
        self.push_screen(HelpScreen(keys, HELP_NOTE))
