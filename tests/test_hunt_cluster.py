"""`bully-tui hunt --scheduler`: the random hunt on a Dask cluster (run/hunt_cluster.py).

The cluster is a local one of two worker processes, started once for the module and
shut down by it whatever happens; its tests are skipped, saying why, where `distributed`
(the `cluster` extra) is not installed. The hunt is a small one (three batches of
schedules, the finding in the second), cheap enough to run several times: test_hunt.py
runs it on one process and on two."""

from __future__ import annotations

import importlib.util
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.cli import main
from playground.run.hunt import BATCH, search
from playground.run.hunt_report import scenario_text
from tests.test_hunt import SECOND_BATCH_FINDS as HUNT

HUNT_ARGS = ["--algorithm", "classic", "--property", "sle2", "--nodes", "2:4", "--commands", "crash,recover,elect",
             "--seed", "4", "--budget", str(3 * BATCH)]
NO_DISTRIBUTED = "distributed (the cluster extra: pip install 'bully-tui[cluster]') is not installed"
WITHIN = 120  # seconds: a bound for what must end, not a verdict on speed
needs_distributed = pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason=NO_DISTRIBUTED)
pytestmark = pytest.mark.xdist_group("dask")  # (one test process, so one cluster: two would need four more processes)


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster, two worker processes of one thread each: its address."""
    if importlib.util.find_spec("distributed") is None:
        pytest.skip(NO_DISTRIBUTED)
    import logging

    from distributed import LocalCluster

    cluster = None
    try:
        cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
        yield cluster.scheduler_address
    finally:
        if cluster is not None:
            cluster.close()


@pytest.fixture(scope="module")
def alone():
    """The hunt on this one process."""
    return search(HUNT, 1)


@pytest.fixture(scope="module")
def watcher(scheduler):
    """A client of the cluster's, to count the tasks it holds."""
    from distributed import Client

    with Client(scheduler, set_as_default=False) as client:
        yield client


def tasks_on(watcher) -> int:
    return watcher.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


def until_no_task_is_left(watcher) -> None:
    """A batch a worker was running ends with its batch; the others do not start."""
    deadline = time.monotonic() + WITHIN
    while tasks_on(watcher):
        assert time.monotonic() < deadline, "the hunt's batches were left on the cluster"
        time.sleep(0.1)


def test_a_budget_finds_the_same_on_one_process_and_a_cluster(scheduler, watcher, alone):
    """(And on two processes: the same hunt, in test_hunt.py's
    test_a_search_is_the_same_however_many_processes_share_it.)"""
    from playground.run.hunt_cluster import on_cluster

    with on_cluster(scheduler) as batches:
        cluster = search(HUNT, batches=batches)
    assert alone.finding is not None and alone.batches == 2  # (found by the second batch: rule 4 is at work)
    assert cluster.finding == alone.finding
    assert cluster.searched == alone.searched
    assert cluster.batches == alone.batches
    until_no_task_is_left(watcher)  # (the third batch was not needed: cancelled)


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", "hunt", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=WITHIN, check=False)


def test_the_command_on_a_cluster_writes_the_scenario_byte_for_byte(tmp_path, scheduler, alone):
    argv = [*HUNT_ARGS, "--scheduler", scheduler, "-o", "found"]
    done = cli(tmp_path, *argv)
    assert (done.returncode, done.stderr) == (1, "")
    written = (tmp_path / "found.scenario").read_text()
    assert written == scenario_text(HUNT, alone.finding, " ".join(["bully-tui", "hunt", *argv]))
    assert f"searched {alone.searched.schedules:,} schedules" in done.stdout
    assert (tmp_path / "found.jsonl").is_file()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_says_one_line_writes_nothing_and_cancels_the_batches(tmp_path, scheduler, watcher, signum):
    """(Runs of two or three nodes: a batch a worker is running when the signal comes ends
    with its batch, so small ones keep the test cheap.)"""
    hunt = subprocess.Popen([sys.executable, "-m", "playground", "hunt", "--algorithm", "garcia-molina", "--property",
                             "sle1", "--nodes", "2:3", "--budget", "100000", "--scheduler", scheduler, "-o", "f"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WITHIN
        while tasks_on(watcher) == 0:  # the search is under way on the cluster
            assert hunt.poll() is None and time.monotonic() < deadline, hunt.communicate()
            time.sleep(0.1)
        hunt.send_signal(signum)
        out, err = hunt.communicate(timeout=WITHIN)
    finally:
        if hunt.poll() is None:
            hunt.kill()
            hunt.wait()
    assert hunt.returncode == 128 + signum
    assert out == "" and len(err.splitlines()) == 1, err
    said = "interrupted" if signum == signal.SIGINT else "stopped by SIGTERM"
    assert re.fullmatch(rf"bully-tui: {said}(; searched [0-9,]+ schedules, nothing found yet)?\n", err), err
    assert list(tmp_path.iterdir()) == []
    until_no_task_is_left(watcher)


def one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1, captured
    return captured.err


@needs_distributed
def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch, capsys):
    with socket.socket() as s:  # a port nobody listens on: said at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", "--scheduler", f"127.0.0.1:{port}", "--budget", "100"]) == 2
    assert one_line(capsys) == (f"bully-tui: error: --scheduler tcp://127.0.0.1:{port}: nothing listens there "
                                "(start a Dask scheduler there: dask scheduler)\n")
    assert list(tmp_path.iterdir()) == []


@needs_distributed
def test_a_port_that_listens_but_never_answers_is_one_line_within_its_bound(tmp_path, monkeypatch, capsys):
    from playground.run import hunt_cluster

    monkeypatch.setattr(hunt_cluster, "CONNECT_WITHIN", 1.0)
    monkeypatch.chdir(tmp_path)
    with socket.socket() as silent:  # (accepts connections, and says nothing)
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        assert main(["hunt", "--scheduler", f"127.0.0.1:{port}", "--budget", "100"]) == 2
    assert one_line(capsys) == (f"bully-tui: error: --scheduler tcp://127.0.0.1:{port}: no Dask scheduler answered "
                                "within 1 s (start one there: dask scheduler)\n")
    assert list(tmp_path.iterdir()) == []


def test_without_the_extra_the_line_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # (import distributed: ImportError)
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", "--scheduler", "tcp://127.0.0.1:8786", "--budget", "100"]) == 2
    assert one_line(capsys) == ("bully-tui: error: --scheduler needs Dask's distributed package: "
                                "pip install 'bully-tui[cluster]'\n")


@pytest.mark.parametrize(("args", "said"), [
    (["--scheduler", ""], "--scheduler must be a Dask scheduler's address, tcp://HOST:PORT, not ''"),
    (["--scheduler", "tcp://host"], "--scheduler must be a Dask scheduler's address, tcp://HOST:PORT, not 'tcp://host'"),
    (["--scheduler", "host:70000"], "not 'host:70000'"),
    (["--scheduler", "http://host:8786"], "a Dask scheduler is reached over tcp or tls, not http"),
    (["--scheduler", "host:8786", "--workers", "2"], "--workers and --scheduler do not go together"),
    (["--scheduler", "host:8786", "--exhaustive"], "--scheduler only applies to a random search"),
])
def test_bad_scheduler_arguments_are_one_line(tmp_path, monkeypatch, capsys, args, said):
    monkeypatch.chdir(tmp_path)
    assert main(["hunt", *args]) == 2
    assert said in one_line(capsys)
