"""`bully-tui verify FILE`: re-create a transcript from its recipe and compare.

A run is deterministic, so a transcript's header (algorithm, nodes, seed, settings) and
its command events (each at its time, in its order) re-create every event it holds. This
re-runs them (the engine, driven without trio) and compares line by line, byte for byte:
the text is the same encoder's. A version 3 transcript is compared with its re-run's
lines as version 3 wrote them (without the rule each line carries since version 4). The transcript may stop anywhere (a live session ends
when its user quits): it must be the re-run's beginning.

  identical                 exit 0, "FILE: identical, N events"
  different                 exit 1, "FILE line N: field 'x': the transcript has A, the re-run has B"
  unreadable or malformed   exit 2, one line (the reader's)
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..core.commands import Scheduled, from_words
from ..core.config import InputError
from ..core.engine import run_sync
from ..core.events import CommandEvent, Event
from .codec import LineEncoder
from .reader import Reader
from .transcript import RE_CREATED_VERSIONS, VERSION, Recipe, wide


class Different(Exception):
    """The transcript and its re-run part: one line saying where and how."""


class _Stop(Exception):
    """The transcript has ended and its every line matched: nothing more to compare."""


def verify(path: str) -> int:
    """Compare; return the number of events (raise Different or InputError)."""
    with Reader.open(path) as reader:
        commands, last_t = _recipe(reader)  # every line checked first, as replay and export check them
        if reader.header.by_hand:
            raise InputError(f"{path} was stepped by hand (an exhaustive hunt's steps): no settings and commands "
                             "re-create it, so there is nothing to verify")
        if reader.header.real:
            raise InputError(f"{path} is a run of real node processes: the operating system's scheduling and "
                             "network made it, and nothing re-creates them, so there is nothing to verify")
        if reader.version not in RE_CREATED_VERSIONS:
            raise InputError(f"{path} is a version {reader.version} transcript: verify re-creates runs of this program "
                             f"(versions {' and '.join(map(str, RE_CREATED_VERSIONS))}); older ones were made by other "
                             "rules")
    engine = Recipe(reader.header, tuple(commands)).engine()
    compare = _Comparer(path, reader.header.algorithm, wide(reader.header.nodes), reader.version)
    engine.subscribe(compare)
    try:
        run_sync(engine, last_t)
    except _Stop:
        pass
    compare.finish()
    return compare.count


def _recipe(reader: Reader) -> tuple[list[Scheduled], float]:
    """The transcript's commands, at their times and in their order, and its last time.
    Reading every event checks the whole file first: a malformed one is malformed, not
    different."""
    commands: list[Scheduled] = []
    last_t = 0.0
    for event in reader.events():
        if type(event) is CommandEvent:
            commands.append(Scheduled(event.t, from_words(event.command, event.args), event.source))
        last_t = event.t
    return commands, last_t


class _Comparer:
    """A trace observer: each re-run event against the transcript's next line."""

    def __init__(self, path: str, algorithm: str, wide_ids: bool, version: int = VERSION):
        self._path = path
        self._encode = LineEncoder(algorithm, wide_ids, version)
        self._lines = _event_lines(path)
        self.count = 0

    def __call__(self, events: list[Event]) -> None:
        for event in events:
            line = next(self._lines, None)
            if line is None:
                raise _Stop
            self.count += 1
            ours = self._encode(event).encode()[:-1]  # (the newline)
            if ours != line:
                raise Different(self._difference(self.count + 1, line, ours))

    def finish(self) -> None:
        """Every re-run event matched; the transcript must not go on past the re-run."""
        if next(self._lines, None) is not None:
            raise Different(f"{self._path} line {self.count + 2}: the re-run ends at line {self.count + 1}, "
                            f"the transcript goes on")

    def _difference(self, n: int, theirs: bytes, ours: bytes) -> str:
        mine, other = json.loads(ours), json.loads(theirs)
        for key in [*mine, *(k for k in other if k not in mine)]:
            if mine.get(key, _ABSENT) != other.get(key, _ABSENT):
                return (f"{self._path} line {n}: field '{key}': the transcript has {_show(other.get(key, _ABSENT))}, "
                        f"the re-run has {_show(mine.get(key, _ABSENT))}")
        return f"{self._path} line {n}: the same fields, written differently"


_ABSENT = object()


def _show(value: object) -> str:
    return "nothing" if value is _ABSENT else json.dumps(value)


def _event_lines(path: str) -> Iterator[bytes]:
    """The event lines of a file the reader has checked: bytes, newline dropped."""
    with open(path, "rb") as f:
        f.readline()  # the header
        for line in f:
            yield line.rstrip(b"\n")
