"""Why each thing happened, on screen: the log's lines end with the rule that made them,
the node panel says the last rule each node applied with its sentence, and a log line
picked (y and Y, or a click) shows what made it; the state keeps each node's last rule
through time travel. (The rules themselves: tests/test_rules_declared.py.)"""

from __future__ import annotations

from contextlib import asynccontextmanager

from playground.core.config import ClusterConfig
from playground.core.events import SendEvent, StateEvent
from playground.record.labels import rule_sentence
from playground.run.state import ClusterState
from playground.ui.message_log import MessageLog
from protocol.classic import ClassicStatus, Election
from tests.support import at
from tests.test_app import advance, make_app, on_asyncio, settled, wait_for


@asynccontextmanager
async def five_nodes(tmp_path, seconds: float, size: tuple[int, int] = (120, 36)):
    """A paused app of five nodes, `seconds` into its run: (app, pilot)."""
    app = make_app(tmp_path, nodes=5)
    async with app.run_test(size=size) as pilot:
        await advance(pilot, app, seconds)
        yield app, pilot


def plain(text: str) -> str:
    """The panel's text with its wrapping undone."""
    return " ".join(text.split())


@on_asyncio
async def test_the_log_says_which_rule_made_each_send_and_change_of_state(tmp_path):
    app = make_app(tmp_path, nodes=5)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("h")  # the detector's traffic too
        await advance(pilot, app, 12)
        texts = [line.text for line in app.model.log]
        assert "1→2 Election #0 · rule 1" in texts  # the algorithm's own: "rule N"
        assert "node 1 election, leader none · rule 1" in texts
        probes = [line.text for line in app.model.log if line.kind == "send" and line.topic == "Probe"]
        assert probes and all(text.endswith(" · probing 1") for text in probes)  # shared code's: its own word
        delivered = [line for line in app.model.log if line.kind == "deliver"]
        assert delivered and not any(line.rule or "·" in line.text for line in delivered)  # the network's


@on_asyncio
async def test_the_panel_says_the_last_rule_each_node_applied_and_its_sentence(tmp_path):
    app = make_app(tmp_path, nodes=5, commands=tuple(at("10 crash 5")))
    async with app.run_test(size=(120, 36)) as pilot:
        await advance(pilot, app, 5)
        await pilot.press("5")
        await settled(pilot, app)
        said = plain(app.panel.shown_text())
        assert "last rule applied rule 4: Election from a lower node:" in said  # it answered the lower nodes
        await advance(pilot, app, 20)  # 5 crashed: 1 finds it gone, and 4 leads when nobody higher answers
        await pilot.press("4")
        await settled(pilot, app)
        rule = app.model.nodes[4].rule
        assert app.state.leaders() == [4] and rule in ("2", "4", "probing 2")  # it led; then answered (probes) since
        assert f"last rule applied {rule_sentence(rule, app.state.rules)}" in plain(app.panel.shown_text())


@on_asyncio
async def test_y_and_Y_pick_a_log_line_and_the_panel_says_what_made_it(tmp_path):
    async with five_nodes(tmp_path, 3) as (app, pilot):
        log = app.log_view
        await pilot.press("y")  # the newest line shown
        await settled(pilot, app)
        newest = log.picked
        assert newest is app.model.log[-1]
        await pilot.press("y", "y")
        await settled(pilot, app)
        picked = log.picked
        assert picked is app.model.log[-3]
        said = plain(app.panel.shown_text())
        assert said.startswith(f"picked in the log {plain(picked.text)}")
        await pilot.press("Y")
        await settled(pilot, app)
        assert log.picked is app.model.log[-2]
        sends = [line for line in app.model.log if line.kind == "send"]
        while log.picked is not sends[-1]:  # up to the last send: its rule and sentence
            await pilot.press("y")
        await settled(pilot, app)
        said = plain(app.panel.shown_text())
        rule = sends[-1].rule
        assert f"{sends[-1].text}" in said and f"rule {rule}: {app.state.rules[rule]}" in said


@on_asyncio
async def test_a_click_picks_a_line_and_a_second_lets_it_go(tmp_path):
    async with five_nodes(tmp_path, 3) as (app, pilot):
        log = app.log_view
        # (following its last line: scrolled there once its new size is laid out, which a busy machine may do late)
        await wait_for(pilot, lambda: 0 < log.max_scroll_y == log.scroll_y, "the log to show its last lines")
        await pilot.click(MessageLog, offset=(12, 2))  # the border, then the second line shown
        # (read as the click is taken: a layout a busy machine does late can still move the
        # log's end between the wait above and the click)
        top = int(log.scroll_y)
        await settled(pilot, app)
        assert log.picked is log._lines[top + 1]
        assert "picked in the log" in app.panel.shown_text()
        await pilot.click(MessageLog, offset=(12, 2))
        await settled(pilot, app)
        assert log.picked is None and "picked in the log" not in app.panel.shown_text()


@on_asyncio
async def test_with_no_room_for_the_panel_a_picked_line_is_said_in_a_notice(tmp_path):
    async with five_nodes(tmp_path, 3, size=(64, 24)) as (app, pilot):
        assert not app.panel.display
        while app.log_view.picked is None or app.log_view.picked.kind != "send":
            await pilot.press("y")
        await settled(pilot, app)
        line = app.log_view.picked
        assert any(n.message.startswith(f"{line.text}: rule {line.rule}: ") for n in app._notifications)


def test_a_nodes_last_rule_is_folded_from_its_events_and_kept_through_a_snapshot():
    state = ClusterState((1, 2, 3), ClusterConfig())
    state.apply([StateEvent(0, 0.0, 2, ClassicStatus.ELECTION, None, ClassicStatus.ELECTION.role, 1, "1"),
                 SendEvent(1, 0.0, 2, 3, 0, Election(epoch=1), 1.0, "4")])
    assert state.nodes[2].rule == "4" and state.nodes[1].rule is None
    then = state.snapshot()
    state.apply([StateEvent(2, 1.0, 2, ClassicStatus.NORMAL, 3, ClassicStatus.NORMAL.role, 1, "5"),
                 StateEvent(3, 2.0, 2, ClassicStatus.WAITING, 3, ClassicStatus.WAITING.role, 1, None)])
    assert state.nodes[2].rule == "5"  # (a change no rule made leaves the last one named)
    state.load(then)
    assert state.nodes[2].rule == "4"
    assert state.rules["4"].startswith("Election from a lower node") and state.rules["probing 1"]
