"""`bully-tui` (and `python -m playground`): the signals are taken over before anything
heavy is imported, so that Ctrl-C during start-up is a clean interruption too (one line,
status 130); then cli.main runs. Only Python's own start-up, the first 20 ms or so
before this file runs, is left to the interpreter."""

from __future__ import annotations

import sys

from . import interrupt


def main() -> int:
    interrupt.install()
    try:
        from .cli import main as run

        return run()
    except KeyboardInterrupt as error:  # in start-up, before cli.main took over
        stop = interrupt.stopped_by(error) or interrupt.Stopped(2)
        try:
            print(interrupt.said(stop), file=sys.stderr)
        except OSError:
            pass
        return stop.status


if __name__ == "__main__":
    sys.exit(main())
