"""The signals that stop bully-tui, which of them it takes, and holding them off while
something must not be cut in two: a process started and not yet tracked, a folder made
and its guardian not yet told (real/cluster.py), a pool of workers forked (run/hunt.py).
It lives below run/ and real/ so that both take and hold them the one way;
run/interrupt.py is what handles them."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # (SIGINT first: Python's own handler raises)


def not_ignored(signums: tuple[int, ...] = STOPS) -> tuple[int, ...]:
    """Those of `signums` that bully-tui may take: a signal ignored when it began (nohup,
    a script's background job) stays ignored (playground/__main__.py, rule 4)."""
    return tuple(signum for signum in signums if signal.getsignal(signum) is not signal.SIG_IGN)


@contextmanager
def held() -> Iterator[None]:
    """The signals that stop bully-tui wait until the block is done (blocked in this
    thread: the one a headless run's handler raises in). A process started meanwhile
    inherits the block: a node (cli/node.py) or a hunt's worker lifts it itself."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
