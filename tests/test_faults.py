"""The model's assumptions broken on purpose (issue 33): lossy, reordering links and
drifting clocks in the engine, each draw the run's own, so a run with faults is
re-created event for event."""

from dataclasses import astuple

import pytest

from playground.core import by_hand
from playground.core.by_hand import DROPPED_BY_HAND
from playground.core.command_lines import parse_at
from playground.core.commands import (
    Command,
    DeliverMessage,
    DropMessage,
    DuplicateMessage,
    EnterByHand,
    FireTimer,
    HoldLink,
    LeaveByHand,
    Scheduled,
    from_words,
)
from playground.core.config import ClusterConfig, Faults, InputError, reorder_refused, to_seconds, to_us
from playground.core.engine import run_sync
from playground.core.faults import LOST_ON_THE_LINK, BrokenSince, broken, clock_rate
from playground.core.links import Links
from playground.core.settings import Settings
from protocol.classic import Answer, Election
from tests.support import at, make_engine, run

JITTER = ClusterConfig(timeout=4, probe_interval=2, delay_min=0.2, delay_max=1.5)


def faulty(**faults) -> ClusterConfig:
    return JITTER.with_faults(**faults)


def trace(config: ClusterConfig, commands=(), seed: int = 3, until: float = 120, **kw) -> list[tuple]:
    engine, events = make_engine(6, config, commands, seed, **kw)
    run_sync(engine, until)
    return [astuple(e) for e in events]


def of_kind(events, kind):
    return [e for e in events if e.kind == kind]


# --- loss ------------------------------------------------------------------------------------


def test_a_lost_message_is_dropped_where_it_would_have_arrived_and_never_seen():
    _, events = run(6, 120, faulty(loss=0.3), at("30 crash 6"), seed=4)
    sent = {e.id: e for e in of_kind(events, "send")}
    lost = [e for e in of_kind(events, "drop") if e.reason == LOST_ON_THE_LINK]
    assert 0.2 < len(lost) / len(sent) < 0.4
    for drop in lost:
        assert drop.t == sent[drop.id].arrives and (drop.src, drop.dst) == (sent[drop.id].src, sent[drop.id].dst)
    delivered = {e.id for e in of_kind(events, "deliver")}
    assert not delivered & {d.id for d in lost}
    due = {i for i, e in sent.items() if e.arrives <= 120}
    arrived = [e.id for e in events if e.kind in ("deliver", "drop")]
    assert sorted(arrived) == sorted(due)  # still exactly once: delivered, or dropped


def test_loss_of_one_loses_everything_and_of_zero_draws_nothing():
    _, events = run(4, 30, faulty(loss=1.0))
    assert not of_kind(events, "deliver") and of_kind(events, "drop")
    assert trace(faulty(loss=0.0)) == trace(JITTER)  # the same run, byte for byte


def test_a_run_with_faults_is_re_created_event_for_event():
    config = faulty(loss=0.2, reorder=True, drift=0.3)
    commands = at("20 crash 6", "30 lossy 1 2 0.9", "40 recover 6")
    first = trace(config, commands)
    assert trace(config, commands) == first
    assert trace(config, commands, lookahead=False) == first  # windows or instants: the same
    assert trace(config, commands, seed=4) != first


def test_a_copy_of_an_engine_with_faults_runs_on_as_the_original():
    engine, events = make_engine(6, faulty(loss=0.2, reorder=True, drift=0.2), at("30 lossy 2 1 1"), seed=5)
    run_sync(engine, 40)
    twin = engine.copy()
    theirs: list = []
    twin.subscribe(theirs.extend)
    cut = len(events)
    run_sync(engine, 120)
    run_sync(twin, 120)
    assert [astuple(e) for e in events[cut:]] == [astuple(e) for e in theirs] and theirs


