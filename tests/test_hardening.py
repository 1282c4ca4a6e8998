"""Every input either runs or gets one clear line, and nothing the user made is lost or
half-written (issue "Hardening"). Each case the adversarial tries found, and the class
behind it: one range per time value, files checked before they are read or written,
whole lines on disk whatever stops the run, and a transcript reader that trusts nothing."""

from __future__ import annotations

import errno
import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from playground.cli import main
from playground.core.commands import USAGE as COMMAND_USAGE
from playground.core.config import ClusterConfig, InputError
from playground.core.engine import Engine
from playground.core.monitor import PROPERTY_NAMES
from playground.record import recorder, transcript
from playground.record.reader import Reader, parse
from playground.run.progress import ECHO_ROOM, RunProgress, StderrShort
from protocol import ALGORITHMS

ROOT = Path(__file__).parent.parent


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.startswith("bully-tui: error: ") and err.count("\n") == 1 and "Traceback" not in err


# --- values that passed the checks and then crashed or hung -----------------------------

TOO_BIG_OR_TOO_SMALL = [
    (["--timeout", "1e302"], "--timeout must be from 0.001 s to 1,000,000 s, not 1e+302"),
    (["--nodes", "1000", "--timeout", "1e299"], "--timeout must be from 0.001 s to 1,000,000 s"),
    (["--delay", "0:1e308"], "maximum delay must be from 0 s to 1,000,000 s, not 1e+308"),
    (["--settle", "1e303"], "--settle must be from 0.001 s to 1,000,000,000 s"),
    (["--probe-interval", "1e302"], "--probe-interval must be 0 or from 0.001 s to 1,000,000 s"),
    (["--coordinator-timeout", "1e308"], "--coordinator-timeout must be from 0.001 s to 1,000,000 s"),
    (["--at", "1e303 crash 1"], "time must be from 0 s to 1,000,000,000,000 s, not 1e+303"),
    (["--at", "1 timeout 1e308"], "timeout must be from 0.001 s to 1,000,000 s, not 1e+308"),
    (["--at", "1 delay 1e308"], "minimum delay must be from 0 s to 1,000,000 s, not 1e+308"),
    (["--algorithm", "stoller", "--timeout", "1e-6"], "--timeout must be from 0.001 s to 1,000,000 s, not 1e-06"),
    (["--algorithm", "garcia-molina", "--probe-interval", "1e-9"], "--probe-interval must be 0 or from 0.001 s"),
]


@pytest.mark.parametrize("args, expected", [*TOO_BIG_OR_TOO_SMALL, (["--until", "1e303"], "--until must be from 0 s")])
def test_every_time_value_has_one_range_and_the_error_says_it_headless(capsys, args, expected):
    code, out, err = run(capsys, "--headless", *args)
    assert code == 2 and out == "" and one_line(err) and expected in err, err


@pytest.mark.parametrize("args, expected", TOO_BIG_OR_TOO_SMALL)
def test_the_live_app_refuses_them_before_it_starts(capsys, args, expected):
    code, _, err = run(capsys, *args)
    assert code == 2 and one_line(err) and expected in err, err


@pytest.mark.parametrize("text, expected", [
    ("set timeout 1e302\n", "line 1: timeout must be from 0.001 s to 1,000,000 s"),
    ("# big\n1 timeout 1e308\n", "line 2: timeout must be from 0.001 s to 1,000,000 s"),
    ("1 delay 1e308\n", "line 1: minimum delay must be from 0 s to 1,000,000 s"),
    ("set probe-interval 1e-9\n", "line 1: probe-interval must be 0 or from 0.001 s to 1,000,000 s"),
])
def test_scenario_files_get_the_same_ranges_with_their_line(tmp_path, capsys, text, expected):
    path = tmp_path / "s.scenario"
    path.write_text(text)
    code, _, err = run(capsys, "--headless", "--scenario", str(path))
    assert code == 2 and one_line(err) and f"{path} {expected}" in err, err


def test_the_keys_steps_stay_in_range_too():
    engine = Engine(ALGORITHMS["classic"], (1, 2), ClusterConfig(timeout=999_999.9, delay_min=999_999.9, delay_max=999_999.9), 1)
    from playground.core.commands import ChangeDelay, ChangeTimeout

    assert engine._resolve(ChangeTimeout(0.5)) is None and engine._resolve(ChangeDelay(0.25)) is None


