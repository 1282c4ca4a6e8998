"""The command line: headless runs, and bad input that exits 2 with one line and runs nothing."""

import json
import subprocess
import sys

import pytest

from playground.cli import main


def headless(capsys, *args):
    code = main(["--headless", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_headless_prints_one_json_summary(capsys):
    code, out, err = headless(capsys, "--nodes", "10", "--delay", "1", "--timeout", "4", "--probe-interval", "0",
                              "--at", "20 crash 10", "--at", "20 elect 1", "--until", "60")
    assert (code, err) == (0, "")
    summary = json.loads(out)
    assert list(summary) == ["algorithm", "nodes", "seed", "until", "members", "up", "status", "leader", "messages", "dropped",
                             "elections_started", "rounds", "epoch", "violations"]
    # The whole run counts the start-up election too; its second round is the textbook's worst case.
    startup, crash = summary["rounds"]
    assert (crash["began"], crash["by"], crash["agreed"], crash["leader"]) == (20, 1, 26, 9)
    assert crash["messages"] == {"election": 45, "answer": 36, "coordinator": 9, "total": 90}
    assert summary["up"] == list(range(1, 10))
    assert summary["status"]["10"] == "down" and summary["status"]["1"] == "normal"
    assert summary["leader"] == {**{str(i): 9 for i in range(1, 10)}, "10": None}
    m = summary["messages"]
    assert m["total"] == sum(v for k, v in m.items() if k != "total")
    assert summary["dropped"] == 10  # 9 Elections and 1 Coordinator to the crashed 10
    assert len(set(summary["epoch"].values()) - {summary["epoch"]["10"]}) == 1  # the up nodes share one epoch
    assert summary["violations"] == []


def test_defaults_serve_a_demo_and_respect_the_synchrony_bound(capsys):
    code, out, err = headless(capsys)
    summary = json.loads(out)
    assert code == 0 and err == ""
    assert summary["nodes"] == 7 and summary["until"] == 60
    assert set(summary["leader"].values()) == {7}


def test_scenario_file_and_at_combine(tmp_path, capsys):
    scenario = tmp_path / "s.txt"
    scenario.write_text("# leader dies, node 1 notices\n20 crash 7\n\n20 elect 1  # the lowest\n")
    code, out, _ = headless(capsys, "--scenario", str(scenario), "--at", "40 recover 7", "--transcript",
                            str(tmp_path / "t.jsonl"))
    assert code == 0 and json.loads(out)["up"] == list(range(1, 8))
    commands = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()[1:]]
    commands = [(c["t"], c["command"], c["args"], c["source"]) for c in commands if c["kind"] == "command"]
    assert commands == [(20.0, "crash", [7], "scenario"), (20.0, "elect", [1], "scenario"), (40.0, "recover", [7], "at")]


def test_coordinator_timeout_not_above_T_runs_with_a_warning(capsys):
    code, _, err = headless(capsys, "--coordinator-timeout", "4", "--until", "10")
    assert code == 0 and err == "bully-tui: warning: coordinator timeout 4 <= timeout 4: " \
        "expect spurious re-elections (PROTOCOLS.md: T' must exceed T)\n"


def test_broken_synchrony_runs_with_a_warning(capsys):
    code, out, err = headless(capsys, "--timeout", "1", "--delay", "1", "--until", "10")
    assert code == 0 and json.loads(out)
    assert err.startswith("bully-tui: warning: timeout 1 < 2 x max delay 1") and err.count("\n") == 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("set nodes 0\n", "line 1: nodes must be from 1 to 1000, not 0"),
        ("\nset algorithm paxos\n", "line 2: unknown algorithm 'paxos'"),
        ("set colour red\n", "line 1: unknown setting 'colour' (expected one of: algorithm, nodes,"),
        ("set nodes\n", "line 1: expected set NAME VALUE"),
        ("set nodes 3\nset nodes 4\n", "line 2: nodes is already set on"),
        ("set nodes 3\n5 crash 4\n", "line 2: there is no node 4 (nodes are 1..3)"),
    ],
)
def test_bad_scenario_settings_are_named_by_line(tmp_path, capsys, text, expected):
    scenario = tmp_path / "s.scenario"
    scenario.write_text(text)
    code, out, err = headless(capsys, "--scenario", str(scenario))
    assert code == 2 and out == "" and f"{scenario} {expected}" in err and err.count("\n") == 1, err


