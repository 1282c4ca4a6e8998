"""Garcia-Molina's Invitation algorithm (protocol/invitation.py), rule by rule, calling the
pure state machine; then random partition, heal, crash and recovery schedules on the
cluster: never a violation within a group, and one group again within c of the last."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.core.commands import Crash, Heal, Partition, Recover, Scheduled
from playground.core.config import ClusterConfig
from protocol import Config, ElectionStarted, InvitationNode, Leave, Receive, Start, Suspect, TimerFired
from protocol.invitation import (
    Accept,
    AreYouCoordinator,
    AreYouThere,
    CoordinatorReply,
    Invitation,
    Ready,
    ThereReply,
)
from tests.support import final_states, rules_of, run
from tests.test_random_schedules import configs

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)
G = 10**6  # a group number is count * G + creator


def node(node_id: int) -> InvitationNode:
    n = InvitationNode(node_id, IDS, CONFIG, InvitationNode.storage_class())
    n.step(Start())
    return n


def sends(outputs) -> list[tuple[int, object]]:
    return [(o.dst, o.msg) for o in outputs if hasattr(o, "msg")]


def msg(kind, *fields, epoch=0):
    return kind(*fields, epoch=epoch)


def member_of(node_id: int, leader: int = 5, group: int = 2 * G + 5) -> InvitationNode:
    n = node(node_id)
    n.step(Receive(leader, msg(Invitation, leader, group)))
    n.step(Receive(leader, msg(Ready, group)))
    assert (n.status, n.leader, n.epoch) == ("normal", leader, group)
    return n


# --- rule 1: a group of one's own -----------------------------------------------------------


def test_rule1_a_node_starts_as_the_coordinator_of_a_group_of_its_own_and_checks_at_once():
    n = InvitationNode(3, IDS, CONFIG, InvitationNode.storage_class())
    out = n.step(Start())
    assert (n.status, n.leader, n.epoch) == ("normal", 3, 1 * G + 3) and ElectionStarted() in out
    assert [d for d, m in sends(out) if type(m) is AreYouCoordinator] == [1, 2, 4, 5]
    assert InvitationNode.epoch_text(n.epoch) == "g1.3"
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule1_group_numbers_are_never_reused_by_a_node_that_recovers():
    n = node(3)
    again = InvitationNode(3, IDS, CONFIG, n.storage)
    again.step(Start())
    assert again.epoch == 2 * G + 3
    assert rules_of(again.step(Suspect())) == {"1"}  # `elect`: a group of its own again
    assert again.epoch == 3 * G + 3


def test_rule1_an_epoch_is_never_taken_from_a_message():
    n = node(3)
    n.step(Receive(5, msg(AreYouCoordinator, epoch=9 * G + 5)))
    assert n.epoch == G + 3


# --- rules 2 to 5: invitations --------------------------------------------------------------


def test_rule2_a_normal_coordinator_passes_the_invitation_to_its_members_and_accepts():
    n = node(3)
    n.members = {1, 2}
    out = n.step(Receive(5, msg(Invitation, 5, 4 * G + 5)))
    assert sends(out) == [(1, msg(Invitation, 5, 4 * G + 5, epoch=G + 3)), (2, msg(Invitation, 5, 4 * G + 5, epoch=G + 3)),
                          (5, msg(Accept, 4 * G + 5, epoch=4 * G + 5))]
    assert (n.status, n.leader, n.epoch, n.members) == ("invited", 5, 4 * G + 5, set())
    assert rules_of(out) == {"2"} and n.state_rule == "2"


def test_rule2_a_node_not_normal_ignores_an_invitation():
    n = node(3)
    n.step(Receive(5, msg(Invitation, 5, 4 * G + 5)))
    assert sends(n.step(Receive(4, msg(Invitation, 4, 4 * G + 4)))) == [] and n.leader == 5


def test_rules3_and_4_a_merge_invites_the_coordinators_found_and_its_members_and_readies_those_that_accept():
    n = node(5)
    n.members = {4}
    n.step(Receive(2, msg(CoordinatorReply, True)))
    n.step(Receive(3, msg(CoordinatorReply, True)))
    out = n.step(TimerFired("check_wait"))
    assert [o for o in out if getattr(o, "name", None) == "merge_delay"][0].delay == 0  # nobody higher found
    out = n.step(TimerFired("merge_delay"))
    g = 2 * G + 5
    assert [d for d, m in sends(out) if m == msg(Invitation, 5, g, epoch=g)] == [2, 3, 4] and n.status == "merging"
    assert rules_of(out, Invitation) == {"4"} and n.state_rule == "4"
    assert n.step(Receive(2, msg(Accept, g))) == [] and n.applying == "3"  # (a member now: nothing to send)
    n.step(Receive(4, msg(Accept, g)))
    n.step(Receive(1, msg(Accept, G + 1)))  # for another group: not a member
    out = n.step(TimerFired("accept_wait"))
    assert [d for d, m in sends(out) if type(m) is Ready] == [2, 4] and n.status == "normal" and n.members == {2, 4}
    assert rules_of(out, Ready) == {"4"}


def test_rule5_ready_from_the_inviter_makes_a_node_normal_and_none_in_3T_a_group_of_its_own():
    n = member_of(2)
    assert "ask_leader" in n.timers
    n = node(2)
    n.step(Receive(5, msg(Invitation, 5, 2 * G + 5)))
    n.step(Receive(4, msg(Ready, 2 * G + 5)))  # not from the inviter
    assert n.status == "invited"
    out = n.step(TimerFired("ready_wait"))
    assert (n.status, n.leader, n.epoch) == ("normal", 2, 2 * G + 2)
    assert rules_of(out) == {"5"} and n.state_rule == "5"
    n = node(2)
    n.step(Receive(5, msg(Invitation, 5, 2 * G + 5)))
    n.step(Receive(5, msg(Ready, 2 * G + 5)))
    assert n.status == "normal" and n.state_rule == "5"


# --- rules 6 and 7: checks and questions ------------------------------------------------------


def test_rule6_only_normal_coordinators_say_they_coordinate():
    assert sends(node(3).step(Receive(5, msg(AreYouCoordinator))))[0][1].coordinates is True
    assert rules_of(node(3).step(Receive(5, msg(AreYouCoordinator)))) == {"6"}
    assert sends(member_of(3).step(Receive(4, msg(AreYouCoordinator))))[0][1].coordinates is False


def test_rule6_a_coordinator_that_found_higher_ones_waits_2T_for_each():
    n = node(2)
    for peer in (1, 4, 5):
        n.step(Receive(peer, msg(CoordinatorReply, True)))
    out = n.step(TimerFired("check_wait"))
    assert [o.delay for o in out if getattr(o, "name", None) == "merge_delay"] == [2 * 4 * 2]
    assert rules_of(out) == {"6"}


def test_rule6_nobody_found_means_another_check_after_P():
    n = node(2)
    out = n.step(TimerFired("check_wait"))
    assert [o.delay for o in out if getattr(o, "name", None) == "check"] == [5]


def test_rule7_a_member_asks_its_coordinator_and_forms_its_own_group_on_no_answer_or_a_no():
    n = member_of(2)
    out = n.step(TimerFired("ask_leader"))
    assert sends(out) == [(5, msg(AreYouThere, 2 * G + 5, epoch=2 * G + 5))] and rules_of(out) == {"7"}
    out = n.step(TimerFired("ask_wait"))
    assert (n.leader, n.epoch) == (2, 2 * G + 2)
    assert rules_of(out) == {"7"} and n.state_rule == "7"
    n = member_of(2)
    n.step(TimerFired("ask_leader"))
    n.step(Receive(5, msg(ThereReply, 2 * G + 5, False)))
    assert n.leader == 2


def test_rule7_the_coordinator_says_yes_only_for_its_group_and_its_members():
    n = node(5)
    n.members = {2}
    assert sends(n.step(Receive(2, msg(AreYouThere, G + 5))))[0][1].member is True
    assert sends(n.step(Receive(3, msg(AreYouThere, G + 5))))[0][1].member is False
    assert sends(n.step(Receive(2, msg(AreYouThere, 7 * G + 5))))[0][1].member is False


def test_rule8_a_coordinator_that_leaves_is_gone_for_its_members():
    n = member_of(2)
    out = n.step(Receive(5, msg(Leave)))
    assert (n.leader, n.status) == (2, "normal")
    assert rules_of(out) == {"8"} and n.state_rule == "8"
    coordinator = node(5)
    coordinator.members = {2, 3}
    coordinator.step(Receive(3, msg(Leave)))
    assert coordinator.members == {2}


# --- random partitions, heals, crashes and recoveries -----------------------------------------


@st.composite
def schedules(draw):
    """Up to eight partitions, heals, crashes and recoveries a few seconds apart, then a
    last heal: the cluster must end as one group within c of the last."""
    nodes = draw(st.integers(2, 6))
    config = draw(configs())
    t, down, out = 5.0, set(), []
    for _ in range(draw(st.integers(0, 8))):
        t = round(t + draw(st.floats(0, 2 * config.timeout + config.probe_interval)), 3)
        kind = draw(st.sampled_from(["partition", "heal", "crash", "recover"]))
        if kind == "partition":
            side = draw(st.sets(st.integers(1, nodes), min_size=1, max_size=nodes - 1)) if nodes > 1 else {1}
            command = Partition(tuple(sorted(side)))
        elif kind == "heal":
            command = Heal()
        elif kind == "recover" and down:
            node = draw(st.sampled_from(sorted(down)))
            down.discard(node)
            command = Recover(node)
        elif len(down) < nodes - 1:
            node = draw(st.sampled_from(sorted(set(range(1, nodes + 1)) - down)))
            down.add(node)
            command = Crash(node)
        else:
            continue
        out.append(Scheduled(t, command, "hypothesis"))
    out.append(Scheduled(round(t + 1, 3), Heal(), "hypothesis"))
    return nodes, config, draw(st.integers(0, 2**16)), tuple(out)


@given(schedule=schedules())
def test_after_any_partitions_and_faults_nothing_is_reported_and_all_end_in_one_group_within_c(schedule):
    nodes, config, seed, commands = schedule
    last = commands[-1].at
    until = last + InvitationNode.settle_time(nodes, config.protocol, config.delay_max) + 1
    engine, events = run(nodes, until, config, commands, seed=seed, algorithm="invitation")
    assert [(e.t, e.property, e.nodes) for e in events if e.kind == "violation"] == []
    up = [i for i, h in engine.hosts.items() if h.up]
    states = final_states(engine)
    assert len({states[i][1] for i in up}) == 1 and all(states[i][2] for i in up), states
    assert len({engine.hosts[i].storage.epoch for i in up}) == 1  # one group


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_partition_that_lasts_is_two_groups_and_no_violation(seed):
    engine, events = run(6, 120, ClusterConfig(delay_min=0.5, delay_max=1.5),
                         commands=(Scheduled(20, Partition((1, 2, 3)), "test"),), seed=seed, algorithm="invitation")
    assert [e for e in events if e.kind == "violation"] == []
    groups = {engine.hosts[i].storage.epoch for i in range(1, 7)}
    assert len(groups) == 2 and {final_states(engine)[i][1] for i in (1, 2, 3)} == {3}
