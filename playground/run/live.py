"""The cluster run live: trio in guest mode on the host's asyncio loop (Textual's).

No threads of our own: trio's scheduler runs as callbacks on the host loop (only its
I/O wait sits in trio's worker thread), so trace events reach the host on its own
thread. Commands go the other way through `TrioToken.run_sync_soon`, which never blocks
and wakes trio wherever it is. `stop` cancels the run and waits for trio to say it is
done, so no task outlives the app, and an exception in trio reaches `on_done`.

Pace is this object's: virtual time is a MockClock whose rate is the speed (0 while
paused), and a single step moves the paused clock to the next instant due. None of it
changes what happens in the run, so none of it is a command or in the transcript.

Flow. Events wait in a buffer until the host takes them (`take`). When the host falls
behind (a storm of events at a high speed), the cluster is held before its next step
until the host has taken what is there: the run slows down to what can be shown, and
`running_at` says at what speed it really goes. It trails its clock by LEAD_SHOWN
seconds of wall time at most: further behind, the clock waits for it
(Cluster.max_lead), so that when a storm ends the run goes on at its pace rather than
racing to catch up; and the time shown (`now`) is the run's, not the clock's. A pause
brings the clock back to the run's time (Cluster.hold_clock): the run stops where it
is, not after the work its clock had got ahead of.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

import outcome
import trio

from ..core.commands import LiveCommand
from ..core.config import to_seconds, to_us
from ..core.events import Event
from .cluster import Cluster, MockClock

BACKLOG = 20_000  # events the host may leave untaken before the cluster waits for it
PACE_WINDOW = 2.0  # wall seconds over which the speed the run keeps is measured
KEEPS_UP = 0.8  # a run at 80% of the speed asked for or more keeps up
LEAD_SHOWN = 0.25  # wall seconds the clock may run ahead of a run that cannot keep up


class LiveRun:
    def __init__(self, cluster: Cluster, *, speed: float, paused: bool,
                 on_events: Callable[[], None], on_done: Callable[[outcome.Outcome], None]):
        self.cluster = cluster
        self.speed = speed
        self.clock = MockClock(rate=0 if paused else speed)
        self._on_events = on_events
        self._on_done = on_done
        self._buffer: list[Event] = []
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope = trio.CancelScope()
        self._finished: asyncio.Event | None = None
        self._early: list[tuple[Callable, tuple]] = []  # calls made before trio was up
        self._in_transit = 0  # calls handed to trio and not yet run (see `idle`)
        self._flowing = trio.Event()
        self._flowing.set()
        self.outcome: outcome.Outcome | None = None
        cluster.engine.subscribe(self._collect)
        cluster.gate = self._gate
        # (paused, the clock moves only when told to: by a step, or a test's advance)
        cluster.max_lead = lambda: None if self.paused else LEAD_SHOWN * self.clock.rate
        self._pace: deque[tuple[float, float]] = deque()  # (wall time, the run's time), for running_at

    # --- start and stop -----------------------------------------------------------------

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
            self._token.run_sync_soon(self._arrive, fn, args)
        self._early.clear()
        with self._scope:
            await self.cluster.run()

    def _done(self, result: outcome.Outcome) -> None:
        self.outcome = result
        self._token = None
        assert self._finished is not None
        self._finished.set()
        self._on_done(result)

    async def stop(self) -> None:
        """Cancel the run and wait until trio has finished."""
        if self._finished is None:
            return
        self._call(self._scope.cancel)
        await self._finished.wait()

    @property
    def running(self) -> bool:
        return self._token is not None

    # --- events out ---------------------------------------------------------------------

    def _collect(self, events: list[Event]) -> None:
        """Inside trio, for every batch: keep it, and tell the host about the first of a burst."""
        if not self._buffer:
            self._on_events()
        self._buffer += events
        if len(self._buffer) > BACKLOG and self._flowing.is_set():
            self._flowing = trio.Event()

    def take(self) -> list[Event]:
        """Every event not yet taken, in order (the host calls this)."""
        events, self._buffer = self._buffer, []
        if not self._flowing.is_set():
            self._call(self._flowing.set)
        return events

    async def _gate(self) -> None:
        await self._flowing.wait()

    # --- commands in --------------------------------------------------------------------

    def submit(self, request: LiveCommand) -> None:
        """Hand a command to the cluster; it runs at the current virtual time. While
        paused, the clock moves on by a microsecond, so that it runs (and shows) now: the
        command's time is the same either way (engine rule 2), only the wait for space is
        not."""
        self._call(self.cluster.submit, request, "user")
        if self.paused:
            self.advance(1e-6)

    def _call(self, fn: Callable, *args: object) -> None:
        if self._token is not None:
            try:
                self._token.run_sync_soon(self._arrive, fn, args)
                self._in_transit += 1
            except trio.RunFinishedError:
                pass  # the run ended between the check and the call: nothing to steer
        elif self.outcome is None:
            self._early.append((fn, args))  # a key pressed while trio is still starting
            self._in_transit += 1

    def _arrive(self, fn: Callable, args: tuple) -> None:
        self._in_transit -= 1
        fn(*args)

    # --- pace -----------------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self.clock.rate == 0

    def pause(self) -> None:
        self._set_rate(0)
        self._call(self.cluster.hold_clock)

    def resume(self) -> None:
        self._set_rate(self.speed)

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        if not self.paused:
            self._set_rate(speed)

    def _set_rate(self, rate: float) -> None:
        self.clock.rate = rate
        self._pace.clear()  # (what was measured at another speed says nothing of this one)
        self._call(self.cluster.poke)  # a sleeping dispatcher does not see a new rate

    def step(self) -> None:
        """Pause, and run the next instant due (if any)."""
        self.pause()
        due = self.cluster.engine.due()
        if due is not None:
            self.advance(to_seconds(due) - self.cluster.clock_time())

    def advance(self, seconds: float) -> None:
        """Move the clock forward (a single step, and tests). Before trio is up, once it
        is (the run takes the clock's time as its start)."""
        if self._token is None:
            self._call(self._jump, seconds)
        else:
            self._jump(seconds)

    def _jump(self, seconds: float) -> None:
        if seconds > 0:
            self.clock.jump(seconds)
        self._call(self.cluster.poke)

    def now(self) -> float:
        """The run's time: its clock, or, when work due is behind the clock (a run that
        cannot keep up), when that work is due. What the screen shows, and counts down from."""
        t = self.cluster.clock_time()
        due = self.cluster.engine.due() if self.cluster.running else None
        return t if due is None else max(self.cluster.engine.now, min(t, to_seconds(due)))

    def running_at(self) -> float | None:
        """The speed the run keeps, in virtual seconds per wall second over the last
        PACE_WINDOW seconds, when it is well below the speed asked for (a storm the run
        cannot keep up with); None while it keeps up, or is paused, or it is too soon to say."""
        wall, t = time.monotonic(), self.now()
        if self.paused:
            self._pace.clear()
            return None
        self._pace.append((wall, t))
        while self._pace[0][0] < wall - PACE_WINDOW:
            self._pace.popleft()
        first_wall, first_t = self._pace[0]
        if wall - first_wall < PACE_WINDOW / 2:
            return None
        speed = (t - first_t) / (wall - first_wall)
        return speed if speed < KEEPS_UP * self.speed else None

    @property
    def idle(self) -> bool:
        """The run has done everything due up to its clock (no window of node work under
        way), every command and clock move handed to it has arrived, and the host has taken
        every event."""
        due = self.cluster.engine.due()
        # (Compared in microseconds, as the cluster's loop compares them: a clock between two
        # microseconds has reached work due at the nearer one, which the loop runs.)
        return (due is None or due > to_us(self.cluster.clock_time())) and not self._buffer \
            and self._in_transit == 0 and not self.cluster.submitted and not self.cluster.in_window

    @property
    def behind(self) -> float:
        """How far the run trails its clock: work was due this many seconds ago."""
        due = self.cluster.engine.due()
        if due is None or not self.cluster.running:
            return 0.0
        return max(0.0, self.cluster.clock_time() - to_seconds(due))
