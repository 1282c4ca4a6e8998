"""Transcripts, format v3: JSON Lines, a header then one trace event per line.

Line 1: {"format": "bully-transcript", "version": 3, "algorithm", "nodes", "seed", "config"}.
Later lines: {"seq", "t", "kind", ...fields}; `msg` is {"type": <message name>, ...}.

Versions: v2 added the cluster epoch (on messages and state events) and `violation`
events; v3 gives each state its role (instead of a `normal` flag), gives violations
their structure (nodes and whom each followed; the text is made from it) and adds the
monitor's `agreement` events. Older transcripts still load: their lines are upgraded as
they are read (epochs 0, roles from the algorithm's declaration).
Both unions (events by "kind", messages by "type") go through cattrs' tagged-union
strategy. Messages get one codec per algorithm, since two algorithms may share a
message name (Garcia-Molina's and Stoller's Halt) with different fields.

Writing streams: each batch of events is one write, flushed, so a killed run loses at
most what it was in the middle of. Loading checks everything and reports the first
problem as one line naming the file, the line and the field.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from functools import cache
from itertools import accumulate
from types import UnionType
from typing import Any, BinaryIO, Union, get_args, get_origin, get_type_hints

import cattrs
import orjson
from cattrs.strategies import configure_tagged_union

from protocol import ALGORITHMS, Message, StatusRole

from ..core.commands import Join as JoinCommand
from ..core.commands import check_words
from ..core.config import (  # (WriteError: the recorder raises it; importers find it here too)
    INSTANT,
    MAX_NODES,
    MAX_SEED,
    ClusterConfig,
    InputError,
    WriteError,
    shown_json,
)
from ..core.events import (
    EVENT_TYPES,
    CommandEvent,
    DeliverEvent,
    DropEvent,
    Event,
    SendEvent,
    StateEvent,
    TimerCancelEvent,
    TimerEvent,
    TimerSetEvent,
    ViolationEvent,
)
from ..core.host import DOWN_STATUS, DROPPED_RECEIVER_DOWN, DROPPED_RECEIVER_LEFT, LEFT_STATUS
from ..core.monitor import PROPERTY_NAMES, SLE2
from . import guard
from .files import check_new, open_to_read, open_to_write

FORMAT = "bully-transcript"
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)

AnyEvent = Union[EVENT_TYPES]  # noqa: UP007 - built from a tuple at run time
EVENT_KINDS = {cls.kind: cls for cls in EVENT_TYPES}
NODE_FIELDS = ("node", "src", "dst", "leader", "nodes", "leaders", "expected")  # ids, one or a tuple
TIME_FIELDS = ("t", "arrives", "fires", "duration", "since")
LATEST = INSTANT.high * 2  # no time in a run comes near it: a moment is at most INSTANT.high, a timer or a delay adds 1e6 s
ROLES = tuple(role.value for role in StatusRole)
DROP_REASONS = (DROPPED_RECEIVER_DOWN, DROPPED_RECEIVER_LEFT)
PHASES = ("begin", "end")
SOURCE = re.compile(r"[a-z]{1,20}")  # where a command came from: scenario, at, user



@dataclass(frozen=True, slots=True)
class Parent:
    """A branch's parent transcript (a file beside it) and the last event they share."""

    file: str
    seq: int


@dataclass(frozen=True, slots=True)
class Header:
    algorithm: str
    nodes: list[int]
    seed: int
    config: ClusterConfig
    parent: Parent | None = None  # a branch's: where it left its parent
    format: str = FORMAT
    version: int = VERSION


@dataclass(slots=True)
class Transcript:
    header: Header
    events: list[Event] = field(default_factory=list)


# --- the codec ----------------------------------------------------------------------


def _strict(kind: type, *also: type, name: str | None = None) -> Any:
    """JSON scalars are taken as they are: "3" is not an int, true is not a number.
    Accepted values keep their own type, so a transcript loads and dumps back unchanged."""
    accepted = (kind, *also)
    name = name or kind.__name__

    def structure(value: object, _: object) -> object:
        if isinstance(value, bool) and kind is not bool or not isinstance(value, accepted):
            raise ValueError(f"expected {name}, got {json.dumps(value)}")
        return value

    return structure


