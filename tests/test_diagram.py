"""The space-time diagram in the app (`d`), and the key that exports it (`D`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from playground.cli import main
from playground.core.config import ClusterConfig
from playground.record.export import collect
from playground.record.reader import load
from playground.record.svg import _lane_spans
from playground.ui import diagram
from playground.ui.model import LogLine
from protocol import CsState
from protocol.classic import ClassicStatus
from tests.support import at
from tests.test_app import advance, make_app, on_asyncio, wait_for

LABELS = {1: "1", 2: "2", 3: "3"}


def text(runs) -> str:
    return "".join(t for t, _ in runs)


def test_a_delivery_is_an_arrow_from_lane_to_lane_with_its_name():
    line = LogLine(1.0, "deliver", "Election", "request", (1, 3), "1→3 Election #0 delivered")
    runs = diagram.row(line, (1, 2, 3), 10, frozenset(), LABELS, 30)
    drawn = text(runs)
    assert drawn[5] == "│" and drawn[25] == "│" and drawn[24] == "▶"  # from lane 1 to lane 3
    assert "Election" in drawn[5:25] and drawn[15] != "│"  # over lane 2
    assert ("Election", "$warning") in runs or any("Election" in t and c == "$warning" for t, c in runs)
    back = text(diagram.row(LogLine(1.0, "deliver", "Answer", "reply", (3, 1), ""), (1, 2, 3), 10, frozenset(), LABELS, 30))
    assert back[6] == "◀"


def test_a_drop_ends_in_a_cross_at_a_dashed_lane_and_a_violation_fills_the_row():
    drop = LogLine(2.0, "drop", "Election", "request", (1, 3), "")
    drawn = text(diagram.row(drop, (1, 2, 3), 10, frozenset({3}), LABELS, 30))
    assert drawn[24] == "✕" and drawn[25] == "┊"
    violation = LogLine(3.0, "violation", "violation", None, (1, 2), "⚠ split brain")
    drawn = text(diagram.row(violation, (1, 2, 3), 10, frozenset(), LABELS, 30))
    assert "split brain" in drawn and drawn.startswith("━")


def test_state_marks_carry_their_roles_glyph_and_status():
    line = LogLine(1.0, "state", "state", None, (2,), "node 2 election, leader none", ClassicStatus.ELECTION)
    drawn = text(diagram.row(line, (1, 2, 3), 10, frozenset(), LABELS, 30))
    assert drawn[15:24] == "◆election"


def test_the_critical_section_is_marked_on_the_nodes_lane():
    inside = LogLine(1.0, "cs", "cs", None, (2,), "node 2 enters the critical section", CsState.HELD)
    assert text(diagram.row(inside, (1, 2, 3), 10, frozenset(), LABELS, 30))[15:21] == "▣in CS"
    waiting = LogLine(1.0, "cs", "cs", None, (3,), "node 3 wants the critical section", CsState.WANTED)
    assert text(diagram.row(waiting, (1, 2, 3), 10, frozenset(), LABELS, 30))[25:30] == "⧖want"  # (cut to the lane)


def test_a_node_that_leaves_is_down_as_a_crashed_one_is_and_a_joiner_comes_up():
    """`leave 2` then `crash 3` showed only 3 down: the diagram knew crashes only."""
    leave, crash = LogLine(1.0, "leave", "leave", None, (2,), ""), LogLine(2.0, "crash", "crash", None, (3,), "")
    assert diagram.after(crash, diagram.after(leave, frozenset())) == {2, 3}
    assert diagram.down_at_start([leave, crash], {2, 3}) == set()
    join = LogLine(3.0, "join", "join", None, (4,), "")
    assert diagram.after(join, frozenset({4})) == frozenset() and diagram.down_at_start([join], set()) == {4}
    assert "✖" in text(diagram.row(leave, (1, 2, 3), 10, frozenset({2}), LABELS, 30))


def test_the_app_and_the_export_agree_on_which_lanes_are_down(tmp_path):
    """One rule (core/events.py) for both: the app's `d` folds the log's lines through
    it, the SVG export its lanes' marks. `leave 2`, `crash 3`, a join, a recovery: the
    same lanes down after every instant, and before the first."""
    path = tmp_path / "t.jsonl"
    assert main(["--headless", "--algorithm", "epoch-bully", "--nodes", "4", "--at", "5 leave 2", "--at", "8 crash 3",
                 "--at", "9 join", "--at", "12 recover 3", "--until", "20", "--transcript", str(path)]) == 0
    lines = [LogLine(e.t, e.kind, e.kind, None, (e.node,), "") for e in load(str(path)).events
             if e.kind in ("start", "crash", "recover", "join", "leave")]
    lanes = _lane_spans(collect(str(path)))

    def drawn_down(t: float) -> set[int]:  # the export's lanes dashed just after instant t
        return {node for node, spans in lanes.items() if not [up for a, _, up in spans if a <= t][-1]}

    down = diagram.down_at_start(lines, drawn_down(20))
    assert down == collect(str(path)).down == {1, 2, 3, 4, 5}  # before their start, or join
    for k, line in enumerate(lines):
        down = diagram.after(line, down)
        if k + 1 == len(lines) or lines[k + 1].t > line.t:
            assert down == drawn_down(line.t), line
    assert down == {2}


def test_a_message_with_one_end_off_the_lanes_shows_its_end_and_whom_it_is_with():
    """(It drew a recovery's ▲ on the sender.)"""
    line = LogLine(1.0, "deliver", "Election", "request", (1, 3), "")
    assert "─→3 Elect" in text(diagram.row(line, (1, 2), 10, frozenset(), LABELS, 30))
    assert "◀1 Elect" in text(diagram.row(line, (2, 3), 10, frozenset(), LABELS, 30))


def test_lanes_that_do_not_fit_keep_the_selected_node_and_its_partners():
    ids = tuple(range(1, 33))
    lines = [LogLine(1.0, "deliver", "Election", "request", (5, k), "") for k in (9, 9, 9, 12, 12, 20)]
    assert diagram.choose_lanes(ids, 200, 5, lines) == (ids, 6)
    lanes, width = diagram.choose_lanes(ids, 20, 5, lines)
    assert lanes == (5, 9, 12) and width == 6  # room for three: 5, then those it talks with most


def test_who_was_down_is_worked_back_from_now():
    lines = [LogLine(1.0, "crash", "crash", None, (3,), ""), LogLine(2.0, "recover", "recover", None, (3,), ""),
             LogLine(3.0, "crash", "crash", None, (2,), "")]
    assert diagram.down_at_start(lines, {2}) == set()
    assert diagram.after(lines[0], frozenset()) == {3} and diagram.after(lines[1], frozenset({3})) == set()


@on_asyncio
async def test_d_draws_the_log_as_lanes_and_follows_time_travel(tmp_path):
    app = make_app(tmp_path, nodes=4, config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 8)
        await pilot.press("4", "c")
        await advance(pilot, app, 12)
        await pilot.press("d")
        assert app.log_view.diagram and app.log_view.border_title == "diagram (d: text)"
        header, *rows = app.log_view.visible_text()
        assert header.split() == ["node", "1", "2", "3", "4"]  # the lanes' names, above the rows
        assert any("▶" in r or "◀" in r for r in rows)
        lane_4 = [r for r in rows if "┊" in r]  # node 4 is down: its lane is dashed
        assert lane_4 and rows[-1].count("┊") == 1
        await pilot.press("home")  # time travel: the diagram is of the moment shown
        assert all(float(r.split()[0]) == 0.0 for r in app.log_view.visible_text()[1:])
        await pilot.press("end", "d")
        assert not app.log_view.diagram and app.log_view.border_title == "messages"


@on_asyncio
async def test_many_nodes_keep_the_selected_ones_partners_and_say_how_many_are_left_out(tmp_path):
    app = make_app(tmp_path, nodes=32)
    async with app.run_test(size=(100, 40)) as pilot:
        await advance(pilot, app, 1)  # (the start-up storm: 1,744 lines; 12,000 by 3 s, and 8 of 32 lanes either way)
        await pilot.press("d")
        app.redraw(text=True)
        lanes = app.log_view.visible_text()[0].split()[1:]
        assert app.log_view.border_title == f"diagram · {len(lanes)} of 32 lanes (d: text)" and "32" in lanes


@on_asyncio
async def test_shift_d_exports_the_window_as_svg_and_says_where(tmp_path):
    app = make_app(tmp_path, nodes=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 10)
        await pilot.press("D")
        await wait_for(pilot, lambda: list(tmp_path.glob("*.svg")), "the export")
        svg = next(tmp_path.glob("*.svg"))
        assert ET.parse(svg).getroot().tag.endswith("svg")
        await wait_for(pilot, lambda: any("Exported the diagram to" in n.message for n in app._notifications), "the note")


@on_asyncio
async def test_shift_d_after_f_exports_the_nodes_lane_with_those_it_talked_with(tmp_path):
    """The log filtered to node 3 (`f`) exported one lane, "3", and no arrow: the app
    passes one node, and the export kept the messages between 3 and 3. It draws what
    `d` draws: 3's lane, its ring neighbours' and their messages."""
    app = make_app(tmp_path, nodes=7, algorithm="ring")
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 12)
        await pilot.press("3", "f", "D")
        await wait_for(pilot, lambda: list(tmp_path.glob("*.svg")), "the export")
        root = ET.parse(next(tmp_path.glob("*.svg"))).getroot()
        svg = "{http://www.w3.org/2000/svg}"
        lanes = [t.text for t in root.iter(f"{svg}text") if t.get("font-weight") == "bold"]
        arrows = [g for g in root.iter(f"{svg}g") if "#" in (g.findtext(f"{svg}title") or "")]
        assert lanes == ["2", "3", "4"] and arrows
        assert all(" 3→" in g.findtext(f"{svg}title") or "→3," in g.findtext(f"{svg}title") for g in arrows)


