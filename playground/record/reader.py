"""Reading a transcript back, line by line and never whole (a big one is gigabytes),
every line checked; the first problem is one line naming the file, the line and the
field. verify, replay, export and the app's history all read through it, so they take
and refuse the same files."""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, BinaryIO

import orjson

from protocol import ALGORITHMS, MUTEXES, known, machine

from ..core.commands import delay_refused
from ..core.config import MAX_NODES, MAX_SEED, ClusterConfig, Faults, InputError, Workload, reorder_refused, shown_json
from ..core.events import Event, SendEvent
from .codec import EventDecoder
from .files import open_to_read
from .transcript import FORMAT, INDEX_BLOCK, LINE_LIMIT, READABLE_VERSIONS, Header, Parent, Transcript, wide
from .transcript import Claim
from .upgrade import UPGRADED, Upgrade


def load(path: str) -> Transcript:
    """Read and check a whole transcript; any problem raises InputError, one line."""
    with Reader.open(path) as reader:
        return Transcript(reader.header, list(reader.events()))


def parse(data: bytes, name: str = "transcript") -> Transcript:
    """The same, from bytes in memory."""
    reader = Reader(io.BytesIO(data), name)
    return Transcript(reader.header, list(reader.events()))


class Reader:
    """A transcript read and checked line by line, never whole: a big one is gigabytes.

    Every line is checked: JSON (no NaN, no Infinity, nested no deeper than the format
    goes), its event's fields, `seq` one more than the line before, time finite and
    never going back, and every node (a sender, a leader, a command's argument) one of
    the header's. The first problem raises InputError: "FILE line N: field 'x': what"."""

    def __init__(self, f: BinaryIO, name: str):
        self._f = f
        self.name = name
        self._n = 0
        self._cut = 0  # the number of a line with no end (the file's last, cut short), if any
        self.offset = 0
        first = self._line()
        self._events_start = len(first) if first else 0
        if first is None:
            raise InputError(f"{name} is empty: line 1 should be a {FORMAT} header")
        self._loads = _loads_exact  # for the header, whose ids may be 128-bit (orjson reads those as floats)
        self.header, self.version = _parse_header(self._json(first), self._fail)
        if not wide(self.header.nodes):
            self._loads = orjson.loads
        self._nodes = set(self.header.nodes)  # and each node that joins, from its join on
        self._decode = EventDecoder(self.header.algorithm, self._nodes, max(self.version, 3))  # (v1, v2: upgraded to 3)
        self._upgrade = Upgrade(machine(self.header.algorithm)) if self.version in UPGRADED else None

    @classmethod
    def open(cls, path: str) -> Reader:
        return cls(open_to_read(path, "transcript"), path)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *_: object) -> None:
        self._f.close()

    def close(self) -> None:
        self._f.close()

    @property
    def size(self) -> int:
        """The file's length in bytes (what a progress display measures against)."""
        return os.fstat(self._f.fileno()).st_size

    def events(self) -> Iterator[Event]:
        """Every event, in order, each checked."""
        return self.events_from(self._events_start, 0)

    def events_from(self, offset: int, seq: int, nodes: Iterable[int] = ()) -> Iterator[Event]:
        """The events from the line at byte `offset` on, the first of them `seq`, in a
        file read whole before (a history reading a moment back): `nodes` are those that
        joined before that line, which this reader has not seen join."""
        self._nodes.update(nodes)
        for _, events in self.blocks_from(offset, seq):
            yield from events

    def blocks(self) -> Iterator[tuple[int, list[Event]]]:
        """Every event, in blocks of INDEX_BLOCK: (where the block's first line starts, its events)."""
        return self.blocks_from(self._events_start, 0)

    def blocks_from(self, offset: int, seq: int) -> Iterator[tuple[int, list[Event]]]:
        """The events from the line at byte `offset` on, the first of them `seq`, in
        blocks of INDEX_BLOCK lines, each with the offset of its first line."""
        # A replay reads a million lines: a block's lines are parsed as one JSON array
        # (a line that spoils it is then parsed alone, to say what is wrong with it),
        # and the checks run in one loop with everything local.
        self._f.seek(offset)
        readline, loads, by_kind, upgrade = self._f.readline, self._loads, self._decode.by_kind, self._upgrade
        checks = self._decode.checks
        sent = 0 if offset == self._events_start else None  # the next message id, when read from the start
        last_t = 0.0
        while True:
            lines, start = [], offset
            for _ in range(INDEX_BLOCK):
                line = readline(LINE_LIMIT + 1)
                if not line:
                    break
                if line[-1] != 10:  # b"\n": the file's last line, or one past the limit
                    self._n = seq + len(lines) + 2
                    if len(line) > LINE_LIMIT:
                        raise self._fail(f"longer than {LINE_LIMIT:,} bytes: not a transcript line")
                    self._cut = self._n
                lines.append(line)
                offset += len(line)
            if not lines:
                return
            try:
                raws = loads(b"[" + b",".join(lines) + b"]")
                if len(raws) != len(lines):  # a line held more than one value
                    raise ValueError
            except Exception:  # noqa: BLE001 - a bad line: each is parsed alone, in turn, to name it
                raws = None
            events = []
            append = events.append
            for k in range(len(lines)):
                raw = raws[k] if raws is not None else self._raw(lines[k], seq)
                try:
                    if type(raw) is not dict:
                        raise ValueError("expected a JSON object")
                    if upgrade is not None:
                        upgrade(raw)
                    kind = raw.get("kind")
                    decode = by_kind.get(kind) if type(kind) is str else None
                    if decode is None:
                        raise ValueError(f"field 'kind': unknown event kind {shown_json(kind)}")
                    event = decode(raw)
                    if event.seq != seq:
                        raise ValueError(f"field 'seq': expected {seq}, got {event.seq}")
                    if event.t < last_t:
                        raise ValueError(f"field 't': {event.t:g} is earlier than the line before ({last_t:g})")
                    check = checks.get(type(event))
                    if check is not None:
                        check(event)
                    if sent is not None and type(event) is SendEvent:
                        if event.id != sent:  # (a table of messages by id relies on it: ui/model.Messages)
                            raise ValueError(f"field 'id': expected {sent} (sends count their ids 0, 1, 2, ...), got {event.id}")
                        sent += 1
                except ValueError as e:
                    self._n = seq + 2  # the line's number: the header is line 1
                    raise self._fail(str(e)) from None
                seq, last_t = seq + 1, event.t
                append(event)
            yield start, events

    def _raw(self, line: bytes, seq: int) -> Any:
        self._n = seq + 2
        try:
            return self._loads(line)
        except Exception:  # noqa: BLE001 - _json says exactly what is wrong
            return self._json(line)

    def _line(self) -> bytes | None:
        line = self._f.readline(LINE_LIMIT + 1)
        if not line:
            return None
        self._n += 1
        if not line.endswith(b"\n"):
            if len(line) > LINE_LIMIT:
                raise self._fail(f"longer than {LINE_LIMIT:,} bytes: not a transcript line")
            self._cut = self._n
        return line

    def _json(self, line: bytes) -> dict[str, Any]:
        try:
            value = self._loads(line)
        except UnicodeDecodeError:
            raise self._fail("not UTF-8 text") from None
        except RecursionError:
            raise self._fail("nested too deeply") from None
        except (json.JSONDecodeError, orjson.JSONDecodeError, ValueError) as e:
            why = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
            raise self._fail(f"not valid JSON ({why})") from None
        if not isinstance(value, dict):
            raise self._fail("expected a JSON object")
        return value

    def _fail(self, problem: str) -> InputError:
        """The problem with the line just read, as one line naming the file and the line."""
        if self._cut == self._n:
            problem += " (the file ends mid-line: was the run killed?)"
        return InputError(f"{self.name} line {self._n}: {problem}")