def test_an_in_range_value_at_the_extremes_runs():
    code = main(["--headless", "--nodes", "2", "--timeout", "0.001", "--delay", "0.0001:0.0005", "--until", "0.1"])
    assert code == 0


# --- files ------------------------------------------------------------------------------


def test_nothing_is_written_when_the_input_is_bad(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    code, _, _ = run(capsys, "--headless", "--until", "1e303", "--transcript", str(path))
    assert code == 2 and not path.exists()
    path.write_text("my work")
    code, _, _ = run(capsys, "--headless", "--until", "1e303", "--transcript", str(path), "--overwrite")
    assert code == 2 and path.read_text() == "my work"


def test_a_device_as_scenario_is_refused_by_name(capsys):
    code, _, err = run(capsys, "--headless", "--scenario", "/dev/zero")
    assert code == 2 and one_line(err) and "cannot read scenario /dev/zero: it is not a regular file" in err


def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "f.scenario"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "--headless", "--scenario", str(fifo))  # would block for ever if opened for reading
    assert code == 2 and "it is not a regular file" in err


def test_a_scenario_is_read_with_a_size_limit(tmp_path, capsys):
    big = tmp_path / "big.scenario"
    big.write_text("# padding\n" * 200_000)  # 2 MB
    code, _, err = run(capsys, "--headless", "--scenario", str(big))
    assert code == 2 and one_line(err) and "it is over 1,000,000 bytes, too big for a scenario" in err


def test_an_empty_scenario_name_is_an_error(capsys):
    code, _, err = run(capsys, "--headless", "--scenario", "")
    assert code == 2 and one_line(err) and "the scenario file name is empty" in err


def test_a_scenario_saved_with_a_byte_order_mark_is_read(tmp_path, capsys):
    path = tmp_path / "windows.scenario"
    path.write_bytes("\ufeffset nodes 3\r\n5 crash 3\r\n".encode())
    code, out, _ = run(capsys, "--headless", "--scenario", str(path), "--until", "10")
    assert code == 0 and json.loads(out)["up"] == [1, 2]


def test_a_bad_set_line_is_named_and_a_command_line_value_is_not_blamed_on_the_scenario(tmp_path, capsys):
    path = tmp_path / "d.scenario"
    path.write_text("set nodes 4\nset timeout 0\n")
    code, _, err = run(capsys, "--headless", "--scenario", str(path))
    assert code == 2 and f"{path} line 2: timeout must be from 0.001 s" in err
    path.write_text("set nodes 4\n")
    code, _, err = run(capsys, "--headless", "--scenario", str(path), "--timeout", "0")
    assert code == 2 and err == "bully-tui: error: --timeout must be from 0.001 s to 1,000,000 s, not 0\n"


@pytest.mark.parametrize("where, expected", [("dir", "it is a directory"), ("/dev/null", "it is not a regular file")])
def test_a_transcript_path_that_is_a_directory_or_a_device_is_called_what_it_is(tmp_path, capsys, where, expected):
    path = str(tmp_path) if where == "dir" else where
    code, _, err = run(capsys, "--headless", "--transcript", path, "--overwrite")
    assert code == 2 and one_line(err) and f"cannot write transcript {path}: {expected}" in err


class FullDisk(io.BytesIO):
    """A file with room for `room` bytes, which then fails as a full disk does, having
    taken part of the write."""

    def __init__(self, room: int):
        super().__init__()
        self.room = room

    def write(self, data) -> int:
        left = self.room - self.tell()
        if left <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(bytes(data[:left]))

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()


def test_a_write_error_ends_the_run_with_one_line_and_keeps_only_whole_lines(monkeypatch, capsys, tmp_path):
    disk = FullDisk(room=20_000)
    monkeypatch.setattr(recorder, "open_to_write", lambda *args: disk)
    code, out, err = run(capsys, "--headless", "--nodes", "5", "--transcript", str(tmp_path / "t.jsonl"))
    assert code == 1 and out == "" and one_line(err)
    assert err == f"bully-tui: error: cannot write transcript {tmp_path / 't.jsonl'}: No space left on device\n"
    assert 0 < len(disk.kept) <= 20_000 and disk.kept.endswith(b"\n")
    assert parse(disk.kept).events  # every line whole, and the lines a valid transcript


