"""Every shipped lesson played to its end in the real app (Textual's Pilot), pressing the
keys a student would: the task's keys as the pane names them (once, first, a wrong key,
whose hint the pane must say), → where a step is read, and otherwise nothing but time.

Time is the test's, as in test_app.py: the app's clock never runs by itself (the pace
the lesson asks for is noted, not kept), and the test moves it, waiting each time for
the run to catch up and the app to take every event. Where a step waits for an event,
the clock goes at once to the moment the same step ended in a headless play of the
lesson (run/lesson_headless.py), and from there a second at a time until the app's
step is over: the app itself must see the step end, with every event it took on the
way, and no key is pressed meanwhile. Every step's condition must come within
STEP_BOUND seconds of virtual time from its start. A
step with a run of its own ends the app with a Restart, and the next app is opened as
the command line opens it (cli/lesson.py's session_of)."""

from __future__ import annotations

import pytest

from lessons import FOLDER
from playground.cli.lesson import session_of
from playground.record.lesson import read_lesson
from playground.run.lesson import LessonAt
from playground.run.lesson_headless import STEP_BOUND, play_headless
from playground.run.live import LiveRun
from playground.ui.app import BullyApp
from playground.ui.help_screen import HelpScreen
from tests.test_app import on_asyncio, settled, wait_for
from tests.test_palette import first_hit
from tests.test_redraws import Refreshes

LESSONS = sorted(FOLDER.glob("*.lesson"))
TICK = 1.0  # virtual seconds the test moves the clock at a time


@pytest.fixture
def clock_by_hand(monkeypatch):
    """The app's pace asked for, not kept: the clock moves only when the test says."""
    monkeypatch.setattr(LiveRun, "_set_rate", lambda self, rate: None)


def lesson_app(tmp_path, lesson, step: int) -> BullyApp:
    """The app a lesson's step `step` opens in, as the command line opens it (paused: the test moves the clock)."""
    return BullyApp(session_of(lesson, step), paused=True, save_dir=str(tmp_path), lesson=LessonAt(lesson, step))


async def later(pilot, app: BullyApp, seconds: float) -> None:
    """`seconds` of virtual time on, the app having taken every event and looked at the time.
    What was pressed reaches the run first: a command runs at the run's time when it
    arrives, so a clock moved before that would move the command too."""
    await settled(pilot, app)
    app.live.advance(seconds)
    await settled(pilot, app)
    app.guide.tick()  # (as its timer does, for `until time`)


def pane_text(app: BullyApp) -> str:
    pane = app.guide.pane
    return f"{pane.border_title}\n{pane.status.render()}\n{pane.text.source}"


def task_keys(task, app: BullyApp) -> list[str]:
    """What a student presses for `task`: its key, after the node's digit."""
    if task.leader:
        return ["x"]
    if task.command == "timeout":
        return ["minus" if task.below is not None else "plus"]
    key = {"crash": "c", "recover": "r", "elect": "e", "leave": "l", "want": "w", "join": "j", "heal": "P",
           "partition": "p"}[task.command]
    if task.command in ("join", "heal"):
        return [key]
    rank = task.group[0] if task.group else task.node
    if rank is None:  # any node: the first that can (up, or down to recover)
        state = app.state
        ids = state.ids
        fits = [i for i in ids if (i in state.down) == (task.command == "recover") and i not in state.left]
        rank = ids.index(fits[0]) + 1
    assert rank <= 9, "a node beyond 9 is selected with the arrows: not in a lesson yet"
    return [str(rank), key]


async def palette_split(pilot, app: BullyApp, group: tuple[int, ...]) -> None:
    """A partition of several nodes: the palette's split of the lowest ranks from the rest."""
    nodes = len(app.state.ids)
    split = max(group) if min(group) == 1 else min(group) - 1
    await pilot.press("ctrl+p", *f"split the cluster: ..{split} |")
    await first_hit(pilot, app, f"Split the cluster: ..{split} |")
    await pilot.press("enter")
    assert split < nodes


async def wrong_key(pilot, app: BullyApp, task) -> None:
    """A key the run refuses and the task does not ask for: recover a node that is up (or,
    where the task is to recover any node, crash one that is down). The pane says the hint."""
    state = app.state
    if task.command == "recover" and task.node is None:
        node, key = min(state.down), "c"
    else:
        node, key = next(i for i in state.ids if i not in state.down and i not in state.left), "r"
    await pilot.press(str(state.ids.index(node) + 1), key)
    expected = app.guide.play.step.hint or "This step asks you to"
    assert app.guide.hint is not None and app.guide.hint.startswith(expected)
    assert "✋" in str(app.guide.pane.status.render())


