"""The monitor's alert, above the status bar, shown once a property has been broken. Red
while violations last, a line each (what, since when, which nodes); afterwards, quieter,
one line for the last one with how long it lasted. The log has every one. The words are
the monitor's (monitor.describe), with the nodes' short names."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from ..core.config import duration_text
from ..core.monitor import PROPERTY_NAMES, describe
from .model import ClusterModel


class AlertBar(Widget):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.display = False
        self._shown: tuple | None = None

    def show(self) -> None:
        episodes = self.model.episodes
        last = episodes.all[-1] if episodes.all else None
        key = (len(episodes.all), tuple(episodes.open), last and last.lasted)
        if key == self._shown:
            return
        self._shown = key
        self.display = bool(episodes.all)
        self.set_class(bool(episodes.open), "active")
        self.refresh()

    def render(self) -> Content:
        episodes, name = self.model.episodes, self.model.label.__getitem__
        if not episodes.all:
            return Content("")
        total = f" ({len(episodes.all)} in all)" if len(episodes.all) > 1 else ""
        if episodes.open:
            lines = [Content.styled(f"⚠ {PROPERTY_NAMES[e.property]} since t={e.began.t:.2f}s: {describe(e.began, name)}", "b")
                     for e in episodes.open.values()]
            return Content("\n").join([*lines[:-1], Content.assemble(lines[-1], total)])
        last = episodes.all[-1]
        lasted = f", lasted {duration_text(last.lasted)}" if last.lasted is not None else ""
        return Content(f"⚠ last: {PROPERTY_NAMES[last.property]} at t={last.began.t:.2f}s: "
                       f"{describe(last.began, name)}{lasted}{total}")