@on_asyncio
async def test_shift_d_after_f_on_a_node_that_joined_exports_its_lane(tmp_path):
    """The app names the filtered node by id: a node that joined has no rank in the
    transcript's header (by rank, the export said "there is no node 5")."""
    app = make_app(tmp_path, nodes=4, commands=tuple(at("5 join", ids=(1, 2, 3, 4))))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 12)
        await pilot.press("5", "f", "D")
        await wait_for(pilot, lambda: list(tmp_path.glob("*.svg")), "the export")
        root = ET.parse(next(tmp_path.glob("*.svg"))).getroot()
        lanes = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("font-weight") == "bold"]
        assert "5" in lanes and len(lanes) > 1


def test_a_lane_is_heavy_while_its_node_is_in_the_critical_section():
    enter = LogLine(1.0, "cs", "cs", None, (2,), "", CsState.HELD)
    within = diagram.within_after(enter, frozenset())
    assert within == {2}
    other = LogLine(2.0, "crash", "crash", None, (3,), "")  # a row about another node
    drawn = text(diagram.row(other, (1, 2, 3), 10, frozenset(), LABELS, 30, within))
    assert drawn[15] == "┃" and drawn[5] == "│"
    leave = LogLine(3.0, "cs", "cs", None, (2,), "", CsState.RELEASED)
    assert diagram.within_after(leave, within) == set()
    crash = LogLine(3.0, "crash", "crash", None, (2,), "")
    assert diagram.within_after(crash, within) == set()


