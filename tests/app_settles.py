"""Textual's Pilot waits for the app to be idle by sleeping: after each key it presses
and in `pilot.pause()`, `textual._wait.wait_for_idle` sleeps 20 ms at a time until the
process used less CPU than 1 ms over one of them (at most a second). That is wall time
the suite spends doing nothing (a lesson played in the app slept about half its time),
and a verdict on the machine's speed: under load the process is never "idle" and the
wait runs to its second.

Here the wait is for what it stands for: every message pump of the running app (the
app, its screen and the screen's widgets) has nothing queued, nothing pending and no
callback waiting, no resize waiting for the app's timer (1/120 s), and the screen no
layout, repaint or after-refresh callback due (its update timer's, every 1/60 s): what
those timers would do is done at once. Twice in a row with the loop
given a turn in between. What a test
waits for beyond the app (the cluster's trio run, a worker thread, a process) it
awaits as a condition of its own (tests/test_app.py's wait_for)."""

from __future__ import annotations

import asyncio

import textual.app
import textual.pilot
from textual._context import active_app

ROUNDS = 10_000  # turns of the loop before the wait gives up (a pump that never drains)
CALM = 2  # turns in a row with every queue empty


async def until_the_app_settles(min_sleep: float = 0.0, max_sleep: float = 1.0) -> None:
    """wait_for_idle's replacement (its arguments, unused: the wait is on the queues)."""
    app = active_app.get(None)
    calm = 0
    for _ in range(ROUNDS):
        await asyncio.sleep(0)
        if app is None or not app.is_running:
            return
        if not _drained(app):
            calm = 0
        elif app._resize_event is not None:  # (what the app's resize timer would do, now)
            app._check_resize()
            calm = 0
        elif _repaint_due(app):  # (what the screen's update timer would do, now)
            app.screen._on_timer_update()
            calm = 0
        else:
            calm += 1
            if calm >= CALM:
                return


def _drained(app: textual.app.App) -> bool:
    try:
        pumps = [app, *app.screen.walk_children(with_self=True)]
    except Exception:  # (no screen yet, or it is going: nothing to wait for on it)
        pumps = [app]
    return all(pump._message_queue.empty() and pump._pending_message is None and not pump._next_callbacks
               for pump in pumps)


def _repaint_due(app: textual.app.App) -> bool:
    try:
        screen = app.screen
    except Exception:
        return False
    return bool(screen._layout_required or screen._scroll_required or screen._repaint_required or screen._dirty_widgets
                or screen._recompose_required or screen._callbacks)


def install() -> None:
    """Pilot's waits (keys, pause) and the app's key presses wait on the queues."""
    textual.pilot.wait_for_idle = until_the_app_settles
    textual.app.wait_for_idle = until_the_app_settles
