"""The crash-tolerant Chang & Roberts ring (protocol/ring.py): how it heals, rules 10
to 12 (a node presumed down and skipped, the roll call, a candidate asked how its
election stands, a kept message sent past a node found down), calling the pure state
machine. The ring's other rules, and the helpers, are tests/test_ring_rules.py's."""

from playground.core.config import ClusterConfig
from playground.core.engine import Engine, run_sync
from playground.core.ids import ring_order
from protocol import (
    CancelTimer,
    Leave,
    Receive,
    Ring,
    SetTimer,
    Start,
    TimerFired,
)
from protocol.probing import Probe, ProbeReply
from protocol.ring import Again, Ask, Back, Elected, Election, RingAck, Told

from .support import at, final_states, rules_of, run, sends, sent
from .test_ring_rules import CONFIG, E, L, hop_timers, recovered, ring_msgs, started, started_by, unacked


def test_rule10_a_node_silent_for_T_without_a_back_is_presumed_down_and_skipped_at_once():
    n = started(2)
    own = n.backing
    n.step(Receive(1, E(5, 1, 6)))  # queued for 3 too
    out = n.step(TimerFired("hop_wait 3 1"))
    assert [m for _, m in ring_msgs(out)] == [E(*own, epoch=n.epoch), E(5, 1, 6, epoch=n.epoch)]  # both on to 4
    assert rules_of(out, Election) == {"10"}
    assert 3 in n.presumed_down and hop_timers(n, 3) == []
    assert sent(n.step(Receive(1, L(5, 1, 6))), Elected) == [(4, Elected)]  # later ones skip 3 without waiting


def test_rule10_a_node_that_says_it_is_back_or_sends_anything_is_tried_again():
    n = started(2)
    n.step(TimerFired("hop_wait 3 1"))
    out = n.step(Receive(3, Back()))
    assert 3 not in n.presumed_down and rules_of(out) == {"10", "13", "14"}  # (14: 2's Election had gone past 3)
    assert sent(n.step(Receive(1, E(5, 1, 6))), Election) == []  # it is quiet: the Election waits for it (rule 13)
    out = n.step(TimerFired("quiet_of 3"))
    assert {dst for dst, _ in sent(out, Election)} == {3} and rules_of(out, Election) == {"13"}
    n = started(2)
    n.step(TimerFired("hop_wait 3 1"))
    n.step(Receive(3, Probe()))  # it answers nothing yet, but it is up
    assert 3 not in n.presumed_down


def test_rule10_a_node_that_said_it_is_back_within_2T_is_not_presumed_down():
    """It is quiet (rule 1): its silence says nothing."""
    n = started(2)
    n.step(Receive(3, Back()))
    n.step(TimerFired("quiet_of 3"))  # (what waited for its quiet to end goes to it: rule 13)
    n.step(Receive(1, E(5, 1, 6)))
    n.step(TimerFired("hop_wait 3 2"))  # skipped, but 3 not presumed down
    assert 3 not in n.presumed_down and unacked(n, 3) == [("election", 5, 1, 6)]
    n.step(TimerFired("hop_wait 3 3"))  # the same
    assert 3 not in n.presumed_down
    n.step(TimerFired("back_seen 3"))
    n.step(Receive(1, L(5, 1, 6)))
    n.step(TimerFired("hop_wait 3 6"))  # 2T after its Back, silent: down again
    assert 3 in n.presumed_down


def test_rule10_a_node_presumed_down_is_asked_again_a_lap_on():
    """A held link can hide a live node: a lap on it is asked whether it is up, and stays
    presumed down for another lap only if it is silent for T."""
    n = started(2)
    out = n.step(TimerFired("hop_wait 3 1"))
    assert SetTimer("presumed_down 3", Ring.lap(5, CONFIG)) in out
    assert next(o for o in out if o == SetTimer("presumed_down 3", Ring.lap(5, CONFIG))).rule == "10"
    out = n.step(TimerFired("presumed_down 3"))
    assert sent(out) == [(3, Probe)] and SetTimer("recheck 3", CONFIG.timeout) in out and rules_of(out) == {"10"}
    out = n.step(TimerFired("recheck 3"))  # silent: another lap
    assert 3 in n.presumed_down and SetTimer("presumed_down 3", Ring.lap(5, CONFIG)) in out
    assert sent(n.step(Receive(1, E(5, 1, 6))), Election)[0] == (4, Election)
    n.step(TimerFired("presumed_down 3"))
    out = n.step(Receive(3, ProbeReply(False)))  # it answers: tried again
    assert 3 not in n.presumed_down and CancelTimer("recheck 3") in out
    assert sent(n.step(Receive(1, E(5, 1, 7))), Election)[0] == (3, Election)


