"""Transcripts, format v4: JSON Lines, a header then one trace event per line.

Line 1: {"format": "bully-transcript", "version": 4, "algorithm", "nodes", "seed", "config"}
(and "ring": the ids in their order round the ring, for a ring algorithm on a ring not in
ascending order (config.ring); and "faults": the model's assumptions the run breaks on
purpose, those turned only ({"loss": P, "duplicate": P, "reorder": true, "drift": R}:
config.Faults); and a branch's "parent"; "real": true for a run of real node processes; and with a mutex, whose algorithm is then "ELECTION+MUTEX",
the "workload": {"think": [A, B] or null, "hold": [A, B]}; and "by_hand": true for a run
stepped by hand, an exhaustive hunt's finding, which no recipe re-creates; and for a run
made from a scenario file, "scenario": {"file", "claim"}: its name and what it claims,
so that a replay shows the claim too). Later lines: {"seq", "t", "kind", ...fields}, the fields of
the event's class in core/events.py, in its order; `msg` is {"type": <message name>,
"epoch", ...the message's own fields}. Each event's class is its wire format, written
once: codec.py generates both its line and the check that reads it back from the class.

Versions: v2 added the cluster epoch (on messages and state events) and `violation`
events; v3 gives each state its role (instead of a `normal` flag), gives violations
their structure (nodes and whom each followed; the text is made from it) and adds the
monitor's `agreement` events; v4 gives a node's send, timer set and cancel, election
start, state and cs events the key of its algorithm's rule that made them ("rule": "1",
"probing 2", "central 3"; null where the runtime made it: protocol/interface.py, "Rules,
as data"). Older transcripts still load: their lines are upgraded as they are read
(upgrade.py; a v3 line reads as a v4 line whose rule is not known). A v3 run is re-created
by this program as it was (v4 only added the rule): verify compares it without the rule,
and a branch of it goes on as v3.

The jobs, one a module: codec.py (an event to a line and back), recorder.py (writing a
run as it goes, whole lines only), reader.py (reading and checking, a block at a time),
upgrade.py (older versions).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from protocol import machine

from ..core.commands import Scheduled
from ..core.config import NO_FAULTS, ClusterConfig, Workload
from ..core.events import Event

if TYPE_CHECKING:
    from ..core.engine import Engine

FORMAT = "bully-transcript"
VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
RE_CREATED_VERSIONS = (3, 4)  # whose runs this program re-creates, event for event (v4 only added the rule)
LINE_LIMIT = 1_000_000  # bytes in one line: a thousand times any event's
INDEX_BLOCK = 512  # a recorder with an index notes where every 512th event's line starts


@dataclass(frozen=True, slots=True)
class Parent:
    """A branch's parent transcript (a file beside it) and the last event they share."""

    file: str
    seq: int


@dataclass(frozen=True, slots=True)
class Claim:
    """What a scenario claims (its file's opening comment lines), kept with a run made from
    it: the app shows it beside the run, live and in a replay."""

    scenario: str  # the file's name
    text: str


@dataclass(frozen=True, slots=True)
class Header:
    algorithm: str
    nodes: list[int]
    seed: int
    config: ClusterConfig
    parent: Parent | None = None  # a branch's: where it left its parent
    format: str = FORMAT
    version: int = VERSION
    workload: Workload | None = None  # with a mutex: who wants the critical section when
    # Stepped by hand (an exhaustive hunt's steps, explore.py): the test was the network
    # and the clock, so no settings and commands re-create the run (verify and
    # branching say so); it replays and exports as any other.
    by_hand: bool = False
    # Run by real node processes over TCP (playground/real/): the operating system was the
    # network and the clock, so nothing re-creates it either; it replays and exports.
    real: bool = False
    claim: Claim | None = None  # made from a scenario file: what it claims


@dataclass(slots=True)
class Transcript:
    header: Header
    events: list[Event] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Recipe:
    """What re-creates a run, event for event (the engine is deterministic): its header
    (algorithm, nodes, seed, settings) and its commands, at their times, in their order.
    The one place a header and commands become an engine: a new session, verify, a
    replay's re-run and a branch all start here, so they cannot drift apart."""

    header: Header
    commands: tuple[Scheduled, ...] = ()

    def engine(self, *, lookahead: bool = True) -> Engine:
        """A fresh engine, every command scheduled. `lookahead`: hand out work in windows
        of the minimum delay (headless), or an instant at a time (live: nothing shows
        before its time); the same events either way."""
        from ..core.engine import Engine  # (here: a real node, which writes headers, runs no engine)

        h = self.header
        engine = Engine(machine(h.algorithm), h.nodes, h.config, h.seed, lookahead=lookahead, workload=h.workload)
        engine.schedule(self.commands)
        return engine


def wide(nodes: list[int]) -> bool:
    """UUID ids (`--ids uuid`) are 128-bit; orjson handles only 64-bit integers."""
    return any(not -(2**63) <= i < 2**63 for i in nodes)


def header_line(header: Header) -> bytes:
    """Line 1, its keys in the format's order (written by the json module: ids may be 128-bit)."""
    config = asdict(header.config)
    ring = config.pop("ring")  # (apart, and only if there is one: every other run's line stays as it was)
    faults = {k: v for k, v in config.pop("faults").items() if v != getattr(NO_FAULTS, k)}  # (the same: those turned)
    line = {"format": header.format, "version": header.version, "algorithm": header.algorithm, "nodes": header.nodes,
            "seed": header.seed, "config": config}
    if ring is not None:
        line["ring"] = list(ring)
    if faults:
        line["faults"] = faults
    if header.parent is not None:
        line["parent"] = {"file": header.parent.file, "seq": header.parent.seq}
    if header.workload is not None:
        line["workload"] = {"think": header.workload.think, "hold": header.workload.hold}
    if header.by_hand:
        line["by_hand"] = True
    if header.real:
        line["real"] = True
    if header.claim is not None:
        line["scenario"] = {"file": header.claim.scenario, "claim": header.claim.text}
    return (json.dumps(line, separators=(",", ":")) + "\n").encode()