def test_uuid_ids_are_128_bit_seeded_and_named_by_rank_in_commands(capsys):
    code, out, _ = headless(capsys, "--ids", "uuid", "--nodes", "4", "--at", "20 crash 4", "--until", "60")
    summary = json.loads(out)
    ids = sorted(int(i) for i in summary["status"])
    assert code == 0 and max(ids).bit_length() > 64 and len(ids) == 4
    assert summary["up"] == ids[:3]  # rank 4, the highest id, crashed
    assert {summary["leader"][str(i)] for i in ids[:3]} == {ids[2]}
    again = json.loads(headless(capsys, "--ids", "uuid", "--nodes", "4", "--until", "1")[1])
    assert sorted(int(i) for i in again["status"]) == ids  # the seed decides them


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--nodes", "0"], "--nodes must be from 1 to 1000, not 0"),
        (["--nodes", "seven"], "--nodes must be a whole number, not 'seven'"),
        (["--seed", "-1"], "--seed must be from 0 to 9223372036854775807, not -1"),
        (["--timeout", "-2"], "--timeout must be from 0.001 s to 1,000,000 s, not -2"),
        (["--timeout", "abc"], "--timeout must be a number, not 'abc'"),
        (["--timeout", "nan"], "--timeout must be a finite number"),
        (["--coordinator-timeout", "0"], "--coordinator-timeout must be from 0.001 s to 1,000,000 s, not 0"),
        (["--probe-interval", "-1"], "--probe-interval must be 0 or from 0.001 s to 1,000,000 s, not -1"),
        (["--delay", "2:1"], "minimum delay 2 is above maximum delay 1"),
        (["--delay", "x"], "minimum delay must be a number, not 'x'"),
        (["--until", "-5"], "--until must be from 0 s to 1,000,000,000,000 s, not -5"),
        (["--algorithm", "paxos"], "unknown --algorithm 'paxos' (choose from: classic, garcia-molina, stoller, ring, hs, invitation, epoch-bully, raft)"),
        (["--at", "5 kill 3"], "--at '5 kill 3': unknown command 'kill'"),
        (["--at", "5 crash 99"], "--at '5 crash 99': there is no node 99 (nodes are 1..7)"),
        (["--at", "5 crash"], "crash takes one argument: crash K"),
        (["--at", "soon crash 3"], "time must be a number, not 'soon'"),
        (["--at", "-1 crash 3"], "time must be from 0 s to 1,000,000,000,000 s, not -1"),
        (["--at", "5 timeout 0"], "timeout must be from 0.001 s to 1,000,000 s, not 0"),
        (["--at", "5 delay 3:1"], "minimum delay 3 is above maximum delay 1"),
        (["--scenario", "/nonexistent/s.txt"], "cannot read scenario /nonexistent/s.txt: No such file or directory"),
        (["--transcript", "/nonexistent/dir/t.jsonl"], "cannot write transcript /nonexistent/dir/t.jsonl"),
        (["--bogus"], "unknown option --bogus (bully-tui --help lists them)"),
        (["--until", "5", "extra"], "unexpected argument 'extra': options come as --NAME VALUE"),
        (["--ids", "guid"], "unknown --ids 'guid' (choose from: seq, uuid)"),
        (["--settle", "0"], "--settle must be from 0.001 s to 1,000,000,000 s, not 0"),
        (["--nodes"], "argument --nodes: expected one argument"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, expected):
    code, out, err = headless(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("bully-tui: error: ") and expected in err and err.count("\n") == 1, err


def test_a_bad_scenario_line_is_named_and_nothing_is_written(tmp_path, capsys):
    scenario = tmp_path / "s.txt"
    scenario.write_text("10 crash 3\n# fine so far\n12 explode 3\n")
    out_file = tmp_path / "t.jsonl"
    code, _, err = headless(capsys, "--scenario", str(scenario), "--transcript", str(out_file))
    assert code == 2 and f"{scenario} line 3: unknown command 'explode'" in err
    assert not out_file.exists()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--until", "5"], "--until only applies with --headless"),
        (["--headless", "--speed", "2"], "--speed only applies to the live app"),
        (["--speed", "0"], "--speed must be above 0 and at most 1000, not 0"),
        (["--speed", "fast"], "--speed must be a number, not 'fast'"),
    ],
)
def test_live_only_and_headless_only_options_are_checked(capsys, args, expected):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_the_installed_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "playground.cli", "--headless", "--nodes", "3", "--until", "5"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["nodes"] == 3


def test_live_app_refuses_an_existing_transcript_before_starting(tmp_path, capsys):
    mine = tmp_path / "notes.jsonl"
    mine.write_text("keep me")
    assert main(["--nodes", "7", "--transcript", str(mine)]) == 2
    assert "already exists; choose another name, or pass --overwrite" in capsys.readouterr().err
    assert mine.read_text() == "keep me"


@pytest.mark.parametrize("command", [["verify", "t.jsonl"], ["--headless", "--nodes", "3", "--until", "5"],
                                     ["hunt", "--algorithm", "ring", "--property", "sle1", "--budget", "5", "--workers", "1"]])
def test_a_closed_standard_output_is_one_line_and_exit_1(tmp_path, command):
    """`bully-tui verify t.jsonl >&-`: Python finds no standard output at all (sys.stdout
    is None), which is said as /dev/full is, not an AttributeError."""
    import os

    subprocess.run([sys.executable, "-m", "playground", "--headless", "--nodes", "3", "--until", "5", "--transcript",
                    "t.jsonl"], check=True, capture_output=True, cwd=tmp_path, timeout=60)
    done = subprocess.run([sys.executable, "-m", "playground", *command], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=tmp_path, timeout=120, preexec_fn=lambda: os.close(1))
    assert (done.returncode, done.stderr.decode()) == (1, "bully-tui: error: cannot write to standard output: it is closed\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_a_closed_standard_error_does_not_turn_a_success_into_a_failure(tmp_path):
    import os

    subprocess.run([sys.executable, "-m", "playground", "--headless", "--nodes", "3", "--until", "5", "--transcript",
                    "t.jsonl"], check=True, capture_output=True, cwd=tmp_path, timeout=60)
    done = subprocess.run([sys.executable, "-m", "playground", "verify", "t.jsonl"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, cwd=tmp_path, timeout=60, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0 and done.stdout.decode().startswith("t.jsonl: identical, ")
