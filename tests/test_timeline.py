"""The timeline (playground/run/timeline.py), with no app: any instant shown again as a
fold from the start gives it, a node's internals then, a replay read a block at a time,
branching a new future from the past, saving, and what cannot be asked at a moment."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest

from playground.core.commands import Crash, Elect, Join, Leave, Recover, WantCs
from playground.core.config import ClusterConfig, InputError, to_seconds
from playground.record.reader import Reader
from playground.record.transcript import INDEX_BLOCK
from playground.record.verify import verify
from playground.run.history import Loading
from playground.run.session import Session
from playground.run.state import ClusterState
from playground.run.timeline import Timeline
from playground.run.wiring import run_headless
from tests.support import at

JITTER = ClusterConfig(delay_min=0.3, delay_max=1.2)


def recorded(tmp_path: Path, name: str = "t.jsonl", until: float = 45, **session) -> Path:
    path = tmp_path / name
    session = {"nodes": 5, "config": JITTER, "commands": tuple(at("20 crash 5", "30 recover 5")), **session}
    run_headless(Session(transcript=str(path), **session), until)
    return path


def replay(path: Path) -> Timeline:
    """A replay's timeline, its file read whole."""
    loading = Loading(str(path))
    session = Session.of(loading.history.header, (), str(path))
    timeline = Timeline.replay(session, ClusterState(session.ids, session.config, session.algorithm), loading)
    while not timeline.read(64):
        pass
    timeline.seek(timeline.history.instants - 1)
    return timeline


def fold(timeline: Timeline, instant: int) -> ClusterState:
    """What a fold of the transcript from its start to the end of `instant` gives."""
    session = timeline.session
    state = ClusterState(session.ids, session.config, session.algorithm)
    end = timeline.history.end_of(instant)
    with Reader.open(timeline.history.path) as reader:
        state.apply([e for e in reader.events() if e.seq <= end])
    return state


def shows(timeline: Timeline, instant: int) -> bool:
    return timeline.shown == instant and timeline.state.snapshot() == fold(timeline, instant).snapshot()


def test_a_replay_opens_at_its_end_and_any_instant_is_a_fold_from_the_start(tmp_path):
    timeline = replay(recorded(tmp_path))
    last = timeline.history.instants - 1
    timeline.seek(last)
    assert shows(timeline, last) and timeline.now() == timeline.history.times[-1] <= 45
    for instant in (0, last // 3, last - 1, last // 2):
        events = timeline.seek(instant, recent=50)
        assert shows(timeline, instant)
        assert events[-1].seq == timeline.history.end_of(instant)  # what led there, for a log
    timeline.seek(next(i for i in range(last) if timeline.history.times[i] > 25))
    assert not timeline.state.nodes[5].up  # (between the crash at 20 and the recovery at 30)


def test_markers_lead_from_the_moment_shown(tmp_path):
    timeline = replay(recorded(tmp_path))
    timeline.seek(timeline.history.instants - 1)
    recovery = timeline.marker_near(-1)  # the command at 30
    timeline.seek(recovery)
    assert timeline.now() == 30 and shows(timeline, recovery)
    election = timeline.marker_near(-1)
    assert 20 < timeline.history.times[election] < 30
    assert [m.kind for m in timeline.history.markers if m.t == timeline.history.times[election]] == ["election"]
    timeline.seek(0)
    assert timeline.marker_near(-1) is None


def test_internals_at_a_past_moment_are_the_re_run_engines_then(tmp_path):
    timeline = replay(recorded(tmp_path, algorithm="ring", commands=tuple(at("20 crash 5"))))
    timeline.seek(timeline.history.instants - 1)
    assert timeline.internals(1) is None  # not re-run yet: not known
    for _ in timeline.re_run(slice_seconds=0):  # (a slice at a time: the app lets keys in between)
        pass
    now = timeline.internals(1)
    instant = max(i for i in range(timeline.history.instants) if timeline.history.times[i] <= 20.5)
    timeline.seek(instant)
    then = timeline.internals(1)
    assert then == timeline.history.engine_at(instant).internals(1) and then != now


def test_a_replay_is_read_a_block_at_a_time_and_a_bad_line_far_in_is_one_error(tmp_path):
    path = recorded(tmp_path, "long.jsonl", 120, nodes=6, algorithm="stoller", commands=tuple(at("40 crash 6")))
    with Reader.open(str(path)) as reader:
        total = sum(1 for _ in reader.events())
    loading = Loading(str(path))
    session = Session.of(loading.history.header, (), str(path))
    timeline = Timeline.replay(session, ClusterState(session.ids, session.config, session.algorithm), loading)
    reads = 0
    while not timeline.read(1):
        reads += 1
    assert total > 4 * INDEX_BLOCK and timeline.history.count == total and reads >= 4
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3 * INDEX_BLOCK] = b'{"seq": "x"}\n'
    path.write_bytes(b"".join(lines))
    loading = Loading(str(path))
    timeline = Timeline.replay(session, ClusterState(session.ids, session.config, session.algorithm), loading)
    with pytest.raises(InputError, match=f"line {3 * INDEX_BLOCK + 1}: field 'kind'"):
        while not timeline.read(1):
            pass
    assert timeline.loading is None  # (its file closed)


