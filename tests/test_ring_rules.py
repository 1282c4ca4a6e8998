"""The crash-tolerant Chang & Roberts ring (protocol/ring.py), rule by rule, calling the
pure state machine. Ids 1..5: each node's successor is the next higher id, 5's is 1."""

from protocol import (
    CancelTimer,
    Config,
    ElectionStarted,
    Join,
    Joining,
    Leave,
    MessageRole,
    Receive,
    Ring,
    SetTimer,
    Start,
    Suspect,
    TimerFired,
)
from protocol.probing import Probe, ProbeReply
from protocol.ring import ELECTED_WAIT_LAPS, Again, Back, Elected, Election, RingAck

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)
E, L = Election, Elected


def node(node_id: int, ids=IDS) -> Ring:
    return Ring(node_id, ids, CONFIG, Ring.storage_class())


def pred(node_id: int) -> int:
    return node_id - 1 if node_id > 1 else 5


def started(node_id: int) -> Ring:
    """Just started: its own election is on its way round."""
    n = node(node_id)
    n.step(Start())
    return n


def recovered(node_id: int) -> Ring:
    """Started, crashed, and just started again from its safe storage: quiet (rule 1)."""
    n = started(node_id)
    again = Ring(node_id, IDS, CONFIG, n.storage)
    again.step(Start())
    return again


def following(node_id: int, leader: int = 5, election=(5, 3, 9)) -> Ring:
    """Normal under `leader`, after an election (candidate, initiator, round) it backed."""
    n = started(node_id)
    candidate, initiator, round_ = election
    n.step(Receive(pred(node_id), E(candidate, initiator, round_)))
    n.step(Receive(pred(node_id), L(leader, initiator, round_)))
    assert (n.status, n.leader) == ("normal", leader)
    return n


def ack(msg) -> RingAck:
    return RingAck(*msg.key)


def ring_msgs(outputs) -> list[tuple[int, object]]:
    """(destination, message) of each Send but failure detection's (rules 10 to 12)."""
    return [(o.dst, o.msg) for o in outputs if hasattr(o, "msg") and o.msg.role is not MessageRole.DETECTOR]


def started_by(outputs) -> list[str | None]:
    """The rule of each election begun."""
    return [o.rule for o in outputs if isinstance(o, ElectionStarted)]


def hop_timers(n: Ring, dst: int) -> list[str]:
    """The running ack timers for messages sent to dst (rule 7)."""
    return sorted(name for name in n.timers if name.startswith(f"hop_wait {dst} "))


def unacked(n: Ring, dst: int) -> list[tuple]:
    """The keys of the messages sent to dst and not yet acked."""
    return [msg.key for msg, *_ in n.unacked.get(dst, [])]


# --- rule 1: start, recovery, the detector ------------------------------------------------


def test_rule1_an_initiator_sends_its_id_to_its_successor_only_and_backs_it():
    n = node(2)
    out = n.step(Start())
    assert ElectionStarted() in out
    assert ring_msgs(out) == [(3, E(2, 2, n.epoch, epoch=n.epoch))]
    assert hop_timers(n, 3) == ["hop_wait 3 1"] and SetTimer("hop_wait 3 1", 4) in out
    assert (n.status, n.participant, n.backing) == ("election", True, (2, 2, n.epoch))
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule1_the_highest_id_wraps_round_to_the_lowest():
    assert sent(node(5).step(Start())) == [(1, Election)]


def test_rule1_a_recovered_node_says_it_is_back_and_is_quiet_for_T_then_initiates():
    n = started(3)
    again = Ring(3, IDS, CONFIG, n.storage)
    out = again.step(Start())
    assert sent(out) == [(1, Back), (2, Back), (4, Back), (5, Back)]
    assert SetTimer("quiet", 4) in out and ElectionStarted() not in out
    assert (again.status, again.leader, again.participant) == ("election", None, False)
    assert rules_of(out) == {"1"}
    out = again.step(TimerFired("quiet"))
    assert ElectionStarted() in out and sent(out) == [(4, Election)] and again.backing[0] == 3
    assert rules_of(out) == {"1"}


def test_rule1_a_node_that_joins_is_quiet_for_T_like_a_recovered_one():
    """So that a node joining at the same moment is known to it before its election goes
    round (the hunt's finding: two joiners each led a ring without the other)."""
    n = node(6, (*IDS, 6))
    out = n.step(Joining())
    assert sent(out) == [(1, Join), (2, Join), (3, Join), (4, Join), (5, Join), (1, Back), (2, Back), (3, Back),
                         (4, Back), (5, Back)]
    assert SetTimer("quiet", 4) in out and ElectionStarted() not in out
    assert rules_of(out, Join) == {"members 1"} and rules_of(out, Back) == {"1"}
    assert ElectionStarted() in n.step(TimerFired("quiet"))


