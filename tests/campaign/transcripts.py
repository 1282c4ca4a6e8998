"""4. The transcripts that verify, replay and export read: what the checkout under test
records once per campaign run (BASES), and the mutations (MUTATIONS) that spoil one line
of one of them, each saying which line."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from .cases import NODE_COMMANDS

BASES = {  # what the checkout under test records once per campaign run
    "classic": ["--headless", "--nodes", "5", "--until", "40", "--at", "5 timeout 3", "--at", "6 delay 0.5:1",
                "--at", "10 crash 5", "--at", "15 partition 1,2", "--at", "22 heal", "--at", "24 recover 5",
                "--at", "26 join", "--at", "28 hold 1 3", "--at", "30 release 1 3", "--at", "32 leave 2",
                "--at", "34 elect 1"],
    "uuid": ["--headless", "--nodes", "5", "--ids", "uuid", "--until", "40", "--at", "10 crash 5",
             "--at", "20 recover 5", "--at", "25 join", "--at", "30 elect 1"],
    "epoch-bully": ["--headless", "--algorithm", "epoch-bully", "--nodes", "5", "--until", "40", "--at", "10 crash 5",
                    "--at", "15 partition 1,2", "--at", "22 heal", "--at", "26 join", "--at", "30 leave 1"],
    "ring": ["--headless", "--algorithm", "ring", "--nodes", "5", "--until", "40", "--at", "10 crash 5",
             "--at", "20 recover 5", "--at", "26 hold 1 2", "--at", "28 release 1 2"],
    "garcia-molina": ["--headless", "--algorithm", "garcia-molina", "--nodes", "5", "--until", "40",
                      "--at", "10 crash 5", "--at", "20 recover 5", "--at", "30 timeout 5", "--at", "31 delay 1"],
    # ~120k events, for signals during verify and export: each works on it for longer than the
    # latest moment drawn (0.7 s into its work: verify takes 1.3 s of CPU, the quickest export,
    # mermaid's, 0.9)
    "big": ["--headless", "--algorithm", "stoller", "--nodes", "20", "--until", "300"],
    # a mutex beside the election: cs lines, a workload in the header, a violation of mutual exclusion
    "central": ["--headless", "--mutex", "central", "--nodes", "5", "--until", "40", "--cs-hold", "20:30",
                "--at", "8 want 2", "--at", "12 crash 5", "--at", "25 want 3"],
    # a moment far out: an SVG drawn to scale once ran out of memory on it (--probe-interval 0:
    # with probes, reaching t = 1e11 would take days)
    "far": ["--headless", "--nodes", "5", "--probe-interval", "0", "--at", "100000000000 elect 1", "--until", "1e11"],
}
SMALL_BASES = ("classic", "uuid", "epoch-bully", "ring", "garcia-molina", "central")

EVENT_FIELDS = {  # JSON type of each event field: int, num, str, nint (int or null), nnum, list, obj
    "seq": "int", "t": "num", "kind": "str", "src": "int", "dst": "int", "id": "int", "msg": "obj", "arrives": "num",
    "reason": "str", "node": "int", "status": "str", "leader": "nint", "role": "str", "epoch": "int", "name": "str",
    "fires": "num", "command": "str", "args": "list", "source": "str", "property": "str", "phase": "str",
    "nodes": "list", "leaders": "list", "expected": "nint", "since": "nnum", "duration": "nnum", "state": "str",
}
HEADER_FIELDS = {"format": "str", "version": "int", "algorithm": "str", "nodes": "idlist", "seed": "int",
                 "config": "obj"}
OPTIONAL_FIELDS = {"epoch", "expected", "since", "duration"}  # they have defaults (older versions)
WRONG: dict[str, Callable[[Any], list[Any]]] = {  # values of a wrong JSON type, per field type
    "int": lambda v: [[v], {"v": v}, str(v), True, None, v + 0.5],
    "num": lambda v: [[v], {"v": v}, str(v), True, None],
    "str": lambda v: [[v], {"v": v}, 1, True, None],
    "nint": lambda v: [[v], str(v), True, 1.5, {"v": v}],
    "nnum": lambda v: [[v], str(v), True, {"v": v}],
    "list": lambda v: [str(v), {"v": v}, 5, [[x] for x in v] or [[1]], [True], None],
    "idlist": lambda v: ["1,2,3", {"v": 1}, 5, [[x] for x in v], [float(x) for x in v], [str(x) for x in v], None, []],
    "obj": lambda v: [[v], "x", 1, None, True],
}


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


class Lines:
    """A transcript's lines, parsed, for mutating one of them."""

    def __init__(self, data: bytes):
        self.lines = data.split(b"\n")
        if self.lines and self.lines[-1] == b"":
            self.lines.pop()
        self.objs = [json.loads(line) for line in self.lines]

    def pick(self, rng: random.Random, test: Callable[[dict], bool] = lambda o: True, start: int = 1) -> int | None:
        """The index of a random event line that passes `test`."""
        found = [i for i in range(start, len(self.objs)) if test(self.objs[i])]
        return rng.choice(found) if found else None

    def join(self, lines: list[bytes]) -> bytes:
        return b"".join(line + b"\n" for line in lines)

    def replaced(self, i: int, obj: Any) -> tuple[bytes, int]:
        lines = list(self.lines)
        lines[i] = obj if isinstance(obj, bytes) else _dump(obj)
        return self.join(lines), i + 1


