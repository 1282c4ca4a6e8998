"""One real node: the same pure state machine the simulation hosts, in a process of its
own, over TCP (`bully-tui node`; seed 001: "TCP is used as the transport").

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
  - Timers run on trio's clock. A timer set again replaces the old one; a firing that
    was already on its way when its timer was set again or cancelled is recognised by
    its number and ignored. A timer set with a range (Raft's) is drawn from the node's
    own generator, seeded by --seed and its id.
  - Safe storage is DIR/state.json (state.py), written whole and durably after every
    step that changed it: a node killed with SIGKILL starts again from it (a recovery);
    one started in an empty folder starts afresh. A damaged file: one line, exit 2.
  - The trace, DIR/trace.jsonl, one JSON object a line, appended and flushed after every
    step: its wall time, its Lamport clock, and what happened (boot, send, deliver,
    drop, state, election). cluster.py merges the traces of many nodes into one
    transcript.
  - The cluster that started it can change T, hold links (a partition of held
    connections, as the simulation holds links) and more through DIR/control.sock
    (control.py), each command checked by its type first.
  - Bad input on a socket (a stranger's bytes, a truncated frame, a frame of another
    algorithm) closes that connection with one line in the node's log (its stderr);
    the node stays up, its state untouched.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import stat
import time
from dataclasses import dataclass

import trio

from protocol import (
    CancelTimer,
    CsState,
    ElectionStarted,
    Joining,
    Leaving,
    Message,
    Receive,
    Send,
    SetTimer,
    Start,
    Suspect,
    TimerFired,
    Want,
    machine,
)

from ..core.config import ClusterConfig, InputError, Workload, WriteError
from ..core.host import DROPPED_RECEIVER_DOWN, THINK, WORKLOAD_AFTER, WORKLOAD_INPUTS, workload_span
from ..record.codec import converter
from . import control, state, wire
from .link import Link, log
from .wire import Address

TRACE_FILE = "trace.jsonl"


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


def _open_trace(path: str):
    """The trace, to append to (a line a kill cut short cut off first); or one line."""
    try:
        _cut_partial_line(path)
        return open(path, "a", buffering=1)  # (closed in run)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None


def _cut_partial_line(path: str) -> None:
    """A last line that a kill cut short (no newline after it) is cut off the trace, so
    that the next run's first line starts a line of its own, not a line of garbage. What
    is not a file there (a FIFO, a folder) is refused (InputError): it is not a trace."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise InputError(f"{path} is not a file: a node's trace goes there (move it away)")
        f = open(path, "r+b")  # (closed below)
    except FileNotFoundError:
        return
    with f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - 65536)  # (a line is far shorter)
        f.seek(start)
        tail = f.read()
        if tail and not tail.endswith(b"\n"):
            end = tail.rfind(b"\n")
            if end >= 0 or start == 0:
                f.truncate(start + end + 1)


