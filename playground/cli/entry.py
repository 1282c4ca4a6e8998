"""The one entry point, `main`: the main command or a subcommand, and the one place an
ending becomes a line on stderr and an exit status."""

from __future__ import annotations

import importlib
import sys

from ..core.config import InputError, WriteError
from ..run import interrupt
from .output import say
from .subcommands import SUBCOMMANDS


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with interrupt.handled():
        try:
            if argv and argv[0] in SUBCOMMANDS:
                return importlib.import_module(f"{__package__}.{SUBCOMMANDS[argv[0]].module}").run(argv[1:])
            from .run import run

            return run(argv)
        except SystemExit as e:  # argparse, after printing --help
            return e.code if isinstance(e.code, int) else 0
        except BaseException as error:  # noqa: BLE001 - each ending is one line and a status, below
            return ending(error)


def ending(error: BaseException) -> int:
    """What stopped a command, as one line on stderr and its exit status. A bug is none of
    these, and keeps its traceback."""
    stop = interrupt.stopped_by(error)
    if stop is not None:
        say(interrupt.last_words(stop))
        return stop.status
    if isinstance(error, InputError):
        say(f"bully-tui: error: {error}")
        return 2
    if isinstance(error, WriteError):
        say(f"bully-tui: error: {error}")
        return 1
    raise error