Mutation = Callable[..., "tuple[bytes, int | None] | None"]
MUTATIONS: dict[str, Mutation] = {}
WELL_FORMED = {"fires_changed", "status_changed", "arrives_changed"}  # verify: different; export: fine
HEADER_ONLY = {"header_only"}
FIXED_BASE = {"nodes_5000": "classic", "nodes_155000": "classic"}  # ids 1..N: the events stay the header's


def mutation(fn: Mutation) -> Mutation:
    MUTATIONS[fn.__name__.removeprefix("m_")] = fn
    return fn


def _has(name: str, kind: str | None = None) -> Callable[[dict], bool]:
    return lambda o: name in o and (kind is None or o.get("kind") == kind)


@mutation
def m_wrong_type(t: Lines, r: random.Random, name: str, variant: int | None = None, kind: str | None = None):
    i = t.pick(r, lambda o: name in o and (kind is None or o.get("kind") == kind)
               and (EVENT_FIELDS[name] not in ("int", "list") or o[name] is not None))
    if i is None:
        return None
    obj = dict(t.objs[i])
    values = WRONG[EVENT_FIELDS[name]](obj[name])
    obj[name] = values[variant] if variant is not None else r.choice(values)
    return t.replaced(i, obj)


@mutation
def m_header_wrong_type(t: Lines, r: random.Random, name: str, variant: int | None = None):
    obj = dict(t.objs[0])
    values = WRONG[HEADER_FIELDS[name]](obj[name])
    obj[name] = values[variant] if variant is not None else r.choice(values)
    return t.replaced(0, obj)


@mutation
def m_args_float(t: Lines, r: random.Random):
    """"args": [4.0]: a float where a node id goes."""
    i = t.pick(r, lambda o: o.get("kind") == "command" and o.get("command") in NODE_COMMANDS)
    if i is None:
        return None
    obj = dict(t.objs[i], args=[float(a) for a in t.objs[i]["args"]])
    return t.replaced(i, obj)


@mutation
def m_delete(t: Lines, r: random.Random, name: str):
    i = t.pick(r, _has(name))
    if i is None:
        return None
    obj = dict(t.objs[i])
    del obj[name]
    return t.replaced(i, obj)


@mutation
def m_header_delete(t: Lines, r: random.Random, name: str):
    obj = dict(t.objs[0])
    del obj[name]
    return t.replaced(0, obj)


