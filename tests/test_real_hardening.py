"""Real nodes against bad input and signals (issue 29): every bad input one line, never a
traceback or a hang; every signal, at seeded moments, the status and the one line of
the simulation's, and nothing left behind (no run folder, no node process). Processes
and wall time, as in test_real_nodes.py: each wait is for a condition, with a deadline
that follows the work (`progressing`), never a fixed sleep standing in for one."""

from __future__ import annotations

import fcntl
import functools
import os
import pty
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.cli import main
from playground.core.commands import SetTimeout
from playground.real import control, wire
from playground.real.cluster import RealCluster
from playground.real.wire import FrameError
from tests import real_traces, signals_support
from tests.campaign.forkserver import at_defaults
from tests.test_app import on_asyncio
from tests.test_real_nodes import FAST, all_follow, free_port, progressing, wait_for

ROOT = Path(__file__).resolve().parent.parent
SEED = 29  # the moments signals are sent at


def _node(tmp_path, *extra: str) -> list[str]:
    return ["node", "--id", "1", "--listen", f"127.0.0.1:{free_port()}", "--state-dir", str(tmp_path / "n"), *extra]


# --- node: bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "says"), [
    (lambda d: (d / "state.json").write_text("[" * 100_000 + "]" * 100_000), "state.json is damaged: not JSON"),
    (lambda d: os.mkfifo(d / "state.json"), "state.json is not a file"),
    (lambda d: (d / "state.json").mkdir(), "state.json is not a file"),
    (lambda d: (d / "state.json").write_bytes(b" " * (2 << 20)), "state.json is not a node's state: 2,097,152 bytes"),
    (lambda d: (d / "control.sock").mkdir(), "control.sock is in the way"),
    (lambda d: (d / "control.sock").write_text("mine"), "control.sock is in the way"),
    (lambda d: os.mkfifo(d / "trace.jsonl"), "trace.jsonl is not a file"),
])
def test_what_is_in_the_way_in_a_state_folder_is_one_line_and_left_as_it_was(tmp_path, capsys, make, says):
    folder = tmp_path / "n"
    folder.mkdir()
    make(folder)
    before = {p.name: p.stat().st_mode for p in folder.iterdir()}
    assert main(_node(tmp_path)) == 2  # (in time: a FIFO blocked the node for ever)
    err = capsys.readouterr().err
    assert err.startswith("bully-tui: error: ") and says in err and err.count("\n") == 1
    assert {p.name: p.stat().st_mode for p in folder.iterdir()} == before  # (nothing made, nothing removed)


@pytest.mark.parametrize("flag", ["--seed", "--state-dir"])
def test_an_empty_value_is_refused_like_any_other(tmp_path, capsys, flag):
    argv = _node(tmp_path, flag, "")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bully-tui: error: {flag} must") and err.count("\n") == 1


# --- node: hostile control frames ------------------------------------------------------------

HOSTILE_COMMANDS = [
    ({"command": "hold", "peers": [[1]]}, "the peers of a hold command"),  # (was: unhashable type: 'list', the node died)
    ({"command": "hold", "peers": [True]}, "the peers of a hold command"),
    ({"command": "release", "peers": 2}, "the peers of a release command"),
    ({"command": "hold", "peers": [2], "also": 1}, "a hold command holds peers"),
    ({"command": "timeout", "value": "4"}, "the value of a timeout command"),
    ({"command": "timeout", "value": 1e999}, "the value of a timeout command"),
    ({"command": "timeout"}, "a timeout command holds value"),
    ({"command": "peer", "id": "2", "address": "127.0.0.1:1"}, "the id of a peer command"),
    ({"command": "peer", "id": 2**64, "address": "127.0.0.1:1"}, "the id of a peer command"),
    ({"command": "peer", "id": 2, "address": ["127.0.0.1", 1]}, "the address of a peer command"),
    ({"command": "peer", "id": 2, "address": "nowhere"}, "must be HOST:PORT"),
    ({"command": "peer", "id": 1, "address": "127.0.0.1:1"}, "names this node itself"),
    ({"command": "start", "at": None}, "the at of a start command"),
    ({"command": "start", "at": 1.0}, "not told to wait"),
    ({"command": "want"}, "without a mutex"),
    ({"command": ["hold"]}, "not a command"),
    ({"command": {"deep": [[[[[]]]]]}}, "not a command"),
    ({"commands": "hold"}, "not a command"),
]