def test_a_line_draws_a_row_only_if_it_draws_on_a_lane_kept():
    """`draws` says which lines `row` draws something for besides the lanes: a message
    between two nodes without a lane, a send or a state change on a lane left out, drew a
    row of bare │ │ │ (11 of 14 rows at 64 nodes)."""
    lanes = (1, 3)
    kinds = [("deliver", (1, 2)), ("deliver", (2, 4)), ("drop", (4, 3)), ("held", (2, 4)), ("send", (1, 2)),
             ("send", (2, 1)), ("crash", (2,)), ("recover", (3,)), ("join", (4,)), ("command", ()),
             ("agreement", ()), ("violation", (2, 4))]
    lines = [LogLine(1.0, kind, "Election", "request" if len(nodes) == 2 else None, nodes, "x") for kind, nodes in kinds]
    lines += [LogLine(1.0, "state", "state", None, (n,), "", ClassicStatus.ELECTION) for n in (2, 3)]
    lines += [LogLine(1.0, "cs", "cs", None, (n,), "", CsState.WANTED) for n in (1, 4)]
    bare = text(diagram.row(LogLine(1.0, "crash", "crash", None, (2,), ""), lanes, 10, frozenset(), LABELS, 20))
    assert bare.strip() == "│ │".replace(" ", " " * 9)  # what a row with nothing drawn in it is
    drawn = {(line.kind, line.nodes): diagram.draws(line, frozenset(lanes)) for line in lines}
    for line in lines:
        row = text(diagram.row(line, lanes, 10, frozenset(), {**LABELS, 4: "4"}, 20))
        assert (row != bare) == drawn[line.kind, line.nodes], line
    assert [key for key, yes in drawn.items() if not yes] == [("deliver", (2, 4)), ("held", (2, 4)), ("send", (2, 1)),
                                                            ("crash", (2,)), ("join", (4,)), ("state", (2,)), ("cs", (4,))]