@mutation
def m_delete_msg_type(t: Lines, r: random.Random):
    i = t.pick(r, _has("msg"))
    obj = dict(t.objs[i], msg={k: v for k, v in t.objs[i]["msg"].items() if k != "type"})
    return t.replaced(i, obj)


EXTRA_VALUES = {"one": 1, "text": "x", "object": {}, "deep": _nested(100)}


@mutation
def m_extra(t: Lines, r: random.Random, where: str, value: str):
    """An unknown field: in the header, an event, or a message."""
    if where == "header":
        i = 0
    elif where == "msg":
        i = t.pick(r, _has("msg"))
    else:
        i = t.pick(r)
    obj = dict(t.objs[i])
    if where == "msg":
        obj["msg"] = dict(obj["msg"], zzz=EXTRA_VALUES[value])
    else:
        obj["zzz"] = EXTRA_VALUES[value]
    return t.replaced(i, obj)


def _event_change(pick: Callable[[dict], bool] | None, change: Callable[[dict, Lines, int], Any], start: int = 1):
    def mutate(t: Lines, r: random.Random):
        i = t.pick(r, pick or (lambda o: True), start)
        if i is None:
            return None
        obj = dict(t.objs[i])
        replacement = change(obj, t, i)
        return t.replaced(i, replacement if replacement is not None else obj)
    return mutate


def _set(**values: Any) -> Callable[[dict, Lines, int], None]:
    return lambda obj, t, i: obj.update(values)


MUTATIONS.update({
    "t_huge": _event_change(None, _set(t=1e300)),
    "t_negative": _event_change(None, _set(t=-1.0)),
    "seq_skip": _event_change(None, lambda o, t, i: o.update(seq=o["seq"] + 1)),
    "seq_repeat": _event_change(None, lambda o, t, i: o.update(seq=o["seq"] - 1), start=2),
    "unknown_kind": _event_change(None, _set(kind="explode")),
    "unknown_command": _event_change(lambda o: o.get("kind") == "command", _set(command="explode")),
    "violation_property": _event_change(lambda o: o.get("kind") == "violation", _set(property="sle9")),
    "violation_phase": _event_change(lambda o: o.get("kind") == "violation", _set(phase="middle")),
    "sle1_short_leaders": _event_change(
        lambda o: o.get("kind") == "violation" and o.get("property") == "sle1" and len(o.get("nodes", ())) >= 2,
        lambda o, t, i: o.update(leaders=o["leaders"][:-1])),
    "unknown_role": _event_change(lambda o: o.get("kind") == "state", _set(role="boss")),
    "stranger_node": _event_change(lambda o: any(isinstance(o.get(k), int) for k in ("src", "dst", "node", "leader")),
                                   lambda o, t, i: o.update({next(k for k in ("src", "dst", "node", "leader")
                                                                  if isinstance(o.get(k), int)): 99})),
    "args_stranger": _event_change(lambda o: o.get("kind") == "command" and o.get("command") in NODE_COMMANDS,
                                   lambda o, t, i: o.update(args=[99] * len(o["args"]))),
    "args_count": _event_change(
        lambda o: o.get("kind") == "command" and o.get("command") != "partition",
        lambda o, t, i: o.update(args=(o["args"] + o["args"][-1:]) if o["args"] else [1])),
    "nan_literal": _event_change(None, _set(t=float("nan"))),
    "infinity_literal": _event_change(lambda o: "arrives" in o, _set(arrives=float("inf"))),
    "two_objects": _event_change(None, lambda o, t, i: _dump(o) + _dump(o)),
    "long_line": _event_change(None, _set(zzz="x" * 1_000_001)),
    "deep_nesting": _event_change(None, lambda o, t, i: _dump(o)[:-1] + b',"zzz":' + b"[" * 100_000 + b"]" * 100_000
                                  + b"}"),
    "arrives_changed": _event_change(lambda o: o.get("kind") == "send",
                                     lambda o, t, i: o.update(arrives=o["arrives"] + 0.125)),
    "fires_changed": _event_change(lambda o: o.get("kind") == "timer_set",
                                   lambda o, t, i: o.update(fires=o["fires"] + 0.125)),
})


