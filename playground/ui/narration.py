"""The narration pane, beside the message log: a lesson's step (its number and title in
the border, what it waits for or asks the student to do, the hint when the student did
something else, its narration in Markdown, the keys in the bottom border), or a
scenario's claim until it is dismissed. It draws what it is given (lesson_guide.py
drives it); a link `[SLE1](glossary#sle1)` in the narration opens the help's glossary at
that term.

The narration scrolls (shift+up and shift+down, or the wheel) under the lines that say
what the step waits for, which stay in view at any height."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static


class NarrationPane(Vertical):
    def __init__(self):
        super().__init__()
        self.status = Static("", classes="status")
        self.text = Markdown("", open_links=False)
        self.scroll = VerticalScroll(self.text, classes="narration")
        self._shown: tuple | None = None  # what is drawn, to draw only what changed
        self._asked: tuple | None = None  # what to draw once mounted
        self._mounted = False  # on_mount has run (Textual's is_mounted turns true later, after what it awaits)

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.scroll

    def on_mount(self) -> None:
        self._mounted = True
        if self._asked is not None:
            self.show(*self._asked)

    def show(self, title: str, status: str, hint: str | None, text: str, keys: str) -> None:
        """Draw a step (or a claim): `status` what it waits for, `hint` what the student is
        told (Markdown's **bold** read as bold), `text` the narration (Markdown)."""
        if not self._mounted:  # (asked between on_mount and is_mounted, it was never drawn)
            self._asked = (title, status, hint, text, keys)
            return
        if self._shown == (title, status, hint, text, keys):
            return
        text_changed = self._shown is None or self._shown[3] != text
        self._shown = (title, status, hint, text, keys)
        self.border_title, self.border_subtitle = title, keys
        lines = [Content.styled(status, "b $accent")] if status else []
        if hint:
            lines.append(Content.styled("✋ ", "$warning") + _bold(hint))
        status = Content("\n").join(lines)
        self.status.update(status, layout=self._height_changes(status))
        self.status.display = bool(lines)
        if text_changed:
            self.text.update(text)
            self.scroll.scroll_home(animate=False)

    def _height_changes(self, status: Content) -> bool:
        """Whether `status` takes more or fewer lines than the status shown: only then is
        the screen laid out again (Textual's update lays it out every time, and a step
        that waits for a time says the seconds left every second)."""
        shown, width = self.status, self.status.content_size.width
        return not (width and shown.display and status.get_height(shown.styles, width) == shown.content_size.height)

    def scroll_text(self, pages: int) -> None:
        if pages < 0:
            self.scroll.scroll_page_up(animate=False)
        else:
            self.scroll.scroll_page_down(animate=False)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        href = event.href
        if href.startswith("glossary#"):
            self.screen.action_help(href.removeprefix("glossary#"))
        elif href.startswith(("http://", "https://")):
            self.app.open_url(href)


def _bold(text: str) -> Content:
    """A hint's words, its **bold** parts bold (the rest of Markdown is for the narration)."""
    parts = text.split("**")
    return Content.assemble(*((part, "b") if k % 2 else part for k, part in enumerate(parts)))


def keys_for(task) -> str:
    """The keys that give a lesson's task (record/lesson.py's Task), as the pane says them:
    "x", "4 then e", "-"."""
    if task.leader:
        return "x"
    if task.command == "partition":
        group = task.group
        if len(group) == 1:
            return f"{group[0]} then p" if group[0] <= 9 else f"select node {group[0]}, then p"
        split = max(group) if min(group) == 1 else min(group) - 1
        return f"ctrl+p, then Split the cluster: ..{split}"
    key = {"crash": "c", "recover": "r", "elect": "e", "leave": "l", "want": "w", "join": "j", "heal": "P",
           "timeout": "-" if task.below is not None else "+"}[task.command]
    if task.command in ("join", "heal", "timeout"):
        return key
    if task.node is None:
        return f"select a node, then {key}"
    return f"{task.node} then {key}" if task.node <= 9 else f"select node {task.node}, then {key}"