def test_the_live_apps_temporary_recording_is_removed_on_sigterm_and_sighup(tmp_path):
    for signum in (signal.SIGTERM, signal.SIGHUP):
        folder = tmp_path / signum.name
        folder.mkdir()
        main_fd, child_fd = pty.openpty()
        env = {**os.environ, "TMPDIR": str(folder), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        app = subprocess.Popen([sys.executable, "-m", "playground.cli", "--nodes", "3"], cwd=ROOT, env=env,
                               stdin=child_fd, stdout=child_fd, stderr=child_fd, close_fds=True)
        os.close(child_fd)
        try:
            assert wait_until(lambda: list(folder.glob("bully-*.jsonl")), main_fd), "the app never started recording"
            app.send_signal(signum)
            assert wait_until(lambda: app.poll() is not None, main_fd), "the app did not quit"
        finally:
            if app.poll() is None:
                app.kill()
            os.close(main_fd)
        # (a hang-up leaves the app 0.3 s to quit before it ends at once, and then the guardian
        # removes the recording: a moment after the process has gone, on a busy machine)
        assert gone(lambda: list(folder.glob("bully-*.jsonl"))), signum.name


def gone(found, limit: float = 30.0) -> bool:
    """Whether what `found()` lists is gone within `limit` seconds."""
    deadline = time.monotonic() + limit
    while found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_until(condition, fd: int, limit: float = 30.0):
    """Wait for `condition`, reading (and dropping) what the app draws meanwhile."""
    deadline = time.monotonic() + limit
    while not (result := condition()):
        if time.monotonic() > deadline:
            return result
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
    return result


# --- the transcript reader ------------------------------------------------------------------------

HEADER = json.dumps({"format": "bully-transcript", "version": 3, "algorithm": "classic", "nodes": [1, 2, 3],
                     "seed": 1, "config": {"timeout": 4, "delay_min": 1, "delay_max": 1, "probe_interval": 0}})
STATE = '{"seq": 0, "t": 0.0, "kind": "state", "node": 3, "status": "normal", "leader": 3, "role": "normal", "epoch": 1}'


@pytest.mark.parametrize("lines, expected", [
    ([HEADER.replace('"seed": 1', '"seed": ' + "[" * 100_000 + "]" * 100_000)], "line 1: nested too deeply"),
    ([HEADER, STATE.replace('"t": 0.0', '"t": NaN')], "line 2: not valid JSON"),
    ([HEADER, STATE.replace('"t": 0.0', '"t": 1e999')], "line 2: "),
    ([HEADER.replace('"timeout": 4', '"timeout": NaN')], "line 1: not valid JSON (NaN is not a number in JSON)"),
    ([HEADER, STATE.replace('"leader": 3', '"leader": 99')], "line 2: field 'leader': 99 is not one of the header's nodes"),
    ([HEADER, '{"seq": 0, "t": 1.0, "kind": "agreement", "leader": 7}'], "field 'leader': 7 is not one of the header's"),
    ([HEADER, '{"seq": 0, "t": 1.0, "kind": "command", "command": "crash", "args": [9], "source": "user"}'],
     "field 'args': [9] names a node that is not one of the header's"),
    ([HEADER, "x" * 1_100_000], "line 2: longer than 1,000,000 bytes"),
    # Lines are parsed a block at a time: a line that spoils the block is still named alone.
    ([HEADER, STATE, f"{STATE.replace('0', '1', 1)},{STATE}"], "line 3: not valid JSON"),
    ([HEADER, STATE, "", STATE], "line 3: not valid JSON"),
    ([HEADER, STATE, STATE.replace('"seq": 0', '"seq": 1').replace('3', '9', 1) + "\n" + STATE[:20]],
     "line 3: field 'node': 9 is not one of the header's nodes"),  # not blamed on the cut last line
])
def test_the_reader_rejects_with_one_line(lines, expected):
    with pytest.raises(InputError) as info:
        parse(("\n".join(lines) + "\n").encode(), name="t.jsonl")
    assert expected in str(info.value) and "\n" not in str(info.value), str(info.value)
    assert ("mid-line" in str(info.value)) == ("mid-line" in expected)


def test_an_infinite_time_is_refused_even_where_json_reads_it():
    wide = HEADER.replace("[1, 2, 3]", f"[1, 2, {2**100}]")  # 128-bit ids: read by the json module
    with pytest.raises(InputError, match="line 2: field 't': expected a finite number of seconds, got inf"):
        parse(f"{wide}\n{STATE.replace('0.0', '1e999', 1)}\n".encode())


class CountingFile(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.read_so_far = 0

    def readline(self, limit: int = -1) -> bytes:
        line = super().readline(limit)
        self.read_so_far += len(line)
        return line


def test_the_reader_reads_a_block_of_lines_at_a_time_never_the_whole_file():
    events = "".join(STATE.replace('"seq": 0', f'"seq": {i}') + "\n" for i in range(10_000))
    data = f"{HEADER}\n{events}".encode()
    f = CountingFile(data)
    reader = Reader(f, "big.jsonl")
    first = next(reader.events())
    one_block = len(HEADER) + transcript.INDEX_BLOCK * (len(STATE) + 10)
    assert first.seq == 0 and f.read_so_far < one_block < len(data) / 10


# --- signals and long runs --------------------------------------------------------------


def test_ctrl_c_prints_one_line_exits_130_and_leaves_whole_lines(tmp_path):
    path = tmp_path / "long.jsonl"
    run_ = subprocess.Popen([sys.executable, "-m", "playground.cli", "--headless", "--nodes", "50", "--until", "1e12",
                             "--transcript", str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: path.exists() and path.stat().st_size > 100_000, run_.stderr.fileno())
        run_.send_signal(signal.SIGINT)
        out, err = run_.communicate(timeout=30)
    finally:
        if run_.poll() is None:
            run_.kill()
    assert run_.returncode == 130 and out == b""
    text = err.decode()
    assert text.startswith("bully-tui: interrupted at t=") and text.endswith(f"; the transcript so far is in {path}\n")
    assert text.count("\n") == 1
    data = path.read_bytes()
    assert data.endswith(b"\n") and parse(data).events  # whole lines, and valid


def test_progress_shows_after_a_second_on_a_terminal_only(monkeypatch):
    clock = iter([0.0, 0.5, 1.5, 1.7])
    monkeypatch.setattr("playground.run.progress.time.monotonic", lambda: next(clock))
    out = io.StringIO()
    engine = Engine(ALGORITHMS["classic"], (1, 2), ClusterConfig(), 1)
    with RunProgress(engine, 1e12, Console(file=out, force_terminal=True, width=100)) as progress:
        progress([])  # at 0.5 s: nothing yet
        assert out.getvalue() == ""
        progress([])  # at 1.5 s
        assert "of 1,000,000,000,000 s" in out.getvalue() and "events/s" in out.getvalue()


def test_the_progress_line_leaves_room_for_the_terminals_echo_of_ctrl_c(monkeypatch):
    """The terminal echoes Ctrl-C as "^C" at the cursor: at the end of a line as wide as
    the terminal the echo wrapped to the next line, and rich wiped that one on the way
    out, leaving the progress line on the screen above "interrupted"."""
    from playground.run.hunt_report import ExploreProgress

    monkeypatch.setenv("COLUMNS", "100")
    assert ECHO_ROOM >= len("^C") and StderrShort().width == 100 - ECHO_ROOM
    assert ExploreProgress()._display.console.width == 100 - ECHO_ROOM  # (a hunt's line too)


def test_no_progress_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    """Each look at the clock a second later: on a terminal the line would show at once."""
    seconds = iter(range(10**9))
    monkeypatch.setattr("playground.run.progress.time.monotonic", lambda: float(next(seconds)))
    code, _, err = run(capsys, "--headless", "--nodes", "7", "--until", "60")
    assert code == 0 and err == ""


# --- issue "Every input, every signal" -----------------------------------------------------

V3 = json.loads(HEADER)
STATE_EVENT = json.loads(STATE)


def transcript_file(tmp_path, header: dict, *events: dict) -> str:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, *events)))
    return str(path)


