"""The live view of a real cluster (`bully-tui --real`): node processes on the loopback
(real/cluster.py), shown with the simulation's widgets: the grid, the log (or its
space-time diagram, d), the node panel (its safe storage read from its state file; its
own variables stay in its process) and the alert; the keys that change only the view
are the simulation app's own (view_keys.py), and ? lists every key.

Four times a second it reads the nodes' traces in a thread, merged as a transcript would
be (real/merge.py, the monitor's verdicts included; only what is new is merged), into a
state that the shown one becomes (ClusterState.load): the widgets hold the model, and
redraw from it. Keys act on
processes: x kills the leader (SIGKILL), c the selected node, r starts it again from its
state folder (a recovery from disk), e makes it start an election, j starts a new one
that joins, l makes the selected one leave, p cuts it off (a partition of held
connections) and P heals, + and - change T on every node, w asks for the critical
section (with a mutex), s saves the run so far as a new transcript. Time travel, branches
and verify are not offered: a real run is not deterministic, and the status line says
so. A key that cannot act (a node down already, say) says why, as the simulation's do.
Quitting (q, ctrl+q) stops every process and, with --transcript, writes the merged
run as a transcript marked real, which replay and export read. A signal (SIGINT,
SIGTERM, or SIGHUP: the terminal closed) quits the same way, and the app ends as the
simulation's does: status 128 + the signal's number, and its one line (cli.finished);
the transcript is written only if there is time before the watchdog ends the app
(interrupt.end_soon). The run's folder goes in every case (real/cluster.run_folder).
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Footer

import themes
from protocol import machine

from ..core.commands import ChangeTimeout, Command, Crash, Elect, Heal, Join, Leave, Partition, Recover, Request, Want
from ..core.config import InputError, WriteError
from ..real.cluster import RealCluster, run_folder
from ..record.files import saved_as_new
from ..record.recorder import Recorder
from ..run import interrupt
from ..run.state import ClusterState
from .alert_bar import AlertBar
from .app import T_STEP, cs_figures
from .compact_grid import CompactGrid
from .message_log import MessageLog
from .model import LOG_CAP, ClusterModel
from .node_grid import NodeGrid
from .node_panel import NodePanel
from .real_status import RealStatus, running, starting
from .status_bar import Status
from .view_keys import VIEW_BINDINGS, ViewKeys

WATCHING = "attached: this view only watches (start, stop and tell the nodes where they run)"
COMPACT_ABOVE = 12  # nodes: more than this, one line each
POLL = 0.25  # seconds between readings of the traces


class RealApp(ViewKeys, App):
    CSS_PATH = str(themes.STYLESHEET)
    PALETTE_NOTE = "ctrl+p opens Textual's command palette (theme, keys, quit); the keys above act on the processes."
    BINDINGS = [
        Binding("x", "kill_leader", "kill leader", tooltip="kill the leader's process (SIGKILL)"),
        Binding("c", "crash", "crash", tooltip="kill the selected node's process (SIGKILL)"),
        Binding("r", "recover", "recover", tooltip="start the selected node's process again, from its state folder"),
        Binding("e", "elect", "elect", tooltip="the selected node starts an election (SIGUSR1)"),
        Binding("w", "want", "want CS", show=False,
                tooltip="the selected node asks for the critical section (with a mutex: --mutex)"),
        Binding("j", "join", "join", tooltip="a new process joins (the next id)"),
        Binding("l", "leave", "leave", show=False, tooltip="the selected node leaves for good, telling the others"),
        Binding("p", "cut_off", "cut off", show=False,
                tooltip="partition: cut the selected node off (its connections across held, both ways)"),
        Binding("P", "heal", "heal", show=False, tooltip="heal: what waited on held connections goes, in order"),
        Binding("s", "save", "save", tooltip="save the run so far (its traces, merged) as a new transcript, and say where"),
        Binding("plus,equals_sign", "timeout(1)", "T+", show=False, tooltip=f"raise T by {T_STEP:g}s on every node"),
        Binding("minus", "timeout(-1)", "T-", show=False, tooltip=f"lower T by {T_STEP:g}s on every node"),
        *VIEW_BINDINGS,
        Binding("q,ctrl+q", "quit", "quit", tooltip="quit: stop every process (and write --transcript)"),
    ]

    def __init__(self, session, folder: str | None = None, watching=None, save_dir: str = "."):
        """`watching`: nodes started elsewhere (real/attach.py), shown but not acted on;
        else the app starts a cluster of its own, in `folder` (default: a temporary one).
        `save_dir`: where s saves the run so far."""
        super().__init__()
        self.save_dir = Path(save_dir)
        self.saved: Path | None = None  # the last transcript s saved
        self.session = session
        self.watching = watching
        self.state = ClusterState(session.ids, session.config, session.algorithm)
        self.model = ClusterModel(self.state, machine(session.algorithm).worst_case_messages(session.nodes))
        self.grid = CompactGrid(self.model) if len(session.ids) > COMPACT_ABOVE else NodeGrid(self.model)
        self.log_view = MessageLog(self.model)
        self.panel = NodePanel(self.state.epoch_text)
        self.alert_bar = AlertBar(self.model)
        self.status = RealStatus()
        self.selected = session.ids[-1]
        self._folder = folder
        self._temporary = ExitStack()  # the run's folder, when the app makes it (run_folder): removed at the end
        self.cluster: RealCluster | None = None  # once started (_start)
        self._starting: RealCluster | None = None
        self._starter: threading.Thread | None = None
        self._started: bool | str = False  # True once started; why not, if it could not start
        self.events: list = []
        self.now = 0.0  # the run's time as last read (poll)
        self._reading = False  # a read of the traces is under way (_read)
        self._settled: ClusterState | None = None  # the state after the merge's settled events (poll); then the newer go on a copy
        self._generation, self._applied = 0, 0  # the merge's start it follows; its settled events applied
        self.failure: str | None = None  # why the app ended early, or the transcript could not be written: said after it
        self.stopped_by: int | None = None  # the signal that ended the app, if one did (cli.finished says so)
        self.kept_transcript: str | None = None  # --transcript, once written
        self._drawn = False  # the nodes have been shown once

    def compose(self) -> ComposeResult:
        yield self.grid
        with Horizontal(id="middle"):
            yield self.log_view
            yield self.panel
        yield self.alert_bar
        yield self.status
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._handlers = interrupt.take_over(self._signalled)
        themes.use_ours(self)
        if self._folder is None and self.watching is None:
            self._folder = self._temporary.enter_context(run_folder())
        s = self.session
        if self.watching is None:  # (in a thread: 64 processes take seconds to start, and the screen is drawn meanwhile)
            self._starting = RealCluster(s.ids, s.algorithm, s.config, self._folder, s.seed, s.workload)
            self._starter = threading.Thread(target=self._start, daemon=True)
            self._starter.start()
        self.title = f"{machine(s.algorithm).title}: {s.nodes} real processes{' (attached)' if self.watching else ''}"
        self.set_interval(POLL, self.poll)
        self.poll()

    def on_unmount(self) -> None:
        self.stop()
        interrupt.give_back(self._handlers)

    def stop(self) -> None:
        """Every process stopped, the transcript written (if asked), the folder removed."""
        if self.watching is not None:
            self.watching.close()
        if self._starter is not None:  # (quit while starting: it stops what it started, unless it is done)
            self._starting.cancelled = True
            self._starter.join()
            self._starter = None
            if self._started is True and self.cluster is None:  # (done since the last poll)
                self.cluster = self._starting
        if self.cluster is None:
            self._temporary.close()
            return
        cluster, self.cluster = self.cluster, None
        try:
            cluster.close()
            if self.session.transcript is not None:
                self._write(self.session.transcript, cluster.events(final=True), self.session.overwrite)
                self.kept_transcript = self.session.transcript
        except (InputError, WriteError) as e:  # said after the app has ended, in one line
            self.failure = str(e)
        finally:
            self._temporary.close()

    def _write(self, path: str, events: list, overwrite: bool) -> None:
        """A transcript of `events`, its header saying the run was real."""
        with Recorder.create(path, replace(self.session.header, real=True), overwrite) as recorder:
            recorder(events)

    def action_save(self) -> None:
        """The run so far (as merged now) as a new transcript beside where the app started, and say where."""
        if self.source is None:
            self._refused("the nodes are still starting")
            return
        events, s = list(self.events), self.session
        base = f"bully-real-{s.algorithm}-n{len(self.state.ids)}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        try:
            target = saved_as_new(self.save_dir, base, lambda path: self._write(str(path), events, False))
        except (InputError, WriteError) as e:  # a full disk or a read-only folder: say so, keep running
            self.notify(f"Could not save: {e}", severity="error")
            return
        self.saved = target
        self.notify(f"Saved the run so far to {target.resolve()} (bully-tui replay or export it)")

    def _signalled(self, signum: int, _frame: object) -> None:
        """SIGINT, SIGTERM or SIGHUP (the terminal closed): quit, stopping the processes,
        as the simulation app does (ui/app.py): the first signal is the one said."""
        if self.stopped_by is None:
            self.stopped_by = signum
            interrupt.end_soon(signum)
        self._loop.call_soon_threadsafe(self.exit)

    # --- what the nodes did ------------------------------------------------------------

    @property
    def source(self):
        """Where the events come from: the cluster this app started, or the nodes it watches."""
        return self.watching if self.watching is not None else self.cluster

    def _start(self) -> None:
        """The cluster's processes, started (in a thread): poll takes it, or the reason it
        could not start (then the app ends, saying so)."""
        try:
            self._starting.__enter__()
            self._started = True
        except InputError as e:
            self._started = str(e)
        except Exception as e:  # (a folder that cannot be made, no process to be had: the app ends saying so)
            self._started = f"cannot start the nodes: {getattr(e, 'strerror', None) or e}"

    def poll(self) -> None:
        if self._started is True and self.cluster is None and self._starter is not None:
            self._starter.join()
            self.cluster, self._starter = self._starting, None
        elif isinstance(self._started, str) and self.failure is None:
            self.failure = self._started
            self.exit()
        if self.source is None:
            self.status.forms = starting(self.session.nodes)
            return
        if not self._reading:  # (one read at a time, in a thread: 64 nodes' start can take seconds to merge)
            self._reading = True
            threading.Thread(target=self._read, args=(self.source,), daemon=True).start()

    def _read(self, source) -> None:
        """The traces read and merged, off the app's thread; then shown on it."""
        try:
            events = source.events()
        except InputError as e:  # (a node sent what is not a trace: the app ends, saying so)
            events = e
        try:
            self.call_from_thread(self._show_read, events)
        except RuntimeError:  # (the app has ended meanwhile)
            pass

    def _show_read(self, events) -> None:
        self._reading = False
        if self.source is None:  # (stopped meanwhile)
            return
        if isinstance(events, InputError):
            self.failure = str(events)
            self.exit()
            return
        self.events = events
        merged = self.source.merged
        if merged.generation != self._generation:  # (the merge started again from the top: so does the state)
            self._generation, self._applied = merged.generation, 0
            self._settled = ClusterState(self.session.ids, self.session.config, self.session.algorithm)
        self._settled.apply(self.events[self._applied:merged.settled])  # (each settled event once)
        self._applied = merged.settled
        moment = self._settled.snapshot()
        moment.messages = moment.messages.until(moment.sent)  # (the newer messages may be numbered otherwise next time)
        self.state.load(moment)
        self.state.apply(self.events[merged.settled:])
        self.model.reload(self.events[-LOG_CAP:])
        self.now = self.events[-1].t if self.events else 0.0
        if merged.origin is not None:  # (the time goes on while nothing happens)
            self.now = max(self.now, round(time.time() - merged.origin, 2))
        self.alert_bar.show()
        self.show_selection()

    def show_selection(self) -> None:
        if self.source is None:
            return
        now = self.now
        self.grid.show(now, self.selected)
        if not self._drawn:  # (the grid was laid out while its cards were empty: their rows again, now full)
            self._drawn = True
            for card in getattr(self.grid, "cards", {}).values():
                card.refresh(layout=True)
        self.log_view.selected = self.selected
        self.log_view.show()
        self.panel.show(self.model.nodes[self.selected], self.source.internals(self.selected), now, self.model.label,
                        self.source.internals_unknown)
        state, rounds = self.state, self.state.rounds
        held = len(self.cluster.held) if self.cluster is not None else 0
        status = Status(now, 1.0, False, None, self.source.config, rounds.count, rounds.running,
                        sum(rounds.current.messages.values()) if rounds.current else 0, self.model.worst_case,
                        held_links=held, cs=cs_figures(state, self.session.algorithm))
        self.status.forms = running(status, sum(n.up for n in state.nodes.values()), len(state.ids))

    # --- keys --------------------------------------------------------------------------

    def _leader(self) -> int | None:
        """The node most up nodes follow, if any follows one."""
        leaders = [n.leader for n in self.state.nodes.values() if n.up and n.leader is not None]
        return max(set(leaders), key=leaders.count) if leaders else None

    def _refused(self, why: str) -> None:
        """A key that cannot act, and why, as the simulation app says it (what a key does
        shows in the log, and T on the status line)."""
        self.notify(why[0].upper() + why[1:] + ".", severity="warning")

    def _acting(self) -> RealCluster | None:
        """The cluster a key acts on; or None, saying why not."""
        if self.watching is not None:
            self._refused(WATCHING)
        elif self.cluster is None:
            self._refused("the nodes are still starting")
        return self.cluster

    def _submit(self, command: Request) -> None:
        if (cluster := self._acting()) is not None and (refusal := cluster.submit(command)):
            self._refused(refusal)
        self.poll()

    def _act(self, command: type[Command], node: int | None) -> None:
        if node is None:
            if self._acting() is not None:
                self._refused(f"no node to {command.name}: none leads")
            self.poll()
        else:
            self._submit(command(node))

    def action_kill_leader(self) -> None:
        self._act(Crash, self._leader())

    def action_crash(self) -> None:
        self._act(Crash, self.selected)

    def action_recover(self) -> None:
        self._act(Recover, self.selected)

    def action_elect(self) -> None:
        self._act(Elect, self.selected)

    def action_want(self) -> None:
        self._act(Want, self.selected)

    def action_join(self) -> None:
        self._submit(Join())

    def action_leave(self) -> None:
        self._act(Leave, self.selected)

    def action_cut_off(self) -> None:
        """The selected node alone on one side of a partition of held connections."""
        self._submit(Partition((self.selected,)))

    def action_heal(self) -> None:
        if self.cluster is not None and not self.cluster.held and self.watching is None:
            self._refused("nothing to heal: no connection is held")
            self.poll()
        else:
            self._submit(Heal())

    def action_timeout(self, step: int) -> None:
        self._submit(ChangeTimeout(step * T_STEP))
