"""One real node: the same pure state machine the simulation hosts, in a process of its
own, over TCP (`bully-tui node`; the gsharma design: "TCP is used as the transport").

  bully-tui node --id K --listen HOST:PORT --peers ID@HOST:PORT,... --algorithm A
                 --state-dir DIR [--timeout T] [--coordinator-timeout T2]
                 [--probe-interval P] [--delay S] [--seed S]

How it runs (trio, one task steps the machine, so it needs no locks):
  - Inputs come through one channel: messages from the connections its peers opened,
    timer firings, and signals (SIGUSR1: `elect`; SIGUSR2: leave the cluster for good;
    SIGTERM or SIGINT: stop, as a crash would but with the trace whole).
  - Links. One outgoing TCP connection per peer, opened when there is something to
    send, so each link is FIFO. A message the link cannot hand over (the peer is down:
    nothing listens, or the connection breaks) is dropped and the trace says so, as the
    simulation drops messages to a down node; the next message tries to connect again
    (after a refusal, once a backoff is over, which a peer's hello ends: a peer that
    comes back greets every member, so it is reached at once; Link). `--delay S` holds
    each message S seconds first (in order), so a real run can keep or break the
    synchrony bound T >= 2 x delay on purpose.
  - Faults (--loss, --duplicate, --drift: config.Faults), each drawn by the sending node
    from its own generator (its seed and id): a message lost is not sent, and the trace
    drops it at once ("lost on the link"); a message duplicated is sent twice, the trace
    saying so (a duplicate, then two deliveries at the receiver); a drifting node's
    timers run at its own clock rate (faults.clock_rate, as the simulation's). TCP hands
    a connection's messages over in the order sent: a real link reorders nothing, and
    --reorder is not taken.
  - Timers run on trio's clock. A timer set again replaces the old one; a firing that
    was already on its way when its timer was set again or cancelled is recognised by
    its generation (the runner's) and ignored. A timer set with a range (Raft's) is drawn from the node's
    own generator, seeded by --seed and its id.
  - Safe storage is DIR/state.json (state.py), written whole and durably after every
    step that changed it: a node killed with SIGKILL starts again from it (a recovery);
    one started in an empty folder starts afresh. A damaged file: one line, exit 2.
  - The machine is stepped by the node's runner (core/runner.py), the one the
    simulation's hosts use: what a step did comes out as the simulation's trace events,
    and its timers as requests this node turns into trio timers. Its inputs are
    core/work.py's items (Deliver, Fire, and the commands it takes: Elect, WantCs, Leave), and Stop.
  - The trace, DIR/trace.jsonl (traces.py), appended and flushed after every step: a
    transcript header at each start, then the runner's events as transcript lines, their
    time the wall time, with the node's Lamport clock added. cluster.py merges the
    traces of many nodes into one transcript.
  - The cluster that started it can change T, hold links (a partition of held
    connections, as the simulation holds links) and more through DIR/control.sock
    (control.py), each command checked by its type first.
  - Bad input on a socket (a stranger's bytes, a truncated frame, a frame of another
    algorithm) closes that connection with one line in the node's log (its stderr);
    the node stays up, its state untouched.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from dataclasses import dataclass

import trio

from protocol import machine

from ..core.commands import Elect, Join, Leave, Recover, WantCs
from ..core.config import ClusterConfig, InputError, Workload
from ..core.events import DropEvent, DuplicateEvent, SendEvent
from ..core.faults import LOST_ON_THE_LINK, FaultDraws, clock_rate
from ..core.runner import DROPPED_RECEIVER_DOWN, Draws, NodeRunner, Roster
from ..core.work import Boot, Deliver, Fire
from ..record.signals import not_ignored
from ..record.transcript import Header
from . import control, state, wire
from .link import Link
from .traces import TRACE_FILE, TraceWriter
from .wire import Address


@dataclass(frozen=True)
class NodeOptions:
    node: int
    listen: Address
    peers: dict[int, Address]
    algorithm: str
    state_dir: str
    config: ClusterConfig  # T, T', P; delay_max is --delay, the hold on each message
    seed: int = 1
    join: bool = False  # start as a new member (Join to every peer), not with the cluster
    start_at: float | None = None  # wall time to take the first step at (nodes started together by hand)
    parent: int | None = None  # the process that started it: stop when it is gone (a cluster's nodes)
    held: tuple[int, ...] = ()  # peers whose links are held from the start (started during a cluster's partition)
    wait_to_start: bool = False  # the first step when the control socket says (a cluster's nodes: once all listen)
    workload: Workload | None = None  # with a mutex ("classic+central"): when it wants the critical section


@dataclass(frozen=True)
class Stop:
    """Stop (SIGTERM, SIGINT, the cluster gone): down from now on, as after a crash, with
    the trace whole."""


MESSAGE_NUMBERS = 1 << 32  # a message's id: its sender's incarnation times this, plus its number in that life


class RealNode:
    def __init__(self, options: NodeOptions, nursery: trio.Nursery):
        self.options = options
        self.nursery = nursery
        cls = machine(options.algorithm)
        stored = state.load(options.state_dir, cls.storage_class, options.algorithm)
        self.recovering = stored is not None
        self.ids = tuple(sorted({options.node, *options.peers}))
        draws = Draws(f"{options.seed}:{options.node}", f"{options.seed}:{options.node}")  # (one generator for both)
        self.runner = NodeRunner(options.node, cls, Roster.of(self.ids), options.config.protocol, options.workload, draws,
                                 stored, epoch_reported=True)
        self.saved = stored.as_dict() if stored is not None else None
        self.inbox_in, self.inbox = trio.open_memory_channel(math.inf)
        self.timers: dict[str, tuple[int, trio.CancelScope]] = {}  # name -> (its generation, its task's scope)
        self.lamport = 0
        self.sent = 0  # numbers this node's messages in this life (with its incarnation: unique at this sender)
        self.config = options.config  # T changes with the cluster's `timeout` command (_command)
        self.links = {peer: Link(self, peer, address) for peer, address in options.peers.items()}
        self.rate = clock_rate(options.seed, options.node, options.config.faults.drift)  # its clock's
        self.fault_draws = FaultDraws(f"{options.seed}:{options.node}")  # (its own: a real node draws alone)
        for peer in options.held:
            self.links[peer].hold(True)
        self.trace: TraceWriter | None = None  # DIR/trace.jsonl, once listening (_boot)
        self.start_at = options.start_at  # (a cluster's "start" command sets it: _command)
        self.told_to_start = trio.Event()
        self.waiting = trio.CancelScope()  # the wait for the first step (_boot)
        self.instant: float | None = None  # the wall time of the step under way (its lines share it)
        self.started = False  # its first step taken (and its trace's header written)

    def log(self, line: str) -> None:
        """One line in the node's log (its stderr)."""
        try:
            print(f"node {self.options.node}: {line}", file=sys.stderr, flush=True)
        except OSError:
            pass

    # --- stepping the machine ----------------------------------------------------------

    def step(self, item) -> None:
        """One input through the runner, at this instant; then what it did: its timers
        running, its events in the trace (each message numbered and handed to its link),
        its safe storage written if it changed."""
        runner = self.runner
        runner.take(item, self.instant)
        for request in runner.requests:
            self._set_timer(request)
        runner.requests.clear()
        for name in [name for name, (generation, _) in self.timers.items()
                     if runner.timers.get(name, (None, None))[1] != generation]:  # (cancelled, or fired)
            self.timers.pop(name)[1].cancel()
        records, runner.records = runner.records, []
        for e in records:
            if type(e) is SendEvent:
                self.lamport += 1
                self.sent += 1
                e.id = runner.storage.incarnation * MESSAGE_NUMBERS + self.sent
                self.trace.event(e, self.lamport)
                if e.dst in self.links:
                    self._send(e)
                else:  # a member this node has no address for
                    self.trace.event(DropEvent(0, self.instant, e.id, e.src, e.dst, DROPPED_RECEIVER_DOWN), self.lamport)
            else:
                self.trace.event(e, self.lamport)
        now = runner.storage.as_dict()
        if now != self.saved:
            state.save(self.options.state_dir, runner.storage, self.options.algorithm)
            self.saved = now

    def _send(self, e: SendEvent) -> None:
        """A message on its link, unless this node loses it; twice if it duplicates it."""
        faults, happens = self.options.config.faults, self.fault_draws.happens
        if happens(faults.loss):
            self.trace.event(DropEvent(0, self.instant, e.id, e.src, e.dst, LOST_ON_THE_LINK), self.lamport)
            return
        self.links[e.dst].put(e.id, self.lamport, e.msg)
        if faults.duplicate and happens(faults.duplicate):
            self.links[e.dst].put(e.id, self.lamport, e.msg)
            self.trace.event(DuplicateEvent(0, self.instant, e.id, e.src, e.dst, self.instant), self.lamport)

    def dropped(self, msg_id: int, peer: int) -> None:
        """A message its link could not hand over (the peer is down): traced, now."""
        self.trace.event(DropEvent(0, time.time(), msg_id, self.options.node, peer, DROPPED_RECEIVER_DOWN), self.lamport)

    def _set_timer(self, request) -> None:
        """A trio timer for the runner's request (one set again replaces the old one)."""
        if (running := self.timers.pop(request.name, None)) is not None:
            running[1].cancel()
        scope = trio.CancelScope()
        self.timers[request.name] = (request.generation, scope)
        delay = request.delay / self.rate  # (its clock's rate: 1 unless it drifts)
        self.nursery.start_soon(self._timer, Fire(request.name, request.generation), delay, scope)
        fires = round(self.instant + delay, 6)  # (wall time, as every line's)
        self.runner.due(request, fires)
        request.event.fires = fires

    async def _timer(self, fire: Fire, delay: float, scope: trio.CancelScope) -> None:
        with scope:
            await trio.sleep(delay)
            self.inbox_in.send_nowait(fire)

    # --- running -----------------------------------------------------------------------

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        # The signals first: a stop that comes while the node starts stops it at once; an
        # election or a leave waits for its first step. A stop ignored when the node began
        # (a script's background job ignores SIGINT) stays ignored: a cluster stops its
        # nodes with SIGTERM.
        with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGUSR2,
                                       *not_ignored((signal.SIGTERM, signal.SIGINT))) as signals:
            self.nursery.start_soon(self._signals, signals)
            booted = await self._boot()
            task_status.started()
            if booted:
                await self._steps()
        if self.trace is not None:
            self.trace.close()
        self.nursery.cancel_scope.cancel()

    async def _steps(self) -> None:
        """Each input in turn, one step each, until a stop or a leave. An input's events
        and those of the step it causes share one wall time (`instant`): one instant, as
        in the simulation (the sends of a Want and the report that the node wants)."""
        async for item in self.inbox:
            self.instant = time.time()
            try:
                self._take(item)
            finally:
                self.instant = None
            if type(item) is Leave:
                with trio.move_on_after(self.config.delay_max + self.config.timeout):
                    while any(link.pending for link in self.links.values()):  # the Leaves go out first
                        await trio.sleep(0.01)
            if type(item) in (Leave, Stop):
                break

    def _take(self, item) -> None:
        if type(item) is Stop:  # down from now on, as after a crash
            self.trace.stop(self.instant, self.options.node, self.lamport)
            return
        if type(item) is Deliver:
            self.lamport = max(self.lamport, item.lamport) + 1
        self.step(item)

    async def _boot(self) -> bool:
        """Listening, then the first step when its time comes: True; False if told to stop first.
        (What can be refused is, before the trace is written: a refusal leaves the folder as it was.)"""
        o = self.options
        try:
            listeners = await trio.open_tcp_listeners(o.listen.port, host=o.listen.host)
        except OSError as e:
            raise InputError(f"cannot listen on {o.listen}: {e.strerror or e}") from None
        control.in_the_way(o.state_dir)
        self.trace = TraceWriter(os.path.join(o.state_dir, TRACE_FILE), o.algorithm)
        commands = await control.listener(o.state_dir)
        self.nursery.start_soon(trio.serve_listeners, self._serve, listeners)
        self.nursery.start_soon(trio.serve_listeners, self._control, [commands])
        if o.parent is not None:
            self.nursery.start_soon(self._orphaned, o.parent)
        with trio.CancelScope() as self.waiting:  # (SIGTERM, or the cluster gone, meanwhile: no first step)
            if o.wait_to_start:
                await self.told_to_start.wait()
            if self.start_at is not None:  # listening already: whoever starts first reaches the others
                await trio.sleep(max(0.0, self.start_at - time.time()))
        if self.waiting.cancelled_caught:
            return False
        if self.recovering or o.join or self.start_at is None:  # (peers may have given up on it)
            for link in self.links.values():
                link.greet()
        self.first_step(time.time())
        return True

    def first_step(self, instant: float) -> None:
        """The start, a recovery or a join, at `instant`: its header in the trace, then its step."""
        o = self.options
        self.instant = instant  # (the start and its first step: one instant)
        self.trace.header(Header(o.algorithm, list(self.ids), o.seed, self.config, workload=o.workload, real=True))
        if self.recovering and self.runner.mutex:
            self.runner.cs = None  # (it may have crashed inside the critical section: its place is said again)
        self.started = True
        me = o.node
        self.step(Recover(me) if self.recovering else Join(me) if o.join else Boot())
        self.instant = None

    async def _signals(self, signals) -> None:
        async for number in signals:
            what = {signal.SIGUSR1: Elect(self.options.node), signal.SIGUSR2: Leave(self.options.node)}.get(number)
            if what is None:
                self._stop()
            else:
                self.inbox_in.send_nowait(what)

    def _stop(self) -> None:
        """Stop: at once if it has not taken its first step yet, else after this step."""
        self.waiting.cancel()
        self.inbox_in.send_nowait(Stop())

    async def _watched(self, stream: trio.SocketStream) -> None:
        """Someone watches this node (`bully-tui attach`): its trace so far, then each new
        line. (Read and registered with no await between: no line is missed or sent twice.)"""
        with open(self.trace.path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        send, receive = trio.open_memory_channel(math.inf)
        self.trace.watchers.append(send.send_nowait)
        try:
            await stream.send_all(b"".join(map(wire.line_frame, lines)))
            async for line in receive:
                await stream.send_all(wire.line_frame(line))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass  # the watcher went away
        finally:
            self.trace.watchers.remove(send.send_nowait)

    async def _control(self, stream: trio.SocketStream) -> None:
        """Commands from the cluster (control.py), each checked, then obeyed."""
        await control.serve(stream, self._command, lambda why: self.log(f"closed a control connection: {why}"))

    def _command(self, obj: dict) -> None:
        o = self.options
        command = control.parse(obj, me=o.node, waits_to_start=o.wait_to_start, mutex=self.runner.mutex)
        name = command[0]
        if name == "timeout":
            self.config = self.config.with_timeout(command[1])
            self.runner.reconfigure(self.config.protocol)
            if self.started:  # (before its first step, its trace has no header yet: the new T is in the one it writes)
                self.trace.timeout(self.instant or time.time(), o.node, self.lamport, self.config.timeout)
        elif name == "peer" and command[1] not in self.links:  # (a peer it has already: nothing to learn)
            self.links[command[1]] = Link(self, command[1], command[2])
            self.runner.roster.every.add(command[1])  # (whom its machine may send to, once it has joined)
        elif name == "start":
            self.start_at = command[1]
            self.told_to_start.set()
        elif name == "want":  # (stepped by the one task that steps the machine)
            self.inbox_in.send_nowait(WantCs(self.options.node))
        elif name in ("hold", "release"):
            for peer in command[1]:
                if peer in self.links:
                    self.links[peer].hold(name == "hold")

    async def _orphaned(self, parent: int) -> None:
        """The cluster that started this node was killed without stopping it (its nodes run
        in sessions of their own, so no terminal's hangup reaches them): stop too."""
        while os.getppid() == parent:
            await trio.sleep(0.5)
        self._stop()

    async def _serve(self, stream: trio.SocketStream) -> None:
        """A peer's connection: its hello, then its messages, in order."""
        frames, peer = wire.Frames(), None
        try:
            async with stream:
                async for data in stream:
                    for obj in frames.feed(data):
                        if peer is None and obj == {"watch": True}:
                            await self._watched(stream)
                            return
                        if peer is None:
                            peer = wire.read_hello(obj, self.options.algorithm, set(self.links))
                            self.links[peer].back()
                        else:
                            msg_id, lamport, msg = wire.read_message(self.options.algorithm, obj)
                            self.inbox_in.send_nowait(Deliver(peer, msg_id, msg, lamport))
                if frames.partial:
                    raise wire.FrameError("a truncated frame (the connection ended in the middle of one)")
        except wire.FrameError as e:
            self.log(f"closed a connection{'' if peer is None else f' from node {peer}'}: {e}")
        except (trio.BrokenResourceError, OSError):
            pass  # the peer went down: what it sent before is in


async def serve(options: NodeOptions) -> None:
    if options.parent is not None and os.getppid() != options.parent:
        return  # its cluster was gone before this process had started: nothing to do
    if options.parent is None:  # (a cluster made its node's folder; one that is gone took it away: not made again)
        try:
            os.makedirs(options.state_dir, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot make the state folder {options.state_dir}: {e.strerror or e}") from None
    async with trio.open_nursery() as nursery:
        node = RealNode(options, nursery)
        await nursery.start(node.run)
