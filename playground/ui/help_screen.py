"""The help screen, generated from the app's bindings so it cannot drift from them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        rows = [Content.from_markup("[b $primary]bully-tui keys[/]"), Content("")]
        keys_by_purpose: dict[str, list[str]] = {}  # bindings that share a tooltip share a row
        for binding in self.app.BINDINGS:
            if isinstance(binding, Binding) and binding.tooltip:
                keys = [self.app.get_key_display(Binding(k, "")) for k in binding.key.split(",")]
                keys_by_purpose.setdefault(binding.tooltip, []).extend(keys)
        width = max(len(" ".join(keys)) for keys in keys_by_purpose.values())
        for purpose, keys in keys_by_purpose.items():  # assembled, not markup: "[" is a key here
            rows.append(Content.assemble((" ".join(keys).rjust(width), "b $secondary"), "  ", purpose))
        rows += [Content(""), Content.from_markup(
            "[$text-muted]ctrl+p opens the command palette: crash, recover or elect any node, "
            "filter the log, change theme. Press ? or escape to close.[/]")]
        with VerticalScroll():
            yield Static(Content("\n").join(rows))
