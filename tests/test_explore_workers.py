"""The exhaustive search on several processes (run/explore_workers.py): the same counts
and the same finding as on one, and a signal that stops the search ends its workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.core.config import ClusterConfig
from playground.core.monitor import MUTEX, SLE1
from playground.run import explore as explore_module
from playground.run.explore import Bounds, Model, explore
from tests.serve_client import children

EDGE = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)


@pytest.mark.parametrize(("model", "prop", "bounds"), [
    (Model("classic", 3, EDGE), SLE1, Bounds(faults=1)),  # a finding, 10,913 states
    (Model("ring", 3, EDGE, timed=False), None, Bounds(faults=0, most=20_000)),  # a ring's layout: equal only to itself
    (Model("classic", 2, EDGE, network=frozenset({"drop", "reorder"})), None, Bounds(faults=0, elects=1)),
    (Model("garcia-molina", 3, EDGE), None, Bounds(faults=1, most=3000)),  # cut by the states bound
    (Model("classic+lamport", 3, EDGE), MUTEX, Bounds(faults=1, requests=2, most=3000)),  # a class made at run time
], ids=["fifo-finding", "ring-async", "network-drop", "states-bound", "lock"])
def test_workers_count_and_find_as_one_process(monkeypatch, model, prop, bounds):
    """On two workers and on three, each compared with the one search on one process."""
    monkeypatch.setattr(explore_module, "SHARED_FROM", 2)  # (shared from the second level or so)
    found, alone = explore(model, prop, bounds, workers=1)
    assert alone.states > 400  # (wide enough to be shared)
    for workers in (2, 3):
        found_shared, shared = explore(model, prop, bounds, workers=workers)
        assert found_shared == found, workers
        # (the counts, not the bytes: the tables' copies)
        counts = [(e.states, e.steps, e.deepest, e.bound) for e in (alone, shared)]
        assert counts[1] == counts[0], workers


@pytest.mark.parametrize(("signum", "whole_group"), [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_a_signal_mid_search_is_one_line_writes_nothing_and_ends_the_workers(tmp_path, signum, whole_group):
    """Ctrl-C reaches the whole process group (the workers ignore it: the search ends
    them); SIGTERM, the search's process alone."""
    search = subprocess.Popen([sys.executable, "-m", "playground", "hunt", "--exhaustive", "--workers", "2",
                               "--algorithm", "garcia-molina", "--faults", "2"], cwd=tmp_path, start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        workers = children(search.pid)
        deadline = time.monotonic() + 60
        while len(workers) < 2 and search.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # (the workers are forked once a level is wide enough)
            workers = children(search.pid)
        assert len(workers) == 2, workers
        (os.killpg if whole_group else os.kill)(search.pid, signum)
        out, err = search.communicate(timeout=60)
    finally:
        if search.poll() is None:
            search.kill()
    assert search.returncode == 128 + signum
    assert err.count("\n") == 1 and err.startswith("bully-tui: "), err
    assert out == "" and list(tmp_path.iterdir()) == []
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or _state(pid) == "Z", pid  # (a zombie: ended, not yet reaped)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
