"""The cluster: N node tasks, the network between them, and the one trace stream.

A dispatcher loop owns virtual time. It keeps one queue of work, each item keyed
(time, rank, seq): message deliveries and timer firings. It sleeps on trio's clock until
the next item is due, hands every node its share of a window of items in one batch, waits
once for all of them, and then merges what the nodes recorded.

Determinism. trio promises no order among tasks woken together, so nothing here depends
on it. Each node runs its own items in key order; the merged records are ordered by
(time, node id, order within the node); message ids, link delays (one seeded RNG) and
queue seqs are handed out in that merged order. The same seed, configuration and
commands therefore give the same trace, event for event, whatever the scheduler does.

Speed. trio's run loop costs more than the protocol, so the cost that matters is task
switches per message (SIMULATION-NOTES.md). With `lookahead`, a window is as long as the
minimum link delay: nothing a node does at t reaches another node before t + min delay,
so every node can run all its items in [t, t + min delay) at once. Without it (the live
UI, where nothing may show before its time), a window is one instant. Both give the same
trace. Windows also end at the next scheduled command and at `until`.

Commands run before the work due at the same instant, one at a time, in the order given.

The monitor (monitor.py) reads every event as it is merged and its reports join the
stream right after the event that caused them. Its SLE2 deadline is one more due time:
windows end there, and the check runs once everything at that instant has run.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Iterable
from operator import attrgetter

import trio

from protocol import Node

from .commands import Command, Scheduled
from .config import ClusterConfig, to_seconds, to_us
from .events import CommandEvent, CrashEvent, Event, RecoverEvent, SendEvent, StartEvent, StateEvent
from .monitor import Monitor
from .network import Network
from .runner import DELIVERY, TIMER, NodeRunner

Observer = Callable[[list[Event]], None]
_time = attrgetter("t")
_MONITORED = (StateEvent, CrashEvent, StartEvent, RecoverEvent)

# Commands that change only the pace of a live run, never what happens in it.
PACE_COMMANDS = ("pause", "resume", "speed", "step")


class Cluster:
    def __init__(
        self,
        algorithm: type[Node],
        ids: Iterable[int],
        config: ClusterConfig,
        seed: int,
        *,
        lookahead: bool = True,
        clock: trio.testing.MockClock | None = None,
    ):
        self.algorithm = algorithm
        self.ids = tuple(sorted(ids))
        self.config = config
        self.seed = seed
        self.lookahead = lookahead
        self.clock = clock  # only needed for the pace commands of a live run
        self.speed = clock.rate if clock is not None and clock.rate else 1.0
        self.paused = clock is not None and clock.rate == 0
        self.network = Network(seed, to_us(config.delay_min), to_us(config.delay_max))
        self.runners = {i: NodeRunner(i, algorithm, self.ids, config.protocol) for i in self.ids}
        self.monitor = Monitor(self.ids, config.settle_time(len(self.ids)))
        self.now_us = 0
        self._queue: list[tuple] = []  # (time, rank, seq, node, payload)
        self._queue_seq = 0
        self._event_seq = 0
        self._msg_id = 0
        self._scheduled: deque[tuple[int, Command, str]] = deque()
        self._submitted: list[tuple[Command, str]] = []
        self._observers: list[Observer] = []
        self._wake = trio.Event()
        self._busy = 0
        self._batch_done = trio.Event()
        self._t0 = 0.0
        self._stepping = False
        self.running = False

    # --- wiring -------------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> None:
        """`observer(events)` is called with each batch of new events, in order."""
        self._observers.append(observer)

    def schedule(self, commands: Iterable[Scheduled]) -> None:
        """Commands to run at their virtual times; same-time commands keep their order."""
        merged = [(at, cmd, src) for at, cmd, src in self._scheduled]
        merged += [(to_us(s.at), s.command, s.source) for s in commands]
        merged.sort(key=lambda item: item[0])  # stable: the given order breaks ties
        self._scheduled = deque(merged)

    def submit(self, command: Command, source: str = "user") -> None:
        """Run a command now (from the UI). Call from trio's thread."""
        self._submitted.append((command, source))
        self._wake.set()

    @property
    def next_due(self) -> float | None:
        """Virtual time of the next work or scheduled command, if any."""
        due = self._next_due()
        return None if due is None else to_seconds(due)

    def poke(self) -> None:
        """Re-read the clock: call after jumping it, since a sleeping task does not notice."""
        self._wake.set()

    def snapshot(self, node: int) -> dict[str, object]:
        """One node's variables, safe storage and running timers (for a node panel)."""
        return self.runners[node].snapshot()

    @property
    def now(self) -> float:
        """Virtual time of the latest work run."""
        return to_seconds(self.now_us)

    def clock_time(self) -> float:
        """Virtual time on the clock, which runs ahead of `now` while nothing is due.
        Safe to call from outside trio (the live UI draws countdowns with it)."""
        if self.clock is None or not self.running:
            return self.now
        return max(self.now, self.clock.current_time() - self._t0)

    # --- the run ------------------------------------------------------------------------

    async def run(self, until: float | None = None) -> None:
        """Run until virtual time `until` (inclusive), or until cancelled if None."""
        until_us = None if until is None else to_us(until)
        self.running = True
        try:
            async with trio.open_nursery() as nursery:
                for runner in self.runners.values():
                    nursery.start_soon(runner.serve, self._node_finished)
                self._t0 = trio.current_time()
                await self._dispatch({i: [(0, DELIVERY, 0, ("start",))] for i in self.ids}, 1)
                await self._loop(until_us)
                nursery.cancel_scope.cancel()
        finally:
            self.running = False

    async def _loop(self, until_us: int | None) -> None:
        while True:
            if self._wake.is_set():
                self._wake = trio.Event()
            if self._submitted:  # checked every turn, so a backlog cannot starve the UI
                await self._run_submitted()
                continue
            due = self._next_due()
            if until_us is not None and (due is None or due > until_us):
                self.now_us = until_us
                return
            if self._stepping:
                self._stepping = False  # a single step runs the next instant now
            elif due is None or due > self.now_us:
                deadline = math.inf if due is None else self._t0 + to_seconds(due)
                if trio.current_time() < deadline:  # a run behind its clock does not sleep
                    with trio.move_on_at(deadline):
                        await self._wake.wait()
                    if self._wake.is_set():
                        continue
            self.now_us = due
            if self._scheduled and self._scheduled[0][0] == due:
                _, command, source = self._scheduled.popleft()
                await self._run_command(command, source)
                continue
            if self.monitor.deadline == due and not (self._queue and self._queue[0][0] == due):
                self._publish(self._stamp(self.monitor.check_settled()))
                continue
            await self._run_window(self._window_end(due, until_us))

    def _next_due(self) -> int | None:
        times = []
        if self._queue:
            times.append(self._queue[0][0])
        if self._scheduled:
            times.append(self._scheduled[0][0])
        if self.monitor.deadline is not None:
            times.append(self.monitor.deadline)
        return min(times) if times else None

    def _window_end(self, start: int, until_us: int | None) -> int:
        span = self.network.delay_min_us if self.lookahead else 0
        end = start + max(1, span)  # at least the instant `start` itself
        if self._scheduled:
            end = min(end, self._scheduled[0][0])
        if self.monitor.deadline is not None and self.monitor.deadline >= start:
            end = min(end, self.monitor.deadline + 1)
        if until_us is not None:
            end = min(end, until_us + 1)
        return end

    async def _run_window(self, end: int) -> None:
        work: dict[int, list[tuple]] = {}
        queue = self._queue
        while queue and queue[0][0] < end:
            time, rank, seq, node, payload = heapq.heappop(queue)
            work.setdefault(node, []).append((time, rank, seq, payload))
        await self._dispatch(work, end)

    async def _run_submitted(self) -> None:
        """Live commands run at the current virtual time, but never before work already
        run nor after work still due, so the trace stays in time order."""
        now = to_us(trio.current_time() - self._t0)
        due = self._next_due()
        if due is not None:
            now = min(now, due)
        self.now_us = max(self.now_us, now)
        submitted, self._submitted = self._submitted, []
        for command, source in submitted:
            await self._run_command(command, source)

    async def _run_command(self, command: Command, source: str) -> None:
        self._publish(self._stamp([CommandEvent(0, self.now, command.name, command.args, source)]))
        name = command.name
        if name in ("crash", "recover", "elect"):
            await self._dispatch({command.node: [(self.now_us, DELIVERY, 0, (name,))]}, self.now_us + 1)
        elif name == "timeout":
            await self._reconfigure(self.config.with_timeout(command.args[0]))
        elif name == "delay":
            await self._reconfigure(self.config.with_delay(*command.args))
        elif name in PACE_COMMANDS:
            self._set_pace(command)
        else:
            raise ValueError(f"unknown command {name!r}")  # the caller's bug: commands are checked on input

    async def _reconfigure(self, config: ClusterConfig) -> None:
        self.config = config
        self.monitor.settle_us = to_us(config.settle_time(len(self.ids)))  # for the next quiet period
        self.network.set_delay(to_us(config.delay_min), to_us(config.delay_max))
        item = [(self.now_us, DELIVERY, 0, ("config", config.protocol))]
        await self._dispatch({i: item for i in self.ids}, self.now_us + 1)

    def _set_pace(self, command: Command) -> None:
        """Pace lives in the clock's rate (0 is paused). The dispatcher is awake while it
        runs this, and its next sleep reads the new rate, so no extra wake-up is needed."""
        if command.name in ("pause", "step"):
            self.paused = True
        elif command.name == "resume":
            self.paused = False
        elif command.name == "speed":
            self.speed = float(command.args[0])
        if self.clock is None:
            return
        self.clock.rate = 0 if self.paused else self.speed
        due = self._next_due()
        if command.name == "step" and due is not None:
            # Single step: the loop runs the next instant without waiting for the clock
            # (float rounding could leave a jumped clock a hair short of it), and the
            # paused clock is moved there so the time shown agrees.
            self._stepping = True
            ahead = self._t0 + to_seconds(due) - self.clock.current_time()
            if ahead > 0:
                self.clock.jump(ahead)

    # --- one batch: hand out, wait once, merge ------------------------------------------

    async def _dispatch(self, work: dict[int, list[tuple]], window_end: int) -> None:
        if not work:
            return
        self._busy = len(work)
        self._batch_done = trio.Event()
        for node, items in work.items():
            self.runners[node].mailbox.send_nowait((items, window_end))
        await self._batch_done.wait()
        self._publish(self._merge([self.runners[n] for n in sorted(work)]))

    def _node_finished(self) -> None:
        self._busy -= 1
        if self._busy == 0:
            self._batch_done.set()

    def _merge(self, runners: list[NodeRunner]) -> list[Event]:
        """All nodes' records in (time, node id, order within the node) order, with the
        monitor's reports after their causes, stamped with seqs, message ids and arrival
        times in that order, and routed."""
        events = [e for runner in runners for e in runner.records]
        events.sort(key=_time)  # stable, and the runs are already in node order
        events = self._monitored(events)
        seq = self._event_seq
        for event in events:
            event.seq = seq
            seq += 1
            if type(event) is SendEvent:
                event.id = self._msg_id
                self._msg_id += 1
                arrives = self.network.arrival(event.src, event.dst, to_us(event.t))
                event.arrives = to_seconds(arrives)
                self._push(arrives, DELIVERY, event.dst, ("deliver", event.id, event.src, event.msg))
        self._event_seq = seq
        late = sorted((t for runner in runners for t in runner.late_timers), key=lambda late: late[0].seq)
        for event, name, generation in late:
            self._push(to_us(event.fires), TIMER, event.node, ("timer", name, generation))
        return events

    def _monitored(self, events: list[Event]) -> list[Event]:
        """`events`, with the monitor's reports inserted after their causes (in place;
        nearly every batch has none, and then nothing is copied)."""
        observe = self.monitor.observe
        found = []
        for index, event in enumerate(events):
            if type(event) in _MONITORED:
                reports = observe(event)
                if reports:
                    found.append((index, reports))
        for index, reports in reversed(found):
            events[index + 1:index + 1] = reports
        return events

    def _stamp(self, events: list[Event]) -> list[Event]:
        for event in events:
            event.seq = self._next_event_seq()
        return events

    def _push(self, time: int, rank: int, node: int, payload: tuple) -> None:
        self._queue_seq += 1
        heapq.heappush(self._queue, (time, rank, self._queue_seq, node, payload))

    def _next_event_seq(self) -> int:
        seq, self._event_seq = self._event_seq, self._event_seq + 1
        return seq

    def _publish(self, events: list[Event]) -> None:
        if events:
            for observer in self._observers:
                observer(events)