@pytest.mark.parametrize(("frame", "says"), HOSTILE_COMMANDS)
def test_a_hostile_command_is_refused_saying_why(frame, says):
    with pytest.raises(FrameError, match=re.escape(says)):
        control.parse(frame, me=1, waits_to_start=False, mutex=False)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.dictionaries(st.sampled_from(["command", "peers", "value", "id", "address", "at", "x"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3),
                                                                                                inner, max_size=3),
                                    max_leaves=8)))
def test_any_object_is_a_command_or_a_refusal_never_an_error(obj):
    for waits, mutex in ((False, False), (True, True)):
        try:
            command = control.parse(obj, me=1, waits_to_start=waits, mutex=mutex)
        except FrameError:
            continue
        assert command[0] == obj["command"]


def test_hostile_control_frames_close_that_connection_and_the_node_goes_on(tmp_path):
    """Each on a connection of its own, and the node still takes a good command after:
    wrong types, nesting, a frame too big, bytes that are not JSON or not an object."""
    frames = [wire.frame(frame) for frame, _ in HOSTILE_COMMANDS] + [
        wire.line_frame(b"[" * 50_000 + b"]" * 50_000), wire.line_frame(b"not json"), wire.line_frame(b"[1, 2]"),
        struct.pack(">I", wire.MAX_FRAME + 1) + b"{}", wire.frame({"command": "timeout", "value": 4})[:6]]
    with RealCluster((1, 2), "epoch-bully", FAST, str(tmp_path)) as cluster:
        wait_for(cluster, all_follow(2, (1, 2)), within=10)
        for data in frames:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(tmp_path / "2" / "control.sock"))
                s.sendall(data)
        cluster.submit(SetTimeout(0.7))  # (the node is up, and obeys)
        trace = tmp_path / "2" / "trace.jsonl"
        progressing(lambda: '"kind":"timeout","value":0.7' in trace.read_text(), lambda: trace.stat().st_size,
                    why=lambda: (tmp_path / "2" / "node.log").read_text())
        log = tmp_path / "2" / "node.log"

        def refused() -> list[str]:
            return [line for line in log.read_text().splitlines() if "control connection" in line]

        # Refused: all but the cut frame (the connection merely ended), and those node 2 takes (it knows node 1
        # already, and a node of a cluster waits to be told to start).
        taken = [f for f, _ in HOSTILE_COMMANDS if f in ({"command": "peer", "id": 1, "address": "127.0.0.1:1"},
                                                         {"command": "start", "at": 1.0})]
        progressing(lambda: len(refused()) == len(frames) - 1 - len(taken), lambda: log.stat().st_size,
                    why=lambda: refused())
        assert cluster.up(2)
    assert all(line.startswith("node 2: closed a control connection: ") for line in refused())


# --- merge --------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "says"), [
    (real_traces.STRANGERS[0][1], "line 3: a line of node 99 in node 2's trace"),
    (real_traces.STRANGERS[1][1], "line 3: field 'dst' of a send line names node 99, not one of the nodes (1, 2)"),
    (real_traces.STRANGERS[2][1], "line 3: field 'leader' of a state line names node 99, not one of the nodes (1, 2)"),
    (real_traces.HOSTILE[-1], "line 3: not a node's trace line (kind \"boot\")"),  # (an older format's, after a header)
    (real_traces.HOSTILE[-2], "line 3: field 'msg': unknown classic message type \"paxos\""),
    (real_traces.STRANGERS[3][1], "line 3: not JSON"),  # (whole, its newline written: refused, not dropped as a cut line is)
])
def test_merge_refuses_a_line_it_cannot_place_naming_the_file_and_line(tmp_path, capsys, line, says):
    for node in (1, 2):
        (tmp_path / str(node)).mkdir()
        (tmp_path / str(node) / "trace.jsonl").write_bytes(real_traces.first_lines(node) + (line + b"\n" if node == 2 else b""))
    assert main(["merge", str(tmp_path / "1"), str(tmp_path / "2"), "-o", str(tmp_path / "m.jsonl")]) == 2
    assert capsys.readouterr().err == f"bully-tui: error: {tmp_path / '2' / 'trace.jsonl'} {says}\n"
    assert not (tmp_path / "m.jsonl").exists()


