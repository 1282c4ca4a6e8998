"""Held links and partitions: messages wait at a held link's end, in order, and are never
lost; release and heal deliver them at once (links.py rule 3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.cli import main
from playground.core.commands import Crash, Heal, HoldLink, Partition, Recover, ReleaseLink, Scheduled
from playground.core.config import ClusterConfig, InputError
from playground.core.links import Links
from playground.core.settings import held_after
from protocol.classic import Answer, Election
from tests.support import at, run
from tests.test_app import advance, make_app, on_asyncio, palette

CONSTANT = ClusterConfig(timeout=4, probe_interval=2, delay_min=1, delay_max=1)


def test_rule3_a_held_link_keeps_its_messages_in_order_and_release_delivers_them_first():
    links = Links()
    links.send(1, 2, 0, Election(), earliest=10)
    links.send(1, 2, 1, Answer(), earliest=20)
    links.hold(1, 2)
    assert [(t, type(d).__name__, d.msg_id) for t, _, d in links.take(25)] == [(10, "Held", 0), (20, "Held", 1)]
    links.send(1, 2, 2, Election(), earliest=30)  # sent later, arriving at the release's instant
    links.release(1, 2, now=30)
    assert [(t, d.msg_id) for t, _, d in links.take(31)] == [(30, 0), (30, 1), (30, 2)]
    assert len(links) == 0 and links.held == set()


def by_kind(events, kind):
    return [e for e in events if e.kind == kind]


def test_a_partition_holds_both_ways_and_heal_delivers_what_waited():
    _, events = run(4, 60, CONSTANT, at("10 partition 1,2", "30 heal"))
    held = by_kind(events, "held")
    assert held and {(e.src, e.dst) for e in held} <= {(a, b) for a in (1, 2) for b in (3, 4)} | \
        {(b, a) for a in (1, 2) for b in (3, 4)}
    sent = {e.id: e for e in by_kind(events, "send")}
    delivered = {e.id: e.t for e in by_kind(events, "deliver")}
    for h in held:
        assert sent[h.id].arrives == h.t <= 30 and delivered[h.id] == 30  # waited, then arrived at the heal
    assert all(not (10 < e.t < 30 and {e.src, e.dst} & {1, 2} and {e.src, e.dst} & {3, 4})
               for e in by_kind(events, "deliver"))


def test_link_commands_parse_and_say_what_is_wrong(capsys):
    ids = (1, 2, 3, 4)
    [hold, part, heal] = at("5 hold 1 2", "6 partition 3,1", "7 heal", ids=ids)
    assert (hold.command, part.command, heal.command) == (HoldLink(1, 2), Partition((1, 3)), Heal())
    for line, expected in [("5 hold 1 1", "hold needs two different nodes"),
                           ("5 partition 1,2,3,4", "a partition cuts some members off from the others"),
                           ("5 heal 3", "heal takes no arguments"), ("5 release 1", "release takes two arguments"),
                           ("5 partition 9", "there is no node 9")]:
        with pytest.raises(InputError, match=expected):
            at(line, ids=ids)


def test_held_after_is_what_the_engine_and_the_screen_both_follow():
    held = held_after(frozenset(), "partition", (1,), (1, 2, 3))
    assert held == {(1, 2), (2, 1), (1, 3), (3, 1)}
    assert held_after(held, "release", (1, 2), (1, 2, 3)) == {(2, 1), (1, 3), (3, 1)}
    assert held_after(held, "heal", (), (1, 2, 3)) == frozenset()


def test_a_run_with_holds_is_re_created_exactly(tmp_path, capsys):
    path = str(tmp_path / "holds.jsonl")
    assert main(["--headless", "--nodes", "5", "--until", "90", "--transcript", path, "--at", "10 hold 5 1",
                 "--at", "20 partition 1,2", "--at", "40 release 5 1", "--at", "60 heal"]) == 0
    capsys.readouterr()
    assert main(["verify", path]) == 0


@on_asyncio
async def test_keys_cut_a_node_off_and_heal_and_the_screen_says_what_waits(tmp_path):
    app = make_app(tmp_path, nodes=4, config=CONSTANT)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 10)
        await pilot.press("4", "p")
        await advance(pilot, app, 6)
        assert app.state.held_links == {(4, i) for i in (1, 2, 3)} | {(i, 4) for i in (1, 2, 3)}
        assert "6 links held: synchrony broken" in str(app.status_bar.render())
        waiting = {i: n.waiting for i, n in app.model.nodes.items()}
        assert waiting[4] > 0 and f"⏸{waiting[4]}" in app.grid.node_text(4)
        app.redraw(text=True)  # the panel is drawn at most TEXT_HZ times a second
        assert f"{waiting[4]} messages to it wait on held links" in " ".join(app.panel.shown_text().split())
        titles = set(await palette(app))
        assert {"Cut node 2 off", "Hold link 4→1", "Split the cluster: ..2 | 3..", "Heal every link"} <= titles
        await pilot.press("P")
        await advance(pilot, app, 0.001)
        assert app.state.held_links == frozenset() and all(n.waiting == 0 for n in app.model.nodes.values())
        assert "held" not in str(app.status_bar.render())


# --- random holds: the links' promises under any schedule -------------------------------------

@st.composite
def link_schedules(draw):
    nodes = draw(st.integers(2, 5))
    t, commands = 2.0, []
    for _ in range(draw(st.integers(1, 10))):
        t = round(t + draw(st.floats(0, 6)), 3)
        kind = draw(st.sampled_from(["hold", "release", "partition", "heal", "crash", "recover"]))
        a, b = draw(st.integers(1, nodes)), draw(st.integers(1, nodes))
        if kind in ("hold", "release") and a != b:
            commands.append(Scheduled(t, (HoldLink if kind == "hold" else ReleaseLink)(a, b), "hypothesis"))
        elif kind == "partition":
            commands.append(Scheduled(t, Partition((a,)), "hypothesis"))
        elif kind == "heal":
            commands.append(Scheduled(t, Heal(), "hypothesis"))
        elif kind in ("crash", "recover"):
            commands.append(Scheduled(t, (Crash if kind == "crash" else Recover)(a), "hypothesis"))
    return nodes, draw(st.integers(0, 1000)), commands


@given(link_schedules())
def test_under_any_holds_links_stay_lossless_and_fifo(schedule):
    nodes, seed, commands = schedule
    until = max((c.at for c in commands), default=2.0) + 20
    config = ClusterConfig(timeout=2, probe_interval=1, delay_min=0.1, delay_max=0.9)
    _, events = run(nodes, until, config, commands + [Scheduled(until - 10, Heal(), "end")], seed=seed)
    sent = {e.id: e for e in by_kind(events, "send")}
    held = {e.id: e for e in by_kind(events, "held")}
    up: set[int] = set()
    order: dict[tuple[int, int], list[int]] = {}
    for e in events:
        if e.kind in ("start", "recover"):
            up.add(e.node)
        elif e.kind == "crash":
            up.discard(e.node)
        elif e.kind in ("deliver", "drop"):
            s = sent.pop(e.id)  # exactly once
            assert (e.src, e.dst) == (s.src, s.dst)
            assert e.t == s.arrives or (e.id in held and e.t > s.arrives)  # on time, or after waiting
            assert (e.kind == "deliver") == (e.dst in up)
            order.setdefault((e.src, e.dst), []).append(e.id)
    assert all(s.arrives > until - 10 for s in sent.values()), "a message was lost"
    for link, ids in order.items():
        assert ids == sorted(ids), f"link {link} reordered"