def test_lossy_makes_one_link_lossy_and_zero_makes_it_lossless_again():
    _, events = run(5, 200, JITTER, at("50 lossy 2 5 1", "100 lossy 2 5 0"), seed=2)
    lost = [e for e in of_kind(events, "drop") if e.reason == LOST_ON_THE_LINK]
    sent = {e.id: e for e in of_kind(events, "send")}
    assert lost and all((d.src, d.dst) == (2, 5) and 50 <= sent[d.id].t < 100 for d in lost)
    assert any(e.src == 2 and e.dst == 5 and e.t > 100 for e in of_kind(events, "deliver"))
    assert [(c.command, c.args) for c in of_kind(events, "command")] == [("lossy", (2, 5, 1)), ("lossy", (2, 5, 0))]


def test_a_lossless_link_under_loss_loses_nothing():
    _, events = run(3, 60, faulty(loss=1.0), at("0 lossy 1 2 0", "0 lossy 2 1 0"), seed=2)
    sent = {e.id: e for e in of_kind(events, "send")}
    drops = [d for d in of_kind(events, "drop") if sent[d.id].t > 0]  # (the boot's sends go before the commands at 0)
    assert drops and all({d.src, d.dst} != {1, 2} for d in drops)
    assert {(e.src, e.dst) for e in of_kind(events, "deliver")} <= {(1, 2), (2, 1)}


def test_a_lost_message_on_a_held_link_is_lost_not_held():
    links = Links()
    links.hold(1, 2)
    links.send(1, 2, 0, Election(), earliest=10)
    links.send(1, 2, 1, Answer(), earliest=10)
    links.lose(0, LOST_ON_THE_LINK)
    arrived = [type(d).__name__ for _, _, d in links.take(20)]
    assert arrived == ["Lost", "Held"]
    assert links.waiting_at() == {(1, 2): 1}


# --- duplication ---------------------------------------------------------------------------


def test_a_duplicated_message_arrives_twice_the_copy_after_its_own_delay():
    _, events = run(6, 120, faulty(duplicate=0.3), at("30 crash 6", "50 recover 6"), seed=4)
    sent = {e.id: e for e in of_kind(events, "send")}
    copies = of_kind(events, "duplicate")
    assert 0.2 < len(copies) / len(sent) < 0.4
    arrivals: dict[int, list[float]] = {}
    for e in events:
        if e.kind in ("deliver", "drop"):
            arrivals.setdefault(e.id, []).append(e.t)
    for copy in copies:
        original = sent[copy.id]
        assert (copy.t, copy.src, copy.dst) == (original.t, original.src, original.dst)
        assert 0.2 <= copy.arrives - copy.t  # a delay of its own (FIFO may hold it longer)
        if copy.arrives <= 120:
            assert sorted(arrivals[copy.id]) == sorted([original.arrives, copy.arrives])
    seq = {id(e): i for i, e in enumerate(events)}
    assert all(seq[id(c)] == seq[id(sent[c.id])] + 1 for c in copies)  # right after its send


def test_the_user_duplicates_a_message_by_hand():
    engine, events = hand_engine()
    flight = engine.links.flights()[0]
    user(engine, DuplicateMessage(flight.id))
    copy = of_kind(events, "duplicate")[-1]
    assert (copy.id, copy.src, copy.dst, copy.t) == (flight.id, flight.src, flight.dst, 5.000002)
    assert [f.copy for f in engine.links.flights() if f.id == flight.id] == [False, True] or \
        sorted(f.copy for f in engine.links.flights() if f.id == flight.id) == [False, True]
    user(engine, DeliverMessage(flight.id))
    user(engine, DeliverMessage(flight.id))
    assert [e.t for e in of_kind(events, "deliver") if e.id == flight.id] == [5.000003, 5.000004]


# --- reordering -------------------------------------------------------------------------------


def test_reordering_links_let_a_later_message_overtake():
    links = Links(fifo=False)
    assert links.send(1, 2, 0, Election(), earliest=500) == 500
    assert links.send(1, 2, 1, Answer(), earliest=300) == 300  # FIFO would hold it to 500
    assert [d.msg_id for _, _, d in links.take(1000)] == [1, 0]


