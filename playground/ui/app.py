"""bully-tui's live app: the cluster's trace stream drawn, and keys sent back as requests.

The cluster runs in trio guest mode (live.py), which also owns the pace (the clock's
rate). Its events wait in the live run's buffer; one `EventsReady` message per burst
tells the app to take them, and the model folds them in. The widgets redraw on a 20 Hz
tick, which stops while paused, so a paused app uses no CPU. Keys go the other way, as
requests to the cluster, which records the commands they become in the trace. The app
keeps no copy of what the cluster owns: the settings are the engine's, the pace the
live run's, and each node's state is what the stream said.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import shutil
import tempfile
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass
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

from ..cluster import Cluster
from ..commands import ChangeDelay, ChangeTimeout, Crash, Elect, Recover
from ..live import LiveRun
from ..session import Session, exception_leaves
from ..transcript import Recorder, WriteError
from .alert_bar import AlertBar
from .compact_grid import CompactGrid
from .help_screen import HelpScreen
from .message_log import MessageLog
from .model import ClusterModel
from .node_grid import NodeGrid
from .node_panel import NodePanel
from .status_bar import Status, StatusBar

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
REDRAW_HZ = 20
PANEL_NEEDS = 70  # columns below which the node panel gives its room to the log
COMPACT_ABOVE = 9  # more nodes than this get the one-line-per-node grid
TEXT_HZ = 8  # the log and the panel: nobody reads text that scrolls faster, and it is dear
T_STEP = 0.5
DELAY_STEP = 0.25
NODE_REQUESTS = {"crash": Crash, "recover": Recover, "elect": Elect}
HANG_UPS = (signal.SIGTERM, signal.SIGHUP)  # quit cleanly on these, as on ctrl+q


@dataclass
class EventsReady(Message):
    """New trace events are waiting in the live run's buffer."""


