"""Hirschberg & Sinclair (protocol/hs.py), rule by rule, calling the pure state machine;
what each step outputs names the rule that made it. Ids 1..5 on a ring in id order: 3's
left neighbour is 2, its right 4; 5's right is 1."""

from protocol import (
    CancelTimer,
    Config,
    ElectionStarted,
    HirschbergSinclair,
    Joining,
    Leave,
    Receive,
    SetTimer,
    Start,
    Suspect,
    TimerFired,
)
from protocol.hs import (
    ELECTED_WAIT_LAPS,
    LEFT,
    RIGHT,
    HsAck,
    HsElected,
    HsProbe,
    HsReply,
)
from protocol.probing import Probe, ProbeReply
from protocol.ring_hops import Back

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)


def node(node_id: int, ids=IDS, storage=None) -> HirschbergSinclair:
    return HirschbergSinclair(node_id, ids, CONFIG, storage or HirschbergSinclair.storage_class())


def started(node_id: int, ids=IDS) -> HirschbergSinclair:
    n = node(node_id, ids)
    n.step(Start())
    return n


def sends(outputs) -> list[tuple[int, str, tuple]]:
    """(destination, type, fields but seq) of each HS message sent; acks and Backs apart."""
    out = []
    for o in outputs:
        msg = getattr(o, "msg", None)
        if isinstance(msg, HsProbe):
            out.append((o.dst, "probe", (msg.candidate, msg.phase, msg.hop, msg.way)))
        elif isinstance(msg, HsReply):
            out.append((o.dst, "reply", (msg.candidate, msg.phase, msg.way)))
        elif isinstance(msg, HsElected):
            out.append((o.dst, "elected", (msg.leader,)))
    return out


def ring_rules(outputs) -> set[str | None]:
    """The rules HS's own messages (probes, replies, Elected) carry; acks are rule 9's."""
    return {o.rule for o in outputs if isinstance(getattr(o, "msg", None), (HsProbe, HsReply, HsElected))}


def started_by(outputs) -> list[str | None]:
    """The rule of each election begun."""
    return [o.rule for o in outputs if isinstance(o, ElectionStarted)]


def probe(c, phase, hop, way, seq=1, epoch=1) -> HsProbe:
    return HsProbe(c, phase, hop, way, seq, epoch=epoch)


def following(node_id: int, leader: int = 5) -> HirschbergSinclair:
    n = started(node_id)
    n.step(Receive(node_id - 1 if node_id > 1 else 5, HsElected(leader, RIGHT, 9, epoch=1)))
    assert (n.status, n.leader) == ("normal", leader)
    return n


# --- rule 1: start, recovery, the detector ------------------------------------------------


def test_rule1_a_first_start_initiates_probing_both_neighbours_in_phase_0():
    n = node(3)
    out = n.step(Start())
    assert ElectionStarted() in out and n.epoch == n.round == 1
    assert sends(out) == [(2, "probe", (3, 0, 1, LEFT)), (4, "probe", (3, 0, 1, RIGHT))]
    assert n.status == "candidate"
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule1_a_recovered_or_joining_node_says_it_is_back_then_initiates():
    n = started(3)
    again = node(3, storage=n.storage)
    out = again.step(Start())
    backs = [o.dst for o in out if isinstance(getattr(o, "msg", None), Back)]
    assert backs == [1, 2, 4, 5] and again.round == 2
    assert sends(out) == [(2, "probe", (3, 0, 1, LEFT)), (4, "probe", (3, 0, 1, RIGHT))]
    newcomer = node(6, ids=(*IDS, 6))
    out = newcomer.step(Joining())
    assert [o.dst for o in out if isinstance(getattr(o, "msg", None), Back)] == [1, 2, 3, 4, 5]
    assert newcomer.status == "candidate"
    assert rules_of(out, Back) == {"1"} and rules_of(out) == {"members 1", "1"}  # (its Joins: the members rule 1)


