"""Textual's Pilot waits for the app to be idle by sleeping: after each key it presses
and in `pilot.pause()`, `textual._wait.wait_for_idle` sleeps 20 ms at a time until this
process used less than 1 ms of CPU over one of them (at most a second). That is wall
time the suite spends doing nothing (a lesson played in the app slept about half its
time), and a wait that ends by the clock: while the process is busy (the cluster's trio
run works on the same thread) it runs to its second, and whatever was still to do is
left to chance.

Here the wait is for what it stands for: every message pump of the running app (the
app, its screen and the screen's widgets) has nothing queued, nothing pending, no
callback waiting and, if it runs, is parked waiting for its next message (not in the
middle of a handler that awaits); no resize waits for the app's timer (1/120 s), and
the screen has no layout, repaint or after-refresh callback due (its update timer's,
1/60 s): what those two timers would do is done at once. That, twice in a row with the
loop given a turn in between. What a test waits for beyond the app's messages (the
cluster's run, a worker, a process) it awaits as a condition of its own
(tests/test_app.py's wait_for).

It reads Textual's private attributes, which is why textual is pinned (pyproject.toml)."""

from __future__ import annotations

import asyncio
import time

import textual.app
import textual.pilot
from textual._context import active_app

CALM = 2  # turns of the loop in a row with nothing to do
LIMIT = 30.0  # wall seconds without calm before the wait says what never settled


async def until_the_app_settles(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """wait_for_idle's replacement (its arguments, unused: the wait is on the queues)."""
    app = active_app.get(None)
    calm, deadline = 0, time.monotonic() + LIMIT
    while calm < CALM:
        await asyncio.sleep(0)
        if app is None or not app.is_running:
            return
        screen = _screen(app)
        busy = _busy(app, screen)
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never settled: {[repr(pump) for pump in busy]}")
        if busy or app._batch_count:  # (a batch holds the drawing back: it ends by itself)
            calm = 0
        elif app._resize_event is not None and screen is not None:  # (the app's resize timer's work, now)
            app._check_resize()
            calm = 0
        elif screen is not None and _repaint_due(screen):  # (the screen's update timer's, now)
            screen._on_timer_update()
            calm = 0
        else:
            calm += 1


def _screen(app: textual.app.App) -> textual.app.Screen | None:
    try:
        return app.screen
    except textual.app.ScreenStackError:  # (no screen yet, or the last is going)
        return None


def _busy(app: textual.app.App, screen: textual.app.Screen | None) -> list[object]:
    """The pumps with something still to do (empty: none)."""
    pumps = [app] if screen is None else [app, *screen.walk_children(with_self=True)]
    return [pump for pump in pumps
            if not pump._message_queue.empty() or pump._pending_message is not None or pump._next_callbacks
            or (pump._running and not pump._message_queue.ready_event._waiters)]  # (in a handler that awaits)


def _repaint_due(screen: textual.app.Screen) -> bool:
    return bool(screen._layout_required or screen._scroll_required or screen._repaint_required
                or screen._dirty_widgets or screen._recompose_required or screen._callbacks)


def install() -> None:
    """Pilot's waits (keys, pause) and the app's key presses wait on the queues."""
    textual.pilot.wait_for_idle = until_the_app_settles
    textual.app.wait_for_idle = until_the_app_settles
