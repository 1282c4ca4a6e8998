"""A front end's signals: SIGINT, SIGTERM and SIGHUP quit it as its quit key would
(interrupt.py says how bully-tui stops on a signal). Its own module, apart from the
control surface (control.py names it for the UI), so that the web server, which has
no run of its own, takes it without importing the runtime and Textual (a quarter of a
second of its start)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from . import interrupt


class QuitOnSignals:
    """SIGINT, SIGTERM and SIGHUP (the terminal closed, whether or not a hang-up comes:
    interrupt.watch_terminal), for a front end's life on its asyncio loop: each calls
    `quit` there, as the quit key would, so the run ends cleanly and a temporary
    recording is removed; the first is the one said (`by`:
    the exit status and line are its, cli/output.finished), and a watchdog ends the
    process if the clean quit does not (interrupt.end_soon). Made on the loop."""

    def __init__(self, quit: Callable[[], object], drawn: bool = True):
        """`drawn`: the front end draws on the terminal (an app, not the web server), so it
        ends with it, even where bully-tui began with a stopping signal ignored."""
        self.by: int | None = None
        self._loop = asyncio.get_running_loop()
        self._quit = quit
        self._handlers = interrupt.take_over(self._signalled, every=drawn)
        self._unwatch = interrupt.watch_terminal(lambda: self._signalled(signal.SIGHUP, None)) if drawn else _nothing

    def _signalled(self, signum: int, _frame: object) -> None:
        if self.by is None:
            self.by = signum
            interrupt.end_soon(signum)
        self._loop.call_soon_threadsafe(self._quit)

    def give_back(self) -> None:
        """The handlers as they were before."""
        self._unwatch()
        interrupt.give_back(self._handlers)


def _nothing() -> None:
    pass
