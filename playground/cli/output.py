"""What a command says: its result on standard output, one line on standard error, and
the exit status of an app that has ended."""

from __future__ import annotations

import os
import sys

from ..core.config import InputError, WriteError


def say(line: str) -> None:
    """A line on stderr, if stderr can take it (None: closed before we started)."""
    if sys.stderr is None:
        return  # (print would write it to stdout)
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def emit(text: str) -> None:
    """The command's result on stdout. One that cannot be written (a full disk, a closed
    pipe, closed before we started: `>&-`) is a write error like any other file's."""
    if sys.stdout is None:  # (Python found no standard output)
        raise WriteError("cannot write to standard output: it is closed")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        try:  # what is still buffered must not fail again when Python exits
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise WriteError(f"cannot write to standard output: {e.strerror or e}") from None


def warn(config, app=None) -> None:
    """Settings that break an assumption: allowed, and said out loud: on stderr, or,
    given the `app` of a served process (whose stderr nobody reads), on its screen."""
    for warning in config.warnings():
        if app is None:
            say(f"bully-tui: warning: {warning}")
        else:
            app.notify(f"Warning: {warning}", severity="warning", timeout=15)


# Textual's web driver, as textual-serve names it in TEXTUAL_DRIVER, and the one
# `bully-tui serve` starts its tabs with (the same, held until a page takes the process).
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"
HELD_DRIVER = "playground.ui.held_driver:HeldWebDriver"


def served() -> bool:
    """Whether this process draws in a browser, through Textual's web driver: its standard
    input and output are then the driver's pipes to `bully-tui serve`, and nothing else
    may write there."""
    return os.environ.get("TEXTUAL_DRIVER") in (WEB_DRIVER, HELD_DRIVER)


def can_draw() -> bool:
    """Whether an app can draw here: on a terminal (standard input and output both), or
    in a browser (`served`)."""
    return served() or (sys.stdin.isatty() and sys.stdout.isatty())


def need_a_terminal(what: str, instead: str) -> None:
    """The live app draws a full screen and reads keys: into a pipe it would draw for
    nobody, and spin (unless the pipe is the web driver's, `served`)."""
    if not can_draw():
        raise InputError(f"{what}, so standard input and output must be a terminal ({instead})")


def left_by_page(app) -> bool:
    """Whether a served app ended because its page went (the tab closed: the driver's
    quit, which no key gives, so the app never set its return code)."""
    return served() and app.return_code is None


def finished(app) -> int:
    """An app's exit status, saying why when it failed (one line, for bad input) or what
    signal ended it."""
    from ..run import interrupt

    if app.stopped_by is not None:
        stop = interrupt.Stopped(app.stopped_by)
        stop.transcript = app.kept_transcript
        say(interrupt.last_words(stop))
        return stop.status
    if app.failure:
        say(app.failure)
    return app.return_code or 0
