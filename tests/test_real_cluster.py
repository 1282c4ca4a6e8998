"""The real cluster (playground/real/cluster.py) as a program sees it, without starting
node processes where a test can do without: its run folder, how it stops its processes,
and the commands it takes."""

from __future__ import annotations

import os

from playground.real import cluster as cluster_module
from playground.real.cluster import run_folder
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
