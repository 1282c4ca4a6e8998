"""The live app, driven with Textual's Pilot.

The app starts paused (clock rate 0), and the tests move its clock forward themselves,
then wait on a condition (the cluster has nothing left due by then, and the app has
taken every event). Nothing waits on a fixed sleep, and nothing depends on how fast
this machine is.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from pathlib import Path

import outcome
import pytest

from playground.core.config import ClusterConfig
from playground.record.reader import load
from playground.run.session import Session
from playground.ui.app import BullyApp
from playground.ui.branch_screen import BranchScreen
from playground.ui.compact_grid import CompactGrid
from playground.ui.help_screen import HelpScreen
from playground.ui.steady_footer import SteadyFooter
from protocol import ALGORITHMS, ClassicBully
from tests.support import at

SNAPSHOTS = Path(__file__).parent / "snapshots"


def on_asyncio(test):
    """Run an async test on a fresh asyncio loop (Textual's), with no plugin: pytest-trio
    owns the trio tests, and a second async plugin in auto mode would claim them too."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


async def wait_for(pilot, condition, what: str, limit: float = 20.0, progress=None) -> None:
    """Until `condition()`: for `limit` wall seconds, counted afresh whenever `progress()`
    changes, so the deadline follows the work (a busy machine makes it slower, not stuck).
    Between two looks the loop is left to the app, its timers and the cluster's run: a
    look forces no frame (Pilot's pause would draw the screen each time, and while a
    run catches up with a clock moved far, those frames were most of a test's CPU); the
    app draws as it would, and a caller that reads the screen settles it after."""
    deadline = time.monotonic() + limit
    seen = progress() if progress is not None else None
    while not condition():
        if progress is not None and (now := progress()) != seen:
            seen, deadline = now, time.monotonic() + limit
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def settled(pilot, app: BullyApp) -> None:
    """The cluster has run everything due up to its clock, and the app has drawn it."""
    engine = app.live.cluster.engine
    await wait_for(pilot, lambda: app.live.idle, "the cluster to catch up with its clock",
                   progress=lambda: (engine.now_us, engine.due(), app.model.logged))
    await pilot.pause()
    app.redraw(text=True)  # (the log and the panel too, however soon after their last drawing)
    await pilot.pause()  # (what the drawing laid out and scrolled, done too)


async def advance(pilot, app: BullyApp, seconds: float) -> None:
    await settled(pilot, app)
    app.live.advance(seconds)
    await settled(pilot, app)


async def palette(app) -> dict[str, object]:
    """The command palette's commands as it opens on the app's screen (every provider's,
    Textual's own too): title -> what runs."""
    found = {}
    for provider in app.COMMANDS:
        cls = provider if isinstance(provider, type) else provider()  # (Textual's: a function giving the class)
        async for hit in cls(app.screen).discover():
            found[hit.text] = hit.command
    return found


def make_app(tmp_path, nodes: int = 7, **session) -> BullyApp:
    return BullyApp(Session(nodes=nodes, **session), paused=True, save_dir=str(tmp_path))


def card_text(app: BullyApp, node: int) -> str:
    return app.grid.node_text(node)


@on_asyncio
async def test_seven_nodes_agree_on_seven(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 20)
        assert {n.id: (n.status, n.leader) for n in app.model.nodes.values()} == {i: ("normal", 7) for i in range(1, 8)}
        assert "★" in card_text(app, 7) and "→7" in card_text(app, 1)


@on_asyncio
async def test_x_crashes_the_leader_and_six_takes_over_then_seven_comes_back(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 20)
        await pilot.press("x")
        await advance(pilot, app, 40)  # probe (P=5) + T, then the election
        assert not app.model.nodes[7].up and "down" in card_text(app, 7)
        assert app.state.leaders() == [6] and "★" in card_text(app, 6)
        await pilot.press("7", "r")
        await advance(pilot, app, 20)
        assert app.selected == 7
        assert app.state.leaders() == [7] and "★" in card_text(app, 7)


@on_asyncio
async def test_plus_raises_T_and_the_command_is_in_the_trace(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 1)
        await pilot.press("plus", "plus", "minus")  # each builds on the last, even before the cluster ran it
        await advance(pilot, app, 0.001)
        assert app.live.cluster.engine.config.timeout == 4.5
        commands = [line.text for line in app.model.log if line.kind == "command"]
        assert commands == ["user: timeout 4.5", "user: timeout 5", "user: timeout 4.5"]
        assert "T=4.5" in str(app.status_bar.render())


@on_asyncio
async def test_s_saves_a_transcript_the_engine_loads(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 5)
        await pilot.press("c")
        await advance(pilot, app, 1)
        await pilot.press("s")
        assert app.saved is not None and app.saved.parent == tmp_path
        saved = load(str(app.saved))
        assert saved.header.nodes == list(range(1, 8))
        crash = [e for e in saved.events if e.kind == "command"]
        assert [(c.command, c.args, c.source) for c in crash] == [("crash", (7,), "user")]
        await pilot.press("s")  # a second save never overwrites the first
        assert len(list(tmp_path.glob("bully-classic-n7-seed1-*.jsonl"))) == 2


@on_asyncio
async def test_transcript_option_records_the_whole_session(tmp_path):
    path = tmp_path / "session.jsonl"
    app = make_app(tmp_path, transcript=str(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 3)
        await pilot.press("e")
        await advance(pilot, app, 3)
        await pilot.press("ctrl+q")
    events = load(str(path)).events
    assert [e.command for e in events if e.kind == "command"] == ["elect"]
    assert events[-1].t >= 3


@on_asyncio
async def test_quit_leaves_no_trio_task_and_no_error(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 2)
        await pilot.press("ctrl+q")
    assert isinstance(app.live.outcome, outcome.Value)
    assert not app.live.running and not app.live.cluster.running
    assert app.return_code == 0


@on_asyncio
async def test_an_error_in_trio_surfaces_in_the_app(tmp_path, monkeypatch):
    class Broken(ClassicBully):
        def on_message(self, src, msg):
            raise RuntimeError("bug in a handler")

    monkeypatch.setitem(ALGORITHMS, "classic", Broken)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.live.advance(5)  # the first delivery fails
        await wait_for(pilot, lambda: app.live.outcome is not None, "the run to fail")
        assert isinstance(app.live.outcome, outcome.Error)
        assert app.return_code == 1  # checked here: leaving run_test exits once more, with 0
        assert "bug in a handler" in app.failure


@on_asyncio
async def test_every_key_works_at_odd_moments(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("x")  # 7 leads from t=0 (the highest node wins at once)
        await pilot.press("1", "c")
        await wait_for(pilot, lambda: not app.model.nodes[1].up, "node 1 to crash")
        await pilot.press("c", "e")  # a down node: neither crashes again nor starts an election
        await pilot.press("r")
        await wait_for(pilot, lambda: app.model.nodes[1].up, "node 1 to recover")
        await pilot.press("r", "e", "e")  # an up node does not recover; it may start elections
        said = [n.message for n in app._notifications]
        assert {"Node 1 is down already.", "Node 1 is down: only an up node can start an election.",
                "Node 1 is up: only a crashed node recovers."} <= set(said)
        await pilot.press(*["minus"] * 10, *["left_square_bracket"] * 8, "right_square_bracket")
        await pilot.press("full_stop", "full_stop", "space", "space", "less_than_sign", "greater_than_sign")
        await pilot.press("up", "down", "left", "right", "f", "m", "m", "t", "t", "question_mark", "escape")
        await pilot.press("ctrl+p", "escape")
        await pilot.press("h", "h", "pageup", "pagedown")
        await advance(pilot, app, 30)
        config = app.live.cluster.engine.config
        assert app.live.running and config.timeout == 0.5
        # 0.5:1.5, lowered twice (six more would take the minimum below 0: a step is whole or none), raised once
        assert (config.delay_min, config.delay_max) == (0.25, 1.25)
        commands = [line.text for line in app.model.log if line.kind == "command"]
        assert commands[:5] == ["user: crash 7", "user: crash 1", "user: recover 1", "user: elect 1", "user: elect 1"]
        assert app.live.paused and app.live.speed == 1  # steps pause; space resumes, space pauses; slower, faster
        await pilot.press("ctrl+q")
    assert app.return_code == 0


@on_asyncio
async def test_help_is_generated_from_the_bindings(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(str(static.render()) for static in app.screen.query("Static"))
        for binding in BullyApp.BINDINGS:
            assert binding.tooltip in text
        # Two columns: a long description wraps in its own column, never under the keys.
        keys, what = app.screen.query_one(".row .keys"), app.screen.query_one(".row .what")
        assert what.region.x >= keys.region.right and what.region.right <= app.screen.size.width
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


@on_asyncio
async def test_the_footer_is_made_once_at_start_and_again_only_when_its_keys_change(tmp_path, monkeypatch):
    """Textual's footer makes its keys again at every signal that the bindings may have
    changed: three at the start, for the same keys."""
    made = []
    compose = SteadyFooter.compose

    def counted(footer):
        made.append(footer._bindings_ready)
        yield from compose(footer)

    monkeypatch.setattr(SteadyFooter, "compose", counted)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 1)
        footer = app.screen.query_one(SteadyFooter)
        keys = {key.action: key for key in footer.query("FooterKey")}
        assert made.count(True) == 1 and "save" in keys and not keys["save"].has_class("-disabled")
        app.screen.refresh_bindings()  # the same keys: not made again
        await pilot.pause()
        assert made.count(True) == 1
        monkeypatch.setattr(app, "check_action", lambda action, parameters: None if action == "save" else True)
        app.screen.refresh_bindings()  # s cannot save now (None: shown greyed): the keys are made again
        await pilot.pause()
        keys = {key.action: key for key in footer.query("FooterKey")}
        assert made.count(True) == 2 and keys["save"].has_class("-disabled")


@on_asyncio
async def test_palette_reaches_nodes_beyond_nine(tmp_path):
    app = make_app(tmp_path, nodes=12)
    async with app.run_test(size=(80, 24)):
        titles = await palette(app)
        assert {"Crash node 12", "Recover node 12", "Elect at node 11", "Filter the log: only node 10"} <= set(titles)


@on_asyncio
async def test_log_filters_show_k_of_n(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 5)
        await pilot.press("3", "f")
        assert app.log_view.node_filter == 3
        rendered = app.log_view.visible_text()
        total = len(app.model.log)
        shown = sum(3 in line.nodes and line.role != "detector" for line in app.model.log)
        assert app.log_view.border_subtitle.startswith(f"{shown} of {total} shown · node 3 · detector hidden (h)")
        assert rendered and all("3" in line.split(" ", 1)[1] for line in rendered)


@on_asyncio
async def test_thirty_two_nodes_get_compact_cards_that_wrap(tmp_path):
    # Constant delays: with jitter, start-up at N=32 is a long Election storm (README).
    app = make_app(tmp_path, nodes=32, config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 30)
        assert isinstance(app.grid, CompactGrid) and app.grid.columns == 5
        rows = str(app.grid.render()).splitlines()
        assert len(rows) == 7 and rows[0].split()[0] == "1" and rows[-1].split()[0] == "31"
        assert "★" in card_text(app, 32) and "→32" in card_text(app, 1)
        assert app.state.leaders() == [32]


@on_asyncio
async def test_first_screen_snapshot(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        await pilot.pause()
        svg = app.export_screenshot(title="bully-tui")
    golden = SNAPSHOTS / "first_screen.svg"
    if os.environ.get("UPDATE_SNAPSHOTS") or not golden.exists():
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(svg)
        if not os.environ.get("UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote a new snapshot {golden}: check it, then rerun")
    assert svg == golden.read_text(), "the first screen changed: look at it, then UPDATE_SNAPSHOTS=1 pytest"


@on_asyncio
async def test_a_scenario_plays_out_in_the_live_session(tmp_path):
    app = make_app(tmp_path, commands=tuple(at("5 crash 7", "12 recover 7")))
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 6)
        assert not app.model.nodes[7].up
        await advance(pilot, app, 10)
        assert app.model.nodes[7].up and app.state.leaders() == [7]
        assert [line.text for line in app.model.log if line.kind == "command"] == ["test: crash 7", "test: recover 7"]


@on_asyncio
async def test_a_grid_taller_than_its_share_keeps_the_selected_node_in_view(tmp_path):
    app = make_app(tmp_path, nodes=100, config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        rows = str(app.grid.render()).splitlines()
        assert "100" in rows[-2] and rows[-1].strip().startswith("rows 13–25 of 25")
        await pilot.press("1")
        rows = str(app.grid.render()).splitlines()
        assert rows[0].split()[0] == "1" and "0 above" in rows[-1]


# --- the monitor, other algorithms, scenarios, uuid ids ----------------------------------

SCENARIO_DIR = Path(__file__).parent.parent / "scenarios"


def scenario_app(tmp_path, name: str) -> BullyApp:
    from playground.cli.plan import plan

    session = plan(["--scenario", str(SCENARIO_DIR / name)]).session
    return BullyApp(session, paused=True, save_dir=str(tmp_path))


@on_asyncio
async def test_a_split_brain_raises_the_alert_with_its_moment_and_nodes(tmp_path):
    app = scenario_app(tmp_path, "split-brain-short-timeout.scenario")
    async with app.run_test(size=(100, 24)) as pilot:
        await advance(pilot, app, 21.2)
        text = str(app.alert_bar.render())
        assert app.alert_bar.display and app.alert_bar.has_class("active")
        assert "split brain since t=21.00s · synchrony broken since t=0.00: nodes 4, 5 each lead" in text
        assert any("⚠ split brain: nodes 4, 5 each lead" in line.text for line in app.model.log)
        await advance(pilot, app, 1.5)  # 22.7: the split brain is over; SLE1 starts at 23
        assert "lasted 1.5 s" in str(app.alert_bar.render()) and not app.alert_bar.has_class("active")


@on_asyncio
async def test_the_palette_switches_the_algorithm_by_restarting(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        titles = list(await palette(app))
        assert {"Algorithm: garcia-molina", "Algorithm: stoller", "Algorithm: ring"} <= set(titles)
        assert "Algorithm: classic" not in titles
        assert {"Mutual exclusion: central", "Mutual exclusion: token-ring", "Mutual exclusion: lamport",
                "Mutual exclusion: ricart-agrawala"} <= set(titles) and "Mutual exclusion: none" not in titles
        await pilot.press("plus", "plus", "right_square_bracket", "3")  # T 5, delays 0.75:1.75, node 3
        await advance(pilot, app, 0.01)
        app.action_switch_algorithm("ring")
        await pilot.pause()
    restart = app.restart_with
    assert restart.algorithm == "ring" and app.return_code in (None, 0)
    assert set(app.available_themes) == {"bully-dark", "bully-light"}  # the palette's Theme offers ours only
    assert (restart.config.timeout, restart.config.delay_min, restart.config.delay_max, restart.selected) == (5, 0.75, 1.75, 3)


@on_asyncio
async def test_groups_show_on_the_cards_and_two_groups_in_the_alert_bar_not_as_a_violation(tmp_path):
    app = scenario_app(tmp_path, "partition-invitation.scenario")
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 50)
        text = str(app.alert_bar.render())
        assert "2 groups: 1, 2, 3 → 3 (g3.3); 4, 5, 6 → 6 (g2.6)" in text and not app.alert_bar.has_class("active")
        assert "g3.3" in card_text(app, 1) and "g2.6" in card_text(app, 5)
        await pilot.press("escape", "1")  # (the scenario's claim closed: the panel has its room again)
        # the panel writes the group as the card does (it said "epoch: 3,000,003")
        app.redraw(text=True)
        panel = app.panel.shown_text()
        assert "epoch: g3.3" in panel and "group: g3.3" in panel and "3,000,003" not in panel, panel
        await advance(pilot, app, 50)  # healed at 80, one group from 93
        assert not app.alert_bar.display and "g3.6" in card_text(app, 1)


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIO_DIR.glob("*.scenario")))
@on_asyncio
async def test_every_shipped_scenario_opens_in_the_tui(tmp_path, name):
    app = scenario_app(tmp_path, name)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 35)
        joined = sum(s.command.name == "join" and s.at <= 35 for s in app.session.commands)
        assert len(app.model.nodes) == app.session.nodes + joined
        ran = [line.text for line in app.model.log if line.kind == "command"]
        assert ran or not [s for s in app.session.commands if s.at <= 35]  # its commands ran (a drift needs none)
        assert f"T={app.session.config.timeout:g}" in str(app.status_bar.render())


@on_asyncio
async def test_garcia_molina_nodes_show_their_own_statuses_and_variables(tmp_path):
    app = make_app(tmp_path, nodes=4, algorithm="garcia-molina", config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 0.5)
        assert app.model.nodes[4].status == "election"  # halting the others
        await advance(pilot, app, 10)
        await pilot.press("1")
        await advance(pilot, app, 0.001)
        panel = app.panel.shown_text()
        assert "halted by: 4" in panel and "task: task of epoch" in panel and "epoch: " in panel
        assert "e1" in card_text(app, 1) or "e2" in card_text(app, 1)


@on_asyncio
async def test_uuid_ids_are_shown_short_and_digits_select_by_rank(tmp_path):
    app = make_app(tmp_path, nodes=5, id_kind="uuid")
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 10)
        ids = app.session.ids
        labels = app.model.label
        assert all(len(labels[i]) == 4 for i in ids) and labels[ids[0]] == f"{ids[0]:032x}"[:4]
        assert labels[ids[0]] in card_text(app, ids[0]) and "→" + labels[ids[-1]] in card_text(app, ids[0])
        await pilot.press("2")
        assert app.selected == ids[1]
        assert f"node {labels[ids[1]]}" == app.panel.border_title


