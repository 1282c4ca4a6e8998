"""The live view of a real cluster (`bully-tui --real`): node processes on the loopback
(real/cluster.py), or nodes started elsewhere and only watched (`attach`,
real/attach.py), shown as the simulation is (cluster_app.py: the grid, the log or its
space-time diagram, the node panel, the alert, the same view keys, ? for every key).
Its control surface is the run followed from its nodes' traces (run/followed.py): four
times a second they are read and merged in a thread, as a transcript would be (the
monitor's verdicts included; only what is new is merged), and shown. The node panel
shows a node's safe storage, read from its state file; its own variables stay in its
process.

Keys and the palette act on processes: x kills the leader (SIGKILL), c the selected
node, r starts it again from its state folder (a recovery from disk), e makes it start
an election, j starts a new one that joins, l makes the selected one leave, p cuts it
off (a partition of held connections) and P heals, + and - change T on every node, w
asks for the critical section (with a mutex), s saves the run so far as a new
transcript. Time travel, branches and verify are not offered: a real run is not
deterministic, and the status line says so. A command that cannot act (a node down
already, say) says why, as the simulation's do.

Quitting (q, ctrl+q) stops every process and, with --transcript, writes the merged run
as a transcript marked real, which replay and export read. A signal (SIGINT, SIGTERM,
or SIGHUP: the terminal closed) quits the same way, and the app ends as the
simulation's does: status 128 + the signal's number, and its one line
(cli/output.finished); the transcript is written only if there is time before the
watchdog ends the app (interrupt.end_soon). The run's folder goes in every case
(real/cluster.run_folder).
"""

from __future__ import annotations

from contextlib import ExitStack

from textual.binding import Binding

from protocol import machine

from ..real.cluster import RealCluster, run_folder
from ..run.control import FollowedRun, Session
from .cluster_app import ClusterApp, command_bindings, status_of
from .cluster_screen import HELP_BINDING
from .model import LOG_CAP
from .palette import RealCommands
from .real_status import RealStatus, running, starting

POLL = 0.25  # seconds between readings of the traces


class RealApp(ClusterApp):
    COMPACT_ABOVE = 12  # nodes: more than this, one line each
    COMMANDS = {RealCommands}  # (Textual's own commands among them)
    PALETTE_NOTE = ("ctrl+p opens the command palette: crash, recover or elect any node, join and leave, cut nodes "
                    "off and heal, filter the log, change theme.")
    BINDINGS = [
        *command_bindings({
            "crash": "kill the selected node's process (SIGKILL)",
            "recover": "start the selected node's process again, from its state folder",
            "crash_leader": "kill the leader's process (SIGKILL)",
            "elect": "the selected node starts an election (SIGUSR1)", "join": "a new process joins (the next id)",
            "partition": "partition: cut the selected node off (its connections across held, both ways)",
            "heal": "heal: what waited on held connections goes, in order", "timeout": "{} T by 0.5s on every node"}),
        Binding("s", "save", "save",
                tooltip="save the run so far (its traces, merged) as a new transcript, and say where"),
        HELP_BINDING,
        Binding("q,ctrl+q", "quit", "quit", tooltip="quit: stop every process (and write --transcript)"),
    ]

    def __init__(self, session: Session, folder: str | None = None, watching=None, save_dir: str = "."):
        """`watching`: nodes started elsewhere (real/attach.py), shown but not acted on;
        else the app starts a cluster of its own, in `folder` (default: a temporary one).
        `save_dir`: where s saves the run so far."""
        self.status = RealStatus()
        super().__init__(session, save_dir, rows=(self.status,))
        self.watching = watching
        self._folder = folder
        self._starting: RealCluster | None = None  # the cluster this app starts, while and once it does
        self._drawn = False  # the nodes have been shown once
        self.kept_transcript: str | None = None  # --transcript, once written

    @property
    def cluster(self) -> RealCluster | None:
        """The cluster this app started, once it has."""
        return self.control.cluster if self.control is not None else None

    @property
    def events(self) -> list:
        """The run so far, as last merged."""
        return self.control.events if self.control is not None else []

    def start(self) -> None:
        s, files = self.session, ExitStack()
        if self.watching is None:  # (started in a thread: 64 processes take seconds, and the screen is drawn meanwhile)
            folder = self._folder or files.enter_context(run_folder())
            self._starting = RealCluster(s.ids, s.algorithm, s.config, folder, s.seed, s.workload)
        on_read = lambda: self.call_from_thread(self._read)  # noqa: E731 (from the reading's thread)
        self.control = FollowedRun(s, self.state, on_read, start=self._starting, watching=self.watching, files=files)
        self.title = f"{machine(s.algorithm).title}: {s.nodes} real processes{' (attached)' if self.watching else ''}"
        self.set_interval(POLL, self.poll)
        self.poll()

    def poll(self) -> None:
        """Read the traces again (in a thread, if no reading is under way)."""
        self.control.poll()
        if self.control.failure is not None and self.failure is None:  # (the nodes could not start)
            self.failure = self.control.failure
            self.exit()
        elif self.control.source is None:
            self.redraw()

    def _read(self) -> None:
        """A reading is done: show it."""
        control = self.control
        events = control.take()
        if control.failure is not None:  # (a node sent what is not a trace: the app ends, saying so)
            self.failure = self.failure or control.failure
            self.exit()
        elif events is not None:
            self.model.reload(events[-LOG_CAP:])
            self.redraw(text=True)

    def redraw(self, text: bool | None = None) -> None:
        if self.control is None or self.control.source is None:
            self.status.forms = starting(self.session.nodes)
            return
        super().redraw(text)
        if not self._drawn:  # (the grid was laid out while its cards were empty: their rows again, now full)
            self._drawn = True
            for card in getattr(self.grid, "cards", {}).values():
                card.refresh(layout=True)

    def draw_status(self, now: float) -> None:
        state = self.state
        status = status_of(self.model, self.session.algorithm, now, self.control.config, speed=1.0, paused=False,
                           running_at=None)
        self.status.forms = running(status, sum(n.up for n in state.nodes.values()), len(state.ids))

    async def stop(self) -> None:
        """Every process stopped, the transcript written (if asked), the folder removed."""
        await super().stop()
        if self.control is not None:
            self.kept_transcript = self.control.kept_transcript
            self.failure = self.failure or self.control.failure
