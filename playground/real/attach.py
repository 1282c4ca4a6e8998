"""Watching real nodes started by hand, perhaps on other machines (`bully-tui attach
ID@HOST:PORT,...`): each node is asked for its trace (a connection whose first frame is
{"watch": true}, wire.py) and sends it, then every new line; the lines are merged as a
cluster's are (merge.py) whenever the view asks. Watching only: the nodes are started,
stopped and told things where they run. A node that cannot be reached, or sends what is
not a trace, is one line; one that goes away later simply stops adding lines."""

from __future__ import annotations

import socket
import threading
import time

from ..core.config import InputError
from ..core.events import Event
from . import wire
from .merge import Merge
from .traces import Line, TraceReader, settings
from .wire import Address

FIRST_LINES_WITHIN = 5.0  # seconds with no line from any node before the silent ones are said to send none
RECONNECT = 0.5  # seconds between tries to reach a node that went down


class Attached:
    def __init__(self, peers: dict[int, Address]):
        self.peers = peers
        self.traces: dict[int, list[Line]] = {node: [] for node in peers}
        self.readers: dict[int, TraceReader] = {}  # each node's, for its trace as last sent
        self.problems: dict[int, str] = {}
        self.log: list[tuple[float, str, tuple[int, ...]]] = []  # connections lost: the node went down then
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._closed = False
        for node, address in peers.items():
            threading.Thread(target=self._follow, args=(node, address), daemon=True).start()
        deadline, seen = time.monotonic() + FIRST_LINES_WITHIN, 0
        while not all(self.traces.values()) or self.problems:
            if (lines := sum(map(len, self.traces.values()))) != seen:  # (the deadline follows the work)
                deadline, seen = time.monotonic() + FIRST_LINES_WITHIN, lines
            if self.problems:
                node, why = next(iter(sorted(self.problems.items())))
                self.close()
                raise InputError(f"node {node} at {peers[node]}: {why}")
            if time.monotonic() > deadline:
                silent = [str(n) for n, lines in sorted(self.traces.items()) if not lines]
                self.close()
                raise InputError(f"node {', '.join(silent)} sent no trace within {FIRST_LINES_WITHIN:g} s")
            time.sleep(0.02)
        with self._lock:
            self.algorithm, self.ids, self.config = settings({node: reader.headers for node, reader in self.readers.items()},
                                                             "attach to every node")
        self.merged = Merge(self.algorithm, self.ids, self.config,  # (events: kept between calls)
                            {node: f"node {node} at {address}" for node, address in peers.items()})

    def _follow(self, node: int, address: Address) -> None:
        """The node's trace, as it grows. When the connection ends the node went down (as
        far as anyone watching can tell: its kill is logged then); when it is back, its
        whole trace comes again, and only what is new is added (the view's merge goes on
        from where it was)."""
        first = True
        while not self._closed:
            try:
                s = socket.create_connection((address.host, address.port), timeout=FIRST_LINES_WITHIN)
            except OSError as e:
                if first:
                    self.problems[node] = f"cannot connect: {e.strerror or e}"
                    return
                time.sleep(RECONNECT)
                continue
            self._sockets.append(s)
            s.settimeout(None)
            frames, lines, reader = wire.Frames(), self.traces[node], TraceReader()
            seen, again = len(lines), 0  # the lines had before come first again: they are skipped
            try:
                s.sendall(wire.frame({"watch": True}))
                while data := s.recv(1 << 16):
                    for obj in frames.feed(data):
                        record = reader.line(obj, f"node {node} at {address}")
                        if record is None:  # (a header: its settings)
                            with self._lock:
                                self.readers[node] = reader
                            continue
                        if record.node != node:
                            raise InputError(f"node {node} at {address} sent a line of node {record.node}")
                        with self._lock:
                            record.i = again if again < seen else len(lines)
                            if again < seen and record == lines[again]:
                                again += 1
                                continue
                            if again < seen:  # (not the trace had before: a node started afresh; what differs goes)
                                lines = self.traces[node] = lines[:again]
                                seen = again
                            lines.append(record)
            except (wire.FrameError, InputError) as e:
                if not self._closed:
                    self.problems[node] = str(e)
                return
            except OSError:
                pass
            finally:  # (one socket per connection, closed when it ends: a node that comes and goes leaks none)
                self._sockets.remove(s)
                s.close()
            first = False
            if not self._closed:
                with self._lock:
                    self.log.append((time.time(), "crash", (node,)))
                time.sleep(RECONNECT)

    internals_unknown = "the node runs elsewhere: this view sees its trace only"

    def internals(self, node: int) -> None:
        return None

    def events(self) -> list[Event]:
        with self._lock:
            traces = {node: list(lines) for node, lines in self.traces.items()}
            log = list(self.log)
        return self.merged.events(self.ids, log, traces)

    def close(self) -> None:
        self._closed = True
        for s in list(self._sockets):
            try:
                s.close()
            except OSError:
                pass
