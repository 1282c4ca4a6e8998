"""bully-tui's app: a cluster's trace stream drawn, keys sent back as requests, and its
past shown again on request.

Live, the cluster runs in trio guest mode (live.py), which also owns the pace (the
clock's rate). Its events wait in the live run's buffer; one `EventsReady` message per
burst tells the app to take them, and the model folds them in. The widgets redraw on a
20 Hz tick, which stops while paused, so a paused app uses no CPU. Keys go the other
way, as requests to the cluster, which records the commands they become in the trace.
The app keeps no copy of what the cluster owns: the pace is the live run's, and each
node's state, T and the delays are what the stream said.

Time travel. Every session has a history (ui/history.py): its transcript indexed as it
is written, with checkpoints, and copies of the engine. `,` `.` `{` `}` home and end show
another instant (the model is loaded with its state then; going back pauses a live run).
A command given while looking at the past branches the session there, after asking: the
engine then is re-created, and the session goes on from it in a new transcript beside
the first, which stays as it is. A replay (`bully-tui replay FILE`) is a session that
starts in the past, at its transcript's end, and runs live only once it branches.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import outcome
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Resize
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer

import themes
from protocol import ALGORITHMS

from ..core.commands import (
    ChangeDelay,
    ChangeTimeout,
    Crash,
    Elect,
    Heal,
    Hold,
    Join,
    Leave,
    Members,
    Partition,
    Recover,
    Release,
    Request,
    membership_refused,
)
from ..core.config import ClusterConfig, InputError, WriteError
from ..core.engine import Engine, steps
from ..core.host import HostStatus, Internals
from ..record import guard
from ..record.export import Filters, export
from ..record.files import write_whole
from ..record.recorder import Recorder
from ..run import interrupt
from ..run.cluster import Cluster
from ..run.history import History, Loading, save_with_parents
from ..run.live import LiveRun
from ..run.session import Session, exception_leaves
from .alert_bar import AlertBar
from .branch_screen import BranchScreen
from .compact_grid import CompactGrid
from .help_screen import HelpScreen
from .message_log import MessageLog
from .model import ClusterModel
from .node_grid import NodeGrid
from .node_panel import NodePanel
from .status_bar import Status, StatusBar
from .timeline import Timeline

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
REDRAW_HZ = 20
PANEL_NEEDS = 70  # columns below which the node panel gives its room to the log
COMPACT_ABOVE = 9  # more nodes than this get the one-line-per-node grid
RE_RUN_SLICE = 0.02  # seconds a replay's background re-run works before it lets keys and frames in
READ_BATCH = 16  # blocks of a replay's file handed to the app at once (8,192 events)
LOADING_SHOWN_EVERY = 0.5  # seconds between two screens of a replay being read (each costs a fold)
TEXT_HZ = 8  # the log and the panel: nobody reads text that scrolls faster, and it is dear
T_STEP = 0.5
DELAY_STEP = 0.25
NODE_REQUESTS = {"crash": Crash, "recover": Recover, "elect": Elect}
QUIT_WITHIN = 1.5  # seconds a signal gives a clean quit before the process ends anyway
GC_YOUNG, GC_MIDDLE, GC_NEVER = 20_000, 20, 1_000_000_000  # the collector's thresholds while the app runs
GC_EVERY = 2.0  # seconds between two looks for a quiet moment to collect garbage in


@dataclass
class EventsReady(Message):
    """New trace events are waiting in the live run's buffer."""


@dataclass(frozen=True)
class Restart:
    """What the next app runs, after the palette switched the algorithm."""

    algorithm: str
    config: ClusterConfig
    selected: int


