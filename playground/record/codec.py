"""An event to its transcript line and back, both generated from the event's class.

Each event's class (core/events.py) is its wire format: its fields, in their order,
after "seq", "t" and "kind". `LineEncoder` and `EventDecoder` each generate, once per
kind, one straight-line function from those fields (a replay reads a million lines, a
big run writes millions), so the format is written in one place and the two cannot
drift apart. Messages go through cattrs (`converter`), once per distinct message.

A field added by a later version of the format (FIELDS_SINCE: "rule", version 4) is left
out of the lines of an older one, both ways: verify compares a version 3 transcript with
its re-run's lines written as version 3 wrote them, and a version 3 line has no rule.
A rule, where there is one, must be one its algorithm declares (its rule table).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, fields
from functools import cache
from types import CodeType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

import cattrs
from cattrs.strategies import configure_tagged_union

from protocol import CsState, Message, StatusRole, machine

from ..core.by_hand import DROPPED_BY_HAND
from ..core.commands import Join, SetDelay, WantCs, check_words, delay_refused
from ..core.config import INSTANT, shown_json
from ..core.events import EVENT_TYPES, CommandEvent, CsEvent, DropEvent, Event, StateEvent, ViolationEvent
from ..core.faults import LOST_ON_THE_LINK
from ..core.runner import DROPPED_RECEIVER_DOWN, DROPPED_RECEIVER_LEFT, HostStatus

EVENT_KINDS = {cls.kind: cls for cls in EVENT_TYPES}
NODE_FIELDS = ("node", "src", "dst", "leader", "nodes", "leaders", "expected")  # ids, one or a tuple
TIME_FIELDS = ("t", "arrives", "fires", "duration", "since")
LATEST = INSTANT.high * 2  # no time in a run comes near it: a moment is at most INSTANT.high, a timer or a delay adds 1e6 s
ROLES = {role.value: role for role in StatusRole}
DROP_REASONS = (DROPPED_RECEIVER_DOWN, DROPPED_RECEIVER_LEFT, LOST_ON_THE_LINK, DROPPED_BY_HAND)
PHASES = ("begin", "end")
SOURCE = re.compile(r"[a-z]{1,20}")  # where a command came from: scenario, at, user
FIELDS_SINCE = {"rule": 4}  # fields the format gained after version 3, with the version that added each


def _older(version: int | None) -> int | None:
    """`version` if its lines lack a field the newest has, else None (the newest: one
    compiled encoder and decoder per kind, whichever way the newest is named)."""
    return version if version is not None and any(since > version for since in FIELDS_SINCE.values()) else None


# --- messages ------------------------------------------------------------------------


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
    """One algorithm's messages to JSON and back (tagged by "type"), every field checked:
    cattrs' tagged-union strategy. One per algorithm, since two algorithms may share a
    message name (Garcia-Molina's and Stoller's Halt) with different fields."""
    conv = cattrs.Converter(forbid_extra_keys=True)  # a field no message has is refused, not dropped
    conv.register_structure_hook(int, _strict(int))
    conv.register_structure_hook(float, _strict(float, int, name="number"))
    conv.register_structure_hook(str, _strict(str, name="string"))
    conv.register_structure_hook(bool, _strict(bool, name="true or false"))
    conv.register_structure_hook(int | float, _strict(float, int, name="number"))

    messages = machine(algorithm).wire_messages()
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
    return conv


# --- an event to its line -------------------------------------------------------------


class LineEncoder:
    """Event -> one transcript line, for one algorithm's messages: the mirror of
    EventDecoder. A message's JSON is made once per message object (a broadcast hands
    the same object to every node), and floats and strings repeat, so their text is
    kept. Numbers are written by orjson, or by the json module for 128-bit ids, which
    orjson cannot write (README, "Dependencies"), and for a real node's trace
    (`wall_times`): the same values either way."""

    def __init__(self, algorithm: str, wide_ids: bool = False, version: int | None = None, wall_times: bool = False):
        """`version`: the format's lines as that version wrote them (None: the newest).
        `wall_times`: the lines' times are a clock's, each new (a real node's trace, a
        few lines a second): no text is kept, and the json module writes them. A node
        runs many to a machine, and orjson's library, with the datetime and uuid it
        imports, and a table of times that never come again are memory it has no use for."""
        self._unstructure_message = converter(algorithm).get_unstructure_hook(Message)
        if wide_ids or wall_times:
            self._dumps: Callable[[object], str] = lambda v: json.dumps(v, separators=(",", ":"))
        else:
            import orjson  # (here: see wall_times)

            self._dumps = lambda v: orjson.dumps(v).decode()
        self._msg: Message | None = None
        self._msg_text = ""
        self._numbers: dict[object, str] = {}
        number = self._dumps if wall_times else self._n
        self.by_kind: dict[type, Callable[[Any], str]] = {  # the line for each kind
            cls: _generate_encoder(cls, number, self._message, self._dumps, _older(version)) for cls in EVENT_TYPES}

    def __call__(self, e: Event) -> str:
        return self.by_kind[type(e)](e)

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


def _generate_encoder(cls: type, n: Callable, message: Callable, dumps: Callable,
                      version: int | None) -> Callable[[Event], str]:
    scope = {"n": n, "message": message, "dumps": dumps}
    exec(_encoder_code(cls, version), scope)  # noqa: S102 - generated from our own dataclasses' fields, nothing read
    return scope["encode"]


def _fields(cls: type, version: int | None) -> list:
    """`cls`'s fields as `version` of the format has them (None: the newest)."""
    return [f for f in fields(cls) if version is None or FIELDS_SINCE.get(f.name, 0) <= version]


