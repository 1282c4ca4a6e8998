"""The real view's status line (ui/real_app.py): the simulation's status bar, its parts
and its way of giving way part by part on a narrow screen (status_bar.py: the time, T
and the synchrony bound, the delay, the elections and their messages, the critical
section's figures); where the simulation shows its pace, it says the run is real (so no
time travel), and how many of the processes are up. One line at any width."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive

from .status_bar import Status, StatusBar, fit, parts

REAL = "[b $accent]real run[/]"


def starting(nodes: int) -> dict[str, list[str]]:
    """While the processes start (64 take seconds)."""
    return {"time": [f"[b]starting {nodes} node {'process' if nodes == 1 else 'processes'}:[/]"],
            "pace": ["each listens, then all take their first step together …", "each listens first …", "…"]}


def running(status: Status, up: int, of: int) -> dict[str, list[str]]:
    """The simulation's parts for `status` (its `where` unused), the real ones in place of its pace."""
    forms = parts(status)
    real = {"time": forms.pop("time"), "pace": [f"{REAL} · no time travel: a real run is not deterministic",
                                                f"{REAL} · no time travel", REAL]}
    del forms["pace"]
    return {**real, "up": [f"{up} of {of} up"], **forms}


class RealStatus(StatusBar):
    """A StatusBar (its look) drawn from the forms above."""

    forms: reactive[dict[str, list[str]] | None] = reactive(None)

    def render(self) -> Content:
        if not self.forms:
            return Content("")
        return fit(self.forms, self.content_size.width or 1_000)

    def plain(self) -> str:
        """The line as it reads at the widest (tests, and the reason a key gives)."""
        return fit(self.forms or {"time": [""]}, 10_000).plain
