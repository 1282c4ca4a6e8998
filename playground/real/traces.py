"""A real node's trace (node.py writes it, DIR/trace.jsonl), read and checked line by
line before merge.py merges it: each line a JSON object of a kind node.py writes, with
fields of the right types, all of one node, naming only nodes of the run. What is not
is one line naming the file and the line (InputError), never a traceback or a guess.

The only line left out is one a kill cut short: the last, with no newline after it, in
a trace whose node has stopped. A whole line (its newline written) that is garbage is
refused like any other, the last one too.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from protocol import CsState, known

from ..core.config import ClusterConfig, InputError, shown_json
from .node import TRACE_FILE

CS_STATES = {str(s) for s in CsState}


# What each kind of trace line holds besides t, lamport, node and kind: the field, and a
# check of its value (node.py writes them; a trace edited by hand or damaged is refused).
def _id(v) -> bool:
    return type(v) is int


def _text(v) -> bool:
    return type(v) is str


def _number(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


TRACE_FIELDS: dict[str, dict[str, Callable[[object], bool]]] = {
    "boot": {"algorithm": lambda v: _text(v) and known(v), "ids": lambda v: type(v) is list and bool(v)
             and all(map(_id, v)) and len(set(v)) == len(v), "recovering": lambda v: type(v) is bool, "timeout": lambda v: _number(v) and v > 0,
             "probe_interval": lambda v: _number(v) and v >= 0, "coordinator_timeout": lambda v: v is None or
             (_number(v) and v > 0), "delay": lambda v: _number(v) and v >= 0},
    "send": {"id": _text, "dst": _id, "msg": lambda v: type(v) is dict},
    "deliver": {"id": _text, "src": _id},
    "drop": {"id": _text, "dst": _id},
    "state": {"status": _text, "leader": lambda v: v is None or _id(v), "epoch": _id},
    "cs": {"state": lambda v: v in CS_STATES, "stamp": lambda v: v is None or _id(v)},
    "timer_set": {"name": _text, "fires": _number}, "timer_cancel": {"name": _text},
    "timer": {"name": _text},
    "election_start": {}, "leave": {}, "stop": {},
    "timeout": {"value": lambda v: _number(v) and v > 0},  # (the node took a new T: the cluster's log has the command)
}
NODE_FIELDS = ("node", "dst", "src", "leader")  # the fields that name a node


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


def stranger(record: dict, ids: Iterable[int]) -> str | None:
    """What is wrong if `record` names a node that is not one of `ids` (a line of another
    run, or edited by hand); None if it names only nodes of the run."""
    for name in NODE_FIELDS:
        node = record.get(name)
        if node is not None and node not in ids:
            return f"field {name!r} of a {record['kind']} line names node {node}, not one of the nodes " \
                   f"({', '.join(map(str, sorted(ids)))})"
    return None


def read_trace(path: str) -> list[dict]:
    """A node's trace, every line checked; a last line cut short by a kill is left out.
    Anything else that is not a line node.py writes: one line naming it (InputError)."""
    return TraceFile(path).read(final=True)


class TraceFile:
    """A node's trace file read as it grows: each read takes only the lines written since
    the last (what a live view needs: the file itself only grows)."""

    def __init__(self, path: str):
        self.path = path
        self.lines: list[dict] = []  # every line read so far, checked
        self.numbers: list[int] = []  # each one's line number in the file
        self.cut_short: int | None = None  # the number of a last line left out (final): a kill cut it short
        self._offset = 0  # bytes read so far: whole lines only
        self._number = 0  # lines read so far (blank ones too), for the line number of an error

    def read(self, final: bool = False) -> list[dict]:
        """The lines so far. `final`: the node has stopped, so a last line without its
        newline was cut short by a kill, and is left out if it is not whole JSON."""
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
        for last, line in enumerate(pieces, 1 - len(pieces)):
            self._number += 1
            if not line.strip():
                continue
            where = f"{self.path} line {self._number}"
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                if last == 0:  # (the piece after the last newline: only `final` reads it)
                    self.cut_short = self._number
                    continue
                raise InputError(f"{where}: not JSON") from None
            record = checked(record, where)
            if self.lines and record["node"] != self.lines[0]["node"]:
                raise InputError(f"{where}: a line of node {record['node']} in node {self.lines[0]['node']}'s trace")
            self.lines.append(record)
            self.numbers.append(self._number)
        self._number -= 1  # (the piece after the last newline is not a line yet)
        return self.lines


@dataclass
class HandRun:
    """Nodes run by hand, as their traces tell (read_traces)."""

    algorithm: str
    ids: tuple[int, ...]
    config: ClusterConfig
    traces: dict[int, list[dict]]  # each node's lines
    files: dict[int, str]  # each node's trace file
    cut_short: list[str]  # the traces whose last line a kill cut short (left out), "FILE line N"


def read_traces(folders: list[str]) -> HandRun:
    """Nodes run by hand (`bully-tui node`, perhaps on several machines): the algorithm,
    ids and settings their traces' boot lines give, and each node's trace. Bad input (a
    folder without a trace, nodes that disagree, a line that names a node of no trace)
    is one line."""
    read: dict[int, TraceFile] = {}
    for folder in folders:
        trace = TraceFile(os.path.join(folder, TRACE_FILE))
        lines = trace.read(final=True)
        boot = next((r for r in lines if r["kind"] == "boot"), None)
        if boot is None:
            raise InputError(f"{folder}: no node's trace in it ({TRACE_FILE} with a boot line)")
        if boot["node"] in read:
            raise InputError(f"{folder}: node {boot['node']} again (also in {os.path.dirname(read[boot['node']].path)})")
        read[boot["node"]] = trace
    traces = {node: trace.lines for node, trace in read.items()}
    algorithm, ids, config = settings(traces, "give every node's folder")
    for trace in read.values():
        for record, number in zip(trace.lines, trace.numbers, strict=True):
            if why := stranger(record, ids):
                raise InputError(f"{trace.path} line {number}: {why}")
    return HandRun(algorithm, ids, config, traces, {node: trace.path for node, trace in read.items()},
                   [f"{trace.path} line {trace.cut_short}" for trace in read.values() if trace.cut_short is not None])


def settings(traces: dict[int, list[dict]], missing_hint: str) -> tuple[str, tuple[int, ...], ClusterConfig]:
    """The algorithm, ids and settings the nodes' first boot lines agree on; one line
    where they do not, or where a node's trace is missing."""
    boots = []
    for node, lines in traces.items():
        boot = next((r for r in lines if r["kind"] == "boot"), None)
        if boot is None:
            raise InputError(f"node {node}'s trace has no boot line: it is not a node's trace from its start")
        boots.append(boot)
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
