"""A real node's trace, DIR/trace.jsonl: written by the node (`TraceWriter`), read and
checked line by line (`TraceFile`, `TraceReader`) before merge.py merges it.

The format is the transcript's own (record/codec.py), so one codec writes and checks
both. At each start the node writes a transcript header (record/transcript.py: its
algorithm, its members, seed and settings, "real": true); then each trace event of the
node's runner (core/runner.py: the simulation's events) as a transcript line whose `t`
is the wall time (Unix seconds) and which carries one field more, the node's Lamport
clock ("lamport"); a message's `id` is its number at its sender (unique with `src`). Two
lines are not events: a node stopped by a signal ends with {"t", "kind": "stop", "node",
"lamport"} (not a crash: a last stop is the end of the run), and one that takes a new T
from its cluster says so, {"t", "kind": "timeout", "node", "lamport", "value"} (the
cluster's log has the command).

What is not such a line is one line naming the file and the line (InputError), never
a traceback or a guess; a trace of an older bully-tui, whose lines were not transcript
lines, is refused as such. The only line left out is one a kill cut short: the last,
with no newline after it, in a trace whose node has stopped.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.config import ClusterConfig, InputError, WriteError, shown_json
from ..core.events import (
    CsEvent,
    DeliverEvent,
    DropEvent,
    DuplicateEvent,
    ElectionStartEvent,
    Event,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
)
from ..record.codec import EventDecoder, LineEncoder
from ..record.transcript import Header, header_line

TRACE_FILE = "trace.jsonl"
STOP, TIMEOUT = "stop", "timeout"  # the lines that are not events
STARTS = (StartEvent.kind, RecoverEvent.kind, JoinEvent.kind)  # what follows a header
NODE_KINDS = {cls.kind for cls in (SendEvent, DeliverEvent, DropEvent, DuplicateEvent, StateEvent, CsEvent, StartEvent,
                                   RecoverEvent, JoinEvent, LeaveEvent, TimerEvent, TimerSetEvent, TimerCancelEvent,
                                   ElectionStartEvent)}
OLDER = "a trace of an older bully-tui (its lines are not transcript lines)"


@dataclass(slots=True)
class Line:
    """One line of a node's trace (or of a cluster's log: merge.py), as the merge takes
    it: its wall time, the node that wrote it, its kind, the event (None: a stop, or the
    log's), the node's Lamport clock, and its place in the node's trace."""

    t: float
    node: int | None
    kind: str
    event: Event | None = None
    lamport: int = 0
    i: int = -1  # its place among its node's lines (-1: not a node's)
    log: int = -1  # its place in the cluster's log (-1: not the log's)
    unsaid: bool = False  # a crash nobody logged, inferred from a boot (merge.py)
    command: tuple[str, tuple] | None = None  # the log's command: (name, args)

    @property
    def message(self) -> tuple[int, int]:
        """A send's, delivery's or drop's message: (its sender, its number there)."""
        return self.event.src, self.event.id


def author(e: Event) -> int:
    """The node whose trace holds `e`: a message's sender for its send, its drop (a real
    link drops at the sender) and its copy, its receiver for its delivery."""
    kind = type(e)
    if kind is SendEvent or kind is DropEvent or kind is DuplicateEvent:
        return e.src
    if kind is DeliverEvent:
        return e.dst
    return e.node


# --- writing ------------------------------------------------------------------------------


class TraceWriter:
    """A node's trace, appended to and flushed line by line; each line also to every
    watcher (`bully-tui attach`). A full disk is one line (WriteError): the node stops
    rather than leave a hole in its trace."""

    def __init__(self, path: str, algorithm: str):
        self.path = path
        self.file = open_trace(path)
        self.encode = LineEncoder(algorithm, wall_times=True)
        self.watchers: list[Callable[[bytes], None]] = []

    def header(self, header: Header) -> None:
        self._write(header_line(header).decode())

    def event(self, e: Event, lamport: int) -> None:
        line = self.encode(e)
        self._write(f'{line[:-2]},"lamport":{lamport}}}\n')

    def stop(self, t: float, node: int, lamport: int) -> None:
        self._write(json.dumps({"t": t, "kind": STOP, "node": node, "lamport": lamport}, separators=(",", ":")) + "\n")

    def timeout(self, t: float, node: int, lamport: int, value: float) -> None:
        self._write(json.dumps({"t": t, "kind": TIMEOUT, "value": value, "node": node, "lamport": lamport},
                               separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.file.close()

    def _write(self, line: str) -> None:
        try:
            self.file.write(line)
        except OSError as e:
            raise WriteError(f"cannot write {self.path}: {e.strerror or e}") from None
        for watcher in self.watchers:
            watcher(line.encode())


def open_trace(path: str):
    """The trace, to append to (a line a kill cut short cut off first); or one line. A
    trace of an older bully-tui is refused: lines of two formats could not be merged."""
    try:
        _cut_partial_line(path)
        with open(path, "ab+") as f:
            f.seek(0)
            first = f.readline()
        if first and not first.startswith(b'{"format":'):
            raise InputError(f"{path} is {OLDER}, or no trace at all: move it away")
        return open(path, "a", buffering=1)  # (closed by the node)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None


def _cut_partial_line(path: str) -> None:
    """A last line that a kill cut short (no newline after it) is cut off the trace, so
    that the next run's first line starts a line of its own, not a line of garbage. What
    is not a file there (a FIFO, a folder) is refused (InputError): it is not a trace."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise InputError(f"{path} is not a file: a node's trace goes there (move it away)")
        f = open(path, "r+b")  # (closed below)
    except FileNotFoundError:
        return
    with f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - 65536)  # (a line is far shorter)
        f.seek(start)
        tail = f.read()
        if tail and not tail.endswith(b"\n"):
            end = tail.rfind(b"\n")
            if end >= 0 or start == 0:
                f.truncate(start + end + 1)


# --- reading ------------------------------------------------------------------------------


class _AnyNode:
    """Every id a node may have: the codec checks a line's nodes against the header's, and
    a trace names nodes that joined after its node started (merge.py checks them
    against the run's)."""

    def __contains__(self, node: object) -> bool:
        return type(node) is int and node >= 0

    def add(self, node: int) -> None:
        pass


class TraceReader:
    """One node's trace, a line at a time (a file's, or what a node sends a watcher):
    each header (its settings, `headers`), and each other line as a Line, checked."""

    def __init__(self) -> None:
        self.headers: list[Header] = []
        self.node: int | None = None
        self._decoder: EventDecoder | None = None
        self._starting = False  # a header was read: a start, recovery or join comes next

    def line(self, raw: object, where: str) -> Line | None:
        """The Line `raw` is (None: a header); or InputError naming `where`. (`raw` is the
        caller's no more: its "lamport" is taken out.)"""
        if not isinstance(raw, dict):
            raise InputError(f"{where}: not a node's trace line ({shown_json(raw, 60)})")
        if "format" in raw:
            self._header(raw, where)
            return None
        if self._decoder is None:
            if "kind" in raw and "lamport" in raw and "node" in raw:
                raise InputError(f"{where}: {OLDER}: this one reads only the traces it writes; run the nodes again")
            raise InputError(f"{where}: not a node's trace (its first line is no transcript header)")
        lamport = raw.pop("lamport", None)
        if type(lamport) is not int or lamport < 0:
            raise InputError(f"{where}: field 'lamport': expected a whole number, got {shown_json(lamport)}")
        kind = raw.get("kind")
        if kind in (STOP, TIMEOUT):
            return self._mark(raw, lamport, where)
        if kind not in NODE_KINDS:
            raise InputError(f"{where}: not a node's trace line (kind {shown_json(kind)})")
        try:
            e = self._decoder.by_kind[kind](raw)
            if check := self._decoder.checks.get(type(e)):
                check(e)
        except ValueError as error:
            raise InputError(f"{where}: {error}") from None
        if self._starting != (kind in STARTS):
            raise InputError(f"{where}: a {kind} line {'after' if self._starting else 'without'} a header: a node "
                             f"writes a header, then its start, recovery or join")
        self._starting = False
        return Line(e.t, self._own(author(e), where), kind, e, lamport)

    def _header(self, raw: dict, where: str) -> None:
        from ..record.reader import parse_header  # (here: a node only writes its trace, and runs no reader)

        header = parse_header(raw, where)
        if not header.real:
            raise InputError(f"{where}: a transcript's header, not a real node's (no \"real\": true)")
        if self.headers and header.algorithm != self.headers[0].algorithm:
            raise InputError(f"{where}: the node ran {header.algorithm} here and {self.headers[0].algorithm} before")
        if self._decoder is None:
            self._decoder = EventDecoder(header.algorithm, _AnyNode())
        self.headers.append(header)
        self._starting = True

    def _mark(self, raw: dict, lamport: int, where: str) -> Line:
        """A stop or a new T."""
        t, node, kind, value = raw.get("t"), raw.get("node"), raw["kind"], raw.get("value")
        if set(raw) != {"t", "kind", "node", *(["value"] if kind == TIMEOUT else [])} or not _number(t) \
                or not 0 <= t <= 1e12 or type(node) is not int or (kind == TIMEOUT and not (_number(value) and value > 0)):
            raise InputError(f"{where}: not a node's {kind} line ({shown_json(raw, 60)})")
        if self._starting:
            raise InputError(f"{where}: a {kind} line after a header: a node writes a header, then its start, "
                             f"recovery or join")
        return Line(t, self._own(node, where), kind, None, lamport)

    def _own(self, node: int, where: str) -> int:
        if self.node is None:
            self.node = node
        elif node != self.node:
            raise InputError(f"{where}: a line of node {node} in node {self.node}'s trace")
        return node


def _number(v: object) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def stranger(line: Line, ids: Iterable[int]) -> str | None:
    """What is wrong if `line` names a node that is not one of `ids` (a line of another
    run, or edited by hand); None if it names only nodes of the run."""
    e = line.event
    for name in ("node", "src", "dst", "leader"):
        node = getattr(e, name, None) if e is not None else (line.node if name == "node" else None)
        if node is not None and node not in ids:
            return f"field {name!r} of a {line.kind} line names node {node}, not one of the nodes " \
                   f"({', '.join(map(str, sorted(ids)))})"
    return None


def read_trace(path: str) -> list[Line]:
    """A node's trace, every line checked; a last line cut short by a kill is left out.
    Anything else that is not a line a node writes: one line naming it (InputError)."""
    return TraceFile(path).read(final=True)


class TraceFile:
    """A node's trace file read as it grows: each read takes only the lines written since
    the last (what a live view needs: the file itself only grows)."""

    def __init__(self, path: str):
        self.path = path
        self.reader = TraceReader()
        self.lines: list[Line] = []  # every line read so far but the headers, checked
        self.numbers: list[int] = []  # each one's line number in the file
        self.cut_short: int | None = None  # the number of a last line left out (final): a kill cut it short
        self._offset = 0  # bytes read so far: whole lines only
        self._number = 0  # lines read so far (blank ones too), for the line number of an error

    @property
    def headers(self) -> list[Header]:
        return self.reader.headers

    def read(self, final: bool = False) -> list[Line]:
        """The lines so far. `final`: the node has stopped, so a last line without its
        newline was cut short by a kill, and is left out if it is not whole JSON."""
        import orjson  # (here: a node only writes its trace, and a cluster reads many)

        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return self.lines
        except OSError as e:
            raise InputError(f"cannot read {self.path}: {e.strerror or e}") from None
        whole = data if final else data[:data.rfind(b"\n") + 1]  # (a line being written waits for its newline)
        self._offset += len(whole)
        pieces = whole.split(b"\n")
        for last, text in enumerate(pieces, 1 - len(pieces)):
            self._number += 1
            if not text.strip():
                continue
            where = f"{self.path} line {self._number}"
            try:
                raw = orjson.loads(text)  # (ids are at most 2^63 - 1: orjson reads them; NaN is no JSON to it either)
            except (ValueError, RecursionError):
                if last == 0:  # (the piece after the last newline: only `final` reads it)
                    self.cut_short = self._number
                    continue
                raise InputError(f"{where}: not JSON") from None
            line = self.reader.line(raw, where)
            if line is not None:
                line.i = len(self.lines)
                self.lines.append(line)
                self.numbers.append(self._number)
        self._number -= 1  # (the piece after the last newline is not a line yet)
        return self.lines


@dataclass
class HandRun:
    """Nodes run by hand, as their traces tell (read_traces)."""

    algorithm: str
    ids: tuple[int, ...]
    config: ClusterConfig
    traces: dict[int, list[Line]]  # each node's lines
    files: dict[int, str]  # each node's trace file
    cut_short: list[str]  # the traces whose last line a kill cut short (left out), "FILE line N"


def read_traces(folders: list[str]) -> HandRun:
    """Nodes run by hand (`bully-tui node`, perhaps on several machines): the algorithm,
    ids and settings their traces' headers give, and each node's trace. Bad input (a
    folder without a trace, nodes that disagree, a line that names a node of no trace)
    is one line."""
    read: dict[int, TraceFile] = {}
    for folder in folders:
        trace = TraceFile(os.path.join(folder, TRACE_FILE))
        trace.read(final=True)
        node = trace.reader.node
        if node is None:
            raise InputError(f"{folder}: no node's trace in it ({TRACE_FILE} with a header and a start)")
        if node in read:
            raise InputError(f"{folder}: node {node} again (also in {os.path.dirname(read[node].path)})")
        read[node] = trace
    algorithm, ids, config = settings({node: trace.headers for node, trace in read.items()}, "give every node's folder")
    for trace in read.values():
        for line, number in zip(trace.lines, trace.numbers, strict=True):
            if why := stranger(line, ids):
                raise InputError(f"{trace.path} line {number}: {why}")
    return HandRun(algorithm, ids, config, {node: trace.lines for node, trace in read.items()},
                   {node: trace.path for node, trace in read.items()},
                   [f"{trace.path} line {trace.cut_short}" for trace in read.values() if trace.cut_short is not None])


def settings(headers: dict[int, list[Header]], missing_hint: str) -> tuple[str, tuple[int, ...], ClusterConfig]:
    """The algorithm, ids and settings the nodes' first headers agree on; one line where
    they do not, or where a node's trace is missing."""
    firsts = {}
    for node, each in headers.items():
        if not each:
            raise InputError(f"node {node}'s trace has no header: it is not a node's trace from its start")
        firsts[node] = each[0]
    (node, first), *others = firsts.items()
    for other, header in others:
        for key, value, mine in (("algorithm", header.algorithm, first.algorithm), ("ids", header.nodes, first.nodes),
                                 ("timeout", header.config.timeout, first.config.timeout),
                                 ("probe_interval", header.config.probe_interval, first.config.probe_interval)):
            if value != mine:
                raise InputError(f"node {other} and node {node} ran with different {key.replace('_', ' ')}: "
                                 f"{value} and {mine}")
    ids = tuple(first.nodes)
    if set(headers) != set(ids):
        missing = sorted(set(ids) - set(headers))
        raise InputError(f"the traces of nodes {', '.join(map(str, missing))} are missing ({missing_hint})")
    c = first.config
    return first.algorithm, ids, ClusterConfig(c.timeout, c.coordinator_timeout, c.probe_interval, 0.0, c.delay_max)
