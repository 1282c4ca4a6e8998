"""A session's timeline: its run (live, or a replay read from its transcript) and its
whole past, behind the control surface (control.py) that a real run offers too, for
whoever shows it (the app, a test).

It owns:
  - the recording: the session's transcript, or a temporary one that `save` copies and
    that goes with the timeline (the guardian removes it if the process is killed);
  - the history (history.py): the transcript's index, checkpoints and engine copies;
  - the live run (live.py), while there is one;
  - `state` (state.py): the cluster at the moment shown, the present or an instant of
    the past (`position`), which a screen renders and never copies;
  - the engine at any instant (`internals` of a node then), re-created from the nearest
    copy kept, and a replay's re-run that keeps those copies (`re_run`);
  - changing the course: a command at the present runs (`submit`); from the past it
    branches (`branch`): the engine then is re-created and goes on in a new transcript
    beside the first, which stays as it is, and the session is the branch from then on;
  - the network as the user sees it by hand (`network`, `by_hand`: the messages in
    flight and the timers set, at the present of a live run: core/by_hand.py);
  - keeping: the transcript so far copied (`save`), or a window of it drawn as a
    space-time diagram, SVG, Mermaid or ShiViz (`export_diagram`).

The app asks it to move (`seek`, `present`, `step`), takes what is new (`take`), and
shows `state`; moving returns the events that led to the moment, for a log to show.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import outcome

from ..core import by_hand
from ..core.commands import HAND_COMMANDS, ChangeDelay, ChangeTimeout, Command, LiveCommand, Members
from ..core.config import InputError
from ..core.engine import Engine, steps
from ..core.events import Event
from ..core.host import Internals
from ..core.links import Flight
from ..record import guard
from ..record.export import Filters, export
from ..record.files import saved_as_new, write_whole
from ..record.recorder import Recorder
from .cluster import Cluster
from .history import History, Loading, save_with_parents
from .live import LiveRun
from .session import Session
from .state import ClusterState
from .wiring import start

RE_RUN_SLICE = 0.02  # seconds a replay's re-run works before it lets others in (see `re_run`)


class Timeline:
    time_travel = True  # (control.Control) any instant can be shown, and a command there branches

    def __init__(self, session: Session, history: History, state: ClusterState, files: ExitStack, temporary: bool):
        """`state`: a fresh state of the session's, which the timeline keeps showing the
        moment in (whoever renders it holds it, and its node states, from the start)."""
        self.session = session
        self.history = history
        self.state = state
        self.position: int | None = None  # the instant shown; None: the present of a live run
        self.live: LiveRun | None = None
        self.loading: Loading | None = None  # a replay's file, while it is being read
        self._files = files
        self._temporary = temporary  # the recording goes with the timeline (nobody asked to keep it)
        self._engine_shown: tuple[int, Engine | None] | None = None  # (instant, the engine at its end), for `internals`

    # --- opening and closing ------------------------------------------------------------------

    @classmethod
    def live_session(cls, session: Session, state: ClusterState, *, speed: float, paused: bool,
                     on_events: Callable[[], None], on_done: Callable[[outcome.Outcome], None]) -> Timeline:
        """Record `session` (to its transcript, or to a temporary file) with its history
        fed as it happens, and start it live (call from a coroutine on the asyncio loop)."""
        files = ExitStack()
        try:
            temporary = not session.transcript
            if temporary:
                session = replace(session, transcript=_temporary_file(files), overwrite=True)
            engine, _, recorder = start(session, files, lookahead=False)
            timeline = cls(session, History(session.transcript, session.header), state, files, temporary)
            recorder.index = timeline.history.offsets
            engine.subscribe(timeline.history.add)
            timeline._run(engine, speed, paused, on_events, on_done)
        except BaseException:
            files.close()
            raise
        return timeline

    @classmethod
    def replay(cls, session: Session, state: ClusterState, loading: Loading) -> Timeline:
        """A transcript's session, at its latest instant read so far: it runs live only once
        it branches. `loading` has read the file's first block; `read` reads on."""
        timeline = cls(session, loading.history, state, ExitStack(), temporary=False)
        timeline.loading = None if loading.done else loading
        timeline.seek(loading.history.instants - 1)
        return timeline

    def _run(self, engine: Engine, speed: float, paused: bool, on_events: Callable[[], None],
             on_done: Callable[[outcome.Outcome], None]) -> None:
        cluster = Cluster(engine)
        cluster.between_instants = self.history.keep_engine
        self.live = LiveRun(cluster, speed=speed, paused=paused, on_events=on_events, on_done=on_done)
        self.live.start()

    async def close(self) -> None:
        """Stop the run, close the transcript, remove a temporary recording."""
        if self.live is not None:
            await self.live.stop()
        self.close_files()

    def close_files(self) -> None:
        """Close the replay's file and the recording (a timeline never run, or stopped)."""
        if self.loading is not None:
            self.loading.close()
        self._files.close()

    @property
    def kept_transcript(self) -> str | None:
        """The transcript the session leaves behind (None: a temporary recording, gone)."""
        return None if self._temporary else self.history.path

    # --- where it is -----------------------------------------------------------------------------

    @property
    def at_present(self) -> bool:
        return self.position is None

    def now(self) -> float:
        """The time shown: the live clock at the present, else the instant's time."""
        if self.position is not None:
            return self.history.times[self.position]
        return self.live.now() if self.live is not None else 0.0

    @property
    def shown(self) -> int:
        """The instant shown (the present: the latest)."""
        return self.history.instants - 1 if self.position is None else self.position

    def take(self) -> list[Event]:
        """The live run's new events, taken into `state` if it shows the present (looking
        at the past, the history has them, and the present will show them): those, or none."""
        if self.live is None:
            return []
        events = self.live.take()
        if self.position is not None:
            return []
        self.state.apply(events)
        return events

    def seek(self, instant: int, recent: int = 0) -> list[Event]:
        """Show the end of `instant` (a live run pauses: the past stands still; its latest
        instant is the present). The events that led there, the last `recent` at least."""
        h = self.history
        instant = max(0, min(instant, h.instants - 1))
        if self.live is not None and instant == h.instants - 1:
            return self.present(recent)
        if self.live is not None:
            self.live.pause()
        self.position = instant
        return h.state_at(instant, self.state, recent)

    def present(self, recent: int = 0) -> list[Event]:
        """A live run's present, followed again (still paused if it was); a replay's
        latest instant."""
        if self.live is None:
            return self.seek(self.history.instants - 1, recent)
        events = self.history.state_at(self.history.instants - 1, self.state, recent) if self.history.instants else []
        self.live.take()  # already in the history, and so in the state just loaded
        self.position = None
        return events

    def step(self) -> None:
        """At the present: pause, and run the next instant due."""
        if self.live is not None and self.position is None:
            self.live.step()

    def marker_near(self, direction: int) -> int | None:
        """The instant of the nearest marker before (-1) or after (+1) the one shown."""
        return self.history.marker_near(self.shown, direction)

    # --- a replay's file ------------------------------------------------------------------------------

    def read(self, blocks: int) -> bool:
        """Read on in a replay's file (its history grows; the moment shown stays); whether
        it is all read. InputError for a bad line."""
        loading = self.loading
        if loading is None:
            return True
        try:
            loading.take(loading.read(blocks))
        except BaseException:
            loading.close()
            self.loading = None
            raise
        if loading.done:
            self.loading = None
        return loading.done

    @property
    def read_fraction(self) -> float:
        return 1.0 if self.loading is None else self.loading.fraction

    def re_run(self, slice_seconds: float = RE_RUN_SLICE) -> Iterator[None]:
        """A replay's recipe run again, keeping engine copies, so that `internals` can
        show variables and a branch can start: a generator that yields every
        `slice_seconds` of work, for its caller to let keys and frames in."""
        clock = time.monotonic
        history = self.history
        if not history.re_creates:
            return
        engine = history.recipe()
        slice_ends = clock() + slice_seconds
        for _ in steps(engine, history.times[-1] if history.instants else 0):
            if engine.between_instants:
                history.keep_engine(engine)
            if clock() >= slice_ends:
                yield
                slice_ends = clock() + slice_seconds

    # --- a node's internals --------------------------------------------------------------------

    def internals(self, node: int) -> Internals | None:
        """A node's variables and storage at the moment shown (None: not known yet, the
        re-run of a replay has not got there)."""
        if self.position is None:
            return self.live.cluster.engine.internals(node) if self.live is not None else None
        if self._engine_shown is None or self._engine_shown[0] != self.position or self._engine_shown[1] is None:
            self._engine_shown = (self.position, self.history.engine_at(self.position, to_read=True))
        engine = self._engine_shown[1]
        return None if engine is None else engine.internals(node)

    @property
    def internals_unknown(self) -> str | None:
        """Why no node's variables can be known (a replay that cannot be re-created), or None."""
        return self.history.why_not_re_created

    # --- changing the course ---------------------------------------------------------------------

    def refusal(self, request: LiveCommand | None, name: Callable[[int], str]) -> str | None:
        """Why `request` cannot mean anything at the moment shown (one line), or None: a
        node that has left, or is down already; T or a delay at its floor, which the
        change would leave as it is."""
        config = self.state.config
        if type(request) is ChangeTimeout and config.timeout + request.by < abs(request.by):
            return f"T cannot go below {abs(request.by):g}s"
        if type(request) is ChangeDelay and config.delay_min + request.by < 0:
            return f"the minimum delay is {config.delay_min:g}s: it cannot go {-request.by:g}s lower"
        if not isinstance(request, Command):  # (a change of T or the delays names no node)
            return None
        members = Members(self.state.joined, self.state.left, self.state.down)
        if (why := members.refusal(request, name)) is not None or not isinstance(request, HAND_COMMANDS):
            return why
        if self.live is None or self.position is not None:
            return "by hand, you are the network of the present: go to the latest instant of a live run first"
        return by_hand.refusal(self.live.cluster.engine, request, name)

    # --- the network, by hand ----------------------------------------------------------------------

    @property
    def by_hand(self) -> bool:
        """Whether the user is the network now (the live run's engine, engine rule 8)."""
        return self.live is not None and self.live.cluster.engine.hand

    def network(self) -> tuple[list[Flight], list[tuple[int, int, str]]] | None:
        """At the present of a live run, what the user as the network may act on: the
        messages in flight, by when they are due, and the timers set, (due in
        microseconds, node, name) by when they fire; None elsewhere."""
        if self.live is None or self.position is not None:
            return None
        engine = self.live.cluster.engine
        timers = sorted((fires, node, name) for node, host in engine.hosts.items() if host.up
                        for name, (fires, _) in host.timers.items() if fires is not None)
        return engine.links.flights(), timers

    def submit(self, request: LiveCommand) -> None:
        """A command, at the present of a live run (from the past: `branch`); the cluster
        takes every command `refusal` lets through."""
        assert self.live is not None and self.position is None
        self.live.submit(request)

    def branch_refusal(self) -> str | None:
        """Why the session cannot branch at the instant shown yet (one line), or None."""
        h = self.history
        if (why := h.why_not_re_created) is not None:
            return f"{why[0].upper()}{why[1:]}: it cannot branch."
        if not h.reached(self.shown):
            return f"Not yet: the replay is being re-run (at t={h.reach:.1f}s). Try again in a moment."
        return None

    def branch_path(self) -> Path:
        """`t.jsonl` -> `t.branch-1.jsonl` (or -2, ...), beside the session's transcript."""
        here = Path(self.history.path)
        stem = here.stem.split(".branch-")[0]
        for k in range(1, 10_000):
            candidate = here.with_name(f"{stem}.branch-{k}{here.suffix}")
            if not candidate.exists():
                return candidate
        raise InputError(f"no free branch name beside {here}")

    async def branch(self, request: LiveCommand | None, path: Path, *, speed: float, on_events: Callable[[], None],
                     on_done: Callable[[outcome.Outcome], None], recent: int = 0) -> list[Event]:
        """The session goes on from the instant shown, in a new transcript at `path`, with
        `request` given there (run at once: the run stays paused; None: none, a lesson
        going back to a step). A branch of a temporary recording is as temporary as it.
        The events that led there, as `seek` gives them."""
        instant = self.shown
        engine = self.history.engine_at(instant)
        assert engine is not None, "branch_refusal says when"
        if self.live is not None:
            await self.live.stop()
        history, header = self.history.branch(instant, str(path))
        if self._temporary:
            _temporary(self._files, str(path))
        recorder = self._files.enter_context(Recorder.resume(str(path), header))
        recorder.index = history.offsets
        engine.subscribe(recorder)
        engine.subscribe(history.add)
        self.history = history
        self.session = replace(self.session, transcript=str(path))
        events = self.history.state_at(history.instants - 1, self.state, recent)  # (the branch's own table of messages)
        self.position = None
        self._run(engine, speed, True, on_events, on_done)
        if request is not None:
            self.live.submit(request)
        return events

    # --- keeping ---------------------------------------------------------------------------------

    def save(self, folder: Path) -> tuple[Path, int]:
        """The transcript so far (a branch's with the transcripts it branched from) copied
        to a new file in `folder`, named after the session and the time: that file, and
        how many parents were saved beside it. InputError or WriteError if it cannot."""
        s = self.session
        base = f"bully-{s.algorithm}-n{s.nodes}-seed{s.seed}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        written: list[Path] = []
        target = saved_as_new(folder, base, lambda path: written.extend(save_with_parents(self.history.path, path)))
        return target, len(written) - 1

    def export_diagram(self, target: Path, start: float, stop: float, *, fmt: str = "svg", nodes: tuple[int, ...] = (),
                       types: tuple[str, ...] = (), detector: bool = False) -> None:
        """The transcript from `start` to `stop` as a space-time diagram in `fmt` (svg,
        mermaid, shiviz: record/export.py; only `nodes` and message `types` if given,
        failure-detector traffic if `detector`), written whole to `target`, a new file.
        Reads the transcript from its file: call it from a thread to keep a screen going.
        InputError or WriteError if it cannot."""
        filters = Filters(start, stop, nodes=nodes, types=types, detector=detector)
        write_whole(str(target), "export", export(self.history.path, fmt, filters).encode(), overwrite=False)


def _temporary_file(files: ExitStack) -> str:
    """Without --transcript the session is still recorded, to a temporary file `save`
    copies, removed at the end whatever ends the process."""
    guard.start()  # (so that the file is in its care from the moment it exists)
    fd, name = tempfile.mkstemp(prefix="bully-", suffix=".jsonl")
    os.close(fd)
    _temporary(files, name)
    return name


def _temporary(files: ExitStack, path: str) -> None:
    """`path` goes when the timeline's files do: at close, or by the guardian if the process is killed."""
    guard.remove_if_left(path)
    files.callback(guard.done, guard.REMOVE, path)
    files.callback(os.unlink, path)
