"""`bully-tui` (and `python -m playground`): the signals are taken over before anything
heavy is imported, so that Ctrl-C during start-up is a clean interruption too (one line,
status 130); then cli.main runs. Only Python's own start-up, the first 20 ms or so
before this file runs, is left to the interpreter."""

from __future__ import annotations

import os
import sys

from .run import interrupt


def main() -> int:
    interrupt.install()
    try:
        from .cli import main as run

        return ended(run())
    except KeyboardInterrupt as error:  # in start-up, before cli.main took over
        stop = interrupt.stopped_by(error) or interrupt.Stopped(2)
        try:
            print(interrupt.said(stop), file=sys.stderr)
        except OSError:
            pass
        return stop.status


def ended(status: int) -> int:
    """The command is done, its files closed and its words said: the process ends now.
    Python's own tear-down would free a big run's millions of objects one by one, for
    nothing (quitting the app at N = 64 took 2.7 s, 50 ms of it the app's)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass  # (cli.main has said what could not be written)
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
