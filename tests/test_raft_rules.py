"""Raft's leader election (protocol/raft.py), rule by rule on the pure machine; and, on
the engine, what it guarantees: at most one leader per term, whatever crashes and
recoveries do, and a leader followed by every up node within c."""

from __future__ import annotations

import pytest
from hypothesis import given

from playground.core.config import ClusterConfig
from playground.core.monitor import SPLIT_BRAIN
from playground.core.rounds import Rounds
from protocol import CancelTimer, Config, ElectionStarted, Raft, Receive, SetTimer, Start, Suspect, TimerFired
from protocol.raft import Heartbeat, RequestVote, Vote
from tests.support import at, final_states, run
from tests.test_random_schedules import cases, violations

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)  # T' = 2T = 8


def node(node_id: int = 3) -> Raft:
    n = Raft(node_id, IDS, CONFIG, Raft.storage_class())
    n.step(Start())
    return n


def candidate(node_id: int = 3) -> Raft:
    n = node(node_id)
    n.step(TimerFired("election_timeout"))
    return n


def test_rule1_a_node_starts_as_a_follower_that_knows_no_leader_with_a_drawn_timeout():
    n = Raft(3, IDS, CONFIG, Raft.storage_class())
    out = n.step(Start())
    assert (n.status, n.leader, n.storage.epoch) == ("waiting", None, 0)
    assert SetTimer("election_timeout", 4, 8) in out  # the runtime draws it from [T, T']
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule2_the_timeout_makes_a_candidate_of_a_new_term_that_votes_for_itself_and_asks_all():
    n = node()
    out = n.step(TimerFired("election_timeout"))
    assert ElectionStarted() in out and (n.status, n.storage.epoch, n.storage.voted_for) == ("candidate", 1, 3)
    assert sent(out) == [(1, RequestVote), (2, RequestVote), (4, RequestVote), (5, RequestVote)]
    assert SetTimer("election_timeout", 4, 8) in out  # a split vote ends in another election
    assert rules_of(out) == {"2"} and n.state_rule == "2"
    assert ElectionStarted() in n.step(TimerFired("election_timeout")) and n.storage.epoch == 2


def test_rule2_alone_a_candidate_leads_at_once():
    n = Raft(1, (1,), CONFIG, Raft.storage_class())
    n.step(Start())
    n.step(TimerFired("election_timeout"))
    assert (n.status, n.leader) == ("leader", 1)


def test_rule3_one_vote_per_term_to_the_first_that_asks_and_kept_in_safe_storage():
    n = node()
    out = n.step(Receive(4, RequestVote(epoch=1)))
    assert [(o.dst, o.msg) for o in out if hasattr(o, "msg")] == [(4, Vote(True, epoch=1))]
    assert SetTimer("election_timeout", 4, 8) in out and n.storage.voted_for == 4
    assert rules_of(out) == {"3"}
    assert [o.msg for o in n.step(Receive(5, RequestVote(epoch=1))) if hasattr(o, "msg")] == [Vote(False, epoch=1)]
    assert [o.msg for o in n.step(Receive(4, RequestVote(epoch=1))) if hasattr(o, "msg")] == [Vote(True, epoch=1)]
    again = Raft(3, IDS, CONFIG, n.storage)  # a crash: the vote survives it
    again.step(Start())
    assert [o.msg for o in again.step(Receive(5, RequestVote(epoch=1))) if hasattr(o, "msg")] == [Vote(False, epoch=1)]


def test_rule4_a_majority_of_votes_makes_a_leader_that_heartbeats_at_once():
    n = candidate()
    n.step(Receive(1, Vote(True, epoch=1)))
    assert n.status == "candidate"  # 2 of 5
    n.step(Receive(2, Vote(False, epoch=1)))
    out = n.step(Receive(4, Vote(True, epoch=1)))  # 3 of 5
    assert (n.status, n.leader) == ("leader", 3)
    assert sent(out, Heartbeat) == [(1, Heartbeat), (2, Heartbeat), (4, Heartbeat), (5, Heartbeat)]
    assert SetTimer("heartbeat", 2) in out and CancelTimer("election_timeout") in out
    assert rules_of(out) == {"4"} and n.state_rule == "4"


def test_rule5_a_heartbeat_of_the_term_makes_a_follower_and_a_candidate_steps_down():
    n = candidate()
    out = n.step(Receive(5, Heartbeat(epoch=1)))
    assert (n.status, n.leader) == ("follower", 5) and SetTimer("election_timeout", 4, 8) in out
    assert rules_of(out) == {"5"} and n.state_rule == "5"
    n = node()
    n.step(Receive(2, Heartbeat(epoch=0)))
    assert (n.status, n.leader, n.normal) == ("follower", 2, True)


