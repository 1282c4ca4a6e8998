"""What a newcomer sees at 80x24 and wider: nothing cut mid-word, nothing silently lost.

The node panel shows every member and its message counters (scrolling when it must),
shortens long lists and wraps under itself; the status bar and the alert bar give up
their least important parts first; cards and panel name timers and "no leader" alike.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from rich.cells import cell_len

from playground.core.config import ClusterConfig
from playground.core.host import HostStatus, Internals
from playground.record.look import short_list, timer_label
from playground.ui import alert_bar
from playground.ui.cluster_screen import PANEL_NEEDS
from playground.ui.help_screen import KEYS_WIDTH, HelpScreen
from playground.ui.message_log import TIME_WIDTH, fitted
from playground.ui.model import NodeView, rule_suffix
from playground.ui.node_card import FULL_WIDTH
from playground.ui.node_grid import WIDEST
from playground.ui.node_panel import HANG, rows
from playground.ui.status_bar import CsFigures, Status, fit, parts
from tests.test_app import advance, card_text, make_app, on_asyncio, scenario_app, settled
from tests.test_redraws import Refreshes

LABELS = {i: str(i) for i in range(1, 65)}


def panel_lines(app) -> list[str]:
    return app.panel.shown_text().splitlines()


def whole_words(narrow: str, full: str) -> bool:
    """Every word of `narrow` is a word of `full`: shortened by parts, never cut in one."""
    words = re.compile(r"[^\s:;,()…]+")
    return set(words.findall(narrow)) <= set(words.findall(full))


# --- the node panel -----------------------------------------------------------------------


@on_asyncio
async def test_a_hidden_panel_is_not_laid_out_as_its_rows_change_and_is_measured_when_it_shows(tmp_path, monkeypatch):
    """Below PANEL_NEEDS columns the panel gives its room to the log; its rows, new at
    every drawing of the text, lay nothing out until it shows."""
    app = make_app(tmp_path)
    async with app.run_test(size=(PANEL_NEEDS - 10, 24)) as pilot:
        await advance(pilot, app, 1)
        assert not app.panel.display
        counted = Refreshes(monkeypatch, [app.panel.text])
        rows = app.panel.text.rows
        await advance(pilot, app, 20)  # the leader elected, the timers moved: other rows
        app.redraw(text=True)
        assert app.panel.text.rows != rows and counted.of(app.panel.text)
        assert not any(layout for _, layout in counted.of(app.panel.text))
        await pilot.resize_terminal(100, 24)  # shown: laid out at the rows it has now
        await settled(pilot, app)
        assert app.panel.display and app.panel.text.size.height == len(panel_lines(app)) > 3
        assert "leader" in app.panel.shown_text()


@on_asyncio
async def test_the_panel_at_80x24_shows_every_member_and_its_counters_and_scrolls(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 20)
        await pilot.press("1")
        await settled(pilot, app)
        lines = panel_lines(app)
        text = "\n".join(lines)
        assert re.search(r"members: (1, 2, 3, 4, 5, 6, 7|1–7 \(7\))$", text, re.MULTILINE), text
        assert "messages  sent / received" in text and re.search(r"^  Coordinator +0 / \d", text, re.MULTILINE), text
        assert max(map(len, lines)) <= app.panel.text.content_size.width
        # Taller than its room: it scrolls, by keys too, and the end can be brought into view.
        assert app.panel.max_scroll_y > 0
        await pilot.press("shift+pagedown")
        await pilot.pause()
        assert app.panel.scroll_y > 0
        await pilot.press("shift+pageup")
        await pilot.pause()
        assert app.panel.scroll_y == 0
        app.panel.scroll_end(animate=False)
        await pilot.pause()
        assert app.panel.scroll_y == app.panel.max_scroll_y


@on_asyncio
async def test_sixty_four_members_read_as_a_run_and_long_lines_wrap_under_themselves(tmp_path):
    app = make_app(tmp_path, nodes=64, algorithm="garcia-molina", config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(160, 45)) as pilot:
        await advance(pilot, app, 0.5)
        await pilot.press("1")
        await settled(pilot, app)
        assert "  members: 1–64 (64)" in panel_lines(app)
        width = app.panel.text.content_size.width
        # A value that cannot be shortened (text) wraps; its lines go on indented.
        long = "; ".join(f"{n}: Election {n}, Ok {n + 1}" for n in range(3, 9))
        app.panel.text.rows = (("  unacked: " + long, None), ("  suspected: ", tuple(range(1, 64, 2))))
        await pilot.pause()
        lines = app.panel.text.lines(width)
        assert len(lines) > 2 and all(line.plain.startswith(" " * HANG) for line in lines[1:-1])
        assert max(line.cell_length for line in lines) <= width
        assert lines[-1].plain.startswith("  suspected: 1, 3, ") and lines[-1].plain.endswith(", 63 (32)")


def test_variables_are_written_for_people_and_counts_with_separators():
    node = NodeView(3, up=True, status=HostStatus.DOWN, leader=None, timers={"hop_wait 4 12": (0.0, 4.0)},
                    sent=Counter({"Coordinator": 11781}), received=Counter({"Election": 2}))
    internals = Internals(True, {"participant": False, "halted_by": 7, "halts_unacked": [1, 2, 3, 4, 5, 6],
                                 "ticks": 12345}, {"incarnation": 1})
    text = "\n".join(markup for markup, _ in rows(node, internals, 1.0, LABELS))
    assert "  participant: no" in text and "  halted by: 7" in text and "  halts unacked: " in text
    assert "  ticks: 12,345" in text and "Coordinator  11,781 / 0" in text
    assert "hop wait (4, 12)  " in text and "→?" in text
    assert "_" not in text and "True" not in text and "False" not in text


def test_short_lists():
    assert short_list([1, 2, 3], LABELS, 40) == "1, 2, 3"  # whole when it fits
    assert short_list(list(range(1, 65)), LABELS, 20) == "1–64 (64)"
    assert short_list(list(range(1, 65, 2)), LABELS, 22) == "1, 3, …, 61, 63 (32)"
    assert short_list([], LABELS, 10) == "none"


# --- timers and leaders, the same on the card and in the panel -----------------------------


def test_timer_names_are_read_whole_words_first():
    assert [timer_label(n, LABELS, 7) for n in ("timeout_wait", "hop_wait 1 2", "answer_wait", "probe")] == \
        ["timeout", "hop", "answer", "probe"]
    assert timer_label("hop_wait 1 2", LABELS) == "hop wait (1, 2)"
    assert timer_label("coordinator_wait", LABELS, 7) == "coordi."  # one word longer than the room


@on_asyncio
async def test_cards_and_panel_say_no_leader_alike(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot, app)  # t=0: every node but 7 is electing, with no leader
        await pilot.press("1")
        await settled(pilot, app)
        assert "1 ◆ election →?" in card_text(app, 1) and panel_lines(app)[0] == "◆ election →?"
        assert re.fullmatch(r"answer  ███ 4\.0s", card_text(app, 1).splitlines()[1])


@on_asyncio
async def test_cards_name_timers_readably(tmp_path):
    app = make_app(tmp_path, algorithm="garcia-molina")
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 12)
        for node in range(1, 7):
            timer = card_text(app, node).splitlines()[1]
            assert re.fullmatch(r"[a-z ]{7} [█░]{3} +\d+(\.\d)?s", timer), timer  # a space between bar and time
            assert "." not in timer.split()[0]  # "timeout", not "timeo."


@on_asyncio
async def test_ring_timers_with_arguments_and_yes_no(tmp_path):
    app = make_app(tmp_path, algorithm="ring", config=ClusterConfig(delay_min=1, delay_max=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 0.5)
        hopping = [i for i, n in app.model.nodes.items() if any(t.startswith("hop_wait") for t in n.timers)]
        assert hopping
        await pilot.press(str(hopping[0]))
        await settled(pilot, app)
        text = app.panel.shown_text()
        assert re.search(r"^  hop wait \(\d, \d+\) +\d\.\d\ds$", text, re.MULTILINE), text
        assert re.search(r"^  participant: (yes|no)$", text, re.MULTILINE) and "_" not in text


# --- the status bar ------------------------------------------------------------------------


@on_asyncio
async def test_the_status_bar_at_80_columns_keeps_the_election_count_and_whole_words(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 20)
        await pilot.press("x")
        await advance(pilot, app, 30)
        await pilot.press("plus", "3", "p")  # T=4.5 and node 3 cut off: 12 links held
        await advance(pilot, app, 0.01)
        await settled(pilot, app)
        shown = app.status_bar.render().plain
        full = fit(parts(app.status_bar.status), 1_000).plain
        assert "12 links held: synchrony broken" in full and "δ 0.5–1.5" in full
        assert shown != full and len(shown) <= app.status_bar.content_size.width
        assert shown.startswith("t=") and "T=4.5" in shown and "election 2: " in shown
        assert whole_words(shown, full), (shown, full)


def test_the_status_bar_gives_way_least_important_first():
    config = ClusterConfig()
    status = Status(38.46, 1, False, 0.31, config, 3, True, 145_982, 4_500, held_links=14)
    widths = [fit(parts(status), w).plain for w in (200, 100, 78, 60, 40, 20)]
    assert widths[0] == ("t=38.46s ▶ ×1 running at ×0.31: too much to show │ T=4 · 14 links held: synchrony broken │ "
                         "δ 0.5–1.5 │ "
                         "election 3…: 145,982 msgs")  # (no worst case while synchrony is broken: it assumes it)
    for width, shown in zip((200, 100, 78, 60, 40, 20), widths, strict=True):
        assert len(shown) <= width and shown.startswith("t=38.46s ▶ ×1")
        assert whole_words(shown, widths[0]) or "#3…" in shown  # (the count's shortest form: "#3…: 145,982 msgs")
    assert "δ" not in widths[2] and "election 3…" in widths[2]  # the delays go before the count
    assert widths[4] == "t=38.46s ▶ ×1 │ T=4 │ #3…: 145,982 msgs"


def test_a_worst_case_is_shown_only_where_declared_said_for_one_fault_and_only_with_synchrony():
    status = Status(38.46, 1, False, None, ClusterConfig(), 3, False, 132, 328)
    assert fit(parts(status), 200).plain.endswith("│ election 3: 132 msgs (worst 328 for one fault)")
    for unsaid in (replace(status, worst_case=None), replace(status, held_links=1),
                   replace(status, config=ClusterConfig(timeout=2.9))):  # none declared; synchrony broken
        assert "worst" not in fit(parts(unsaid), 200).plain and "election 3: 132 msgs" in fit(parts(unsaid), 200).plain
    assert "worst" not in fit(parts(replace(status, elections=1)), 200).plain  # the start-up: every node at once


def test_a_constant_delay_is_one_number():
    status = Status(1.0, 1, True, None, ClusterConfig(delay_min=1.5, delay_max=1.5), 0, False, 0, None)
    assert "│ δ 1.5 │" in fit(parts(status), 200).plain


# --- the message log -----------------------------------------------------------------------


@on_asyncio
async def test_the_log_at_80x24_keeps_each_lines_rule_whole_and_cuts_before_it(tmp_path):
    """The rule at a line's end is its why: a narrow log cuts the words before it."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 0.3)
        log = app.log_view
        room = log.scrollable_content_region.width - TIME_WIDTH
        seen, cut, shown_lines = 0, 0, []
        for top in range(0, len(log._lines), log.scrollable_content_region.height):
            log.scroll_to(y=top, animate=False, immediate=True)
            await pilot.pause()
            for row, shown in enumerate(log.visible_text()):
                line, shown = log._lines[int(log.scroll_y) + row], shown.rstrip()
                if line.rule is None:
                    continue
                seen += 1
                shown_lines.append(shown)
                cut += cell_len(line.text) > room
                assert shown.endswith(rule_suffix(line.rule)), (shown, line.text)
                assert whole_words(shown[TIME_WIDTH:], line.text)
        assert seen > 10 and cut  # (lines too long for 80 columns among them)
        assert "   0.000 node 1 election, leader… · rule 1" in shown_lines


