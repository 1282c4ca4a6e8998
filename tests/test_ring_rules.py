"""Chang & Roberts ring election (lecture 3-9), rule by rule."""

from dataclasses import replace

from protocol import Config, ElectionStarted, Receive, Ring, SetTimer, Start, TimerFired
from protocol.ring import Elected, Election, RingAck

from .support import sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)


def msgs(outputs) -> list[tuple[int, object]]:
    """(destination, message) of each Send, with only the ids these tests are about:
    Election(c) and Elected(l) stand for those of any election."""
    return [(o.dst, _ids_only(o.msg)) for o in outputs if hasattr(o, "msg")]


def _ids_only(msg):
    if isinstance(msg, (Election, Elected)):
        return replace(msg, epoch=0, initiator=0, round=0)
    return replace(msg, epoch=0)


def E(candidate: int, initiator: int = 0, round: int = 0) -> Election:
    return Election(candidate, initiator, round)


def L(leader: int, initiator: int = 0, round: int = 0) -> Elected:
    return Elected(leader, initiator, round)


def node(node_id: int) -> Ring:
    return Ring(node_id, IDS, CONFIG, Ring.storage_class())


def idle(node_id: int) -> Ring:
    """A node following 5, not taking part in an election."""
    n = node(node_id)
    n.step(Start())
    n.step(Receive(node_id - 1 if node_id > 1 else 5, L(5)))
    return n


def test_an_initiator_sends_its_id_to_its_successor_only():
    n = node(2)
    out = n.step(Start())
    assert ElectionStarted() in out
    assert msgs(out) == [(3, E(2))]
    assert SetTimer("hop_wait 3", 4) in out
    assert (n.status, n.participant) == ("election", True)


def test_the_highest_id_wraps_round_to_the_lowest():
    n = node(5)
    assert sent(n.step(Start())) == [(1, Election)]


def test_a_larger_id_is_forwarded_and_acked():
    n = idle(2)
    out = n.step(Receive(1, E(4)))
    assert msgs(out) == [(3, E(4)), (1, RingAck())]
    assert n.participant


def test_a_smaller_id_is_replaced_by_mine_when_not_participating():
    n = idle(3)
    out = n.step(Receive(2, E(1)))
    assert [m for dst, m in msgs(out) if dst == 4] == [E(3)]


def test_a_participant_swallows_a_smaller_id():
    n = idle(3)
    n.step(Receive(2, E(4)))
    out = n.step(Receive(2, E(1)))
    assert sent(out) == [(2, RingAck)]


def test_my_own_id_back_makes_me_leader_and_i_announce_it():
    n = node(5)
    n.step(Start())
    out = n.step(Receive(4, E(5)))
    assert msgs(out)[0] == (1, L(5))
    assert (n.status, n.leader, n.participant) == ("normal", 5, False)


def test_elected_is_followed_and_forwarded_until_it_reaches_the_leader():
    n = node(3)
    n.step(Start())
    out = n.step(Receive(2, L(5)))
    assert (n.status, n.leader, n.participant) == ("normal", 5, False)
    assert [m for dst, m in msgs(out) if dst == 4] == [L(5)]
    leader = node(5)
    leader.step(Start())
    leader.step(Receive(4, E(5)))
    assert sent(leader.step(Receive(4, L(5)))) == [(4, RingAck)]  # gone round: stop


def test_a_successor_that_does_not_ack_within_T_is_skipped():
    n = node(2)
    n.step(Start())
    out = n.step(TimerFired("hop_wait 3"))
    assert msgs(out) == [(4, E(2))]
    assert SetTimer("hop_wait 4", 4) in out


def test_acks_clear_messages_in_order():
    n = node(2)
    n.step(Start())
    n.step(Receive(1, E(5)))
    assert len(n.unacked[3]) == 2
    n.step(Receive(3, RingAck()))
    assert [kind.type for kind, _ in n.unacked[3]] == ["election"] and "hop_wait 3" in n.timers
    n.step(Receive(3, RingAck()))
    assert 3 not in n.unacked and "hop_wait 3" not in n.timers


def test_each_new_message_tries_the_immediate_successor_first():
    n = node(2)
    n.step(Start())
    n.step(TimerFired("hop_wait 3"))  # 3 skipped once
    n.step(Receive(4, RingAck()))
    assert sent(n.step(Receive(1, L(5)))) [0] == (3, Elected)


def test_alone_in_the_ring_a_node_leads_itself():
    n = Ring(7, (7,), CONFIG, Ring.storage_class())
    n.step(Start())
    assert (n.status, n.leader, n.normal) == ("normal", 7, True)


def test_a_participant_with_no_elected_in_time_starts_again():
    n = node(2)
    n.step(Start())
    assert ElectionStarted() in n.step(TimerFired("elected_wait"))


def test_a_copy_of_a_message_already_taken_is_dropped_but_acked():
    n = idle(3)
    n.step(Receive(2, E(5, initiator=1, round=7)))
    copy = n.step(Receive(1, E(5, initiator=1, round=7)))  # 2 was slow and 1 skipped it
    assert sent(copy) == [(1, RingAck)]
    again = n.step(Receive(2, E(5, initiator=1, round=8)))  # a new election: taken
    assert sent(again, Election) == [(4, Election)]
