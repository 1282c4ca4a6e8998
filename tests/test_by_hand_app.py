"""You are the network, in the app (issue 33): `b` (or --by-hand) opens a pane of the
messages in flight and the timers set; each key is a command the run records; leaving
gives the network back to the clock."""

from playground.cli.plan import plan
from playground.core.commands import DeliverMessage
from playground.ui.app import BullyApp
from playground.ui.by_hand_screen import ByHandScreen
from playground.ui.network_pane import Row
from tests.test_app import advance, make_app, on_asyncio, settled, wait_for


def commands(app: BullyApp) -> list[str]:
    return [line.text.removeprefix("user: ") for line in app.model.log if line.kind == "command"]


async def at_rest(pilot, app: BullyApp, screen: ByHandScreen) -> None:
    """The run has done what was asked, and the pane shows it."""
    await settled(pilot, app)
    screen.look()
    await pilot.pause()


async def by_hand(pilot, app: BullyApp) -> ByHandScreen:
    """`b` pressed 0.2 s into the run (the start-up's Elections in flight): the pane, at rest."""
    await advance(pilot, app, 0.2)
    await pilot.press("b")
    screen = app.screen
    assert isinstance(screen, ByHandScreen)
    await at_rest(pilot, app, screen)
    return screen


@on_asyncio
async def test_b_makes_you_the_network_and_each_key_is_a_recorded_command(tmp_path):
    app = make_app(tmp_path, nodes=5)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await by_hand(pilot, app)
        engine = app.live.cluster.engine
        assert engine.hand and commands(app) == ["by-hand"]
        flights = engine.links.flights()
        rows = screen.pane.rows
        assert [r.msg for r in rows if r.msg is not None] == [f.id for f in flights]
        assert [(r.node, r.timer) for r in rows if r.timer] == sorted(
            ((n, name) for n, h in engine.hosts.items() for name in h.timers), key=lambda t: engine.hosts[t[0]].timers[t[1]][0])
        first, second = flights[0].id, flights[1].id
        await pilot.press("x")  # drop the first
        await at_rest(pilot, app, screen)
        await pilot.press("u")  # duplicate what is selected now: the same place, the next message
        await at_rest(pilot, app, screen)
        await pilot.press("enter")  # deliver it
        await at_rest(pilot, app, screen)
        assert commands(app) == ["by-hand", f"drop {first}", f"duplicate {second}", f"deliver {second}"]
        assert app.state.nodes[flights[1].dst].received  # it arrived
        assert any(r.msg == second and "(copy)" in r.text for r in screen.pane.rows)  # the copy still in flight
        await pilot.press("end", "f")  # the last row: a timer
        await at_rest(pilot, app, screen)
        assert commands(app)[-1].startswith("fire ")
        clock = app.live.cluster.clock_time()
        await pilot.press("b")
        await settled(pilot, app)
        assert not isinstance(app.screen, ByHandScreen) and not engine.hand
        assert commands(app)[-1] == "by-clock" and app.live.paused  # it was paused when the mode began
        assert abs(app.live.cluster.clock_time() - clock) < 1e-3  # the clock stood still: microseconds a step


@on_asyncio
async def test_a_message_no_longer_in_flight_is_refused_in_one_line_and_not_recorded(tmp_path):
    app = make_app(tmp_path, nodes=4)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await by_hand(pilot, app)
        before = commands(app)
        app.request(DeliverMessage(999_999), "deliver 999999")
        await at_rest(pilot, app, screen)
        assert commands(app) == before
        notes = [n.message for n in app._notifications]
        assert "Message 999999 is not in flight: it has arrived or been dropped, or was never sent." in notes


@on_asyncio
async def test_by_hand_from_the_start_and_back_to_the_clock_which_runs_on(tmp_path):
    session = plan(["--nodes", "4", "--by-hand", "--loss", "0.3"]).session
    app = BullyApp(session, save_dir=str(tmp_path), by_hand=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ByHandScreen) and app.live.cluster.engine.hand,
                       "the pane and the mode")
        await settled(pilot, app)
        assert app.model.state.nodes[1].up and app.live.cluster.clock_time() < 1e-3  # booted, and standing still
        lost = {f.id for f in app.live.cluster.engine.links.flights() if f.lost}
        assert lost and {r.msg for r in app.screen.pane.rows if r.muted} == lost  # drawn dim: it will only be dropped
        await pilot.press("space")  # the clock stands still: said, not done
        assert app.live.paused
        await pilot.press("b")
        await wait_for(pilot, lambda: app.live.cluster.clock_time() > 1, "the clock to run again")


@on_asyncio
async def test_a_key_draws_a_screenful_of_the_pane_whatever_is_in_flight(tmp_path):
    """Ten thousand messages in flight: a key redraws what is on screen, not ten thousand
    rows (a count of the rows drawn, not a time)."""
    app = make_app(tmp_path, nodes=4)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await by_hand(pilot, app)
        screen.look = lambda: None  # (the rows below stay: no look at the run)
        screen.pane.show([Row(f"#{k} 1→2 Election  due 1.000", msg=k) for k in range(10_000)])
        await pilot.pause()
        drawn = []
        render = screen.pane.render_line
        screen.pane.render_line = lambda y: drawn.append(y) or render(y)
        await pilot.press("pagedown", "down", "end")
        await pilot.pause()
        assert screen.pane.picked.msg == 9_999
        assert 0 < len(drawn) <= 3 * screen.pane.size.height
