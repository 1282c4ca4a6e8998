"""The lesson menu (ui/lesson_menu.py), `bully-tui lesson` on a terminal: every shipped
lesson listed in its order with its title, steps and line, picked with the arrows or
its number, opened with enter in the live app at its first step, and the menu again,
at that lesson, once the student leaves the lesson's app; q quits. Piped, the command
still prints the list (tests/test_lessons.py). Played with Textual's Pilot at 80x24:
each app the command line opens is driven by a script of keys (`scripted`)."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual import messages
from textual.widgets import ListView

from playground.cli import lesson as lesson_command
from playground.cli import live
from playground.record.lesson import shipped
from playground.ui import lesson_menu
from playground.ui.app import BullyApp
from playground.ui.help_screen import HelpScreen
from playground.ui.lesson_menu import LessonMenu
from tests.test_app import on_asyncio, wait_for

LESSONS = shipped()


def highlighted(menu: LessonMenu) -> int | None:
    return menu.query_one(ListView).index


@on_asyncio
async def test_the_menu_lists_every_lesson_in_order_and_the_keys_pick_one():
    menu = LessonMenu(LESSONS)
    async with menu.run_test(size=(80, 24)) as pilot:
        items = menu.query_one(ListView).children
        assert len(items) == len(LESSONS) >= 14
        first = items[0].query("Static")
        assert [str(s.render()) for s in first] == ["1", f"{LESSONS[0].title} · {len(LESSONS[0].steps)} steps",
                                                     LESSONS[0].about]
        texts = [str(s.render()) for item in items for s in item.query(".title")]
        assert texts == [f"{lesson.title} · {len(lesson.steps)} steps" for lesson in LESSONS]
        assert "a playground for leader election" in str(menu.query_one("#about").render())
        assert str(menu.query_one("#keys").render()).startswith("↑/↓ 1–14 pick · enter opens · ? help · q quits")
        assert menu.query_one(ListView).border_subtitle == "bully-tui lesson bully"
        assert items[0].region.height == 3 and items[0].region.width >= 70  # (its line wraps under its title)
        assert highlighted(menu) == 0
        await pilot.press("down", "down")
        assert highlighted(menu) == 2
        assert menu.query_one(ListView).border_subtitle == f"bully-tui lesson {LESSONS[2].name}"
        await pilot.press("up")
        assert highlighted(menu) == 1
        menu._typed_at = -lesson_menu.DIGIT_PAUSE  # (a pause since the last digit)
        await pilot.press("5")
        assert highlighted(menu) == 4
        await pilot.press("?")
        assert isinstance(menu.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("enter")
    assert menu.chosen == 4 and menu.return_code == 0


@on_asyncio
async def test_two_digits_typed_together_pick_a_lesson_beyond_nine_and_q_quits(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(lesson_menu, "monotonic", lambda: now[0])
    menu = LessonMenu(LESSONS, at=3)
    async with menu.run_test(size=(80, 24)) as pilot:
        assert highlighted(menu) == 3
        await pilot.press("1", "2")
        assert highlighted(menu) == 11  # (the list scrolled to it: its item is in view)
        assert menu.query_one(ListView).children[11].region.bottom <= menu.query_one(ListView).region.bottom
        now[0] += lesson_menu.DIGIT_PAUSE
        await pilot.press("2")
        assert highlighted(menu) == 1
        await pilot.press("9", "9")  # (no lesson 99: the second 9 starts afresh)
        assert highlighted(menu) == 8
        await pilot.press("0")  # (no lesson 90 or 0: nothing moves)
        assert highlighted(menu) == 8
        await pilot.press("q")
    assert menu.chosen is None and menu.return_code == 0


def scripted(monkeypatch, scripts: list) -> list:
    """Each app the command opens runs (headless, 80x24) the next of `scripts`, an async
    function of the app and its pilot; the apps, in the order they ran."""
    ran = []

    def run(app, *_, **__):
        async def play():
            async with app.run_test(size=(80, 24)) as pilot:
                await scripts.pop(0)(app, pilot)

        ran.append(app)
        asyncio.run(play())

    monkeypatch.setattr(LessonMenu, "run", run)
    monkeypatch.setattr(BullyApp, "run", run)
    monkeypatch.setattr(lesson_command, "can_draw", lambda: True)
    monkeypatch.setattr(live, "need_a_terminal", lambda *_: None)
    return ran


async def pick_second(menu, pilot):
    assert highlighted(menu) == 0
    await pilot.press("down", "enter")


async def first_step_then_quit(app, pilot):
    await wait_for(pilot, lambda: app.guide.pane.border_title, "the lesson's pane drawn")
    assert app.guide.narrating and app.guide.play.index == 0 and app.guide.play.lesson.name == LESSONS[1].name
    assert re.match(r"1/\d+ · ", app.guide.pane.border_title)
    await pilot.press("ctrl+q")


def test_enter_opens_the_lesson_at_its_first_step_and_leaving_it_comes_back_to_the_menu(monkeypatch, capsys):
    async def back_at_the_second(menu, pilot):
        assert highlighted(menu) == 1
        await pilot.press("q")

    ran = scripted(monkeypatch, [pick_second, first_step_then_quit, back_at_the_second])
    assert lesson_command.run([]) == 0
    assert [type(app) for app in ran] == [LessonMenu, BullyApp, LessonMenu]
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("ending", ["page gone", "failure"])
def test_a_lessons_app_ended_otherwise_than_by_its_key_ends_the_command(monkeypatch, ending):
    """Served, a closed tab quits the app (the driver's quit, no key): no menu after it,
    whose page would be gone; nor after an app that failed."""
    async def ends(app, pilot):
        await wait_for(pilot, lambda: app.guide.play is not None, "the lesson to start")
        if ending == "page gone":
            app.post_message(messages.ExitApp())
        else:
            app.fail(1, "bully-tui: the simulation failed")

    ran = scripted(monkeypatch, [pick_second, ends])
    monkeypatch.setattr(lesson_command, "left_by_page", lambda app: app.return_code is None)
    assert lesson_command.run([]) == (0 if ending == "page gone" else 1)
    assert [type(app) for app in ran] == [LessonMenu, BullyApp]
