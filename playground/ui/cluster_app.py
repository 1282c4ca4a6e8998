"""What both apps are: a cluster drawn from a control surface (run/control.py), keys and
palette commands sent back to it as typed commands (core/commands.py). The simulation's
app (app.py) drives its timeline, live or replayed; the real view (real_app.py) a real
run. Each extends this with only what differs: how its run starts, and its status rows
(and the simulation its pace, its time travel, branching and export).

The screen (cluster_screen.py) lays the widgets out and takes the keys that change only
the view; the widgets read the model (model.py): the control's state of the moment
shown, and the log's lines. A command that cannot mean anything at that moment (a
node down already, one that has left, an algorithm that takes no members) is refused
with one line that says why, and nothing is recorded. Signals (SIGINT, SIGTERM, SIGHUP)
quit as the quit key does (control.QuitOnSignals); the run is stopped and its files
closed before the app ends, whatever ends it.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive

import themes
from protocol import machine

from ..core.commands import (
    ChangeTimeout,
    Crash,
    Elect,
    Heal,
    Join,
    Leave,
    LiveCommand,
    Partition,
    Recover,
    WantCs,
    membership_refused,
    want_refused,
)
from ..run.control import ClusterConfig, ClusterState, Control, InputError, QuitOnSignals, Session, WriteError
from . import downloads
from .alert_bar import AlertBar
from .cluster_screen import ClusterScreen
from .compact_grid import CompactGrid
from .message_log import MessageLog
from .model import ClusterModel
from .node_grid import NodeGrid
from .node_panel import NodePanel
from .redraws import Redraws
from .status_bar import CsFigures, Status

T_STEP = 0.5
# The commands a key gives the selected node (or the palette any node), by name.
NODE_COMMANDS = {"crash": Crash, "recover": Recover, "elect": Elect, "want": WantCs, "leave": Leave,
                 "partition": lambda node: Partition((node,))}


def command_bindings(say: dict[str, str]) -> list[Binding]:
    """The keys of the commands both apps take, and the help; `say`: what each does in
    the app's world, by action (a crash is a SIGKILL for a real node)."""
    return [
        Binding("c", "command('crash')", "crash", tooltip=say["crash"]),
        Binding("r", "command('recover')", "recover", tooltip=say["recover"]),
        Binding("x", "crash_leader", "kill leader", tooltip=say["crash_leader"]),
        Binding("e", "command('elect')", "elect", tooltip=say["elect"]),
        Binding("w", "command('want')", "want CS", show=False,
                tooltip="the selected node asks for the critical section (with a mutex: --mutex)"),
        Binding("j", "join", "join", show=False, tooltip=say["join"]),
        Binding("l", "command('leave')", "leave", show=False,
                tooltip="the selected node leaves for good, telling the others"),
        Binding("p", "command('partition')", "cut off", show=False, tooltip=say["partition"]),
        Binding("P", "heal", "heal", show=False, tooltip=say["heal"]),
        Binding("plus,equals_sign", "timeout(1)", "T+", show=False, tooltip=say["timeout"].format("raise")),
        Binding("minus", "timeout(-1)", "T-", show=False, tooltip=say["timeout"].format("lower")),
    ]