def test_a_log_line_too_long_is_cut_before_its_rule_or_at_its_end():
    rule = rule_suffix("probing 2")
    assert fitted("node 12 election, leader none" + rule, rule, 80) == "node 12 election, leader none" + rule
    assert fitted("node 12 election, leader none" + rule, rule, 30) == "node 12 election,… · probing 2"
    assert fitted("node 12 election, leader none" + rule, rule, 31) == "node 12 election,… · probing 2"
    assert fitted("node 12 election, leader none" + rule, rule, 37) == "node 12 election, leader… · probing 2"
    assert fitted("7→3 Coordinator #1234" + rule, rule, 26) == "7→3… · probing 2"  # (words, whole)
    assert fitted("Coordinator#1234567890" + rule, rule, 26) == "Coordinator#1… · probing 2"  # (one word: cut)
    assert fitted("3→7 Election #12 dropped: receiver down", "", 30) == "3→7 Election #12 dropped: rec…"
    # With no room for some of the words before it, the rule is not all that is left.
    assert fitted("node 12 election, leader none" + rule, rule, 18) == "node 12 election,…"


# --- the alert bar -------------------------------------------------------------------------


def test_an_alert_keeps_what_when_and_how_long_and_shortens_the_nodes():
    head = "⚠ SLE1 at t=38.46s, lasted 1.5 s"
    words = "normal nodes disagree: " + ", ".join(map(str, range(1, 40))) + " → 40; 41, 42, 43 → 43"
    line = alert_bar.fit(head, words, "the last of 3 violations", LABELS, 78)
    assert line == "⚠ SLE1 at t=38.46s, lasted 1.5 s: normal nodes disagree: 1–39 (39) → 40;…"
    line = alert_bar.fit(head, words, "the last of 3 violations", LABELS, 120)
    assert line.endswith("1–39 (39) → 40; 41, 42, 43 → 43 · the last of 3 violations")


