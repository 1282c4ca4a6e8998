"""A run's settings: the protocol's knobs plus the links' delay bounds and the model's
assumptions a run breaks on purpose (`Faults`), and their checks."""

from __future__ import annotations

import json
import math
import re
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


def shown(text: str, limit: int = 40) -> str:
    """A value the user gave, quoted for an error line: cut to `limit` characters, with
    how long it was, so that a 5,000-digit number does not fill the terminal."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def shown_json(value: object, limit: int = 60) -> str:
    """A value read from a file, as JSON, cut to `limit` characters for an error line."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# Numbers are typed in ASCII: Python's int() and float() also read other scripts' digits
# ("١٢" is 12) and underscores ("3_0" is 30), which nobody means on a command line.
_WHOLE = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE)


def parse_number(text: str, what: str) -> float:
    """A finite decimal number, in ASCII (1, 0.5, 1e3)."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise InputError(f"{what} must be a number, not {shown(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, not {shown(text)}")
    return value


def parse_whole(text: str, what: str, low: int, high: int | None = None) -> int:
    """A whole number in ASCII digits, from `low` to `high` (None: no limit above)."""
    if not _WHOLE.fullmatch(text.strip()):
        raise InputError(f"{what} must be a whole number, not {shown(text)}")
    digits = text.strip()
    value = int(digits) if len(digits) <= 40 else None  # (a longer one is out of every range here)
    if value is None or value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"{low} or more"
        number = digits if value is None else str(value)
        raise InputError(f"{what} must be {bounds}, not {number if len(number) <= 40 else f'a {len(number):,}-digit number'}")
    return value


MAX_NODES = 1000  # nodes a run starts with (joins may add more)
MAX_SEED = 2**63 - 1  # seeds are whole numbers that fit in 64 bits, as every JSON reader can take


class WriteError(Exception):
    """A file could not be written (a full disk, say): the run stops, with one line."""


@dataclass(frozen=True, slots=True)
class TimeRange:
    """The values one kind of time may take, in seconds: one range per kind, checked the
    same way for an option, a scenario's setting and a command alike.

    Why bounds at all: virtual time counts whole microseconds, so an interval much
    shorter than that would round to zero and time would stand still (Stoller's
    heartbeat runs every T/2); and a huge one overflows the clock, or takes longer than
    anyone will wait."""

    name: str
    low: float  # the smallest value but zero
    high: float
    zero: bool = False  # whether 0 is allowed (it turns probing off; a delay may be 0)

    def check(self, value: float, what: str | None = None) -> float:
        """`value`, or an InputError naming `what` (default: this range's name) and the range."""
        if math.isfinite(value) and (self.low <= value <= self.high or (self.zero and value == 0)):
            return value
        raise InputError(f"{what or self.name} must be {self.describe()}, not {value:g}")

    def describe(self) -> str:
        span = f"from {seconds_text(self.low)} to {seconds_text(self.high)}"
        return f"0 or {span}" if self.zero and self.low > 0 else span


def instant_text(t: float) -> str:
    """An instant for people, to the millisecond, as the log's time column shows it:
    "30.397", "0.000"."""
    return f"{t:.3f}"


def duration_text(seconds: float) -> str:
    """A duration for people, to the millisecond: "0.81 s", "1.053 s", "12 s"."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + " s"


def seconds_text(value: float) -> str:
    """Seconds for people: "0.001 s", "1,000,000 s" (not "1e+06")."""
    return f"{int(value):,} s" if value >= 1000 and value == int(value) else f"{value:g} s"


TIMEOUT = TimeRange("timeout", 0.001, 1e6)
COORDINATOR_TIMEOUT = TimeRange("coordinator timeout", 0.001, 1e6)
PROBE_INTERVAL = TimeRange("probe interval", 0.001, 1e6, zero=True)
DELAY = TimeRange("delay", 0, 1e6, zero=True)
SETTLE = TimeRange("settle time", 0.001, 1e9)
INSTANT = TimeRange("time", 0, 1e12, zero=True)  # a moment of virtual time: --until, a command's TIME


def check_probability(value: float, what: str) -> float:
    """A probability: a finite number from 0 to 1."""
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise InputError(f"{what} must be a probability from 0 to 1, not {value:g}")
    return value


def check_drift(value: float, what: str = "drift") -> float:
    """A clock's drift bound R: each rate is in [1 - R, 1 + R], so R is from 0 to below 1
    (a rate of 0 would stop a clock, a negative one run it backwards)."""
    if not (math.isfinite(value) and 0 <= value < 1):
        raise InputError(f"{what} must be from 0 to below 1 (each clock runs at a rate in [1 - R, 1 + R]), not {value:g}")
    return value


@dataclass(frozen=True, slots=True)
class Faults:
    """The model's assumptions a run breaks on purpose, none by default (lossless FIFO
    links, clocks that keep time: the model the lecture's synchronous system describes).
    Each draw is the run's own, seeded (faults.py), so a run with faults is re-created
    event for event like any other."""

    loss: float = 0.0  # each message is lost with this probability (`lossy K L P` sets one link's)
    duplicate: float = 0.0  # each message that is not lost arrives twice with this probability
    reorder: bool = False  # links are not FIFO: each message's delay is its own, a later one may overtake
    drift: float = 0.0  # each node's timers run at a rate of its own, drawn in [1 - drift, 1 + drift]

    def __post_init__(self) -> None:
        check_probability(self.loss, "loss")
        check_probability(self.duplicate, "duplicate")
        check_drift(self.drift)

    @property
    def any(self) -> bool:
        return bool(self.loss or self.duplicate or self.reorder or self.drift)


NO_FAULTS = Faults()


def reorder_refused(delay_min: float, delay_max: float) -> str | None:
    """Why links cannot reorder with these delay bounds (one line), or None: with one
    delay for every message, nothing can overtake."""
    if delay_min == delay_max:
        return f"--reorder needs a delay range (MIN:MAX): with a constant delay of {delay_min:g} s nothing can overtake"
    return None


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
    # The ring algorithms' order of the ids round the ring (ids.ring_order); None: ascending.
    # A transcript writes it apart from the other settings, and only when there is one.
    ring: tuple[int, ...] | None = None
    # The assumptions broken on purpose; a transcript writes them apart, and only if any is.
    faults: Faults = NO_FAULTS

    def __post_init__(self) -> None:
        TIMEOUT.check(self.timeout)
        if self.coordinator_timeout is not None:
            COORDINATOR_TIMEOUT.check(self.coordinator_timeout)
        PROBE_INTERVAL.check(self.probe_interval)
        if self.settle is not None:
            SETTLE.check(self.settle)
        check_delay(self.delay_min, self.delay_max)
        if self.ring is not None and len(set(self.ring)) != len(self.ring):
            raise InputError("a ring order lists each node once")

    @property
    def protocol(self) -> Config:
        return Config(self.timeout, self.coordinator_timeout, self.probe_interval, self.ring)

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

    def with_faults(self, **changes: float | bool) -> ClusterConfig:
        return replace(self, faults=replace(self.faults, **changes))


CS_THINK = TimeRange("think time", 0, 1e6, zero=True)
# A stay in the critical section takes time: with none, a node that serves itself (the
# central lock's leader) would want, enter and leave for ever at one instant.
CS_HOLD = TimeRange("hold time", 0.001, 1e6)


@dataclass(frozen=True, slots=True)
class Workload:
    """Who wants the critical section, when a mutex runs: each up node asks after a
    think time and leaves after a hold time, each drawn in its range (seconds) from the
    node's own generator, seeded by the run's seed (so the draws do not depend on which
    node ran first). `think` None: nobody asks but by the `want` command."""

    # Long enough stays that a leader crashed while a follower is inside is replaced
    # before it leaves: at N = 5, crashing the leader 4 s into a stay of node 1, 2 or 3
    # put two nodes in the critical section in 11 of 12 seeds (with 1..3 s stays, in none).
    # (Node 4, the next leader, serves itself knowing it holds the lock.)
    think: tuple[float, float] | None = (5.0, 20.0)
    hold: tuple[float, float] = (15.0, 30.0)

    def __post_init__(self) -> None:
        for what, span, allowed in (("--cs-think", self.think, CS_THINK), ("--cs-hold", self.hold, CS_HOLD)):
            if span is not None:
                low, high = allowed.check(span[0], what), allowed.check(span[1], what)
                if low > high:
                    raise InputError(f"{what}: {low:g} is above {high:g}")


def check_delay(low: float, high: float) -> tuple[float, float]:
    """Delay bounds: each in DELAY's range, and the minimum not above the maximum."""
    DELAY.check(low, "minimum delay")
    DELAY.check(high, "maximum delay")
    if low > high:
        raise InputError(f"minimum delay {low:g} is above maximum delay {high:g}")
    return low, high