def test_a_run_with_reorder_delivers_out_of_send_order_and_without_it_never():
    def overtaken(config):
        _, events = run(6, 120, config, at("30 crash 6", "50 recover 6"), seed=7)
        arrived = [e for e in events if e.kind in ("deliver", "drop")]
        links = {(e.src, e.dst) for e in arrived}
        return sum(ids != sorted(ids) for ids in ([e.id for e in arrived if (e.src, e.dst) == link] for link in links))

    assert overtaken(faulty(reorder=True)) > 0
    assert overtaken(JITTER) == 0


def test_reorder_with_a_constant_delay_is_refused_in_one_line():
    assert reorder_refused(1, 1) == ("--reorder needs a delay range (MIN:MAX): with a constant delay of 1 s "
                                     "nothing can overtake")
    assert reorder_refused(0.5, 1.5) is None


# --- drift ------------------------------------------------------------------------------------


def test_each_clock_runs_at_its_own_seeded_rate_within_the_bound():
    rates = [clock_rate(1, node, 0.2) for node in range(1, 51)]
    assert all(0.8 <= r <= 1.2 for r in rates) and len(set(rates)) > 40
    assert rates == [clock_rate(1, node, 0.2) for node in range(1, 51)]
    assert clock_rate(1, 3, 0.0) == 1.0


def test_a_drifting_node_fires_each_timer_after_its_delay_over_its_rate():
    engine, events = make_engine(4, faulty(drift=0.4), seed=9, algorithm="classic")
    run_sync(engine, 60)
    rates = {i: h.rate for i, h in engine.hosts.items()}
    assert len(set(rates.values())) == 4
    probes = [e for e in of_kind(events, "timer_set") if e.name == "probe"]
    assert probes
    for e in probes:
        assert e.fires - e.t == pytest.approx(JITTER.probe_interval / rates[e.node], abs=1e-6)


def test_drift_and_probabilities_out_of_range_are_refused():
    for bad in ({"loss": 1.5}, {"loss": -0.1}, {"duplicate": float("nan")}, {"drift": 1.0}, {"drift": -0.2}):
        with pytest.raises(InputError):
            Faults(**bad)
    with pytest.raises(InputError, match="probability from 0 to 1, not 2"):
        parse_at(["3 lossy 1 2 2"], (1, 2, 3))
    with pytest.raises(InputError, match="there is no node 4"):
        parse_at(["3 lossy 1 4 0.5"], (1, 2, 3))


# --- which assumptions are broken, and since when ------------------------------------------


def test_the_settings_say_which_assumptions_are_broken():
    assert broken(JITTER) == ()
    assert broken(faulty(loss=0.1, drift=0.1)) == ("loss", "drift")
    assert broken(JITTER.with_timeout(1)) == ("synchrony",)
    settings = Settings(JITTER).after("lossy", (1, 2, 0.5), (1, 2, 3))
    assert settings.broken == ("loss",) and settings.lossy == ((1, 2, 0.5),)
    assert settings.after("lossy", (1, 2, 0), (1, 2, 3)).broken == ()
    assert Settings(JITTER).after("hold", (1, 2), (1, 2)).broken == ("synchrony",)


def test_broken_since_keeps_when_each_assumption_broke():
    since = BrokenSince()
    since.update(0.0, ("drift",))
    since.update(3.2, ("loss", "drift"))
    since.update(5.0, ("loss", "drift"))
    assert since.text() == "links lossy since t=3.20 · clocks drift since t=0.00"
    since.update(9.0, ("drift",))
    assert since.text() == "clocks drift since t=0.00"


# --- the user as the network (engine rule 8) -----------------------------------------------


def hand_engine(config: ClusterConfig = JITTER, seed: int = 2):
    """A 5-node run stopped at t = 5 (an election under way), taken by hand."""
    engine, events = make_engine(5, config, seed=seed)
    run_sync(engine, 5)
    engine.submit(EnterByHand(), "user", to_us(5))
    run_sync(engine, 5.000001)
    return engine, events


def user(engine, command: Command) -> None:
    """A command given live, once the clock has moved on by a microsecond (as the app's does)."""
    engine.submit(command, "user", engine.now_us + 1)
    run_sync(engine, to_seconds(engine.now_us + 1))


