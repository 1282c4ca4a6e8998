"""A real node's link to one peer (playground/real/link.py), on trio's MockClock with
connections made by the test: the backoff from a peer that refuses, a peer that does
not answer, and one that breaks the connection as it accepts it."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from playground.core.config import ClusterConfig
from playground.real import link as link_module
from playground.real.link import Link, _refusal
from playground.real.node import Address, NodeOptions
from protocol.classic import Election
from tests.test_real_nodes import free_port


class _Node:
    """What a Link needs of its node: settings, a nursery, its trace's drops (kept here) and its log."""

    def __init__(self, nursery):
        self.config = ClusterConfig(timeout=4.0, delay_min=0, delay_max=0)
        self.options = NodeOptions(1, Address("127.0.0.1", 1), {}, "classic", "", self.config)
        self.nursery = nursery
        self.drops: list[float] = []

    def dropped(self, msg_id, peer):
        self.drops.append(trio.current_time())

    def log(self, line):
        pass


def _links_backoff(connect, test) -> None:
    async def main():
        async with trio.open_nursery() as nursery:
            link = Link(_Node(nursery), 2, Address("127.0.0.1", 9))
            link.greet()
            await test(link)
            nursery.cancel_scope.cancel()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(link_module, "connect", connect)
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_link_backs_off_from_a_peer_that_is_down_and_a_hello_ends_it():
    """Refused at once (nothing listens): the greeting tries, then the first message after
    50 ms, after 100 ms, ... the wait doubling to one second, each message between dropped
    without a try; then the peer's hello: the next message tries at once."""
    tries: list[float] = []

    async def refused(host, port):
        tries.append(trio.current_time())
        raise ConnectionRefusedError("refused")

    async def test(link):
        for _ in range(60):  # a message every 0.1 s for 6 s
            link.put(1, 1, Election())
            await trio.sleep(0.1)
        waits = [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0]  # (each try at the first message after the wait)
        assert len(tries) == len(waits) + 1
        assert all(wait <= b - a < wait + 0.1 + 1e-9 for wait, a, b in zip(waits, tries, tries[1:], strict=False))
        assert len(link.node.drops) == 60
        link.back()
        link.put(1, 1, Election())
        await trio.sleep(0.01)
        assert tries[-1] == pytest.approx(6.0)

    _links_backoff(refused, test)


def test_a_link_to_a_machine_that_does_not_answer_tries_again_for_each_message():
    """Not answered within T/4 is no refusal: this machine's own load can be why, so the
    next message tries again (no backoff), each dropped after its T/4."""
    async def black_hole(host, port):
        await trio.sleep_forever()

    async def test(link):
        await trio.sleep(0.01)
        for _ in range(3):
            link.put(1, 1, Election())
        await trio.sleep(5)
        assert link.node.drops == [2.0, 3.0, 4.0]  # (behind the greeting's try, T/4 = 1 s, each its own)

    _links_backoff(black_hole, test)


def test_a_refusal_is_told_from_other_failures_to_connect():

    async def main():
        with pytest.raises(OSError) as failed:
            await link_module.connect("127.0.0.1", free_port())  # nothing listens: refused at once
        return failed.value

    assert _refusal(trio.run(main)) is not None
    assert _refusal(OSError("all attempts failed")) is None


def test_a_link_connects_to_the_first_of_its_hosts_addresses_that_takes_it(monkeypatch):
    """A host's addresses are tried in the resolver's order: the first refuses, the
    second takes the connection."""
    refusing, taking = free_port(), None

    async def resolve(host, port, type):
        return [(trio.socket.AF_INET, type, 6, "", ("127.0.0.1", refusing)),
                (trio.socket.AF_INET, type, 6, "", ("127.0.0.1", taking))]

    async def main():
        nonlocal taking
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        taking = listeners[0].socket.getsockname()[1]
        monkeypatch.setattr(trio.socket, "getaddrinfo", resolve)
        stream = await link_module.connect("node.example", 7000)
        assert stream.socket.getpeername() == ("127.0.0.1", taking)
        await stream.aclose()
        await listeners[0].aclose()

    trio.run(main)




def test_a_peer_that_breaks_the_connection_before_the_hello_goes_is_a_failed_try_not_a_crash():
    """The connection is made, then sending the hello breaks (the peer was killed just
    after accepting): trio raises BrokenResourceError, which has no strerror; the link
    says why in words, the message is dropped, the next one tries again."""
    tries: list[float] = []
    closed: list[bool] = []

    class Broken:
        async def send_all(self, data):
            raise trio.BrokenResourceError("socket connection broken") from ConnectionResetError(104, "Connection reset by peer")

        async def aclose(self):
            closed.append(True)

    async def accepted_then_killed(host, port):
        tries.append(trio.current_time())
        return Broken()

    async def test(link):
        assert await link._connect() == ("Connection reset by peer", False)  # (no refusal: no backoff)
        link.put(1, 1, Election())
        await trio.sleep(0.01)
        assert len(link.node.drops) == 1 and link.stream is None and len(tries) == 3  # (the greeting's, ours, the message's)
        assert len(closed) == 3

    _links_backoff(accepted_then_killed, test)


def test_a_connection_the_peer_left_is_seen_at_the_next_message_and_an_idle_link_has_no_task():
    """The peer never writes on a link's connection: one with something to read (its end,
    or a reset) is one the peer has left. The next message finds it so, closes it and
    goes on a new connection, nothing dropped. Between messages the link runs no task."""
    streams = []

    class Stream:
        def __init__(self):
            self.socket, self.sent, self.left, self.closed = self, [], False, False

        def is_readable(self):
            return self.left

        async def send_all(self, data):
            self.sent.append(data)

        async def aclose(self):
            self.closed = True

    async def connect(host, port):
        streams.append(Stream())
        return streams[-1]

    async def test(link):
        link.put(1, 1, Election())
        await trio.sleep(0.01)
        assert len(streams) == 1 and len(streams[0].sent) == 2  # (the greeting's hello, then the message)
        assert not link.sending and link.node.nursery.child_tasks == frozenset()
        streams[0].left = True
        link.put(2, 2, Election())
        await trio.sleep(0.01)
        assert streams[0].closed and len(streams) == 2 and len(streams[1].sent) == 2  # (a hello, then the message)
        assert link.node.drops == [] and link.pending == 0

    _links_backoff(connect, test)