def on_asyncio(test):
    """The live run is trio in guest mode on an asyncio loop: a loop of the test's own."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


def branch_of(timeline: Timeline, request, path: Path):
    return timeline.branch(request, path, speed=1.0, on_events=lambda: None, on_done=lambda _: None)


async def settle(timeline: Timeline, seconds: float = 0.0) -> None:
    """Move the paused clock on, and wait until the run has done everything due by then."""
    timeline.live.advance(seconds)
    while not timeline.live.idle:
        await asyncio.sleep(0.001)
        timeline.take()  # (as the app does for each burst: the run waits for its events to be taken)


@on_asyncio
async def test_a_command_in_the_past_branches_a_new_transcript_and_the_parent_stays(tmp_path):
    path = recorded(tmp_path)
    parent = path.read_bytes()
    timeline = replay(path)
    for _ in timeline.re_run(slice_seconds=0):
        pass
    instant = max(i for i in range(timeline.history.instants) if timeline.history.times[i] == 20)
    timeline.seek(instant)
    end = timeline.history.end_of(instant)
    assert timeline.branch_refusal() is None
    target = timeline.branch_path()
    assert target.name == "t.branch-1.jsonl"
    await branch_of(timeline, Recover(5), target)
    try:
        assert timeline.at_present and timeline.live.paused and timeline.history.path == str(target)
        await settle(timeline)
        assert timeline.state.nodes[5].up  # the command ran at once, though paused
        await settle(timeline, 15)
        assert timeline.state.leaders() == [5]
    finally:
        await timeline.close()
    assert path.read_bytes() == parent  # the parent is never changed
    head, *events = target.read_text().splitlines()
    assert json.loads(head)["parent"] == {"file": "t.jsonl", "seq": end}
    assert events[:end + 1] == parent.decode().splitlines()[1:end + 2]  # identical up to the branch
    commands = [json.loads(e) for e in events[end + 1:] if '"kind":"command"' in e]
    assert [(c["command"], c["args"], c["t"]) for c in commands][0] == ("recover", [5], 20.000001)


@on_asyncio
async def test_a_temporary_session_and_its_branch_go_and_save_keeps_both(tmp_path):
    session = Session(nodes=5, config=JITTER, commands=tuple(at("20 crash 5")))
    timeline = Timeline.live_session(session, ClusterState(session.ids, session.config), speed=1, paused=True,
                                     on_events=lambda: None, on_done=lambda _: None)
    try:
        temporary = Path(timeline.history.path)
        assert timeline.kept_transcript is None and temporary.exists()
        await settle(timeline, 30)
        timeline.seek(timeline.marker_near(-1))  # the election after the crash
        await branch_of(timeline, Recover(5), timeline.branch_path())
        branch = Path(timeline.history.path)
        assert branch.parent == temporary.parent and branch.name.startswith(temporary.stem + ".branch-")
        await settle(timeline, 5)
        saved, parents = timeline.save(tmp_path)
    finally:
        await timeline.close()
    assert not temporary.exists() and not branch.exists()  # the session's own files go with it
    assert parents == 1
    copy = saved.with_name(f"{saved.stem}.parent-1.jsonl")
    assert json.loads(saved.read_text().splitlines()[0])["parent"]["file"] == copy.name
    assert "parent" not in json.loads(copy.read_text().splitlines()[0])


def test_an_older_transcript_replays_but_says_why_it_cannot_branch(tmp_path):
    path = recorded(tmp_path)
    lines = path.read_text().splitlines()
    old = tmp_path / "old.jsonl"  # the same run, as version 2 wrote it: a normal flag, no roles, no rules
    converted = [json.dumps({**json.loads(lines[0]), "version": 2})]
    for line in lines[1:]:
        event = json.loads(line)
        event.pop("rule", None)
        if event["kind"] == "state":
            event["normal"] = event.pop("role") == "normal"
        if event["kind"] not in ("agreement", "violation"):
            converted.append(json.dumps({**event, "seq": len(converted) - 1}))
    old.write_text("\n".join(converted) + "\n")
    timeline = replay(old)
    assert timeline.state.leaders() == [5]
    assert "older version" in timeline.branch_refusal()


@on_asyncio
async def test_a_version_3_transcript_replays_and_branches_as_version_3_which_verifies_and_saves(tmp_path):
    """Version 4 only added the rule: a version 3 run is re-created, so it branches; the
    branch goes on in version 3 (its parent's lines, copied, carry no rule), and so does
    a save of it and of its parent."""
    lines = recorded(tmp_path).read_text().splitlines()
    old = tmp_path / "v3.jsonl"
    events = [json.loads(line) for line in lines[1:]]
    assert any(e.get("rule") for e in events)
    as_written = functools.partial(json.dumps, separators=(",", ":"))  # (as the program writes them: verify compares text)
    old.write_text("\n".join([as_written({**json.loads(lines[0]), "version": 3}),
                              *(as_written({k: v for k, v in e.items() if k != "rule"}) for e in events)]) + "\n")
    assert verify(str(old)) == len(events)
    timeline = replay(old)
    assert timeline.state.leaders() == [5]
    for _ in timeline.re_run(slice_seconds=0):
        pass
    timeline.seek(max(i for i in range(timeline.history.instants) if timeline.history.times[i] == 20))
    assert timeline.branch_refusal() is None
    await branch_of(timeline, Recover(5), timeline.branch_path())
    try:
        await settle(timeline, 15)
        assert timeline.state.leaders() == [5]
        (tmp_path / "saved").mkdir()
        saved, parents = timeline.save(tmp_path / "saved")
    finally:
        await timeline.close()
    branch = tmp_path / "v3.branch-1.jsonl"
    head, *rest = branch.read_text().splitlines()
    assert json.loads(head)["version"] == 3 and len(rest) > len(events) // 2
    assert not any('"rule"' in line for line in rest)
    assert verify(str(branch)) == len(rest)
    assert parents == 1 and verify(str(saved)) == len(rest)
    assert [json.loads(p.read_text().splitlines()[0])["version"] for p in saved.parent.iterdir()] == [3, 3]


def test_what_cannot_mean_anything_at_the_moment_shown_is_refused(tmp_path):
    commands = tuple(at("10 join", "20 leave 2", "25 crash 3"))
    timeline = replay(recorded(tmp_path, algorithm="garcia-molina", commands=commands))
    name = str
    timeline.seek(timeline.history.instants - 1)
    assert timeline.refusal(Crash(2), name) == "node 2 has left the cluster: crash cannot reach it"
    assert timeline.refusal(Crash(3), name) == "node 3 is down already"
    assert timeline.refusal(Leave(3), name) == "node 3 is down: only an up node can leave"
    assert timeline.refusal(Recover(4), name) == "node 4 is up: only a crashed node recovers"
    assert timeline.refusal(Recover(3), name) is None and timeline.refusal(Join(), name) is None
    timeline.seek(1)  # before node 6 joined, before 2 left
    assert timeline.refusal(Crash(6), name) == "node 6 has not joined the cluster yet"
    assert timeline.refusal(Crash(2), name) is None


@on_asyncio
async def test_a_run_that_cannot_keep_up_holds_its_clock_back_and_a_pause_stops_it_where_it_is(tmp_path):
    # A clock far ahead of the work (a storm the run cannot keep up with; here jumps)
    # waits for the run: at most LEAD_SHOWN of wall time ahead (at speed 0.01, a few ms).
    session = Session(nodes=5, config=JITTER)
    timeline = Timeline.live_session(session, ClusterState(session.ids, session.config), speed=0.01, paused=False,
                                     on_events=lambda: None, on_done=lambda _: None)
    try:
        live, engine = timeline.live, timeline.live.cluster.engine
        await settle(timeline)
        live.advance(1000)
        for _ in range(20):
            await asyncio.sleep(0.001)
            timeline.take()
        assert engine.now < 20 and live.now() - engine.now < 1  # without the hold: 1,000 s of work done
        # At speed 1,000 the clock may lead by 250 s; a pause brings it back to the run's time.
        live.set_speed(1000)
        live.advance(200)
        live.pause()
        await settle(timeline)
        assert engine.now < 40 and abs(live.now() - engine.now) < 1e-6 and live.behind == 0
    finally:
        await timeline.close()


@on_asyncio
async def test_a_violation_under_way_at_a_branch_goes_on_in_it_and_ends_with_its_whole_length(tmp_path):
    # (a tester once saw "SLE1 over after 0 s" at a branch's first instant)
    path = recorded(tmp_path, until=80, commands=tuple(at("20 partition 1,2", "50 heal")))
    timeline = replay(path)
    for _ in timeline.re_run(slice_seconds=0):
        pass
    begun = [json.loads(line) for line in path.read_text().splitlines()[1:] if '"phase":"begin"' in line]
    assert begun and all(v["t"] < 35 for v in begun)
    timeline.seek(max(i for i in range(timeline.history.instants) if timeline.history.times[i] <= 35))
    try:
        await branch_of(timeline, Elect(3), timeline.branch_path())
        await settle(timeline, 30)
    finally:
        await timeline.close()
    branch = [json.loads(line) for line in Path(timeline.history.path).read_text().splitlines()[1:]]
    ended = {v["property"]: v for v in branch if v["kind"] == "violation" and v["phase"] == "end"}
    assert set(ended) == {v["property"] for v in begun}
    for v in begun:  # healed at 50: each lasted from its start to then
        assert ended[v["property"]]["t"] == 50 and ended[v["property"]]["duration"] == pytest.approx(50 - v["t"])


@on_asyncio
async def test_a_pause_between_two_instants_keeps_the_time_shown_and_a_command_runs_then():
    # (a tester paused at t=14.06 with nothing due, crashed a node: the crash ran at 12.72,
    # the engine's last instant, and the clock jumped back)
    session = Session(nodes=5, config=JITTER)
    timeline = Timeline.live_session(session, ClusterState(session.ids, session.config), speed=0.01, paused=False,
                                     on_events=lambda: None, on_done=lambda _: None)
    try:
        live, engine = timeline.live, timeline.live.cluster.engine
        await settle(timeline, 20)
        gap = to_seconds(engine.due()) - live.now()
        assert gap > 0.01
        live.advance(gap / 2)  # between two instants: nothing due until the next
        shown = live.now()
        live.pause()
        await settle(timeline)
        assert abs(live.now() - shown) < 1e-6 and engine.now < shown
        seen: list = []
        engine.subscribe(seen.extend)
        timeline.submit(Crash(2))
        await settle(timeline)
        (crash,) = [e for e in seen if e.kind == "command"]
        assert abs(crash.t - shown) <= 3e-6  # (paused, a command moves the clock on by a microsecond to run)
    finally:
        await timeline.close()


@on_asyncio
async def test_a_mutex_session_replays_and_branches_with_its_workload(tmp_path):
    from playground.core.config import Workload

    path = recorded(tmp_path, until=80, algorithm="classic+ricart-agrawala", workload=Workload((1, 4), (0.5, 1)))
    timeline = replay(path)
    for _ in timeline.re_run(slice_seconds=0):
        pass
    last = timeline.history.instants - 1
    for instant in (last // 3, last // 2, last):
        timeline.seek(instant)
        assert shows(timeline, instant)  # the critical section's places and entries too
    assert timeline.state.cs.entries > 10
    timeline.seek(last // 2)
    entries = timeline.state.cs.entries
    try:
        await branch_of(timeline, WantCs(3), timeline.branch_path())
        await settle(timeline, 20)
    finally:
        await timeline.close()
    branch = Path(timeline.history.path)
    assert json.loads(branch.read_text().splitlines()[0])["workload"] == {"think": [1, 4], "hold": [0.5, 1]}
    assert timeline.state.cs.entries > entries
    assert Reader.open(str(branch)).header.workload == Workload((1, 4), (0.5, 1))