class BullyApp(App[None]):
    CSS_PATH = str(themes.STYLESHEET)
    TITLE = "bully-tui"
    # The footer shows the short descriptions; the help screen adds the tooltips.
    BINDINGS = [
        Binding("c", "command('crash')", "crash", tooltip="crash the selected node"),
        Binding("r", "command('recover')", "recover", tooltip="recover the selected node"),
        Binding("x", "crash_leader", "kill leader", tooltip="crash the current leader"),
        Binding("e", "command('elect')", "elect", tooltip="the selected node starts an election"),
        Binding("j", "join", "join", show=False, tooltip="a new node joins (the next id), as a recovering node"),
        Binding("l", "leave", "leave", show=False, tooltip="the selected node leaves for good, telling the others"),
        Binding("p", "cut_off", "cut off", show=False,
                tooltip="partition: cut the selected node off from the others (its links held, both ways)"),
        Binding("P", "heal", "heal", show=False, tooltip="heal: release every held link"),
        Binding("space", "toggle_pause", "pause", tooltip="pause or resume"),
        Binding("s", "save", "save", tooltip="save the transcript so far to a new file"),
        Binding("question_mark", "help", "help", tooltip="this screen"),
        Binding("comma", "back", "back", show=False, tooltip="back one instant (a live session pauses)"),
        Binding("full_stop", "forward", "step", show=False,
                tooltip="forward one instant (at the present: pause, and run the next instant)"),
        Binding("left_curly_bracket", "marker(-1)", show=False,
                tooltip="back to the last crash, recovery, command, election or violation"),
        Binding("right_curly_bracket", "marker(1)", show=False, tooltip="on to the next one"),
        Binding("home", "first", show=False, tooltip="the first instant"),
        Binding("end", "latest", show=False, tooltip="the latest instant (a live session: the present)"),
        Binding("plus,equals_sign", "timeout(1)", "T+", show=False, tooltip=f"raise T by {T_STEP:g}s"),
        Binding("minus", "timeout(-1)", "T-", show=False, tooltip=f"lower T by {T_STEP:g}s"),
        Binding("left_square_bracket", "delay(-1)", "delay-", show=False,
                tooltip=f"lower both link delay bounds by {DELAY_STEP:g}s (not below 0)"),
        Binding("right_square_bracket", "delay(1)", "delay+", show=False, tooltip=f"raise both link delay bounds by {DELAY_STEP:g}s"),
        Binding("less_than_sign", "pace(-1)", "slower", show=False, tooltip="halve the speed"),
        Binding("greater_than_sign", "pace(1)", "faster", show=False, tooltip="double the speed"),
        Binding("t", "next_theme", "theme", show=False, tooltip="next theme (dark, light)"),
        Binding("f", "filter_node", "log node", show=False, tooltip="log: only the selected node (again: all)"),
        Binding("m", "filter_topic", "log type", show=False, tooltip="log: next message type filter"),
        Binding("d", "toggle_diagram", "diagram", show=False,
                tooltip="the log as a space-time diagram: a lane per node, time flowing down (again: the text)"),
        Binding("D", "export_svg", "export SVG", show=False,
                tooltip="export the log's window (its time span and filters) as an SVG space-time diagram, and say where"),
        Binding("h", "toggle_detector", "log detector", show=False,
                tooltip="log: show or hide failure-detector traffic (probes, heartbeats)"),
        Binding("pageup", "scroll_log(-1)", show=False, tooltip="scroll the log back a page"),
        Binding("pagedown", "scroll_log(1)", show=False, tooltip="scroll the log forward a page"),
        Binding("left", "move(-1, 0)", show=False, tooltip="select a node"),
        Binding("right", "move(1, 0)", show=False, tooltip="select a node"),
        Binding("up", "move(0, -1)", show=False, tooltip="select a node"),
        Binding("down", "move(0, 1)", show=False, tooltip="select a node"),
        *(Binding(str(i), f"select_rank({i})", show=False, tooltip="select a node") for i in range(1, 10)),
        Binding("ctrl+q", "quit", "quit", show=False, tooltip="quit"),  # the App shows its own
    ]

    def __init__(self, session: Session, speed: float = 1.0, paused: bool = False, save_dir: str = ".",
                 history: History | None = None, loading: Loading | None = None, selected: int | None = None):
        """A live session; or, given the `history` of its transcript (or its `loading`,
        which the app finishes reading in the background), a replay of it."""
        super().__init__()
        self.session = session
        self.save_dir = Path(save_dir)
        self.model = self._fresh_model()
        self.loading = loading
        self.history = loading.history if loading is not None else history
        self._shown_at = 0.0  # wall time the loading last showed its latest instant
        self._following = True  # a replay being read shows its latest instant as it comes
        self.position: int | None = None  # the instant shown; None: the present of a live run
        self._then: tuple[int, Engine | None] | None = None  # (instant, the engine at its end), for the panel
        self.selected = selected if selected in session.ids else session.ids[-1]
        self.saved: Path | None = None
        self._start = (speed, paused)
        self._files = ExitStack()
        self._redraw_due = False
        self._text_drawn = 0.0  # wall time of the last log and panel redraw
        self._collected = False  # a full collection was made during the current pause
        self._watched: float | None = None  # the instant of the user's latest command, drawn as its events come
        self.grid = CompactGrid(self.model) if len(session.ids) > COMPACT_ABOVE else NodeGrid(self.model)
        self.log_view = MessageLog(self.model)
        self.panel = NodePanel()
        self.alert_bar = AlertBar(self.model)
        self.timeline: Timeline | None = None
        self.status_bar = StatusBar()
        self.live: LiveRun | None = None
        self._spool: Path | None = None  # the transcript `s` copies: the session's, or a temporary one
        # Set when the user picks another algorithm: the app exits, and run_live starts
        # a new one with it (cli.py), since every widget is built for one cluster.
        self.restart_with: Restart | None = None
        self.failure: str | None = None  # why the app ended with an error, to print after it
        self.stopped_by: int | None = None  # the signal that ended the app, if one did
        self._temporary_recording = False  # the session is recorded to a temporary file (no --transcript)

    @property
    def speed(self) -> float:
        return self.live.speed if self.live is not None else self._start[0]

    def _fresh_model(self) -> ClusterModel:
        return ClusterModel(self.session.ids, self.session.worst_case_messages, self.session.config)

    # --- start and stop ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.grid
        with Horizontal(id="middle"):
            yield self.log_view
            yield self.panel
        yield self.alert_bar
        if self.history is not None:  # a replay: the timeline exists from the start
            self.timeline = Timeline(self.history, ALGORITHMS[self.session.algorithm].title)
        else:
            self.timeline = Timeline(History("", self.session.header, self._fresh_model()),  # replaced on mount
                                     ALGORITHMS[self.session.algorithm].title)
        yield self.timeline
        yield self.status_bar
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        # Before the temporary recording exists, so that it never outlives us.
        self._loop = asyncio.get_running_loop()
        self._handlers = {signum: signal.signal(signum, self._signalled) for signum in interrupt.SIGNALS}
        for theme in themes.THEMES:
            self.register_theme(theme)
        self.theme = themes.DARK.name
        for name in set(self.available_themes) - {theme.name for theme in themes.THEMES}:
            self.unregister_theme(name)  # Textual's own: the palette offers ours only, whose colours say what things are
        self.sub_title = ALGORITHMS[self.session.algorithm].title
        if self.history is None:
            self._start_live()
        else:
            self._spool = Path(self.history.path)
            self._show(self.history.instants - 1)
            if self.loading is not None and not self.loading.done:
                self.run_worker(self._read(), group="read")
            else:
                self._read_all()
        self._ticker = self.set_interval(1 / REDRAW_HZ, self.redraw, pause=self._start[1] or self.live is None)
        self.set_interval(GC_EVERY, self._collect_while_quiet)
        self.redraw()
        # The garbage collector's full collections walk every object alive: Textual's, and
        # in a storm hundreds of thousands of the run's. That took 100 to 300 ms, a visible
        # stall whenever it came. So: everything built so far (Textual, its CSS, the
        # widgets) is frozen, out of the collector's sight; young collections come less
        # often (objects of a window die by reference counting before one, so few are
        # promoted); and full collections come only while the app is paused (`_collect`),
        # when nobody waits for a frame. The run's objects are freed by reference counting
        # (its data has no cycles); bench/ui.py shows memory stays flat.
        gc.freeze()
        gc.set_threshold(GC_YOUNG, GC_MIDDLE, GC_NEVER)

    def _collect_while_quiet(self) -> None:
        """A full garbage collection once the run is paused (or a replay stands still),
        once per pause: the only time one comes while the app runs (on_mount says why)."""
        quiet = self.live is None or self.live.paused
        if quiet and not self._collected:
            gc.collect()
        self._collected = quiet

    def _start_live(self) -> None:
        """Record the session (to its transcript, or a temporary file `s` copies), with
        its history fed as it happens, and start the cluster."""
        if not self.session.transcript:
            self.session = replace(self.session, transcript=str(self._open_spool()), overwrite=True)
            self._temporary_recording = True
        self._spool = Path(self.session.transcript)
        engine, _, recorder = self.session.start(self._files, lookahead=False)
        history = History(self.session.transcript, self.session.header, self._fresh_model())
        recorder.index = history.offsets
        engine.subscribe(history.add)
        self._run(engine, history, paused=self._start[1])

    def _run(self, engine: Engine, history: History, paused: bool) -> None:
        """Run `engine` live from here, its events going into `history`."""
        self.history = self.timeline.history = history
        cluster = Cluster(engine)
        cluster.between_instants = history.keep_engine
        self.live = LiveRun(cluster, speed=self.speed, paused=paused,
                            on_events=lambda: self.post_message(EventsReady()), on_done=self._run_done)
        self.live.start()

    async def _read(self) -> None:
        """A replay's file, read a batch at a time between frames and keys."""
        try:
            while batch := self.loading.read(READ_BATCH):
                self._took(batch)
                await asyncio.sleep(0)
            self._took(batch)
        except InputError as e:  # a bad line far into the file: one line, as before any screen
            self._fail(2, f"bully-tui: error: {e}")
        finally:
            self.loading.close()

    def _took(self, batch: list) -> None:
        """A batch read: into the history; the screen follows the latest instant read
        (a few times a second) unless the user went somewhere else (`_following`)."""
        self.loading.take(batch)
        if self.loading.done:
            if self._following:
                self._show(self.history.instants - 1)
            self._read_all()
        elif time.monotonic() - self._shown_at >= LOADING_SHOWN_EVERY:
            self._shown_at = time.monotonic()
            if self._following:
                self._show(self.history.instants - 1)
            else:
                self.redraw()  # the timeline and "reading n%"

    def _read_all(self) -> None:
        """The whole file is in the history: re-create its engines in the background."""
        if self.history.re_creates:  # engines at past moments: for the panel, and to branch
            self.run_worker(self._re_create(self.history), exclusive=True)
        self.redraw(text=True)

    async def _re_create(self, history: History) -> None:
        """A replay: run its recipe again in the background, a step at a time, keeping
        engine copies, so that the panel can show variables and a branch can start."""
        engine = history.recipe()
        slice_ends = time.monotonic() + RE_RUN_SLICE
        for _ in steps(engine, history.times[-1] if history.instants else 0):
            if engine.between_instants:
                history.keep_engine(engine)
            if time.monotonic() >= slice_ends:  # a key pressed meanwhile waits at most a slice
                await asyncio.sleep(RE_RUN_SLICE / 2)
                slice_ends = time.monotonic() + RE_RUN_SLICE
        self.redraw(text=True)

    def on_resize(self, event: Resize) -> None:
        self.panel.display = event.size.width >= PANEL_NEEDS  # a narrow screen keeps the log readable

    def _open_spool(self) -> Path:
        """Without --transcript the session is still recorded, to a temporary file `s`
        copies, removed at the end whatever ends the process."""
        guard.start()  # (so that the file is in its care from the moment it exists)
        fd, name = tempfile.mkstemp(prefix="bully-", suffix=".jsonl")
        os.close(fd)
        self._temporary(name)
        return Path(name)

    @property
    def kept_transcript(self) -> str | None:
        """The transcript the session leaves behind (None: a temporary recording, gone)."""
        return None if self._temporary_recording or self.history is None else self.history.path

    def _temporary(self, path: str) -> None:
        """`path` goes when the app does: at quit, or by the guardian if the process is killed."""
        guard.remove_if_left(path)
        self._files.callback(guard.done, guard.REMOVE, path)
        self._files.callback(os.unlink, path)

    async def action_quit(self) -> None:
        if self.live is not None:
            await self.live.stop()
        self.exit()

    async def on_unmount(self) -> None:
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        if self.live is not None:
            await self.live.stop()
        self._files.close()
        # (The collector's policy is left as on_mount set it: the process ends now, and
        # undoing it would make the next collection walk every object the run left, a
        # second and more at N = 64. tests/conftest.py restores it between tests.)

    def _run_done(self, result: outcome.Outcome) -> None:
        """trio finished: normally because we cancelled it; otherwise show why (one line
        for a transcript that could not be written, the traceback of a bug)."""
        if isinstance(result, outcome.Error):
            error = result.error
            written = [e for e in exception_leaves(error) if isinstance(e, WriteError)]
            if written:
                self._fail(1, f"bully-tui: error: {written[0]}")
                return
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            self._fail(1, f"bully-tui: the simulation failed:\n{text}")

    def _fail(self, code: int, text: str) -> None:
        """End the app with `code`; the caller prints `text` once the screen is gone (as
        it is: Textual's exit message would wrap a one-line error at the screen's width)."""
        self.failure = text
        self.exit(return_code=code)

    def _signalled(self, signum: int, _frame: object) -> None:
        """SIGINT, SIGTERM or SIGHUP (the terminal closed): quit as ctrl+q does, so the run
        ends cleanly and a temporary recording is removed. A plain signal handler, not the
        event loop's: it runs even while the loop is busy or stuck (writing a frame to a
        terminal that is gone can block), and if the clean quit has not ended the process
        within QUIT_WITHIN seconds, a watchdog ends it (the guardian, guard.py, removes
        the temporary recording and keeps the transcript whole)."""
        if self.stopped_by is None:
            self.stopped_by = signum
            threading.Thread(target=self._quit_anyway, args=(signum,), daemon=True).start()
        self._loop.call_soon_threadsafe(self.exit)

    def _quit_anyway(self, signum: int) -> None:
        time.sleep(QUIT_WITHIN)
        try:
            os.write(sys.__stdout__.fileno(), b"\x1b[?1049l\x1b[?25h")  # leave the app's screen, show the cursor
        except (OSError, AttributeError, ValueError):
            pass  # no terminal any more
        os._exit(128 + signum)

    # --- events in --------------------------------------------------------------------

    def on_events_ready(self, _: EventsReady) -> None:
        events = self.live.take()
        if self.position is not None:
            return  # looking at the past: the history has them, and the present will show them
        self.model.apply(events)
        # Someone is watching for what a command of theirs does (the card, the panel): show
        # it now, not at the next tick, and so what follows from it at its instant too
        # (the node's work comes in the batch after the command's).
        mine = [e.t for e in events if e.kind == "command" and e.source == "user"]
        if mine or events and events[0].t == self._watched:
            self._watched = mine[-1] if mine else self._watched
            self.redraw(text=True)
        if self.live.paused:  # no ticker while paused: draw everything it caused, once
            self._redraw_soon()

    def _redraw_soon(self) -> None:
        """One redraw for a whole burst of events, however many messages announced it."""
        if not self._redraw_due:
            self._redraw_due = True
            self.set_timer(1 / REDRAW_HZ, self._deferred_redraw)

    def _deferred_redraw(self) -> None:
        self._redraw_due = False
        self.redraw(text=True)

    def now(self) -> float:
        """The time shown: the live clock at the present, else the instant's time."""
        if self.position is not None:
            return self.history.times[self.position]
        return self.live.now() if self.live is not None else 0.0

    def redraw(self, text: bool | None = None) -> None:
        """Draw the model. Cards and status every time; the log and the panel at most
        TEXT_HZ times a second unless `text` says otherwise."""
        if self.history is None:
            return
        now = self.now()
        self.grid.show(now, self.selected)
        self.alert_bar.show()
        self.timeline.show(self.position)
        wall = time.monotonic()
        if text is None:
            text = wall - self._text_drawn >= 1 / TEXT_HZ
        if text:
            self._text_drawn = wall
            self.log_view.selected = self.selected
            self.log_view.show()
            self.panel.show(self.model.nodes[self.selected], self._internals(), now, self.model.label)
        m, live = self.model, self.live
        self.status_bar.show(Status(
            now, self.speed, live is None or live.paused, live.behind if live and self.position is None else 0.0,
            m.config, m.rounds.count, m.rounds.running, sum(m.rounds.current.messages.values()) if m.rounds.current else 0,
            m.worst_case, self._where(), len(m.held_links)))

    def _internals(self) -> Internals | None:
        """The selected node's variables and storage at the moment shown (None: not known
        yet, the re-run of a replay has not got there)."""
        if self.position is None:
            return self.live.cluster.engine.internals(self.selected)
        if self._then is None or self._then[0] != self.position or self._then[1] is None:
            self._then = (self.position, self.history.engine_at(self.position, to_read=True))
        engine = self._then[1]
        return None if engine is None else engine.internals(self.selected)

    def _where(self) -> str:
        """Where in time the screen is, for the status bar ("" at the present)."""
        if self.position is None:
            return ""
        h = self.history
        then = "replay" if self.live is None else f"now t={h.times[-1]:.2f}s"
        if self.loading is not None and not self.loading.done:
            then = f"reading {self.loading.fraction:.0%}"
        return f"⏪ instant {self.position + 1:,} of {h.instants:,} · {then}"

    # --- time travel -------------------------------------------------------------------

    def _show(self, instant: int) -> None:
        """Show the end of `instant` (the latest of a live run: the present)."""
        h = self.history
        instant = max(0, min(instant, h.instants - 1))
        if self.live is not None and instant >= h.instants - 1 and self.position is not None:
            self.action_latest()
            return
        if self.live is not None and not self.live.paused:
            self.live.pause()  # the past stands still
            self._ticker.pause()
        h.model_at(instant, self.model)
        self.position = instant
        self._following = instant == h.instants - 1  # (a replay being read goes on showing its latest instant)
        self.redraw(text=True)

    def action_back(self) -> None:
        if self.history is None or not self.history.instants:
            return
        here = self.history.instants - 1 if self.position is None else self.position
        if here == 0:
            self.notify("This is the first instant.")
            return
        self._show(here - 1)

    def action_forward(self) -> None:
        if self.position is None:
            self.action_step()
        elif self.position + 1 < self.history.instants:
            self._show(self.position + 1)
        elif self.live is None:
            self.notify("This is the transcript's last instant.")

    def action_marker(self, direction: int) -> None:
        if self.history is None or not self.history.instants:
            return
        here = self.history.instants - 1 if self.position is None else self.position
        found = self.history.marker_near(here, direction)
        if found is None:
            self.notify("No marker " + ("before" if direction < 0 else "after") + " this instant.")
            return
        self._show(found)

    def action_first(self) -> None:
        if self.history is not None and self.history.instants:
            self._show(0)

    def action_latest(self) -> None:
        """The latest instant; in a live session, the present: following the run again
        (still paused: space resumes)."""
        if self.history is None or not self.history.instants:
            return
        if self.live is None:
            self._show(self.history.instants - 1)
            return
        self.history.model_at(self.history.instants - 1, self.model)
        self.live.take()  # already in the history, and so in the model just loaded
        self.position = None
        self.redraw(text=True)

    # --- requests out -----------------------------------------------------------------

    def _request(self, request: Request, text: str) -> None:
        """A request to the cluster: now, at the present; from the past, a branch. One that
        cannot mean anything at the moment shown (a node that has left) is refused with
        a line that says why."""
        left = {i for i, node in self.model.nodes.items() if node.status is HostStatus.LEFT}
        if why := Members(self.model.ids, left).refusal(request, self.model.label.__getitem__):
            self.notify(why[0].upper() + why[1:] + ".", severity="warning")
            return
        if self.position is None and self.live is not None:
            self.live.submit(request)
            return
        h = self.history
        if not h.re_creates:
            self.notify("This transcript was written by an older version of bully-tui: its run cannot be "
                        "re-created here, so it cannot branch.", severity="warning")
            return
        engine = h.engine_at(self.position)
        if engine is None:
            self.notify(f"Not yet: the replay is being re-run (at t={h.reach:.1f}s). Try again in a moment.",
                        severity="warning")
            return
        path = self._branch_path()
        self.push_screen(BranchScreen(text, h.times[self.position], path.name),
                         lambda yes: self._branch(request, engine, path) if yes else None)

    def _branch_path(self) -> Path:
        """`t.jsonl` -> `t.branch-1.jsonl` (or -2, ...), beside the session's transcript."""
        here = Path(self.history.path)
        stem = here.stem.split(".branch-")[0]
        for k in range(1, 10_000):
            candidate = here.with_name(f"{stem}.branch-{k}{here.suffix}")
            if not candidate.exists():
                return candidate
        raise RuntimeError(f"no free branch name beside {here}")

    def _branch(self, request: Request, engine: Engine, path: Path) -> None:
        self.run_worker(self._branch_to(request, engine, path), exclusive=True, group="branch")

    async def _branch_to(self, request: Request, engine: Engine, path: Path) -> None:
        """The session goes on from the instant shown, in a new transcript at `path`,
        with the command given (run at once: the session stays paused)."""
        if self.live is not None:
            await self.live.stop()
        history, header = self.history.branch(self.position, str(path))
        history.model_at(history.instants - 1, self.model)  # (the branch's own table of messages from now on)
        if self._temporary_recording:  # beside a temporary recording: as temporary as it
            self._temporary(str(path))
        recorder = self._files.enter_context(Recorder.resume(str(path), header))
        recorder.index = history.offsets
        engine.subscribe(recorder)
        engine.subscribe(history.add)
        self.session = replace(self.session, transcript=str(path))
        self._spool = path
        self.position = None
        self._run(engine, history, paused=True)
        self.live.submit(request)
        if self._temporary_recording:
            self.notify("A new future. The session is not being kept: s saves it (with what it branched from).")
        else:
            self.notify(f"A new future: recorded in {path}")
        self.redraw(text=True)

    def action_command(self, name: str, node: int | None = None) -> None:
        node = self.selected if node is None else node
        self._request(NODE_REQUESTS[name](node), f"{name} {self.model.label[node]}")

    def action_join(self) -> None:
        if why := membership_refused(self.session.algorithm):
            self.notify(why, severity="warning")
            return
        self._request(Join(), "join")

    def action_leave(self, node: int | None = None) -> None:
        node = self.selected if node is None else node
        if why := membership_refused(self.session.algorithm):
            self.notify(why, severity="warning")
            return
        view, label = self.model.nodes[node], self.model.label[node]
        if not view.up and view.status is not HostStatus.LEFT:  # (one that left is refused as every command on it is)
            self.notify(f"Node {label} is {view.status}: only an up node can leave.", severity="warning")
            return
        self._request(Leave(node), f"leave {label}")

    def action_cut_off(self, node: int | None = None) -> None:
        node = self.selected if node is None else node
        self._request(Partition((node,)), f"partition {self.model.label[node]}")

    def action_heal(self) -> None:
        if not self.model.held_links:
            self.notify("No link is held.")
            return
        self._request(Heal(), "heal")

    def _link(self, name: str, src: int, dst: int) -> None:
        label = self.model.label
        self._request((Hold if name == "hold" else Release)(src, dst), f"{name} {label[src]} {label[dst]}")

    def action_crash_leader(self) -> None:
        leaders = self.model.leaders()
        if not leaders:
            self.notify("No node leads right now.", severity="warning")
            return
        self.action_command("crash", max(leaders))  # in a split brain, the highest

    def action_timeout(self, direction: int) -> None:
        if direction < 0 and self.model.config.timeout - T_STEP < T_STEP:
            self.notify(f"T cannot go below {T_STEP:g}s.", severity="warning")
        self._request(ChangeTimeout(direction * T_STEP), f"T {'+' if direction > 0 else '-'}{T_STEP:g}s")

    def action_delay(self, direction: int) -> None:
        if direction < 0 and self.model.config.delay_min < DELAY_STEP:
            self.notify(f"The minimum delay is {self.model.config.delay_min:g}s: it cannot go {DELAY_STEP:g}s lower.",
                        severity="warning")
        self._request(ChangeDelay(direction * DELAY_STEP), f"delay {'+' if direction > 0 else '-'}{DELAY_STEP:g}s")

    def action_toggle_pause(self) -> None:
        if self.live is None:
            self.notify("A replay: give a command (crash, recover, T...) to branch a new future from here.")
            return
        if self.position is not None:
            self.action_latest()  # back to the present first
        if self.live.paused:
            self.live.resume()
            self._ticker.resume()
        else:
            self.live.pause()
            self._ticker.pause()
        self.redraw(text=True)

    def action_step(self) -> None:
        if self.live is not None and self.position is None:
            self.live.step()
            self._ticker.pause()
            self.redraw(text=True)

    def action_pace(self, direction: int) -> None:
        if self.live is None:
            return
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.live.speed))
        self.live.set_speed(SPEEDS[max(0, min(len(SPEEDS) - 1, index + direction))])
        self.redraw()

    # --- view-only actions ------------------------------------------------------------

    def action_select_rank(self, rank: int) -> None:
        """Digit keys: the rank-th node from the lowest id (the id itself for ids 1..N)."""
        if rank <= len(self.model.ids):
            self.action_select(self.model.ids[rank - 1])

    def action_select(self, node: int) -> None:
        if node in self.model.nodes:
            self.selected = node
            self.redraw(text=True)

    def action_move(self, dx: int, dy: int) -> None:
        ids = self.model.ids
        index = ids.index(self.selected) + dx + dy * self.grid.columns
        self.action_select(ids[max(0, min(len(ids) - 1, index))])

    def action_filter_node(self) -> None:
        node = None if self.log_view.node_filter == self.selected else self.selected
        self.log_view.set_filters(node, self.log_view.topic_filter)

    def action_filter_topic(self) -> None:
        topics = [None, *self.model.topics]
        current = topics.index(self.log_view.topic_filter) if self.log_view.topic_filter in topics else 0
        self.log_view.set_filters(self.log_view.node_filter, topics[(current + 1) % len(topics)])

    def action_toggle_detector(self) -> None:
        self.log_view.toggle_detector()
        self.notify("Failure-detector traffic " + ("shown" if self.log_view.show_detector else "hidden") + " in the log.")

    def action_scroll_log(self, pages: int) -> None:
        if pages < 0:
            self.log_view.scroll_page_up(animate=False)
        else:
            self.log_view.scroll_page_down(animate=False)

    def action_next_theme(self) -> None:
        names = [t.name for t in themes.THEMES]
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"Theme: {self.theme}")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_save(self) -> None:
        """Copy the session's transcript so far (a branch's, after a branch, with the
        transcripts it branched from) to a new file, and say where."""
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        base = f"bully-{self.session.algorithm}-n{self.session.nodes}-seed{self.session.seed}-{stamp}"
        for n in range(100):
            target = self.save_dir / (f"{base}.jsonl" if n == 0 else f"{base}-{n}.jsonl")
            if any(target.parent.glob(f"{target.stem}.*")):
                continue  # (its parents' names are taken)
            try:
                written = save_with_parents(str(self._spool), target)
            except InputError as e:
                if "already exists" in str(e):
                    continue
                self.notify(f"Could not save: {e}", severity="error")
                return
            except WriteError as e:  # a full disk or a read-only folder: say so, keep running
                self.notify(f"Could not save: {e}", severity="error")
                return
            self.saved = target
            parents = f", and the transcripts it branched from beside it ({len(written) - 1})" if len(written) > 1 else ""
            self.notify(f"Saved the transcript to {target}{parents}")
            return
        self.notify(f"Could not save: {base}.jsonl and 99 variants exist in {self.save_dir}", severity="error")

    def action_toggle_diagram(self) -> None:
        self.log_view.toggle_diagram()

    def action_export_svg(self) -> None:
        """The log's window (from its first line's time to the moment shown, its node and
        type filters) as an SVG diagram beside the saved transcripts; read from the
        session's transcript in a thread, so the app keeps going."""
        lines = self.model.log
        if not lines or self._spool is None:
            self.notify("Nothing to export yet.")
            return
        log = self.log_view
        ranks = (self.model.ids.index(log.node_filter) + 1,) if log.node_filter is not None else ()
        types = (log.topic_filter,) if log.topic_filter in self.model.topics else ()
        filters = Filters(lines[0].t, self.now(), ranks, types, detector=log.show_detector)
        stamp = f"t{math.floor(filters.start)}-{math.ceil(filters.stop)}s"
        target = self.save_dir / f"bully-{self.session.algorithm}-n{self.session.nodes}-{stamp}.svg"
        n = 1
        while target.exists():
            n += 1
            target = target.with_name(f"bully-{self.session.algorithm}-n{self.session.nodes}-{stamp}-{n}.svg")
        self.run_worker(lambda: self._export(str(self._spool), filters, target), thread=True, group="export")

    def _export(self, source: str, filters: Filters, target: Path) -> None:
        try:
            write_whole(str(target), "export", export(source, "svg", filters).encode(), overwrite=False)
        except (InputError, WriteError) as e:
            self.call_from_thread(self.notify, f"Could not export: {e}", severity="error")
            return
        self.call_from_thread(self.notify, f"Exported the diagram to {target}")

    def action_switch_algorithm(self, name: str) -> None:
        """The same run again with another algorithm: same nodes, seed and scenario, and the
        settings as they are now (T and the delays as the keys left them), the same node
        selected."""
        config = self.live.cluster.engine.config if self.live is not None else self.session.config
        self.restart_with = Restart(name, config, self.selected)
        self.exit()

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        for name in ALGORITHMS:
            if name != self.session.algorithm:
                yield SystemCommand(f"Algorithm: {name}", "restart the cluster with it: same nodes, seed, settings, scenario",
                                    lambda name=name: self.action_switch_algorithm(name))
        if not membership_refused(self.session.algorithm):
            yield SystemCommand("Join a new node", "it gets the next id and starts as a recovering node", self.action_join)
        for i in self.model.ids:
            k = self.model.label[i]
            yield SystemCommand(f"Crash node {k}", f"node {k} halts at once", lambda i=i: self.action_command("crash", i))
            yield SystemCommand(f"Recover node {k}", f"node {k} restarts from safe storage",
                                lambda i=i: self.action_command("recover", i))
            yield SystemCommand(f"Elect at node {k}", f"node {k}'s failure detector fires",
                                lambda i=i: self.action_command("elect", i))
            if not membership_refused(self.session.algorithm):
                yield SystemCommand(f"Leave: node {k}", f"node {k} leaves for good, telling the others",
                                    lambda i=i: self.action_leave(i))
            yield SystemCommand(f"Select node {k}", "show it in the node panel", lambda i=i: self.action_select(i))
            yield SystemCommand(f"Log: only node {k}", "filter the message log",
                                lambda i=i: self.log_view.set_filters(i, self.log_view.topic_filter))
            yield SystemCommand(f"Cut node {k} off", "partition: its links to and from every other node held",
                                lambda i=i: self.action_cut_off(i))
            if i != self.selected:
                here = self.model.label[self.selected]
                yield SystemCommand(f"Hold link {here}→{k}", f"messages from {here} to {k} wait at the link's end",
                                    lambda i=i: self._link("hold", self.selected, i))
                yield SystemCommand(f"Release link {here}→{k}", "what waited there arrives now, in order",
                                    lambda i=i: self._link("release", self.selected, i))
        ids = self.model.ids
        for rank in range(1, len(ids)):
            low, high = self.model.label[ids[rank - 1]], self.model.label[ids[rank]]
            yield SystemCommand(f"Split the cluster: ..{low} | {high}..", "partition: the lower ids cut off from the higher",
                                lambda rank=rank, low=low: self._request(Partition(ids[:rank]), f"partition ..{low}"))
        yield SystemCommand("Heal every link", "release every held link", self.action_heal)
        for topic in self.model.topics:
            yield SystemCommand(f"Log: only {topic}", "filter the message log",
                                lambda t=topic: self.log_view.set_filters(self.log_view.node_filter, t))
        yield SystemCommand("Log: show everything", "clear the log's filters", lambda: self.log_view.set_filters(None, None))