@cache
def _encoder_code(cls: type, version: int | None = None) -> CodeType:
    """One f-string for a `cls`'s line, generated from the class's fields: "seq", "t",
    then "kind", then the rest in their order; each written as its type is. (Compiled
    once per class: a run's encoder is made in microseconds, not the 10 ms this takes.)"""
    parts = []
    for f in _fields(cls, version):
        value, (optional, base) = f"e.{f.name}", _unwrap(get_type_hints(cls)[f.name])
        if base is Message:
            text = f"{{message({value})}}"
        elif get_origin(base) is tuple:
            text = f"{{dumps(list({value}))}}"
        elif base is int:
            text = f'{{"null" if {value} is None else {value}}}' if optional else f"{{{value}}}"
        elif base is float or _is_str(base):  # (a str enum's text is its value)
            text = f'{{"null" if {value} is None else n({value})}}' if optional else f"{{n({value})}}"
        else:  # a field type this encoder does not know: say so when the class is new, not later
            raise TypeError(f"no encoder for field {f.name!r} of {cls.__name__}")
        parts.append(f'"{f.name}":{text}')
        if f.name == "t":
            parts.append(f'"kind":"{cls.kind}"')
    source = "def encode(e):\n    return f'{{" + ",".join(parts) + "}}\\n'\n"
    return compile(source, f"<encoder of {cls.__name__}>", "exec")


def _is_str(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, str)


def _unwrap(hint: Any) -> tuple[bool, Any]:
    """(whether None is allowed, the type without None)."""
    optional = get_origin(hint) in (Union, UnionType) and type(None) in get_args(hint)
    return optional, ([a for a in get_args(hint) if a is not type(None)][0] if optional else hint)


