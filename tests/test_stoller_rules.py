"""Stoller's Bully with a heartbeat failure detector (Stoller's notes), rule by rule; what
each step outputs names the rule (its header's numbers) that made it."""

from protocol import (
    Config,
    ElectionStarted,
    Join,
    Joining,
    Leave,
    Receive,
    SetTimer,
    Start,
    Stoller,
    Suspect,
    TimerFired,
)
from protocol.stoller import Ack, Halt, Heartbeat, Ldr

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)


def started(node_id: int) -> Stoller:
    n = Stoller(node_id, IDS, CONFIG, Stoller.storage_class())
    n.step(Start())
    return n


def tick(n: Stoller, times: int = 1, heard_from=()) -> list:
    out = []
    for _ in range(times):
        for peer in heard_from:
            n.step(Receive(peer, Heartbeat(None, None)))
        out += n.step(TimerFired("heartbeat"))
    return out


def started_by(outputs) -> list[str | None]:
    """The rule of each election begun."""
    return [o.rule for o in outputs if isinstance(o, ElectionStarted)]


def leader_of_all() -> Stoller:
    n = started(5)
    for i in (4, 3, 2, 1):
        n.step(Receive(i, Ack()))
    return n


def test_start_sends_heartbeats_to_everyone_every_half_T():
    n = Stoller(2, IDS, CONFIG, Stoller.storage_class())
    out = n.step(Start())
    assert sent(out, Heartbeat) == [(i, Heartbeat) for i in (1, 3, 4, 5)]
    assert SetTimer("heartbeat", 2) in out
    assert rules_of(out) == {"2"} and n.state_rule == "2"  # (rule 2: a new incarnation heartbeats at once)
    assert rules_of(n.step(TimerFired("heartbeat")), Heartbeat) == {"1"}


def test_elec1_waits_while_a_higher_node_is_trusted():
    n = started(3)
    out = tick(n, 3, heard_from=(1, 2, 4))  # 5 is suspected, 4 is not
    assert (n.status, n.suspected, sent(out, Halt)) == ("elec1", {5}, [])
    out = tick(n, 3, heard_from=(1, 2))  # now 4 goes silent too
    assert (n.status, sent(out, Halt)) == ("elec2", [(2, Halt)])
    assert rules_of(out, Halt) == {"3"} and n.state_rule == "3"


def test_a_peer_is_suspected_after_three_silent_ticks_the_one_at_start_included():
    n = started(1)
    tick(n, 1, heard_from=(2,))
    assert n.suspected == set()
    tick(n)
    assert n.suspected == {3, 4, 5}  # 2 was heard one tick ago


def test_elec2_when_every_higher_node_is_suspected_halts_the_highest_lower_node_first():
    n = started(3)
    out = tick(n, 2, heard_from=(1, 2))
    assert n.status == "elec2"
    assert sent(out, Halt) == [(2, Halt)]  # one at a time, in priority order


def test_the_highest_node_halts_lower_nodes_one_at_a_time_then_leads():
    n = started(5)
    assert (n.status, n.halting) == ("elec2", 4)
    out = n.step(Receive(4, Ack()))
    assert sent(out, Halt) == [(3, Halt)] and rules_of(out) == {"3"}
    assert sent(n.step(Receive(3, Ack())), Halt) == [(2, Halt)]
    assert sent(n.step(Receive(2, Ack())), Halt) == [(1, Halt)]
    out = n.step(Receive(1, Ack()))
    assert sent(out, Ldr) == [(4, Ldr), (3, Ldr), (2, Ldr), (1, Ldr)]
    assert (n.status, n.leader, n.normal) == ("norm", 5, True)
    assert rules_of(out) == {"4"} and n.state_rule == "4"


def test_a_halt_target_detected_down_is_skipped_and_gets_no_ldr():
    n = started(5)
    out = tick(n, 2, heard_from=(3, 2, 1))  # 4 never answers: suspected
    assert sent(out, Halt) == [(3, Halt)]
    for i in (3, 2, 1):
        out = n.step(Receive(i, Ack()))
    assert sent(out, Ldr) == [(3, Ldr), (2, Ldr), (1, Ldr)]


def test_halt_means_wait_remember_the_halting_node_and_ack():
    n = started(2)
    out = n.step(Receive(5, Halt()))
    assert sent(out) == [(5, Ack)]
    assert (n.status, n.halted_by, n.leader) == ("wait", 5, None)
    assert rules_of(out) == {"5"} and n.state_rule == "5"


def test_ldr_is_taken_only_from_the_node_that_halted_us():
    n = started(2)
    n.step(Receive(5, Halt()))
    n.step(Receive(4, Ldr()))
    assert n.status == "wait"
    n.step(Receive(5, Ldr()))
    assert (n.status, n.leader, n.normal) == ("norm", 5, True) and n.state_rule == "6"


def test_in_wait_the_halting_node_detected_down_means_elec1_again():
    n = started(2)
    n.step(Receive(5, Halt()))  # which is also the last we hear from 5
    out = tick(n, 3, heard_from=(1, 3, 4))
    assert ElectionStarted() in out and n.status == "elec1"
    assert started_by(out) == ["7"] and n.state_rule == "7"


def test_in_norm_the_leader_detected_down_means_elec1_again():
    n = started(2)
    n.step(Receive(5, Halt()))
    n.step(Receive(5, Ldr()))
    out = tick(n, 3, heard_from=(1, 3, 4))
    assert ElectionStarted() in out and (n.status, n.leader) == ("elec1", None)