BAD_TRANSCRIPTS = [
    ({**V3, "algorithm": ["classic"]}, [], "line 1: field 'algorithm': unknown algorithm [\"classic\"]"),
    (V3, [{**STATE_EVENT, "kind": ["send"]}], "line 2: field 'kind': unknown event kind [\"send\"]"),
    ({**V3, "version": 2}, [{"seq": 0, "t": 0.0, "kind": "start", "node": [1]}], "line 2: field 'node': expected int, got [1]"),
    (V3, [{"seq": 0, "t": 1.0, "kind": "command", "command": "explode", "args": [], "source": "user"}],
     "line 2: field 'command': unknown command \"explode\""),
    (V3, [{"seq": 0, "t": 1.0, "kind": "command", "command": "crash", "args": [1, 2], "source": "user"}],
     "line 2: field 'args': crash takes one argument, not [1, 2]"),
    (V3, [{"seq": 0, "t": 1.0, "kind": "command", "command": "crash", "args": [3.0], "source": "user"}],
     "line 2: field 'args': [3.0] names a node that is not one of the header's"),
    (V3, [{"seq": 0, "t": 1.0, "kind": "command", "command": "timeout", "args": [1e300], "source": "user"}],
     "line 2: field 'args': timeout must be from 0.001 s to 1,000,000 s, not 1e+300"),
    (V3, [{"seq": 0, "t": 1.0, "kind": "violation", "property": "liveness", "phase": "begin", "nodes": [1], "leaders": [None]}],
     f"line 2: field 'property': expected one of {', '.join(PROPERTY_NAMES)}, got \"liveness\""),
    (V3, [{"seq": 0, "t": 1.0, "kind": "violation", "property": "sle1", "phase": "begin", "nodes": [1, 2], "leaders": [3]}],
     "line 2: field 'leaders': one for each of the 2 nodes, got 1"),
    (V3, [{"seq": 0, "t": 1.0, "kind": "violation", "property": "sle1", "phase": "during", "nodes": [1], "leaders": [3]}],
     "line 2: field 'phase': expected begin or end"),
    (V3, [{**STATE_EVENT, "role": "king"}], "line 2: field 'role': expected one of down, electing, waiting, normal"),
    (V3, [{**STATE_EVENT, "extra": json.loads("[" * 100 + "]" * 100)}], "line 2: field \"extra\": not a field of a state event"),
    ({**V3, "nodes": list(range(1, 5001))}, [], "line 1: field 'nodes': 5,000 nodes; a run has 1 to 1000"),
    ({**V3, "seed": -1}, [], "line 1: field 'seed': expected a whole number from 0 to 9223372036854775807, got -1"),
    ({**V3, "parent": "gone.jsonl"}, [], "line 1: field 'parent': expected {\"file\": NAME, \"seq\": N}, got \"gone.jsonl\""),
    (V3, [{**STATE_EVENT, "t": 1e300}], "line 2: field 't': 1e+300 s is out of range (0 to 1,000,000,000,000 s)"),
]


