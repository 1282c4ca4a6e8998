"""Stopping on a signal, at any moment: one line, the usual status, and whole files.

SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) are taken over as soon as
`bully-tui` starts (cli.main, before its heavy imports). The first one raises `Stopped`,
a KeyboardInterrupt, so that no `except Exception` on the way swallows it; the command
that was running closes its files on the way out (a transcript at its last whole
line), and cli.main turns it into one line, "bully-tui: interrupted at t=12.3 s; the
transcript so far is in FILE", and the status 128 + the signal's number (130 for
Ctrl-C). That clean-up is not interrupted in its turn: a second signal, from someone
who will not wait, ends the process at once with the same status, and the guardian
(guard.py) mends what it was writing.

Inside a trio run (a headless run, --compare) a signal must not raise in the middle of
trio's own code: there trio takes it (`run_trio`) and cancels the run between two of
its steps, and the Stopped is raised once trio is done. The live app takes the signals
over for its life (`take_over`), and quits as on ctrl+q (ui/app.py), with a watchdog
(`end_soon`) in case the clean quit cannot finish.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Seconds a signal gives the live app's clean quit before the process ends anyway. The
# terminal closing (SIGHUP) gives less: nobody sees the screen, and drawing it can block.
QUIT_WITHIN = {signal.SIGINT: 1.5, signal.SIGTERM: 1.5, signal.SIGHUP: 0.3}


class Stopped(KeyboardInterrupt):
    """A signal stopped the command. Whoever knows more says so on the way out: the
    virtual time the run had reached (`t`) and the transcript it leaves (`transcript`)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.t: float | None = None
        self.transcript: str | None = None
        self.done: str | None = None  # how far the command got, where that helps (a hunt: what it searched)

    @property
    def status(self) -> int:
        return 128 + self.signum

    def line(self) -> str:
        what = "interrupted" if self.signum == signal.SIGINT else f"stopped by {signal.Signals(self.signum).name}"
        at = f" at t={self.t:g} s" if self.t is not None else ""
        kept = f"; the transcript so far is in {self.transcript}" if self.transcript else ""
        done = f"; {self.done}" if self.done else ""
        return f"bully-tui: {what}{at}{kept}{done}"


_first: Stopped | None = None  # the signal being handled
_said = False  # its line has been printed


def _handle(signum: int, _frame: object) -> None:
    global _first
    if _first is not None:  # a second signal while the first is handled: out, now
        try:
            if not _said:
                os.write(2, f"{Stopped(signum).line()}\n".encode())
        finally:
            os._exit(128 + signum)
    _first = Stopped(signum)
    raise _first


def raise_if_stopped() -> None:
    """Raise the signal that came, if its Stopped was swallowed: one that lands while
    Python imports a module can be raised inside importlib's own callback, which only
    prints "Exception ignored" (the campaign found a run that then went on for ever).
    Called where a command is about to run for long: a trio run, the live app."""
    if _first is not None and not _said:
        raise _first


def said(stop: Stopped) -> str:
    """`stop`'s line, to print once, when all is cleaned up: what is left is to exit, and
    from now on the signals are ignored (Python's own tear-down would otherwise meet a
    second Ctrl-C with the default handler, and die of it)."""
    global _said
    _said = True
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    return stop.line()


def install() -> None:
    """Take the signals over (for the whole program: `bully-tui` does it first thing)."""
    for signum in SIGNALS:
        signal.signal(signum, _handle)


@contextmanager
def handled() -> Iterator[None]:
    """The signals are ours for the duration. Where they were not already (cli.main
    called in-process, by a test), what handled them before does again after."""
    global _first, _said
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    ours = all(handler is _handle for handler in previous.values())
    install()
    try:
        yield
    finally:
        if not ours:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            _first, _said = None, False


def stopped_by(error: BaseException) -> Stopped | None:
    """The signal behind `error`, if a signal stopped things: the error itself, or one
    inside trio's exception groups or the chain of causes (a signal that came while trio
    ran its own code reaches us as trio's internal error, caused by it). A plain
    KeyboardInterrupt (Python's own handler, before ours was in place) is a Ctrl-C."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Stopped):
            return e
        if isinstance(e, KeyboardInterrupt):
            return Stopped(signal.SIGINT)
        if isinstance(e, BaseExceptionGroup):
            todo += e.exceptions
        todo += [c for c in (e.__cause__, e.__context__) if c is not None]
    return None


def run_trio(fn: Callable[..., Awaitable[Any]], *args: Any, clock: Any = None) -> Any:
    """trio.run(fn, *args), which a signal cancels between two steps, never inside trio's
    own code (a Stopped raised there could leave trio half-done, and say so in a
    traceback). The Stopped is raised once the run has ended; a second signal meanwhile
    ends the process at once, as everywhere."""
    import trio

    raise_if_stopped()
    stopped: list[Stopped] = []

    async def main() -> Any:
        async with trio.open_nursery() as nursery:
            with trio.open_signal_receiver(*SIGNALS) as signals:

                async def watch() -> None:
                    global _first
                    async for signum in signals:
                        if _first is not None:
                            _handle(signum, None)  # the second: out, now
                        _first = Stopped(signum)
                        stopped.append(_first)
                        nursery.cancel_scope.cancel()

                nursery.start_soon(watch)
                result = await fn(*args)
                nursery.cancel_scope.cancel()
                return result

    result = trio.run(main, clock=clock)
    if stopped:
        raise stopped[0]
    return result


# --- the live app's signals ------------------------------------------------------------------


def take_over(handler: Callable[[int, object], None]) -> dict[int, Any]:
    """`handler` for every signal in SIGNALS, for the live app's life: a plain signal
    handler, not the event loop's, so it runs even while the loop is busy or stuck
    (writing a frame to a terminal that is gone can block). What handled them before."""
    return {signum: signal.signal(signum, handler) for signum in SIGNALS}


def give_back(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def end_soon(signum: int) -> None:
    """A watchdog: unless the process has ended within QUIT_WITHIN[signum] seconds, end
    it, with the signal's status (the guardian, guard.py, removes a temporary recording
    and keeps the transcript whole)."""

    def watch() -> None:
        time.sleep(QUIT_WITHIN.get(signum, 1.5))
        try:
            os.write(sys.__stdout__.fileno(), b"\x1b[?1049l\x1b[?25h")  # leave the app's screen, show the cursor
        except (OSError, AttributeError, ValueError):
            pass  # no terminal any more
        os._exit(128 + signum)

    threading.Thread(target=watch, daemon=True).start()
