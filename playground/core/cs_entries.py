"""Entries into the critical section, measured as the lecture measures them (3-3): the
one definition, for the summary, the status bar and `--compare --mutex`.

  - Messages per entry are counted per request, and only for requests that completed
    (the node entered and left). Each message of the mutex declares whose request it
    serves (`protocol.serves`: the sender's, a Request or a Release; the receiver's, a
    Reply or a Grant); a request's messages are those that served it from its Want to
    its exit. A request still open, or one a crash ended, adds nothing, so the figure
    is not inflated by requests under way (at N = 8 a total divided by entries read 84
    after the first entry, against the lecture's 14). Until a request completes the
    figure is not defined (None). A mutex whose messages serve no one request (the token
    going round whether anyone asks or not) is counted as the lecture counts it: all its
    messages over all entries.
  - The client delay: from a node's Want to its entry.
  - The synchronization delay: from an exit that leaves the critical section empty
    while someone waits, to the next entry. An exit while another node is still inside
    (two or more were inside: a violation) hands nothing on, so the interval is left
    out, and counted (`sync_left_out`) so that the figures can say so.
  - Fairness, the lecture's: no node enters twice while another has waited throughout
    (`unfair` counts the entries that did); and for the algorithms that stamp their
    requests, entries in (timestamp, id) order (`out_of_order` counts those that
    overtook an older waiting request).

A node's sends and its report of a new state come from one step, sends first (a Want's
Requests come just before the node says it wants), so a message serving its sender that
a released node sends waits (`_unclaimed`) for a Want from that node at the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from protocol import CsState, Serves, serves

from .events import CrashEvent, CsEvent, Event, LeaveEvent, SendEvent


@dataclass(slots=True)
class CsEntries:
    serving: dict[str, Serves | None]  # the mutex's message types -> whose request each serves
    entries: int = 0
    messages: int = 0  # every message of the mutex
    completed: int = 0  # requests that entered and left
    completed_messages: int = 0  # the messages that served them
    client_delays: list[float] = field(default_factory=list)
    sync_delays: list[float] = field(default_factory=list)
    sync_left_out: int = 0  # exits while another node was still inside: no synchronization delay
    unfair: int = 0  # entries by a node that had entered once already while another waited throughout
    out_of_order: int = 0  # entries ahead of a waiting request with an older (timestamp, id)
    _open: dict[int, int] = field(default_factory=dict)  # node -> messages of its request under way
    _unclaimed: dict[int, tuple[float, int]] = field(default_factory=dict)  # released node -> (t, its messages then)
    _wanted: dict[int, float] = field(default_factory=dict)  # node -> when it asked
    _exit: float | None = None  # the last exit that left the CS empty while someone waited
    _passed: dict[int, set[int]] = field(default_factory=dict)  # a waiting node -> who entered while it waited
    _inside: set[int] = field(default_factory=set)  # who holds it now
    _stamps: dict[int, tuple[int, int]] = field(default_factory=dict)  # a waiting node -> its request's (ts, id)

    @classmethod
    def of(cls, mutex: type) -> CsEntries:
        """The measures of a run with `mutex` (its messages are the ones counted)."""
        return cls({m.type: serves(m) for m in mutex.messages})

    @property
    def messages_per_entry(self) -> float | None:
        """Messages per completed request (None until one has completed); for a mutex
        whose messages serve no one request, all of them per entry."""
        if not any(self.serving.values()):
            return round(self.messages / self.entries, 3) if self.entries else None
        return round(self.completed_messages / self.completed, 3) if self.completed else None

    def observe(self, e: Event) -> None:
        kind = type(e)
        if kind is SendEvent:
            if e.msg.type in self.serving:
                self.messages += 1
                self._serve(e)
        elif kind is CsEvent:
            if e.state is CsState.WANTED:
                self._want(e)
            elif e.state is CsState.HELD:
                self._enter(e)
            else:
                self._release(e)
        elif kind is CrashEvent or kind is LeaveEvent:
            self._forget(e.node)
            self._inside.discard(e.node)

    def _serve(self, e: SendEvent) -> None:
        whose = self.serving[e.msg.type]
        if whose is None:
            return
        node = e.src if whose is Serves.SENDER else e.dst
        if node in self._open:
            self._open[node] += 1
        elif whose is Serves.SENDER:
            t, count = self._unclaimed.get(node, (e.t, 0))
            self._unclaimed[node] = (e.t, count + 1 if t == e.t else 1)

    def _want(self, e: CsEvent) -> None:
        t, count = self._unclaimed.pop(e.node, (None, 0))
        self._open[e.node] = count if t == e.t else 0
        self._wanted[e.node] = e.t
        self._passed[e.node] = set()
        if e.stamp is not None:
            self._stamps[e.node] = (e.stamp, e.node)

    def _enter(self, e: CsEvent) -> None:
        if e.node not in self._open:  # wanted and entered in one step (a central leader serving itself)
            t, count = self._unclaimed.pop(e.node, (None, 0))
            self._open[e.node] = count if t == e.t else 0
        self.entries += 1
        self._inside.add(e.node)
        mine = self._stamps.pop(e.node, None)  # timestamp order: no older request left waiting
        if mine is not None and any(other < mine for other in self._stamps.values()):
            self.out_of_order += 1
        self._passed.pop(e.node, None)
        for passed in self._passed.values():  # fairness: nobody enters twice while another waits
            if e.node in passed:
                self.unfair += 1
                break
        for passed in self._passed.values():
            passed.add(e.node)
        asked = self._wanted.pop(e.node, e.t)
        self.client_delays.append(round(e.t - asked, 6))
        if self._exit is not None:
            self.sync_delays.append(round(e.t - self._exit, 6))
        self._exit = None

    def _release(self, e: CsEvent) -> None:
        """Released: an exit completes the request and hands the CS on, if anyone waits
        (a recovery's release is no exit)."""
        count = self._open.pop(e.node, None)
        self._forget(e.node)
        if e.node not in self._inside:
            return
        self._inside.discard(e.node)
        if count is not None:
            self.completed += 1
            self.completed_messages += count
        if self._inside:  # someone else is still inside: the exit hands nothing on
            if self._wanted:
                self.sync_left_out += 1
            self._exit = None
        else:
            self._exit = e.t if self._wanted else None

    def _forget(self, node: int) -> None:
        """`node` no longer asks: its request is over, completed or not."""
        self._open.pop(node, None)
        self._unclaimed.pop(node, None)
        self._wanted.pop(node, None)
        self._passed.pop(node, None)
        self._stamps.pop(node, None)

    def copy(self) -> CsEntries:
        """An independent copy (every field by replace, so one added later is not
        forgotten; the mutable ones copied)."""
        return replace(self, client_delays=list(self.client_delays), sync_delays=list(self.sync_delays),
                       _open=dict(self._open), _unclaimed=dict(self._unclaimed), _wanted=dict(self._wanted),
                       _passed={k: set(v) for k, v in self._passed.items()}, _inside=set(self._inside),
                       _stamps=dict(self._stamps))
