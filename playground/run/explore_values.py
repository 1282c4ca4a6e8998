"""The values a state of the exhaustive search holds (explore_state.py): copied so that
what is immutable is shared, and made canonical for its key. Generic: a machine is any
algorithm's, with whatever variables it has.

Rules:
  1. Immutable, shared, never copied: numbers, strings, None, enum members, classes,
     functions and methods (the engine's), frozensets, tuples of those, frozen
     dataclasses, and what says a copy of it is itself (`__deepcopy__` returning it:
     messages, ids). Everything else is copied: containers (their items as this rule
     says), random generators (their state), objects (their attributes; an object met
     twice in one copy is copied once: a machine's safe storage is its host's).
  2. A host's parts that are the engine's (roster, algorithm, settings, workload) are
     shared, and its lists of what a step made (records, requests, pending timers) are
     new: they are empty between steps.
  3. Canonical: hashable, and equal wherever the content is: sets as frozensets, dicts
     as their items in their order (it can mean something: oldest first), sequences as
     tuples, objects as their class and attributes, but a machine's that are no part of
     its state (SKIP); a random generator is nothing (a draw to come is no part of a
     state: explore.py's rule on drawn timers); a way back to an object whose form is
     being made (a lock's machine holds the election's that holds it) is a mark.
  4. Fast where it runs for every step: how an object of a class is copied is found
     once (which attributes hold what must be copied) and checked each time at the
     speed of C (the others still hold immutable values), and the usual containers are
     copied inline.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import random
import sys
import types
from collections.abc import Iterable
from enum import Enum

from ..core.host import NodeHost

# A machine's variables that are no part of its state: its outbox and knobs, and which
# rule it applied last (why it did something, not what it is: two runs that reach one
# state by different rules are one state).
SKIP = frozenset({"_outbox", "config", "applying", "state_rule"})
_ATOMS = frozenset({int, str, float, bool, type(None), bytes})
_FUNCTIONS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.BuiltinMethodType)


# --- copies (rules 1, 2, 4) -------------------------------------------------------------------

_IMMUTABLE: set[type] = {*_ATOMS, frozenset}  # types whose values are shared, never copied (more found as met)
_KINDS: dict[type, str] = {}  # how a type is made canonical, by type (found once)
_COPIED = frozenset({"set", "dict", "sequence", "random", "other", "object"})
# A host's parts that are the engine's (shared, unchanged: rule 2) and its lists, empty
# between steps (new ones).
_HOST_PARTS = {**dict.fromkeys(("roster", "algorithm", "config", "workload"), "shared"),
               **dict.fromkeys(("records", "requests", "pending", "_local"), "emptied")}


def _kind(value: object) -> str:
    t = type(value)
    if t in _ATOMS:
        kind = "atom"
    elif issubclass(t, Enum):
        kind = "enum"
    elif issubclass(t, (type, *_FUNCTIONS)) or (hasattr(t, "__deepcopy__") and value.__deepcopy__({}) is value):
        kind = "shared"  # (a class; the engine's methods; what says a copy of it is itself: a message, ids)
    elif issubclass(t, random.Random):
        kind = "random"
    elif issubclass(t, (set, frozenset)):
        kind = "set"
    elif issubclass(t, dict):
        kind = "dict"
    elif issubclass(t, (list, tuple)):
        kind = "sequence"
    elif dataclasses.is_dataclass(t) and t.__dataclass_params__.frozen:
        kind = "frozen"
    elif t.__dictoffset__ or _slots(t) or hasattr(t, "__deepcopy__"):
        kind = "object"
    else:
        kind = "other"  # (copied and compared as the standard library does)
    _KINDS[t] = kind
    if kind not in _COPIED:
        _IMMUTABLE.add(t)
    return kind


def copy_of(value: object, memo: dict[int, object]) -> object:
    """A copy that shares what is immutable; an object met twice is copied once (`memo`:
    the machine's safe storage is its host's)."""
    t = type(value)
    if t in _IMMUTABLE:
        return value
    copier = _COPIERS.get(t)
    if copier is None:
        copier = _COPIERS[t] = _copier(value)
    return copier(value, memo)


def _copy_set(value: set, memo: dict[int, object]) -> set:
    return value.copy()  # (the members of a set are hashable: immutable)


def _copy_sequence(value: list | tuple, memo: dict[int, object]) -> list | tuple:
    if set(map(type, value)) <= _IMMUTABLE:
        return value.copy() if type(value) is list else value
    items = [copy_of(v, memo) for v in value]
    return items if type(value) is list else type(value)(items)


def _copy_dict(value: dict, memo: dict[int, object]) -> dict:
    t = type(value)
    if t is dict:
        twin = value.copy()
    else:
        twin = t.__new__(t)
        dict.update(twin, value)
    if not set(map(type, twin.values())) <= _IMMUTABLE:
        for k, v in twin.items():
            if type(v) not in _IMMUTABLE:
                twin[k] = copy_of(v, memo)
    return twin


def _copy_random(value: random.Random, memo: dict[int, object]) -> random.Random:
    twin = type(value).__new__(type(value))
    twin.setstate(value.getstate())
    return twin


def _copy_once(copier):
    """`copier`, for what may be met twice in one copy (rule 1: copied once)."""
    def once(value: object, memo: dict[int, object]) -> object:
        twin = memo.get(id(value))
        if twin is None:
            twin = memo[id(value)] = copier(value, memo)
        return twin
    return once


def _copier(value: object):
    kind = _KINDS.get(type(value)) or _kind(value)
    if kind == "set":
        return _copy_set if type(value) is not frozenset else _share
    if kind == "sequence":
        return _copy_sequence
    if kind == "dict":
        return _copy_once(_copy_dict)
    if kind == "random":
        return _copy_once(_copy_random)
    if kind == "other":
        return _copy_once(copy.deepcopy)
    if kind == "object":
        return _copy_once(type(value).__deepcopy__) if hasattr(type(value), "__deepcopy__") else copy_object
    return _share


def _share(value: object, memo: dict[int, object]) -> object:
    return value


_COPIERS: dict[type, object] = {}  # how a value of a type is copied, by type (found once)


class _Plan:
    """How to copy an object of one class, found the first time: which of its attributes
    may hold what must be copied (the others are left as they are, and a host's lists are
    new). It holds while the others still hold immutable values and the attributes are
    the same ones (checked each time, at the speed of C)."""

    __slots__ = ("copied", "emptied", "others", "size")

    def __init__(self, parts: dict[str, object], host: bool):
        special = _HOST_PARTS if host else {}
        for v in parts.values():
            if type(v) not in _KINDS:
                _kind(v)  # (so that what is immutable is known to be)
        self.copied = tuple(k for k, v in parts.items() if k not in special and type(v) not in _IMMUTABLE)
        self.emptied = tuple(k for k in parts if special.get(k) == "emptied")
        others = [k for k in parts if k not in self.copied and k not in special]
        self.others = operator.itemgetter(*others, *others[:1]) if others else (lambda parts: ())
        self.size = len(parts)


_PLANS: dict[type, _Plan] = {}


def copy_object(value: object, memo: dict[int, object]) -> object:
    """An object (by its attributes), as copy_of copies: a host's engine parts shared and
    its lists new (_HOST_PARTS)."""
    twin = memo.get(id(value))
    if twin is not None:
        return twin
    t = type(value)
    twin = memo[id(value)] = object.__new__(t)
    if t.__dictoffset__:
        parts = vars(value).copy()
        plan = _PLANS.get(t)
        try:
            valid = plan is not None and len(parts) == plan.size and set(map(type, plan.others(parts))) <= _IMMUTABLE
        except KeyError:
            valid = False
        if not valid:
            plan = _PLANS[t] = _Plan(parts, isinstance(value, NodeHost))
        immutable, copiers = _IMMUTABLE, _COPIERS
        for name in plan.copied:  # (the usual cases inline: this runs for every step)
            v = parts[name]
            kind = type(v)
            if kind is set:
                parts[name] = v.copy()
            elif kind not in immutable:
                copier = copiers.get(kind)
                parts[name] = (copier or copy_of)(v, memo)
        for name in plan.emptied:
            parts[name] = []
        twin.__dict__ = parts
    for name in _slots(t):
        part = getattr(value, name, _ABSENT)
        if part is not _ABSENT:
            object.__setattr__(twin, name, part if type(part) in _IMMUTABLE else copy_of(part, memo))
    return twin


_ABSENT = object()
_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(t: type) -> tuple[str, ...]:
    names = _SLOTS.get(t)
    if names is None:
        names = _SLOTS[t] = tuple(name for klass in t.__mro__ for name in getattr(klass, "__slots__", ())
                                  if name not in ("__dict__", "__weakref__"))
    return names


# --- canonical forms (rule 3) ------------------------------------------------------------------


def canonical(value: object) -> object:
    """A value's content, hashable and equal wherever the content is (rule 3)."""
    t = type(value)
    if t in _IMMUTABLE:
        return value  # (an atom, a member, a class, a message, ids: itself)
    if t is set:
        return frozenset(value) if set(map(type, value)) <= _IMMUTABLE else frozenset(map(canonical, value))
    kind = _KINDS.get(t) or _kind(value)
    if kind == "sequence":
        if set(map(type, value)) <= _IMMUTABLE:
            return value if t is tuple else tuple(value)
        return tuple(map(canonical, value))
    if kind == "set":
        return frozenset(map(canonical, value))
    if kind == "dict":
        return tuple((canonical(k), canonical(v)) for k, v in value.items())
    if kind == "frozen":
        return (t, tuple(canonical(getattr(value, f)) for f in _fields(t)))
    if kind == "random":
        return None  # (a draw to come is no part of a state: explore.py's rule on drawn timers)
    if kind == "other":
        return repr(value)
    if kind in _COPIED:
        return canonical_object(value)
    return value


