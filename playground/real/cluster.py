"""A cluster of real node processes on the loopback (`bully-tui --headless --real`).

Running. Each node is `python -m playground node ...` (node.py) with its own state
directory under the run's folder (`run_folder`: bully-real-* in the temporary folder,
removed after the run, by the guardian (record/guard.py) if bully-tui is killed first), listening on a free port of 127.0.0.1, its stderr in
DIR/node.log. They all listen first (`--wait-to-start`), and once every one does, the
cluster tells them one wall time to take their first step at, as the simulation's nodes
start together. Crash is SIGKILL; recover
starts the process again from its state directory; elect is SIGUSR1; leave is SIGUSR2
(the node tells the members and stops). The cluster keeps its own log of those commands
with their wall times: a killed process cannot write that it was killed. Whatever
happens, leaving the `with` block stops every process it started (SIGTERM, then SIGKILL
after a second); and a node whose cluster was killed outright stops by itself within
half a second (`--parent`). A signal that stops bully-tui waits while a process is
being started and tracked, and while they are being stopped (record/signals.py): none is
left untracked, running, in a folder being removed.
The run's traces become one transcript in merge.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from protocol import machine, split_name

from ..core.commands import (
    ChangeTimeout,
    Command,
    Crash,
    Elect,
    Heal,
    Join,
    Leave,
    LiveCommand,
    Members,
    Partition,
    Recover,
    SetTimeout,
    WantCs,
    membership_refused,
    want_refused,
)
from ..core.config import TIMEOUT, ClusterConfig, InputError, Workload
from ..core.events import Event
from ..core.host import Internals
from ..core.settings import held_after
from ..record import guard, signals
from . import control, state
from .merge import Merge, merge
from .traces import STARTS, TRACE_FILE, TraceFile, read_trace

STARTING = 0.2  # seconds from telling the nodes when to start to their first step (they all listen by then)
STARTED_WITHIN = 20.0  # seconds with no process becoming ready before one is said not to start (64 on 2 cores: ~5 s in all)
STOPPING = 1.0  # seconds a process has to stop after SIGTERM before it is killed


@contextmanager
def run_folder() -> Iterator[str]:
    """A new folder for a run's nodes, bully-real-* in the temporary folder, removed
    after; by the guardian (record/guard.py) if bully-tui ends first, killed say (it
    tries again while the nodes, which stop once their cluster is gone, still write)."""
    guard.start()  # (before the folder is made: told the moment it exists, not once a process has started)
    with signals.held():
        folder = tempfile.mkdtemp(prefix="bully-real-")
        guard.remove_if_left(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        guard.done(guard.REMOVE, folder)


def free_ports(count: int) -> list[int]:
    """Ports nothing listens on now (the kernel's choice; a race with another program
    that takes one meanwhile is possible, and then that node says it cannot listen)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass
