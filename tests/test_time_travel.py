"""Time travel in the app: the keys that go back and forth by instants and markers, the
question before a branch, and a replay read in the background. What the timeline does
at each of them is tested without the app, in test_timeline.py."""

from __future__ import annotations

import json
from pathlib import Path

from playground.cli import live
from playground.cli import main
from playground.core.config import ClusterConfig
from playground.record.reader import Reader
from playground.record.transcript import INDEX_BLOCK
from playground.run.session import Session
from playground.run.state import ClusterState
from playground.run.wiring import run_headless
from playground.ui.app import BullyApp
from playground.ui.branch_screen import BranchScreen
from tests.support import at
from tests.test_app import advance, make_app, on_asyncio, wait_for

JITTER = ClusterConfig(delay_min=0.3, delay_max=1.2)


def folded_to(app: BullyApp, instant: int) -> ClusterState:
    """What a fold of the transcript from its start to the end of `instant` gives."""
    state = ClusterState(app.session.ids, app.session.config)
    end = app.timeline.history.end_of(instant)
    with Reader.open(app.timeline.history.path) as reader:
        state.apply([e for e in reader.events() if e.seq <= end])
    return state


def shows(app: BullyApp, instant: int) -> bool:
    return app.timeline.position == instant and app.state.snapshot() == folded_to(app, instant).snapshot()


@on_asyncio
async def test_back_and_forth_by_instants_and_markers(tmp_path):
    app = make_app(tmp_path, nodes=5, config=JITTER, commands=tuple(at("20 crash 5", "30 recover 5")))
    async with app.run_test(size=(100, 32)) as pilot:
        await advance(pilot, app, 45)
        latest = app.timeline.history.instants - 1
        await pilot.press("comma")
        assert app.live.paused and shows(app, latest - 1)
        assert "⏪ instant" in str(app.status_bar.render())
        await pilot.press("comma", "comma")
        assert shows(app, latest - 3)
        await pilot.press("full_stop")
        assert shows(app, latest - 2)
        await pilot.press("left_curly_bracket")  # back to the last marker: the recovery's command at 30
        assert app.timeline.history.times[app.timeline.position] == 30 and shows(app, app.timeline.position)
        await pilot.press("left_curly_bracket")  # the election after the crash at 20
        election = app.timeline.history.times[app.timeline.position]
        assert 20 < election < 30 and [m.kind for m in app.timeline.history.markers if m.t == election] == ["election"]
        await pilot.press("right_curly_bracket")
        assert app.timeline.history.times[app.timeline.position] == 30
        await pilot.press("home")
        assert shows(app, 0) and app.model.nodes[5].up
        await pilot.press("end")
        assert app.timeline.position is None and app.state.snapshot() == folded_to(app, latest).snapshot()
        await pilot.press("space")  # the present, running again
        assert not app.live.paused


@on_asyncio
async def test_a_command_in_the_past_asks_then_branches_a_new_transcript(tmp_path):
    path = tmp_path / "t.jsonl"
    app = make_app(tmp_path, nodes=5, config=JITTER, transcript=str(path), commands=tuple(at("20 crash 5")))
    async with app.run_test(size=(100, 32)) as pilot:
        await advance(pilot, app, 35)
        await pilot.press("left_curly_bracket")  # the crash
        while app.timeline.history.times[app.timeline.position] != 20:
            await pilot.press("left_curly_bracket")
        instant, end = app.timeline.position, app.timeline.history.end_of(app.timeline.position)
        branched_at = app.timeline.history.times[instant]
        await pilot.press("5", "r")
        assert isinstance(app.screen, BranchScreen)
        await pilot.press("escape")  # stay: nothing happens
        assert not isinstance(app.screen, BranchScreen) and not (tmp_path / "t.branch-1.jsonl").exists()
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: app.timeline.position is None and app.live is not None and app.live.running, "the branch")
        # The command runs when confirmed: the session stays paused, but 5 is up now, not at space.
        await wait_for(pilot, lambda: app.model.nodes[5].up, "the recovery to run")
        assert app.live.paused and [line.text for line in app.model.log if line.kind == "command"][-1] == "user: recover 5"
        parent = path.read_bytes()
        await advance(pilot, app, 15)
        assert app.model.nodes[5].up and app.state.leaders() == [5]
        await pilot.press("ctrl+q")
    branch = tmp_path / "t.branch-1.jsonl"
    assert path.read_bytes() == parent  # the parent is never changed
    head, *events = branch.read_text().splitlines()
    assert json.loads(head)["parent"] == {"file": "t.jsonl", "seq": end}
    assert events[:end + 1] == parent.decode().splitlines()[1:end + 2]  # identical up to the branch
    recovered = [json.loads(e) for e in events[end + 1:] if '"kind":"command"' in e]
    assert [(c["command"], c["args"]) for c in recovered] == [("recover", [5])]
    assert recovered[0]["t"] == round(branched_at + 1e-6, 6)  # just after the instant shown (the engine's rule 2)
    assert main(["verify", str(branch)]) == 0  # the branch re-creates too


