"""What commands leave set, that everyone watching a run must see alike (`Settings`): T
and the delays, the links held and the links made lossy. The engine and every fold of a
trace work them out here, from a command's recorded words, so the two cannot disagree;
and which of the model's assumptions they break (faults.py), since when (`Assumptions`)."""

from __future__ import annotations

from dataclasses import dataclass

from .commands import LINK_COMMANDS, LossyLink
from .config import ClusterConfig
from .events import CommandEvent
from .faults import BrokenSince, broken


@dataclass(frozen=True, slots=True)
class Settings:
    """What commands set that everyone watching a run must see alike: T and the delays
    (`config`), the links held and the links made lossy (`lossy`: (src, dst, p), sorted).
    The engine and every fold of a trace (the app's state at any instant) work them out
    here, from the command's recorded words, so the two cannot disagree."""

    config: ClusterConfig
    held: frozenset[tuple[int, int]] = frozenset()
    lossy: tuple[tuple[int, int, float], ...] = ()

    def after(self, name: str, args: tuple, ids: tuple[int, ...]) -> Settings:
        """The settings once the command `name` with `args` (as recorded: ids, seconds) has run."""
        if name == "timeout":
            return Settings(self.config.with_timeout(*args), self.held, self.lossy)
        if name == "delay":
            return Settings(self.config.with_delay(*args), self.held, self.lossy)
        if name in LINK_COMMANDS:
            return Settings(self.config, held_after(self.held, name, args, ids), self.lossy)
        if name == LossyLink.name:
            src, dst, p = args
            lossy = sorted([*(entry for entry in self.lossy if entry[:2] != (src, dst)), (src, dst, p)])
            return Settings(self.config, self.held, tuple(lossy))
        return self

    @property
    def synchronous(self) -> bool:
        """The synchrony bound holds: T >= 2 x max delay, and no link is held."""
        return self.config.synchronous and not self.held

    @property
    def draws(self) -> bool:
        """Whether a message sent may be lost or duplicated: draws for the engine to make."""
        faults = self.config.faults
        return bool(faults.loss or faults.duplicate or any(p for _, _, p in self.lossy))

    @property
    def broken(self) -> tuple[str, ...]:
        """The model's assumptions these settings break (faults.ASSUMPTIONS' keys)."""
        return broken(self.config, self.held, self.lossy)


def held_after(held: frozenset[tuple[int, int]], name: str, args: tuple, ids: tuple[int, ...]) -> frozenset[tuple[int, int]]:
    if name == "hold":
        return held | {tuple(args)}
    if name == "release":
        return held - {tuple(args)}
    if name == "partition":
        inside, outside = set(args), set(ids) - set(args)
        return held | {(a, b) for a in inside for b in outside} | {(b, a) for a in inside for b in outside}
    return frozenset()  # heal


class Assumptions:
    """A fold of a trace's commands from a run's settings: what they leave set, and which
    of the model's assumptions are broken since when, so that a report of a violation can
    say what was broken when it began (the summary, the exports; the app's state keeps
    its own Settings and BrokenSince alike)."""

    def __init__(self, config: ClusterConfig, ids: tuple[int, ...]):
        self.settings = Settings(config)
        self.ids = tuple(ids)
        self.since = BrokenSince()
        self.since.update(0.0, self.settings.broken)

    def observe(self, e: CommandEvent) -> None:
        if e.command == "join":
            self.ids = tuple(sorted((*self.ids, *e.args)))
        self.settings = self.settings.after(e.command, e.args, self.ids)
        self.since.update(e.t, self.settings.broken)

    def text(self) -> str:
        return self.since.text()

    def copy(self) -> Assumptions:
        twin = Assumptions.__new__(Assumptions)
        twin.settings, twin.ids, twin.since = self.settings, self.ids, self.since.copy()
        return twin

    def __eq__(self, other: object) -> bool:  # (snapshots compare equal when they show the same moment)
        return isinstance(other, Assumptions) and (self.settings, self.since) == (other.settings, other.since)