def test_rule1_elect_and_a_silent_or_no_longer_leading_leader_start_a_new_round():
    n = following(3)
    assert started_by(n.step(Suspect())) == ["1"]
    assert n.status == "candidate" and n.round == 2
    n = following(3)
    n.step(TimerFired("probe"))
    assert started_by(n.step(TimerFired("probe_wait"))) == ["1"]  # (the detector's probing 4 found the leader gone)
    assert n.status == "candidate" and n.round == 2
    n = following(3)
    assert [(o.dst, type(o.msg)) for o in n.step(TimerFired("probe")) if hasattr(o, "msg")] == [(5, Probe)]
    assert started_by(n.step(Receive(5, ProbeReply(False, epoch=1)))) == ["1"]
    assert n.status == "candidate"


# --- rule 2: rounds --------------------------------------------------------------------------


def test_rule2_a_message_of_a_later_round_makes_a_node_a_candidate_of_that_round_first():
    n = following(3)
    out = n.step(Receive(2, probe(2, 0, 1, RIGHT, epoch=4)))
    assert n.round == 4 and n.status == "candidate"
    assert sends(out) == [(2, "probe", (3, 0, 1, LEFT)), (4, "probe", (3, 0, 1, RIGHT))]  # 2's probe swallowed (rule 4)
    assert ring_rules(out) == {"2"} and rules_of(out, HsAck) == {"9"} and n.state_rule == "2"


def test_rule2_a_message_of_an_earlier_round_is_acked_and_dropped():
    n = started(3)
    n.step(Receive(2, HsElected(5, RIGHT, 9, epoch=1)))
    n.step(Suspect())  # round 2
    out = n.step(Receive(4, probe(4, 0, 1, LEFT, seq=7, epoch=1)))
    assert sends(out) == [] and [o.msg for o in out] == [HsAck(7, epoch=2)]


def test_rule2_a_participant_acked_from_a_later_round_than_its_own_initiates():
    n = started(3)  # round 1, its probe to 4 awaits an ack
    out = n.step(Receive(4, HsAck(2, epoch=6)))
    assert n.round == 7 and ElectionStarted() in out
    assert started_by(out) == ["2"] and ring_rules(out) == {"2"}


# --- rules 3 to 6: probes and replies ------------------------------------------------------


def test_rule3_a_higher_probe_is_passed_on_the_same_way_until_its_2_to_the_k_hops():
    n = started(3)
    out = n.step(Receive(4, probe(5, 2, 1, LEFT)))
    assert sends(out) == [(2, "probe", (5, 2, 2, LEFT))] and n.status == "relay"
    assert ring_rules(out) == {"3"} and n.state_rule == "3"


def test_rule3_a_probe_at_its_last_hop_turns_back_as_a_reply():
    n = started(3)
    out = n.step(Receive(4, probe(5, 1, 2, LEFT)))
    assert sends(out) == [(4, "reply", (5, 1, RIGHT))] and ring_rules(out) == {"3"}


def test_rule3_a_follower_seeing_another_higher_candidate_in_its_round_starts_a_new_one():
    n = following(3, leader=5)
    assert started_by(n.step(Receive(2, probe(4, 0, 1, RIGHT)))) == ["3"]  # 4 recovered with round 1 again
    assert n.status == "candidate" and n.round == 2
    n = following(3, leader=5)
    out = n.step(Receive(4, probe(5, 3, 1, LEFT)))  # its own leader's second probe: passed on
    assert n.status == "normal" and sends(out) == [(2, "probe", (5, 3, 2, LEFT))]


def test_rule4_a_lower_probe_is_swallowed():
    n = started(3)
    out = n.step(Receive(2, probe(2, 0, 1, RIGHT)))
    assert sends(out) == [] and n.status == "candidate"
    assert rules_of(out) == {"9"} and n.applying == "4"  # (only its ack goes out: swallowing is silent)


def test_rule5_my_own_probe_back_makes_me_leader_and_i_announce_it_to_the_right():
    n = started(5)
    out = n.step(Receive(4, probe(5, 3, 5, RIGHT)))
    assert (n.status, n.leader) == ("normal", 5) and sends(out) == [(1, "elected", (5,))]
    assert ring_rules(out) == {"5"} and n.state_rule == "5"
    assert sends(n.step(Receive(1, probe(5, 3, 5, LEFT)))) == []  # the other way's: dropped


