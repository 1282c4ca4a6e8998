"""The help screen, two tabs. Keys: generated from the bindings it is given (the app's
and its screen's) so it cannot drift from them: a column of keys and a column of what
they do, whose lines wrap under themselves at any width. The keys' column is at most
KEYS_WIDTH wide, so that the descriptions keep their room: a longer list of keys wraps
within it, and a run of digits reads "1–9". Glossary: every term the screen uses
(glossary_view.py), opened at one when a lesson's link names it (`k` and `g` switch)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static, TabbedContent, TabPane

from .glossary_view import GlossaryView

KEYS_WIDTH = 12  # cells of keys at most, before they wrap


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close"), Binding("k", "tab('keys')", "keys"),
                Binding("g", "tab('glossary')", "glossary")]

    def __init__(self, bindings: list[Binding], note: str, term: str | None = None):
        """`note`: the last line (what the command palette offers); `term`: open the
        glossary at it (a lesson's link)."""
        super().__init__()
        self.bindings, self.note, self.term = bindings, note, term

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="glossary" if self.term else "keys"):
            with TabPane("Keys", id="keys"):
                yield from self._keys()
            with TabPane("Glossary", id="glossary"):
                yield GlossaryView()

    def on_mount(self) -> None:
        if self.term:
            self.call_after_refresh(self.query_one(GlossaryView).go_to, self.term)

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    def _keys(self) -> ComposeResult:
        keys_by_purpose: dict[str, list[str]] = {}  # bindings that share a tooltip share a row
        for binding in self.bindings:
            if isinstance(binding, Binding) and binding.tooltip:
                keys = [self.app.get_key_display(Binding(k, "")) for k in binding.key.split(",")]
                keys_by_purpose.setdefault(binding.tooltip, []).extend(keys)
        keys_by_purpose = {purpose: _runs_of_digits(keys) for purpose, keys in keys_by_purpose.items()}
        width = min(KEYS_WIDTH, max(len(" ".join(keys)) for keys in keys_by_purpose.values()))
        with VerticalScroll():
            yield Static(Content.from_markup(
                "[b $primary]bully-tui keys[/]  [$text-muted]? or escape closes this; the keys work again then; "
                "g: the glossary[/]\n"))
            for purpose, keys in keys_by_purpose.items():  # assembled, not markup: "[" is a key here
                with Horizontal(classes="row"):
                    key_column = Static(Content.styled(" ".join(keys), "b $secondary"), classes="keys")
                    key_column.styles.width = width + 2
                    yield key_column
                    yield Static(Content(purpose), classes="what")
            yield Static(Content.from_markup(f"\n[$text-muted]{self.note} Press ? or escape to close.[/]"))


def _runs_of_digits(keys: list[str]) -> list[str]:
    """"1 2 3 4 5 6 7 8 9" -> "1–9", where the run of digits was."""
    digits = [k for k in keys if len(k) == 1 and k.isdigit()]
    if len(digits) < 3 or [int(d) for d in digits] != list(range(int(digits[0]), int(digits[0]) + len(digits))):
        return keys
    first = keys.index(digits[0])
    rest = [k for k in keys if k not in digits]
    return [*rest[:first], f"{digits[0]}–{digits[-1]}", *rest[first:]]
