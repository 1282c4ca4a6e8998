"""The control surface (playground/run/control.py) both worlds offer: the simulation's
timeline, and a real run followed from its nodes' traces (run/followed.py), here with a
stand-in for the cluster (the real one is tested through the app in test_real_nodes)."""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from playground.core.commands import ChangeDelay, ChangeTimeout, Crash, Heal
from playground.core.config import ClusterConfig, InputError
from playground.record.reader import load
from playground.run.control import Control, FollowedRun, Timeline
from playground.run.followed import STARTING, WATCHING
from playground.run.session import Session
from playground.run.state import ClusterState
from tests.support import run
from tests.test_timeline import recorded, replay

CONFIG = ClusterConfig(timeout=4, probe_interval=0, delay_min=1, delay_max=1)


def test_both_worlds_offer_the_surface(tmp_path):
    timeline = replay(recorded(tmp_path))
    assert isinstance(timeline, Control) and Timeline.time_travel
    followed = FollowedRun(Session(nodes=3), ClusterState((1, 2, 3), CONFIG), lambda: None)
    assert isinstance(followed, Control) and not FollowedRun.time_travel


def test_the_timeline_refuses_T_and_delays_at_their_floor_and_what_a_node_cannot_do(tmp_path):
    timeline = replay(recorded(tmp_path, config=ClusterConfig(timeout=0.5, delay_min=0.25, delay_max=1)))
    name = str
    assert timeline.refusal(ChangeTimeout(-0.5), name) == "T cannot go below 0.5s"
    assert timeline.refusal(ChangeTimeout(0.5), name) is None
    assert timeline.refusal(ChangeDelay(-0.25), name) is None  # 0.25 -> 0
    assert timeline.refusal(ChangeDelay(-0.5), name) == "the minimum delay is 0.25s: it cannot go 0.5s lower"
    assert timeline.refusal(Crash(5), name) is None  # recovered at 30
    timeline.seek(timeline.history.instant_of(next(e.seq for e in timeline.history.events(0, 10**9)
                                                       if e.kind == "crash")))
    assert timeline.refusal(Crash(5), name) == "node 5 is down already"


def test_the_timeline_exports_a_window_as_svg(tmp_path):
    timeline = replay(recorded(tmp_path))
    target = tmp_path / "w.svg"
    timeline.export_diagram(target, 10, 35, nodes=(5,))
    svg = target.read_text()
    assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
    with pytest.raises(InputError):  # (a new file, never written over)
        timeline.export_diagram(target, 10, 35)


class Merged:
    """What the follower reads of a merge: which start it is, how many events are settled."""

    def __init__(self):
        self.generation, self.settled, self.origin = 1, 0, None


class StandIn:
    """A cluster as the follower sees one: started (in a thread), read, commanded, closed."""

    internals_unknown = "a stand-in has no variables"

    def __init__(self, events: list, fail: str | None = None):
        self._events, self._fail = events, fail
        self.config, self.merged = CONFIG, Merged()
        self.cancelled, self.closed, self.submitted = False, False, []
        self.started = threading.Event()

    def __enter__(self):
        if self._fail:
            raise InputError(self._fail)
        self.started.set()
        return self

    def events(self, final: bool = False) -> list:
        self.merged.settled = len(self._events) // 2  # (half settled: the rest go on a copy)
        return list(self._events)

    def submit(self, command) -> str | None:
        self.submitted.append(command)
        return "node 9 has not joined the cluster yet" if getattr(command, "node", None) == 9 else None

    def internals(self, node: int):
        return None

    def close(self) -> None:
        self.closed = True


def follow(tmp_path: Path, source: StandIn, **options) -> tuple[FollowedRun, threading.Event, ExitStack]:
    read, files = threading.Event(), ExitStack()
    session = Session(nodes=3, config=CONFIG, **options)
    followed = FollowedRun(session, ClusterState(session.ids, CONFIG), read.set, start=source, files=files)
    return followed, read, files


def test_a_followed_run_starts_reads_takes_commands_saves_and_closes(tmp_path):
    _, events = run(3, 20, CONFIG, ())
    source = StandIn(events)
    followed, read, files = follow(tmp_path, source, transcript=str(tmp_path / "run.jsonl"))
    removed = []
    files.callback(removed.append, "folder")
    assert followed.refusal(Crash(1)) == STARTING and followed.source is None
    assert source.started.wait(10)
    followed.poll()  # the cluster, once started; and a reading of it
    assert followed.cluster is source and followed.refusal(Crash(1)) is None
    assert read.wait(10)
    assert followed.take() == events
    assert {i: (n.up, n.leader) for i, n in followed.state.nodes.items()} == {1: (True, 3), 2: (True, 3), 3: (True, 3)}
    assert followed.now() == events[-1].t
    assert followed.submit(Heal()) is None and followed.submit(Crash(9)) == "node 9 has not joined the cluster yet"
    assert source.submitted == [Heal(), Crash(9)]
    target, parents = followed.save(tmp_path)
    saved = load(str(target))
    assert parents == 0 and saved.header.real and len(saved.events) == len(events)
    asyncio.run(followed.close())
    assert source.closed and removed == ["folder"] and followed.kept_transcript == str(tmp_path / "run.jsonl")
    assert load(str(tmp_path / "run.jsonl")).header.real and followed.failure is None


def test_a_followed_run_that_cannot_start_says_why_and_one_watched_takes_no_command(tmp_path):
    followed, _, _ = follow(tmp_path, StandIn([], fail="node 2 did not start"))
    deadline = time.monotonic() + 10
    while followed.failure is None and time.monotonic() < deadline:  # (its start, in a thread, fails)
        followed.poll()
        time.sleep(0.01)
    assert followed.failure == "node 2 did not start" and followed.cluster is None
    with pytest.raises(InputError, match=STARTING):
        followed.save(tmp_path)
    watched = FollowedRun(Session(nodes=3), ClusterState((1, 2, 3), CONFIG), lambda: None, watching=StandIn([]))
    assert watched.refusal(Crash(1)) == WATCHING and watched.submit(Crash(1)) == WATCHING