def test_rule1_a_quiet_node_takes_no_ring_message_and_ignores_the_detector():
    n = recovered(3)
    assert n.step(Receive(2, E(5, 1, 7))) == []  # not even acked: to the ring it is still down
    assert n.step(Receive(2, L(5, 1, 7))) == []
    assert n.step(Suspect()) == [] and n.backing is None
    assert [o.msg.leads for o in n.step(Receive(1, Probe()))] == [False]  # but it answers probes


def test_rule1_a_leader_silent_for_T_or_no_longer_leading_starts_an_election():
    n = following(2)
    n.step(TimerFired("probe"))
    assert started_by(n.step(TimerFired("probe_wait"))) == ["1"]  # (the detector's probing 4 found it gone)
    n = following(2)
    n.step(TimerFired("probe"))
    out = n.step(Receive(5, ProbeReply(False)))  # alive, but it no longer leads
    assert ElectionStarted() in out and n.participant and started_by(out) == ["1"]
    n = following(2)
    n.step(TimerFired("probe"))
    out = n.step(Receive(5, ProbeReply(True)))
    assert SetTimer("probe", 5) in out and n.leader == 5 and rules_of(out) == {"probing 3"}  # all is well


def test_rule1_a_leader_that_does_not_ack_a_ring_message_within_T_starts_an_election():
    n = following(4, leader=5, election=(5, 3, 9))  # 4 forwarded Elected(5) back to 5
    out = n.step(TimerFired("hop_wait 5 1"))  # 5 acks nothing
    assert ElectionStarted() in out and n.participant and n.leader is None and started_by(out) == ["1"]
    assert sent(out, Elected) == []  # and the Elected that went back to 5 is dropped (rule 7)


def test_rule1_a_probe_reply_says_whether_the_node_leads():
    leader = following(5, leader=5, election=(5, 5, 1))
    assert [o.msg.leads for o in leader.step(Receive(2, Probe()))] == [True]
    assert [o.msg.leads for o in following(3).step(Receive(2, Probe()))] == [False]


def test_rule1_the_detector_is_ignored_by_a_participant():
    n = started(2)
    assert n.step(Suspect()) == []


# --- rules 2 and 3: Election on its way --------------------------------------------------------


def test_rule2_a_larger_id_is_forwarded_acked_and_backed():
    n = following(2)
    out = n.step(Receive(1, E(4, 1, 7)))
    assert ring_msgs(out) == [(3, E(4, 1, 7, epoch=n.epoch)), (1, RingAck("election", 4, 1, 7, epoch=n.epoch))]
    assert n.participant and n.backing == (4, 1, 7)
    assert rules_of(out, Election) == {"2"} and rules_of(out, RingAck) == {"7"} and n.state_rule == "2"


def test_rule2_a_node_backs_the_last_election_that_came_by_whatever_it_backed_before():
    """An Election for 4 that gets to 2 after one for 5 got past 5 while 5 was down or
    quiet: 5's election has lost its candidate (or is stale), 4's is the one to back."""
    n = started(2)
    n.step(Receive(1, E(5, 1, 7)))
    n.step(Receive(1, E(4, 3, 8)))
    assert n.backing == (4, 3, 8)


def test_rule3_a_smaller_id_is_replaced_by_mine_when_not_participating():
    n = following(3)
    out = n.step(Receive(2, E(1, 1, 4)))
    assert [m for dst, m in ring_msgs(out) if dst == 4] == [E(3, 1, 4, epoch=n.epoch)]
    assert n.backing == (3, 1, 4) and rules_of(out, Election) == {"3"}


def test_rule3_a_participant_backing_its_own_election_swallows_a_smaller_id():
    n = started(3)
    assert sent(n.step(Receive(2, E(1, 1, 4)))) == [(2, RingAck)]


def test_rule3_a_participant_backing_a_higher_election_forwards_my_id_instead_and_keeps_backing_it():
    """4's Election has come by 1 already: swallowing 1's would leave 1 out."""
    n = following(3)
    n.step(Receive(2, E(4, 2, 3)))
    out = n.step(Receive(2, E(1, 1, 4)))
    assert [m for dst, m in ring_msgs(out) if dst == 4] == [E(3, 1, 4, epoch=n.epoch)]
    assert n.backing == (4, 2, 3) and rules_of(out, Election) == {"3"}


# --- rule 4: my id back --------------------------------------------------------------------------