@cache
def converter(algorithm: str) -> cattrs.Converter:
    """The codec for one algorithm's transcripts."""
    conv = cattrs.Converter(forbid_extra_keys=True)  # a field no message has is refused, not dropped
    conv.register_structure_hook(int, _strict(int))
    conv.register_structure_hook(float, _strict(float, int, name="number"))
    conv.register_structure_hook(str, _strict(str, name="string"))
    conv.register_structure_hook(bool, _strict(bool, name="true or false"))
    conv.register_structure_hook(int | float, _strict(float, int, name="number"))

    messages = ALGORITHMS[algorithm].wire_messages()
    by_type = {cls.type: cls for cls in messages}
    if len(messages) > 1:
        any_message = Union[messages]  # noqa: UP007
        configure_tagged_union(any_message, conv, tag_name="type", tag_generator=lambda cls: cls.type)
        unstructure_message = conv.get_unstructure_hook(any_message)
        structure_message = conv.get_structure_hook(any_message)
    else:  # one message type is no union: tag it by hand
        (any_message,) = messages
        unstructure_one, structure_one = conv.get_unstructure_hook(any_message), conv.get_structure_hook(any_message)

        def unstructure_message(msg: Message) -> dict[str, Any]:
            return {"type": msg.type, **unstructure_one(msg)}

        def structure_message(value: dict[str, Any], cls: type) -> Message:
            return structure_one({k: v for k, v in value.items() if k != "type"}, cls)

    def structure_msg(value: object, _: object) -> Message:
        kind = value.get("type") if isinstance(value, dict) else None
        if type(kind) is not str or kind not in by_type:
            raise ValueError(f"unknown {algorithm} message type {shown_json(kind)}")
        return structure_message(value, any_message)

    conv.register_unstructure_hook(Message, unstructure_message)
    conv.register_structure_hook(Message, structure_msg)
    configure_tagged_union(AnyEvent, conv, tag_name="kind", tag_generator=lambda cls: cls.kind)
    return conv


def wide(nodes: list[int]) -> bool:
    """UUID ids (`--ids uuid`) are 128-bit; orjson handles only 64-bit integers."""
    return any(not -(2**63) <= i < 2**63 for i in nodes)


def _orjson_line(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)


def _json_line(value: object) -> bytes:
    return (json.dumps(value, separators=(",", ":")) + "\n").encode()


def header_line(header: Header) -> bytes:
    d = converter(header.algorithm).unstructure(header)
    keys = ("format", "version", "algorithm", "nodes", "seed", "config", *(("parent",) if header.parent else ()))
    return _json_line({key: d[key] for key in keys})