# --- a line back to its event ------------------------------------------------------------


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

    def __init__(self, algorithm: str, nodes: set[int], version: int | None = None):
        """`version`: the format's, whose lines have only the fields it had (None: the newest)."""
        self._converter = converter(algorithm)
        self._messages: dict[tuple, Message] = {}
        self._nodes = nodes  # the header's, and each node that joins, from its join on
        statuses = (*HostStatus, *machine(algorithm).statuses)
        self._names = {s.value: s for s in statuses}
        self._statuses = {(s.value, s.role): s for s in statuses}  # (a name may be both: Garcia-Molina's "down")
        rules = frozenset(machine(algorithm).rule_table())
        self.by_kind = {cls.kind: _generate_decoder(cls, self._message, nodes, rules, _older(version))  # kind -> decoder
                        for cls in EVENT_TYPES}
        self.checks: dict[type, Callable[[Any], None]] = {
            StateEvent: self._state, DropEvent: self._drop, CommandEvent: self._command, ViolationEvent: self._violation,
            CsEvent: self._cs}
        self._algorithm = algorithm
        self._mutex = machine(algorithm).mutex is not None

    def _state(self, e: StateEvent) -> None:
        """The line's status and role, as the members they name."""
        role = ROLES.get(e.role)
        if role is None:
            raise ValueError(f"field 'role': expected one of {', '.join(ROLES)}, got {shown_json(e.role)}")
        if e.status not in self._names:
            raise ValueError(f"field 'status': not a status of this algorithm: {shown_json(e.status)}")
        status = self._statuses.get((e.status, role))
        if status is None:
            raise ValueError(f"field 'role': status {shown_json(e.status)} is {self._names[e.status].role}, not {role}")
        e.status, e.role = status, role

    def _cs(self, e: CsEvent) -> None:
        if not self._mutex:
            raise ValueError("kind 'cs': only a run with a mutex has these")
        try:
            e.state = CsState(e.state)
        except ValueError:
            raise ValueError(f"field 'state': expected one of {', '.join(CsState)}, got {shown_json(e.state)}") from None

    def _drop(self, e: DropEvent) -> None:
        if e.reason not in DROP_REASONS:
            raise ValueError(f"field 'reason': expected one of {', '.join(map(json.dumps, DROP_REASONS))}, "
                             f"got {shown_json(e.reason)}")

    def _command(self, e: CommandEvent) -> None:
        command = check_words(e.command, e.args, self._nodes)
        if type(command) is Join:
            self._nodes.add(command.node)
        if type(command) is WantCs and not self._mutex:
            raise ValueError("field 'command': want asks for the critical section, and this run has no mutex")
        if type(command) is SetDelay and (why := delay_refused(self._algorithm, command.high)):
            raise ValueError(f"field 'args': {why}")
        if not SOURCE.fullmatch(e.source):
            raise ValueError(f"field 'source': expected a word such as \"user\", got {shown_json(e.source)}")

    @staticmethod
    def _violation(e: ViolationEvent) -> None:
        from ..core.monitor import ONCE, PROPERTY_NAMES  # (here: a real node writes no violation, and runs no monitor)

        if e.property not in PROPERTY_NAMES:
            raise ValueError(f"field 'property': expected one of {', '.join(PROPERTY_NAMES)}, got {shown_json(e.property)}")
        if e.phase not in PHASES or (e.property in ONCE and e.phase != "begin"):
            raise ValueError(f"field 'phase': expected {' or '.join(PHASES)} ({' and '.join(ONCE)} only begin), "
                             f"got {shown_json(e.phase)}")
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
_ITEM_TYPES = {int | float: _JSON_TYPES[float], int | float | str: ("number or string", "int, float, str")}  # a list's items


def _generate_decoder(cls: type, message: Callable[[Any], Message], nodes: set[int], rules: frozenset[str],
                      version: int | None) -> Callable[[dict[str, Any]], Event]:
    scope = {"cls": cls, "message": message, "nodes": nodes, "rules": rules, "fail": _field_problem,
             "missing": _MISSING, "wrong": _wrong_type, "bad_time": _bad_time, "stranger": _not_a_node,
             "unknown": _unknown_field, "no_rule": _not_a_rule}
    exec(_decoder_code(cls, version), scope)  # noqa: S102 - generated from our own dataclasses' fields, nothing read
    return scope["decode"]


