"""Asking before a new future: a command given while looking at the past branches the
session there (a new transcript beside the first, which stays as it is)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class BranchScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y,enter", "answer(True)", "branch"), Binding("n,escape", "answer(False)", "stay")]
    DEFAULT_CSS = """
    BranchScreen { align: center middle; }
    BranchScreen > Vertical { width: 68; height: auto; border: round $warning; background: $surface; padding: 0 1; }
    """

    def __init__(self, command: str, t: float, file: str, temporary: bool = False):
        super().__init__()
        kept = " (a temporary file, as the session's is, removed when you quit: s keeps both)" if temporary else ""
        self.text = Content.assemble(
            ("A new future?", "b $warning"), "\n\n",
            "You are looking at t=", (f"{t:.2f}s", "b"), ", in the past. ", (command, "b"),
            " there branches the session: it goes on from that instant, recorded as ", (file, "b"), kept,
            ". What happened after it stays in its own transcript.\n\n",
            ("y", "b $secondary"), " or ", ("enter", "b $secondary"), ": branch   ",
            ("escape", "b $secondary"), ": stay in the past")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.text)

    def action_answer(self, branch: bool) -> None:
        self.dismiss(branch)