class LineEncoder:
    """Event -> one transcript line, for one algorithm's messages.

    A big run writes millions of lines, so the frequent kinds (sends, deliveries, drops,
    timers, state changes) are written field by field, a message's JSON is made once per
    message object (a broadcast hands the same object to every node), and the time of
    the last line is reused. The rest go through cattrs. Numbers are written by orjson,
    or by the json module for 128-bit ids, which orjson cannot write (README,
    "Dependencies"): the same text either way as the generic path would give."""

    def __init__(self, algorithm: str, wide_ids: bool = False):
        conv = converter(algorithm)
        self._unstructure_event = conv.get_unstructure_hook(AnyEvent)
        self._unstructure_message = conv.get_unstructure_hook(Message)
        self._dumps: Callable[[object], str] = (
            (lambda v: json.dumps(v, separators=(",", ":"))) if wide_ids else (lambda v: orjson.dumps(v).decode()))
        self._msg: Message | None = None
        self._msg_text = ""
        self._numbers: dict[object, str] = {}
        self.by_kind: dict[type, Callable[[Any], str]] = dict.fromkeys(EVENT_TYPES, self._generic)  # the line for each kind
        self.by_kind.update({
            SendEvent: self._send, DeliverEvent: self._deliver, DropEvent: self._drop, StateEvent: self._state,
            TimerEvent: self._timer, TimerSetEvent: self._timer_set, TimerCancelEvent: self._timer_cancel,
        })

    def __call__(self, e: Event) -> str:
        return self.by_kind[type(e)](e)

    def _generic(self, e: Event) -> str:
        d = self._unstructure_event(e)
        # seq, t and kind first (the later **d keeps their places): people scan for them.
        return self._dumps({"seq": d["seq"], "t": d["t"], "kind": d["kind"], **d}) + "\n"

    def _n(self, value: float | str) -> str:
        """A float or a string, as JSON (cached: times and names repeat; never an int,
        which would share a cache slot with the float of the same value)."""
        text = self._numbers.get(value)
        if text is None:
            if len(self._numbers) > 4096:
                self._numbers.clear()
            text = self._numbers[value] = self._dumps(value)
        return text

    def _message(self, msg: Message) -> str:
        if msg is not self._msg:
            self._msg, self._msg_text = msg, self._dumps(self._unstructure_message(msg))
        return self._msg_text

    def _send(self, e: SendEvent) -> str:
        n = self._n
        return (f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"send","src":{e.src},"dst":{e.dst},"id":{e.id},'
                f'"msg":{self._message(e.msg)},"arrives":{n(e.arrives)}}}\n')

    def _deliver(self, e: DeliverEvent) -> str:
        return f'{{"seq":{e.seq},"t":{self._n(e.t)},"kind":"deliver","id":{e.id},"src":{e.src},"dst":{e.dst}}}\n'

    def _drop(self, e: DropEvent) -> str:
        n = self._n
        return (f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"drop","id":{e.id},"src":{e.src},"dst":{e.dst},'
                f'"reason":{n(e.reason)}}}\n')

    def _state(self, e: StateEvent) -> str:
        n = self._n
        return (f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"state","node":{e.node},"status":{n(e.status)},'
                f'"leader":{"null" if e.leader is None else e.leader},"role":{n(e.role)},"epoch":{e.epoch}}}\n')

    def _timer(self, e: TimerEvent) -> str:
        n = self._n
        return f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"timer","node":{e.node},"name":{n(e.name)}}}\n'

    def _timer_set(self, e: TimerSetEvent) -> str:
        n = self._n
        return (f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"timer_set","node":{e.node},"name":{n(e.name)},'
                f'"fires":{n(e.fires)}}}\n')

    def _timer_cancel(self, e: TimerCancelEvent) -> str:
        n = self._n
        return f'{{"seq":{e.seq},"t":{n(e.t)},"kind":"timer_cancel","node":{e.node},"name":{n(e.name)}}}\n'


# --- writing ------------------------------------------------------------------------