@cache
def _decoder_code(cls: type, version: int | None = None) -> CodeType:
    """One straight-line function that checks and builds a `cls` from its JSON object,
    generated from the class's fields: per field, its JSON type, and if it holds a time
    or nodes, that the time is in range and the nodes are `nodes`; then that the object
    has no other field (counted: the required ones, `kind`, and the optional ones present)."""
    hints = get_type_hints(cls)
    names, lines = [], []
    count = "1"  # `kind`
    for f in _fields(cls, version):
        var, hint = f"v_{f.name}", hints[f.name]
        names.append(var)
        if f.default is MISSING:  # a missing field fails its type check, which says it is missing
            lines.append(f"    {var} = raw.get({f.name!r}, missing)")
            count += " + 1"
        else:
            lines.append(f"    {var} = raw.get({f.name!r}, {f.default!r})")
            count += f" + ({f.name!r} in raw)"
        optional, base = _unwrap(hint)
        none_ok = f"{var} is not None and " if optional else ""
        if base is Message:
            lines.append(f"    if {var} is missing: fail({f.name!r}, 'required field missing')")
            lines.append(f"    {var} = message({var})")
        elif base in _JSON_TYPES or _is_str(base):  # (a str enum is checked as a string here, by `checks` for its meaning)
            name, types = _JSON_TYPES[str if _is_str(base) else base]
            test = f"type({var}) is not {types}" if "," not in types else f"type({var}) not in ({types})"
            lines.append(f"    if {none_ok}{test}: wrong({f.name!r}, {name!r}, {var})")
            if f.name in TIME_FIELDS:
                limit = INSTANT.high if f.name == "t" else LATEST
                lines.append(f"    if {none_ok}not 0 <= {var} <= {limit!r}: bad_time({f.name!r}, {var}, {limit!r})")
            if f.name in NODE_FIELDS:
                lines.append(f"    if {none_ok}{var} not in nodes: stranger({f.name!r}, {var})")
            if f.name == "rule":
                lines.append(f"    if {none_ok}{var} not in rules: no_rule({var})")
        elif get_origin(base) is tuple:  # tuple[X, ...], written as a JSON list
            item = get_args(base)[0]
            item_optional = get_origin(item) in (Union, UnionType) and type(None) in get_args(item)
            item_base = [a for a in get_args(item) if a is not type(None)][0] if item_optional else item
            name, types = _ITEM_TYPES.get(item_base) or _JSON_TYPES[item_base]
            item_none = "x is not None and " if item_optional else ""
            lines.append(f"    if type({var}) is not list: wrong({f.name!r}, 'a list', {var})")
            lines.append(f"    for x in {var}:")
            lines.append(f"        if {item_none}type(x) not in ({types},): wrong({f.name!r}, {name!r}, x)")
            if f.name in NODE_FIELDS:
                lines.append(f"        if {item_none}x not in nodes: stranger({f.name!r}, x)")
            lines.append(f"    {var} = tuple({var})")
        else:  # a field type this decoder does not know: say so when the class is new, not later
            raise TypeError(f"no decoder for field {f.name!r} of {cls.__name__}: {hint!r}")
    lines.append(f"    if len(raw) != {count}: unknown(raw, {cls.kind!r}, {version!r})")
    source = "def decode(raw):\n" + "\n".join(lines) + f"\n    return cls({', '.join(names)})\n"
    return compile(source, f"<decoder of {cls.__name__}>", "exec")


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


def _unknown_field(raw: dict[str, Any], kind: str, version: int | None) -> None:
    fields_of = {f.name for f in _fields(EVENT_KINDS[kind], version)} | {"kind"}
    extra = next(k for k in raw if k not in fields_of)
    if extra in FIELDS_SINCE:
        raise ValueError(f"field {shown_json(extra)}: not a field of a {kind} event in a version {version} transcript "
                         f"(version {FIELDS_SINCE[extra]} added it)")
    raise ValueError(f"field {shown_json(extra)}: not a field of a {kind} event")


def _not_a_rule(value: str) -> None:
    raise ValueError(f"field 'rule': not a rule of this algorithm: {shown_json(value)}")


def _not_a_node(name: str, value: int) -> None:
    raise ValueError(f"field '{name}': {value} is not one of the header's nodes")


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