def test_merge_leaves_out_a_last_line_a_kill_cut_short_and_says_so(tmp_path, capsys):
    for node in (1, 2):
        (tmp_path / str(node)).mkdir()
        (tmp_path / str(node) / "trace.jsonl").write_bytes(real_traces.first_lines(node) + (real_traces.CUT_SHORT if node == 2
                                                                                             else b""))
    assert main(["merge", str(tmp_path / "1"), str(tmp_path / "2"), "-o", str(tmp_path / "m.jsonl")]) == 0
    out = capsys.readouterr()
    assert out.err == (f"bully-tui: warning: {tmp_path / '2' / 'trace.jsonl'} line 3 was cut short (no newline: its "
                       f"node was killed writing it): left out\n")
    assert out.out.endswith("events from 2 nodes\n")


def test_merge_refuses_a_trace_of_an_older_bully_tui_in_one_line(tmp_path, capsys):
    """Traces written before a node's lines were transcript lines are not read: one line
    says so, and nothing is written. A node started in such a folder refuses too."""
    old = '{"t":1.0,"lamport":0,"node":1,"kind":"boot","algorithm":"classic","ids":[1],"recovering":false}\n'
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "trace.jsonl").write_text(old)
    assert main(["merge", str(tmp_path / "1"), "-o", str(tmp_path / "m.jsonl")]) == 2
    assert capsys.readouterr().err == (f"bully-tui: error: {tmp_path / '1' / 'trace.jsonl'} line 1: a trace of an older "
                                       "bully-tui (its lines are not transcript lines): this one reads only the traces "
                                       "it writes; run the nodes again\n")
    assert not (tmp_path / "m.jsonl").exists()
    assert main(_node(tmp_path, "--state-dir", str(tmp_path / "1"))) == 2
    assert "trace.jsonl is a trace of an older bully-tui (its lines are not transcript lines), or no trace at all" \
        in capsys.readouterr().err
    assert (tmp_path / "1" / "trace.jsonl").read_text() == old


# --- signals ------------------------------------------------------------------------------


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}


def _ours(tmp: Path) -> list[int]:
    """The processes whose command line names `tmp` (a run's nodes live in a folder there)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(tmp).encode() in cmdline and state not in "ZX":
                found.append(int(entry))
    return found


def _nothing_left(tmp: Path) -> None:
    """No folder in the run's TMPDIR, no node process: what stops by itself (nodes whose
    cluster is gone, the guardian removing a killed run's folder) is waited for."""
    progressing(lambda: not os.listdir(tmp) and not _ours(tmp), lambda: (sorted(os.listdir(tmp)), _ours(tmp)),
                within=5, why=lambda: f"left: {os.listdir(tmp)}, processes {_ours(tmp)}")


MOMENTS = random.Random(SEED)
NODES = 6  # (more than a few, so that their start takes a while; each costs a quarter second of CPU to start)


@pytest.mark.parametrize(("signum", "moment"), [
    *((signal.SIGTERM, round(MOMENTS.uniform(0.3, 0.6), 3)) for _ in range(3)),  # (while the 6 processes start)
    (signal.SIGINT, round(MOMENTS.uniform(0.6, 2.0), 3)), (signal.SIGHUP, round(MOMENTS.uniform(0.3, 2.0), 3)),
    (signal.SIGKILL, round(MOMENTS.uniform(0.3, 2.0), 3)), (signal.SIGKILL, round(MOMENTS.uniform(2.0, 3.0), 3))])