class _Form:
    """An object's canonical form, for its class and attributes (but SKIP's, whose names
    it keeps sorted): one per class and set of names, so that the form itself stands
    for them in a canonical tuple (it hashes and compares as itself)."""

    __slots__ = ("get", "key", "names", "size")

    def __init__(self, key: object, names: tuple[str, ...], size: int, slots: bool):
        self.key = key  # (in _FORMS: the class with slots, or the class and its names)
        self.names, self.size = names, size
        if len(names) > 1:
            self.get = (operator.attrgetter if slots else operator.itemgetter)(*names)
        elif slots:
            self.get = lambda value: tuple(getattr(value, name, None) for name in names)
        else:
            self.get = lambda parts: tuple(parts[name] for name in names)

    def __reduce__(self) -> tuple:
        """Sent to another process (explore_workers.py), it is that process's form for the
        same class and names: a form compares as itself."""
        return _form_of, (self.key, self.names, self.size)


def _form_of(key: object, names: tuple[str, ...], size: int) -> _Form:
    """The form of `key` (a class with slots, or a class and its names) in this process."""
    form = _FORMS.get(key)
    if form is None:
        form = _FORMS[key] = _Form(key, names, size, type(key) is type)
    return form


_FORMS: dict[object, _Form] = {}  # (class, names) -> its form; class -> the form last used