class Recorder:
    """A trace observer that streams events to a transcript file, whole lines only.

    Each batch of events is written as it comes (a run killed midway leaves what it did
    on disk). The file is unbuffered and the recorder counts what reached it, so a write
    that fails (a full disk) or is cut short (Ctrl-C) is taken back to the last whole
    line, when it happens or at `close`."""

    CHUNK = 4096  # lines joined into one write: fewer calls, and a bounded join

    def __init__(self, out: BinaryIO, header: Header, name: str = "transcript", *, resume: bool = False):
        """`resume`: `out` already holds a header and whole lines (a branch, its parent's
        beginning copied in), and the recording goes on after them."""
        self._out = out
        self._name = name
        self._guarded = False  # the guardian keeps the file whole if we are killed
        self._line = LineEncoder(header.algorithm, wide(header.nodes))
        self.index: array | None = None  # where every INDEX_BLOCKth event's line starts, if wanted
        if resume:
            self._whole = out.seek(0, io.SEEK_END)  # bytes of whole lines on disk
        else:
            self._whole = 0
            self._write(header_line(header))

    @classmethod
    def create(cls, path: str, header: Header, overwrite: bool = False) -> Recorder:
        """A recorder writing a new file (an InputError if the path will not do)."""
        check_new(path, "transcript", overwrite)
        guard.start()
        return cls(open_to_write(path, "transcript", overwrite), header, path).guarded()

    @classmethod
    def resume(cls, path: str, header: Header) -> Recorder:
        """A recorder going on with the file at `path`, which already holds a header and
        whole lines (a branch, its parent's beginning copied in)."""
        return cls(open(path, "r+b", buffering=0), header, path, resume=True).guarded()

    def guarded(self) -> Recorder:
        """Have the guardian cut the file back to its last whole line if the process is
        killed while it writes (guard.py); `close` tells it all is well."""
        guard.keep_whole(self._name)
        self._guarded = True
        return self

    def __call__(self, events: list[Event]) -> None:
        by_kind = self._line.by_kind
        for start in range(0, len(events), self.CHUNK):
            chunk = events[start:start + self.CHUNK]
            lines = [by_kind[type(e)](e) for e in chunk]
            text = "".join(lines)
            if self.index is not None:
                self._note(chunk, lines, text.isascii())
            self._write(text.encode())

    def _note(self, chunk: list[Event], lines: list[str], ascii_only: bool) -> None:
        """Note where the lines of every INDEX_BLOCKth event will start."""
        first = -chunk[0].seq % INDEX_BLOCK
        if first >= len(chunk):
            return
        sizes = accumulate((len(line) if ascii_only else len(line.encode()) for line in lines), initial=self._whole)
        for i, offset in enumerate(sizes):
            if i >= first and (i - first) % INDEX_BLOCK == 0 and i < len(chunk):
                self.index.append(offset)

    def _write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[self._out.write(view):]  # an unbuffered file may take less than all
        except OSError as e:
            self._trim()
            raise WriteError(f"cannot write transcript {self._name}: {e.strerror or e}") from None
        self._whole += len(data)

    def _trim(self) -> None:
        try:
            self._out.truncate(self._whole)
        except OSError:
            pass  # nothing more can be done: the error being reported says why

    def close(self) -> None:
        """Take back a write cut short, and close the file."""
        if self._out.tell() != self._whole:
            self._trim()
        self._out.close()
        if self._guarded:
            guard.done(guard.WHOLE, self._name)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def dump(transcript: Transcript) -> bytes:
    """A whole transcript, exactly as a Recorder writes it."""
    line = LineEncoder(transcript.header.algorithm, wide(transcript.header.nodes))
    return header_line(transcript.header) + "".join(map(line, transcript.events)).encode()


# --- loading ------------------------------------------------------------------------


LINE_LIMIT = 1_000_000  # bytes in one line: a thousand times any event's
INDEX_BLOCK = 512  # a recorder with an index notes where every 512th event's line starts


def load(path: str) -> Transcript:
    """Read and check a whole transcript; any problem raises InputError, one line."""
    with Reader.open(path) as reader:
        return Transcript(reader.header, list(reader.events()))


def parse(data: bytes, name: str = "transcript") -> Transcript:
    """The same, from bytes in memory."""
    reader = Reader(io.BytesIO(data), name)
    return Transcript(reader.header, list(reader.events()))


