"""A real run's traces merged into one transcript that the monitor, `replay` and `export`
read (the node processes' traces, node.py; the cluster's own log, cluster.py).

Merging. Every node's trace (its wall times, Lamport clocks and events) and the
cluster's log become one list of trace events in wall-time order, the earliest at t = 0:
messages are matched by their ids across traces (a delivery is never put before its
send, whatever the clocks of two machines say), a message lost with a killed process
stays in flight (sent, never delivered), and the monitor reads the result as it reads a simulated run,
so its verdicts are of the same kind. The header says the run was real: nothing
re-creates it, so verify and time travel's re-runs refuse it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable

from protocol import Message, known, machine

from ..core.config import ClusterConfig, InputError, shown_json, to_us
from ..core.events import (
    UNSET,
    CommandEvent,
    CrashEvent,
    DeliverEvent,
    DropEvent,
    ElectionStartEvent,
    Event,
    JoinEvent,
    LeaveEvent,
    RecoverEvent,
    SendEvent,
    StartEvent,
    StateEvent,
)
from ..core.host import DROPPED_RECEIVER_DOWN, HostStatus
from ..core.monitor import Monitor
from ..record.codec import converter
from .node import TRACE_FILE

# At one wall time: a command before what it caused, a crash before a boot; then each
# node's lines in the order it wrote them.
ORDER = {"command": 0, "crash": 1, "boot": 2}


# What each kind of trace line holds besides t, lamport, node and kind: the field, and a
# check of its value (node.py writes them; a trace edited by hand or damaged is refused).
def _id(v) -> bool:
    return type(v) is int


def _number(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


TRACE_FIELDS: dict[str, dict[str, Callable[[object], bool]]] = {
    "boot": {"algorithm": lambda v: type(v) is str and known(v), "ids": lambda v: type(v) is list and bool(v)
             and all(map(_id, v)), "recovering": lambda v: type(v) is bool, "timeout": lambda v: _number(v) and v > 0,
             "probe_interval": lambda v: _number(v) and v >= 0, "coordinator_timeout": lambda v: v is None or
             (_number(v) and v > 0), "delay": lambda v: _number(v) and v >= 0},
    "send": {"id": lambda v: type(v) is str, "dst": _id, "msg": lambda v: type(v) is dict},
    "deliver": {"id": lambda v: type(v) is str, "src": _id},
    "drop": {"id": lambda v: type(v) is str, "dst": _id},
    "state": {"status": lambda v: type(v) is str, "leader": lambda v: v is None or _id(v), "epoch": _id},
    "election_start": {}, "leave": {}, "stop": {},
    "timeout": {"value": lambda v: _number(v) and v > 0},  # (the node took a new T: the cluster's log has the command)
}


def read_trace(path: str) -> list[dict]:
    """A node's trace, every line checked; a last line cut short by a kill is left out.
    Anything else that is not a line node.py writes: one line naming it (InputError)."""
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            if number >= len(lines) - 1:  # the last line, cut short by a kill
                continue
            raise InputError(f"{path} line {number}: not JSON") from None
        out.append(checked(record, f"{path} line {number}"))
    return out


def checked(record: object, where: str) -> dict:
    """`record` if it is a trace line node.py writes; else one line naming `where`."""
    kind = record.get("kind") if isinstance(record, dict) else None
    fields = TRACE_FIELDS.get(kind) if type(kind) is str else None
    if fields is None or not (_number(record.get("t")) and _id(record.get("node")) and _id(record.get("lamport"))):
        raise InputError(f"{where}: not a node's trace line ({shown_json(record, 60)})")
    for name, ok in fields.items():
        if not ok(record.get(name)):
            raise InputError(f"{where}: field {name!r} of a {kind} line is {shown_json(record.get(name), 40)}")
    return record


def merge(algorithm: str, ids: tuple[int, ...], config: ClusterConfig, log: list[tuple[float, str, tuple]],
          traces: dict[int, list[dict]]) -> list[Event]:
    """The nodes' traces (their checked lines, read_trace) and the cluster's log as one
    run's trace events, the monitor's included."""
    cls = machine(algorithm)
    statuses = {s.value: s for s in cls.statuses}
    structure = converter(algorithm).structure
    per_node = {node: [dict(r) for r in traces.get(node, [])] for node in ids}  # (times move: copies)
    _causal_times(per_node)
    records = [dict(r, _i=i) for lines in per_node.values() for i, r in enumerate(lines)]
    records += [{"t": t, "kind": "command", "command": name, "args": list(args), "lamport": 0} for t, name, args in log
                if name != "start"]
    records += [{"t": t, "kind": "crash", "node": args[0], "lamport": 0} for t, name, args in log if name == "crash"]
    records += _unsaid_crashes(records)
    records.sort(key=lambda r: (r["t"], ORDER.get(r["kind"], 3), r.get("node", 0), r.get("_i", 0)))
    t0 = min((r["t"] for r in records), default=0.0)
    numbers: dict[str, int] = {}  # a message's id in its sender's trace -> its id in the run (0, 1, 2, ... as sent)
    arrived = {r["id"]: r["t"] for r in records if r["kind"] in ("deliver", "drop")}
    monitor = Monitor.for_algorithm(cls, ids, lambda: cls.settle_time(len(ids), config.protocol, config.delay_max + 0.05))
    out: list[Event] = []
    now = None

    def at(t: float) -> float:
        return round(t - t0, 6)

    def until(t: float) -> None:
        """The instant open is over, and so is every moment the monitor had to look at
        before t (core/trace.py's order: the instant's verdicts, then the deadlines)."""
        if now is not None and now != t:
            out.extend(monitor.close(now))
            while monitor.deadline is not None and monitor.deadline < to_us(t):
                out.extend(monitor.close(monitor.deadline / 1e6))

    def emit(e: Event) -> None:
        nonlocal now
        until(e.t)
        now = e.t
        out.append(e)
        monitor.observe(e)

    def message(r: dict) -> Message:
        try:
            return structure(r["msg"], Message)
        except Exception as e:  # cattrs reports through several exception types
            raise InputError(f"node {node}'s trace: message {r['id']} is not a {algorithm} message ({e})") from None

    booted: set[int] = set()
    down = set(ids)
    epochs: dict[int, int] = {}  # each node's epoch at its last state (a crash's state keeps it, as the host's does)
    for r in records:
        t, kind = at(r["t"]), r["kind"]
        node = r.get("node")
        if kind == "boot":
            first = node not in booted and not r.get("recovering")
            kind_of_start = (JoinEvent if r.get("joining") else StartEvent) if first else RecoverEvent
            emit(kind_of_start(UNSET, t, node))
            booted.add(node)
            down.discard(node)
        elif kind == "crash" and node not in down:
            emit(CrashEvent(UNSET, t, node))
            emit(StateEvent(UNSET, t, node, HostStatus.DOWN, None, HostStatus.DOWN.role, epochs.get(node, 0)))
            down.add(node)
        elif kind == "command":
            emit(CommandEvent(UNSET, t, r["command"], tuple(r["args"]), "real"))
        elif kind == "send":
            numbers[r["id"]] = len(numbers)
            emit(SendEvent(UNSET, t, node, r["dst"], numbers[r["id"]], message(r),
                           at(arrived.get(r["id"], r["t"]))))
        elif kind == "deliver" and r["id"] in numbers:
            emit(DeliverEvent(UNSET, t, numbers[r["id"]], r["src"], node))
        elif kind == "drop" and r["id"] in numbers:
            emit(DropEvent(UNSET, t, numbers[r["id"]], node, r["dst"], DROPPED_RECEIVER_DOWN))
        elif kind == "state":
            status = statuses.get(r["status"])
            if status is None:
                raise InputError(f"node {node}'s trace: {shown_json(r['status'])} is no {algorithm} status")
            epochs[node] = r["epoch"]
            emit(StateEvent(UNSET, t, node, status, r["leader"], status.role, r["epoch"]))
        elif kind == "election_start":
            emit(ElectionStartEvent(UNSET, t, node))
        elif kind == "leave":
            emit(LeaveEvent(UNSET, t, node))
            emit(StateEvent(UNSET, t, node, HostStatus.LEFT, None, HostStatus.LEFT.role, epochs.get(node, 0)))
            down.add(node)
    if now is not None:  # the run lasted until its last line (a stop's too): what was due by then is judged
        until(at(max(r["t"] for r in records)) + 1e-6)
    for seq, e in enumerate(out):
        e.seq = seq
    return out


def _causal_times(per_node: dict[int, list[dict]]) -> None:
    """Wall times made consistent with causality (two machines' clocks disagree): a
    delivery at least a microsecond after its send, and each node's own lines never
    going back in time; repeated until nothing moves (a send moved later can move its
    delivery in turn)."""
    for _ in range(len(per_node) + 1):
        sends = {r["id"]: r["t"] for lines in per_node.values() for r in lines if r["kind"] == "send"}
        moved = False
        for lines in per_node.values():
            latest = -math.inf
            for r in lines:
                t = r["t"]
                if r["kind"] == "deliver" and r["id"] in sends:
                    t = max(t, sends[r["id"]] + 1e-6)
                t = max(t, latest)
                if t != r["t"]:
                    r["t"], moved = t, True
                latest = t
        if not moved:
            return


def _unsaid_crashes(records: list[dict]) -> list[dict]:
    """Crashes no cluster logged (nodes run by hand): a node that boots again with no crash
    or leave since its last boot was killed without a word, and is down from its last
    line; one stopped (SIGTERM) and started again was down from its stop. (A last stop
    is the end of the run: the node was up until then, as a simulated run ends.)"""
    out, alive, last, stopped = [], set(), {}, {}
    for r in sorted((r for r in records if r.get("node") is not None), key=lambda r: r["t"]):
        node, kind = r["node"], r["kind"]
        if kind == "boot":
            if node in stopped:
                out.append({"t": stopped.pop(node) + 1e-6, "kind": "crash", "node": node, "lamport": 0})
            elif node in alive:  # (a microsecond after its last line: after it, whatever the sort's ties)
                out.append({"t": last[node] + 1e-6, "kind": "crash", "node": node, "lamport": 0})
            alive.add(node)
        elif kind == "stop":
            stopped[node] = r["t"]
            alive.discard(node)
        elif kind in ("crash", "leave"):
            alive.discard(node)
        if kind != "crash":  # (the cluster's crash lines are its own, not the node's)
            last[node] = r["t"]
    return out


def read_traces(folders: list[str]) -> tuple[str, tuple[int, ...], ClusterConfig, dict[int, list[dict]]]:
    """Nodes run by hand (`bully-tui node`, perhaps on several machines): the algorithm,
    ids and settings their traces' boot lines give, and each node's trace. Bad input (a
    folder without a trace, nodes that disagree) is one line."""
    traces: dict[int, list[dict]] = {}
    where: dict[int, str] = {}
    for folder in folders:
        lines = read_trace(os.path.join(folder, TRACE_FILE))
        boot = next((r for r in lines if r["kind"] == "boot"), None)
        if boot is None:
            raise InputError(f"{folder}: no node's trace in it ({TRACE_FILE} with a boot line)")
        if boot["node"] in traces:
            raise InputError(f"{folder}: node {boot['node']} again (also in {where[boot['node']]})")
        traces[boot["node"]], where[boot["node"]] = lines, folder
    algorithm, ids, config = settings(traces, "give every node's folder")
    return algorithm, ids, config, traces


def settings(traces: dict[int, list[dict]], missing_hint: str) -> tuple[str, tuple[int, ...], ClusterConfig]:
    """The algorithm, ids and settings the nodes' first boot lines agree on; one line
    where they do not, or where a node's trace is missing."""
    boots = [next(r for r in lines if r["kind"] == "boot") for lines in traces.values()]
    first = boots[0]
    for boot in boots[1:]:
        for key in ("algorithm", "ids", "timeout", "probe_interval"):
            if boot.get(key) != first.get(key):
                raise InputError(f"node {boot['node']} and node {first['node']} ran with different {key.replace('_', ' ')}: "
                                 f"{boot.get(key)} and {first.get(key)}")
    ids = tuple(first["ids"])
    if set(traces) != set(ids):
        missing = sorted(set(ids) - set(traces))
        raise InputError(f"the traces of nodes {', '.join(map(str, missing))} are missing ({missing_hint})")
    config = ClusterConfig(first["timeout"], first.get("coordinator_timeout"), first["probe_interval"], 0.0,
                           first.get("delay", 0.0))
    return first["algorithm"], ids, config