def test_the_leader_takes_in_a_lower_node_outside_its_group_once():
    n = leader_of_all()
    assert sent(n.step(Receive(2, Heartbeat(5, None)))) == []  # follows us
    out = n.step(Receive(2, Heartbeat(None, None)))
    assert sent(out) == [(2, Halt)] and rules_of(out) == {"8"}
    assert sent(n.step(Receive(2, Heartbeat(None, None)))) == []  # already being taken in
    out = n.step(Receive(2, Ack()))
    assert sent(out) == [(2, Ldr)] and rules_of(out) == {"8"}


def test_a_leader_does_not_take_in_higher_nodes():
    n = started(3)
    tick(n, 2, heard_from=(1, 2))
    n.step(Receive(2, Ack()))
    n.step(Receive(1, Ack()))
    assert n.leader == 3
    assert sent(n.step(Receive(4, Heartbeat(None, None)))) == []


def test_suspect_in_norm_starts_elec1():
    n = leader_of_all()
    out = n.step(Suspect())
    assert ElectionStarted() in out and started_by(out) == ["2"]
    assert n.status == "elec2"  # still the highest: straight on to halting


def test_a_halt_unacked_for_more_than_T_is_sent_again():
    n = leader_of_all()
    n.step(Receive(2, Heartbeat(None, None)))  # Halt sent; 2 crashes before it arrives
    quiet = (1, 2, 3, 4)  # and recovers quickly enough never to be suspected
    tick(n, 2, heard_from=quiet)
    assert sent(n.step(Receive(2, Heartbeat(None, None)))) == []  # T has not passed
    tick(n, 1, heard_from=quiet)
    out = n.step(Receive(2, Heartbeat(None, None)))
    assert sent(out) == [(2, Halt)] and rules_of(out) == {"9"}


# --- a halter that gives up, and members that join and leave (rules 10 to 12) ----------------


def test_in_wait_a_halter_halted_in_its_turn_means_elec1_again():
    """It dropped its election: no Ldr will come (with FIFO links, one would have come first)."""
    n = started(2)
    n.step(Receive(4, Halt()))
    out = n.step(Receive(4, Heartbeat(None, 5)))
    assert ElectionStarted() in out and (n.status, n.halted_by) == ("elec1", None)
    assert started_by(out) == ["10"] and n.state_rule == "10"
    n = started(2)
    n.step(Receive(4, Halt()))
    assert ElectionStarted() in n.step(Receive(4, Heartbeat(5, None)))  # it follows another


def test_in_wait_a_halter_that_leads_is_no_sign_it_gave_up():
    """It may be taking this node in (Halt, Ack, then Ldr), its heartbeats saying it leads."""
    n = started(2)
    n.step(Receive(5, Halt()))
    assert n.step(Receive(5, Heartbeat(5, None))) == [] and n.status == "wait"
    n.step(Receive(5, Ldr()))
    assert (n.status, n.leader) == ("norm", 5)


def test_rule11_a_newcomer_waits_two_ticks_longer_before_suspecting_a_peer():
    n = Stoller(6, (*IDS, 6), CONFIG, Stoller.storage_class())
    n.step(Joining())
    tick(n, 3)  # four ticks in all (1.5T): a member's first heartbeat may take that long
    assert n.suspected == set()
    tick(n, 1, heard_from=(1, 2, 3, 4))  # the fifth (2T): 5 never said a word
    assert n.suspected == {5}


def test_rule11_a_member_trusts_a_newcomer_from_its_join_and_heartbeats_it():
    n = started(3)
    assert n.step(Receive(6, Join())) == [] and n.applying == "11"  # (after the members rule 3: a member now)
    assert n.silent[6] == 0 and 6 not in n.suspected and 6 in n.higher
    assert (6, Heartbeat) in sent(tick(n))


def test_rule12_a_leaver_being_halted_is_skipped_at_once():
    n = started(5)
    assert n.halting == 4
    out = n.step(Receive(4, Leave()))
    assert sent(out, Halt) == [(3, Halt)] and n.halting == 3 and 4 not in n.silent


def test_rule12_a_node_whose_halter_leaves_starts_again():
    n = started(2)
    n.step(Receive(5, Halt()))
    out = n.step(Receive(5, Leave()))
    assert ElectionStarted() in out and n.status == "elec1"
    assert started_by(out) == ["12"] and n.state_rule == "12"


def test_rule12_elec1_goes_on_when_the_higher_node_it_waited_for_leaves():
    n = started(3)
    tick(n, 3, heard_from=(1, 2, 4))  # 5 suspected; 4 trusted: 3 waits
    assert n.status == "elec1"
    out = n.step(Receive(4, Leave()))
    assert n.status == "elec2" and sent(out, Halt) == [(2, Halt)]


def test_rule12_a_leader_that_leaves_is_gone():
    n = started(2)
    n.step(Receive(5, Halt()))
    n.step(Receive(5, Ldr()))
    assert ElectionStarted() in n.step(Receive(5, Leave())) and n.leader is None


def test_rule8_the_leader_takes_a_newcomer_in():
    n = leader_of_all()
    n.step(Receive(3, Join()))  # (3 is a member already; any lower node outside the group will do)
    assert sent(n.step(Receive(3, Heartbeat(None, None)))) == [(3, Halt)]
    assert sent(n.step(Receive(3, Ack()))) == [(3, Ldr)]
