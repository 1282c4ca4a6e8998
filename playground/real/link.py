"""A real node's link to one peer (node.py): one TCP connection, FIFO, opened when a
message is to go, with a backoff from a peer that refuses."""

from __future__ import annotations

import math
import os
from collections import deque

import trio

from . import wire
from .wire import Address

BACKOFF_FIRST, BACKOFF_MOST = 0.05, 1.0  # seconds a link waits after a failed connection: the first, the longest


async def connect(host: str, port: int) -> trio.SocketStream:
    """A TCP connection to the first of `host`'s addresses that takes one, in the
    resolver's order; else one OSError, "all attempts to connect ... failed", from a group
    of the attempts' own errors, as trio.open_tcp_stream raises it. Not that function
    itself: it tries a host's addresses side by side (happy eyeballs), building a nursery,
    its tasks and events for each call, and a node's first messages to every peer at
    once (63 in a cluster of 64) left half a megabyte more in its process. A link waits
    T/4 at most, a refusal comes at once, and a peer on this machine or its network
    answers at once."""
    targets = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    if not targets:
        raise OSError(f"no address found for {host}")
    errors = []
    for family, kind, proto, _, address in targets:
        sock = trio.socket.socket(family, kind, proto)
        try:
            await sock.connect(address)
        except OSError as e:
            sock.close()
            errors.append(e)
            continue
        except BaseException:  # (cancelled: T/4 is over)
            sock.close()
            raise
        return trio.SocketStream(sock)
    said = f"all attempts to connect to {host}:{port} failed"
    raise OSError(said) from ExceptionGroup(said, errors)


def _refusal(e: BaseException) -> ConnectionRefusedError | None:
    """The refusal among what a failed connection raised, if any (`connect` raises one
    OSError from a group of the attempts' own errors)."""
    if isinstance(e, ConnectionRefusedError):
        return e
    causes = e.__cause__.exceptions if isinstance(e.__cause__, BaseExceptionGroup) else (e.__cause__,)
    return next((r for c in causes if c is not None and (r := _refusal(c)) is not None), None)


def _why(e: BaseException, refused: ConnectionRefusedError | None) -> str:
    """What a failed connection says, in words: the refusal's, or the operating system's
    error under trio's (a broken stream's cause), or the exception's own text."""
    if refused is not None and refused.errno:
        return os.strerror(refused.errno)
    error = e if isinstance(e, OSError) else e.__cause__
    return (error.strerror if isinstance(error, OSError) else None) or str(e) or type(e).__name__


class Link:
    """The connection to one peer, FIFO: messages go out in the order they were sent. It
    is opened when a message is to go and none is open, and looked at before each
    message: the peer never writes on it, so one with something to read (its end, or an
    error) is one the peer has left, and the message connects afresh (to a peer that has
    started again). A message that cannot go (no connection within T/4, or it broke) is
    dropped and traced. A link has a task only while it has messages to send: a node has
    a link to every member, most are idle most of the time, and a task waiting costs a
    few KB (many nodes share a machine).

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

    def __init__(self, node, peer: int, address: Address):
        """`node`: the RealNode it serves (its options, settings, nursery, trace and log)."""
        self.node, self.peer, self.address = node, peer, address
        self.queue: deque[tuple] = deque()  # (when it is due, its id, lamport, message); id None: the greeting
        self.sending = False  # a task sends what is queued, until nothing is
        self.stream: trio.SocketStream | None = None
        self.pending = 0  # messages put and not yet sent or dropped
        self.open = trio.Event()  # set while the link is not held
        self.open.set()
        self.backoff = 0.0  # seconds without trying after the last refused connection (0: none refused)
        self.retry_at = -math.inf  # trio time before which no connection is tried
        self.unreachable: str | None = None  # why the peer could not be reached, while that lasts (said once)

    def greet(self) -> None:
        """Connect and say hello, queued before any message (a node that starts: _boot)."""
        self._queue((trio.current_time(), None, 0, None))

    def back(self) -> None:
        """The peer said hello: it is up, so the next message tries at once."""
        self.backoff, self.retry_at = 0.0, -math.inf

    def hold(self, held: bool) -> None:
        if held and self.open.is_set():
            self.open = trio.Event()
        elif not held:
            self.open.set()

    def put(self, msg_id: int, lamport: int, msg) -> None:
        self.pending += 1
        self._queue((trio.current_time() + self.node.config.delay_max, msg_id, lamport, msg))

    def _queue(self, item: tuple) -> None:
        self.queue.append(item)
        if not self.sending:
            self.sending = True
            self.node.nursery.start_soon(self._send_queued)

    async def _send_queued(self) -> None:
        """Each queued message in turn, until none is left (one put meanwhile waits its turn)."""
        try:
            while self.queue:
                due, msg_id, lamport, msg = self.queue.popleft()
                await trio.sleep_until(due)
                await self.open.wait()  # held: it waits here, and those after it behind it
                if msg_id is None:  # the greeting: connected, nothing sent
                    await self._reach()
                    continue
                data = wire.message_frame(self.node.options.algorithm, msg_id, lamport, msg)
                if not await self._send(data):
                    self.node.dropped(msg_id, self.peer)
                self.pending -= 1
        finally:
            self.sending = False

    async def _reach(self) -> bool:
        """Connected: already, or now (unless backing off from a refusal)."""
        if self.stream is not None and self.stream.socket.is_readable():  # (the peer left it: see Link)
            await self._forget(self.stream)
        if self.stream is not None:
            return True
        if trio.current_time() < self.retry_at:
            return False
        failed = await self._connect()
        if failed is None:
            if self.unreachable:
                self.node.log(f"reached node {self.peer} at {self.address} again")
            self.unreachable, self.backoff = None, 0.0
            return True
        why, refused = failed
        if self.unreachable is None:  # (one line an outage, not one a try)
            self.node.log(f"cannot reach node {self.peer} at {self.address} ({why}): its messages are dropped until "
                          f"it answers")
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
                stream = await connect(self.address.host, self.address.port)
                await stream.send_all(wire.hello(self.node.options.node, self.node.options.algorithm))
            except (OSError, trio.BrokenResourceError) as e:  # (the hello's send breaks: a peer killed as it accepted)
                refused = _refusal(e)
                failed = (_why(e, refused), refused is not None)
        if waited.cancelled_caught:
            failed = (f"no answer within {within:g} s", False)
        if failed is not None:
            if stream is not None:  # (opened, but the hello did not go: not a link)
                await trio.aclose_forcefully(stream)
            return failed
        self.stream = stream
        return None

    async def _forget(self, stream: trio.SocketStream) -> None:
        if self.stream is stream:
            self.stream = None
        await trio.aclose_forcefully(stream)
