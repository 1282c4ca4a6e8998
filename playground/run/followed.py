"""A real run followed from its nodes' traces, behind the control surface (control.py):
the cluster of processes a front end started (real/cluster.py), or nodes started
elsewhere and only watched (real/attach.py).

Neither is named here (this layer is below real/): a source is anything that reads its
nodes' traces merged as a transcript would be (`events()`, `merged`: real/merge.py),
says what a node's state file holds (`internals`), and has the run's settings
(`config`); a cluster this run starts also takes commands (`submit`) and stops
(`close`). Starting 64 processes takes seconds, so a cluster is started in a thread,
the screen drawn meanwhile; and so is every reading of the traces: `poll` starts one
when none is under way, `on_read` is called (from that thread) once it is done, and
`take` folds it into `state` on the front end's thread.

The state is made as the merge allows: the settled events (those that stay as they
are) are applied once, to a state kept aside; the newer ones go on a copy of it, which
the shown state becomes (ClusterState.load), since the next reading may order them
otherwise. The past is not kept (`time_travel` is False): a real run is not
deterministic, so it cannot be re-created at an instant, nor branched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.commands import LiveCommand
from ..core.config import ClusterConfig, InputError, WriteError
from ..core.events import Event
from ..core.host import Internals
from ..record.files import saved_as_new
from ..record.recorder import Recorder
from .session import Session
from .state import ClusterState

WATCHING = "attached: this view only watches (start, stop and tell the nodes where they run)"
STARTING = "the nodes are still starting"


class FollowedRun:
    time_travel = False

    def __init__(self, session: Session, state: ClusterState, on_read: Callable[[], None], *, start: Any = None,
                 watching: Any = None, files: ExitStack | None = None):
        """`start`: a cluster not started yet, started here in a thread (its
        `cancelled`, set, stops it starting); or `watching`: nodes started elsewhere.
        `files`: closed once the run is (the run's folder). `on_read`: called from the
        reading's thread when a reading is done (then `take` it)."""
        self.session = session
        self.state = state
        self.cluster: Any = None  # the cluster this run started, once it has (None while starting, or watching)
        self.watching = watching
        self.events: list[Event] = []  # the run so far, as last merged
        self.failure: str | None = None  # why the run cannot go on (it did not start; a node sent no trace)
        self.kept_transcript: str | None = None  # the session's --transcript, once written (close)
        self._on_read = on_read
        self._files = files or ExitStack()
        self._starting = start
        self._started: bool | str = False  # True once started; why not, if it could not
        self._starter: threading.Thread | None = None
        self._reading = False  # a reading of the traces is under way
        self._read: list[Event] | InputError | None = None  # a reading done, not taken yet
        self._now = 0.0
        self._settled: ClusterState | None = None  # the state after the merge's settled events
        self._generation, self._applied = 0, 0  # the merge's start it follows; its settled events applied
        if start is not None:
            self._starter = threading.Thread(target=self._start, daemon=True)
            self._starter.start()

    @property
    def source(self) -> Any:
        """Where the events come from: the cluster this run started, or the nodes it watches."""
        return self.watching if self.watching is not None else self.cluster

    @property
    def config(self) -> ClusterConfig:
        """The settings the nodes run with now (T changes when a command says so)."""
        return self.session.config if self.source is None else self.source.config

    def now(self) -> float:
        return self._now

    # --- reading --------------------------------------------------------------------------

    def _start(self) -> None:
        try:
            self._starting.__enter__()
            self._started = True
        except InputError as e:
            self._started = str(e)
        except Exception as e:  # (a folder that cannot be made, no process to be had: the run ends, saying so)
            self._started = f"cannot start the nodes: {getattr(e, 'strerror', None) or e}"

    def poll(self) -> None:
        """On the front end's thread: take the cluster once started (or the reason it could
        not start, in `failure`), and start a reading of the traces if none is under way."""
        if self._started is True and self.cluster is None and self._starter is not None:
            self._starter.join()
            self.cluster, self._starter = self._starting, None
        elif isinstance(self._started, str) and self.failure is None:
            self.failure = self._started
        if self.source is not None and not self._reading:  # (one at a time: 64 nodes' start can take seconds to merge)
            self._reading = True
            threading.Thread(target=self._read_traces, args=(self.source,), daemon=True).start()

    def _read_traces(self, source: Any) -> None:
        try:
            self._read = source.events()
        except InputError as e:  # (a node sent what is not a trace: the run ends, saying so)
            self._read = e
        try:
            self._on_read()
        except RuntimeError:  # (the front end has ended meanwhile)
            pass

    def take(self) -> list[Event] | None:
        """The reading done, folded into `state` (on the front end's thread): the events
        so far; None if there is nothing to show (stopped meanwhile, or a node sent what
        is not a trace: then `failure` says so)."""
        read, self._read, self._reading = self._read, None, False
        if self.source is None or read is None:
            return None
        if isinstance(read, InputError):
            self.failure = str(read)
            return None
        self.events = read
        merged, s = self.source.merged, self.session
        if merged.generation != self._generation:  # (the merge started again from the top: so does the state)
            self._generation, self._applied = merged.generation, 0
            self._settled = ClusterState(s.ids, s.config, s.algorithm)
        if self._settled is None:
            self._settled = ClusterState(s.ids, s.config, s.algorithm)
        self._settled.apply(read[self._applied:merged.settled])  # (each settled event once)
        self._applied = merged.settled
        moment = self._settled.snapshot()
        moment.messages = moment.messages.until(moment.sent)  # (the newer messages may be numbered otherwise next time)
        self.state.load(moment)
        self.state.apply(read[merged.settled:])
        self._now = read[-1].t if read else 0.0
        if merged.origin is not None:  # (the time goes on while nothing happens)
            self._now = max(self._now, round(time.time() - merged.origin, 2))
        return read

    # --- the surface ------------------------------------------------------------------------

    def refusal(self, command: LiveCommand | None, name: Callable[[int], str] = str) -> str | None:
        """Only why no command can be given now: the cluster itself says why one cannot
        (`submit`), from what it knows of its processes."""
        if self.watching is not None:
            return WATCHING
        if self.cluster is None:
            return STARTING
        return None

    def submit(self, command: LiveCommand) -> str | None:
        refusal = self.refusal(command) or self.cluster.submit(command)
        self.poll()  # (what it did, shown as soon as it is read)
        return refusal

    def internals(self, node: int) -> Internals | None:
        return None if self.source is None else self.source.internals(node)

    @property
    def internals_unknown(self) -> str | None:
        return None if self.source is None else self.source.internals_unknown

    def save(self, folder: Path) -> tuple[Path, int]:
        """The run so far (as merged now) as a new transcript in `folder`."""
        if self.source is None:
            raise InputError(STARTING)
        events, s = list(self.events), self.session
        base = f"bully-real-{s.algorithm}-n{len(self.state.ids)}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        return saved_as_new(folder, base, lambda path: self._write(str(path), events, False)), 0

    def _write(self, path: str, events: list[Event], overwrite: bool) -> None:
        """A transcript of `events`, its header saying the run was real."""
        with Recorder.create(path, replace(self.session.header, real=True), overwrite) as recorder:
            recorder(events)

    async def close(self) -> None:
        """Every process stopped, the session's transcript written (if it names one: then
        `kept_transcript`; if it cannot be, `failure` says why), the files closed."""
        if self.watching is not None:
            self.watching.close()
        if self._starter is not None:  # (closed while starting: it stops what it started, unless it is done)
            self._starting.cancelled = True
            self._starter.join()
            self._starter = None
            if self._started is True and self.cluster is None:  # (done since the last poll)
                self.cluster = self._starting
        cluster, self.cluster = self.cluster, None
        try:
            if cluster is not None:
                cluster.close()
                if self.session.transcript is not None:
                    self._write(self.session.transcript, cluster.events(final=True), self.session.overwrite)
                    self.kept_transcript = self.session.transcript
        except (InputError, WriteError) as e:  # said once the screen is gone, in one line
            self.failure = str(e)
        finally:
            self._files.close()
