"""The exhaustive search's states (explore.py), and the engine it steps through them.

The search drives one engine by hand (harness.py's, the template): to take a step from a
state it puts the state into the engine, runs the step, and keeps what the step left as
the new state. Copying and hashing whole engines was what the search cost (a pickle of
about 7 kB a state, a repr of everything for its key); a state here shares all a step
left alone with the state before it, and its key hashes what changed.

Rules:
  1. A state is what a step can change: each node's host (its machine, safe storage,
     timers, what it last reported), the messages in flight, the monitor, the clock and
     the counters (message ids, the trace's numbering). Nothing else changes while the
     search runs (the roster, the settings; the agenda is empty between steps).
  2. Copy on write. A step runs one node's work (a message delivered to it, its timer,
     its crash or recovery) or none (time moving on), so the state after it has a new
     host for that node and the very hosts of the state before for the others. Putting
     a state into the engine copies the host of the node about to step and the monitor;
     the other hosts go in as they are, and nothing changes them (they run no work). A
     state, once made, is never changed (explore_values.py copies).
  3. The search is the network. The messages in flight are the state's, one queue per
     link, oldest first, shared between states where unchanged. A delivery is the head
     of its link handed to its receiver as its work, a timer's firing the same, each
     run through the engine as a driver runs a window (the host runs it, the engine
     merges, routes, numbers and judges it: engine.finish); what the step sends joins
     its link's queue (the engine's own links get it too, and are emptied at the next
     step: the search does not read them). Commands (a crash, a recovery) and time
     go through the harness, as in an interaction file. That is Harness.deliver and
     Harness.fire without the links' bookkeeping of when each message is due: a
     finding replays as an interaction file step for step (tests/test_explore.py).
     With a faulty network (explore.py's rule 7) a step may take any message of its
     link (`deliver`'s index), lose one (`drop`: it leaves its link, no node steps) or
     copy one (`duplicate`: the copy joins the tail of its link under a key of its own,
     below zero, delivered as the message it copies); a state keeps what the step that
     made it sent (`fresh`), for the faults strike a message as it is sent.
  4. The key (explore rule 1): the canonical form of each host (up, safe storage, the
     machine's variables but SKIP's) is numbered when the host is made, each message
     when it is sent (numbers handed out in the order met: the same search numbers
     alike); a state's key is a 16-byte BLAKE2b digest of two parts: the digest of
     those numbers with each node's timers and each link's messages (made once a
     state), then the arrivals of the messages and the faults so far. Times are
     relative to now (timed) or none (asynchronous). So a state reached by two paths
     is one key, whatever the time and the message ids.
  5. A node's step is taken once. What a host does with a delivery or a firing depends
     only on the node, its number (rule 4), its timers, what it last reported (down or
     left; its place with respect to the critical section), how many timers it has
     set, the work (the message's sender and number, or the timer's name) and now, so
     the host it leaves and what it records are kept under those. The next time the
     search meets them, the engine is given that host (shared, as rule 2 allows) and
     copies of its records (a delivery's first one with this message's id), and merges
     them as before. In the issue's search, 3,109 of 58,404 steps were run. Not for a
     host that has drawn from its generators: a draw to come is no part of its number.
"""

from __future__ import annotations

import hashlib
import marshal
import operator
from collections.abc import Callable

from protocol import Message

from ..core.engine import Window
from ..core.events import Event, SendEvent
from ..core.host import NodeHost
from ..core.monitor import Monitor
from ..core.work import DELIVERY, TIMER, Deliver, Fire
from .explore_values import SKIP, _fields, canonical, canonical_object, copy_object, size_of
from .harness import Harness

__all__ = ["SKIP", "Pending", "State", "Stepper"]

Link = tuple[int, int]
Members = tuple[tuple[int, ...], frozenset[int], frozenset[int], int]
Queue = tuple[tuple[int, int, Message], ...]  # a link's messages in flight, oldest first: (id, number, message)


class State:
    """The engine between two steps (rule 1). Never changed once made (rule 2)."""

    __slots__ = ("_form", "added_to", "command_order", "engine_now_us", "first_timer", "flight", "fresh", "host_keys",
                 "hosts", "members", "monitor", "msg_id", "now_us", "open", "seq", "taken", "waiting")

    def __init__(self, h: Harness, members: Members, hosts: tuple[NodeHost, ...], host_keys: tuple[int, ...],
                 monitor: Monitor, flight: dict[Link, Queue]):
        engine = h.engine
        self.members = members  # (every node there has been, lowest first; the members now; the engine's slice)
        self.now_us, self.engine_now_us = h.now_us, engine.now_us
        self.msg_id, self.command_order = engine._msg_id, engine._command_order
        self.seq, self.open = engine.trace._seq, engine.trace.open
        self.hosts, self.host_keys = hosts, host_keys  # (in the order of members[0])
        self.monitor = monitor
        self.flight = flight  # link -> its queue, the busy links only, in (src, dst) order (rule 3)
        self.fresh: frozenset[int] = frozenset()  # a faulty network's: the keys of what the last step sent (rule 3)
        self.added_to: tuple[Link, ...] | None = None  # the links the last step added to, in order (None: any)
        self._form: tuple[bytes, tuple[int, ...]] | None = None
        self.taken: dict[tuple, tuple] | None = None  # the search's: the states one step on, by action
        self.waiting = 0  # the search's: its entries on the frontier
        self.first_timer: tuple | None = None  # the search's: the running timer due first (timed; (): none)