class ClusterApp(App[None]):
    CSS_PATH = str(themes.STYLESHEET)
    TITLE = "bully-tui"
    SCREEN = ClusterScreen
    COMPACT_ABOVE = 9  # more nodes than this get the one-line-per-node grid
    PALETTE_NOTE = ""  # (the help screen's last line)

    selected: reactive[int] = reactive(0, init=False)  # the node the panel shows, which keys act on

    def __init__(self, session: Session, save_dir: str, rows: tuple):
        """`rows`: the app's own widgets under the log and the panel, after the alert (its
        status lines)."""
        super().__init__()
        self.session = session
        self.save_dir = Path(save_dir)
        self.state = ClusterState(session.ids, session.config, session.algorithm)  # the control's: widgets hold it
        self.model = ClusterModel(self.state, machine(session.algorithm).worst_case_messages(session.nodes))
        self.control: Control | None = None  # once the run is there (`start`)
        self.set_reactive(ClusterApp.selected, session.ids[-1])
        self.grid = CompactGrid(self.model) if len(session.ids) > self.COMPACT_ABOVE else NodeGrid(self.model)
        self.log_view = MessageLog(self.model)
        self.panel = NodePanel(self.state.epoch_text, self.state.rules)
        self.alert_bar = AlertBar(self.model)
        self.rows = (self.alert_bar, *rows)
        self.redraws = Redraws(self, self.redraw)
        self.saved: Path | None = None  # the last transcript `s` saved
        self.failure: str | None = None  # why the app ended with an error, to print after it
        self.stopped_by: int | None = None  # the signal that ended the app, if one did (cli/output.finished)

    def get_default_screen(self) -> ClusterScreen:
        return self.SCREEN(self.grid, self.log_view, self.panel, self.rows)

    # --- start and stop ---------------------------------------------------------------

    async def on_mount(self) -> None:
        self.signals = QuitOnSignals(self.exit)  # first: nothing the run makes outlives a signal
        themes.use_ours(self)
        self.start()

    def start(self) -> None:
        """Start the run (its control), on mount."""
        raise NotImplementedError

    async def action_quit(self) -> None:
        await self.stop()
        self.exit()

    async def stop(self) -> None:
        """The run stopped, its files closed (again is harmless)."""
        if self.control is not None:
            await self.control.close()

    async def on_unmount(self) -> None:
        try:
            await self.stop()  # (first: a signal meanwhile still quits, and the watchdog still guards the stop)
        finally:
            self.signals.give_back()
            self.stopped_by = self.signals.by

    def fail(self, code: int, text: str) -> None:
        """End the app with `code`; the caller prints `text` once the screen is gone (as
        it is: Textual's exit message would wrap a one-line error at the screen's width)."""
        self.failure = text
        self.exit(return_code=code)

    # --- drawing ---------------------------------------------------------------------------

    def watch_selected(self) -> None:
        self.redraw(text=True)

    def redraw(self, text: bool | None = None) -> None:
        """Draw the model: cards, alert and status every time; the log and the panel when
        `text` says, or when their time has come (redraws.py)."""
        control = self.control
        if control is None:
            return
        now, selected = control.now(), self.selected
        self.grid.show(now, selected)
        self.alert_bar.show()
        if self.redraws.text_due(text):
            self.log_view.selected = selected
            self.log_view.show()
            self.panel.show(self.model.nodes[selected], control.internals(selected), now, self.model.label,
                            control.internals_unknown)
        self.draw_status(now)

    def draw_status(self, now: float) -> None:
        """The app's own rows."""
        raise NotImplementedError

    # --- commands out -----------------------------------------------------------------------

    def request(self, command: LiveCommand, text: str) -> None:
        """A command to the run (`text`: as the user would say it), unless it is refused."""
        if self.control is not None and not self.refused(command) and (why := self.control.submit(command)):
            self.notify(sentence(why), severity="warning")

    def refused(self, command: LiveCommand | None) -> bool:
        """Whether `command` cannot mean anything now (None: no command can be given);
        then the user is told why."""
        if why := algorithm_refusal(command, self.session.algorithm):
            self.notify(why, severity="warning")  # (it begins with the algorithm's name, or the command's)
            return True
        if self.control is None:
            return True
        if why := self.control.refusal(command, self.model.label.__getitem__):
            self.notify(sentence(why), severity="warning")
            return True
        return False

    def action_command(self, name: str, node: int | None = None) -> None:
        """`name` (NODE_COMMANDS) given to `node`, by default the selected one."""
        node = self.selected if node is None else node
        self.request(NODE_COMMANDS[name](node), f"{name} {self.model.label[node]}")

    def action_crash_leader(self) -> None:
        leaders = self.state.leaders()
        if leaders:
            self.action_command("crash", max(leaders))  # in a split brain, the highest
        elif not self.refused(None):  # (no command at all, first: a real run's nodes still starting, say)
            self.notify("No node leads right now.", severity="warning")

    def action_join(self) -> None:
        self.request(Join(), "join")

    def action_heal(self) -> None:
        if not self.state.held_links:
            self.notify("No link is held.")
            return
        self.request(Heal(), "heal")

    def action_timeout(self, direction: int) -> None:
        self.request(ChangeTimeout(direction * T_STEP), f"T {'+' if direction > 0 else '-'}{T_STEP:g}s")

    def action_save(self) -> None:
        """The run so far as a new transcript (a branch's with the transcripts it branched
        from), and say where."""
        if self.control is None:
            return
        folder = downloads.folder_for(self, self.save_dir)  # (served: the browser's, downloaded)
        try:
            target, parents = self.control.save(folder)
        except (InputError, WriteError) as e:  # a full disk or a read-only folder: say so, keep running
            downloads.discard(self, folder)
            self.notify(f"Could not save: {e}", severity="error")
            return
        self.saved = target
        if downloads.offered(self, folder, "Saved the transcript" + (" and those it branched from" if parents else "")):
            return
        where = target.resolve()
        if parents:
            kin = "the transcript" if parents == 1 else f"the {parents} transcripts"
            self.notify(f"Saved the transcript to {where}, and {kin} it branched from beside it")
        else:
            hint = "" if self.control.time_travel else " (bully-tui replay or export it)"  # (no going back here)
            self.notify(f"Saved the transcript to {where}{hint}")


def sentence(line: str) -> str:
    """A refusal's line as the notice says it: "node 3 is down already" -> "Node 3 is down already."."""
    return line[0].upper() + line[1:] + "."


def algorithm_refusal(command: LiveCommand | None, algorithm: str) -> str | None:
    """Why `algorithm` takes no such command at all (one line), or None."""
    if type(command) is WantCs:
        return want_refused(algorithm)
    if type(command) in (Join, Leave):
        return membership_refused(algorithm)
    return None


def status_of(model: ClusterModel, algorithm: str, now: float, config: ClusterConfig, **pace) -> Status:
    """The status line's facts at `now`, with `config` the settings the run has (`pace`:
    the speed, paused, ... where the app has one)."""
    state, rounds = model.state, model.state.rounds
    return Status(now, config=config, elections=rounds.count, in_election=rounds.running, worst_case=model.worst_case,
                  election_messages=sum(rounds.current.messages.values()) if rounds.current else 0,
                  held_links=len(state.held_links), faults=state.faults_broken, cs=cs_figures(state, algorithm), **pace)


def cs_figures(state: ClusterState, algorithm: str) -> CsFigures | None:
    """With a mutex, its figures so far for the status line."""
    cs = state.cs
    if cs is None:
        return None
    mutex = machine(algorithm).mutex
    members = len(state.joined) - len(state.left)
    return CsFigures(cs.entries, cs.messages_per_entry, mutex.figures(members).entry_messages,
                     cs.client_delays[-1] if cs.client_delays else None, cs.sync_delays[-1] if cs.sync_delays else None)