def test_a_signal_to_a_headless_real_run_leaves_no_folder_and_no_process(tmp_path, signum, moment):
    tmp = tmp_path / "tmp"
    command = [sys.executable, "-m", "playground", "--real", "--headless", "--nodes", str(NODES), "--until", "60"]
    with signals_support.started(lambda stderr: subprocess.Popen(
            command, env=_env(tmp), cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
            text=True, start_new_session=True)) as (run, stderr):
        time.sleep(moment)  # (the moment is the test's input: when the signal comes)
        caught = signals_support.send(run, signum)
        out, err = signals_support.ended_after(run, signum, stderr, within=60)
        err = err.decode()
    # (Before bully-tui's first statement, on a busy machine, the interpreter's own ending: signals_support.)
    assert signals_support.ending(signum, caught, run.returncode, err) is not None and out == "", (caught, err)
    _nothing_left(tmp)


def test_a_node_started_with_ctrl_c_ignored_leaves_it_ignored_and_stops_on_sigterm(tmp_path):
    """A node a script starts in the background inherits SIGINT ignored: the Ctrl-C meant
    for the script is not the node's, and a cluster stops its nodes with SIGTERM."""
    node = subprocess.Popen([sys.executable, "-m", "playground", *_node(tmp_path)], env=_env(tmp_path / "tmp"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=functools.partial(at_defaults, signal.SIGINT))  # noqa: PLW1509
    trace = tmp_path / "n" / "trace.jsonl"
    try:  # (its receiver opens before its first step: once it has written, it holds what it takes)
        progressing(lambda: trace.exists() and trace.stat().st_size > 0 or node.poll() is not None,
                    lambda: trace.exists() and trace.stat().st_size, within=20, why=lambda: "the node never wrote")
        assert signals_support.taken_over(node.pid, signal.SIGTERM)
        assert not signals_support.taken_over(node.pid, signal.SIGINT)
        node.send_signal(signal.SIGINT)
        node.send_signal(signal.SIGTERM)
        _, err = node.communicate(timeout=60)
    finally:
        node.kill()
    assert (node.returncode, err) == (0, b"")


class Terminal:
    """A command run in a terminal of its own (a pty, 100 x 30), all it draws kept."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                        start_new_session=True)
        os.close(slave)
        self.master, self.drawn = master, bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # (the terminal's other end is closed: the command has ended)
                return
            if not data:
                return
            self.drawn += data

    def shows(self, text: str, within: float = 20.0) -> None:
        progressing(lambda: text.encode() in self.drawn, lambda: len(self.drawn), within=within,
                    why=lambda: f"{text!r} not drawn; exit {self.process.poll()}: {bytes(self.drawn[-600:])!r}")

    def ended(self) -> tuple[int, list[str]]:
        """Its status, and the lines it wrote after leaving the app's screen."""
        status = self.process.wait(timeout=30)
        self.reader.join(timeout=10)
        os.close(self.master)
        after = bytes(self.drawn).rsplit(b"\x1b[?1049l", 1)[-1].decode(errors="replace")
        plain = re.sub(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])", "", after)
        return status, [line.strip() for line in plain.replace("\r", "\n").splitlines() if line.strip()]


def _said(signum: int, lines: list[str]) -> None:
    """The simulation app's ending: its one line (a SIGHUP's watchdog may end it first,
    saying nothing: nobody is there to read it)."""
    line = "bully-tui: " + ("interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}")
    assert lines == [line] or (signum == signal.SIGHUP and lines == []), lines


