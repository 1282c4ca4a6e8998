"""The links: messages in flight on one lossless FIFO link per ordered pair of nodes.

One store for every message in flight, kept by the instant it arrives and the node it
arrives at, in the order sent. Its rules are the model's:
  1. Lossless: a message sent is delivered (or dropped, by a down receiver) exactly once.
  2. FIFO: a message that draws a shorter delay than the one before it on its link is
     held until that one has arrived, and equal arrival times keep the order sent. So a
     link's arrival times never go backwards, the time a send reports (`arrives`) is
     when it arrives, and whoever drives the run takes a link's messages in send order:
     the engine by time (`take`, or one crowded instant node by node with `take_instant`);
     a test harness says which link's head arrives next (`bring_forward`).
  3. A held link (`hold`) keeps what reaches its end: each such message waits there, in
     order, and is handed over as `Held` instead of `Deliver`. `release` hands them all
     over at that instant, first on their link, so FIFO holds across the wait. Nothing
     is lost.

Memory: a big run has over a million messages in flight, so each is one small tuple of
two ints (sender, id) in its instant's list for its receiver, the message itself in one
table by id, and a link's latest arrival is kept only while the link is busy. Tuples of
plain values are not tracked by the garbage collector: a storm's quarter of a million
messages in flight would otherwise be walked by every full collection (a stall the app
shows).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from protocol import Message

from .work import Deliver, Held

Arrivals = dict[int, list[tuple[int, int]]]  # receiver -> [(src, id)], in send order


class Links:
    def __init__(self):
        self._instants: dict[int, Arrivals] = {}  # arrival time -> who gets what then
        self._messages: dict[int, Message] = {}  # id -> the message, while in flight
        self._sizes: dict[int, int] = {}  # arrival time -> how many
        self._times: list[int] = []  # heap of the keys of _instants
        self._tail: dict[tuple[int, int], int] = {}  # a busy link's latest arrival
        self._count = 0
        self.held: set[tuple[int, int]] = set()  # links whose arrivals wait (rule 3)
        self._waiting: dict[tuple[int, int], list[tuple[int, Message]]] = {}  # at a held link's end, in order

    def __deepcopy__(self, memo: dict) -> Links:
        """A copy for an engine's copy. What is in flight is tuples of ints and messages,
        and messages are immutable: the lists are copied, their items shared. (A generic
        deep copy walks every item: 100 ms at N = 32 mid-storm, a visible stall.)"""
        twin = Links.__new__(Links)
        twin._instants = {t: {dst: list(queue) for dst, queue in arrivals.items()} for t, arrivals in self._instants.items()}
        twin._messages = dict(self._messages)
        twin._sizes = dict(self._sizes)
        twin._times = list(self._times)
        twin._tail = dict(self._tail)
        twin._count = self._count
        twin.held = set(self.held)
        twin._waiting = {link: list(queue) for link, queue in self._waiting.items()}
        return twin

    def send(self, src: int, dst: int, msg_id: int, msg: Message, earliest: int) -> int:
        """Put a message on src->dst; return when it arrives: `earliest`, or when the
        message before it does, if that is later (rule 2)."""
        link = (src, dst)
        tail = self._tail.get(link)
        arrives = earliest if tail is None or tail <= earliest else tail
        self._tail[link] = arrives
        instant = self._instants.get(arrives)
        if instant is None:
            instant = self._instants[arrives] = {}
            self._sizes[arrives] = 0
            heapq.heappush(self._times, arrives)
        self._messages[msg_id] = msg
        queue = instant.get(dst)
        if queue is None:
            instant[dst] = [(src, msg_id)]
        else:
            queue.append((src, msg_id))
        self._sizes[arrives] += 1
        self._count += 1
        return arrives

    def next_arrival(self) -> int | None:
        return self._times[0] if self._times else None

    def arriving_at(self, time: int) -> int:
        """How many messages arrive at `time`."""
        return self._sizes.get(time, 0)

    def take(self, end: int) -> Iterator[tuple[int, int, Deliver]]:
        """Remove and yield (time, receiver, delivery) for every message arriving before
        `end`: by time, then by receiver, each receiver's in the order sent."""
        while self._times and self._times[0] < end:
            time = self._times[0]
            for dst, queue in self.take_instant(time).items():
                for delivery in self.deliveries(time, dst, queue):
                    yield time, dst, delivery

    def take_instant(self, time: int) -> Arrivals:
        """Remove everything arriving at `time`, by receiver (messages sent at `time`
        itself, over a zero delay, arrive in a new instant of the same time). Hand each
        receiver's list to `deliveries` as it is run."""
        heapq.heappop(self._times)
        self._count -= self._sizes.pop(time)
        return self._instants.pop(time)

    def deliveries(self, time: int, dst: int, queue: list[tuple[int, int]]) -> Iterator[Deliver | Held]:
        """A receiver's arrivals at `time`, as deliveries, in the order sent (on a held
        link: kept, and handed over as Held, rule 3)."""
        tails, held, messages = self._tail, self.held, self._messages
        for src, msg_id in queue:
            msg = messages.pop(msg_id)
            link = (src, dst)
            if tails.get(link) == time:  # the link's last message in flight: idle now
                del tails[link]
            if held and link in held:
                self._waiting.setdefault(link, []).append((msg_id, msg))
                yield Held(src, msg_id)
            else:
                yield Deliver(src, msg_id, msg)

    # --- held links (rule 3) -----------------------------------------------------------------

    def hold(self, src: int, dst: int) -> None:
        self.held.add((src, dst))

    def release(self, src: int, dst: int, now: int) -> None:
        """The link delivers again: what waited at its end arrives `now`, in order, before
        anything else due then on that link."""
        link = (src, dst)
        self.held.discard(link)
        waiting = self._waiting.pop(link, [])
        if not waiting:
            return
        instant = self._instant(now)
        self._messages.update(waiting)
        instant[dst] = [(src, msg_id) for msg_id, _ in waiting] + instant.get(dst, [])
        self._sizes[now] += len(waiting)
        self._count += len(waiting)
        self._tail[link] = max(self._tail.get(link, now), now)

    def _instant(self, time: int) -> Arrivals:
        """The arrivals at `time`, a new instant if none arrive then yet (`send` does the
        same inline: it is the hot path)."""
        instant = self._instants.get(time)
        if instant is None:
            instant = self._instants[time] = {}
            self._sizes[time] = 0
            heapq.heappush(self._times, time)
        return instant

    def waiting_at(self) -> dict[tuple[int, int], int]:
        """How many messages wait at each held link's end."""
        return {link: len(queue) for link, queue in self._waiting.items()}

    def bring_forward(self, src: int, dst: int, now: int) -> None:
        """The oldest message on src->dst that is not due by `now` arrives at `now`
        instead, after what arrives then already (a test harness says when messages
        arrive: engine rule 6, network.ByHand). The link stays FIFO."""
        for time in sorted(t for t in self._instants if t > now):
            queue = self._instants[time].get(dst, [])
            index = next((i for i, (sender, _) in enumerate(queue) if sender == src), None)
            if index is None:
                continue
            _, msg_id = queue.pop(index)
            self._sizes[time] -= 1
            if not queue:
                del self._instants[time][dst]
            if not self._instants[time]:
                del self._instants[time], self._sizes[time]
                self._times.remove(time)
                heapq.heapify(self._times)
            link = (src, dst)
            if self._tail.get(link) == time and all(sender != src for sender, _ in queue):
                self._tail[link] = now  # it was the link's last message in flight
            self._instant(now).setdefault(dst, []).append((src, msg_id))
            self._sizes[now] += 1
            return
        raise ValueError(f"nothing in flight from {src} to {dst}")

    def in_flight(self) -> dict[tuple[int, int], list[tuple[int, Message]]]:
        """Every link with messages in flight: (src, dst) -> [(id, message)], oldest first."""
        out: dict[tuple[int, int], list[tuple[int, Message]]] = {}
        for time in sorted(self._instants):
            for dst, queue in self._instants[time].items():
                for src, msg_id in queue:
                    out.setdefault((src, dst), []).append((msg_id, self._messages[msg_id]))
        return dict(sorted(out.items()))

    def __len__(self) -> int:
        return self._count