@mutation
def m_time_back(t: Lines, r: random.Random):
    """A time earlier than the line before's (which is at least 1 s)."""
    found = [i for i in range(2, len(t.objs)) if t.objs[i - 1]["t"] >= 1]
    i = r.choice(found)
    return t.replaced(i, dict(t.objs[i], t=round(t.objs[i - 1]["t"] - 0.5, 6)))


def _states(t: Lines) -> list[tuple[str, str]]:
    """Each (status, role) the transcript's state lines have."""
    return sorted({(o["status"], o["role"]) for o in t.objs[1:] if o.get("kind") == "state"})


@mutation
def m_status_changed(t: Lines, r: random.Random):
    """Another status the run had, with its role: well formed, and not what happened."""
    i = t.pick(r, lambda o: o.get("kind") == "state")
    others = [] if i is None else [s for s in _states(t) if s != (t.objs[i]["status"], t.objs[i]["role"])]
    if not others:
        return None
    status, role = r.choice(others)
    return t.replaced(i, dict(t.objs[i], status=status, role=role))


@mutation
def m_role_contradicts_status(t: Lines, r: random.Random):
    """A role the line's status does not have (a known role, of another status)."""
    i = t.pick(r, lambda o: o.get("kind") == "state")
    if i is None:
        return None
    name = t.objs[i]["status"]
    # (not one a status of that name has: "down" is Garcia-Molina's waiting status and the runtime's)
    taken = {role for status, role in _states(t) if status == name} | ({"down"} if name == "down" else set())
    roles = sorted({role for _, role in _states(t)} - taken)
    return t.replaced(i, dict(t.objs[i], role=r.choice(roles))) if roles else None


def _header_change(change: Callable[[dict], None]) -> Mutation:
    def mutate(t: Lines, r: random.Random):
        obj = json.loads(t.lines[0])
        change(obj)
        return t.replaced(0, obj)
    return mutate


MUTATIONS.update({
    "seed_negative": _header_change(lambda h: h.update(seed=-1)),
    "nodes_5000": _header_change(lambda h: h.update(nodes=list(range(1, 5001)))),
    "nodes_155000": _header_change(lambda h: h.update(nodes=list(range(1, 155_001)))),
    "config_timeout_huge": _header_change(lambda h: h["config"].update(timeout=1e308)),
    "config_delay_inverted": _header_change(lambda h: h["config"].update(delay_min=2.0, delay_max=1.0)),
    "parent_string": _header_change(lambda h: h.update(parent="gone.jsonl")),
    "version_float": _header_change(lambda h: h.update(version=3.0)),
    "version_unknown": _header_change(lambda h: h.update(version=99)),
})


@mutation
def m_cut(t: Lines, r: random.Random):
    """The file cut in the middle of a line (that line is then its last)."""
    i = t.pick(r, lambda o: True)
    line = t.lines[i]
    return t.join(t.lines[:i]) + line[:r.randint(1, len(line) - 1)], i + 1


@mutation
def m_blank_line(t: Lines, r: random.Random):
    i = t.pick(r, lambda o: True)
    return t.join(t.lines[:i] + [b""] + t.lines[i:]), i + 1


@mutation
def m_empty(t: Lines, r: random.Random):
    return b"", None


@mutation
def m_header_only(t: Lines, r: random.Random):
    return t.join(t.lines[:1]), None


@mutation
def m_garbage(t: Lines, r: random.Random):
    return b"\x00\xff\xfe" + bytes(r.randrange(256) for _ in range(3000)), 1
