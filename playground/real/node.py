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
  - The cluster that started it can change T and hold links through DIR/control.sock
    (`_control`): a partition of held connections, as the simulation holds links.
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
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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

from ..core.config import TIMEOUT, ClusterConfig, InputError, Workload, WriteError, parse_whole, shown
from ..core.host import DROPPED_RECEIVER_DOWN, THINK, WORKLOAD_AFTER, WORKLOAD_INPUTS, workload_span
from ..record.codec import converter
from . import state, wire

TRACE_FILE = "trace.jsonl"
BACKOFF_FIRST, BACKOFF_MOST = 0.05, 1.0  # seconds a link waits after a failed connection: the first, the longest
CONTROL_FILE = "control.sock"


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def parse(cls, text: str, what: str) -> Address:
        """"HOST:PORT" (a port from 1 to 65535), or one line naming `what` (InputError):
        the command line's addresses and the control socket's alike."""
        host, sep, port = text.rpartition(":")
        if not sep or not host:
            raise InputError(f"{what} must be HOST:PORT, not {shown(text)}")
        return cls(host.strip("[]"), parse_whole(port, f"{what}'s port", 1, 65535))


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


@contextmanager
def unix_socket_path(path: str) -> Iterator[str]:
    """`path` as a Unix socket can be bound or reached at (at most 107 bytes): itself; or,
    for a longer one (a deep --state-dir), the same file named through its folder's
    descriptor, /proc/self/fd/N/NAME (Linux)."""
    if len(os.fsencode(path)) <= 107 or not os.path.isdir("/proc/self/fd"):
        yield path
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    finally:
        os.close(folder)


def _refusal(e: BaseException) -> ConnectionRefusedError | None:
    """The refusal among what a failed connection raised, if any (trio raises one OSError,
    "all attempts to connect ... failed", from a group of the attempts' own errors)."""
    if isinstance(e, ConnectionRefusedError):
        return e
    causes = e.__cause__.exceptions if isinstance(e.__cause__, BaseExceptionGroup) else (e.__cause__,)
    return next((r for c in causes if c is not None and (r := _refusal(c)) is not None), None)


def _cut_partial_line(path: str) -> None:
    """A last line that a kill cut short (no newline after it) is cut off the trace, so
    that the next run's first line starts a line of its own, not a line of garbage."""
    try:
        f = open(path, "r+b")  # noqa: SIM115 - closed below
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