class BullyApp(App[None]):
    CSS_PATH = str(themes.STYLESHEET)
    TITLE = "bully-tui"
    # The footer shows the short descriptions; the help screen adds the tooltips.
    BINDINGS = [
        Binding("c", "command('crash')", "crash", tooltip="crash the selected node"),
        Binding("r", "command('recover')", "recover", tooltip="recover the selected node"),
        Binding("x", "crash_leader", "kill leader", tooltip="crash the current leader"),
        Binding("e", "command('elect')", "elect", tooltip="the selected node starts an election"),
        Binding("space", "toggle_pause", "pause", tooltip="pause or resume"),
        Binding("s", "save", "save", tooltip="save the transcript so far to a new file"),
        Binding("question_mark", "help", "help", tooltip="this screen"),
        Binding("full_stop", "step", "step", show=False, tooltip="pause, and run the next instant"),
        Binding("plus,equals_sign", "timeout(1)", "T+", show=False, tooltip=f"raise T by {T_STEP:g}s"),
        Binding("minus", "timeout(-1)", "T-", show=False, tooltip=f"lower T by {T_STEP:g}s"),
        Binding("left_square_bracket", "delay(-1)", "delay-", show=False, tooltip=f"lower the link delay by {DELAY_STEP:g}s"),
        Binding("right_square_bracket", "delay(1)", "delay+", show=False, tooltip=f"raise the link delay by {DELAY_STEP:g}s"),
        Binding("less_than_sign", "pace(-1)", "slower", show=False, tooltip="halve the speed"),
        Binding("greater_than_sign", "pace(1)", "faster", show=False, tooltip="double the speed"),
        Binding("t", "next_theme", "theme", show=False, tooltip="next theme (dark, light)"),
        Binding("f", "filter_node", "log node", show=False, tooltip="log: only the selected node (again: all)"),
        Binding("m", "filter_topic", "log type", show=False, tooltip="log: next message type filter"),
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

    def __init__(self, session: Session, speed: float = 1.0, paused: bool = False, save_dir: str = "."):
        super().__init__()
        self.session = session
        self.save_dir = Path(save_dir)
        self.model = ClusterModel(session.ids, session.worst_case_messages)
        self.selected = session.ids[-1]
        self.saved: Path | None = None
        self._start = (speed, paused)
        self._files = ExitStack()
        self._redraw_due = False
        self._text_drawn = 0.0  # wall time of the last log and panel redraw
        self._gc_threshold = gc.get_threshold()  # restored on unmount
        self.grid = CompactGrid(self.model) if len(session.ids) > COMPACT_ABOVE else NodeGrid(self.model)
        self.log_view = MessageLog(self.model)
        self.panel = NodePanel()
        self.alert_bar = AlertBar(self.model)
        self.status_bar = StatusBar()
        self.live: LiveRun | None = None
        self._spool: Path | None = None
        # Set when the user picks another algorithm: the app exits, and run_live starts
        # a new one with it (cli.py), since every widget is built for one cluster.
        self.restart_with: str | None = None

    @property
    def speed(self) -> float:
        return self.live.speed if self.live is not None else self._start[0]

    # --- start and stop ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.grid
        with Horizontal(id="middle"):
            yield self.log_view
            yield self.panel
        yield self.alert_bar
        yield self.status_bar
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in HANG_UPS:  # before the temporary recording exists, so it never outlives us
            loop.add_signal_handler(signum, self._hang_up)
        for theme in themes.THEMES:
            self.register_theme(theme)
        self.theme = themes.DARK.name
        self.sub_title = ALGORITHMS[self.session.algorithm].title
        engine, _ = self.session.start(self._files, lookahead=False)
        self._spool = Path(self.session.transcript) if self.session.transcript else self._open_spool()
        if not self.session.transcript:
            engine.subscribe(self._files.enter_context(Recorder.create(str(self._spool), self.session.header, overwrite=True)))
        speed, paused = self._start
        self.live = LiveRun(Cluster(engine), speed=speed, paused=paused,
                            on_events=lambda: self.post_message(EventsReady()), on_done=self._run_done)
        self.live.start()
        self._ticker = self.set_interval(1 / REDRAW_HZ, self.redraw, pause=paused)
        self.redraw()
        # Everything built so far (Textual, its CSS, the widgets) lives as long as the app.
        # Left to the collector, each full collection rescans it all: pauses of 100 ms,
        # a visible stall at N=32 and x64. Frozen, only the churn of the run is scanned,
        # and full collections come ten times less often (the run's objects are freed by
        # reference counting; cycles are rare). bench/ui.py shows memory stays flat.
        gc.freeze()
        young, middle, _ = self._gc_threshold
        gc.set_threshold(young, middle, 100)

    def on_resize(self, event: Resize) -> None:
        self.panel.display = event.size.width >= PANEL_NEEDS  # a narrow screen keeps the log readable

    def _open_spool(self) -> Path:
        """Without --transcript the session is still recorded, to a file `s` copies."""
        fd, name = tempfile.mkstemp(prefix="bully-", suffix=".jsonl")
        os.close(fd)
        self._files.callback(os.unlink, name)
        return Path(name)

    async def action_quit(self) -> None:
        if self.live is not None:
            await self.live.stop()
        self.exit()

    async def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in HANG_UPS:
            loop.remove_signal_handler(signum)
        if self.live is not None:
            await self.live.stop()
        self._files.close()
        gc.unfreeze()
        gc.set_threshold(*self._gc_threshold)

    def _run_done(self, result: outcome.Outcome) -> None:
        """trio finished: normally because we cancelled it; otherwise show why (one line
        for a transcript that could not be written, the traceback of a bug)."""
        if isinstance(result, outcome.Error):
            error = result.error
            written = [e for e in exception_leaves(error) if isinstance(e, WriteError)]
            if written:
                self.exit(return_code=1, message=f"bully-tui: error: {written[0]}")
                return
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            self.exit(return_code=1, message=f"bully-tui: the simulation failed:\n{text}")

    def _hang_up(self) -> None:
        """SIGTERM or SIGHUP (the terminal closed): quit as ctrl+q does, so the run ends
        cleanly and a temporary recording is removed."""
        self.exit()

    # --- events in --------------------------------------------------------------------

    def on_events_ready(self, _: EventsReady) -> None:
        events = self.live.take()
        self.model.apply(events)
        if any(e.kind == "command" and e.source == "user" for e in events):
            self.redraw()  # someone is watching for this: show it now, not next tick
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
        return self.live.now() if self.live is not None else 0.0

    def redraw(self, text: bool | None = None) -> None:
        """Draw the model. Cards and status every time; the log and the panel at most
        TEXT_HZ times a second unless `text` says otherwise."""
        if self.live is None:
            return
        now = self.now()
        self.grid.show(now, self.selected)
        self.alert_bar.show()
        wall = time.monotonic()
        if text is None:
            text = wall - self._text_drawn >= 1 / TEXT_HZ
        if text:
            self._text_drawn = wall
            self.log_view.show()
            engine = self.live.cluster.engine
            self.panel.show(self.model.nodes[self.selected], engine.internals(self.selected), now, self.model.label)
        m, live = self.model, self.live
        self.status_bar.show(Status(now, live.speed, live.paused, live.behind, live.cluster.engine.config,
                                    m.elections, m.in_election, m.election_messages, m.worst_case))

    # --- requests out -----------------------------------------------------------------

    def action_command(self, name: str, node: int | None = None) -> None:
        if self.live is not None:
            self.live.submit(NODE_REQUESTS[name](self.selected if node is None else node))

    def action_crash_leader(self) -> None:
        leaders = self.model.leaders()
        if not leaders:
            self.notify("No node leads right now.", severity="warning")
            return
        self.action_command("crash", max(leaders))  # in a split brain, the highest

    def action_timeout(self, direction: int) -> None:
        if self.live is None:
            return
        if direction < 0 and self.live.cluster.engine.config.timeout - T_STEP < T_STEP:
            self.notify(f"T cannot go below {T_STEP:g}s.", severity="warning")
        self.live.submit(ChangeTimeout(direction * T_STEP))  # the engine refuses what it must

    def action_delay(self, direction: int) -> None:
        if self.live is None:
            return
        if direction < 0 and self.live.cluster.engine.config.delay_max == 0:
            self.notify("The delay cannot go below 0.", severity="warning")
        self.live.submit(ChangeDelay(direction * DELAY_STEP))

    def action_toggle_pause(self) -> None:
        if self.live is None:
            return
        if self.live.paused:
            self.live.resume()
            self._ticker.resume()
        else:
            self.live.pause()
            self._ticker.pause()
        self.redraw(text=True)

    def action_step(self) -> None:
        if self.live is not None:
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
        if rank <= len(self.session.ids):
            self.action_select(self.session.ids[rank - 1])

    def action_select(self, node: int) -> None:
        if node in self.model.nodes:
            self.selected = node
            self.redraw(text=True)

    def action_move(self, dx: int, dy: int) -> None:
        ids = self.session.ids
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
        """Copy the session's transcript so far to a new file, and say where."""
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        base = f"bully-{self.session.algorithm}-n{self.session.nodes}-seed{self.session.seed}-{stamp}"
        for n in range(100):
            target = self.save_dir / (f"{base}.jsonl" if n == 0 else f"{base}-{n}.jsonl")
            try:
                with open(target, "xb") as out, self._spool.open("rb") as spool:  # never clobber
                    shutil.copyfileobj(spool, out)
            except FileExistsError:
                continue
            except OSError as e:  # a full disk or a read-only folder: say so, keep running
                self.notify(f"Could not save to {target}: {e.strerror}", severity="error")
                return
            self.saved = target
            self.notify(f"Saved the transcript to {target}")
            return
        self.notify(f"Could not save: {base}.jsonl and 99 variants exist in {self.save_dir}", severity="error")

    def action_switch_algorithm(self, name: str) -> None:
        self.restart_with = name
        self.exit()

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        for name in ALGORITHMS:
            if name != self.session.algorithm:
                yield SystemCommand(f"Algorithm: {name}", "restart the cluster with it: same nodes, seed, settings, scenario",
                                    lambda name=name: self.action_switch_algorithm(name))
        for i in self.session.ids:
            k = self.model.label[i]
            yield SystemCommand(f"Crash node {k}", f"node {k} halts at once", lambda i=i: self.action_command("crash", i))
            yield SystemCommand(f"Recover node {k}", f"node {k} restarts from safe storage",
                                lambda i=i: self.action_command("recover", i))
            yield SystemCommand(f"Elect at node {k}", f"node {k}'s failure detector fires",
                                lambda i=i: self.action_command("elect", i))
            yield SystemCommand(f"Select node {k}", "show it in the node panel", lambda i=i: self.action_select(i))
            yield SystemCommand(f"Log: only node {k}", "filter the message log",
                                lambda i=i: self.log_view.set_filters(i, self.log_view.topic_filter))
        for topic in self.model.topics:
            yield SystemCommand(f"Log: only {topic}", "filter the message log",
                                lambda t=topic: self.log_view.set_filters(self.log_view.node_filter, t))
        yield SystemCommand("Log: show everything", "clear the log's filters", lambda: self.log_view.set_filters(None, None))
