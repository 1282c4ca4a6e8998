"""One test per rule of the classic Bully algorithm, calling the pure state machine."""

import ast
import pathlib

import pytest

from protocol import (
    CancelTimer,
    ClassicBully,
    Config,
    ElectionStarted,
    Join,
    Joining,
    Leave,
    Leaving,
    MessageRole,
    Receive,
    SafeStorage,
    SetTimer,
    Start,
    StatusRole,
    Suspect,
    TimerFired,
)
from protocol.classic import Answer, Coordinator, Election, Probe, ProbeReply

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)


def node(node_id: int, config: Config = CONFIG, storage: SafeStorage | None = None) -> ClassicBully:
    return ClassicBully(node_id, IDS, config, storage or ClassicBully.storage_class())


def started(node_id: int, **kw) -> ClassicBully:
    n = node(node_id, **kw)
    n.step(Start())
    return n


def following(node_id: int, leader: int, **kw) -> ClassicBully:
    """A node in normal status under `leader`, its probe timer running."""
    n = started(node_id, **kw)
    n.step(Receive(leader, Coordinator()))
    return n


# --- rule 1: start, recovery, or the failure detector -----------------------------------


def test_rule1_highest_node_announces_itself_to_all_others_at_once():
    n = node(5)
    out = n.step(Start())
    assert sent(out) == [(1, Coordinator), (2, Coordinator), (3, Coordinator), (4, Coordinator)]
    assert (n.status, n.leader, n.normal) == ("normal", 5, True)
    assert not any(isinstance(o, SetTimer) for o in out)
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule1_other_nodes_send_election_to_every_higher_node_and_wait_T():
    n = node(2)
    out = n.step(Start())
    assert ElectionStarted() in out
    assert sent(out) == [(3, Election), (4, Election), (5, Election)]
    assert SetTimer("answer_wait", 4) in out
    assert (n.status, n.leader, n.normal) == ("election", None, False)
    assert rules_of(out) == {"1"}


def test_rule1_failure_detector_starts_an_election_and_forgets_the_leader():
    n = following(2, leader=5)
    out = n.step(Suspect())
    assert sent(out) == [(3, Election), (4, Election), (5, Election)]
    assert (n.status, n.leader) == ("election", None)
    assert CancelTimer("probe") in out
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_rule1_failure_detector_is_ignored_during_an_election():
    n = started(2)
    assert n.step(Suspect()) == []
    assert n.status == "election"


# --- rule 2: no Answer within T ----------------------------------------------------------


def test_rule2_no_answer_within_T_makes_the_node_coordinator():
    n = started(3)
    out = n.step(TimerFired("answer_wait"))
    assert sent(out) == [(1, Coordinator), (2, Coordinator), (4, Coordinator), (5, Coordinator)]
    assert (n.status, n.leader, n.normal) == ("normal", 3, True)
    assert rules_of(out) == {"2"} and n.state_rule == "2"


# --- rule 3: an Answer, then waiting for the Coordinator ---------------------------------


def test_rule3_answer_stops_the_election_and_waits_two_T_for_the_coordinator():
    n = started(2)
    out = n.step(Receive(4, Answer()))
    assert sent(out) == []
    assert CancelTimer("answer_wait") in out
    assert SetTimer("coordinator_wait", 8) in out  # T' = 2T by default
    assert n.status == "waiting"
    assert rules_of(out) == {"3"} and n.state_rule == "3"


def test_rule3_coordinator_wait_is_configurable():
    n = started(2, config=Config(timeout=4, coordinator_timeout=5))
    assert SetTimer("coordinator_wait", 5) in n.step(Receive(4, Answer()))


def test_rule3_only_the_first_answer_counts():
    n = started(2)
    n.step(Receive(4, Answer()))
    assert n.step(Receive(5, Answer())) == []


def test_rule3_no_coordinator_within_T_prime_starts_over():
    n = started(2)
    n.step(Receive(4, Answer()))
    out = n.step(TimerFired("coordinator_wait"))
    assert sent(out) == [(3, Election), (4, Election), (5, Election)]
    assert ElectionStarted() in out
    assert n.status == "election"
    assert rules_of(out) == {"3"} and n.state_rule == "3"