def _loads_exact(line: bytes) -> Any:
    """json.loads, but NaN and Infinity are not numbers in JSON (json accepts them)."""
    return json.loads(line, parse_constant=_not_a_number)


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a number in JSON")


HEADER_FIELDS = ("format", "version", "algorithm", "nodes", "seed", "config", "ring", "faults", "parent", "workload",
                 "by_hand", "real", "scenario")
OPTIONAL_SETTINGS = ("coordinator_timeout", "settle")  # config fields that may be null
MAX_ID = 2**128  # ids are 1..N or 128-bit UUIDs


def parse_header(raw: dict[str, Any], where: str) -> Header:
    """A header's object read elsewhere than line 1 (a real node's trace has one at each
    start: real/traces.py), checked as line 1 is; a problem names `where`."""
    return _parse_header(raw, lambda problem: InputError(f"{where}: {problem}"))[0]


def _parse_header(raw: dict[str, Any], fail: Callable[[str], InputError]) -> tuple[Header, int]:
    """Line 1, every field checked by the command line's own rules: what a run could not
    have been started with is not re-created either (a header of 155,000 nodes is refused,
    not simulated)."""
    if raw.get("format") != FORMAT:
        raise fail(f"field 'format': expected {json.dumps(FORMAT)}, got {shown_json(raw.get('format'))}")
    version = raw.get("version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS[:-1])) + f" and {READABLE_VERSIONS[-1]}"
        raise fail(f"field 'version': this program reads versions {readable}, got {shown_json(version)}")
    for key in raw:
        if key not in HEADER_FIELDS:
            raise fail(f"field {shown_json(key)}: not a field of a transcript's header")
    algorithm = raw.get("algorithm")
    if type(algorithm) is not str or not known(algorithm):
        raise fail(f"field 'algorithm': unknown algorithm {shown_json(algorithm)} (known: {', '.join(ALGORITHMS)}, "
                   f"each alone or with a mutex: {', '.join(MUTEXES)}, as classic+central)")
    nodes = raw.get("nodes")
    if type(nodes) is not list or not nodes or any(type(i) is not int or not 0 < i < MAX_ID for i in nodes) \
            or len(set(nodes)) != len(nodes):
        raise fail(f"field 'nodes': expected a list of 1 to {MAX_NODES} distinct positive ids, got {shown_json(nodes)}")
    if len(nodes) > MAX_NODES:
        raise fail(f"field 'nodes': {len(nodes):,} nodes; a run has 1 to {MAX_NODES}")
    seed = raw.get("seed")
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise fail(f"field 'seed': expected a whole number from 0 to {MAX_SEED}, got {shown_json(seed)}")
    config = _config(raw.get("config"), fail)
    if "ring" in raw:
        config = replace(config, ring=_ring(raw["ring"], nodes, algorithm, fail))
    if "faults" in raw:
        config = replace(config, faults=_faults(raw["faults"], config, fail))
    if why := delay_refused(algorithm, config.delay_max):
        raise fail(f"field 'config.delay_max': {why}")
    workload = _workload(raw.get("workload"), fail) if machine(algorithm).mutex else None
    if workload is None and "workload" in raw:
        raise fail("field 'workload': only a run with a mutex has one")
    flags = {name: raw.get(name, False) for name in ("by_hand", "real")}
    for name, value in flags.items():
        if type(value) is not bool:
            raise fail(f"field '{name}': expected true or false, got {shown_json(value)}")
    return Header(algorithm, nodes, seed, config, _parent(raw.get("parent"), fail), workload=workload,
                  claim=_claim(raw.get("scenario"), fail), **flags), version


def _claim(value: object, fail: Callable[[str], InputError]) -> Claim | None:
    """The scenario a run was made from: {"file": NAME, "claim": TEXT}, or none."""
    if value is None:
        return None
    if type(value) is not dict or set(value) != {"file", "claim"} or any(type(v) is not str for v in value.values()):
        raise fail(f'field \'scenario\': expected {{"file": NAME, "claim": TEXT}}, got {shown_json(value)}')
    return Claim(value["file"], value["claim"])


def _workload(value: object, fail: Callable[[str], InputError]) -> Workload:
    """Who wants the critical section when: {"think": [A, B] or null, "hold": [A, B]}."""
    if type(value) is not dict or set(value) != {"think", "hold"}:
        raise fail(f'field \'workload\': expected {{"think": [A, B] or null, "hold": [A, B]}}, got {shown_json(value)}')
    spans = {}
    for key in ("think", "hold"):
        span = value[key]
        if span is None and key == "think":
            spans[key] = None
        elif type(span) is list and len(span) == 2 and all(type(v) in (int, float) and math.isfinite(v) for v in span):
            spans[key] = (float(span[0]), float(span[1]))
        else:
            raise fail(f"field 'workload.{key}': expected two numbers [A, B], got {shown_json(span)}")
    try:
        return Workload(**spans)
    except InputError as e:
        raise fail(f"field 'workload': {e}") from None


def _ring(value: object, nodes: list[int], algorithm: str, fail: Callable[[str], InputError]) -> tuple[int, ...]:
    """The order round the ring: every one of the header's nodes once."""
    if not machine(algorithm).on_a_ring:
        raise fail(f"field 'ring': {algorithm}'s nodes do not form a ring")
    if type(value) is not list or any(type(i) is not int for i in value) or sorted(value) != sorted(nodes):
        raise fail(f"field 'ring': expected the header's nodes, each once, in ring order, got {shown_json(value)}")
    return tuple(value)


def _config(value: object, fail: Callable[[str], InputError]) -> ClusterConfig:
    if type(value) is not dict:
        raise fail(f"field 'config': expected an object, got {shown_json(value)}")
    known = [name for name in ClusterConfig.__dataclass_fields__ if name not in ("ring", "faults")]  # (the header's own)
    for key, v in value.items():
        if key not in known:
            raise fail(f"field 'config.{key}': not a setting (settings: {', '.join(known)})")
        if not (v is None and key in OPTIONAL_SETTINGS) and (type(v) not in (int, float) or not math.isfinite(v)):
            raise fail(f"field 'config.{key}': expected a number, got {shown_json(v)}")
    try:
        return ClusterConfig(**value)
    except InputError as e:
        raise fail(f"field 'config': {e}") from None


def _faults(value: object, config: ClusterConfig, fail: Callable[[str], InputError]) -> Faults:
    """The assumptions broken on purpose, those turned: {"loss": P, "duplicate": P,
    "reorder": true, "drift": R}, each checked as its option is."""
    known = Faults.__dataclass_fields__
    if type(value) is not dict or not value:
        raise fail(f"field 'faults': expected an object of {', '.join(known)}, got {shown_json(value)}")
    for key, v in value.items():
        if key not in known:
            raise fail(f"field 'faults.{key}': not a fault (faults: {', '.join(known)})")
        kinds = (bool,) if key == "reorder" else (int, float)
        if type(v) not in kinds or (kinds != (bool,) and not math.isfinite(v)):
            raise fail(f"field 'faults.{key}': expected {'true or false' if key == 'reorder' else 'a number'}, "
                       f"got {shown_json(v)}")
    try:
        faults = Faults(**value)
    except InputError as e:
        raise fail(f"field 'faults': {e}") from None
    if faults.reorder and (why := reorder_refused(config.delay_min, config.delay_max)):
        raise fail(f"field 'faults.reorder': {why}")
    return faults


def _parent(value: object, fail: Callable[[str], InputError]) -> Parent | None:
    """A branch's parent: a file beside this one (a plain name), and the last event they share."""
    if value is None:
        return None
    if type(value) is not dict or set(value) != {"file", "seq"}:
        raise fail(f'field \'parent\': expected {{"file": NAME, "seq": N}}, got {shown_json(value)}')
    name, seq = value["file"], value["seq"]
    if type(name) is not str or not name or "/" in name or "\0" in name or name in (".", ".."):
        raise fail(f"field 'parent.file': expected the name of a file beside this one, got {shown_json(name)}")
    if type(seq) is not int or seq < 0:
        raise fail(f"field 'parent.seq': expected a whole number of 0 or more, got {shown_json(seq)}")
    return Parent(name, seq)