@pytest.mark.parametrize("header, events, expected", BAD_TRANSCRIPTS)
def test_verify_replay_and_export_refuse_a_bad_transcript_with_the_same_line(tmp_path, capsys, header, events, expected):
    from playground.cli.live import replay_app

    path = transcript_file(tmp_path, header, *events)
    lines = []
    for command in (["verify", path], ["export", path, "--format", "svg"], ["export", path, "--format", "shiviz"]):
        assert main(command) == 2
        out, err = capsys.readouterr()
        assert out == "" and one_line(err), err
        lines.append(err)
    with pytest.raises(InputError) as replay:
        replay_app(path)
    lines.append(f"bully-tui: error: {replay.value}\n")
    assert len(set(lines)) == 1 and f"{path} {expected}" in lines[0], lines


def test_a_header_of_155000_nodes_is_refused_at_once_not_simulated(tmp_path, capsys):
    path = transcript_file(tmp_path, {**V3, "nodes": list(range(1, 155_001))})
    started = time.monotonic()
    assert main(["verify", path]) == 2 and time.monotonic() - started < 5
    assert "line 1: longer than 1,000,000 bytes" in capsys.readouterr().err


@pytest.mark.parametrize("args, expected", [
    (["--timeout", "-inf"], "--timeout must be a finite number, not '-inf'"),
    (["--delay", "-1:1"], "minimum delay must be from 0 s to 1,000,000 s, not -1"),
    (["--nodes", "١٢"], "--nodes must be a whole number, not '١٢'"),
    (["--nodes", "3_0"], "--nodes must be a whole number, not '3_0'"),
    (["--at", "1_0 crash 1"], "time must be a number, not '1_0'"),
    (["--node", "3"], "unknown option --node"),
    (["--time", "4"], "unknown option --time"),
    (["--seed", "9" * 5000], "--seed must be from 0 to 9223372036854775807, not a 5,000-digit number"),
    (["--algorithm", "x" * 5000], "unknown --algorithm 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (5,000 characters)"),
    (["--at", "100 crash 1", "--until", "60"], "--at '100 crash 1': at 100 s, after the run ends at 60 s (--until)"),
    (["--at", "100 crash 1"], "at 100 s, after the run ends at 60 s (--until's default): it would never run"),
    (["--at", ""], "--at '': expected TIME COMMAND ARGS"),
    (["--at", "# a note"], "--at '# a note': expected TIME COMMAND ARGS"),
    (["--at", "5 leave 2", "--at", "6 crash 2"], "at 6 s, node 2 has left the cluster: crash cannot reach it"),
    (["--at", "5 leave 2", "--at", "6 recover 2"], "node 2 has left the cluster: recover cannot reach it"),
    (["--at", "5 leave 2", "--at", "6 elect 2"], "node 2 has left the cluster: elect cannot reach it"),
    (["--at", "5 leave 2", "--at", "6 leave 2"], "node 2 has left the cluster: leave cannot reach it"),
    (["--at", "5 leave 2", "--at", "6 hold 1 2"], "node 2 has left the cluster: hold cannot reach it"),
    (["--at", "5 leave 2", "--at", "6 partition 2,3"], "node 2 has left the cluster: partition cannot reach it"),
    (["--nodes", "2", "--at", "5 leave 2", "--at", "6 leave 1"], "node 1 is the last member: the cluster would be empty"),
    (["--nodes", "3", "--at", "5 leave 3", "--at", "6 partition 1,2"], "a partition cuts some members off from the others"),
    (["--at", "5 partition 1,,2"], "partition's nodes must be a comma-separated list, not '1,,2'"),
])
def test_what_cannot_mean_anything_is_refused_with_one_line_that_says_why(capsys, args, expected):
    code, out, err = run(capsys, "--headless", *args)
    assert code == 2 and out == "" and one_line(err) and expected in err, err
    assert len(err) < 200


