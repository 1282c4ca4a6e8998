"""The command palette (ctrl+p): its commands come from Textual command providers
(playground/ui/palette.py), found as the user types, and act as the keys do."""

from __future__ import annotations

from textual.command import CommandPalette

from playground.ui.app import BullyApp
from playground.ui.palette import SimulationCommands, algorithm_commands, link_commands
from tests.test_app import advance, make_app, on_asyncio, palette, settled, wait_for


async def first_hit(pilot, app, text: str) -> None:
    """Until the open palette's first hit reads `text`: its list shows what it had before
    the query was typed for a while (on a busy machine, longer), and enter takes the first."""
    def first() -> str:
        hits = app.screen.query_one("CommandList")
        return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""

    await wait_for(pilot, lambda: text in first(), f"the palette's first hit to read {text!r}")


@on_asyncio
async def test_a_command_typed_in_the_palette_runs(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 5)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        listed = app.screen.query_one("CommandList")
        await wait_for(pilot, lambda: listed.option_count > 50, "the palette's list")
        titles = [str(listed.get_option_at_index(i).prompt).split("\n")[0] for i in range(listed.option_count)]
        assert titles[0].startswith("Algorithm: ") and titles == sorted(titles) and "Theme" in titles  # (one list)
        await pilot.press(*"crash node 3")
        await first_hit(pilot, app, "Crash node 3")
        await pilot.press("enter")
        await advance(pilot, app, 0.001)
        assert not app.model.nodes[3].up
        assert [line.text for line in app.model.log if line.kind == "command"] == ["user: crash 3"]


@on_asyncio
async def test_the_palette_offers_what_the_moment_allows_from_every_provider(tmp_path):
    assert BullyApp.COMMANDS == {SimulationCommands}  # (one list, sorted as it opens)
    app = make_app(tmp_path, nodes=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)
        await pilot.press("2")
        commands = await palette(app)
        assert {"Hold link 2→1", "Release link 2→4", "Select node 3", "Theme", "Quit"} <= set(commands)
        assert "Hold link 2→2" not in commands and "Leave: node 1" in commands  # (classic takes members)
        assert "Want the critical section: node 1" not in commands  # (no mutex)
        commands["Hold link 2→1"]()
        await advance(pilot, app, 0.001)
        assert app.state.held_links == {(2, 1)}
        commands["Select node 3"]()
        assert app.selected == 3 and app.panel.border_title == "node 3"


def test_the_real_view_offers_the_commands_a_real_cluster_takes():
    from playground.ui.real_app import RealApp

    [provider] = RealApp.COMMANDS
    assert not {link_commands, algorithm_commands} & set(provider.LISTS)  # (no single link held, no other algorithm)