class RealCluster:
    ids: tuple[int, ...]
    algorithm: str
    config: ClusterConfig
    folder: str
    seed: int = 1
    workload: Workload | None = None  # with a mutex ("classic+central"): when each node wants the critical section
    ports: dict[int, int] = field(default_factory=dict)
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)
    log: list[tuple[float, str, tuple[int, ...]]] = field(default_factory=list)  # (wall time, command, args)

    def __post_init__(self) -> None:
        self.ports = dict(zip(self.ids, free_ports(len(self.ids)), strict=True))
        self.merged = Merge(self.algorithm, self.ids, self.config, self._sources())  # (events: kept between calls)
        self.roster = Members(self.ids)  # who is a member, who is down: a node starts with the members there are
        self.held: frozenset[tuple[int, int]] = frozenset()  # (from, to): the links a partition holds
        self._traces: dict[int, TraceFile] = {}
        self.cancelled = False  # set from another thread: stop starting (the live view quit meanwhile)

    def __enter__(self) -> RealCluster:
        """The processes, started together: each listens, and once every one does (64 take
        seconds to start on two cores), all take their first step at one time. Before
        that, a node that was ready first would find the others down."""
        try:
            for node in self.ids:
                if self.cancelled:
                    raise InputError("stopped while the nodes were starting")
                self._spawn(node, wait_to_start=True)
            self._waited(lambda node: self._control(node, None))
            start_at = time.time() + STARTING
            for node in self.ids:
                self._control(node, {"command": "start", "at": start_at})
            self.log.append((start_at, "start", ()))
            self._waited(lambda node: _booted(self._trace_path(node)))
        except BaseException:
            self.close()
            raise
        return self

    def _waited(self, ready) -> None:
        """Until `ready(node)` holds for every node; or one line saying which did not
        start, and why (its log's last line: a port taken meanwhile, say). The deadline
        follows the work: STARTED_WITHIN seconds after the last node became ready (a busy
        machine starts them slower, and is waited for)."""
        waiting = set(self.ids)
        deadline = time.monotonic() + STARTED_WITHIN
        while waiting:
            if self.cancelled:
                raise InputError("stopped while the nodes were starting")
            for node in sorted(waiting):
                if ready(node):
                    waiting.discard(node)
                    deadline = time.monotonic() + STARTED_WITHIN
                elif not self.up(node) or time.monotonic() > deadline:
                    said = _last_line(os.path.join(self.state_dir(node), "node.log"))
                    raise InputError(f"node {node} did not start{': ' + said if said else ''}")
            time.sleep(0.02)

    def __exit__(self, *_: object) -> None:
        self.close()

    def state_dir(self, node: int) -> str:
        return os.path.join(self.folder, str(node))

    def _spawn(self, node: int, wait_to_start: bool = False, join: bool = False) -> None:
        folder = self.state_dir(node)
        os.makedirs(folder, exist_ok=True)
        peers = ",".join(f"{i}@127.0.0.1:{self.ports[i]}" for i in self.roster.members if i != node)
        c = self.config
        election, mutex = split_name(self.algorithm)
        argv = [sys.executable, "-m", "playground", "node", "--id", str(node), "--listen", f"127.0.0.1:{self.ports[node]}",
                *(["--peers", peers] if peers else []), "--algorithm", election, "--state-dir", folder, "--timeout", repr(c.timeout),
                "--probe-interval", repr(c.probe_interval), "--delay", repr(c.delay_max), "--seed", str(self.seed),
                "--parent", str(os.getpid())]
        if c.coordinator_timeout is not None:
            argv += ["--coordinator-timeout", repr(c.coordinator_timeout)]
        for name in ("loss", "duplicate", "drift"):  # (each node breaks the model on its own links and clock)
            if value := getattr(c.faults, name):
                argv += [f"--{name}", repr(value)]
        if wait_to_start:
            argv += ["--wait-to-start"]
        if mutex is not None:
            w = self.workload or Workload()
            argv += ["--mutex", mutex, "--cs-think", "none" if w.think is None else "{!r}:{!r}".format(*w.think),
                     "--cs-hold", "{!r}:{!r}".format(*w.hold)]
        if join:
            argv += ["--join"]
        if self._across(node):
            argv += ["--held", ",".join(map(str, self._across(node)))]
        with open(os.path.join(folder, "node.log"), "ab") as err, signals.held():  # (tracked before a stop)
            self.processes[node] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                                    start_new_session=True)

    def up(self, node: int) -> bool:
        p = self.processes.get(node)
        return p is not None and p.poll() is None

    # --- commands ------------------------------------------------------------------

    def _allowed(self, command, logged: bool = True) -> str | None:
        """Why `command` cannot mean anything now, the simulation's rule (commands.Members:
        a crashed node crashed again, one that left recovered, ...), or None: then it is
        noted, and (`logged`) logged now. A process that ended by itself counts as crashed."""
        for node, p in self.processes.items():
            if p.poll() is not None and node not in self.roster.left:
                self.roster.down.add(node)
        refusal = self.roster.refusal(command)
        if refusal is None:
            self.roster.apply(command)
            if logged:
                self._log(command)
        return refusal

    def _log(self, command) -> None:
        name, args = command.words()
        self.log.append((time.time(), name, args))

    def submit(self, request: LiveCommand) -> str | None:
        """A command, the simulation's (core/commands.py), carried out now; or why it
        cannot mean anything now (one line), and then nothing is done. A relative T
        (ChangeTimeout) is the absolute one it is now; a join's newcomer without an id
        gets the next one."""
        command = self._resolve(request)
        if isinstance(command, str):
            return command
        return CARRIED_OUT[type(command)](self, command)

    def _resolve(self, request: LiveCommand) -> Command | str:
        """The command `request` is now, or why a real cluster cannot take it."""
        match request:
            case ChangeTimeout(by):
                timeout = self.config.timeout + by
                if not abs(by) <= timeout <= TIMEOUT.high:
                    return f"T stays {self.config.timeout:g}: it goes from {TIMEOUT.low:g} to {TIMEOUT.high:g} s"
                return SetTimeout(timeout)
            case Join() | Leave() if why := membership_refused(self.algorithm):
                return why
            case Join(None):
                return Join(max(self.ids) + 1)
            case Join(node) if node in self.ids:
                return f"node {node} is in the cluster already"
        if type(request) not in CARRIED_OUT:
            return f"a real cluster takes {', '.join(REAL_COMMANDS)}; not {getattr(request, 'name', request)} (yet)"
        return request

    def _crash(self, command: Crash) -> str | None:
        """SIGKILL: the process ends at once, its state file as it last wrote it. (Logged
        once it has ended: a line it wrote before is not put after its crash.)"""
        if (refusal := self._allowed(command, logged=False)) is None:
            self.processes[command.node].kill()
            self.processes[command.node].wait()
            self._log(command)
        return refusal

    def _recover(self, command: Recover) -> str | None:
        """The process again, from its state folder."""
        if (refusal := self._allowed(command)) is None:
            self._spawn(command.node)
        return refusal

    def _elect(self, command: Elect) -> str | None:
        """SIGUSR1: the node starts an election."""
        if (refusal := self._allowed(command)) is None:
            self.processes[command.node].send_signal(signal.SIGUSR1)
        return refusal

    def _want(self, command: WantCs) -> str | None:
        """With a mutex: the node asks for the critical section now."""
        if (refusal := want_refused(self.algorithm) or self._allowed(command)) is None:
            self._control(command.node, {"command": "want"})
        return refusal

    def _leave(self, command: Leave) -> str | None:
        """SIGUSR2: the node says Leave to the members and ends, for good."""
        if (refusal := self._allowed(command)) is None:
            self.processes[command.node].send_signal(signal.SIGUSR2)
        return refusal

    def _join(self, command: Join) -> str | None:
        """A new process: the members learn where it listens first, then it starts and
        sends Join to every one of them."""
        if (refusal := self._allowed(command, logged=False)) is not None:
            return refusal
        node = command.node
        self.ports[node] = free_ports(1)[0]
        for member in self.roster.members:
            if member != node:
                self._control(member, {"command": "peer", "id": node, "address": f"127.0.0.1:{self.ports[node]}"})
        self.ids = (*self.ids, node)
        self.merged.sources[node] = self._trace_path(node)
        self._log(command)
        self._spawn(node, join=True)
        return None

    def _timeout(self, command: SetTimeout) -> None:
        """A new T for every node, now and when one starts again."""
        self.config = self.config.with_timeout(command.seconds)
        self.log.append((time.time(), "timeout", (command.seconds,)))
        for node in self.ids:
            self._control(node, {"command": "timeout", "value": command.seconds})

    def _partition(self, command: Partition) -> str | None:
        """Cut a group off from the others, both ways: each holds its messages to the
        other side (they wait, in order) until `heal`; a node started again meanwhile
        too. The links held are the simulation's (settings.held_after: the pairs across
        at the time; a node that joins later is held from nobody)."""
        if (refusal := self._allowed(command)) is None:
            self.held = held_after(self.held, "partition", command.group, self.roster.members)
            for node in self.ids:
                self._control(node, {"command": "hold", "peers": self._across(node)})
        return refusal

    def _heal(self, command: Heal) -> None:
        self._allowed(command)
        self.held = frozenset()
        for node in self.ids:
            self._control(node, {"command": "release", "peers": [i for i in self.ids if i != node]})

    def _across(self, node: int) -> list[int]:
        """The peers `node` holds its messages to (a partition's other side; none if there is none)."""
        return sorted(b for a, b in self.held if a == node)

    def _control(self, node: int, command: dict | None) -> bool:
        """A command to a node that is up, through its control socket (control.py); or,
        with None, only whether it listens there yet."""
        return self.up(node) and control.send(self.state_dir(node), command)

    def close(self) -> None:
        """Every process stopped: SIGTERM to each at once, SIGKILL to those still running
        a second later (a signal that stops bully-tui meanwhile waits until they are)."""
        with signals.held():
            for p in self.processes.values():
                if p.poll() is None:
                    p.terminate()
            deadline = time.monotonic() + STOPPING
            for p in self.processes.values():
                try:
                    p.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    # --- reading what happened ------------------------------------------------------

    internals_unknown = "a real node's own variables stay inside its process"

    def internals(self, node: int) -> Internals | None:
        """What the node panel shows beyond the trace: its safe storage, as its state file
        has it (the node writes it after every step that changed it)."""
        try:
            storage = state.load(self.state_dir(node), machine(self.algorithm).storage_class, self.algorithm)
        except InputError:  # (being replaced this instant, or damaged: the panel says it is not known)
            return None
        return None if storage is None else Internals(self.up(node), {}, storage.as_dict())

    def events(self, final: bool = False) -> list[Event]:
        """What happened, as one run's trace events (merge.py): so far, read and merged
        where the last call left off; or, `final`, once the processes have ended, all of
        it at once (a last line a kill cut short left out)."""
        if final:
            return merge(self.algorithm, self.ids, self.config, self.log,
                         {node: read_trace(self._trace_path(node)) for node in self.ids}, self._sources())
        for node in self.ids:
            if node not in self._traces:
                self._traces[node] = TraceFile(self._trace_path(node))
        return self.merged.events(self.ids, self.log, {node: self._traces[node].read() for node in self.ids})

    def _sources(self) -> dict[int, str]:
        return {node: self._trace_path(node) for node in self.ids}

    def _trace_path(self, node: int) -> str:
        return os.path.join(self.state_dir(node), TRACE_FILE)




