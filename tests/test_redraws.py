"""What a redraw costs (ui/redraws.py): a widget is drawn again only when what it shows
changed, and then only the lines that changed; a served app ticks less often. Counted
(the widgets' refreshes, and the regions they name), never timed."""

from __future__ import annotations

from types import SimpleNamespace

from textual.app import App
from textual.widget import Widget

from playground.ui import redraws
from playground.ui.node_card import LINES
from playground.ui.timeline_row import TimelineRow
from tests.test_app import advance, make_app, on_asyncio, settled


class Refreshes:
    """Every refresh of `widgets` while counting: (widget, its regions, layout or not)."""

    def __init__(self, monkeypatch, widgets):
        self.calls: list[tuple[Widget, tuple, bool]] = []
        watched = set(map(id, widgets))
        original = Widget.refresh

        def refresh(widget, *regions, **options):
            if id(widget) in watched:
                self.calls.append((widget, regions, options.get("layout", False)))
            return original(widget, *regions, **options)

        monkeypatch.setattr(Widget, "refresh", refresh)

    def of(self, widget: Widget) -> list[tuple[tuple, bool]]:
        return [(regions, layout) for w, regions, layout in self.calls if w is widget]


def drawn_widgets(app) -> list[Widget]:
    return [*app.grid.cards.values(), app.log_view, app.panel, app.panel.text, app.status_bar, app.timeline_row,
            app.alert_bar]


@on_asyncio
async def test_a_redraw_with_nothing_new_draws_nothing(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 3)
        app.redraw(text=True)
        await pilot.pause()
        counted = Refreshes(monkeypatch, drawn_widgets(app))
        app.redraw(text=True)  # (the clock stands still: paused)
        app.redraw(text=True)
        assert counted.calls == []
        app.live.advance(0.1)  # the countdowns move: the cards' timer lines, the status line
        await settled(pilot, app)
        assert counted.of(app.status_bar) and not counted.of(app.panel)  # (the panel's rows, not its border)


@on_asyncio
async def test_a_countdown_redraws_its_line_of_the_card_only(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 3)
        card = app.grid.cards[1]
        assert card.node.timers, "node 1 has a timer running"
        counted = Refreshes(monkeypatch, [card])
        card.show(app.control.now() + 0.5, selected=False)  # the clock moves on, nothing else
        [(regions, layout)] = counted.of(card)
        assert not layout and [(r.y, r.height) for r in regions] == [(1, 1)]  # the timer's line, nothing else
        assert sorted(k for line in LINES for k in line) == list(range(len(card.key)))  # (each part on a line)


@on_asyncio
async def test_a_card_drawn_a_line_at_a_time_is_the_card_drawn_whole(tmp_path):
    """The same segments, styles and offsets (a mouse selection reads them) as Textual's own drawing."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        for seconds in (0.5, 6):
            await advance(pilot, app, seconds)
            await pilot.press("3", "c")  # (a crashed card's lines, struck through, too)
            await settled(pilot, app)
            for card in app.grid.cards.values():
                for y in range(3):
                    mine = card.render_line(y)
                    card._dirty_regions.add(card.size.region)  # (Textual's: the whole card made again)
                    assert list(mine) == list(Widget.render_line(card, y)), (card.node.id, y)


@on_asyncio
async def test_new_log_lines_do_not_lay_the_screen_out(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 1)
        log = app.log_view
        counted = Refreshes(monkeypatch, [log])
        before = app.model.logged
        await pilot.press("c")  # node 7, the leader, crashes: an election, lines in the log
        await advance(pilot, app, 6)
        app.redraw(text=True)
        await pilot.pause()
        assert app.model.logged > before + log.scrollable_content_region.height  # (more than a screen of them)
        assert counted.of(log) and not any(layout for _, layout in counted.of(log))
        # ... and it still follows them: the newest line at the bottom, the scrollbar's range the lines'
        assert log.virtual_size.height == len(log._lines) and log.scroll_y == log.max_scroll_y > 0
        assert log._lines[-1].text[:20] in log.visible_text()[-1]


class Past:
    """What the timeline's row reads of a history: its instants' times and its markers."""

    def __init__(self, times: list[float], markers: list[tuple[float, str]]):
        self.times = times
        self.markers = [SimpleNamespace(t=t, kind=kind) for t, kind in markers]

    @property
    def instants(self) -> int:
        return len(self.times)


class RowApp(App[None]):
    def compose(self):
        yield TimelineRow("classic Bully")


@on_asyncio
async def test_a_new_instant_redraws_the_timeline_row_only_when_a_cell_moves(monkeypatch):
    async with RowApp().run_test(size=(100, 3)) as pilot:
        row = pilot.app.query_one(TimelineRow)
        past = Past([0.0, 10.0], [(0.0, "election")])
        row.show(past, None)
        await pilot.pause()
        drawn = row.render().plain
        counted = Refreshes(monkeypatch, [row])
        past.times.append(10.01)  # a new instant: the marker at the start, the present at the end, as they were
        row.show(past, None)
        assert counted.of(row) == [] and row.render().plain == drawn
        past.markers.append(SimpleNamespace(t=5.0, kind="crash"))
        row.show(past, None)
        assert counted.of(row) and "✖" in row.render().plain
        counted.calls.clear()
        row.show(past, 1)  # back to an earlier instant: the cell shown moves
        assert counted.of(row)


class Served:
    """What Redraws needs of an app, served or not: its ticks are recorded."""

    def __init__(self, is_web: bool):
        self.is_web = is_web
        self.intervals: list[float] = []

    def set_interval(self, interval: float, callback, pause: bool = False):
        self.intervals.append(interval)


def test_a_served_app_ticks_less_often():
    for is_web, (ticks, texts) in ((False, (redraws.REDRAW_HZ, redraws.TEXT_HZ)), (True, redraws.SERVED)):
        app = Served(is_web)
        drawing = redraws.Redraws(app, lambda text=None: None)
        drawing.tick(paused=False)
        assert app.intervals == [1 / ticks] and drawing.rates == (ticks, texts)
    assert redraws.SERVED[0] < redraws.REDRAW_HZ and redraws.SERVED[1] < redraws.TEXT_HZ