def test_rule6_replies_go_on_towards_their_candidate_and_both_start_the_next_phase():
    n = started(3)
    out = n.step(Receive(2, HsReply(5, 1, RIGHT, 1, epoch=1)))
    assert sends(out) == [(4, "reply", (5, 1, RIGHT))] and ring_rules(out) == {"6"}
    assert sends(n.step(Receive(4, HsReply(3, 0, LEFT, 1, epoch=1)))) == []
    out = n.step(Receive(2, HsReply(3, 0, RIGHT, 1, epoch=1)))
    assert sends(out) == [(2, "probe", (3, 1, 1, LEFT)), (4, "probe", (3, 1, 1, RIGHT))] and n.phase == 1
    assert ring_rules(out) == {"6"}


# --- rule 7: Elected -------------------------------------------------------------------------


def test_rule7_elected_is_followed_and_passed_on_but_not_back_to_the_leader():
    n = started(3)
    out = n.step(Receive(2, HsElected(5, RIGHT, 1, epoch=1)))
    assert (n.status, n.leader) == ("normal", 5) and sends(out) == [(4, "elected", (5,))]
    assert ring_rules(out) == {"7"} and n.state_rule == "7"
    n = started(4)
    assert sends(n.step(Receive(3, HsElected(5, RIGHT, 1, epoch=1)))) == []  # next is 5 itself


def test_rule7_a_node_never_follows_a_lower_node_and_initiates_instead():
    n = started(4)
    out = n.step(Receive(3, HsElected(3, RIGHT, 1, epoch=1)))
    assert ElectionStarted() in out and n.status == "candidate" and n.round == 2
    assert started_by(out) == ["7"]


# --- rule 8: the wait for Elected ----------------------------------------------------------


def test_rule8_a_participant_with_no_elected_in_time_starts_again():
    n = node(3)
    out = n.step(Start())
    assert SetTimer("elected_wait", ELECTED_WAIT_LAPS * len(IDS) * CONFIG.timeout) in out
    out = n.step(TimerFired("elected_wait"))
    assert ElectionStarted() in out and n.round == 2
    assert rules_of(out) == {"8"}


# --- rule 9: acks, skips, presumed down ----------------------------------------------------


def test_rule9_every_hs_message_is_acked_by_its_seq_and_the_ack_clears_its_timer():
    n = started(3)
    out = n.step(Receive(4, probe(5, 2, 1, LEFT, seq=11)))
    assert HsAck(11, epoch=1) in [o.msg for o in out if hasattr(o, "msg")] and rules_of(out, HsAck) == {"9"}
    passed, _, number = n.unacked[2][-1]  # the probe passed on to 2, and its ack timer's number
    assert f"hop_wait 2 {number}" in n.timers
    n.step(Receive(2, HsAck(passed.seq, epoch=1)))
    assert passed not in [msg for msg, *_ in n.unacked.get(2, [])] and f"hop_wait 2 {number}" not in n.timers


def test_rule9_a_neighbour_silent_for_T_is_presumed_down_and_skipped_at_once():
    n = started(3)  # probes to 2 and 4 await acks
    out = n.step(TimerFired("hop_wait 4 2"))
    assert sends(out) == [(5, "probe", (3, 0, 1, RIGHT))] and n.presumed_down == {4}
    assert rules_of(out) == {"9"}
    assert sends(n.step(Receive(2, probe(5, 2, 1, RIGHT)))) == [(5, "probe", (5, 2, 2, RIGHT))]
    n.step(Receive(4, Back(epoch=1)))  # heard from: tried again
    assert n.presumed_down == set()


def test_rule9_a_message_is_dropped_rather_than_sent_past_its_own_candidate():
    n = started(3)
    n.step(Receive(2, HsReply(4, 0, RIGHT, 1, epoch=1)))  # a reply for 4, then 4 is silent
    out = n.step(TimerFired("hop_wait 4 2"))
    assert [m for m in sends(out) if m[1] == "reply"] == []