async def play_app(app: BullyApp, wrong: list[bool], ends: dict[int, float]) -> list[tuple[int, str, float]]:
    """The app's steps played until the lesson ends or a step starts a run of its own:
    (step, its title, the virtual seconds it took) for each. `ends`: when each step
    ended headless, where the clock goes first while a step waits."""
    played = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        guide = app.guide
        while app.restart_with is None and not guide.finished:
            play = guide.play
            index, began, step = play.index, play.now.began, play.step
            pace = play.pace()
            assert pace is None or app.live.speed == pace, (step.title, app.live.speed, pace)
            while play.index == index and app.restart_with is None and not guide.finished:
                now = play.now
                if step.task is not None and not now.task_done:
                    if wrong[0]:
                        wrong[0] = False
                        await wrong_key(pilot, app, step.task)
                    if len(step.task.group) > 1:
                        await palette_split(pilot, app, step.task.group)
                    else:
                        await pilot.press(*task_keys(step.task, app))
                    await settled(pilot, app)
                elif step.until is not None and not now.met:
                    assert app.timeline.now() - began <= STEP_BOUND, f"step {step.title!r} did not end in time"
                    ahead = ends.get(index, 0.0) - app.live.now()
                    await later(pilot, app, ahead if ahead > 0 else TICK)
                else:
                    await pilot.press("right")
                    await settled(pilot, app)
            played.append((index, step.title, app.timeline.now() - began))
            if guide.finished:
                assert "the end of the lesson" in pane_text(app)
        if guide.finished:
            await pilot.press("escape")  # the lesson left: the run goes on, every key works
            assert not guide.pane.display and app.restart_with is None
            await pilot.press("left")  # (a node selected again, not a step back)
            assert app.guide.play.index == len(app.guide.play.lesson.steps) - 1
    return played


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
@on_asyncio
async def test_every_shipped_lesson_plays_to_its_end_in_the_app(tmp_path, path, clock_by_hand):
    lesson = read_lesson(str(path))
    ends = {r.index: r.ended for r in play_headless(lesson, lambda k: session_of(lesson, k))}
    index, wrong, played = 0, [True], []
    while True:
        app = lesson_app(tmp_path, lesson, index)
        played += await play_app(app, wrong, ends)
        if app.restart_with is None:
            break
        assert app.restart_with.lesson.step == played[-1][0] + 1
        index = app.restart_with.lesson.step
    assert [k for k, _, _ in played] == list(range(len(lesson.steps)))
    assert not wrong[0] or not any(s.task for s in lesson.steps), "no task was done wrong"  # (a lesson may have none)


@on_asyncio
async def test_the_bully_lesson_counts_45_36_9_and_the_student_makes_a_split_brain(tmp_path, clock_by_hand):
    lesson = read_lesson(str(FOLDER / "bully.lesson"))
    app = lesson_app(tmp_path, lesson, 4)  # the worst case
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        await later(pilot, app, 30)
        assert app.guide.play.index == 5
        assert "45 Election, 36 Answer and 9 Coordinator messages" in pane_text(app)
    app = lesson_app(tmp_path, lesson, 8)  # a slow network
    async with app.run_test(size=(80, 24)) as pilot:
        await later(pilot, app, 6)
        assert app.guide.play.index == 9 and "your turn: lower T below 3 s (-)" in pane_text(app)
        await pilot.press("minus", "minus")
        await settled(pilot, app)
        assert app.guide.play.index == 9 and app.guide.hint is None  # (two steps down, T = 3: not below yet)
        await pilot.press("minus")
        await settled(pilot, app)
        assert app.guide.play.index == 10 and app.state.config.timeout == 2.5
        await pilot.press("4", "e")
        await later(pilot, app, 3)
        assert app.guide.play.index == 11 and len(app.state.leaders()) >= 1
        assert any("split brain" in line.text for line in app.model.log)


@on_asyncio
async def test_back_goes_to_the_moment_the_step_began_and_a_link_opens_the_glossary(tmp_path, clock_by_hand):
    app = lesson_app(tmp_path, read_lesson(str(FOLDER / "bully.lesson")), 0)
    async with app.run_test(size=(80, 24)) as pilot:
        await later(pilot, app, 5)
        await pilot.press("right")  # step 2 read: step 3, crash the leader
        guide = app.guide
        assert guide.play.index == 2
        began = guide.play.now.began
        await later(pilot, app, 3)
        await pilot.press("x")
        await settled(pilot, app)
        assert not app.model.nodes[5].up
        await pilot.press("right")  # a step that waits: → asks first
        assert guide.play.index == 2 and "press → again to skip it" in guide.hint
        await pilot.press("left")  # back to step 2, at the moment it began: node 5 up again
        await wait_for(pilot, lambda: guide.play.index == 1 and app.model.nodes[5].up, "the run back at step 2")
        assert app.timeline.now() <= began and app.live is not None
        guide.pane.text.post_message(guide.pane.text.LinkClicked(guide.pane.text, "glossary#epoch"))
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the glossary")
        await pilot.pause()
        found = app.screen.query(".found")
        assert len(found) == 1 and "Epoch" in found.first().source
        await pilot.press("escape")


@on_asyncio
async def test_the_seconds_left_are_said_without_laying_the_screen_out_and_a_hint_makes_room(tmp_path, clock_by_hand,
                                                                                              monkeypatch):
    """The status above the narration says each second how long a step waits: the same
    height, so it is redrawn, not laid out (Textual's update would lay the screen out)."""
    app = lesson_app(tmp_path, read_lesson(str(FOLDER / "bully.lesson")), 8)  # a slow network: until time 5
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)
        status = app.guide.pane.status
        assert "(5 s left)" in str(status.render())
        counted = Refreshes(monkeypatch, [status])
        await later(pilot, app, 1)
        assert "(4 s left)" in str(status.render()) and counted.of(status)
        assert not any(layout for _, layout in counted.of(status))
        await later(pilot, app, 5)
        assert app.guide.play.index == 9
        lines = status.size.height
        counted.calls.clear()
        await wrong_key(pilot, app, app.guide.play.step.task)  # the hint, on lines of its own
        await settled(pilot, app)
        assert any(layout for _, layout in counted.of(status))
        assert status.size.height == status.visual.get_height(status.styles, status.content_size.width) > lines