@on_asyncio
async def test_a_live_sessions_transcript_is_re_created_exactly(tmp_path, capsys):
    """Keys pressed at odd moments (mid-election, while paused, between instants) are
    commands at times a re-run can replay: `verify` finds every event the same."""
    from playground.cli import main

    path = tmp_path / "live.jsonl"
    app = make_app(tmp_path, transcript=str(path), config=ClusterConfig(delay_min=0.3, delay_max=1.2))
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 1.37)
        await pilot.press("x", "plus", "3", "e")
        await advance(pilot, app, 9.5)
        await pilot.press("full_stop", "full_stop", "7", "r", "minus", "right_square_bracket")
        await advance(pilot, app, 20)
        await pilot.press("ctrl+q")
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: identical, ")


@on_asyncio
async def test_with_a_mutex_w_asks_and_the_card_and_the_log_show_who_waits_and_who_is_inside(tmp_path):
    from playground.core.config import Workload

    app = make_app(tmp_path, nodes=4, algorithm="classic+central", workload=Workload(think=None, hold=(30, 30)))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 10)  # 4 leads: the lock server
        await pilot.press("2", "w")
        await settled(pilot, app)
        assert "⧖" in app.grid.node_text(2)
        await advance(pilot, app, 5)  # Request and Grant, a round trip
        assert "▣" in app.grid.node_text(2) and "⧖" not in app.grid.node_text(2)
        texts = [line.text for line in app.model.log]
        assert "node 2 wants the critical section · central 1" in texts  # (each with the lock's rule that made it)
        assert "node 2 enters the critical section · central 2" in texts
        request = next(text for text in texts if "Request" in text)
        assert request.startswith("2→4 Request #") and request.endswith(" · central 1")
        assert app.sub_title == "classic Bully + central lock"
        app.redraw()
        bar = str(app.status_bar.render())
        # 2 is inside and no request has ended: messages per entry are not yet defined (counted per request done)
        assert "CS 1 in · msgs each: after a first exit" in bar, bar
    plain = make_app(tmp_path, nodes=3)
    async with plain.run_test(size=(100, 30)) as pilot:
        await pilot.press("w")  # no mutex: one line says why, nothing is recorded
        await settled(pilot, plain)
        assert not [line for line in plain.model.log if line.kind == "command"]