def test_rule10_a_skip_calls_the_roll_and_those_silent_for_T_are_presumed_down_at_once():
    n = started(2)  # its Election waits for 3's ack
    out = n.step(TimerFired("hop_wait 3 1"))  # 3 is presumed down; its Election goes on to 4
    assert sorted(dst for dst, kind in sent(out, Probe)) == [1, 4, 5] and SetTimer("roll_call", 4) in out
    assert rules_of(out, Probe) == {"10"}
    assert sent(n.step(TimerFired("hop_wait 3 1")), Probe) == []  # one roll call at a time
    n.step(Receive(1, ProbeReply(False)))  # 1 is up; 4 and 5 say nothing
    out = n.step(TimerFired("roll_call"))
    assert n.presumed_down == {3, 4, 5} and hop_timers(n, 4) == []
    assert ring_msgs(out) == [(1, E(*n.backing, epoch=n.epoch))]  # on at once, past 4 and 5 together
    assert rules_of(out) == {"10"}


def test_rule10_a_node_that_answers_the_roll_call_is_not_presumed_down():
    n = started(2)
    n.step(TimerFired("hop_wait 3 1"))
    n.step(Receive(4, RingAck(*E(*n.backing).key)))
    for node in (1, 4, 5):
        n.step(Receive(node, ProbeReply(False)))
    n.step(TimerFired("roll_call"))
    assert n.presumed_down == {3}


# --- rule 11: asking the candidate ------------------------------------------------------


def backing_5(node_id: int = 2) -> Ring:
    """A participant that backs 5's election (initiated by 1 in round 6)."""
    n = started(node_id)
    n.step(Receive(node_id - 1, E(5, 1, 6)))
    assert n.backing == (5, 1, 6)
    return n


def test_rule11_a_participant_asks_the_candidate_it_backs_every_P_and_waits_T():
    n = started(2)
    out = n.step(Receive(1, E(5, 1, 6)))
    assert SetTimer("ask", CONFIG.probe_interval) in out
    out = n.step(TimerFired("ask"))
    assert [(o.dst, o.msg) for o in out if hasattr(o, "msg")] == [(5, Ask(1, 6, epoch=n.epoch))]
    assert SetTimer("ask_wait", CONFIG.timeout) in out and rules_of(out) == {"11"}
    assert not any(isinstance(o, SetTimer) and o.name == "ask" for o in started(2).step(Start()))  # own: no one to ask


def test_rule11_the_candidate_tells_how_the_election_stands():
    n = started(5)
    own = n.backing
    told = n.step(Receive(3, Ask(*own[1:])))
    assert [(o.dst, o.msg.outcome) for o in told if isinstance(getattr(o, "msg", None), Told)] == [(3, "waiting")]
    assert rules_of(told, Told) == {"11"}
    n.step(Receive(4, E(*own)))  # its Election is back: it leads
    assert [o.msg.outcome for o in n.step(Receive(3, Ask(*own[1:]))) if hasattr(o, "msg")] == ["leads"]
    assert [o.msg.outcome for o in n.step(Receive(3, Ask(1, 99))) if hasattr(o, "msg")] == ["lost"]  # not its own
    n = started(4)
    own = n.backing
    n.step(Receive(3, E(5, 1, 6)))  # a higher election took its own over: it will come by the asker too
    assert [o.msg.outcome for o in n.step(Receive(2, Ask(*own[1:]))) if hasattr(o, "msg")] == ["waiting"]
    n = recovered(4)  # it crashed since: it backs nothing
    assert [o.msg.outcome for o in n.step(Receive(2, Ask(*own[1:]))) if hasattr(o, "msg")] == ["lost"]


def test_rule11_asking_starts_no_election_where_none_was_lost():
    """Every node starts at once on a shuffled ring, and asks every second: as many
    elections as nodes, and the Election messages of the ring that does not ask."""
    def start_up(probe_interval):
        ids = tuple(range(1, 17))
        config = ClusterConfig(delay_min=1, delay_max=1, probe_interval=probe_interval,
                               ring=ring_order("shuffled", ids, 3))
        events = []
        engine = Engine(Ring, ids, config, seed=1)
        engine.subscribe(events.extend)
        run_sync(engine, 60)
        asked = sum(e.kind == "send" and e.msg.type == "ask" for e in events)
        return sends(events)["election"], sum(e.kind == "election_start" for e in events), asked

    elections, started_, asked = start_up(1)
    assert start_up(0) == (elections, 16, 0) and (started_, asked > 0) == (16, True)