# --- rule 4: Election from a lower node --------------------------------------------------


def test_rule4_normal_node_answers_and_starts_its_own_election():
    n = following(3, leader=5)
    out = n.step(Receive(1, Election()))
    assert sent(out) == [(1, Answer), (4, Election), (5, Election)]
    assert n.status == "election"
    assert rules_of(out) == {"4"} and n.state_rule == "4"  # (its own election too: rule 4 says so)


def test_rule4_node_already_electing_only_answers():
    n = started(3)
    assert sent(n.step(Receive(1, Election()))) == [(1, Answer)]
    n.step(Receive(5, Answer()))
    assert n.status == "waiting"
    assert sent(n.step(Receive(2, Election()))) == [(2, Answer)]
    assert n.status == "waiting"


def test_rule4_the_coordinator_answers_and_announces_itself_again():
    n = started(5)
    out = n.step(Receive(2, Election()))
    assert sent(out) == [(2, Answer), (1, Coordinator), (2, Coordinator), (3, Coordinator), (4, Coordinator)]


def test_rule4_election_from_a_higher_node_is_ignored():
    n = following(3, leader=5)
    assert n.step(Receive(4, Election())) == []


# --- rule 5: Coordinator from Q ----------------------------------------------------------


@pytest.mark.parametrize("status_setup", ["election", "waiting", "normal"])
def test_rule5_coordinator_makes_the_sender_leader_from_any_status(status_setup):
    n = started(2)
    if status_setup == "waiting":
        n.step(Receive(4, Answer()))
    if status_setup == "normal":
        n.step(Receive(3, Coordinator()))
    out = n.step(Receive(5, Coordinator()))
    assert (n.status, n.leader, n.normal) == ("normal", 5, True)
    assert not n.timers - {"probe"}
    assert SetTimer("probe", 5) in out
    assert rules_of(out) == {"5"} and n.state_rule == "5"  # (the first probe is set by the rule that made it follow)


def test_rule5_textbook_accepts_a_coordinator_from_a_lower_node():
    # The known flaw of PROTOCOLS.md: the rule does not compare ids.
    n = started(5)
    n.step(Receive(2, Coordinator()))
    assert (n.leader, n.status) == (2, "normal")


# --- failure detection: probing the coordinator -----------------------------------------


def test_probe_fires_sends_probe_and_waits_T():
    n = following(2, leader=5)
    out = n.step(TimerFired("probe"))
    assert sent(out) == [(5, Probe)]
    assert SetTimer("probe_wait", 4) in out
    assert rules_of(out) == {"probing 1"}


def test_probe_reply_in_time_schedules_the_next_probe():
    n = following(2, leader=5)
    n.step(TimerFired("probe"))
    out = n.step(Receive(5, ProbeReply(True)))
    assert out == [CancelTimer("probe_wait"), SetTimer("probe", 5)]
    assert rules_of(out) == {"probing 3"}


def test_the_textbook_detector_asks_only_whether_the_leader_is_alive():
    """A reply saying "I do not lead" is still a reply (the known flaw stays visible)."""
    n = following(2, leader=5)
    n.step(TimerFired("probe"))
    out = n.step(Receive(5, ProbeReply(False)))
    assert out == [CancelTimer("probe_wait"), SetTimer("probe", 5)] and n.leader == 5


def test_every_probe_reply_says_whether_the_sender_leads():
    assert sent(started(5).step(Receive(2, Probe()))) == [(2, ProbeReply)]
    assert rules_of(started(5).step(Receive(2, Probe()))) == {"probing 2"}
    assert started(5).step(Receive(2, Probe()))[0].msg.leads
    assert not following(3, leader=5).step(Receive(2, Probe()))[0].msg.leads


