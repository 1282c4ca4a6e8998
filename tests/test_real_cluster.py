"""The real cluster (playground/real/cluster.py) as a program sees it, without starting
node processes where a test can do without: its run folder, how it stops its processes,
and the commands it takes."""

from __future__ import annotations

import os
import subprocess

from playground.real import cluster as cluster_module
from playground.real.cluster import RealCluster, run_folder
from playground.record import guard


def test_the_guardian_is_started_before_the_run_folder_is_made(monkeypatch):
    """A SIGKILL between the folder's making and the guardian's start left a bully-real-*
    behind: the guardian (a process, milliseconds to start) comes first."""
    calls = []
    monkeypatch.setattr(guard, "start", lambda: calls.append("guardian started"))
    monkeypatch.setattr(guard, "remove_if_left", lambda path: calls.append("guardian told"))
    made = cluster_module.tempfile.mkdtemp

    def mkdtemp(**kwargs):
        calls.append("folder made")
        return made(**kwargs)

    monkeypatch.setattr(cluster_module.tempfile, "mkdtemp", mkdtemp)
    with run_folder() as folder:
        assert os.path.isdir(folder)
    assert calls == ["guardian started", "folder made", "guardian told"]
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