def test_rule11_a_candidate_s_word_that_it_leads_is_not_followed_only_elected_is():
    n = backing_5()
    n.step(TimerFired("ask"))
    out = n.step(Receive(5, Told(1, 6, "leads")))
    assert n.participant and SetTimer("ask", CONFIG.probe_interval) in out  # still asking
    n.step(Receive(1, L(5, 1, 6)))
    assert (n.status, n.leader) == ("normal", 5) and "ask" not in n.timers


def test_rule11_following_on_the_word_would_bypass_a_higher_node_that_swallows_elected():
    """Found by a random schedule: on its word, node 1 followed 3 while 4, up and higher
    (quiet when 3's Election came by, so skipped), swallowed 3's Elected and led. Elected's
    way round is part of what keeps normal nodes together."""
    faults = at("5 crash 1", "5 crash 4", "5.5 recover 4", "6 recover 1", "6 crash 1", "6 recover 1", "6 crash 2")
    config = ClusterConfig(timeout=1.2, probe_interval=1, delay_min=0.1, delay_max=0.1)
    engine, events = run(4, 40, config, faults, seed=0, algorithm="ring")
    assert [e for e in events if e.kind == "violation"] == []
    assert {state for node, state in final_states(engine).items() if node != 2} == {("normal", 4, True)}


def test_rule11_waiting_asks_again_after_P_and_lost_or_silence_starts_an_election():
    n = backing_5()
    n.step(TimerFired("ask"))
    out = n.step(Receive(5, Told(1, 6, "waiting")))
    assert SetTimer("ask", CONFIG.probe_interval) in out and n.participant
    n.step(TimerFired("ask"))
    assert started_by(n.step(Receive(5, Told(1, 6, "lost")))) == ["11"]
    n = backing_5()
    n.step(TimerFired("ask"))
    assert started_by(n.step(TimerFired("ask_wait"))) == ["11"]  # 5 is down


def test_rule11_an_answer_about_an_election_no_longer_backed_is_ignored():
    n = backing_5()
    n.step(TimerFired("ask"))
    n.step(Receive(1, E(5, 1, 7)))  # a later election of 5's came by
    assert n.step(Receive(5, Told(1, 6, "leads"))) == [] and n.participant


# --- rule 12: watching what was handed on ------------------------------------------------


def test_rule12_a_participant_watches_the_node_that_acked_its_messages_and_sends_them_past_it():
    n = started(2)
    own = n.backing
    n.step(Receive(3, RingAck(*E(*own).key)))  # 3 holds 2's Election now
    assert n.handed == {3: [E(*own, epoch=n.epoch)]}
    out = n.step(TimerFired("watch"))
    assert sent(out, Probe) == [(3, Probe)] and SetTimer("watch", CONFIG.probe_interval) in out
    assert rules_of(out) == {"12"}
    out = n.step(TimerFired("roll_call"))  # 3 said nothing within T: it crashed holding it
    assert ring_msgs(out) == [(4, E(*own, epoch=n.epoch))] and 3 in n.presumed_down


def test_rule12_only_the_election_it_backs_is_kept():
    n = backing_5()
    n.step(Receive(3, RingAck(*E(*started(2).backing).key)))  # its own Election, from before 5's came by
    assert n.handed == {}
    n.step(Receive(3, RingAck(*E(5, 1, 6).key)))
    assert n.handed == {3: [E(5, 1, 6, epoch=n.epoch)]}
    n.step(Receive(1, E(5, 1, 7)))  # a later election: it backs that one now
    assert n.handed == {}


def test_rule12_a_holder_that_answers_keeps_what_it_holds():
    n = started(2)
    n.step(Receive(3, RingAck(*E(*n.backing).key)))
    n.step(TimerFired("watch"))
    n.step(Receive(3, ProbeReply(False)))
    assert ring_msgs(n.step(TimerFired("roll_call"))) == [] and 3 in n.handed


def test_rule12_what_was_handed_on_is_forgotten_when_the_election_is_over():
    n = backing_5()
    n.step(Receive(3, RingAck(*E(5, 1, 6).key)))
    assert 3 in n.handed
    out = n.step(Receive(1, L(5, 1, 6)))
    assert n.handed == {} and CancelTimer("watch") in out


