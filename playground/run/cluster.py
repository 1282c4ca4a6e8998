"""The cluster: the engine's nodes as trio tasks, on trio's clock.

Each node's host (host.py) lives in a trio task of its own, which runs the work the
engine hands it. The dispatcher owns time: it sleeps on trio's clock until the engine
has something due, asks the engine for it, hands each node its share of the window in
one batch, waits once for all of them (a barrier, not a reply per node: each task
switch costs more than the protocol's work, measured in docs/benchmarks.md), and gives the window
back to the engine, which merges and publishes what the nodes did.

Headless runs use an autojump MockClock: virtual time runs as fast as the CPU allows.
The live app's clock runs at the chosen speed (live.py owns pace: the clock's rate).
A run that falls behind its clock does not sleep until it has caught up; and when it
falls further behind than `max_lead` allows, the clock is held back with it; and a
pause brings the clock back to the first work due (`hold_clock`), so the run stops
where it is (not where the clock had got to, seconds of work later).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import trio

try:  # trio's MockClock without trio.testing, which imports pytest wherever pytest is installed
    from trio._core import MockClock  # noqa: F401 - for session, live and compare (65 ms a start, each case of the campaign)
except ImportError:  # (a trio that keeps it only there)
    from trio.testing import MockClock  # noqa: F401

from ..core.commands import LiveCommand
from ..core.config import to_seconds, to_us
from ..core.engine import Engine, Window
from ..core.host import NodeHost


class _Barrier:
    """The dispatcher waits here, once, until every node it handed work to is done."""

    def __init__(self):
        self._waiting = 0
        self._done = trio.Event()

    def expect(self, count: int) -> None:
        self._waiting = count
        self._done = trio.Event()

    def arrive(self) -> None:
        self._waiting -= 1
        if self._waiting == 0:
            self._done.set()

    async def wait(self) -> None:
        await self._done.wait()


class Cluster:
    def __init__(self, engine: Engine):
        self.engine = engine
        self.running = False
        self._barrier = _Barrier()
        self._inboxes: dict[int, trio.MemorySendChannel] = {}
        self._submitted: list[tuple[LiveCommand, str]] = []
        self._wake = trio.Event()
        self._t0 = 0.0
        self.in_window = False  # a window of node work is being run (its nodes' tasks at work)
        # Awaited before each step: the live run holds the cluster here while the UI
        # catches up (live.py). None: never held.
        self.gate: Callable[[], Awaitable[None]] | None = None
        # Called with the engine after each step that ends an instant, when it may be
        # copied (the app keeps copies for looking back). None: nobody asks.
        self.between_instants: Callable[[Engine], None] | None = None
        # How far (virtual seconds) the clock may run ahead of the work due; None: any.
        self.max_lead: Callable[[], float | None] | None = None

    def submit(self, request: LiveCommand, source: str = "user") -> None:
        """A command from the live UI, to run now. Call from trio's thread."""
        self._submitted.append((request, source))
        self._wake.set()

    @property
    def submitted(self) -> bool:
        """Commands submitted and not yet handed to the engine."""
        return bool(self._submitted)

    def hold_clock(self) -> None:
        """Bring a clock that ran past work due back to when that work is due (a pause: the
        run stops where it is). A clock ahead of the engine with nothing due in between
        is not behind: nothing happened there, and it stays (a command given then runs
        at the time shown)."""
        due = self.engine.due()
        if self.running and due is not None and self._clock_us() > due:
            self._t0 = trio.current_time() - to_seconds(due)
        self._wake.set()

    def poke(self) -> None:
        """Re-read the clock: call after jumping it, since a sleeping task does not notice."""
        self._wake.set()

    def clock_time(self) -> float:
        """Virtual time on the clock, which runs ahead of the engine while nothing is due.
        Safe to call from outside trio (the live UI draws countdowns with it)."""
        if not self.running:
            return self.engine.now
        return max(self.engine.now, trio.current_time() - self._t0)

    def _clock_us(self) -> int:
        return to_us(trio.current_time() - self._t0)

    async def run(self, until: float | None = None) -> None:
        """Run until virtual time `until` (inclusive), or until cancelled if None."""
        until_us = None if until is None else to_us(until)
        self.running = True
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for host in self.engine.hosts.values():
                    self._host_task(host)
                self._t0 = trio.current_time() - self.engine.now  # an engine may start mid-run (a branch)
                await self._loop(until_us)
                nursery.cancel_scope.cancel()
        finally:
            self.running = False

    async def _loop(self, until_us: int | None) -> None:
        engine = self.engine
        while True:
            if self._wake.is_set():
                self._wake = trio.Event()
            if self._submitted:  # checked every turn, so a backlog cannot starve the UI
                submitted, self._submitted = self._submitted, []
                for request, source in submitted:
                    engine.submit(request, source, self._clock_us())
            due = engine.due()
            lead = None if due is None or self.max_lead is None else self.max_lead()
            if lead is not None:
                over = self._clock_us() - due - to_us(lead)
                if over > 0:  # behind by more than allowed: the clock waits for the run
                    self._t0 += to_seconds(over)
            if until_us is not None and (due is None or due > until_us):
                return
            if due is None or due > self._clock_us():
                deadline = math.inf if due is None else self._t0 + to_seconds(due)
                with trio.move_on_at(deadline):
                    await self._wake.wait()
                continue
            if self.gate is not None:
                await self.gate()
            window = engine.step(until_us)
            if window is not None:
                self.in_window = True  # (its work taken off the agenda: what is due next says nothing of it)
                await self._dispatch(window)
                engine.finish(window)
                self.in_window = False
            if self.between_instants is not None and engine.between_instants:
                self.between_instants(engine)

    def _host_task(self, host: NodeHost) -> None:
        send, receive = trio.open_memory_channel[tuple[list, int]](math.inf)
        self._inboxes[host.id] = send
        self._nursery.start_soon(self._serve, host, receive)

    async def _dispatch(self, window: Window) -> None:
        self._barrier.expect(len(window.work))
        for node, entries in window.work.items():
            if node not in self._inboxes:  # a node that has just joined
                self._host_task(self.engine.hosts[node])
            self._inboxes[node].send_nowait((entries, window.end))
        await self._barrier.wait()

    async def _serve(self, host: NodeHost, inbox: trio.MemoryReceiveChannel) -> None:
        async for entries, window_end in inbox:
            host.run(entries, window_end)
            self._barrier.arrive()
