"""Stopping on a signal, at any moment: one line, the usual status, and whole files.

SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) are bully-tui's from its first
statement (playground/__main__.py, which ends the process at once while it starts: nothing
is made yet). Once a command runs, the first one raises `Stopped`,
a KeyboardInterrupt, so that no `except Exception` on the way swallows it; the command
that was running closes its files on the way out (a transcript at its last whole
line), and cli.main turns it into one line, "bully-tui: interrupted at t=12.3 s; the
transcript so far is in FILE", and the status 128 + the signal's number (130 for
Ctrl-C). That clean-up is not interrupted in its turn: a second signal, from someone
who will not wait, ends the process at once with the same status, and the guardian
(guard.py) mends what it was writing.

A Stopped raised where Python cannot pass it on (a garbage collector's callback, which
hypothesis installs to time the collections; importlib's) is printed as "Exception
ignored" and lost. Code that runs inside such a library (a hunt's search) takes the
signals `checked()`: the handler only notes the signal, and the code raises it at its own
safe points (`raise_if_stopped`, at each step of a run).

Inside a trio run (a headless run, --compare) a signal must not raise in the middle of
trio's own code: there trio takes it (`run_trio`) and cancels the run between two of
its steps, and the Stopped is raised once trio is done. A live app takes the signals
over for its life (`take_over`, through control.QuitOnSignals), and quits as on ctrl+q,
with a watchdog (`end_soon`) in case the clean quit cannot finish.

A signal that was ignored when bully-tui started (`nohup`, a script's background job) is
left ignored throughout (record/signals.not_ignored): what the caller asked for. Not by a
live app, which lives in its terminal and ends with it (`take_over`, `watch_terminal`).
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import termios
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, nullcontext
from types import FrameType
from typing import Any

# (held: interrupt.held, the one way to hold the signals off)
from ..record.signals import STOPS, held, not_ignored  # noqa: F401

SIGNALS = STOPS  # (record/signals.py: held() holds them off where a stop must wait)
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
_checked = False  # only note a signal: the code running raises it itself (`checked`)


def _handle(signum: int, frame: FrameType | None) -> None:
    global _first
    if _first is not None:  # a second signal while the first is handled: out, now
        _out(signum)
    _first = Stopped(signum)
    if _importing(frame):
        # Raised inside an import, a Stopped can be lost (importlib's own callbacks print
        # it as "Exception ignored") or crash a compiled module half-way through its set-up
        # (orjson's: a segmentation fault, 1 in 60 SIGTERMs). Out, now, as while starting:
        # the files being written are the guardian's to make whole (guard.py).
        _out(signum)
    if not _checked:
        raise _first


def _out(signum: int) -> None:
    """End the process at once, with the signal's line (unless said already) and status."""
    try:
        if not _said:
            os.write(2, f"{Stopped(signum).line()}\n".encode())
    finally:
        os._exit(128 + signum)