def test_rule11_told_it_leads_a_participant_waits_for_elected_a_hop_a_T_and_then_asks_again():
    n = backing_5()
    n.step(TimerFired("ask"))
    out = n.step(Receive(5, Told(1, 6, "leads")))
    assert SetTimer("announce_wait", 2 * CONFIG.timeout) in out  # 5 -> 1 -> 2: two hops at most T each
    out = n.step(TimerFired("announce_wait"))  # no Elected: lost with a node that crashed holding it
    assert sent(out) == [(5, Again)] and rules_of(out) == {"11"} and n.participant


# --- rule 13: quiet nodes are waited for -------------------------------------------------


def test_rule13_a_message_for_a_quiet_node_waits_until_its_quiet_is_over():
    n = started(2)
    own = E(*n.backing, epoch=n.epoch)
    out = n.step(Receive(3, Back()))  # it lost 2's Election, and is quiet for T
    assert unacked(n, 3) == [] and CancelTimer("hop_wait 3 1") in out
    assert SetTimer("quiet_of 3", CONFIG.timeout) in out and rules_of(out) == {"10", "13"}
    assert ring_msgs(n.step(Receive(1, E(5, 1, 6)))) == [(1, RingAck(*E(5, 1, 6).key, epoch=n.epoch))]  # nothing on
    out = n.step(TimerFired("quiet_of 3"))
    assert ring_msgs(out) == [(3, own), (3, E(5, 1, 6, epoch=n.epoch))] and rules_of(out) == {"13"}
    assert unacked(n, 3) == [own.key, E(5, 1, 6).key]  # to be acked within T, as any (rule 7)


def test_rule13_what_waits_for_a_node_that_leaves_goes_on_past_it():
    n = started(2)
    n.step(Receive(3, Back()))
    out = n.step(Receive(3, Leave()))
    assert ring_msgs(out) == [(4, E(*n.backing, epoch=n.epoch))] and n.waiting == {}


# --- rule 14: again ----------------------------------------------------------------------


def test_rule14_an_election_handed_to_a_node_that_comes_back_is_started_again():
    n = backing_5()
    n.step(Receive(3, RingAck(*E(5, 1, 6).key)))  # 3 held 5's Election ...
    out = n.step(Receive(3, Back()))  # ... and crashed: 5 is asked to start again
    assert sent(out, Again) == [(5, Again)] and rules_of(out, Again) == {"14"}
    own = started(2)
    own.step(Receive(3, RingAck(*E(*own.backing).key)))
    assert started_by(own.step(Receive(3, Back()))) == ["14"]  # its own: it starts again itself


def test_rule14_an_election_that_went_past_a_node_while_it_was_down_is_started_again():
    n = backing_5()
    n.step(TimerFired("hop_wait 3 2"))  # 3 down: 5's Election went on to 4 ...
    n.step(Receive(4, RingAck(*E(5, 1, 6).key)))
    assert sent(n.step(Receive(3, Back())), Again) == [(5, Again)]  # ... and 3 is back: left out
    n = backing_5()
    n.step(Receive(3, RingAck(*E(5, 1, 6).key)))
    assert sent(n.step(Receive(1, Back())), Again) == []  # 1 is not between 2 and the holder


def test_rule14_a_candidate_asked_again_starts_again_if_it_still_takes_part_in_or_leads_by_that_election():
    n = started(5)
    election = n.backing
    out = n.step(Receive(2, Again(*election[1:])))
    assert started_by(out) == ["14"] and n.backing != election
    assert started_by(n.step(Receive(2, Again(*election[1:])))) == []  # an election of its own is under way


def test_rule1_a_leader_starts_again_when_a_lower_node_comes_back():
    n = started(5)
    n.step(Receive(4, E(*n.backing)))  # its own Election back: it leads
    assert (n.status, n.leader) == ("normal", 5)
    out = n.step(Receive(2, Back()))
    assert started_by(out) == ["1"]  # its Election takes 2 in when 2's quiet is over (rule 13)
    assert [dst for dst, m in ring_msgs(out) if isinstance(m, Election)] == [1]
    four = started(4)
    four.step(Receive(3, E(*four.backing)))
    assert (four.status, four.leader) == ("normal", 4)
    assert started_by(four.step(Receive(5, Back()))) == []  # a higher node: its own election will take 4 in


def test_the_ring_declares_that_it_needs_longer_than_the_default_to_settle():
    from protocol import Node
    assert Ring.settle_time(5, CONFIG, 1.5) - Node.settle_time(5, CONFIG, 1.5) >= Ring.elected_wait(5, CONFIG) + 4