def test_rule9_alone_a_node_leads_itself():
    n = started(3, ids=(3,))
    assert (n.status, n.leader) == ("normal", 3)
    n = started(3, ids=(3, 4))
    n.step(TimerFired("hop_wait 4 1"))
    n.step(TimerFired("hop_wait 4 2"))
    assert (n.status, n.leader) == ("normal", 3)


def test_rule9_a_node_that_leaves_is_skipped_at_once_and_a_leader_that_leaves_is_lost():
    n = started(3)
    out = n.step(Receive(4, Leave(epoch=1)))
    assert (5, "probe", (3, 0, 1, RIGHT)) in sends(out)
    n = following(3, leader=5)
    n.step(Receive(5, Leave(epoch=1)))
    assert n.status == "candidate"


def relay_of_5(node_id: int = 3) -> tuple[HirschbergSinclair, HsProbe]:
    """Out of its round: 5's phase-2 probe came from 4 and went on to 2, who acked it."""
    n = started(node_id)
    n.step(Receive(node_id + 1, probe(5, 2, 1, LEFT, seq=11)))
    passed = n.unacked[node_id - 1][-1][0]
    n.step(Receive(node_id - 1, HsAck(passed.seq, epoch=1)))
    assert n.status == "relay" and n.outbid_by == 5
    return n, passed


def test_rule10_a_node_keeps_what_it_passed_on_and_sends_it_past_a_holder_found_down():
    n, passed = relay_of_5()
    assert n.handed == {2: [passed]}
    out = n.step(TimerFired("watch"))  # asks 2 (and 5, rule 12) whether it is up
    assert sorted(dst for dst, kind in sent(out) if kind is Probe) == [2, 5] and rules_of(out) == {"10"}
    n.step(Receive(5, ProbeReply(False)))
    out = n.step(TimerFired("roll_call"))  # 2 silent for T: it crashed holding the probe
    assert sends(out) == [(1, "probe", (5, 2, 2, LEFT))] and 2 in n.presumed_down
    assert started_by(out) == []


def watch_waits(outputs) -> list[float]:
    return [o.delay for o in outputs if isinstance(o, SetTimer) and o.name == "watch"]


def test_rule10_the_holders_are_asked_once_what_was_handed_on_is_overdue_then_twice_as_long_each_time():
    n = started(3)
    n.step(Receive(4, probe(5, 2, 1, LEFT, seq=11)))
    passed = n.unacked[2][-1][0]
    out = n.step(Receive(2, HsAck(passed.seq, epoch=1)))
    overdue = HirschbergSinclair.overdue(2, 5, CONFIG)
    assert watch_waits(out) == [overdue] == [min(2**4, 2 * 5) * 4 / 2 + 2 * 4]  # phase 2: 2^4 hops, two laps at most
    assert HirschbergSinclair.overdue(0, 64, CONFIG) == 4 * 2 + 8 and HirschbergSinclair.overdue(9, 64, CONFIG) == 128 * 2 + 8
    out = n.step(TimerFired("watch"))
    assert {dst for dst, kind in sent(out) if kind is Probe} == {2, 5} and watch_waits(out) == [2 * overdue]
    n.step(Receive(2, ProbeReply(False)))
    n.step(Receive(5, ProbeReply(False)))
    n.step(TimerFired("roll_call"))
    assert watch_waits(n.step(TimerFired("watch"))) == [4 * overdue]
    out = n.step(Receive(2, HsReply(5, 2, RIGHT, 21, epoch=1)))  # the next message handed on sets the wait afresh
    reply = n.unacked[4][-1][0]
    assert watch_waits(n.step(Receive(4, HsAck(reply.seq, epoch=1)))) == [overdue]
    n = HirschbergSinclair(3, IDS, Config(timeout=4, probe_interval=0), HirschbergSinclair.storage_class())
    n.step(Start())  # (P = 0: no probes, only the acks)
    n.step(Receive(4, probe(5, 2, 1, LEFT, seq=11)))
    assert watch_waits(n.step(Receive(2, HsAck(n.unacked[2][-1][0].seq, epoch=1)))) == []


