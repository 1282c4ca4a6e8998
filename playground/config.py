"""A run's settings: the protocol's knobs plus the links' delay bounds, and their checks."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from protocol import Config

# Virtual time inside the runtime is whole microseconds: sums of delays stay exact, so
# the same seed gives the same times on every machine, and "same instant" means equal.
US = 1_000_000


def to_us(seconds: float) -> int:
    return round(seconds * US)


def to_seconds(us: int) -> float:
    return us / US


class InputError(ValueError):
    """Bad user input. The message is one line that names what is wrong."""


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Defaults serve a live demo: an election takes a few watchable seconds, and
    T = 4 >= 2 * 1.5 = 2 * max delay holds with a second to spare."""

    timeout: float = 4.0
    coordinator_timeout: float | None = None
    probe_interval: float = 5.0
    delay_min: float = 0.5
    delay_max: float = 1.5
    settle: float | None = None  # SLE2's c; None: as long as the algorithm says it needs

    def __post_init__(self) -> None:
        check_positive("timeout", self.timeout)
        if self.coordinator_timeout is not None:
            check_positive("coordinator timeout", self.coordinator_timeout)
        check_non_negative("probe interval", self.probe_interval)
        if self.settle is not None:
            check_positive("settle time", self.settle)
        check_non_negative("minimum delay", self.delay_min)
        check_non_negative("maximum delay", self.delay_max)
        if self.delay_min > self.delay_max:
            raise InputError(f"minimum delay {self.delay_min:g} is above maximum delay {self.delay_max:g}")

    @property
    def protocol(self) -> Config:
        return Config(self.timeout, self.coordinator_timeout, self.probe_interval)

    @property
    def synchronous(self) -> bool:
        """The synchrony assumption every algorithm here relies on: T >= 2 * max delay."""
        return self.timeout >= 2 * self.delay_max

    def warnings(self) -> list[str]:
        """Settings that break an assumption: allowed (seeing what breaks is the point),
        but worth saying out loud."""
        out = []
        if not self.synchronous:
            out.append(
                f"timeout {self.timeout:g} < 2 x max delay {self.delay_max:g}: "
                "the synchrony assumption is broken, so expect disagreement"
            )
        if self.protocol.coordinator_wait <= self.timeout:
            out.append(
                f"coordinator timeout {self.protocol.coordinator_wait:g} <= timeout {self.timeout:g}: "
                "expect spurious re-elections (PROTOCOLS.md: T' must exceed T)"
            )
        return out

    def with_timeout(self, timeout: float) -> ClusterConfig:
        return replace(self, timeout=timeout)

    def with_delay(self, delay_min: float, delay_max: float) -> ClusterConfig:
        return replace(self, delay_min=delay_min, delay_max=delay_max)


def check_positive(what: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{what} must be a positive number of seconds, not {value:g}")


def check_non_negative(what: str, value: float) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise InputError(f"{what} must be zero or more seconds, not {value:g}")