def test_rule6_a_leader_heartbeats_every_half_T_and_ignores_its_election_timeout():
    n = candidate()
    for i in (1, 2):
        n.step(Receive(i, Vote(True, epoch=1)))
    out = n.step(TimerFired("heartbeat"))
    assert len(sent(out, Heartbeat)) == 4 and SetTimer("heartbeat", 2) in out and rules_of(out) == {"6"}
    assert n.step(TimerFired("election_timeout")) == [] and n.status == "leader"


def test_rule7_a_later_term_makes_any_node_a_follower_that_knows_no_leader():
    n = candidate()
    for i in (1, 2):
        n.step(Receive(i, Vote(True, epoch=1)))
    assert n.status == "leader"
    out = n.step(Receive(4, RequestVote(epoch=3)))  # a later term: step down, then vote
    assert (n.status, n.storage.epoch, n.storage.voted_for) == ("waiting", 3, 4)
    assert CancelTimer("heartbeat") in out and [o.msg for o in out if hasattr(o, "msg")] == [Vote(True, epoch=3)]
    assert rules_of(out) == {"7", "3"} and n.state_rule == "7"  # (stepped down by rule 7, then voted by rule 3)
    assert [o.rule for o in out if o == CancelTimer("heartbeat")] == ["7"]


def test_rule7_a_message_of_an_earlier_term_is_ignored():
    n = candidate()
    n.step(TimerFired("election_timeout"))  # term 2
    assert n.step(Receive(5, Heartbeat(epoch=1))) == [] and n.status == "candidate" and n.applying == "7"
    assert n.step(Receive(1, Vote(True, epoch=1))) == [] and n.votes == {3}


def test_elect_is_a_timeout_now_except_for_a_leader():
    n = node()
    out = n.step(Suspect())
    assert ElectionStarted() in out and rules_of(out) == {"2"}


# --- on the engine -------------------------------------------------------------------


@given(case=cases())
def test_with_synchrony_never_two_leaders_in_one_term_and_one_leader_within_c(case):
    """Any crashes and recoveries, mid-election too (the property tests' schedules)."""
    until = case.last_fault + case.settle("raft") + 1
    engine, events = run(case.nodes, until, case.config, case.faults, seed=case.seed, algorithm="raft")
    assert [v for v in violations(events) if f" {SPLIT_BRAIN} " in v] == []
    assert [v for v in violations(events) if " sle2 " in v] == []
    up = [i for i, h in engine.hosts.items() if h.up]
    leaders = {final_states(engine)[i][1] for i in up}
    if 2 * len(up) > case.nodes:
        assert len(leaders) == 1 and leaders.pop() in up
    else:  # a minority up elects nobody (a leader still up leads on), and the monitor expects nothing (its rule 6)
        assert len(leaders - {None}) <= 1


@pytest.mark.parametrize("spread", [1.0, 2.0])
def test_the_highest_does_not_win_and_the_monitor_does_not_expect_it(spread):
    config = ClusterConfig(timeout=4, coordinator_timeout=4 * spread, delay_min=1, delay_max=1, probe_interval=0)
    engine, events = run(5, 60, config, seed=3, algorithm="raft")
    agreements = [e.leader for e in events if e.kind == "agreement"]
    if spread == 1.0:  # every timeout alike, every delay alike: the votes split for ever
        assert agreements == [] and [v for v in violations(events) if " sle2 " in v]
    else:
        assert agreements and agreements[0] != 5 and violations(events) == []


def test_no_worst_case_in_messages_split_votes_have_no_end():
    """An election without a split vote takes 2(n-1) messages; after a leader's crash with
    no spread every term splits, and the round grows for as long as it runs."""
    assert Raft.worst_case_messages(5) is None
    config = ClusterConfig(timeout=4, coordinator_timeout=4, delay_min=0.025, delay_max=0.025, probe_interval=0)
    counts = []
    for until in (30, 60):
        _, events = run(5, until, config, at("1 elect 1", "10.5 crash 1"), algorithm="raft")
        rounds = Rounds(kept=[])
        for e in events:
            rounds.observe(e)
        first, after_the_crash = (sum(r.messages.values()) for r in rounds.kept)
        assert first == 2 * 4 and after_the_crash > first  # node 1's term; then the splits
        counts.append(after_the_crash)
    assert counts[1] > counts[0]  # still going: no bound
