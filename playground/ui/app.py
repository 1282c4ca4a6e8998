"""bully-tui's app: a session's timeline drawn, keys sent back as commands.

The run and its past are the timeline's (run/timeline.py), the app's control surface
(cluster_app.py says what every app does with one): the recording, the history, the live
run, the state of the moment shown, branching and saving. This app adds what only the
simulation has: its pace, time travel, branching, the SVG export and switching the
algorithm.

Live, the cluster runs in trio guest mode (run/live.py), which also owns the pace (the
clock's rate). Its events wait in the live run's buffer; one `EventsReady` message per
burst tells the app to take them. The widgets redraw on a tick, which stops while
paused, so a paused app uses no CPU (redraws.py), and the garbage collector collects in
full only then (gc_policy.py).

Time travel. `,` `.` `{` `}` home and end show another instant (timeline_screen.py;
going back pauses a live run). A command given while looking at the past branches the
session there, after asking (branching.py). A replay (`bully-tui replay FILE`) is a
session that starts in the past, at its transcript's end (replay_reading.py reads the
rest of its file), and runs live only once it branches.

By hand (`b`, or `--by-hand` from the start): the user is the network, in a pane of its
own (by_hand_screen.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message

from protocol import machine

from ..core.commands import ChangeDelay, LiveCommand, delay_refused
from ..run.control import ClusterConfig, LessonAt, Loading, Session, Timeline, failure
from . import branching, diagram_export, gc_policy
from .by_hand_screen import ByHandScreen
from .cluster_app import ClusterApp, command_bindings, status_of
from .cluster_screen import HELP_BINDING
from .lesson_guide import LessonGuide
from .message_log import MessageLog
from .model import LOG_CAP
from .narrated_screen import NarratedScreen
from .palette import SimulationCommands
from .replay_reading import ReplayReading
from .status_bar import StatusBar
from .timeline_row import TimelineRow

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
DELAY_STEP = 0.25


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
    lesson: LessonAt | None = None  # a lesson's step with a run of its own: the next app plays it, in that run


class BullyApp(ClusterApp):
    SCREEN = NarratedScreen
    COMMANDS = {SimulationCommands}  # (Textual's own commands among them)
    PALETTE_NOTE = ("ctrl+p opens the command palette: crash, recover or elect any node, join and leave, hold links "
                    "and partitions, switch the algorithm, filter the log, change theme.")
    # The footer shows the short descriptions; the help screen adds the tooltips.
    BINDINGS = [
        *command_bindings({
            "crash": "crash the selected node", "recover": "recover the selected node",
            "crash_leader": "crash the current leader", "elect": "the selected node starts an election",
            "join": "a new node joins (the next id), as a recovering node",
            "partition": "partition: cut the selected node off from the others (its links held, both ways)",
            "heal": "heal: release every held link", "timeout": "{} T by 0.5s"}),
        Binding("space", "toggle_pause", "pause", tooltip="pause or resume"),
        Binding("s", "save", "save", tooltip="save the transcript so far to a new file"),
        Binding("b", "by_hand", "by hand", show=False, tooltip="you are the network: deliver, drop, duplicate any "
                "message in flight and fire any timer, in any order, while the clock stands still"),
        Binding("left_square_bracket", "delay(-1)", "delay-", show=False,
                tooltip=f"lower both link delay bounds by {DELAY_STEP:g}s (not below 0)"),
        Binding("right_square_bracket", "delay(1)", "delay+", show=False,
                tooltip=f"raise both link delay bounds by {DELAY_STEP:g}s"),
        Binding("less_than_sign", "pace(-1)", "slower", show=False, tooltip="halve the speed"),
        Binding("greater_than_sign", "pace(1)", "faster", show=False, tooltip="double the speed"),
        HELP_BINDING,
        Binding("D", "export('svg')", "export SVG", show=False, tooltip="export the log's window (its time span and "
                "filters) as an SVG space-time diagram, and say where"),
        Binding("ctrl+q", "quit", "quit", show=False, tooltip="quit"),  # the App shows its own
    ]

    def __init__(self, session: Session, speed: float = 1.0, paused: bool = False, save_dir: str = ".",
                 loading: Loading | None = None, again: Restart | None = None, open_at: float | str | None = None,
                 lesson: LessonAt | None = None, by_hand: bool = False):
        """A live session; or, given the `loading` of its transcript (its first block read,
        the rest read in the background), a replay of it, shown at its latest instant, or
        once read at `open_at`: a time (the instant at or before it) or "violation" (the
        first one: a hunt's finding). `again`: the app before this one switched the
        algorithm; this one starts as it was (the node selected, paused or not, the log's
        diagram). `lesson`: played beside the run (the session is its step's run); a
        scenario's claim, which the session keeps, shows until dismissed. `by_hand`: the
        user is the network from the start (by_hand_screen.py)."""
        self.timeline_row = TimelineRow(machine(session.algorithm).title)
        self.status_bar = StatusBar()
        super().__init__(session, save_dir, rows=(self.timeline_row, self.status_bar))
        if again and again.selected in session.ids:
            self.set_reactive(ClusterApp.selected, again.selected)
        self.log_view.set_reactive(MessageLog.diagram, bool(again and again.diagram))
        self._start = (speed, paused or bool(again and again.paused) or by_hand)
        self._by_hand = by_hand
        self._watched: float | None = None  # the instant of the user's latest command, drawn as its events come
        # What the live run (and a branch's) tells the app: events are waiting; the run ended.
        self.live_calls = {"on_events": lambda: self.post_message(EventsReady()), "on_done": self._run_done}
        # The live timeline starts on mount (after the signal handlers, so that a temporary
        # recording never outlives us); a replay's has only its file to read.
        self.timeline: Timeline | None = None
        self.reading = ReplayReading(self, open_at) if loading is not None else None
        if loading is not None:
            self.timeline = self.control = Timeline.replay(session, self.state, loading)
            self.model.reload(self.timeline.seek(self.timeline.history.instants - 1, LOG_CAP))
        # Set when the user picks another algorithm: the app exits, and cli/live.run_live
        # starts a new one with it, since every widget is built for one cluster.
        self.restart_with: Restart | None = None
        self.guide = LessonGuide(self, lesson, session.claim)

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

    def start(self) -> None:
        self.sub_title = machine(self.session.algorithm).title
        speed, paused = self._start
        if self.timeline is None:
            self.timeline = self.control = Timeline.live_session(self.session, self.state, speed=speed, paused=paused,
                                                                 **self.live_calls)
        else:
            self.reading.start()
        self.redraws.tick(paused=paused or self.live is None)
        self.redraw()
        gc_policy.collect_while_quiet(self, lambda: self.live is None or self.live.paused)
        self.guide.start()
        if self._by_hand:
            self.action_by_hand(resume=True)

    def _run_done(self, result) -> None:
        """trio finished: normally because we cancelled it; else the app ends saying why."""
        if (text := failure(result)) is not None:
            self.fail(1, text)

    def on_events_ready(self, _: EventsReady) -> None:
        events = self.timeline.take()
        if not events:
            return  # looking at the past: the history has them, and the present will show them
        self.model.add(events)
        self.guide.observe(events)
        # Someone is watching for what a command of theirs does (the card, the panel): show
        # it now, not at the next tick, and so what follows from it at its instant too
        # (the node's work comes in the batch after the command's).
        mine = [e.t for e in events if e.kind == "command" and e.source == "user"]
        if mine or events[0].t == self._watched:
            self._watched = mine[-1] if mine else self._watched
            self.redraw(text=True)
        if self.live.paused:  # no tick while paused: draw everything it caused, once
            self.redraws.soon()

    def draw_status(self, now: float) -> None:
        timeline, live = self.timeline, self.live
        self.timeline_row.show(timeline.history, timeline.position)
        self.status_bar.show(status_of(self.model, self.session.algorithm, now, self.state.config, speed=self.speed,
                                       paused=live is None or live.paused, where=where(timeline),
                                       running_at=live.running_at() if live and timeline.at_present else None))

    # --- time travel (the keys are the screen's) ----------------------------------------

    def show(self, instant: int) -> None:
        """Show the end of `instant` (the latest of a live run: the present)."""
        timeline = self.timeline
        self.moved(timeline.seek(instant, LOG_CAP))
        if self.reading is not None:
            self.reading.following = timeline.shown == timeline.history.instants - 1

    def moved(self, events: list) -> None:
        """The timeline shows another moment: its log, and a screen drawn at once."""
        self.model.reload(events)
        if self.live is not None and self.live.paused:
            self.redraws.pause()
        self.redraw(text=True)

    # --- commands and pace ----------------------------------------------------------------

    def request(self, command: LiveCommand, text: str) -> None:
        """At the present of a live run, the command runs; from the past (or a replay), it
        branches the session there, after asking (branching.py)."""
        self.guide.given(command)  # (a lesson's task, done or not)
        timeline = self.timeline
        if timeline is None or (timeline.at_present and self.live is not None):
            super().request(command, text)
        elif not self.refused(command):
            branching.ask_to_branch(self, command, text)

    def action_delay(self, direction: int) -> None:
        self.request(ChangeDelay(direction * DELAY_STEP), f"delay {'+' if direction > 0 else '-'}{DELAY_STEP:g}s")

    def action_toggle_pause(self) -> None:
        live = self.live
        if live is None:
            self.notify("A replay: give a command (crash, recover, T...) to branch a new future from here.")
            return
        if not self.timeline.at_present:
            self.moved(self.timeline.present(LOG_CAP))  # back to the present first
        if live.paused:
            live.resume()
            self.redraws.resume()
        else:
            live.pause()
            self.redraws.pause()
        self.redraw(text=True)

    def action_step(self) -> None:
        if self.live is not None and self.timeline.at_present:
            self.timeline.step()
            self.redraws.pause()
            self.redraw(text=True)

    def action_pace(self, direction: int) -> None:
        live = self.live
        if live is None:
            return
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - live.speed))
        live.set_speed(SPEEDS[max(0, min(len(SPEEDS) - 1, index + direction))])
        self.redraw()

    def action_by_hand(self, resume: bool = False) -> None:
        self.push_screen(ByHandScreen(resume))

    def action_export(self, fmt: str) -> None:
        diagram_export.export_window(self, fmt)

    def action_switch_algorithm(self, name: str) -> None:
        """The same run again with another algorithm (or mutex): same nodes, seed and
        scenario, and the settings as they are now (T and the delays as the keys left
        them), the same node selected."""
        if why := delay_refused(name, self.state.config.delay_max):
            self.notify(why, severity="warning")
            return
        paused, diagram = self.live is None or self.live.paused, self.log_view.diagram
        self.restart_with = Restart(name, self.state.config, self.selected, paused=paused, diagram=diagram)
        self.exit()


def where(timeline: Timeline) -> str:
    """Where in time the screen is, for the status bar ("" at the present)."""
    if timeline.at_present:
        return ""
    h = timeline.history
    then = "replay" if timeline.live is None else f"now t={h.times[-1]:.2f}s"
    if timeline.loading is not None:
        then = f"reading {timeline.read_fraction:.0%}"
    return f"⏪ instant {timeline.position + 1:,} of {h.instants:,} · {then}"