@on_asyncio
async def test_the_palette_switches_the_mutex_but_not_to_a_token_with_no_link_delay(tmp_path):
    from playground.core.config import ClusterConfig

    app = make_app(tmp_path, nodes=3, config=ClusterConfig(delay_min=0, delay_max=0))
    async with app.run_test(size=(100, 30)) as pilot:
        app.action_switch_algorithm("classic+token-ring")
        await pilot.pause()
        assert app.restart_with is None  # refused: the token would go round for ever at one instant
        app.action_switch_algorithm("classic+lamport")
        await pilot.pause()
    assert app.restart_with.algorithm == "classic+lamport"


@on_asyncio
async def test_a_branch_of_a_temporary_recording_says_where_it_is_and_that_s_keeps_it(tmp_path):
    """After a branch the app said "The session is not being kept", though the branch is
    recorded, to a temporary file: it says where, and that `s` keeps it."""
    app = make_app(tmp_path, nodes=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 8)
        await pilot.press("home", "c")
        assert isinstance(app.screen, BranchScreen) and "removed when you quit: s keeps both" in app.screen.text.plain
        await pilot.press("y")
        await wait_for(pilot, lambda: any("A new future" in n.message for n in app._notifications), "the notice")
        note = next(n.message for n in app._notifications if "A new future" in n.message)
        branch = app.timeline.history.path
        assert branch.endswith(".branch-1.jsonl") and Path(branch).exists() and app.kept_transcript is None
        assert f"recorded to a temporary file, {branch}, removed when you quit" in note
        assert f"s keeps it (with what it branched from) in {tmp_path.resolve()}" in note and "not being kept" not in note
        await pilot.press("s")
        assert app.saved is not None and app.saved.parent == tmp_path and load(str(app.saved)).events
