"""The monitor's alert: one line above the status bar, shown once a property has been
broken. Red while a violation lasts (what, since when, which nodes); afterwards, quieter,
the last one with how long it lasted. The log has every one."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from .model import PROPERTY_NAMES, ClusterModel


class AlertBar(Widget):
    def __init__(self, model: ClusterModel):
        super().__init__()
        self.model = model
        self.display = False
        self._shown: tuple | None = None

    def show(self) -> None:
        m = self.model
        key = (len(m.violations), tuple(m.open_violations), m.violations[-1] if m.violations else None)
        if key == self._shown:
            return
        self._shown = key
        self.display = bool(m.violations)
        self.set_class(bool(m.open_violations), "active")
        self.refresh()

    def render(self) -> Content:
        m = self.model
        if not m.violations:
            return Content("")
        total = f" ({len(m.violations)} in all)" if len(m.violations) > 1 else ""
        if m.open_violations:
            now = " · ".join(
                f"{PROPERTY_NAMES[v.property]} since t={v.t:.2f}s: {v.text}" for v in m.open_violations.values()
            )
            return Content.assemble((f"⚠ {now}", "b"), total)
        last = m.violations[-1]
        lasted = f", lasted {last.lasted:g}s" if last.lasted is not None else ""
        return Content(f"⚠ last: {PROPERTY_NAMES[last.property]} at t={last.t:.2f}s: {last.text}{lasted}{total}")
