"""The footer of the app's screen: Textual's Footer, composed again only when the keys it
shows change.

Textual's composes its keys afresh at every signal that the screen's bindings may have
changed (a focus set, a screen shown, the app focused: three at an app's start), each
time removing and mounting its keys and laying the whole screen out again, for the same
keys: a seventh of an app's start (0.17 s -> 0.15 s of CPU at 80x24), which a lesson's
step with a run of its own and an algorithm switch pay again. Here a signal first looks
at what the keys would be (each binding shown, enabled or not, its tooltip; the
palette's key) and composes only if that is not what was composed.

It reads Textual's private `_bindings_ready` (textual is pinned: pyproject.toml)."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._made: tuple | None = None  # what the keys were made from (`_keys`), or will be by a compose asked for

    def compose(self):
        if self._bindings_ready:
            self._made = self._keys()
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        if screen is not self.screen:
            return super().bindings_changed(screen)
        keys = self._keys()
        if keys == self._made:
            return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached:  # (Textual's asked for a compose: it will make these)
            self._made = keys

    def _keys(self) -> tuple:
        """What `compose` makes the keys from."""
        active = self.screen.active_bindings
        shown = tuple((binding.key, binding.action, binding.description, binding.group, enabled, tooltip)
                      for _, binding, enabled, tooltip in active.values() if binding.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        return shown, palette[1:] if palette else None, self.compact
