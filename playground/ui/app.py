"""bully-tui's app: a session's timeline drawn, keys sent back as requests.

The run and its past are the timeline's (run/timeline.py): the recording, the history,
the live run, the state of the moment shown, branching and saving. The app keeps the
bindings, the screen's composition and the palette, and renders: the widgets read the
model (ui/model.py), which is the timeline's state and the log's lines.

Live, the cluster runs in trio guest mode (run/live.py), which also owns the pace (the
clock's rate). Its events wait in the live run's buffer; one `EventsReady` message per
burst tells the app to take them. The widgets redraw on a 20 Hz tick, which stops while
paused, so a paused app uses no CPU.

Time travel. `,` `.` `{` `}` home and end show another instant (going back pauses a live
run). A command given while looking at the past branches the session there, after
asking. A replay (`bully-tui replay FILE`) is a session that starts in the past, at its
transcript's end, and runs live only once it branches.
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import math
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import outcome
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer

import themes
from protocol import ALGORITHMS, MUTEXES, machine, split_name

from ..core.commands import (
    ChangeDelay,
    ChangeTimeout,
    Crash,
    Elect,
    Heal,
    Hold,
    Join,
    Leave,
    Partition,
    Recover,
    Release,
    Request,
    Want,
    delay_refused,
    membership_refused,
    want_refused,
)
from ..core.config import ClusterConfig, InputError, WriteError
from ..core.events import Event
from ..record.export import Filters, export
from ..record.files import write_whole
from ..run import interrupt
from ..run.history import Loading
from ..run.session import Session, exception_leaves
from ..run.state import ClusterState
from ..run.timeline import Timeline
from .alert_bar import AlertBar
from .branch_screen import BranchScreen
from .compact_grid import CompactGrid
from .message_log import MessageLog
from .model import LOG_CAP, ClusterModel
from .node_grid import NodeGrid
from .node_panel import NodePanel
from .status_bar import CsFigures, Status, StatusBar
from .timeline_row import TimelineRow
from .view_keys import VIEW_BINDINGS, ViewKeys

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
REDRAW_HZ = 20
COMPACT_ABOVE = 9  # more nodes than this get the one-line-per-node grid
READ_BATCH = 16  # blocks of a replay's file read at once (8,192 events)
LOADING_SHOWN_EVERY = 0.5  # seconds between two screens of a replay being read (each costs a fold)
TEXT_HZ = 8  # the log and the panel: nobody reads text that scrolls faster, and it is dear
T_STEP = 0.5
DELAY_STEP = 0.25
NODE_REQUESTS = {"crash": Crash, "recover": Recover, "elect": Elect, "want": Want}
GC_YOUNG, GC_MIDDLE, GC_NEVER = 20_000, 20, 1_000_000_000  # the collector's thresholds while the app runs
GC_EVERY = 2.0  # seconds between two looks for a quiet moment to collect garbage in


def cs_figures(state: ClusterState, algorithm: str) -> CsFigures | None:
    """With a mutex, its figures so far for the status bar (the real view's too)."""
    cs = state.cs
    if cs is None:
        return None
    mutex = machine(algorithm).mutex
    members = len(state.joined) - len(state.left)
    return CsFigures(cs.entries, cs.messages_per_entry, mutex.figures(members).entry_messages,
                     cs.client_delays[-1] if cs.client_delays else None, cs.sync_delays[-1] if cs.sync_delays else None)


@dataclass
class EventsReady(Message):
    """New trace events are waiting in the live run's buffer."""


@dataclass(frozen=True)
class Restart:
    """What the next app runs, after the palette switched the algorithm."""

    algorithm: str
    config: ClusterConfig
    selected: int
    paused: bool = False
    diagram: bool = False  # the log drawn as a space-time diagram


class BullyApp(ViewKeys, App[None]):
    CSS_PATH = str(themes.STYLESHEET)
    TITLE = "bully-tui"
    PALETTE_NOTE = ("ctrl+p opens the command palette: crash, recover or elect any node, join and leave, hold links "
                    "and partitions, switch the algorithm, filter the log, change theme.")  # (the help screen's last line)
    # The footer shows the short descriptions; the help screen adds the tooltips.
    BINDINGS = [
        Binding("c", "command('crash')", "crash", tooltip="crash the selected node"),
        Binding("r", "command('recover')", "recover", tooltip="recover the selected node"),
        Binding("x", "crash_leader", "kill leader", tooltip="crash the current leader"),
        Binding("e", "command('elect')", "elect", tooltip="the selected node starts an election"),
        Binding("w", "want", "want CS", show=False,
                tooltip="the selected node asks for the critical section (with a mutex: --mutex)"),
        Binding("j", "join", "join", show=False, tooltip="a new node joins (the next id), as a recovering node"),
        Binding("l", "leave", "leave", show=False, tooltip="the selected node leaves for good, telling the others"),
        Binding("p", "cut_off", "cut off", show=False,
                tooltip="partition: cut the selected node off from the others (its links held, both ways)"),
        Binding("P", "heal", "heal", show=False, tooltip="heal: release every held link"),
        Binding("space", "toggle_pause", "pause", tooltip="pause or resume"),
        Binding("s", "save", "save", tooltip="save the transcript so far to a new file"),
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
        *VIEW_BINDINGS,
        Binding("D", "export_svg", "export SVG", show=False,
                tooltip="export the log's window (its time span and filters) as an SVG space-time diagram, and say where"),
        Binding("ctrl+q", "quit", "quit", show=False, tooltip="quit"),  # the App shows its own
    ]

    def __init__(self, session: Session, speed: float = 1.0, paused: bool = False, save_dir: str = ".",
                 loading: Loading | None = None, again: Restart | None = None, open_at: float | str | None = None):
        """A live session; or, given the `loading` of its transcript (its first block read,
        the rest read in the background), a replay of it, shown at its latest instant, or
        once read at `open_at`: a time (the instant at or before it) or "violation" (the
        first one: a hunt's finding). `again`: the app before this one switched the
        algorithm; this one starts as it was (the node selected, paused or not, the log's
        diagram)."""
        super().__init__()
        self.session = session
        self.save_dir = Path(save_dir)
        self.state = ClusterState(session.ids, session.config, session.algorithm)  # the timeline's, from the start: widgets hold it
        self.model = ClusterModel(self.state, session.worst_case_messages)
        # The live timeline starts on mount (after the signal handlers, so that a temporary
        # recording never outlives us); a replay's has only its file to read.
        self.timeline: Timeline | None = None
        if loading is not None:
            self.timeline = Timeline.replay(session, self.state, loading)
            self.model.reload(self.timeline.seek(self.timeline.history.instants - 1, LOG_CAP))
        self._shown_at = 0.0  # wall time the loading last showed its latest instant
        self._following = True  # a replay being read shows its latest instant as it comes
        self._open_at = open_at
        self.selected = again.selected if again and again.selected in session.ids else session.ids[-1]
        paused = paused or bool(again and again.paused)
        self.saved: Path | None = None
        self._start = (speed, paused)
        self._redraw_due = False
        self._text_drawn = 0.0  # wall time of the last log and panel redraw
        self._collected = False  # a full collection was made during the current pause
        self._watched: float | None = None  # the instant of the user's latest command, drawn as its events come
        self.grid = CompactGrid(self.model) if len(session.ids) > COMPACT_ABOVE else NodeGrid(self.model)
        self.log_view = MessageLog(self.model)
        self.log_view.set_reactive(MessageLog.diagram, bool(again and again.diagram))
        self.panel = NodePanel(self.state.epoch_text)
        self.alert_bar = AlertBar(self.model)
        self.timeline_row = TimelineRow(machine(session.algorithm).title)
        self.status_bar = StatusBar()
        # Set when the user picks another algorithm: the app exits, and run_live starts
        # a new one with it (cli/live.py), since every widget is built for one cluster.
        self.restart_with: Restart | None = None
        self.failure: str | None = None  # why the app ended with an error, to print after it
        self.stopped_by: int | None = None  # the signal that ended the app, if one did

    @property
    def live(self):
        """The live run (its pace), while there is one."""
        return self.timeline.live if self.timeline is not None else None

    @property
    def speed(self) -> float:
        return self.live.speed if self.live is not None else self._start[0]

    @property
    def kept_transcript(self) -> str | None:
        """The transcript the session leaves behind (None: a temporary recording, gone)."""
        return self.timeline.kept_transcript if self.timeline is not None else None

    # --- start and stop ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.grid
        with Horizontal(id="middle"):
            yield self.log_view
            yield self.panel
        yield self.alert_bar
        yield self.timeline_row
        yield self.status_bar
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._handlers = interrupt.take_over(self._signalled)
        themes.use_ours(self)
        self.sub_title = machine(self.session.algorithm).title
        if self.timeline is None:
            self.timeline = Timeline.live_session(self.session, self.state, speed=self._start[0], paused=self._start[1],
                                                  on_events=self._events_ready, on_done=self._run_done)
        elif self.timeline.loading is not None:
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

    def _events_ready(self) -> None:
        self.post_message(EventsReady())

    def _collect_while_quiet(self) -> None:
        """A full garbage collection once the run is paused (or a replay stands still),
        once per pause: the only time one comes while the app runs (on_mount says why)."""
        quiet = self.live is None or self.live.paused
        if quiet and not self._collected:
            gc.collect()
        self._collected = quiet

    async def _read(self) -> None:
        """A replay's file, read a batch at a time between frames and keys; the screen
        follows the latest instant read (a few times a second) unless the user went
        somewhere else (`_following`)."""
        timeline = self.timeline
        try:
            while not timeline.read(READ_BATCH):
                if time.monotonic() - self._shown_at >= LOADING_SHOWN_EVERY:
                    self._shown_at = time.monotonic()
                    self._show(timeline.history.instants - 1) if self._following else self.redraw()
                await asyncio.sleep(0)
        except InputError as e:  # a bad line far into the file: one line, as before any screen
            self._fail(2, f"bully-tui: error: {e}")
            return
        if self._following:
            self._show(self._opening(timeline.history))
        self._read_all()

    def _opening(self, history) -> int:
        """The instant a replay opens at, once read: its last, or the one asked for."""
        last = history.instants - 1
        if self._open_at is None:
            return last
        if self._open_at == "violation":
            found = history.first_marker("violation")
            if found is None:
                self.notify("This transcript has no violation: here is its end.")
            return last if found is None else found
        return max(0, bisect.bisect_right(history.times, self._open_at) - 1)

    def _read_all(self) -> None:
        """The whole file is read: re-create its engines in the background (for the
        panel's variables, and to branch)."""
        self.run_worker(self._re_run(), exclusive=True)
        self.redraw(text=True)

    async def _re_run(self) -> None:
        for _ in self.timeline.re_run():  # a slice of work at a time: a key pressed meanwhile waits at most one
            await asyncio.sleep(0.01)
        self.redraw(text=True)

    async def action_quit(self) -> None:
        if self.live is not None:
            await self.live.stop()
        self.exit()

    async def on_unmount(self) -> None:
        interrupt.give_back(self._handlers)
        if self.timeline is not None:
            await self.timeline.close()
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
        ends cleanly and a temporary recording is removed; a watchdog ends the process if
        the clean quit does not (interrupt.end_soon)."""
        if self.stopped_by is None:
            self.stopped_by = signum
            interrupt.end_soon(signum)
        self._loop.call_soon_threadsafe(self.exit)

    # --- events in --------------------------------------------------------------------

    def on_events_ready(self, _: EventsReady) -> None:
        events = self.timeline.take()
        if not events:
            return  # looking at the past: the history has them, and the present will show them
        self.model.add(events)
        # Someone is watching for what a command of theirs does (the card, the panel): show
        # it now, not at the next tick, and so what follows from it at its instant too
        # (the node's work comes in the batch after the command's).
        mine = [e.t for e in events if e.kind == "command" and e.source == "user"]
        if mine or events[0].t == self._watched:
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
        return self.timeline.now() if self.timeline is not None else 0.0

    def redraw(self, text: bool | None = None) -> None:
        """Draw the model. Cards and status every time; the log and the panel at most
        TEXT_HZ times a second unless `text` says otherwise."""
        timeline = self.timeline
        if timeline is None:
            return
        now = self.now()
        self.grid.show(now, self.selected)
        self.alert_bar.show()
        self.timeline_row.show(timeline.history, timeline.position)
        wall = time.monotonic()
        if text is None:
            text = wall - self._text_drawn >= 1 / TEXT_HZ
        if text:
            self._text_drawn = wall
            self.log_view.selected = self.selected
            self.log_view.show()
            self.panel.show(self.model.nodes[self.selected], timeline.internals(self.selected), now, self.model.label,
                            timeline.history.why_not_re_created)
        state, live, rounds = self.state, self.live, self.state.rounds
        self.status_bar.show(Status(
            now, self.speed, live is None or live.paused, live.running_at() if live and timeline.at_present else None,
            state.config, rounds.count, rounds.running, sum(rounds.current.messages.values()) if rounds.current else 0,
            self.model.worst_case, self._where(), len(state.held_links), self._cs_figures()))

    def _cs_figures(self) -> CsFigures | None:
        return cs_figures(self.state, self.session.algorithm)

    def _where(self) -> str:
        """Where in time the screen is, for the status bar ("" at the present)."""
        timeline = self.timeline
        if timeline.at_present:
            return ""
        h = timeline.history
        then = "replay" if self.live is None else f"now t={h.times[-1]:.2f}s"
        if timeline.loading is not None:
            then = f"reading {timeline.read_fraction:.0%}"
        return f"⏪ instant {timeline.position + 1:,} of {h.instants:,} · {then}"

    # --- time travel -------------------------------------------------------------------

    def _moved(self, events: list[Event]) -> None:
        """The timeline shows another moment: its log, and a screen drawn at once."""
        self.model.reload(events)
        if self.live is not None and self.live.paused:
            self._ticker.pause()
        self.redraw(text=True)

    def _show(self, instant: int) -> None:
        """Show the end of `instant` (the latest of a live run: the present)."""
        self._moved(self.timeline.seek(instant, LOG_CAP))
        self._following = self.timeline.shown == self.timeline.history.instants - 1

    def _history_empty(self) -> bool:
        return self.timeline is None or not self.timeline.history.instants

    def action_back(self) -> None:
        if self._history_empty():
            return
        if self.timeline.shown == 0:
            self.notify("This is the first instant.")
            return
        self._show(self.timeline.shown - 1)

    def action_forward(self) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        if timeline.at_present:
            self.action_step()
        elif timeline.position + 1 < timeline.history.instants:
            self._show(timeline.position + 1)
        elif self.live is None:
            self.notify("This is the transcript's last instant.")

    def action_marker(self, direction: int) -> None:
        if self._history_empty():
            return
        found = self.timeline.marker_near(direction)
        if found is None:
            self.notify("No marker " + ("before" if direction < 0 else "after") + " this instant.")
            return
        self._show(found)

    def action_first(self) -> None:
        if not self._history_empty():
            self._show(0)

    def action_latest(self) -> None:
        """The latest instant; in a live session, the present: following the run again
        (still paused: space resumes)."""
        if not self._history_empty():
            self._moved(self.timeline.present(LOG_CAP))

    # --- requests out -----------------------------------------------------------------

    def _request(self, request: Request, text: str) -> None:
        """A request to the cluster: now, at the present; from the past, a branch, after
        asking. One that cannot mean anything at the moment shown (a node that has left,
        or is down already) is refused with a line that says why."""
        timeline = self.timeline
        if timeline is None:
            return
        if why := timeline.refusal(request, self.model.label.__getitem__):
            self.notify(why[0].upper() + why[1:] + ".", severity="warning")
            return
        if timeline.at_present and self.live is not None:
            timeline.submit(request)
            return
        if why := timeline.branch_refusal():
            self.notify(why, severity="warning")
            return
        path = timeline.branch_path()
        temporary = timeline.kept_transcript is None
        self.push_screen(BranchScreen(text, timeline.now(), str(path) if temporary else path.name, temporary=temporary),
                         lambda yes: self.run_worker(self._branch(request, path), exclusive=True, group="branch")
                         if yes else None)

    async def _branch(self, request: Request, path: Path) -> None:
        """The session goes on from the instant shown, in a new transcript at `path`, with
        the command given (run at once: the session stays paused)."""
        events = await self.timeline.branch(request, path, speed=self.speed, on_events=self._events_ready,
                                            on_done=self._run_done, recent=LOG_CAP)
        self.session = self.timeline.session
        self.model.reload(events)
        self._ticker.pause()
        if self.kept_transcript is None:
            self.notify(f"A new future, recorded to a temporary file, {path}, removed when you quit: "
                        f"s keeps it (with what it branched from) in {self.save_dir.resolve()}.")
        else:
            self.notify(f"A new future: recorded in {path}")
        self.redraw(text=True)

    def action_command(self, name: str, node: int | None = None) -> None:
        node = self.selected if node is None else node
        self._request(NODE_REQUESTS[name](node), f"{name} {self.model.label[node]}")

    def action_want(self, node: int | None = None) -> None:
        if why := want_refused(self.session.algorithm):
            self.notify(why, severity="warning")
            return
        self.action_command("want", node)

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
        self._request(Leave(node), f"leave {self.model.label[node]}")

    def action_cut_off(self, node: int | None = None) -> None:
        node = self.selected if node is None else node
        self._request(Partition((node,)), f"partition {self.model.label[node]}")

    def action_heal(self) -> None:
        if not self.state.held_links:
            self.notify("No link is held.")
            return
        self._request(Heal(), "heal")

    def _link(self, name: str, src: int, dst: int) -> None:
        label = self.model.label
        self._request((Hold if name == "hold" else Release)(src, dst), f"{name} {label[src]} {label[dst]}")

    def show_selection(self) -> None:
        self.redraw(text=True)

    def action_crash_leader(self) -> None:
        leaders = self.state.leaders()
        if not leaders:
            self.notify("No node leads right now.", severity="warning")
            return
        self.action_command("crash", max(leaders))  # in a split brain, the highest

    def action_timeout(self, direction: int) -> None:
        if direction < 0 and self.state.config.timeout - T_STEP < T_STEP:
            self.notify(f"T cannot go below {T_STEP:g}s.", severity="warning")
        self._request(ChangeTimeout(direction * T_STEP), f"T {'+' if direction > 0 else '-'}{T_STEP:g}s")

    def action_delay(self, direction: int) -> None:
        if direction < 0 and self.state.config.delay_min < DELAY_STEP:
            self.notify(f"The minimum delay is {self.state.config.delay_min:g}s: it cannot go {DELAY_STEP:g}s lower.",
                        severity="warning")
        self._request(ChangeDelay(direction * DELAY_STEP), f"delay {'+' if direction > 0 else '-'}{DELAY_STEP:g}s")

    def action_toggle_pause(self) -> None:
        if self.live is None:
            self.notify("A replay: give a command (crash, recover, T...) to branch a new future from here.")
            return
        if not self.timeline.at_present:
            self.action_latest()  # back to the present first
        if self.live.paused:
            self.live.resume()
            self._ticker.resume()
        else:
            self.live.pause()
            self._ticker.pause()
        self.redraw(text=True)

    def action_step(self) -> None:
        if self.live is not None and self.timeline.at_present:
            self.timeline.step()
            self._ticker.pause()
            self.redraw(text=True)

    def action_pace(self, direction: int) -> None:
        if self.live is None:
            return
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.live.speed))
        self.live.set_speed(SPEEDS[max(0, min(len(SPEEDS) - 1, index + direction))])
        self.redraw()

    # --- view-only actions ------------------------------------------------------------

    def action_save(self) -> None:
        """Copy the session's transcript so far (a branch's, after a branch, with the
        transcripts it branched from) to a new file, and say where."""
        if self.timeline is None:
            return
        try:
            target, parents = self.timeline.save(self.save_dir)
        except (InputError, WriteError) as e:  # a full disk or a read-only folder: say so, keep running
            self.notify(f"Could not save: {e}", severity="error")
            return
        self.saved = target
        where = target.resolve()
        if parents:
            kin = "the transcript" if parents == 1 else f"the {parents} transcripts"
            self.notify(f"Saved the transcript to {where}, and {kin} it branched from beside it")
        else:
            self.notify(f"Saved the transcript to {where}")

    def action_export_svg(self) -> None:
        """The log's window (from its first line's time to the moment shown, its node and
        type filters) as an SVG diagram beside the saved transcripts; read from the
        session's transcript in a thread, so the app keeps going."""
        lines = self.model.log
        if not lines or self.timeline is None:
            self.notify("Nothing to export yet.")
            return
        log = self.log_view
        nodes = (log.node_filter,) if log.node_filter is not None else ()
        types = (log.topic_filter,) if log.topic_filter in self.state.topics else ()
        filters = Filters(lines[0].t, self.now(), nodes=nodes, types=types, detector=log.show_detector)
        stamp = f"t{math.floor(filters.start)}-{math.ceil(filters.stop)}s"
        target = self.save_dir / f"bully-{self.session.algorithm}-n{self.session.nodes}-{stamp}.svg"
        n = 1
        while target.exists():
            n += 1
            target = target.with_name(f"bully-{self.session.algorithm}-n{self.session.nodes}-{stamp}-{n}.svg")
        source = self.timeline.history.path
        self.run_worker(lambda: self._export(source, filters, target), thread=True, group="export")

    def _export(self, source: str, filters: Filters, target: Path) -> None:
        try:
            write_whole(str(target), "export", export(source, "svg", filters).encode(), overwrite=False)
        except (InputError, WriteError) as e:
            self.call_from_thread(self.notify, f"Could not export: {e}", severity="error")
            return
        self.call_from_thread(self.notify, f"Exported the diagram to {target}")

    def action_switch_algorithm(self, name: str) -> None:
        """The same run again with another algorithm (or mutex): same nodes, seed and
        scenario, and the settings as they are now (T and the delays as the keys left
        them), the same node selected."""
        if why := delay_refused(name, self.state.config.delay_max):
            self.notify(why, severity="warning")
            return
        self.restart_with = Restart(name, self.state.config, self.selected, paused=self.live is None or self.live.paused,
                                    diagram=self.log_view.diagram)
        self.exit()

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        election, mutex = split_name(self.session.algorithm)
        for name in ALGORITHMS:
            if name != election:
                full = f"{name}+{mutex}" if mutex else name  # (the mutex stays)
                yield SystemCommand(f"Algorithm: {name}", "restart the cluster with it: same nodes, seed, settings, scenario",
                                    lambda full=full: self.action_switch_algorithm(full))
        for name in (*MUTEXES, None):
            if name != mutex:
                full = f"{election}+{name}" if name else election
                yield SystemCommand(f"Mutual exclusion: {name or 'none'}",
                                    "restart the cluster with it beside the election (its own workload, or the default)"
                                    if name else "restart the cluster with the election alone",
                                    lambda full=full: self.action_switch_algorithm(full))
        if not membership_refused(self.session.algorithm):
            yield SystemCommand("Join a new node", "it gets the next id and starts as a recovering node", self.action_join)
        for i in self.model.ids:
            k = self.model.label[i]
            yield SystemCommand(f"Crash node {k}", f"node {k} halts at once", lambda i=i: self.action_command("crash", i))
            yield SystemCommand(f"Recover node {k}", f"node {k} restarts from safe storage",
                                lambda i=i: self.action_command("recover", i))
            yield SystemCommand(f"Elect at node {k}", f"node {k}'s failure detector fires",
                                lambda i=i: self.action_command("elect", i))
            if mutex:
                yield SystemCommand(f"Want the critical section: node {k}", f"node {k} asks for it now ({mutex})",
                                    lambda i=i: self.action_want(i))
            if not membership_refused(self.session.algorithm):
                yield SystemCommand(f"Leave: node {k}", f"node {k} leaves for good, telling the others",
                                    lambda i=i: self.action_leave(i))
            yield SystemCommand(f"Select node {k}", "show it in the node panel", lambda i=i: self.action_select(i))
            yield SystemCommand(f"Filter the log: only node {k}", "its messages, states and commands",
                                lambda i=i: self.log_view.set_filters(i, self.log_view.topic_filter))
            yield SystemCommand(f"Cut node {k} off", "partition: its links to and from every other node held",
                                lambda i=i: self.action_cut_off(i))
            if i != self.selected:
                here = self.model.label[self.selected]
                yield SystemCommand(f"Hold link {here}→{k}", f"messages from {here} to {k} wait at the link's end",
                                    lambda i=i: self._link("hold", self.selected, i))
                yield SystemCommand(f"Release link {here}→{k}", "what waited there arrives now, in order",
                                    lambda i=i: self._link("release", self.selected, i))
        ids = tuple(i for i in self.state.joined if i not in self.state.left)  # (a node that left is cut off already)
        for rank in range(1, len(ids)):
            low, high = self.model.label[ids[rank - 1]], self.model.label[ids[rank]]
            yield SystemCommand(f"Split the cluster: ..{low} | {high}..", "partition: the lower ids cut off from the higher",
                                lambda rank=rank, low=low: self._request(Partition(ids[:rank]), f"partition ..{low}"))
        yield SystemCommand("Heal every link", "release every held link", self.action_heal)
        for topic in self.state.topics:
            yield SystemCommand(f"Filter the log: only {topic}", f"{topic} messages only",
                                lambda t=topic: self.log_view.set_filters(self.log_view.node_filter, t))
        yield SystemCommand("Filter the log: show everything", "clear the log's filters", lambda: self.log_view.set_filters(None, None))


