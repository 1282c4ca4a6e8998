"""Windows of node work (core/windows.py): a window of several instants is cut once it
holds WINDOW_ENTRIES entries, so a storm's windows stay small, and where a window is
cut never changes the trace."""

from playground.core import engine as engine_module
from playground.core.agenda import Agenda
from playground.core.config import ClusterConfig
from playground.core.links import Links
from playground.core.windows import gather
from playground.core.work import DELIVERY, TIMER, Fire
from protocol.classic import Answer, Election
from tests.support import make_engine
from tests.test_runtime import transcript_bytes


def test_a_window_takes_whole_instants_until_its_budget_and_ends_where_the_next_begins():
    links, agenda = Links(), Agenda()
    links.send(1, 2, 0, Election(), earliest=100)
    links.send(3, 2, 1, Election(), earliest=100)
    agenda.fire(100, 2, Fire("answer_wait", 1))
    links.send(1, 3, 2, Answer(), earliest=150)
    agenda.fire(200, 3, Fire("answer_wait", 2))
    window = gather(links, agenda, 100, 600, budget=3)
    # The instant at 100 (three entries) is taken whole, deliveries before the timer;
    # the budget is spent, so the window ends where the next instant, 150, begins.
    assert (window.time, window.end) == (100, 150)
    assert [(t, rank, getattr(item, "msg_id", None)) for t, rank, _, item in window.work[2]] == [
        (100, DELIVERY, 0), (100, DELIVERY, 1), (100, TIMER, None)]
    assert list(window.work) == [2]
    # What was not taken waits for the next window, in order.
    rest = gather(links, agenda, 150, 600, budget=3)
    assert (rest.end, sorted(rest.work)) == (600, [3])
    assert [(t, rank) for t, rank, _, _ in rest.work[3]] == [(150, DELIVERY), (200, TIMER)]
    assert links.next_arrival() is None and agenda.next_time() is None


def test_a_storms_windows_hold_no_more_than_their_budget_but_their_last_instant(monkeypatch):
    """The classic Bully under jittered delays (0.5-1.5 s) at N = 30: a window of half a
    second held thousands of entries by t = 4."""
    monkeypatch.setattr(engine_module, "WINDOW_ENTRIES", 64)
    engine, _ = make_engine(30, ClusterConfig())
    largest = 0
    while engine.now < 4:
        window = engine.step()
        if window is None:
            continue
        times = sorted(t for entries in window.work.values() for t, *_ in entries)
        if window.end - window.time > 1:  # (a window of several instants, not a slice of one)
            assert len([t for t in times if t < times[-1]]) < 64
            largest = max(largest, len(times))
        for node, entries in window.work.items():
            engine.hosts[node].run(entries, window.end)
        engine.finish(window)
    assert largest >= 64  # the storm did fill windows


def test_a_window_cut_at_every_instant_gives_the_same_trace(monkeypatch):
    whole = transcript_bytes(seed=5)
    monkeypatch.setattr(engine_module, "WINDOW_ENTRIES", 1)
    assert transcript_bytes(seed=5) == whole