class EventDecoder:
    """A transcript line's JSON object -> its event, every field checked (its type, a
    time finite, a node one of `nodes`), for one algorithm's messages: the mirror of
    LineEncoder.

    A replay reads a million lines, so each kind gets a decoding function of its own,
    generated once from its dataclass's fields (what cattrs does, without the tagged
    union's detour), and a message is structured (by cattrs, checked) once per distinct
    message: a broadcast's copies are alike. JSON scalars are taken as they are: "3" is
    not an int, true is not a number; a field the event does not have is refused. Then
    the kinds whose values have rules of their own are checked by them (`checks`): a
    state's status and role are ones its algorithm declares, a command is one the
    command line could have given (commands.check_words), a violation one the monitor
    could have reported. A problem raises ValueError("field 'x': ...")."""

    def __init__(self, algorithm: str, nodes: set[int]):
        self._converter = converter(algorithm)
        self._messages: dict[tuple, Message] = {}
        self._nodes = nodes  # the header's, and each node that joins, from its join on
        self._statuses = {*ALGORITHMS[algorithm].statuses, DOWN_STATUS, LEFT_STATUS}
        self.by_kind = {cls.kind: _generate_decoder(cls, self._message, nodes) for cls in EVENT_TYPES}  # kind -> decoder
        self.checks: dict[type, Callable[[Any], None]] = {
            StateEvent: self._state, DropEvent: self._drop, CommandEvent: self._command, ViolationEvent: self._violation}

    def _state(self, e: StateEvent) -> None:
        if e.role not in ROLES:
            raise ValueError(f"field 'role': expected one of {', '.join(ROLES)}, got {shown_json(e.role)}")
        if e.status not in self._statuses:
            raise ValueError(f"field 'status': not a status of this algorithm: {shown_json(e.status)}")

    def _drop(self, e: DropEvent) -> None:
        if e.reason not in DROP_REASONS:
            raise ValueError(f"field 'reason': expected {' or '.join(map(json.dumps, DROP_REASONS))}, got {shown_json(e.reason)}")

    def _command(self, e: CommandEvent) -> None:
        command = check_words(e.command, e.args, self._nodes)
        if type(command) is JoinCommand:
            self._nodes.add(command.node)
        if not SOURCE.fullmatch(e.source):
            raise ValueError(f"field 'source': expected a word such as \"user\", got {shown_json(e.source)}")

    @staticmethod
    def _violation(e: ViolationEvent) -> None:
        if e.property not in PROPERTY_NAMES:
            raise ValueError(f"field 'property': expected one of {', '.join(PROPERTY_NAMES)}, got {shown_json(e.property)}")
        if e.phase not in PHASES or (e.property == SLE2 and e.phase != "begin"):
            raise ValueError(f"field 'phase': expected {' or '.join(PHASES)} (sle2 only begins), got {shown_json(e.phase)}")
        if len(e.leaders) != len(e.nodes):
            raise ValueError(f"field 'leaders': one for each of the {len(e.nodes)} nodes, got {len(e.leaders)}")
        if e.phase == "end" and e.duration is None:
            raise ValueError("field 'duration': an episode's end says how long it lasted")

    def _message(self, value: Any) -> Message:
        if type(value) is not dict:
            raise ValueError(f"field 'msg': expected an object, got {json.dumps(value)}")
        try:
            key = tuple(value.items())
            msg = self._messages.get(key)
        except TypeError:  # a field that is a list or an object: not worth a cache slot
            key, msg = None, None
        if msg is None:
            try:
                msg = self._converter.structure(value, Message)
            except cattrs.BaseValidationError as e:
                problem = _describe(e)
                where = problem.replace("field '", "field 'msg.", 1) if problem.startswith("field '") else f"field 'msg': {problem}"
                raise ValueError(where) from None
            except Exception as e:  # cattrs reports through several exception types
                raise ValueError(f"field 'msg': {e}") from None
            if key is not None:
                if len(self._messages) > 65_536:
                    self._messages.clear()
                self._messages[key] = msg
        return msg


# JSON types each Python field type accepts, for the generated decoders. bool is not an
# int here, though Python says it is; an int is a number.
_JSON_TYPES = {int: ("int", "int"), float: ("number", "int, float"), str: ("string", "str"), bool: ("true or false", "bool")}


