"""The links: every message in flight, one link per ordered pair of nodes, lossless and
FIFO unless the run breaks those assumptions on purpose (config.Faults).

One store for every message in flight, kept by the instant it arrives and the node it
arrives at, in the order sent. Its rules are the model's:
  1. Lossless: a message sent is delivered (or dropped, by a down receiver) exactly once;
     unless the engine lost it (`lose`: a lossy link's draw), and then it is handed over
     as `Lost` when it would have arrived (so a drawing ends its arrow there, crossed);
     and a copy of it (`copy`: a duplicating link's draw, or the user's by hand) is a
     second message in flight under the same id, delivered on its own.
  2. FIFO: a message that draws a shorter delay than the one before it on its link is
     held until that one has arrived, and equal arrival times keep the order sent. So a
     link's arrival times never go backwards, the time a send reports (`arrives`) is
     when it arrives, and whoever drives the run takes a link's messages in send order:
     the engine by time (`take`, or one crowded instant node by node with `take_instant`);
     a test harness says which link's head arrives next (`bring_forward`). Links built
     with `fifo=False` (--reorder) skip the hold: each message arrives after its own
     delay, and a later one may overtake.
  3. A held link (`hold`) keeps what reaches its end: each such message waits there, in
     order, and is handed over as `Held` instead of `Deliver`. `release` hands them all
     over at that instant, first on their link, so FIFO holds across the wait. Nothing
     is lost.
  4. By hand (the user is the network, engine rule 7), any message in flight can be
     taken out of its link at once (`take_message`), whatever its place, and what is
     overdue when the clock runs again arrives then (`retime`), in the order it was due.

Memory: a big run has over a million messages in flight, so each is three entries of
its receiver's `Queue` at its instant (sender, key, message: 24 bytes, the key unboxed),
no object of its own. A key is the message's id, or for a copy a negative number of its
own (`_copies` says whose copy). (A tuple per message and a table of messages by key
would cost about 170 bytes a message.) Few containers, so a storm in flight adds little
for the garbage collector to walk (a stall the app would show).

Rule 2 needs each busy link's latest arrival only once a message could overtake one
before it. While every message sent arrives no sooner than anything in flight (one
delay for all, the model's worst case: a classic storm at N = 1000 has a million busy
links, 80 MB of tails), nothing can, and none are kept: `_latest` bounds every arrival
in flight, and the first send that arrives sooner finds the tails in what is in flight
(`_tails_in_flight`) and keeps them from then on, until no link is busy.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from protocol import Message

from .work import Deliver, Held, Lost


class Queue:
    """A receiver's arrivals at one instant, in send order: three parallel columns."""

    __slots__ = ("keys", "msgs", "srcs")

    def __init__(self, srcs: list[int] | None = None, keys: Iterable[int] = (), msgs: list[Message] | None = None):
        self.srcs = srcs if srcs is not None else []
        self.keys = array("q", keys)
        self.msgs = msgs if msgs is not None else []

    def append(self, src: int, key: int, msg: Message) -> None:
        self.srcs.append(src)
        self.keys.append(key)
        self.msgs.append(msg)

    def extend(self, other: Queue) -> None:
        self.srcs += other.srcs
        self.keys += other.keys
        self.msgs += other.msgs

    def pop(self, index: int) -> tuple[int, int, Message]:
        return self.srcs.pop(index), self.keys.pop(index), self.msgs.pop(index)

    def copy(self) -> Queue:
        return Queue(list(self.srcs), self.keys, list(self.msgs))

    def __iter__(self) -> Iterator[tuple[int, int, Message]]:
        return zip(self.srcs, self.keys, self.msgs)

    def __len__(self) -> int:
        return len(self.srcs)


Arrivals = dict[int, Queue]  # receiver -> what arrives, in send order


