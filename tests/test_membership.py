"""Members that join and leave (the gsharma design, note 7): the commands, the trace, the
monitor, the summary and the transcript; and random schedules of joins, leaves,
crashes and recoveries, after which every algorithm that takes them agrees again.

CI runs 60 derandomized examples per property; HYPOTHESIS_PROFILE=thorough runs 1,500."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.cli import main
from playground.core.command_lines import parse_at
from playground.core.commands import Crash, Join, Leave, Recover, Scheduled
from playground.core.config import ClusterConfig, InputError
from playground.core.ids import next_id, uuid_ids
from playground.record.export import collect
from playground.record.reader import load
from playground.record.verify import verify
from protocol import ALGORITHMS, Config, Receive, Start, Stoller
from protocol import Join as JoinMessage
from tests.support import final_states, run, unchecked
from tests.test_app import advance, card_text, make_app, on_asyncio, palette
from tests.test_interactions import play
from tests.test_random_schedules import configs

TAKE_MEMBERS = [name for name, cls in ALGORITHMS.items() if cls.fixed_members is None]
# The classic Bully's known flaw (a node that comes back mid-election announces itself
# without asking) holds for a newcomer too: test_classic_two_joins_at_once_can_strand_a_node.
HEAL_AFTER_ANY = [name for name in TAKE_MEMBERS if name != "classic"]


def test_a_joiner_gets_the_next_integer_or_a_new_uuid():
    assert next_id((1, 2, 3), seed=1) == 4
    ids = uuid_ids(3, seed=1)
    joiner = next_id(ids, seed=1)
    assert joiner not in ids and joiner.bit_length() > 64 and joiner == next_id(ids, seed=1)


def test_commands_after_a_join_can_name_the_newcomer_whatever_order_they_are_given_in():
    commands = parse_at(["30 crash 6", "10 join", "20 leave 2"], (1, 2, 3, 4, 5))
    assert [(s.at, s.command) for s in commands] == [(10, Join(6)), (20, Leave(2)), (30, Crash(6))]
    with pytest.raises(InputError, match=r"--at '5 crash 6': there is no node 6 \(nodes are 1..5\)"):
        parse_at(["5 crash 6", "10 join"], (1, 2, 3, 4, 5))
    with pytest.raises(InputError, match="join takes no arguments: join"):
        parse_at(["10 join 3"], (1, 2, 3))


def summary_of(capsys, *args: str) -> dict:
    assert main(["--headless", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("algorithm", ["epoch-bully", "classic", "ring"])
def test_join_and_leave_headless_end_with_the_members_agreeing_on_the_highest(algorithm, capsys):
    s = summary_of(capsys, "--algorithm", algorithm, "--nodes", "4", "--at", "10 join", "--at", "40 leave 5",
                   "--at", "70 leave 1", "--until", "150")
    assert s["members"] == [2, 3, 4] and s["up"] == [2, 3, 4]
    assert s["status"]["5"] == s["status"]["1"] == "left"
    assert {s["leader"][str(i)] for i in s["members"]} == {4}
    assert s["messages"]["join"] == 4 and s["messages"]["leave"] == 4 + 3  # to every member each knew
    assert [v for v in s["violations"] if v["property"] == "sle2"] == []


def test_the_transcript_records_joins_and_leaves_and_reruns_exactly(tmp_path, capsys):
    path = tmp_path / "members.jsonl"
    summary_of(capsys, "--algorithm", "epoch-bully", "--nodes", "3", "--at", "5 join", "--at", "20 leave 4",
               "--until", "40", "--transcript", str(path))
    loaded = load(str(path))
    assert [(e.kind, e.node) for e in loaded.events if e.kind in ("join", "leave")] == [("join", 4), ("leave", 4)]
    assert [(e.command, e.args) for e in loaded.events if e.kind == "command"] == [("join", (4,)), ("leave", (4,))]
    assert {e.msg.type for e in loaded.events if e.kind == "send" and e.src == 4} >= {"join", "leave"}
    assert verify(str(path)) == len(loaded.events)  # re-created event for event


def test_the_space_time_diagram_gives_a_newcomer_a_lane_from_its_join(tmp_path, capsys):
    path = tmp_path / "members.jsonl"
    summary_of(capsys, "--algorithm", "ring", "--nodes", "3", "--at", "5 join", "--at", "20 leave 1",
               "--until", "40", "--transcript", str(path))
    diagram = collect(str(path))
    assert diagram.ids == (1, 2, 3, 4) and diagram.labels[4] == "4"
    assert [(m.node, m.kind) for m in diagram.marks if m.kind in ("join", "leave")] == [(4, "join"), (1, "leave")]
    assert any(f.src == 4 for f in diagram.flights)


def test_a_leaver_is_gone_for_good_and_messages_to_it_are_dropped_as_such():
    # (The parser refuses `recover 3` after `leave 3`; the engine is asked directly.)
    engine, events = run(3, 30, ClusterConfig(), [*at_("5 leave 3"), Scheduled(6, Recover(3), "test")], algorithm="epoch-bully")
    assert not engine.hosts[3].up and engine.members == (1, 2)
    assert not [e for e in events if e.kind == "recover"]
    assert not [e for e in events if e.kind == "deliver" and e.dst == 3 and e.t > 5]
    assert {e.reason for e in events if e.kind == "drop" and e.dst == 3} <= {"receiver left"}
    assert final_states(engine)[1][1:] == (2, True)


def test_leave_of_a_node_that_is_down_changes_nothing():
    engine, events = run(3, 30, ClusterConfig(), unchecked("5 crash 2", "6 leave 2"), algorithm="classic")
    assert engine.members == (1, 2, 3) and not [e for e in events if e.kind == "leave"]


def at_(*lines: str) -> list[Scheduled]:
    return parse_at(list(lines), (1, 2, 3))


class FixedGroup(Stoller):
    """An algorithm whose model cannot take a change of members, of the test's own:
    Stoller's, saying it cannot (Raft's cannot either: joint consensus is left out)."""

    name = "fixed-group"
    fixed_members = "its rounds assume the nodes it started with"


@pytest.fixture
def fixed_group(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, FixedGroup.name, FixedGroup)
    return FixedGroup.name


def test_an_algorithm_that_cannot_take_members_refuses_with_one_line(fixed_group, capsys):
    assert [name for name, cls in ALGORITHMS.items() if cls.fixed_members] == ["raft", fixed_group]
    for algorithm, why in ((fixed_group, "its rounds assume"), ("raft", "Raft changes its members by joint consensus")):
        for line in ("5 join", "5 leave 2"):
            assert main(["--headless", "--algorithm", algorithm, "--at", line, "--until", "10"]) == 2
            err = capsys.readouterr().err.strip()
            assert f"{algorithm} cannot add or remove nodes: {why}" in err and "\n" not in err


# --- random schedules -------------------------------------------------------------------


@st.composite
def schedules(draw) -> tuple[int, ClusterConfig, tuple[Scheduled, ...]]:
    """Up to eight joins, leaves, crashes and recoveries, a few seconds apart at most,
    so that they land in the middle of elections; at least one node stays."""
    nodes = draw(st.integers(2, 5))
    config = draw(configs())
    every, left, down = list(range(1, nodes + 1)), set(), set()
    t, out = 5.0, []
    for _ in range(draw(st.integers(1, 8))):
        t = round(t + draw(st.floats(0, 2 * config.timeout + config.probe_interval)), 3)
        members = [i for i in every if i not in left]
        up = [i for i in members if i not in down]
        choice = draw(st.sampled_from(["join", "leave", "crash", "recover"]))
        if choice == "join":
            node = next_id(tuple(every), 1)
            every.append(node)
            command = Join(node)
        elif choice == "recover" and down:
            node = draw(st.sampled_from(sorted(down)))
            down.discard(node)
            command = Recover(node)
        elif len(up) > 1:
            node = draw(st.sampled_from(up))
            (left if choice == "leave" else down).add(node)
            command = Leave(node) if choice == "leave" else Crash(node)
        else:
            continue
        out.append(Scheduled(t, command, "hypothesis"))
    return nodes, config, tuple(out)


@pytest.mark.parametrize("algorithm", HEAL_AFTER_ANY)
@given(schedule=schedules())
def test_after_any_joins_and_leaves_all_up_members_agree_on_the_highest_within_c(algorithm, schedule):
    nodes, config, commands = schedule
    last = max((s.at for s in commands), default=0.0)
    every = nodes + sum(type(s.command) is Join for s in commands)
    until = last + ALGORITHMS[algorithm].settle_time(every, config.protocol, config.delay_max) + 1
    engine, events = run(nodes, until, config, commands, algorithm=algorithm)
    assert [e for e in events if e.kind == "violation" and e.property == "sle2"] == []
    up = [i for i in engine.members if engine.hosts[i].up]
    states = final_states(engine)
    # (the Invitation algorithm promises one leader, whoever merged last; the others the highest)
    leader = max(up) if ALGORITHMS[algorithm].highest_wins else states[up[0]][1]
    assert leader in up and all(states[i][1:] == (leader, True) for i in up), {i: states[i] for i in up}


def test_classic_two_joins_at_once_can_strand_a_node_and_epoch_bully_heals():
    """Nodes 3 and 4 join at once and both announce themselves; node 2 takes 4's
    Coordinator, then 3's (tests/interactions/members-*.txt, the same interleaving).
    The textbook takes any: 2 follows 3 for good, its probes of 3 answered. epoch-bully
    ignores the late one (a lower node, no later epoch) and agrees under 4."""
    classic = play("members-classic-two-joins.txt").h
    assert classic.leaders()[2] == 3 and [e.nodes for e in classic.events if e.kind == "violation" and
                                          e.property == "sle2"] == [(2,)]
    epoch_bully = play("members-epoch-bully.txt").h
    joined = max(e.t for e in epoch_bully.events if e.kind == "join")
    left = min(e.t for e in epoch_bully.events if e.kind == "leave")
    between = [e for e in epoch_bully.events if joined <= e.t < left]
    assert [e.leader for e in between if e.kind == "state" and e.node == 2] == [4]  # never 3
    assert [e.leader for e in between if e.kind == "agreement"] == [None, 4]


# --- in the app ---------------------------------------------------------------------------


@on_asyncio
async def test_j_adds_a_card_for_the_newcomer_and_l_makes_the_selected_node_leave(tmp_path):
    app = make_app(tmp_path, nodes=4, algorithm="epoch-bully")
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 10)
        await pilot.press("j")
        await advance(pilot, app, 10)
        assert app.model.ids == (1, 2, 3, 4, 5) and "● normal ★" in card_text(app, 5)
        await pilot.press("1", "l")
        await advance(pilot, app, 10)
        assert "✖ left" in card_text(app, 1) and "→5" in card_text(app, 2)
        assert [line.text for line in app.model.log if line.kind in ("join", "leave")] == ["node 5 joined", "node 1 left"]
        await pilot.press("l")  # again: it has left, and the app says so instead of recording a command
        commands = await palette(app)
        commands["Crash node 1"]()  # from the palette too
        await advance(pilot, app, 1)
        assert [line.text for line in app.model.log].count("user: leave 1") == 1
        assert not any(line.text == "user: crash 1" for line in app.model.log)
        said = [n.message for n in app._notifications]
        assert said.count("Node 1 has left the cluster: leave cannot reach it.") == 1
        assert "Node 1 has left the cluster: crash cannot reach it." in said
        assert "Join a new node" in await palette(app)


@on_asyncio
async def test_an_algorithm_that_cannot_take_members_says_why_when_j_is_pressed(tmp_path, fixed_group):
    app = make_app(tmp_path, nodes=3, algorithm=fixed_group)
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 5)
        await pilot.press("j")
        await advance(pilot, app, 5)
        assert app.model.ids == (1, 2, 3)
        [note] = [n.message for n in app._notifications]
        assert note.startswith(f"{fixed_group} cannot add or remove nodes: ")


@pytest.mark.parametrize("algorithm", TAKE_MEMBERS)
def test_a_join_from_a_member_already_known_adds_it_once(algorithm):
    """A node that recovers is handed the members, a newcomer among them; the newcomer's
    Join, sent while it was down, can still arrive. (Stoller's counted the newcomer twice,
    and a node waited for ever: found by random schedules.)"""
    cls = ALGORITHMS[algorithm]
    n = cls(1, (1, 2, 3), Config(), cls.storage_class())
    n.step(Start())
    n.step(Receive(3, JoinMessage()))
    assert n.ids == (1, 2, 3) and n.storage.members == (1, 2, 3)
    engine, events = run(2, 30, ClusterConfig(timeout=0.8, probe_interval=1, delay_min=0.1, delay_max=0.4),
                         unchecked("5 crash 1", "7 join", "7.25 recover 1"), algorithm=algorithm)
    assert [e for e in events if e.kind == "violation" and e.property == "sle2"] == []