def _generate_decoder(cls: type, message: Callable[[Any], Message], nodes: set[int]) -> Callable[[dict[str, Any]], Event]:
    """One straight-line function that checks and builds a `cls` from its JSON object,
    generated from the class's fields: per field, its JSON type, and if it holds a time
    or nodes, that the time is in range and the nodes are `nodes`; then that the object
    has no other field (counted: the required ones, `kind`, and the optional ones present)."""
    hints = get_type_hints(cls)
    names, lines = [], []
    count = "1"  # `kind`
    for f in fields(cls):
        var, hint = f"v_{f.name}", hints[f.name]
        names.append(var)
        if f.default is MISSING:  # a missing field fails its type check, which says it is missing
            lines.append(f"    {var} = raw.get({f.name!r}, missing)")
            count += " + 1"
        else:
            lines.append(f"    {var} = raw.get({f.name!r}, {f.default!r})")
            count += f" + ({f.name!r} in raw)"
        optional = get_origin(hint) in (Union, UnionType) and type(None) in get_args(hint)
        base = [a for a in get_args(hint) if a is not type(None)][0] if optional else hint
        none_ok = f"{var} is not None and " if optional else ""
        if base is Message:
            lines.append(f"    if {var} is missing: fail({f.name!r}, 'required field missing')")
            lines.append(f"    {var} = message({var})")
        elif base in _JSON_TYPES:
            name, types = _JSON_TYPES[base]
            test = f"type({var}) is not {types}" if "," not in types else f"type({var}) not in ({types})"
            lines.append(f"    if {none_ok}{test}: wrong({f.name!r}, {name!r}, {var})")
            if f.name in TIME_FIELDS:
                limit = INSTANT.high if f.name == "t" else LATEST
                lines.append(f"    if {none_ok}not 0 <= {var} <= {limit!r}: bad_time({f.name!r}, {var}, {limit!r})")
            if f.name in NODE_FIELDS:
                lines.append(f"    if {none_ok}{var} not in nodes: stranger({f.name!r}, {var})")
        elif get_origin(base) is tuple:  # tuple[X, ...], written as a JSON list
            item = get_args(base)[0]
            item_optional = get_origin(item) in (Union, UnionType) and type(None) in get_args(item)
            item_base = [a for a in get_args(item) if a is not type(None)][0] if item_optional else item
            name, types = _JSON_TYPES[float if item_base == int | float else item_base]  # a number
            item_none = "x is not None and " if item_optional else ""
            lines.append(f"    if type({var}) is not list: wrong({f.name!r}, 'a list', {var})")
            lines.append(f"    for x in {var}:")
            lines.append(f"        if {item_none}type(x) not in ({types},): wrong({f.name!r}, {name!r}, x)")
            if f.name in NODE_FIELDS:
                lines.append(f"        if {item_none}x not in nodes: stranger({f.name!r}, x)")
            lines.append(f"    {var} = tuple({var})")
        else:  # a field type this decoder does not know: say so when the class is new, not later
            raise TypeError(f"no decoder for field {f.name!r} of {cls.__name__}: {hint!r}")
    lines.append(f"    if len(raw) != {count}: unknown(raw, {cls.kind!r})")
    source = "def decode(raw):\n" + "\n".join(lines) + f"\n    return cls({', '.join(names)})\n"
    scope = {"cls": cls, "message": message, "nodes": nodes, "fail": _field_problem, "missing": _MISSING,
             "wrong": _wrong_type, "bad_time": _bad_time, "stranger": _not_a_node, "unknown": _unknown_field}
    exec(source, scope)  # noqa: S102 - generated from our own dataclasses' fields, nothing read
    return scope["decode"]


def _field_problem(name: str, problem: str) -> None:
    raise ValueError(f"field '{name}': {problem}")


_MISSING = object()  # a required field's value when the line has none


def _wrong_type(name: str, expected: str, value: Any) -> None:
    if value is _MISSING:
        _field_problem(name, "required field missing")
    raise ValueError(f"field '{name}': expected {expected}, got {json.dumps(value)}")


def _bad_time(name: str, value: float, limit: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"field '{name}': expected a finite number of seconds, got {value}")
    raise ValueError(f"field '{name}': {value:g} s is out of range (0 to {limit:,.0f} s)")


def _unknown_field(raw: dict[str, Any], kind: str) -> None:
    fields_of = {f.name for f in fields(EVENT_KINDS[kind])} | {"kind"}
    extra = next(k for k in raw if k not in fields_of)
    raise ValueError(f"field {shown_json(extra)}: not a field of a {kind} event")


def _not_a_node(name: str, value: int) -> None:
    raise ValueError(f"field '{name}': {value} is not one of the header's nodes")


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
        self._decode = EventDecoder(self.header.algorithm, self._nodes)
        self._upgrade = _Upgrade(ALGORITHMS[self.header.algorithm]) if self.version < VERSION else None

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


