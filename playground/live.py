"""The cluster run live: trio in guest mode on the host's asyncio loop (Textual's).

No threads of our own: trio's scheduler runs as callbacks on the host loop (only its
I/O wait sits in trio's worker thread), so trace events reach the host on its own
thread. Commands go the other way through `TrioToken.run_sync_soon`, which never blocks
and wakes trio wherever it is. `stop` cancels the run and waits for trio to say it is
done, so no task outlives the app, and an exception in trio reaches `on_done`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import outcome
import trio
import trio.testing

from .cluster import Cluster
from .commands import Command


class LiveRun:
    def __init__(self, cluster: Cluster, clock: trio.testing.MockClock, on_done: Callable[[outcome.Outcome], None]):
        self.cluster = cluster
        self.clock = clock
        self._on_done = on_done
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope = trio.CancelScope()
        self._finished: asyncio.Event | None = None
        self._early: list[tuple[Callable, tuple]] = []  # calls made before trio was up
        self.outcome: outcome.Outcome | None = None

    def start(self) -> None:
        """Start the run on the current asyncio loop; call from a coroutine on it."""
        loop = asyncio.get_running_loop()
        self._finished = asyncio.Event()
        trio.lowlevel.start_guest_run(
            self._main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=self._done,
            clock=self.clock,
            host_uses_signal_set_wakeup_fd=True,  # asyncio owns the signal wakeup fd
        )

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        for fn, args in self._early:
            self._token.run_sync_soon(fn, *args)
        self._early.clear()
        with self._scope:
            await self.cluster.run()

    def _done(self, result: outcome.Outcome) -> None:
        self.outcome = result
        self._token = None
        assert self._finished is not None
        self._finished.set()
        self._on_done(result)

    @property
    def running(self) -> bool:
        return self._token is not None

    def submit(self, command: Command) -> None:
        """Hand a command to the cluster; it runs at the current virtual time."""
        self._call(self.cluster.submit, command, "user")

    def advance(self, seconds: float) -> None:
        """Move a paused clock forward (tests, and anyone stepping by time)."""
        self.clock.jump(seconds)
        self._call(self.cluster.poke)

    def _call(self, fn: Callable, *args: object) -> None:
        if self._token is not None:
            try:
                self._token.run_sync_soon(fn, *args)
            except trio.RunFinishedError:
                pass  # the run ended between the check and the call: nothing to steer
        elif self.outcome is None:
            self._early.append((fn, args))  # a key pressed while trio is still starting

    async def stop(self) -> None:
        """Cancel the run and wait until trio has finished."""
        if self._finished is None:
            return
        self._call(self._scope.cancel)
        await self._finished.wait()
