"""Ring orders (`--ring`): the order of the ids round the ring algorithms' ring, from the
command line to the protocol (protocol/ring_order.py) and the transcript's header."""

import json

import pytest

from playground.cli.plan import plan
from playground.core.config import ClusterConfig, InputError
from playground.core.ids import ring_order, uuid_ids
from playground.record.reader import load
from playground.record.transcript import Header, header_line
from playground.record.verify import verify
from playground.run.wiring import run_headless
from protocol import Config, HirschbergSinclair, Join, Leave, Receive, Ring, Start
from protocol.hs import LEFT, RIGHT
from protocol.ring import Election
from protocol.ring_order import AFTER, RingLayout

from .support import sent

IDS = (1, 2, 3, 4, 5)


def ring_node(node_id: int, order, ids=IDS) -> Ring:
    return Ring(node_id, ids, Config(timeout=4, probe_interval=5, ring=order), Ring.storage_class())


# --- the protocol: neighbours in the order --------------------------------------------------


def test_sorted_is_the_default_and_each_successor_is_the_next_higher_id():
    assert [ring_node(i, None).variables()["successor"] for i in IDS] == [2, 3, 4, 5, 1]


def test_reversed_makes_each_successor_the_next_lower_id():
    order = ring_order("reversed", IDS, 1)
    assert order == (5, 4, 3, 2, 1)
    assert [ring_node(i, order).variables()["successor"] for i in IDS] == [5, 1, 2, 3, 4]
    assert sent(ring_node(3, order).step(Start()), Election)[0] == (2, Election)  # its first Election goes there


def test_hs_neighbours_follow_the_order_both_ways():
    n = HirschbergSinclair(3, IDS, Config(ring=(1, 3, 5, 2, 4)), HirschbergSinclair.storage_class())
    assert (n._next(3, LEFT), n._next(3, RIGHT)) == (1, 5)
    assert (n._next(4, RIGHT), n._next(1, LEFT)) == (1, 4)  # the last wraps round to the first
    assert (n.variables()["left"], n.variables()["right"]) == (1, 5)


def test_a_node_that_joins_goes_after_the_last_node_of_the_order_and_one_that_leaves_keeps_its_place():
    n = ring_node(2, (5, 4, 3, 2, 1))
    n.step(Start())
    n.step(Receive(6, Join()))
    n.step(Receive(7, Join()))
    layout = RingLayout(n.ids, n.config.ring)
    assert layout.ring == (5, 4, 3, 2, 1, 6, 7)  # joiners after the last, in order of id
    assert n.variables()["successor"] == 1 and n._next(1, AFTER) == 6 and n._next(7, AFTER) == 5
    n.step(Receive(1, Leave()))
    assert n.variables()["successor"] == 6 and n._next(1, AFTER) == 6  # 1 has left: past its place


def test_nodes_with_the_same_members_share_one_layout():
    a, b = ring_node(1, (3, 1, 2), (1, 2, 3)), ring_node(2, (3, 1, 2), (1, 2, 3))
    a._next(1, AFTER), b._next(2, AFTER)
    assert a._layout is b._layout


# --- the setting: names, lists of ranks, refusals -------------------------------------------


def test_shuffled_is_drawn_from_the_seed():
    ids = tuple(range(1, 17))
    assert ring_order("shuffled", ids, 1) == ring_order("shuffled", ids, 1) != ring_order("shuffled", ids, 2)
    assert sorted(ring_order("shuffled", ids, 1)) == list(ids) and ring_order("Sorted", ids, 1) is None


def test_a_list_names_nodes_by_rank():
    ids = uuid_ids(3, seed=1)
    assert ring_order(" 3, 1,2 ", ids, 1) == (ids[2], ids[0], ids[1])


@pytest.mark.parametrize("text, says", [
    ("bogus", "--ring must be sorted, reversed, shuffled or the ranks of every node"), ("1,,2", "not '1,,2'"),
    ("1,2,9", "--ring: there is no node 9 (nodes are 1..3)"), ("1,2,2", "--ring lists node 2 twice"),
    ("2", "--ring leaves out nodes 1, 3"), ("٣,1,2", "--ring must be"), ("9" * 5000, "(5,000 characters)"),
])
def test_a_bad_order_is_one_line_naming_it(text, says):
    with pytest.raises(InputError) as error:
        ring_order(text, (1, 2, 3), 1)
    assert says in str(error.value) and "\n" not in str(error.value)


def test_ring_is_for_the_algorithms_on_a_ring_only(tmp_path):
    for argv in (["--ring", "reversed"], ["--ring", "sorted", "--algorithm", "garcia-molina"],
                 ["--ring", "reversed", "--mutex", "central"]):
        with pytest.raises(InputError, match="--ring applies to ring and hs only"):
            plan(["--headless", *argv])
    scenario = tmp_path / "s.scenario"
    scenario.write_text("set algorithm classic\nset ring reversed\n")
    with pytest.raises(InputError, match=r"s.scenario line 2: ring applies to ring and hs only"):
        plan(["--headless", "--scenario", str(scenario)])
    with pytest.raises(InputError, match="--real does not take --ring"):
        plan(["--headless", "--real", "--algorithm", "ring", "--ring", "shuffled"])
    session = plan(["--headless", "--algorithm", "ring", "--mutex", "central", "--ring", "3,2,1", "--nodes", "3"]).session
    assert session.config.ring == (3, 2, 1)


# --- the transcript: recorded only when it is not the default --------------------------------


def test_the_header_records_the_order_only_when_it_is_not_sorted():
    plain = json.loads(header_line(Header("ring", [1, 2, 3], 1, ClusterConfig())))
    assert "ring" not in plain and "ring" not in plain["config"]
    ordered = json.loads(header_line(Header("ring", [1, 2, 3], 1, ClusterConfig(ring=(3, 1, 2)))))
    assert ordered["ring"] == [3, 1, 2] and list(ordered)[6] == "ring"  # right after the settings


def test_a_run_on_a_shuffled_ring_is_recorded_read_back_and_re_created(tmp_path):
    path = tmp_path / "t.jsonl"
    session = plan(["--headless", "--algorithm", "hs", "--ids", "uuid", "--nodes", "6", "--ring", "shuffled",
                             "--transcript", str(path), "--at", "20 crash 6", "--at", "30 join"]).session
    run_headless(session, 60)
    header = load(str(path)).header
    assert header.config.ring == session.config.ring and sorted(header.config.ring) == header.nodes
    assert verify(str(path)) > 0  # the same events again


@pytest.mark.parametrize("ring, says", [
    ([3, 1], "expected the header's nodes, each once"), ([3, 1, 1], "each once"), ("3,1,2", "each once"),
    ([3, 1, 2.0], "each once"),
])
def test_a_header_whose_order_is_not_its_nodes_is_refused(tmp_path, ring, says):
    line = json.loads(header_line(Header("ring", [1, 2, 3], 1, ClusterConfig())))
    line["ring"] = ring
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match="field 'ring'") as error:
        load(str(path))
    assert says in str(error.value)


def test_a_header_of_an_algorithm_not_on_a_ring_has_no_order(tmp_path):
    line = json.loads(header_line(Header("classic", [1, 2, 3], 1, ClusterConfig())))
    line["ring"] = [3, 2, 1]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match="field 'ring': classic's nodes do not form a ring"):
        load(str(path))