HEADER_FIELDS = ("format", "version", "algorithm", "nodes", "seed", "config", "parent")
OPTIONAL_SETTINGS = ("coordinator_timeout", "settle")  # config fields that may be null
MAX_ID = 2**128  # ids are 1..N or 128-bit UUIDs


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
    if type(algorithm) is not str or algorithm not in ALGORITHMS:
        raise fail(f"field 'algorithm': unknown algorithm {shown_json(algorithm)} (known: {', '.join(ALGORITHMS)})")
    nodes = raw.get("nodes")
    if type(nodes) is not list or not nodes or any(type(i) is not int or not 0 < i < MAX_ID for i in nodes) \
            or len(set(nodes)) != len(nodes):
        raise fail(f"field 'nodes': expected a list of 1 to {MAX_NODES} distinct positive ids, got {shown_json(nodes)}")
    if len(nodes) > MAX_NODES:
        raise fail(f"field 'nodes': {len(nodes):,} nodes; a run has 1 to {MAX_NODES}")
    seed = raw.get("seed")
    if type(seed) is not int or not 0 <= seed <= MAX_SEED:
        raise fail(f"field 'seed': expected a whole number from 0 to {MAX_SEED}, got {shown_json(seed)}")
    return Header(algorithm, nodes, seed, _config(raw.get("config"), fail), _parent(raw.get("parent"), fail)), version


def _config(value: object, fail: Callable[[str], InputError]) -> ClusterConfig:
    if type(value) is not dict:
        raise fail(f"field 'config': expected an object, got {shown_json(value)}")
    known = ClusterConfig.__dataclass_fields__
    for key, v in value.items():
        if key not in known:
            raise fail(f"field 'config.{key}': not a setting (settings: {', '.join(known)})")
        if not (v is None and key in OPTIONAL_SETTINGS) and (type(v) not in (int, float) or not math.isfinite(v)):
            raise fail(f"field 'config.{key}': expected a number, got {shown_json(v)}")
    try:
        return ClusterConfig(**value)
    except InputError as e:
        raise fail(f"field 'config': {e}") from None


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


class _Upgrade:
    """An older version's event line, as version 3 writes it (in place, line by line:
    a state's role depends on whether its node is up, which earlier lines say)."""

    def __init__(self, algorithm: type):
        self.statuses = algorithm.statuses
        self.up: set[object] = set()

    def __call__(self, raw: dict[str, Any]) -> None:
        kind, node = raw.get("kind"), raw.get("node")
        if type(node) is not int:
            node = None  # (the event's own check names a wrong one)
        if kind in ("start", "recover"):
            self.up.add(node)
        elif kind == "crash":
            self.up.discard(node)
        elif kind == "state" and "normal" in raw:
            normal = raw.pop("normal")
            status = raw.get("status")
            if normal is True:
                raw["role"] = "normal"
            elif node not in self.up:
                raw["role"] = "down"
            elif type(status) is str:
                raw["role"] = getattr(self.statuses.get(status), "value", "electing")
        elif kind == "violation" and "detail" in raw:
            raw.pop("detail")
            nodes = raw.get("nodes")
            raw["leaders"] = [None] * len(nodes) if isinstance(nodes, list) else nodes


def _describe(error: Exception) -> str:
    """cattrs' nested validation errors, as "field 'x.y': what is wrong" (the first one)."""
    if isinstance(error, cattrs.BaseValidationError):
        first = cattrs.transform_error(error, format_exception=_format_exception)[0]
        problem, _, path = first.rpartition(" @ ")
        where = path.removeprefix("$").removeprefix(".")
        return f"field '{where}': {problem}" if where else problem
    return str(error)


def _format_exception(exc: BaseException, _type: object) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"not a field of a {getattr(exc.cl, 'label', exc.cl.__name__)} message: {', '.join(sorted(exc.extra_fields))}"
    return str(exc) or type(exc).__name__