@on_asyncio
async def test_the_alert_at_80_columns_says_how_long_it_lasted(tmp_path):
    app = scenario_app(tmp_path, "split-brain-short-timeout.scenario")
    async with app.run_test(size=(80, 24)) as pilot:
        await advance(pilot, app, 21.2)  # split brain and SLE1 at once: a line each
        await pilot.pause()
        assert app.alert_bar.region.height == 2
        await advance(pilot, app, 1.5)  # the split brain of 21.00 is over: one line, and no empty one
        await pilot.pause()
        assert app.alert_bar.region.height == 1
        shown = app.alert_bar.render().plain
        assert shown == "⚠ split brain at t=21.00s, lasted 1.5 s: nodes 4, 5 each lead"  # (no room for how many)


@on_asyncio
async def test_a_wider_alert_says_what_was_broken_and_how_many_violations_so_far(tmp_path):
    app = scenario_app(tmp_path, "split-brain-short-timeout.scenario")
    async with app.run_test(size=(100, 24)) as pilot:
        await advance(pilot, app, 22.7)
        await pilot.pause()
        assert app.alert_bar.render().plain == ("⚠ split brain at t=21.00s, lasted 1.5 s · synchrony broken since "
                                                "t=0.00: nodes 4, 5 each lead")  # (no room for how many)
        await advance(pilot, app, 0.5)  # SLE1 from 23.00, on top of the earlier ones
        await pilot.pause()
        assert re.fullmatch(r"⚠ SLE1 since t=23\.00s · synchrony broken since t=0\.00: normal nodes disagree: .*",
                            app.alert_bar.render().plain)
    app = scenario_app(tmp_path, "split-brain-short-timeout.scenario")
    async with app.run_test(size=(160, 24)) as pilot:
        await advance(pilot, app, 23.2)
        await pilot.pause()
        assert re.fullmatch(r"⚠ SLE1 since t=23\.00s · synchrony broken since t=0\.00: normal nodes disagree: .* · "
                            r"\d+ violations so far", app.alert_bar.render().plain)