def _importing(frame: FrameType | None) -> bool:
    """Whether the code `frame` runs is being imported (importlib is on the stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def raise_if_stopped() -> None:
    """Raise the signal that came, if it is not raised yet (`checked`) or its Stopped was
    swallowed: one that lands while Python imports a module can be raised inside
    importlib's own callback, which only prints "Exception ignored" (the campaign found
    a run that then went on for ever). Called where a command is about to run for long
    (a trio run, the live app), and at each step of code that runs `checked`."""
    if _first is not None and not _said:
        raise _first


@contextmanager
def checked() -> Iterator[None]:
    """For the duration, a signal is only noted; the code inside raises it at its own
    points (`raise_if_stopped`), and if it has not, it is raised on the way out. For
    code that runs inside a library that may swallow what a handler raises (a hunt's
    search, in hypothesis: its garbage-collector callback), or that must not be cut in
    the middle (putting a hunt's files in place, all or none)."""
    global _checked
    before = _checked
    _checked = True
    try:
        yield
    finally:
        _checked = before
    raise_if_stopped()


def last_words(stop: Stopped) -> str:
    """`stop`'s line, to print once, when all is cleaned up: what is left is to exit, and
    from now on the signals are ignored (Python's own tear-down would otherwise meet a
    second Ctrl-C with the default handler, and die of it)."""
    global _said
    _said = True
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    return stop.line()


def install() -> None:
    """Take the signals over (for the whole program: `bully-tui` does it first thing), but
    those ignored already: they stay so."""
    global _their_unraisablehook
    for signum in not_ignored(SIGNALS):
        signal.signal(signum, _handle)
    if sys.unraisablehook is not _unraisable:
        _their_unraisablehook, sys.unraisablehook = sys.unraisablehook, _unraisable


_their_unraisablehook = sys.unraisablehook


def _unraisable(unraisable: Any) -> None:
    """A Stopped raised where Python cannot pass it on (a finalizer, a garbage-collector
    or weakref callback: trio's Nursery.__del__, hypothesis's gc callback) would only be
    printed, "Exception ignored", and the command would go on: the process ends at once
    instead, as while starting (the guardian makes the files whole)."""
    if isinstance(unraisable.exc_value, Stopped):
        _out(unraisable.exc_value.signum)
    _their_unraisablehook(unraisable)


@contextmanager
def handled() -> Iterator[None]:
    """The signals are ours for the duration. Where they were not already (cli.main
    called in-process, by a test), what handled them before does again after."""
    global _first, _said
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    ours = all(handler in (_handle, signal.SIG_IGN) for handler in previous.values())  # (ignored: left so)
    hook = sys.unraisablehook
    install()
    try:
        yield
    finally:
        if not ours:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            sys.unraisablehook = hook
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
    own code (a Stopped raised there leaves trio half-done: its internal error, an
    AssertionError, and the Stopped lost). While trio's receiver takes the signals, it
    cancels the run; before it is open and after it is closed they are only noted
    (`checked`), and the run is cancelled at its start. The Stopped is raised once the
    run has ended; a second signal meanwhile ends the process at once, as everywhere."""
    import trio

    raise_if_stopped()

    async def main() -> Any:
        # The receiver outlives the task that reads it: closed while that task was woken
        # by a signal but had not run yet, trio's receiver raised in it (KeyError from an
        # empty queue, or "block already exited"), and the signal was lost in that error.
        result = None  # (a signal cancels the run before fn returns: then the Stopped is raised)
        taken = not_ignored(SIGNALS)
        with trio.open_signal_receiver(*taken) if taken else nullcontext() as signals:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    global _first
                    async for signum in signals:
                        if _first is not None:
                            _out(signum)  # the second: out, now
                        _first = Stopped(signum)
                        nursery.cancel_scope.cancel()

                if signals is not None:  # (None: every one ignored)
                    nursery.start_soon(watch)
                if _first is not None:  # (noted while trio started)
                    nursery.cancel_scope.cancel()
                result = await fn(*args)
                nursery.cancel_scope.cancel()
            return result

    with checked():  # (on the way out: raised, if one came)
        return trio.run(main, clock=clock)


# --- the live app's signals ------------------------------------------------------------------


def take_over(handler: Callable[[int, object], None], every: bool) -> dict[int, Any]:
    """`handler` for the signals bully-tui may take (not_ignored), for a front end's life:
    a plain signal handler, not the event loop's, so it runs even while the loop is busy
    (writing a frame to a terminal that is gone can block). `every`: those ignored when
    bully-tui began as well, for an app on the terminal: once it has closed, the app has
    nothing left to do. What handled them before."""
    return {signum: signal.signal(signum, handler) for signum in (SIGNALS if every else not_ignored(SIGNALS))}


def give_back(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def watch_terminal(lost: Callable[[], None]) -> Callable[[], None]:
    """Call `lost` (from a thread of its own) when the terminal on standard input is gone,
    as a hang-up would say, for a live app whose hang-up never comes: its shell ignores
    SIGHUP (`trap '' HUP`), so it neither dies nor passes it on, while the app, with its
    writer's queue full, waits for ever and takes no signal. Nothing is watched when
    standard input is no terminal (a served app). What stops the watch."""
    stop, said = threading.Event(), threading.Lock()
    try:
        termios.tcgetattr(0)
    except (OSError, termios.error):
        return stop.set

    def watch() -> None:
        while not stop.wait(TERMINAL_POLL):
            try:
                termios.tcgetattr(0)
            except (OSError, termios.error) as error:
                if error.args[0] not in GONE:
                    continue
                with said:  # (not once the watch is stopped: the app may have quit meanwhile)
                    if not stop.is_set():
                        lost()
                return

    def stopped() -> None:
        with said:
            stop.set()

    threading.Thread(target=watch, name="terminal-watch", daemon=True).start()
    return stopped


TERMINAL_POLL = 0.25  # seconds between two looks at the terminal (watch_terminal)
GONE = (errno.EIO, errno.ENXIO, errno.EBADF, errno.ENOTTY)  # what a terminal that has gone away answers


def end_soon(signum: int) -> None:
    """A watchdog: unless the process has ended within QUIT_WITHIN[signum] seconds, end
    it, with the signal's status (the guardian, guard.py, removes a temporary recording
    and keeps the transcript whole)."""

    def watch() -> None:
        time.sleep(QUIT_WITHIN.get(signum, 1.5))
        try:
            if os.isatty(sys.__stdout__.fileno()):  # (not a pipe: a served app's is the web driver's, in packets)
                os.write(sys.__stdout__.fileno(), b"\x1b[?1049l\x1b[?25h")  # leave the app's screen, show the cursor
        except (OSError, AttributeError, ValueError):
            pass  # no terminal any more
        os._exit(128 + signum)

    threading.Thread(target=watch, daemon=True).start()