class Links:
    def __init__(self, fifo: bool = True):
        self.fifo = fifo  # rule 2 (False: --reorder)
        self._instants: dict[int, Arrivals] = {}  # arrival time -> who gets what then
        self._lost: dict[int, str] = {}  # key -> why, for a message in flight that will never arrive (rule 1)
        self._copies: dict[int, int] = {}  # a copy's key -> the id of the message it copies (rule 1)
        self._copy_key = 0  # the last copy's key (they count down from -1)
        self._sizes: dict[int, int] = {}  # arrival time -> how many
        self._times: list[int] = []  # heap of the keys of _instants
        self._tail: dict[tuple[int, int], int] | None = None  # a busy link's latest arrival, if kept (rule 2)
        self._latest = -1  # no message in flight arrives later than this
        self._count = 0
        self.held: set[tuple[int, int]] = set()  # links whose arrivals wait (rule 3)
        self._waiting: dict[tuple[int, int], list[tuple[int, Message]]] = {}  # at a held link's end, in order

    def __deepcopy__(self, memo: dict) -> Links:
        """A copy for an engine's copy. What is in flight is ints and messages, and
        messages are immutable: the queues are copied, their messages shared. (A generic
        deep copy walks every item: 100 ms at N = 32 mid-storm, a visible stall.)"""
        twin = Links.__new__(Links)
        twin.fifo = self.fifo
        twin._lost = dict(self._lost)
        twin._copies = dict(self._copies)
        twin._copy_key = self._copy_key
        twin._instants = {t: {dst: queue.copy() for dst, queue in arrivals.items()} for t, arrivals in self._instants.items()}
        twin._sizes = dict(self._sizes)
        twin._times = list(self._times)
        twin._tail = None if self._tail is None else dict(self._tail)
        twin._latest = self._latest
        twin._count = self._count
        twin.held = set(self.held)
        twin._waiting = {link: list(queue) for link, queue in self._waiting.items()}
        return twin

    def send(self, src: int, dst: int, msg_id: int, msg: Message, earliest: int) -> int:
        """Put a message on src->dst; return when it arrives: `earliest`, or when the
        message before it does, if that is later (rule 2)."""
        tails = self._tail
        if tails is None and earliest < self._latest and self.fifo:  # it might overtake: keep the tails
            tails = self._tail = self._tails_in_flight()
        if tails is not None:
            link = (src, dst)
            tail = tails.get(link)
            arrives = earliest if tail is None or tail <= earliest else tail
            tails[link] = arrives
        else:
            arrives = earliest
        self._latest = max(self._latest, arrives)
        instant = self._instants.get(arrives)
        if instant is None:
            instant = self._instants[arrives] = {}
            self._sizes[arrives] = 0
            heapq.heappush(self._times, arrives)
        queue = instant.get(dst)
        if queue is None:
            queue = instant[dst] = Queue()
        queue.append(src, msg_id, msg)
        self._sizes[arrives] += 1
        self._count += 1
        return arrives

    def lose(self, msg_id: int, reason: str) -> None:
        """The message `msg_id`, just sent, will never arrive: it is handed over as Lost
        when it would have (rule 1)."""
        self._lost[msg_id] = reason

    def copy(self, src: int, dst: int, msg_id: int, msg: Message, earliest: int) -> int:
        """A copy of message `msg_id` on src->dst, a message of its own that arrives after
        its own delay (rule 1; FIFO still holds it behind the one before it); return when."""
        self._copy_key -= 1
        self._copies[self._copy_key] = msg_id
        return self.send(src, dst, self._copy_key, msg, earliest)

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

    def deliveries(self, time: int, dst: int, queue: Queue | tuple) -> Iterator[Deliver | Held]:
        """A receiver's arrivals at `time`, as deliveries, in the order sent (a lost one
        as Lost, rule 1; on a held link: kept, and handed over as Held, rule 3)."""
        tails, held, lost, copies = self._tail, self.held, self._lost, self._copies
        for src, key, msg in queue:
            msg_id = key if key >= 0 else copies[key]
            if tails is not None and tails.get((src, dst)) == time:  # the link's last message in flight: idle now
                del tails[src, dst]
                if not tails:  # no link busy: nothing in flight to overtake
                    tails = self._tail = None
            if lost and key in lost:
                yield Lost(src, msg_id, lost.pop(key))
                copies.pop(key, None)
            elif held and (src, dst) in held:
                self._waiting.setdefault((src, dst), []).append((key, msg))
                yield Held(src, msg_id)
            else:
                yield Deliver(src, msg_id, msg)
                if key < 0:
                    del copies[key]

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
        ahead = Queue([src] * len(waiting), (key for key, _ in waiting), [msg for _, msg in waiting])
        if dst in instant:
            ahead.extend(instant[dst])
        instant[dst] = ahead
        self._sizes[now] += len(waiting)
        self._count += len(waiting)
        if self._tail is not None:
            self._tail[link] = max(self._tail.get(link, now), now)
        self._latest = max(self._latest, now)

    def _tails_in_flight(self) -> dict[tuple[int, int], int]:
        """Each busy link's latest arrival, from what is in flight (rule 2)."""
        tails: dict[tuple[int, int], int] = {}
        for time in sorted(self._instants):
            for dst, queue in self._instants[time].items():
                for src in queue.srcs:
                    tails[src, dst] = time
        return tails

    def _instant(self, time: int) -> Arrivals:
        """The arrivals at `time`, a new instant if none arrive then yet (`send` does the
        same inline: it is the hot path)."""
        instant = self._instants.get(time)
        if instant is None:
            instant = self._instants[time] = {}
            self._sizes[time] = 0
            heapq.heappush(self._times, time)
        return instant

    def waits(self, msg_id: int) -> bool:
        """Whether message `msg_id` waits at a held link's end (rule 3)."""
        return any(self._copies.get(key, key) == msg_id for queue in self._waiting.values() for key, _ in queue)

    def waiting_at(self) -> dict[tuple[int, int], int]:
        """How many messages wait at each held link's end."""
        return {link: len(queue) for link, queue in self._waiting.items()}

    def bring_forward(self, src: int, dst: int, now: int) -> None:
        """The oldest message on src->dst that is not due by `now` arrives at `now`
        instead, after what arrives then already (a test harness says when messages
        arrive: engine rule 6, network.ByHand). The link stays FIFO."""
        for time in sorted(t for t in self._instants if t > now):
            queue = self._instants[time].get(dst)
            index = next((i for i, sender in enumerate(queue.srcs) if sender == src), None) if queue else None
            if index is None:
                continue
            _, key, msg = queue.pop(index)
            self._sizes[time] -= 1
            if not queue:
                del self._instants[time][dst]
            if not self._instants[time]:
                del self._instants[time], self._sizes[time]
                self._times.remove(time)
                heapq.heapify(self._times)
            if self._tail is not None and self._tail.get((src, dst)) == time and src not in queue.srcs:
                self._tail[src, dst] = now  # it was the link's last message in flight
            self._instant(now).setdefault(dst, Queue()).append(src, key, msg)
            self._sizes[now] += 1
            return
        raise ValueError(f"nothing in flight from {src} to {dst}")

    def in_flight(self) -> dict[tuple[int, int], list[tuple[int, Message]]]:
        """Every link with messages in flight: (src, dst) -> [(id, message)], oldest first."""
        out: dict[tuple[int, int], list[tuple[int, Message]]] = {}
        for time in sorted(self._instants):
            for dst, queue in self._instants[time].items():
                for src, key, msg in queue:
                    out.setdefault((src, dst), []).append((self._copies.get(key, key), msg))
        return dict(sorted(out.items()))

    def flights(self) -> list[Flight]:
        """Every message in flight, by when it is due (then receiver, then the order
        sent): what the by-hand pane lists."""
        out = []
        for time in sorted(self._instants):
            for dst, queue in sorted(self._instants[time].items()):
                for src, key, msg in queue:
                    out.append(Flight(time, src, dst, self._copies.get(key, key), msg, key < 0,
                                      key in self._lost))
        return out

    # --- by hand (rule 4) -------------------------------------------------------------------

    def find(self, msg_id: int) -> tuple[int, int, Message] | None:
        """Message `msg_id` on its link (the first of it due, if a copy is in flight too):
        (src, dst, message); None if it is not in flight (or waits at a held link's end)."""
        place = self._place(msg_id)
        if place is None:
            return None
        time, dst, index = place
        queue = self._instants[time][dst]
        return queue.srcs[index], dst, queue.msgs[index]

    def _place(self, msg_id: int) -> tuple[int, int, int] | None:
        """Where message `msg_id` is: (arrival time, receiver, index in that instant's list)."""
        copies = self._copies
        for time in sorted(self._instants):
            for dst, queue in self._instants[time].items():
                for index, key in enumerate(queue.keys):
                    if key == msg_id or (key < 0 and copies[key] == msg_id):
                        return time, dst, index
        return None

    def take_message(self, msg_id: int) -> tuple[int, int, Message]:
        """Take message `msg_id` (as `find` finds it) out of its link at once: (src, dst,
        message). A loss drawn for it is forgotten: by hand, the user says what becomes of it.
        Its arrival stays its link's latest (rule 2: what is sent next arrives no sooner),
        so the tails are kept from now on if they were not."""
        if self._tail is None and self.fifo:
            self._tail = self._tails_in_flight()
        time, dst, index = self._place(msg_id)
        instant = self._instants[time]
        src, key, msg = instant[dst].pop(index)
        if not instant[dst]:
            del instant[dst]
        self._sizes[time] -= 1
        self._count -= 1
        if not instant:
            del self._instants[time], self._sizes[time]
            self._times.remove(time)
            heapq.heapify(self._times)
        self._lost.pop(key, None)
        self._copies.pop(key, None)
        return src, dst, msg

    def retime(self, now: int) -> None:
        """What is due before `now` is due at `now` instead, in the order it was due, ahead
        of what is due then already: the clock runs again after standing still by hand
        (each step of which moved it on by a microsecond)."""
        overdue = sorted(t for t in self._instants if t < now)
        if not overdue:
            return
        merged: Arrivals = {}
        for time in [*overdue, now]:
            for dst, queue in self._instants.pop(time, {}).items():
                merged.setdefault(dst, Queue()).extend(queue)
        count = sum(self._sizes.pop(t, 0) for t in [*overdue, now])
        self._times = [t for t in self._times if t >= now]
        if now not in self._times:
            self._times.append(now)
        heapq.heapify(self._times)
        self._instants[now] = merged
        self._sizes[now] = count
        self._latest = max(self._latest, now)
        for link, tail in (self._tail or {}).items():
            if tail < now:
                self._tail[link] = now

    def __len__(self) -> int:
        return self._count


@dataclass(frozen=True, slots=True)
class Flight:
    """A message in flight, as the by-hand pane lists it: when it is due (microseconds),
    its link, its id and message; whether it is a copy, and whether the link lost it."""

    due: int
    src: int
    dst: int
    id: int
    msg: Message
    copy: bool
    lost: bool
