"""The garbage collector while the simulation's app runs.

Its full collections walk every object alive: Textual's, and in a storm hundreds of
thousands of the run's. That took 100 to 300 ms, a visible stall whenever it came. So:
everything built before the run (Textual, its CSS, the widgets) is frozen, out of the
collector's sight; young collections come less often (objects of a window die by
reference counting before one, so few are promoted); and full collections come only
while the app stands still (paused, or a replay), once per pause, when nobody waits for
a frame. The run's objects are freed by reference counting (its data has no cycles);
bench/ui.py shows memory stays flat.

The policy is left as it is when the app ends: the process ends then, and undoing it
would make the next collection walk every object the run left, a second and more at
N = 64 (cli/live.release frees them when another app follows; tests/conftest.py
restores the policy between tests)."""

from __future__ import annotations

import gc
from collections.abc import Callable

from textual.app import App

GC_YOUNG, GC_MIDDLE, GC_NEVER = 20_000, 20, 1_000_000_000  # the collector's thresholds while the app runs
GC_EVERY = 2.0  # seconds between two looks for a quiet moment to collect garbage in


def collect_while_quiet(app: App, quiet: Callable[[], bool]) -> None:
    """Freeze what is built, collect rarely, and fully only once per stretch of `quiet()`."""
    collected = False  # a full collection was made during the current stretch

    def look() -> None:
        nonlocal collected
        still = quiet()
        if still and not collected:
            gc.collect()
        collected = still

    app.set_interval(GC_EVERY, look)
    gc.freeze()
    gc.set_threshold(GC_YOUNG, GC_MIDDLE, GC_NEVER)