def test_rule10_what_got_past_its_holder_is_forgotten():
    n, passed = relay_of_5()
    out = n.step(Receive(2, HsReply(5, 2, RIGHT, 21, epoch=1)))  # the probe went out and back: it got past 2
    assert sends(out) == [(4, "reply", (5, 2, RIGHT))] and n.handed == {}
    reply = n.unacked[4][-1][0]
    n.step(Receive(4, HsAck(reply.seq, epoch=1)))
    assert n.handed == {4: [reply]}
    n.step(Receive(2, probe(5, 3, 3, RIGHT, seq=41)))  # 5's next probe the other way: the reply is still kept
    assert reply in n.handed[4]
    out = n.step(Receive(4, probe(5, 3, 2, LEFT, seq=42)))  # this side's next probe: the reply got past 4
    assert all(reply not in kept for kept in n.handed.values()) and sends(out) == [(2, "probe", (5, 3, 3, LEFT))]


def test_rule10_a_holder_that_says_it_is_back_gets_what_it_held_again():
    n, passed = relay_of_5()
    out = n.step(Receive(2, Back(epoch=2)))  # it lost the probe when it crashed, and takes part at once
    assert sends(out) == [(2, "probe", (5, 2, 2, LEFT))] and n.handed == {}


def test_rule10_what_was_kept_is_forgotten_when_the_round_is_over():
    n, _ = relay_of_5()
    out = n.step(Receive(2, HsElected(5, RIGHT, 3, epoch=1)))
    assert n.handed == {} and CancelTimer("watch") in out


def test_rule11_a_copy_of_a_message_already_taken_in_the_round_is_dropped():
    n = started(3)
    first = n.step(Receive(4, probe(5, 2, 1, LEFT, seq=11)))
    again = n.step(Receive(4, probe(5, 2, 1, LEFT, seq=12)))  # sent on past a node that had passed it on
    assert sends(first) == [(2, "probe", (5, 2, 2, LEFT))] and sends(again) == []
    assert rules_of(again) == {"9"}  # (acked all the same, and nothing more)


def test_rule12_a_relay_asks_the_candidate_that_put_it_out_and_initiates_if_it_is_down():
    n, _ = relay_of_5()
    n.step(TimerFired("watch"))
    n.step(Receive(2, ProbeReply(False)))
    out = n.step(TimerFired("roll_call"))  # 5 silent for T: the round cannot end in it
    assert started_by(out) == ["12"] and n.status == "candidate"
    n, _ = relay_of_5()
    n.step(TimerFired("watch"))
    n.step(Receive(2, ProbeReply(False)))
    n.step(Receive(5, ProbeReply(False)))
    assert started_by(n.step(TimerFired("roll_call"))) == [] and n.status == "relay"


def test_rule12_the_probe_that_puts_a_relay_out_sets_when_it_asks_its_candidate():
    n = started(3)
    out = n.step(Receive(4, probe(5, 1, 1, LEFT, seq=11)))  # before any ack: the probe's own phase
    assert watch_waits(out) == [HirschbergSinclair.overdue(1, 5, CONFIG)]
    assert [o.rule for o in out if isinstance(o, SetTimer) and o.name == "watch"] == ["12"]
    assert n.step(TimerFired("watch")) and n.roll_call == {5}  # nothing acked yet: only the candidate


def test_hs_declares_its_bound_and_that_it_needs_longer_than_the_default_to_settle():
    assert HirschbergSinclair.bound(64) == 8 * 64 * 7 + 63
    assert HirschbergSinclair.worst_case_messages(64) == 2 * (8 * 64 * 7 + 63)  # a round counts the acks too
    default = super(HirschbergSinclair, HirschbergSinclair).settle_time(5, CONFIG, 1)
    assert HirschbergSinclair.settle_time(5, CONFIG, 1) == default + 2 * ELECTED_WAIT_LAPS * 5 * 4