LIVE_MOMENTS = [(s, round(MOMENTS.uniform(0.0, 1.5), 3)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]


@pytest.mark.parametrize(("signum", "moment"), LIVE_MOMENTS)
def test_a_signal_ends_the_real_live_view_as_it_ends_the_simulations(tmp_path, signum, moment):
    tmp = tmp_path / "tmp"
    terminal = Terminal([sys.executable, "-m", "playground", "--real", "--nodes", "3", "--timeout", "0.5"],
                        _env(tmp), tmp_path)
    try:
        terminal.shows("real run")  # (drawn once the nodes run)
        time.sleep(moment)
        terminal.process.send_signal(signum)
        status, lines = terminal.ended()
    finally:
        terminal.process.kill()
    assert status == 128 + signum, lines
    _said(signum, lines)
    _nothing_left(tmp)


@pytest.mark.parametrize(("signum", "moment"), LIVE_MOMENTS)
def test_a_signal_ends_attach_as_it_ends_the_simulation_app(tmp_path, signum, moment):
    tmp = tmp_path / "tmp"
    with RealCluster((1, 2), "epoch-bully", FAST, str(tmp_path / "nodes")) as cluster:
        wait_for(cluster, all_follow(2, (1, 2)), within=10)
        nodes = ",".join(f"{node}@127.0.0.1:{port}" for node, port in cluster.ports.items())
        terminal = Terminal([sys.executable, "-m", "playground", "attach", nodes], _env(tmp), tmp_path)
        try:
            terminal.shows("real run")
            time.sleep(moment)
            terminal.process.send_signal(signum)
            status, lines = terminal.ended()
        finally:
            terminal.process.kill()
        assert cluster.up(1) and cluster.up(2)  # (watched only: the nodes go on)
    assert status == 128 + signum, lines
    _said(signum, lines)
    assert not os.listdir(tmp)


def test_the_help_names_every_key_and_command_of_a_real_run(capsys):
    from playground.real.cluster import REAL_COMMANDS
    from playground.ui.cluster_screen import HELP_BINDING
    from playground.ui.real_app import RealApp

    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--real real")
    real = text[start:text.index("--transcript FILE", start)]
    assert all(f" {command}" in real for command in REAL_COMMANDS)
    keys = [b.key.split(",")[0] for b in RealApp.BINDINGS if b is not HELP_BINDING and b.action != "quit"]
    shown = {"plus": "+", "minus": "-"}
    assert len(keys) == 12 and all(f" {shown.get(key, key)} " in real for key in keys), (keys, real)


# --- what a newcomer sees -----------------------------------------------------------------------


@on_asyncio
async def test_the_real_view_at_80_columns_has_the_simulations_cards_and_one_status_line(tmp_path):
    """Cards of three lines (status, the next timer and its bar, messages and epoch), a
    status line that gives way part by part and stays one line, and a key that cannot act
    saying why in the simulation's way (not "waiting under None")."""
    from playground.cli.plan import plan
    from playground.ui.real_app import RealApp
    from tests.test_real_nodes import shown_within

    session = plan(["--real", "--nodes", "5", "--timeout", "0.5", "--probe-interval", "0.5"]).session
    app = RealApp(session, folder=str(tmp_path / "run"))
    async with app.run_test(size=(80, 24)) as pilot:
        def all_under(leader):
            return lambda: all(n.up and n.leader == leader for n in app.state.nodes.values())

        await shown_within(pilot, all_under(5), why=lambda: app.status.plain())
        await pilot.pause(0.3)  # (drawn)
        first, timer, counts = app.grid.node_text(1).splitlines()
        assert first.startswith("1 ") and "→5" in first and "probe" in timer and counts.startswith("↑")
        assert app.grid.cards[1].region.height == 5  # (the whole card: its rows laid out once they had content)
        line = app.status.render()
        assert "\n" not in line.plain and line.cell_length <= app.status.content_size.width
        assert "real run" in line.plain and "5 of 5 up" in line.plain and "T=0.5" in line.plain
        await pilot.press("x")  # the leader's process killed; then the selected one (5, the leader) again
        await pilot.press("c")
        await shown_within(pilot, lambda: any("down already" in n.message for n in app._notifications))
        assert "None" not in app.status.plain()


def test_the_real_status_line_gives_way_part_by_part_and_stays_one_line():
    from playground.core.config import ClusterConfig
    from playground.ui.real_status import running, starting
    from playground.ui.status_bar import Status, fit

    status = Status(12.5, 1.0, False, None, ClusterConfig(timeout=4.0), 3, False, 22, 20, held_links=2)
    forms = running(status, 15, 16)
    widths = {width: fit(forms, width).plain for width in (160, 120, 80, 60, 40)}
    assert all(len(text) <= width and "\n" not in text for width, text in widths.items())
    assert "no time travel: a real run is not deterministic" in widths[160] and "15 of 16 up" in widths[120]
    assert widths[40].startswith("t=12.50s real run")  # (at the narrowest: the time, and that it is real)
    assert [len(text) for text in widths.values()] == sorted((len(t) for t in widths.values()), reverse=True)
    assert fit(starting(1), 80).plain.startswith("starting 1 node process: ")