class Pending:
    """A worker's number for a form the search had not met (explore_workers.py): which
    number it is, the search's process says once the worker's level is made, so that
    every process numbers alike (rule 4)."""

    __slots__ = ("number",)


class Stepper:
    """The template engine (a booted harness), stepped through states; the numbering of rule 4."""

    def __init__(self, h: Harness, timed: bool, faulty: bool = False):
        """`h`: a harness whose cluster has not booted yet; `faulty`: the network may drop
        or copy a message as it is sent (rule 3)."""
        self.h = h
        self.timed = timed
        self.faulty = faulty
        self._copies: dict[int, int] = {}  # a copy's key -> the id of the message it copies (rule 3)
        self._empty_links = h.engine.links.__deepcopy__({})  # (what a step's sends go into: rule 3)
        self._places: dict[tuple[int, ...], dict[int, int]] = {}  # the ids of a cluster -> each one's place
        self._hosts: dict[object, int] = {}  # a host's canonical form -> its number
        self._messages: dict[Message, int] = {}  # a message -> its number
        self._state: State | None = None  # the state in the engine, if it was put there
        self._monitor_of: object | None = None  # the state's monitor the engine's equals, while it does
        self._members_of: Members | None = None  # the state's members the engine's roster holds, while it does
        # Rule 5: (a node, its host's number, its timers, ..., the work, now) -> (the host after it, its
        # number, what it recorded); and the number of the host the last _run left.
        self._steps: dict[tuple, tuple[NodeHost, int | Pending, tuple[tuple[type, tuple], ...]]] = {}
        self.stepped_key: int | Pending | None = None
        # A worker's (explore_workers.py): the forms it numbered Pending, in the order met,
        # each as (a host's or a message's, form, its Pending).
        self.pending: list[tuple[bool, object, Pending]] | None = None

    def start(self) -> State:
        """The state the engine is in now (the cluster, booted)."""
        engine = self.h.engine
        members = self._members()
        hosts = tuple(engine.hosts[i] for i in members[0])
        flight = {link: tuple((msg_id, self._number(msg), msg) for msg_id, msg in queue)
                  for link, queue in engine.links.in_flight().items()}
        monitor = copy_object(engine.monitor, {})
        state = State(self.h, members, hosts, tuple(self._host_key(host) for host in hosts), monitor, flight)
        if self.faulty:  # (what the boot sent is fresh: rule 3)
            state.fresh = frozenset(key for queue in flight.values() for key, _, _ in queue)
        return state

    def restore(self, state: State, node: int | None, copied: bool = True) -> Harness:
        """The engine as `state` has it, ready for `node` (None: no node) to step (rule 2;
        `copied` False: a delivery or a firing, whose host _run copies unless rule 5 has
        its step)."""
        h, engine = self.h, self.h.engine
        h.now_us, h.events[:] = state.now_us, []
        engine.now_us, engine._msg_id, engine._command_order = state.engine_now_us, state.msg_id, state.command_order
        trace = engine.trace
        trace._seq, trace.open = state.seq, state.open
        if len(engine.links):
            engine.links = self._empty_links.__deepcopy__({})
        if self._monitor_of is not state.monitor:  # (else the engine's equals it: rule 2)
            if self._monitor_of is None or not _same(engine.monitor, state.monitor):  # (the engine's own, if alike)
                engine.monitor = trace.monitor = copy_object(state.monitor, {})
            self._monitor_of = state.monitor
        if self._members_of is not state.members:  # (one roster, every host's: its sets new)
            engine.ids, every, members, engine._slice = state.members
            engine.roster.every, engine.roster.members = set(every), set(members)
            self._members_of = state.members
        hosts = dict(zip(state.members[0], state.hosts))
        if node is not None and copied:
            hosts[node] = copy_object(hosts[node], {})
        engine.hosts = hosts
        self._state, self.stepped_key = state, None
        return h

    def deliver(self, src: int, dst: int, index: int = 0) -> None:
        """The message at `index` on the link src->dst (0: its head) arrives now (rule 3;
        after restore(state, dst))."""
        key, number, msg = self._state.flight[(src, dst)][index]
        self._run(dst, (self.h.now_us, DELIVERY, 0, Deliver(src, self.message_id(key), msg)), (src, number))

    def message_id(self, key: int) -> int:
        """The id of the message a key in flight stands for (a copy's: the one it copies)."""
        return self._copies[key] if key < 0 else key

    def fire(self, node: int, name: str) -> None:
        """The node's running timer `name` fires now (rule 3; after restore(state, node))."""
        _, generation = self.h.engine.hosts[node].timers[name]
        self._run(node, (self.h.now_us, TIMER, 0, Fire(name, generation)), name)

    def after(self, state: State, node: int | None, delivered: tuple[int, int, int] | None = None,
              copied: tuple[int, int, int] | None = None) -> State:
        """The state the engine is in after `node` (None: no node) stepped from `state`,
        which took the message `delivered` (src, dst, its index on the link; None: none),
        or copied the message `copied` (rule 3)."""
        flight = state.flight
        sent = [e for e in self.h.events if type(e) is SendEvent]
        added_to: set[Link] = set()  # (the links what is new joins)
        if delivered is not None or sent or copied is not None:
            flight = dict(flight)
            if delivered is not None:
                link, index = delivered[:2], delivered[2]
                queue = flight[link]
                rest = queue[1:] if index == 0 else (*queue[:index], *queue[index + 1:])
                if rest:
                    flight[link] = rest
                else:
                    del flight[link]
            if copied is not None:
                link = copied[:2]
                key, number, msg = flight[link][copied[2]]
                copy_key = -1 - len(self._copies)
                self._copies[copy_key] = self.message_id(key)
                flight[link] = (*flight[link], (copy_key, number, msg))
                added_to.add(link)
            busy = len(flight)
            for e in sent:
                link = (e.src, e.dst)
                flight[link] = (*flight.get(link, ()), (e.id, self._number(e.msg), e.msg))
                added_to.add(link)
            if len(flight) > busy:  # a link that was idle: keep them in order
                flight = dict(sorted(flight.items()))
        child = self._child(state, node, flight)
        child.added_to = tuple(sorted(added_to))
        if self.faulty:  # (a drop keeps the rest of what was sent fresh; a node's step, what it sent)
            child.fresh = (frozenset(e.id for e in sent) if node is not None else
                           state.fresh - {state.flight[delivered[:2]][delivered[2]][0]} if delivered is not None else
                           state.fresh)
        return child

    def _child(self, state: State, node: int | None, flight: dict[Link, Queue]) -> State:
        """The state after `node` stepped from `state`, with `flight` in flight (rule 2)."""
        engine = self.h.engine
        monitor = engine.monitor
        if _same(monitor, state.monitor):  # unchanged: shared (rule 2)
            monitor = state.monitor
        else:  # the new state's from now on; the engine gets a copy of whichever it steps next
            self._monitor_of = None
        members, roster = state.members, engine.roster
        if engine.ids is not members[0] or roster.members != members[2]:  # (a join or a leave)
            members = self._members_of = self._members()
        if node is None:
            return State(self.h, members, state.hosts, state.host_keys, monitor, flight)
        if members[0] is not state.members[0]:  # a node joined: every host in the order of the ids
            kept = dict(zip(state.members[0], zip(state.hosts, state.host_keys)))
            hosts = tuple(engine.hosts[i] for i in members[0])
            keys = tuple(kept[i][1] if i in kept and kept[i][0] is host else self._host_key(host)
                         for i, host in zip(members[0], hosts))
            return State(self.h, members, hosts, keys, monitor, flight)
        n = self._place(members[0])[node]
        host = engine.hosts[node]
        hosts = (*state.hosts[:n], host, *state.hosts[n + 1:])
        key = self.stepped_key if self.stepped_key is not None else self._host_key(host)
        keys = (*state.host_keys[:n], key, *state.host_keys[n + 1:])
        return State(self.h, members, hosts, keys, monitor, flight)

    def key(self, state: State, arrivals: dict[int, int], faults: int) -> bytes:
        """Rule 4: the state, whatever the time and the message ids (asynchronous: no
        time, and `arrivals` empty)."""
        common, flying = state._form or self._form(state)
        if self.timed:
            now = state.now_us
            mine = marshal.dumps((faults, [arrivals[msg_id] - now for msg_id in flying]), 0)
        else:
            mine = marshal.dumps(faults, 0)
        return hashlib.blake2b(common + mine, digest_size=16).digest()  # (cheaper than copying a fed hasher)

    def table_bytes(self) -> int:
        """What the numbering holds (rule 4), in bytes: part of what the seen set costs."""
        return size_of(self._hosts) + size_of(self._messages)

    def _run(self, node: int, entry: tuple, work: object) -> None:
        """One entry of work at this node now, as a driver runs a window (engine rules 3,
        6; `work`: what it is, in numbers)."""
        engine, now = self.h.engine, self.h.now_us
        engine.now_us = now
        self.host_step(node, entry, work)
        engine.finish(Window(now, now + 1, {node: [entry]}))

    def host_step(self, node: int, entry: tuple, work: object) -> NodeHost:
        """The host's part of a step (rule 5): the host it leaves, in the engine, with
        what it recorded."""
        hosts, state, now = self.h.engine.hosts, self._state, self.h.now_us
        before = hosts[node]
        place = self._place(state.members[0])[node]
        # (what a step reads of a host beyond its number: its timers, what it last
        # reported (down or left, the critical section) and its timers' numbering)
        key = (node, state.host_keys[place], tuple(before.timers.items()), before.state, before.cs,
               before._generation, work, now) if before.draws.untouched else None
        step = self._steps.get(key) if key is not None else None
        if step is None:
            host = hosts[node] = copy_object(before, {})
            host.run([entry], now + 1)
            self.stepped_key = self._host_key(host)
            if key is not None and host.draws.untouched:  # (a draw to come is no part of its number)
                self._steps[key] = (host, self.stepped_key, _records(host.records))
        else:
            host, self.stepped_key, records = step
            hosts[node] = host
            host.records = [kind(*fields) for kind, fields in records]
            if type(entry[3]) is Deliver:  # (the message's own id: the node's first record is its delivery or drop)
                host.records[0].id = entry[3].msg_id
        return host

    def _form(self, state: State) -> tuple[bytes, tuple[int, ...]]:
        """What a state's keys have in common whatever the arrivals (its digest), and the
        ids of the messages in flight, in the order their arrivals go in."""
        now, timed = state.now_us, self.timed
        ids, _, members, _ = state.members
        parts: list[object] = [*ids, None, *sorted(members), None, *state.host_keys]
        for host in state.hosts:
            parts.append(tuple(sorted((name, fires - now if timed else 0) for name, (fires, _) in host.timers.items())))
        flying = []
        for link, queue in state.flight.items():
            parts += link
            for msg_id, number, _ in queue:
                parts.append(number)
                flying.append(msg_id)
            parts.append(None)  # (the link's end)
        if self.pending is not None:  # (a worker's: its Pending numbers are known by now)
            parts = [part.number if type(part) is Pending else part for part in parts]
        form = state._form = (hashlib.blake2b(marshal.dumps(tuple(parts), 0), digest_size=16).digest(), tuple(flying))
        return form

    def _members(self) -> Members:
        engine = self.h.engine
        return engine.ids, frozenset(engine.roster.every), frozenset(engine.roster.members), engine._slice

    def _place(self, ids: tuple[int, ...]) -> dict[int, int]:
        place = self._places.get(ids)
        if place is None:
            place = self._places[ids] = {i: n for n, i in enumerate(ids)}
        return place

    def _host_key(self, host: NodeHost) -> int:
        m = host.machine
        form = (host.up, canonical(host.storage), None if m is None else canonical_object(m))
        number = self._hosts.get(form)
        if number is None:
            number = self._hosts[form] = self._new(self._hosts, True, form)
        return number

    def _number(self, msg: Message) -> int:
        number = self._messages.get(msg)
        if number is None:
            number = self._messages[msg] = self._new(self._messages, False, msg)
        return number

    def _new(self, table: dict, host: bool, form: object) -> int | Pending:
        if self.pending is None:
            return len(table)
        number = Pending()
        self.pending.append((host, form, number))
        return number

    def numbers(self, forms: list[tuple[bool, object]]) -> list[int]:
        """The search's process: the number of each form a worker met, a host's or a
        message's, in the order given (one it has not met yet: the next)."""
        tables = {True: self._hosts, False: self._messages}
        return [tables[host].setdefault(form, len(tables[host])) for host, form in forms]


def _records(events: list[Event]) -> tuple[tuple[type, tuple], ...]:
    """A host's records as a memo keeps them (rule 5): each one's class and fields."""
    return tuple((type(e), _fields_of(type(e))(e)) for e in events)


_GETTERS: dict[type, Callable[[Event], tuple]] = {}


def _fields_of(t: type) -> Callable[[Event], tuple]:
    get = _GETTERS.get(t)
    if get is None:
        get = _GETTERS[t] = operator.attrgetter(*_fields(t))
    return get


def _same(a: object, b: object) -> bool:
    """Whether two objects hold the same (their attributes equal; a dict subclass as a
    dict: a Counter's own equality is slow, and looser)."""
    mine, theirs = vars(a), vars(b)
    if mine.keys() != theirs.keys():
        return False
    for name, value in mine.items():
        other = theirs[name]
        if value is other:
            continue
        if type(value) is not type(other) or not (dict.__eq__(value, other) if isinstance(value, dict) else value == other):
            return False
    return True