class RealNode:
    def __init__(self, options: NodeOptions, nursery: trio.Nursery):
        self.o = options
        self.nursery = nursery
        cls = machine(options.algorithm)
        stored = state.load(options.state_dir, cls.storage_class, options.algorithm)
        self.recovering = stored is not None
        ids = tuple(sorted({options.node, *options.peers}))
        self.machine = cls(options.node, ids, options.config.protocol, stored or cls.storage_class())
        self.saved = self.machine.storage.as_dict() if stored is not None else None
        self.draws = random.Random(f"{options.seed}:{options.node}")
        self.inbox_in, self.inbox = trio.open_memory_channel(math.inf)
        self.timers: dict[str, tuple[int, trio.CancelScope]] = {}  # name -> (its number, its task's scope)
        self.timer_count = 0
        self.lamport = 0
        self.sent = 0  # numbers this node's messages (with its incarnation: unique in its trace)
        self.config = options.config  # T changes with the cluster's `timeout` command (_command)
        self.watchers: list[trio.MemorySendChannel] = []  # connections that watch the trace (_watched)
        self.links = {peer: Link(self, peer, address) for peer, address in options.peers.items()}
        for peer in options.held:
            self.links[peer].hold(True)
        self.trace = None  # DIR/trace.jsonl, once listening (_boot)
        self.shown: tuple | None = None
        self.encode = converter(options.algorithm).unstructure
        self.start_at = options.start_at  # (a cluster's "start" command sets it: _command)
        self.told_to_start = trio.Event()
        self.mutex = cls.mutex is not None
        self.cs = CsState.RELEASED  # as last traced
        self.waiting = trio.CancelScope()  # the wait for the first step (_boot)
        self.instant: float | None = None  # the wall time of the step under way (its lines share it)

    # --- the trace ---------------------------------------------------------------------

    def record(self, kind: str, **fields: object) -> None:
        line = json.dumps({"t": self.instant or time.time(), "lamport": self.lamport, "node": self.o.node, "kind": kind, **fields},
                          separators=(",", ":")) + "\n"
        try:
            self.trace.write(line)
        except OSError as e:  # a full disk: the node stops, saying so (its trace would have a hole)
            raise WriteError(f"cannot write {self.trace.name}: {e.strerror or e}") from None
        for watcher in self.watchers:
            watcher.send_nowait(line.encode())

    # --- stepping the machine ----------------------------------------------------------

    def step(self, event) -> None:
        outputs = self.machine.step(event)
        m = self.machine
        for out in outputs:
            kind = type(out)
            if kind is Send:
                self.lamport += 1
                self.sent += 1
                msg_id = f"{self.o.node}.{m.storage.incarnation}.{self.sent}"
                self.record("send", id=msg_id, dst=out.dst, msg=self.encode(out.msg, Message))
                if out.dst in self.links:
                    self.links[out.dst].put(msg_id, self.lamport, out.msg)
                else:  # a member this node has no address for (one that joined elsewhere)
                    self.record("drop", id=msg_id, dst=out.dst, reason=DROPPED_RECEIVER_DOWN)
            elif kind is SetTimer:
                delay = out.delay if out.longest is None else self.draws.uniform(out.delay, out.longest)
                self._set_timer(out.name, delay)
            elif kind is CancelTimer:
                self._cancel_timer(out.name)
            elif kind is ElectionStarted:
                self.record("election_start")
        shown = (m.status, m.leader, m.epoch)
        if m.status is not None and shown != self.shown:
            self.shown = shown
            self.record("state", status=str(m.status), role=str(m.status.role), leader=m.leader, epoch=m.epoch)
        if self.mutex and m.cs.state is not self.cs:  # (as the simulation's host: its rule 7)
            self._cs_changed(m.cs.state)
        now = m.storage.as_dict()
        if now != self.saved:
            state.save(self.o.state_dir, m.storage, self.o.algorithm)
            self.saved = now

    def _cs_changed(self, cs: CsState) -> None:
        """The critical section's state, traced; and the workload's next time: a hold once
        inside, a think once out."""
        self.cs = cs
        self.record("cs", state=str(cs), stamp=self.machine.cs.stamp())
        if cs in WORKLOAD_AFTER:
            self._workload_timer(WORKLOAD_AFTER[cs])

    def _workload_timer(self, name: str) -> None:
        span = workload_span(self.o.workload, name)
        if span is not None:
            self._set_timer(name, self.draws.uniform(*span))

    def _set_timer(self, name: str, delay: float) -> None:
        self._stop_timer(name)
        self.timer_count += 1
        scope = trio.CancelScope()
        self.timers[name] = (self.timer_count, scope)
        self.nursery.start_soon(self._timer, name, self.timer_count, delay, scope)
        self.record("timer_set", name=name, fires=round((self.instant or time.time()) + delay, 6))  # (wall time, as every line's)

    def _cancel_timer(self, name: str) -> None:
        if self._stop_timer(name):
            self.record("timer_cancel", name=name)

    def _stop_timer(self, name: str) -> bool:
        running = self.timers.pop(name, None)
        if running is not None:
            running[1].cancel()
        return running is not None

    async def _timer(self, name: str, number: int, delay: float, scope: trio.CancelScope) -> None:
        with scope:
            await trio.sleep(delay)
            self.inbox_in.send_nowait(("timer", name, number))

    # --- running -----------------------------------------------------------------------

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        # The signals first: a stop that comes while the node starts stops it at once; an
        # election or a leave waits for its first step.
        with trio.open_signal_receiver(signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT) as signals:
            self.nursery.start_soon(self._signals, signals)
            booted = await self._boot()
            task_status.started()
            if booted:
                await self._steps()
        if self.trace is not None:
            self.trace.close()
        self.nursery.cancel_scope.cancel()

    async def _steps(self) -> None:
        """Each input in turn, one step each, until a stop or a leave. An input's line and
        the lines of the step it causes share one wall time (`instant`): one instant, as
        in the simulation (the sends of a Want and the report that the node wants)."""
        async for item in self.inbox:
            self.instant = time.time()
            try:
                what = self._take(item)
            finally:
                self.instant = None
            if what == "leave":
                with trio.move_on_after(self.config.delay_max + self.config.timeout):
                    while any(link.pending for link in self.links.values()):  # the Leaves go out first
                        await trio.sleep(0.01)
            if what in ("leave", "stop"):
                break

    def _take(self, item: tuple) -> str:
        """One input: its line in the trace, and its step. What it was."""
        what = item[0]
        if what == "timer":
            _, name, number = item
            if self.timers.get(name, (None,))[0] == number:
                del self.timers[name]
                self.record("timer", name=name)
                self.step(WORKLOAD_INPUTS.get(name) or TimerFired(name))  # (the workload's: Want, Exit)
        elif what == "receive":
            _, src, msg_id, lamport, msg = item
            self.lamport = max(self.lamport, lamport) + 1
            self.record("deliver", id=msg_id, src=src)
            self.step(Receive(src, msg))
        elif what == "elect":
            self.step(Suspect())
        elif what == "want":
            self.step(Want())
        elif what == "leave":
            self.step(Leaving())
            self.record("leave")
        else:  # stop: down from now on, as after a crash
            self.record("stop")
        return what

    async def _boot(self) -> bool:
        """Listening, then the first step when its time comes: True; False if told to stop first.
        (What can be refused is, before the trace is written: a refusal leaves the folder as it was.)"""
        try:
            listeners = await trio.open_tcp_listeners(self.o.listen.port, host=self.o.listen.host)
        except OSError as e:
            raise InputError(f"cannot listen on {self.o.listen}: {e.strerror or e}") from None
        control.in_the_way(self.o.state_dir)
        self.trace = _open_trace(os.path.join(self.o.state_dir, TRACE_FILE))
        commands = await control.listener(self.o.state_dir)
        self.nursery.start_soon(trio.serve_listeners, self._serve, listeners)
        self.nursery.start_soon(trio.serve_listeners, self._control, [commands])
        if self.o.parent is not None:
            self.nursery.start_soon(self._orphaned, self.o.parent)
        for link in self.links.values():
            self.nursery.start_soon(link.run)
        with trio.CancelScope() as self.waiting:  # (SIGTERM, or the cluster gone, meanwhile: no first step)
            if self.o.wait_to_start:
                await self.told_to_start.wait()
            if self.start_at is not None:  # listening already: whoever starts first reaches the others
                await trio.sleep(max(0.0, self.start_at - time.time()))
        if self.waiting.cancelled_caught:
            return False
        if self.recovering or self.o.join or self.start_at is None:  # (peers may have given up on it)
            for link in self.links.values():
                link.greet()
        c = self.config
        self.instant = time.time()  # (the boot and its first step: one instant)
        self.record("boot", algorithm=self.o.algorithm, ids=list(self.machine.ids), recovering=self.recovering,
                    joining=self.o.join, timeout=c.timeout, coordinator_timeout=c.coordinator_timeout,
                    probe_interval=c.probe_interval, delay=c.delay_max)
        self.step(Joining() if self.o.join and not self.recovering else Start())
        if self.mutex and self.recovering:  # (out of the critical section: said, since it may have crashed inside)
            self._cs_changed(CsState.RELEASED)
        elif self.mutex:
            self._workload_timer(THINK)
        self.instant = None
        return True

    async def _signals(self, signals) -> None:
        async for number in signals:
            what = {signal.SIGUSR1: "elect", signal.SIGUSR2: "leave"}.get(number)
            if what is None:
                self._stop()
            else:
                self.inbox_in.send_nowait((what,))

    def _stop(self) -> None:
        """Stop: at once if it has not taken its first step yet, else after this step."""
        self.waiting.cancel()
        self.inbox_in.send_nowait(("stop",))

    async def _watched(self, stream: trio.SocketStream) -> None:
        """Someone watches this node (`bully-tui attach`): its trace so far, then each new
        line. (Read and registered with no await between: no line is missed or sent twice.)"""
        with open(self.trace.name, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        send, receive = trio.open_memory_channel(math.inf)
        self.watchers.append(send)
        try:
            await stream.send_all(b"".join(map(wire.line_frame, lines)))
            async for line in receive:
                await stream.send_all(wire.line_frame(line))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass  # the watcher went away
        finally:
            self.watchers.remove(send)

    async def _control(self, stream: trio.SocketStream) -> None:
        """Commands from the cluster (control.py), each checked, then obeyed."""
        await control.serve(stream, self._command,
                            lambda why: log(f"node {self.o.node}: closed a control connection: {why}"))

    def _command(self, obj: dict) -> None:
        command = control.parse(obj, me=self.o.node, waits_to_start=self.o.wait_to_start, mutex=self.mutex)
        name = command[0]
        if name == "timeout":
            self.config = self.config.with_timeout(command[1])
            self.machine.reconfigure(self.config.protocol)
            self.record("timeout", value=self.config.timeout)
        elif name == "peer" and command[1] not in self.links:  # (a peer it has already: nothing to learn)
            link = self.links[command[1]] = Link(self, command[1], command[2])
            self.nursery.start_soon(link.run)
        elif name == "start":
            self.start_at = command[1]
            self.told_to_start.set()
        elif name == "want":  # (stepped by the one task that steps the machine)
            self.inbox_in.send_nowait(("want",))
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
                            peer = wire.read_hello(obj, self.o.algorithm, set(self.links))
                            self.links[peer].back()
                        else:
                            self.inbox_in.send_nowait(("receive", peer, *wire.read_message(self.o.algorithm, obj)))
                if frames.partial:
                    raise wire.FrameError("a truncated frame (the connection ended in the middle of one)")
        except wire.FrameError as e:
            log(f"node {self.o.node}: closed a connection{'' if peer is None else f' from node {peer}'}: {e}")
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