def log(line: str) -> None:
    """One line in the node's log (its stderr)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


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
        path = os.path.join(options.state_dir, TRACE_FILE)
        try:
            _cut_partial_line(path)
            self.trace = open(path, "a", buffering=1)  # noqa: SIM115 - closed in run
        except OSError as e:
            raise InputError(f"cannot write {path}: {e.strerror or e}") from None
        self.shown: tuple | None = None
        self.encode = converter(options.algorithm).unstructure
        self.start_at = options.start_at  # (a cluster's "start" command sets it: _command)
        self.told_to_start = trio.Event()
        self.mutex = cls.mutex is not None
        self.cs = CsState.RELEASED  # as last traced
        self.waiting = trio.CancelScope()  # the wait for the first step (_boot)

    # --- the trace ---------------------------------------------------------------------

    def record(self, kind: str, **fields: object) -> None:
        line = json.dumps({"t": time.time(), "lamport": self.lamport, "node": self.o.node, "kind": kind, **fields},
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
        self.record("timer_set", name=name, fires=round(time.time() + delay, 6))  # (wall time, as every line's)

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
        self.trace.close()
        self.nursery.cancel_scope.cancel()

    async def _steps(self) -> None:
        """Each input in turn, one step each, until a stop or a leave."""
        async for item in self.inbox:
            if item[0] == "timer":
                _, name, number = item
                if self.timers.get(name, (None,))[0] == number:
                    del self.timers[name]
                    self.record("timer", name=name)
                    self.step(WORKLOAD_INPUTS.get(name) or TimerFired(name))  # (the workload's: Want, Exit)
            elif item[0] == "receive":
                _, src, msg_id, lamport, msg = item
                self.lamport = max(self.lamport, lamport) + 1
                self.record("deliver", id=msg_id, src=src)
                self.step(Receive(src, msg))
            elif item[0] == "elect":
                self.step(Suspect())
            elif item[0] == "want":
                self.step(Want())
            elif item[0] == "leave":
                self.step(Leaving())
                self.record("leave")
                with trio.move_on_after(self.config.delay_max + self.config.timeout):
                    while any(link.pending for link in self.links.values()):  # the Leaves go out first
                        await trio.sleep(0.01)
                break
            else:  # stop: down from now on, as after a crash
                self.record("stop")
                break

    async def _boot(self) -> bool:
        """Listening, then the first step when its time comes: True; False if told to stop first."""
        try:
            listeners = await trio.open_tcp_listeners(self.o.listen.port, host=self.o.listen.host)
        except OSError as e:
            raise InputError(f"cannot listen on {self.o.listen}: {e.strerror or e}") from None
        self.nursery.start_soon(trio.serve_listeners, self._serve, listeners)
        self.nursery.start_soon(trio.serve_listeners, self._control, [await self._control_listener()])
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
        self.record("boot", algorithm=self.o.algorithm, ids=list(self.machine.ids), recovering=self.recovering,
                    joining=self.o.join, timeout=c.timeout, coordinator_timeout=c.coordinator_timeout,
                    probe_interval=c.probe_interval, delay=c.delay_max)
        self.step(Joining() if self.o.join and not self.recovering else Start())
        if self.mutex and self.recovering:  # (out of the critical section: said, since it may have crashed inside)
            self._cs_changed(CsState.RELEASED)
        elif self.mutex:
            self._workload_timer(THINK)
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

    async def _control_listener(self) -> trio.SocketListener:
        """DIR/control.sock: a Unix socket only this machine's users who can reach the
        state folder can open (the cluster that started the node)."""
        path = os.path.join(self.o.state_dir, CONTROL_FILE)
        if os.path.lexists(path):
            os.unlink(path)  # (a previous incarnation's)
        sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
        try:
            with unix_socket_path(path) as where:
                await sock.bind(where)
        except OSError as e:
            sock.close()
            raise InputError(f"cannot make {path}: {e.strerror or e}") from None
        sock.listen()
        return trio.SocketListener(sock)

    async def _control(self, stream: trio.SocketStream) -> None:
        """Commands from the cluster, a frame each: {"command": "timeout", "value": T}
        (a new T, for timers set from now on, as the simulation's `timeout`); {"command":
        "hold" or "release", "peers": [...]} (messages to those peers wait, in order,
        until released: a partition of held connections, as the simulation holds links);
        {"command": "peer", "id": K, "address": "HOST:PORT"} (a node about to join: where
        it listens; its Join tells the machine); {"command": "start", "at": UNIX_TIME} (a
        node started with --wait-to-start takes its first step then); {"command": "want"}
        (with a mutex: it asks for the critical section now)."""
        frames = wire.Frames()
        try:
            async with stream:
                async for data in stream:
                    for obj in frames.feed(data):
                        self._command(obj)
        except (wire.FrameError, trio.BrokenResourceError, OSError) as e:
            log(f"node {self.o.node}: closed a control connection: {e}")

    def _command(self, obj: dict) -> None:
        command = obj.get("command")
        if command == "timeout" and type(obj.get("value")) in (int, float) and TIMEOUT.low <= obj["value"] <= TIMEOUT.high:
            self.config = self.config.with_timeout(float(obj["value"]))
            self.machine.reconfigure(self.config.protocol)
            self.record("timeout", value=self.config.timeout)
        elif command == "peer" and type(obj.get("id")) is int and obj["id"] not in self.links and \
                obj["id"] != self.o.node and isinstance(obj.get("address"), str):
            try:
                where = Address.parse(obj["address"], f"node {obj['id']}'s address")
            except InputError as e:
                raise wire.FrameError(str(e)) from None
            link = self.links[obj["id"]] = Link(self, obj["id"], where)
            self.nursery.start_soon(link.run)
        elif command == "start" and self.o.wait_to_start and type(obj.get("at")) in (int, float) \
                and math.isfinite(obj["at"]):
            self.start_at = obj["at"]
            self.told_to_start.set()
        elif command == "want" and self.mutex:  # (stepped by the one task that steps the machine)
            self.inbox_in.send_nowait(("want",))
        elif command in ("hold", "release") and isinstance(obj.get("peers"), list):
            for peer in obj["peers"]:
                if peer in self.links:
                    self.links[peer].hold(command == "hold")
        else:
            raise wire.FrameError(f"not a command: {json.dumps(obj)[:80]}")

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


class Link:
    """The connection to one peer, FIFO: messages go out in the order they were sent. It
    is opened when a message is to go and none is open, and watched: the peer never
    writes on it, so an end or an error read there means the peer went down, and the
    next message connects afresh (to a peer that has started again). A message that
    cannot go (no connection within T/4, or it broke) is dropped and traced.

    Backoff. After a refused connection (the peer's machine answers that nothing listens
    there) the link does not try again for a while (50 ms, doubled at each refusal up to
    1 s): meanwhile its messages are dropped at once, as to a down node. A connection not
    answered within T/4 is not backed off from: the next message tries again, because
    this machine's own load can be the reason (64 processes on two cores time out
    connections to peers that are up, and backing off from those slowed an election of
    64 from 0.7 s to 3.8 s). A node that comes back (a recovery, a join, or one started
    by hand) greets every peer (a connection with its hello and nothing else, queued
    first), and a hello from a peer ends the backoff towards it: a peer that is back is
    reached at once. The node's log has one line when a peer cannot be reached (not one a
    try) and one when it is reached again."""

    def __init__(self, node: RealNode, peer: int, address: Address):
        self.node, self.peer, self.address = node, peer, address
        self.queue_in, self.queue = trio.open_memory_channel(math.inf)
        self.stream: trio.SocketStream | None = None
        self.pending = 0  # messages put and not yet sent or dropped
        self.open = trio.Event()  # set while the link is not held
        self.open.set()
        self.backoff = 0.0  # seconds without trying after the last refused connection (0: none refused)
        self.retry_at = -math.inf  # trio time before which no connection is tried
        self.unreachable: str | None = None  # why the peer could not be reached, while that lasts (said once)

    def greet(self) -> None:
        """Connect and say hello, queued before any message (a node that starts: _boot)."""
        self.queue_in.send_nowait((trio.current_time(), None, 0, None))

    def back(self) -> None:
        """The peer said hello: it is up, so the next message tries at once."""
        self.backoff, self.retry_at = 0.0, -math.inf

    def hold(self, held: bool) -> None:
        if held and self.open.is_set():
            self.open = trio.Event()
        elif not held:
            self.open.set()

    def put(self, msg_id: str, lamport: int, msg) -> None:
        self.pending += 1
        self.queue_in.send_nowait((trio.current_time() + self.node.config.delay_max, msg_id, lamport, msg))

    async def run(self) -> None:
        async for due, msg_id, lamport, msg in self.queue:
            await trio.sleep_until(due)
            await self.open.wait()  # held: it waits here, and those after it behind it
            if msg_id is None:  # the greeting: connected, nothing sent
                await self._reach()
                continue
            data = wire.message_frame(self.node.o.algorithm, msg_id, lamport, msg)
            if not await self._send(data):
                self.node.record("drop", id=msg_id, dst=self.peer, reason=DROPPED_RECEIVER_DOWN)
            self.pending -= 1

    async def _reach(self) -> bool:
        """Connected: already, or now (unless backing off from a refusal)."""
        if self.stream is not None:
            return True
        if trio.current_time() < self.retry_at:
            return False
        failed = await self._connect()
        if failed is None:
            if self.unreachable:
                log(f"node {self.node.o.node}: reached node {self.peer} at {self.address} again")
            self.unreachable, self.backoff = None, 0.0
            return True
        why, refused = failed
        if self.unreachable is None:  # (one line an outage, not one a try)
            log(f"node {self.node.o.node}: cannot reach node {self.peer} at {self.address} ({why}): its messages "
                f"are dropped until it answers")
            self.unreachable = why
        if refused:
            self.backoff = min(BACKOFF_MOST, max(BACKOFF_FIRST, 2 * self.backoff))
            self.retry_at = trio.current_time() + self.backoff
        return False

    async def _send(self, data: bytes) -> bool:
        if not await self._reach():
            return False
        stream = self.stream
        try:
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self._forget(stream)
            return False
        return True

    async def _connect(self) -> tuple[str, bool] | None:
        """A connection with the hello sent; else why not, and whether it was refused (an
        answer: nothing listens there) rather than unanswered within T/4."""
        stream, failed = None, None
        within = min(1.0, self.node.config.timeout / 4)
        with trio.move_on_after(within) as waited:
            try:
                stream = await trio.open_tcp_stream(self.address.host, self.address.port)
                await stream.send_all(wire.hello(self.node.o.node, self.node.o.algorithm))
            except (OSError, trio.BrokenResourceError) as e:
                refused = _refusal(e)
                why = os.strerror(refused.errno) if refused is not None and refused.errno else e.strerror
                failed = (why or str(e) or type(e).__name__, refused is not None)
        if waited.cancelled_caught:
            failed = (f"no answer within {within:g} s", False)
        if failed is not None:
            if stream is not None:  # (opened, but the hello did not go: not a link)
                await trio.aclose_forcefully(stream)
            return failed
        self.stream = stream
        self.node.nursery.start_soon(self._watch, stream)
        return None

    async def _watch(self, stream: trio.SocketStream) -> None:
        try:
            while await stream.receive_some():
                pass  # (the peer says nothing on this connection)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        await self._forget(stream)

    async def _forget(self, stream: trio.SocketStream) -> None:
        if self.stream is stream:
            self.stream = None
        await trio.aclose_forcefully(stream)


async def serve(options: NodeOptions) -> None:
    try:
        os.makedirs(options.state_dir, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot make the state folder {options.state_dir}: {e.strerror or e}") from None
    async with trio.open_nursery() as nursery:
        node = RealNode(options, nursery)
        await nursery.start(node.run)
