"""Processes of this machine forked for one search: the random hunt's pool (hunt.py)
and the exhaustive search's workers (explore_workers.py).

A worker is forked with the signals that stop bully-tui blocked (interrupt.held): it is
born with the search's handler, and one that came before the worker ignored it raised
there (a traceback from "Process ForkPoolWorker-1"). Once it ignores Ctrl-C and the
terminal's closing (they reach the whole process group, and the search ends its workers
itself, with SIGTERM) it lifts the block.
"""

from __future__ import annotations

import signal

from . import interrupt


def worker_ignores_signals() -> None:
    """In a worker, first: leave Ctrl-C and a hang-up to the search, die of SIGTERM."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt.SIGNALS)