def _booted(path: str) -> bool:
    """Whether the node's trace says it has started (its first step)."""
    try:
        with open(path, "rb") as f:
            trace = f.read()
    except FileNotFoundError:
        return False
    return any(f'"kind":"{kind}"'.encode() in trace for kind in STARTS)


def _last_line(path: str) -> str:
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return ""
    return lines[-1].removeprefix("bully-tui: error: ")[:200] if lines else ""


# --- a headless real run -------------------------------------------------------------------

# What a real cluster takes, and how it carries each out (RealCluster.submit); their names.
CARRIED_OUT: dict[type[Command], Callable[[RealCluster, Command], str | None]] = {
    Crash: RealCluster._crash, Recover: RealCluster._recover, Elect: RealCluster._elect, Join: RealCluster._join,
    Leave: RealCluster._leave, SetTimeout: RealCluster._timeout, Partition: RealCluster._partition,
    Heal: RealCluster._heal, WantCs: RealCluster._want}
REAL_COMMANDS = tuple(cls.name for cls in CARRIED_OUT)
REAL_MOST_NODES = 64
REAL_UNTIL = 10.0  # real seconds a headless real run lasts unless --until says


def run_headless_real(session, until: float) -> dict[str, object]:
    """Run the session's nodes as processes for `until` real seconds, its commands at
    their times (seconds after the start); then merge the traces, write the transcript
    (if asked) and return the summary, as a simulated headless run does."""
    from dataclasses import replace

    from ..record.files import check_new
    from ..record.recorder import Recorder
    from ..record.summary import Summary

    cls = machine(session.algorithm)
    if session.transcript is not None:
        check_new(session.transcript, "transcript", session.overwrite)  # before anything runs
    with run_folder() as folder:
        with RealCluster(session.ids, session.algorithm, session.config, folder, session.seed, session.workload) as cluster:
            start = cluster.log[0][0]
            for scheduled in sorted(session.commands, key=lambda s: s.at):
                time.sleep(max(0.0, start + scheduled.at - time.time()))
                cluster.submit(scheduled.command)
            time.sleep(max(0.0, start + until - time.time()))
        events = cluster.events(final=True)
    if session.transcript is not None:
        with Recorder.create(session.transcript, replace(session.header, real=True), session.overwrite) as recorder:
            recorder(events)
    summary = Summary(session.ids, tuple(m.type for m in cls.messages), cls.mutex, session.config)
    summary(events)
    return {"algorithm": session.algorithm, "nodes": session.nodes, "seed": session.seed, "until": until, "real": True,
            **summary.report()}