def test_lanes_left_over_go_to_the_busiest_other_nodes():
    """At a transcript's first instant the selected node has exchanged nothing yet: the
    room for five lanes held one, and every other line had no lane."""
    ids = tuple(range(1, 33))
    lines = [LogLine(0.0, "send", "Coordinator", "announce", (32, k), "") for k in range(1, 32)]
    lines += [LogLine(0.0, "state", "state", None, (k,), "", ClassicStatus.ELECTION) for k in (7, 7, 9)]
    lanes, _ = diagram.choose_lanes(ids, 24, 32, lines)
    assert len(lanes) == 4 and 32 in lanes and 7 in lanes and 9 in lanes


@on_asyncio
async def test_the_diagram_has_no_row_without_a_mark_when_lanes_are_left_out(tmp_path):
    """32 nodes at 80 columns: five lanes (at 64 nodes, 11 of 14 rows were bare lanes).
    Every row shown draws something on them, and the count below says how many lines
    have a row."""
    app = make_app(tmp_path, nodes=32)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 1)  # (the start-up storm: 1,744 lines, 731 of them with a row)
        await pilot.press("d")
        app.redraw(text=True)
        header, *rows = app.log_view.visible_text()
        lanes = header.split()[1:]
        assert len(lanes) < 32 and rows
        for r in rows:
            assert r[9:].replace("│", "").replace("┊", "").replace("┃", "").strip(), r
        shown = int(app.log_view.border_subtitle.split(" of ")[0].replace(",", ""))
        assert shown < len(app.model.log)
        for _ in range(3):  # scrolled back: still rows with something in them
            await pilot.press("pageup")
        app.redraw(text=True)
        assert all(r[9:].replace("│", "").replace("┊", "").replace("┃", "").strip() for r in app.log_view.visible_text()[1:])
        await pilot.press("home")  # the first instant: every lane kept has something at it
        app.redraw(text=True)
        header, *rows = app.log_view.visible_text()
        assert len(header.split()[1:]) > 1 and rows
        assert all(r[9:].replace("│", "").replace("┊", "").replace("┃", "").strip() for r in rows)


@on_asyncio
async def test_a_diagram_scrolled_back_stays_on_its_rows_as_new_lines_come(tmp_path):
    """Lanes left out, rows only for lines drawn on the lanes kept: new lines changed the
    busiest nodes, so the lanes, so which lines had rows, and the rows being read jumped.
    Scrolled back, the lanes stay until the diagram follows the newest lines again."""
    app = make_app(tmp_path, nodes=32)
    async with app.run_test(size=(80, 30)) as pilot:
        await advance(pilot, app, 1)
        await pilot.press("d")
        for _ in range(3):
            await pilot.press("pageup")
        app.redraw(text=True)
        before = app.log_view.visible_text()
        await advance(pilot, app, 0.5)  # a storm: hundreds of new lines
        app.redraw(text=True)
        assert app.log_view.visible_text() == before and not app.log_view.following
        app.log_view.scroll_end(animate=False, immediate=True)  # back to the newest lines
        await pilot.pause()
        app.redraw(text=True)
        assert app.log_view.following and app.log_view.visible_text() != before