def test_by_hand_nothing_arrives_and_no_timer_fires_and_the_clock_stands_still():
    engine, events = hand_engine()
    cut = len(events)
    flights = engine.links.flights()
    assert flights and engine.hand
    run_sync(engine, 500)
    assert [e.kind for e in events[cut:]] == []
    assert engine.due() is None or engine.due() > to_us(500)  # only the monitor's deadline, if any


def test_by_hand_the_user_delivers_drops_and_fires_each_a_recorded_command():
    engine, events = hand_engine()
    first, second = engine.links.flights()[-1], engine.links.flights()[0]  # the last due first: any order
    user(engine, DeliverMessage(first.id))
    user(engine, DropMessage(second.id))
    node, name = next((i, n) for i, h in engine.hosts.items() for n in h.timers)
    user(engine, FireTimer(node, name))
    kinds = [(e.kind, getattr(e, "id", None)) for e in events if e.t > 5]
    assert ("command", None) in kinds and ("deliver", first.id) in kinds and ("drop", second.id) in kinds
    drop = next(e for e in events if e.kind == "drop")
    assert drop.reason == DROPPED_BY_HAND and drop.t == 5.000003
    assert any(e.kind == "timer" and (e.node, e.name) == (node, name) and e.t == 5.000004 for e in events)
    assert [c.command for c in events if c.kind == "command"] == ["by-hand", "deliver", "drop", "fire"]
    assert engine.links.find(first.id) is None and engine.links.find(second.id) is None


def test_a_message_not_in_flight_or_a_timer_not_set_is_refused_and_nothing_recorded():
    engine, events = hand_engine()
    assert by_hand.refusal(engine, DeliverMessage(10_000)) == (
        "message 10000 is not in flight: it has arrived or been dropped, or was never sent")
    held = engine.links.flights()[0]
    user(engine, HoldLink(held.src, held.dst))
    user(engine, LeaveByHand())
    run_sync(engine, to_seconds(held.due))  # (it reaches the held link's end, and waits)
    assert by_hand.refusal(engine, DeliverMessage(held.id)) == (
        f"message {held.id} is not in flight: it waits at a held link's end, and arrives when the link is released")
    assert by_hand.refusal(engine, FireTimer(1, "no_such_timer")) == "node 1 has no timer no_such_timer set"
    cut = len(events)
    user(engine, DropMessage(10_000))
    assert events[cut:] == []


def test_by_clock_what_fell_due_arrives_at_once_in_order_and_the_rest_on_time():
    engine, events = make_engine(5, JITTER, seed=2)
    run_sync(engine, 5)
    due = engine.links.next_arrival()  # the next arrival, to fall due while the user holds the network
    run_sync(engine, to_seconds(due - 2))
    engine.submit(EnterByHand(), "user", due - 1)
    run_sync(engine, to_seconds(due - 1))
    flights = engine.links.flights()
    for _ in range(2):  # (each step moves the clock on by a microsecond: to `due`, then past it)
        user(engine, FireTimer(*next((i, n) for i, h in engine.hosts.items() for n in h.timers)))
    overdue = [f for f in flights if f.due <= engine.now_us]
    later = [f for f in flights if f.due > engine.now_us]
    assert overdue and later
    user(engine, LeaveByHand())
    now = engine.now
    run_sync(engine, 100)
    arrived = {e.id: e.t for e in events if e.kind in ("deliver", "drop") and e.t >= now}
    assert all(arrived[f.id] == now for f in overdue)
    assert all(arrived[f.id] == to_seconds(f.due) for f in later if f.id in arrived)


def test_a_by_hand_session_is_re_created_from_its_commands():
    engine, events = hand_engine(faulty(loss=0.2), seed=4)
    flights = engine.links.flights()
    user(engine, DeliverMessage(flights[-1].id))
    user(engine, DropMessage(flights[0].id))
    user(engine, LeaveByHand())
    run_sync(engine, 60)
    recorded = [Scheduled(c.t, from_words(c.command, c.args), "user") for c in events if c.kind == "command"]
    again, theirs = make_engine(5, faulty(loss=0.2), recorded, seed=4)
    run_sync(again, 60)
    assert [astuple(e) for e in theirs] == [astuple(e) for e in events]
