"""One line: virtual time and pace (and how far behind its clock the run is), or where in
the past the screen is; T and the delay bounds (red when the synchrony bound is broken:
T < 2 x max delay, or links held), and the elections so far with the current one's
message count beside its worst case."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widget import Widget

from ..core.config import ClusterConfig

BEHIND_SHOWN = 0.5  # seconds behind the clock before the bar says so


@dataclass(frozen=True)
class Status:
    now: float
    speed: float
    paused: bool
    behind: float
    config: ClusterConfig
    elections: int
    in_election: bool
    election_messages: int
    worst_case: int | None
    where: str = ""  # looking at the past: which instant ("" at the present)
    held_links: int = 0  # links held (a partition): synchrony is broken


class StatusBar(Widget):
    def __init__(self):
        super().__init__()
        self._status: Status | None = None

    def show(self, status: Status) -> None:
        if status != self._status:
            self._status = status
            self.refresh()

    def render(self) -> Content:
        s = self._status
        if s is None:
            return Content("")
        if s.where:
            pace = f"[b $accent]{s.where}[/]"
        else:
            pace = "[b $warning]❚❚ paused[/]" if s.paused else f"▶ ×{s.speed:g}"
            if s.behind >= BEHIND_SHOWN and not s.paused:
                pace += f" [b $warning]{s.behind:.1f}s behind[/]"
        c = s.config
        if s.held_links:
            sync = (f"T={c.timeout:g} [b $error]· {s.held_links} link{'s' if s.held_links > 1 else ''} held: "
                    f"synchrony broken[/]")
        elif c.synchronous:
            sync = f"T={c.timeout:g} ≥ 2×{c.delay_max:g}"
        else:
            sync = f"[b $error]T={c.timeout:g} < 2×{c.delay_max:g}: synchrony broken[/]"
        delay = f"δ {c.delay_min:g}–{c.delay_max:g}"
        worst = f" (worst {s.worst_case})" if s.worst_case is not None else ""
        if not s.elections:
            count = "no election yet"
        elif s.elections == 1:  # every node starts at once: no one initiator's worst case to compare with
            count = f"start-up election{'…' if s.in_election else ''}: {s.election_messages} msgs"
        else:  # the current election's count while one runs, else the last one's
            count = f"election {s.elections}{'…' if s.in_election else ''}: {s.election_messages} msgs{worst}"
        return Content.from_markup(f"[b]t={s.now:.2f}s[/] {pace} │ {sync} │ {delay} │ {count}")