def test_an_alert_names_what_was_broken_first_with_since_when_then_without():
    head, words = "⚠ SLE1 since t=9.10s", "normal nodes disagree: 1, 2 → 5; 3 → 4"
    broken = "links lossy since t=0.00 · clocks drift since t=3.00"
    assert alert_bar.fit(head, words, "", LABELS, 120, broken) == f"{head} · {broken}: {words}"
    assert alert_bar.fit(head, words, "", LABELS, 90, broken) == f"{head} · links lossy · clocks drift: {words}"
    assert alert_bar.fit(head, words, "", LABELS, 62, broken) == f"{head}: {words}"


# --- help and the grid ---------------------------------------------------------------------


@on_asyncio
async def test_help_keeps_its_key_column_narrow(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = [str(w.render()) for w in app.screen.query(".keys")]
        assert "← → ↑ ↓ 1–9" in keys
        assert all(w.region.width <= KEYS_WIDTH + 2 for w in app.screen.query(".keys"))
        assert min(w.region.width for w in app.screen.query(".what")) >= 40


@on_asyncio
async def test_spare_room_widens_cards_in_even_rows(tmp_path):
    app = make_app(tmp_path, nodes=9, algorithm="stoller")
    async with app.run_test(size=(160, 45)) as pilot:
        await advance(pilot, app, 1)
        assert app.grid.columns == 5  # 5 and 4, not 8 and 1
        widths = {card.region.width for card in app.grid.cards.values()}
        assert len(widths) == 1 and FULL_WIDTH < widths.pop() <= WIDEST  # one width for all: the same names
        assert all(card_text(app, i).splitlines()[1].startswith("heartbeat ") for i in app.model.ids)


@on_asyncio
async def test_one_card_is_not_stretched_across_a_wide_screen(tmp_path):
    app = make_app(tmp_path, nodes=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(pilot, app)
        assert app.grid.cards[1].region.width == WIDEST


def test_with_a_mutex_the_status_bar_gives_its_figures_first_to_go():
    status = Status(38.46, 1, False, None, ClusterConfig(), 3, False, 145, None,  # (a mutex: no worst case)
                    cs=CsFigures(12, 8.083, "2(N-1) = 8", 2.0, 1.0))
    full = fit(parts(status), 300).plain
    assert full.endswith("│ CS 12 in · 8.1 msgs each (lecture: 2(N-1) = 8) · last waited 2.0s, handed on in 1.0s")
    assert fit(parts(status), 120).plain.endswith("CS 12 in · 8.1 msgs each · last waited 2.0s")
    narrow = fit(parts(status), 40).plain
    assert "CS" not in narrow and narrow.startswith("t=38.46s ▶ ×1 │ T=4")


@on_asyncio
async def test_a_cards_timer_bar_follows_its_width_in_a_replay_as_after_home_and_end(tmp_path):
    """A replay opens paused, and nothing redraws it on a tick: the terminal's size came
    after the first drawing, and the cards kept a bar of 3 cells for the old width (5
    after home and end drew them again). One layout for both: the bar follows the card's
    width when it changes."""
    from tests.test_time_travel import replay_app, saved

    def bars(app) -> list[int]:
        return [len(re.search(r"[█░]+", card_text(app, n).splitlines()[1]).group()) for n in (1, 2)]

    app = replay_app(saved(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        narrow = bars(app)
        await pilot.resize_terminal(150, 40)  # (as the terminal says its size after the start)
        await pilot.pause()
        opened = bars(app)
        assert opened[0] > narrow[0] and app.grid.cards[1].inner - 6 - 12 == opened[0]
        await pilot.press("home")
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()
        assert bars(app) == opened
