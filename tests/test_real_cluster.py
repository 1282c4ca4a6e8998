"""The real cluster (playground/real/cluster.py) as a program sees it, without starting
node processes where a test can do without: its run folder, how it stops its processes,
and the commands it takes."""

from __future__ import annotations

import os
import subprocess

from playground.core.commands import ChangeTimeout, Heal, HoldLink, Join, Leave, SetDelay
from playground.real import cluster as cluster_module
from playground.real.cluster import REAL_COMMANDS, RealCluster, run_folder
from playground.record import guard
from tests.test_real_nodes import FAST


def test_the_guardian_is_started_before_the_run_folder_is_made(monkeypatch):
    """A SIGKILL between the folder's making and the guardian's start left a bully-real-*
    behind: the guardian (a process, milliseconds to start) comes first."""
    calls = []
    monkeypatch.setattr(guard, "start", lambda: calls.append("guardian started"))
    monkeypatch.setattr(guard, "remove_if_left", lambda path: calls.append("guardian told"))
    monkeypatch.setattr(guard, "done", lambda action, path: calls.append("guardian done"))
    made = cluster_module.tempfile.mkdtemp

    def mkdtemp(**kwargs):
        calls.append("folder made")
        return made(**kwargs)

    monkeypatch.setattr(cluster_module.tempfile, "mkdtemp", mkdtemp)
    with run_folder() as folder:
        assert os.path.isdir(folder)
    assert calls == ["guardian started", "folder made", "guardian told", "guardian done"]
    assert not os.path.exists(folder)


def test_close_measures_its_second_on_the_monotonic_clock(monkeypatch):
    """A wall clock set back while the cluster stops would have made it wait that much
    longer for a process that ignores SIGTERM: the deadline is monotonic."""
    waits = []

    class Stubborn:  # (a process that ignores SIGTERM)
        returncode = None

        def poll(self):
            return self.returncode

        def terminate(self):
            pass

        def wait(self, timeout=None):
            waits.append(timeout)
            if timeout is not None:
                raise subprocess.TimeoutExpired("node", timeout)
            self.returncode = -9

        def kill(self):
            pass

    wall = iter([1000.0, 0.0, 0.0])  # (set back a thousand seconds as the cluster stops)
    monkeypatch.setattr(cluster_module.time, "time", lambda: next(wall, 0.0))
    cluster = RealCluster.__new__(RealCluster)
    cluster.processes = {1: Stubborn()}
    cluster.close()
    assert waits[0] <= cluster_module.STOPPING and waits[1:] == [None]


def test_the_cluster_takes_the_simulations_typed_commands_and_says_why_it_cannot(tmp_path):
    """One `submit(command)`, the simulation's commands (core/commands.py): what a real
    cluster cannot do yet, or what cannot mean anything now, is one line and nothing
    done; a relative T is the absolute one it is now, logged as such."""
    cluster = RealCluster((1, 2, 3), "epoch-bully", FAST, str(tmp_path))  # (no process started: none is up)
    assert cluster.submit(HoldLink(1, 2)) == f"a real cluster takes {', '.join(REAL_COMMANDS)}; not hold (yet)"
    assert cluster.submit(SetDelay(0, 1)).endswith("not delay (yet)")
    assert cluster.submit(ChangeTimeout(0.5)) is None
    assert cluster.config.timeout == 1.0 and cluster.log[-1][1:] == ("timeout", (1.0,))
    assert cluster.submit(ChangeTimeout(-1.0)) == "T stays 1: it goes from 0.001 to 1e+06 s"
    assert cluster.submit(Join(2)) == "node 2 is in the cluster already"
    assert cluster.submit(Heal()) is None and cluster.log[-1][1:] == ("heal", ())
    assert set(REAL_COMMANDS) == {"crash", "recover", "elect", "join", "leave", "timeout", "partition", "heal", "want"}
    raft = RealCluster((1, 2, 3), "raft", FAST, str(tmp_path / "raft"))
    assert raft.submit(Join()).startswith("raft cannot add or remove nodes")
    assert raft.submit(Leave(1)).startswith("raft cannot add or remove nodes")