def test_rule4_my_own_id_back_makes_me_leader_and_i_announce_it():
    n = started(5)
    out = n.step(Receive(4, E(5, 5, n.epoch)))
    assert ring_msgs(out)[0] == (1, L(5, 5, n.epoch, epoch=n.epoch))
    assert (n.status, n.leader, n.participant) == ("normal", 5, False)
    assert rules_of(out, Elected) == {"4"} and n.state_rule == "4"


def test_rule4_my_id_back_from_an_election_i_no_longer_back_is_swallowed_by_a_participant():
    n = started(4)
    own = n.backing
    n.step(Receive(3, E(5, 2, 8)))  # 5 is up and running its own: it will decide
    out = n.step(Receive(3, E(*own)))
    assert sent(out) == [(3, RingAck)] and n.leader is None


def test_rule4_my_id_back_from_an_election_i_no_longer_back_makes_a_normal_node_start_again():
    """The nodes it went through back it (rule 2), and nothing will answer them."""
    n = started(4)
    own = n.backing
    n.step(Receive(3, E(5, 2, 8)))
    n.step(Receive(3, L(5, 2, 8)))
    out = n.step(Receive(3, E(*own)))
    assert ElectionStarted() in out and n.backing[0] == 4 and n.leader is None and started_by(out) == ["4"]


# --- rules 5 and 6: Elected -------------------------------------------------------------------


def test_rule5_elected_is_followed_when_backed_and_forwarded_until_it_reaches_the_leader():
    n = started(3)
    n.step(Receive(2, E(5, 1, 6)))
    out = n.step(Receive(2, L(5, 1, 6)))
    assert (n.status, n.leader, n.participant) == ("normal", 5, False)
    assert [m for dst, m in ring_msgs(out) if dst == 4] == [L(5, 1, 6, epoch=n.epoch)]
    assert rules_of(out, Elected) == {"5"} and n.state_rule == "5"
    leader = started(5)
    leader.step(Receive(4, E(*leader.backing)))
    assert sent(leader.step(Receive(4, L(*leader.backing)))) == [(4, RingAck)]  # gone round: stop


def test_rule5_an_announcement_of_an_election_not_backed_is_passed_on_but_not_followed():
    """The node came back after that election's Election went by: it may not take it
    (a stale announcement would otherwise split the normal nodes)."""
    n = started(3)
    n.step(Receive(2, E(5, 2, 4)))  # it backs 5's election, round 4
    out = n.step(Receive(2, L(4, 1, 6)))  # 4 won another while 3 was away: 5's will decide
    assert [m for dst, m in ring_msgs(out) if dst == 4] == [L(4, 1, 6, epoch=n.epoch)]
    assert (n.status, n.leader) == ("election", None) and ElectionStarted() not in out


def test_rule5_a_participant_whose_election_cannot_win_asks_the_leader_to_start_again():
    """3 came back and backs its own election; 5 won one that went by while 3 was away:
    3's Election was swallowed, or 5 will take it over. 5's own Election comes by 3 sooner
    than 3's would get to 5 (rule 14)."""
    n = started(3)
    out = n.step(Receive(2, L(5, 1, 6)))
    assert [(dst, m.key) for dst, m in ring_msgs(out) if isinstance(m, Elected)] == [(4, L(5, 1, 6).key)]  # passed on
    assert (5, Again(1, 6, epoch=n.epoch)) in [(o.dst, o.msg) for o in out if hasattr(o, "msg")]
    assert rules_of(out, Again) == {"14"} and started_by(out) == [] and n.participant


def test_rule6_a_node_never_follows_a_lower_node_and_starts_an_election_instead():
    n = following(4, leader=5)
    out = n.step(Receive(3, L(3, 1, 2)))  # 3 won while 4 was away
    assert ElectionStarted() in out and n.leader is None and started_by(out) == ["6"]
    assert sent(out, Elected) == []  # swallowed
    assert [m.candidate for dst, m in ring_msgs(out) if isinstance(m, Election)] == [4]


def test_rule6_a_participant_swallows_a_lower_leader_and_lets_its_election_decide():
    n = started(4)
    out = n.step(Receive(3, L(3, 1, 2)))
    assert sent(out, Elected) == [] and (3, RingAck) in sent(out) and ElectionStarted() not in out


# --- rule 7: acks, skipping, alone ---------------------------------------------------------


def test_rule7_acks_name_the_message_and_clear_it():
    n = started(2)
    n.step(Receive(1, E(5, 1, 6)))
    assert [key[0] for key in unacked(n, 3)] == ["election", "election"]
    out = n.step(Receive(3, RingAck("election", 5, 1, 6)))  # the later one: the first was lost
    assert 3 not in n.unacked and hop_timers(n, 3) == []
    assert {CancelTimer("hop_wait 3 1"), CancelTimer("hop_wait 3 2")} <= set(out) and rules_of(out) == {"7"}