def canonical_object(value: object) -> tuple:
    """(its form, its attributes' canonical values), the attributes by name (rule 3: in
    any order they were set in)."""
    t = type(value)
    form = _FORMS.get(t)
    if t.__dictoffset__:
        parts = vars(value)
        try:
            values = form.get(parts) if form is not None and len(parts) == form.size else None
        except KeyError:
            values = None
        if values is None:
            names = tuple(sorted(k for k in parts if k not in SKIP))
            form = _FORMS[t] = _FORMS.setdefault((t, names), _Form((t, names), names, len(parts), False))
            values = form.get(parts)
    else:
        if form is None:
            form = _FORMS[t] = _Form(t, _slots(t), 0, True)
        try:
            values = form.get(value)
        except AttributeError:
            values = tuple(getattr(value, name, None) for name in form.names)
    if not set(map(type, values)) <= _IMMUTABLE:
        if id(value) in _WITHIN:  # (a way back to an object whose form is being made: a lock's machine)
            return form, _BACK
        _WITHIN.add(id(value))
        try:
            values = tuple([v if type(v) in _IMMUTABLE else canonical(v) for v in values])
        finally:
            _WITHIN.discard(id(value))
    return form, values


_WITHIN: set[int] = set()  # the objects whose canonical forms are being made (rule 3)
_BACK = "(back)"  # the form of a way back to one of them


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t))
    return names


def size_of(value: object, seen: set[int] | None = None) -> int:
    """Bytes held by a table of canonical forms, each object counted once (its atoms too)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    items: Iterable[object] = ()
    if isinstance(value, dict):
        items = (x for pair in value.items() for x in pair)
    elif isinstance(value, (tuple, frozenset)):
        items = value
    return size + sum(size_of(item, seen) for item in items)