def test_probe_unanswered_within_T_starts_an_election():
    n = following(2, leader=5)
    n.step(TimerFired("probe"))
    out = n.step(TimerFired("probe_wait"))
    assert sent(out) == [(3, Election), (4, Election), (5, Election)]
    assert (n.status, n.leader) == ("election", None)
    assert rules_of(out) == {"probing 4"} and n.state_rule == "probing 4"  # (the Elections under the rule that found it gone)


def test_probing_is_off_when_P_is_zero():
    n = following(2, leader=5, config=Config(timeout=4, probe_interval=0))
    assert n.timers == set()


def test_every_up_node_answers_a_probe_whatever_its_status():
    for n in (started(2), following(3, leader=5), started(5)):
        assert sent(n.step(Receive(1, Probe()))) == [(1, ProbeReply)]


def test_the_leader_does_not_probe_itself():
    assert started(5).timers == set()


# --- the members rules every algorithm that takes joins and leaves inherits (interface.py) -----


def test_members_rule1_to_4_join_and_leave_name_their_rules():
    newcomer = ClassicBully(6, (*IDS, 6), CONFIG, ClassicBully.storage_class())
    out = newcomer.step(Joining())
    assert rules_of(out, Join) == {"members 1"} and rules_of(out, Coordinator) == {"1"}  # then it starts, by rule 1
    assert rules_of(following(2, leader=5).step(Leaving())) == {"members 2"}
    n = following(2, leader=5)
    assert n.step(Receive(6, Join())) == [] and n.applying == "members 3" and 6 in n.ids
    assert n.step(Receive(3, Leave())) == [] and n.applying == "members 4" and 3 not in n.ids
    out = n.step(Receive(5, Leave()))  # its leader left: gone, as if the detector had fired (rule 1)
    assert sent(out) == [(4, Election), (6, Election)] and rules_of(out) == {"1"}


# --- plumbing every algorithm inherits --------------------------------------------------


def test_a_timer_that_is_not_running_is_ignored():
    n = following(2, leader=5)
    assert n.step(TimerFired("answer_wait")) == []
    assert n.status == "normal"


def test_cancels_are_emitted_only_for_running_timers():
    n = started(5)
    assert not any(isinstance(o, CancelTimer) for o in n.step(Receive(1, Election())))


def test_safe_storage_survives_and_volatile_state_does_not():
    storage = ClassicBully.storage_class()
    first = started(2, storage=storage)
    first.step(Receive(5, Coordinator()))
    assert storage.incarnation == 1
    second = started(2, storage=storage)  # the recovered incarnation
    assert storage.incarnation == 2
    assert (second.leader, second.status) == (None, "election")


def test_reconfigure_applies_to_timers_set_afterwards():
    n = following(2, leader=5)
    n.reconfigure(Config(timeout=2, probe_interval=5))
    assert SetTimer("probe_wait", 2) in n.step(TimerFired("probe"))


def test_only_normal_counts_as_normal():
    assert [s for s in ClassicBully.statuses if s.role is StatusRole.NORMAL] == ["normal"]
    assert {started(2).role, following(2, leader=5).role} == {StatusRole.ELECTING, StatusRole.NORMAL}


def test_classic_has_no_variables_beyond_status_leader_and_timers():
    # which every observer has from the trace: the panel shows them once, from there
    assert started(2).variables() == {}


def test_every_message_declares_its_role_for_observers():
    roles = {cls.type: cls.role for cls in ClassicBully.messages}
    assert roles == {"election": MessageRole.REQUEST, "answer": MessageRole.REPLY, "coordinator": MessageRole.ANNOUNCEMENT,
                     "probe": MessageRole.DETECTOR, "probe_reply": MessageRole.DETECTOR}


def test_protocol_package_is_pure():
    forbidden = {"trio", "textual", "rich", "asyncio", "time", "random", "socket", "threading", "os", "io", "datetime"}
    for path in pathlib.Path(__file__).parent.parent.joinpath("protocol").glob("*.py"):
        for stmt in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(stmt, ast.Import):
                names = [a.name for a in stmt.names]
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0:
                names = [stmt.module]
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"