def saved(tmp_path, **session) -> Path:
    path = tmp_path / "saved.jsonl"
    run_headless(Session(nodes=5, config=JITTER, commands=tuple(at("20 crash 5", "30 recover 5")),
                         transcript=str(path), **session), 45)
    return path


def replay_app(path: Path) -> BullyApp:
    return live.replay_app(str(path), save_dir=str(path.parent))


@on_asyncio
async def test_a_replay_opens_at_the_end_and_branches_once_re_run(tmp_path):
    app = replay_app(saved(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        last = app.timeline.history.instants - 1
        assert app.live is None and shows(app, last)
        await pilot.press("full_stop")  # the end: nothing after it
        assert app.timeline.position == last
        await pilot.press("comma", "home")
        assert shows(app, 0)
        await wait_for(pilot, lambda: app.timeline.history.reach >= app.timeline.history.times[-1], "the background re-run")
        await pilot.press("end", "comma", "e", "enter")
        await wait_for(pilot, lambda: app.live is not None and app.live.running, "the branch to run")
        assert (tmp_path / "saved.branch-1.jsonl").exists()
        await pilot.press("ctrl+q")


def test_replay_refuses_a_bad_file_with_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text(saved(tmp_path).read_text().splitlines()[0] + "\n")
    assert main(["replay", str(empty)]) == 2 and "has a header but no events" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "none.jsonl")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def long_run(tmp_path: Path) -> Path:
    """Several blocks of events: a replay reads them after its first screen."""
    path = tmp_path / "long.jsonl"
    run_headless(Session(nodes=6, algorithm="stoller", config=JITTER, commands=tuple(at("40 crash 6", "60 recover 6")),
                         transcript=str(path)), 120)
    return path


@on_asyncio
async def test_a_replay_shows_its_first_block_at_once_and_reads_the_rest_as_it_shows(tmp_path):
    path = long_run(tmp_path)
    app = replay_app(path)
    assert app.timeline.history.count == INDEX_BLOCK  # read before any screen: one block
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: app.timeline.loading is None, "the whole file")
        with Reader.open(str(path)) as reader:
            total = sum(1 for _ in reader.events())
        assert total > 4 * INDEX_BLOCK and app.timeline.history.count == total
        assert shows(app, app.timeline.history.instants - 1) and "replay" in str(app.status_bar.render())
        await pilot.press("ctrl+q")


@on_asyncio
async def test_a_replay_of_huge_instants_follows_to_its_last_instant(tmp_path, monkeypatch):
    """A storm's instants hold tens of thousands of events each, more than a batch read:
    the screen stays with the latest instant read until the user goes elsewhere (it
    stayed at t=0), however rarely it is redrawn meanwhile."""
    monkeypatch.setattr("playground.ui.replay_reading.LOADING_SHOWN_EVERY", 1e9)  # no redraw until the end
    path = tmp_path / "storm.jsonl"
    assert main(["--headless", "--nodes", "100", "--delay", "1", "--probe-interval", "0", "--until", "10",
                 "--transcript", str(path)]) == 0
    app = replay_app(path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: app.timeline.loading is None, "the whole file")
        assert app.timeline.history.count > 3 * 8192 and app.timeline.history.instants < 20
        assert app.timeline.position == app.timeline.history.instants - 1
        await pilot.press("ctrl+q")


@on_asyncio
async def test_a_bad_line_far_into_a_replay_ends_it_with_one_line(tmp_path):
    path = long_run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3 * INDEX_BLOCK] = b'{"seq": "x"}\n'
    path.write_bytes(b"".join(lines))
    app = replay_app(path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: app.return_code is not None, "the app to end")
    assert app.return_code == 2
    assert app.failure.startswith("bully-tui: error: ") and "\n" not in app.failure
    assert f"line {3 * INDEX_BLOCK + 1}: field 'kind'" in app.failure  # (lines[0] is line 1, the header)