def test_a_scenario_command_after_the_end_names_its_line(tmp_path, capsys):
    path = tmp_path / "late.scenario"
    path.write_text("set nodes 3\n10 crash 1\n90 recover 1\n")
    code, _, err = run(capsys, "--headless", "--scenario", str(path))
    assert code == 2 and f"{path} line 3: at 90 s, after the run ends at 60 s" in err
    path.write_text("set nodes 3\nset until 100\n10 crash 1\n90 recover 1\n")  # a scenario says how long it runs
    assert run(capsys, "--headless", "--scenario", str(path))[0] == 0


@pytest.mark.parametrize("subcommand", ["verify", "replay", "export"])
def test_subcommands_print_their_help_and_exit_0(capsys, subcommand):
    assert main([subcommand, "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"usage: bully-tui {subcommand} FILE") and err == ""


def test_the_main_help_names_the_subcommands_and_the_commands_of_at(capsys):
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # (argparse wraps the lines)
    assert all(f"bully-tui {name} FILE" in out for name in ("verify", "replay", "export"))
    assert all(usage in out for usage in COMMAND_USAGE.values())


def test_names_are_taken_in_any_case(capsys):
    assert run(capsys, "--headless", "--nodes", "3", "--until", "5", "--algorithm", "Garcia-Molina", "--ids", "UUID")[0] == 0