def test_rule7_each_message_not_acked_within_T_goes_on_to_the_node_after():
    n = started(2)
    own = n.backing
    n.step(Receive(3, Back()))  # 3 came back: not to be presumed down for 2T (rule 10) ...
    n.step(TimerFired("quiet_of 3"))  # ... and its quiet is over: 2's Election goes to it again (rule 13)
    n.step(Receive(1, E(5, 1, 6)))
    out = n.step(TimerFired("hop_wait 3 2"))
    assert ring_msgs(out) == [(4, E(*own, epoch=n.epoch))]  # the first goes on to 4 ...
    assert rules_of(out, Election) == {"7"}
    assert SetTimer("hop_wait 4 4", 4) in out  # ... which must ack it within T
    assert unacked(n, 3) == [("election", 5, 1, 6)] and hop_timers(n, 3) == ["hop_wait 3 3"]  # its own T


def test_rule7_each_new_message_tries_the_immediate_successor_first():
    n = started(2)
    n.step(Receive(3, Back()))
    n.step(TimerFired("quiet_of 3"))
    n.step(TimerFired("hop_wait 3 2"))  # 3 skipped once
    n.step(Receive(4, RingAck(*E(*n.backing).key)))
    assert sent(n.step(Receive(1, E(5, 1, 6))))[0] == (3, Election)


def test_rule7_a_message_going_back_to_its_candidate_which_does_not_ack_is_dropped_and_its_backers_start_again():
    n = started(4)
    n.step(Receive(3, E(5, 2, 8)))  # 4 backs 5's election, whose Election goes back to 5
    out = n.step(TimerFired("hop_wait 5 1"))  # 5 is down
    assert E(5, 2, 8, epoch=n.epoch) not in [m for _, m in ring_msgs(out)]  # it has gone round: dropped
    assert ElectionStarted() in out and n.backing[0] == 4 and started_by(out) == ["7"]


def test_rule7_alone_in_the_ring_a_node_leads_itself():
    n = Ring(7, (7,), CONFIG, Ring.storage_class())
    n.step(Start())
    assert (n.status, n.leader, n.normal) == ("normal", 7, True)
    two = Ring(1, (1, 2), CONFIG, Ring.storage_class())
    two.step(Start())
    two.step(TimerFired("hop_wait 2 1"))  # 2 is down: its own Election is back
    assert (two.status, two.leader) == ("normal", 1)


def test_rule7_alone_a_node_does_not_lead_on_an_election_it_no_longer_backs():
    two = Ring(1, (1, 2), CONFIG, Ring.storage_class())
    two.step(Start())
    two.step(Receive(2, Back()))  # 2 came back ...
    two.step(TimerFired("quiet_of 2"))  # (1's own old Election, sent while 2 was down, goes to it again)
    two.step(Receive(2, E(2, 2, 5)))  # ... and runs its election: 1 backs it
    two.step(TimerFired("hop_wait 2 2"))  # 1's own old Election is not acked
    assert (two.status, two.leader) == ("election", None) and unacked(two, 2)  # still waiting for 2's ack


def test_rule7_alone_with_another_candidates_election_a_node_starts_again():
    """Its candidate was skipped too (here it has left): that election cannot end."""
    n = Ring(1, (1, 2, 3), CONFIG, Ring.storage_class())
    n.step(Start())
    n.step(Receive(3, E(3, 3, 4)))  # 1 backs 3's election, and passes it on to 2
    n.step(Receive(3, Leave()))
    out = n.step(TimerFired("hop_wait 2 1"))  # 2 is down: nobody else is left
    assert ElectionStarted() in out and (n.status, n.leader) == ("normal", 1)


# --- rules 8, 9 and 10 ------------------------------------------------------------------------


def test_rule8_a_participant_with_no_elected_in_time_starts_again():
    n = node(2)
    assert SetTimer("elected_wait", ELECTED_WAIT_LAPS * 5 * 4) in n.step(Start())
    assert started_by(n.step(TimerFired("elected_wait"))) == ["8"]


def test_rule8_the_wait_is_one_lap():
    assert Ring.elected_wait(5, CONFIG) == 5 * 4 == Ring.lap(5, CONFIG)


def test_rule9_a_copy_of_a_message_already_taken_is_dropped_but_acked():
    n = following(3)
    n.step(Receive(2, E(5, 1, 7)))
    copy = n.step(Receive(1, E(5, 1, 7)))  # 2 was slow and 1 skipped it
    assert sent(copy) == [(1, RingAck)] and rules_of(copy) == {"7"}  # (rule 9 drops it: only its ack goes out)
    again = n.step(Receive(2, E(5, 1, 8)))  # a new election: taken
    assert sent(again, Election) == [(4, Election)]
