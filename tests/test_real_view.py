"""The live view of a real cluster (playground/ui/real_app.py) over real processes: a
leader killed and recovered from disk, the view drawn while the nodes start, a cluster
that cannot start. Each waited for with a deadline (tests/test_real_nodes.py)."""

from __future__ import annotations

from playground.record.reader import load
from playground.ui.help_screen import HelpScreen
from tests.test_app import on_asyncio
from tests.test_real_nodes import shown_within


@on_asyncio
async def test_the_live_view_kills_the_leader_shows_the_re_election_and_recovers_it_from_disk(tmp_path):
    from playground.cli.plan import plan
    from playground.ui.real_app import RealApp

    session = plan(["--real", "--nodes", "4", "--algorithm", "epoch-bully", "--timeout", "0.5",
                             "--probe-interval", "0.5", "--transcript", str(tmp_path / "live.jsonl")]).session
    app = RealApp(session, folder=str(tmp_path / "run"), save_dir=str(tmp_path))

    async def until(pilot, check):
        await shown_within(pilot, check, why=lambda: app.status.plain())

    def all_under(leader, nodes):
        return lambda: all(app.state.nodes[i].up and app.state.nodes[i].leader == leader for i in nodes)

    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, all_under(4, (1, 2, 3, 4)))
        panel = " ".join(app.panel.shown_text().split())  # the selected node, 4: its storage from its state file
        assert "safe storage" in panel and "epoch: " in panel and "not known: a real node's own" in panel
        await pilot.press("d")
        assert app.log_view.diagram
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("x")  # kill the leader
        assert not app.cluster.up(4)
        await until(pilot, all_under(3, (1, 2, 3)))
        assert "down" in app.grid.node_text(4) and "no time travel" in app.status.plain()
        await pilot.press("s")  # the run so far, as a transcript
        saved = load(str(app.saved))
        assert app.saved.parent == tmp_path and saved.header.real and any(e.kind == "crash" for e in saved.events)
        await pilot.press("4", "r")  # select it, recover it: from its state folder
        await until(pilot, all_under(4, (1, 2, 3, 4)))
        await pilot.press("j")  # a new process, node 5, joins (and leads: epoch-bully's highest)
        await until(pilot, all_under(5, (1, 2, 3, 4, 5)))
        assert "5" in app.grid.node_text(5)
        await pilot.press("plus")  # T on every node
        assert app.cluster.config.timeout == 1.0
        await until(pilot, lambda: "T=1" in app.status.plain())  # (the status line is drawn as the cluster is polled)
        await pilot.press("1", "p")  # node 1 cut off: it stands alone, and leads itself
        await until(pilot, lambda: app.state.nodes[1].leader == 1)
        await pilot.press("P")
        await until(pilot, all_under(5, (1, 2, 3, 4, 5)))
        processes = list(app.cluster.processes.values())
    assert all(p.poll() is not None for p in processes)  # quitting stopped them all
    transcript = load(str(tmp_path / "live.jsonl"))
    assert transcript.header.real and [e.kind for e in transcript.events if e.kind in ("crash", "recover", "join")] == \
        ["crash", "recover", "join"]


@on_asyncio
async def test_the_live_view_is_drawn_while_the_nodes_start_and_quitting_then_stops_every_one(tmp_path):
    from playground.cli.plan import plan
    from playground.ui.real_app import RealApp

    session = plan(["--real", "--nodes", "8"]).session
    app = RealApp(session, folder=str(tmp_path / "run"))
    async with app.run_test(size=(100, 30)) as pilot:
        assert "starting 8 node processes" in app.status.plain()
        await pilot.press("x")
        assert "the nodes are still starting" in [n.message.rstrip(".").lower() for n in app._notifications][-1]
        starting = app._starting
        await shown_within(pilot, lambda: starting.processes)  # (quit once some are running)
    assert starting.processes and all(p.poll() is not None for p in starting.processes.values())
    assert app.failure is None


@on_asyncio
async def test_a_cluster_that_cannot_start_ends_the_live_view_with_one_line(tmp_path):
    from playground.cli.plan import plan
    from playground.ui.real_app import RealApp

    (tmp_path / "file").write_text("not a folder")
    session = plan(["--real", "--nodes", "2"]).session
    app = RealApp(session, folder=str(tmp_path / "file" / "run"))
    async with app.run_test(size=(100, 30)) as pilot:
        await shown_within(pilot, lambda: app.failure is not None)
    assert app.failure.startswith("cannot start the nodes: ") and "\n" not in app.failure


