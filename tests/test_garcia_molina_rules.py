"""Garcia-Molina's Bully (Garcia-Molina 1982), rule by rule, calling the pure state machine;
what each step outputs names the rule (its header's numbers) that made it."""

from protocol import Config, ElectionStarted, GarciaMolina, Receive, SetTimer, Start, Suspect, TimerFired
from protocol.garcia_molina import (
    ELECTION_PROCEDURE,
    TIMEOUT_PROCEDURE,
    AreYouNormal,
    AreYouThere,
    Halt,
    HaltAck,
    NewCoordinator,
    NewCoordinatorAck,
    NormalReply,
    Ready,
    ReadyAck,
    Yes,
)

from .support import rules_of, sent

IDS = (1, 2, 3, 4, 5)
CONFIG = Config(timeout=4, probe_interval=5)


def started(node_id: int) -> GarciaMolina:
    n = GarciaMolina(node_id, IDS, CONFIG, GarciaMolina.storage_class())
    n.step(Start())
    return n


def halted(node_id: int, by: int) -> GarciaMolina:
    n = started(node_id)
    n.step(Receive(by, Halt()))
    return n


def coordinator_of_everyone() -> GarciaMolina:
    """Node 5 after a whole election in which 1..4 acked every phase."""
    n = started(5)
    for i in (4, 3, 2, 1):
        n.step(Receive(i, HaltAck()))
    for i in (4, 3, 2, 1):
        n.step(Receive(i, NewCoordinatorAck()))
    for i in (4, 3, 2, 1):
        n.step(Receive(i, ReadyAck()))
    return n


def test_recovery_is_status_down_then_an_election_asking_every_higher_node():
    n = GarciaMolina(2, IDS, CONFIG, GarciaMolina.storage_class())
    out = n.step(Start())
    assert ElectionStarted() in out
    assert sent(out) == [(3, AreYouThere), (4, AreYouThere), (5, AreYouThere)]
    assert SetTimer("reply_wait", 4) in out
    assert n.status == "down" and n.phase == "ask"
    assert rules_of(out) == {"1"} and n.state_rule == "1"


def test_any_yes_from_a_higher_node_stops_the_election():
    n = started(2)
    out = n.step(Receive(4, Yes(ELECTION_PROCEDURE)))
    assert sent(out) == [] and rules_of(out) == {"2"}
    assert n.phase is None and "reply_wait" not in n.timers
    assert n.status == "down"  # waits to be taken in by the coordinator's Check
    assert "join_wait" in n.timers  # for P + T'


def test_a_node_left_outside_runs_its_election_again_if_nobody_halts_it():
    n = started(2)
    n.step(Receive(4, Yes(ELECTION_PROCEDURE)))
    out = n.step(TimerFired("join_wait"))
    assert ElectionStarted() in out and rules_of(out) == {"14"}


def test_no_answer_within_T_halts_every_lower_node():
    n = started(3)
    out = n.step(TimerFired("reply_wait"))
    assert sent(out) == [(1, Halt), (2, Halt)]
    assert (n.status, n.halted_by, n.phase) == ("election", 3, "halt")
    assert rules_of(out) == {"3"} and n.state_rule == "3"


def test_the_highest_node_halts_at_once_then_announces_to_exactly_the_nodes_that_acked():
    n = started(5)
    assert n.phase == "halt"
    n.step(Receive(4, HaltAck()))
    n.step(Receive(2, HaltAck()))
    out = n.step(TimerFired("reply_wait"))  # 1 and 3 never acked: they are not in Up
    assert sent(out) == [(2, NewCoordinator), (4, NewCoordinator)]
    assert (n.status, n.leader, n.up) == ("reorganization", 5, {2, 4})
    assert rules_of(out) == {"4"} and n.state_rule == "4"


def test_a_phase_ends_as_soon_as_every_reply_is_in():
    n = coordinator_of_everyone()
    assert (n.status, n.leader, n.normal) == ("normal", 5, True)
    assert n.task == f"task of epoch {n.epoch}"
    assert n.state_rule == "5"


def test_a_missing_new_coordinator_ack_restarts_the_election():
    n = started(5)
    for i in (4, 3, 2, 1):
        n.step(Receive(i, HaltAck()))
    n.step(Receive(4, NewCoordinatorAck()))
    out = n.step(TimerFired("reply_wait"))
    assert ElectionStarted() in out and rules_of(out) == {"6", "3"}  # (5 has nobody to ask: it halts at once)
    assert sent(out) == [(4, Halt), (3, Halt), (2, Halt), (1, Halt)] or sorted(sent(out)) == [(i, Halt) for i in (1, 2, 3, 4)]


def test_a_missing_ready_ack_restarts_the_election():
    n = started(5)
    for phase_ack in (HaltAck, NewCoordinatorAck):
        for i in (4, 3, 2, 1):
            n.step(Receive(i, phase_ack()))
    out = n.step(TimerFired("reply_wait"))
    assert ElectionStarted() in out and n.phase == "halt"


def test_halt_sets_election_and_remembers_the_halting_node():
    n = started(2)
    out = n.step(Receive(5, Halt()))
    assert sent(out) == [(5, HaltAck)]
    assert (n.status, n.halted_by, n.leader, n.phase) == ("election", 5, None, None)
    assert rules_of(out) == {"7"} and n.state_rule == "7"


def test_new_coordinator_is_accepted_only_from_the_node_that_halted_us():
    n = halted(2, by=5)
    assert sent(n.step(Receive(4, NewCoordinator()))) == []
    assert n.status == "election"
    out = n.step(Receive(5, NewCoordinator()))
    assert sent(out) == [(5, NewCoordinatorAck)] and rules_of(out) == {"8"}
    assert (n.status, n.leader) == ("reorganization", 5)


def test_ready_is_accepted_only_from_our_coordinator_in_reorganization():
    n = halted(2, by=5)
    assert sent(n.step(Receive(5, Ready("t")))) == []  # not yet in reorganization
    n.step(Receive(5, NewCoordinator()))
    assert sent(n.step(Receive(4, Ready("t")))) == []
    out = n.step(Receive(5, Ready("t")))
    assert sent(out) == [(5, ReadyAck)] and rules_of(out) == {"9"}
    assert (n.status, n.leader, n.task, n.normal) == ("normal", 5, "t", True) and n.state_rule == "9"
    assert "timeout" in n.timers  # the Timeout procedure now watches the coordinator


def test_a_halted_node_whose_candidate_goes_silent_starts_an_election():
    n = halted(2, by=5)
    out = n.step(TimerFired("halted_wait"))
    assert ElectionStarted() in out and n.phase == "ask"
    assert rules_of(out) == {"13"}


def test_check_asks_everyone_and_a_no_starts_an_election():
    n = coordinator_of_everyone()
    out = n.step(TimerFired("check"))
    assert sent(out) == [(i, AreYouNormal) for i in (1, 2, 3, 4)] and rules_of(out) == {"11"}
    assert ElectionStarted() not in n.step(Receive(3, NormalReply(True)))
    out = n.step(Receive(3, NormalReply(False)))
    assert ElectionStarted() in out and rules_of(out) == {"11", "3"}  # (5 has nobody to ask: it halts at once)


def test_are_you_normal_says_yes_only_in_normal():
    n = halted(2, by=5)
    out = n.step(Receive(5, AreYouNormal()))
    assert [o.msg.normal for o in out] == [False] and rules_of(out) == {"10"}
    assert rules_of(n.step(Receive(5, AreYouThere(TIMEOUT_PROCEDURE)))) == {"10"}


def test_timeout_procedure_polls_the_coordinator_and_elects_when_it_is_silent():
    n = halted(2, by=5)
    n.step(Receive(5, NewCoordinator()))
    n.step(Receive(5, Ready("t")))
    out = n.step(TimerFired("timeout"))
    assert sent(out) == [(5, AreYouThere)] and rules_of(out) == {"12"}
    out = n.step(TimerFired("timeout_wait"))
    assert ElectionStarted() in out and rules_of(out) == {"12"}


def test_a_yes_from_the_coordinator_keeps_the_timeout_procedure_going():
    n = halted(2, by=5)
    n.step(Receive(5, NewCoordinator()))
    n.step(Receive(5, Ready("t")))
    n.step(TimerFired("timeout"))
    n.step(Receive(5, Yes(TIMEOUT_PROCEDURE)))
    assert "timeout_wait" not in n.timers and "timeout" in n.timers


def test_a_candidate_halted_by_a_higher_node_gives_up_its_own_election():
    n = started(4)
    n.step(TimerFired("reply_wait"))  # 5 silent: 4 halts 1..3
    out = n.step(Receive(5, Halt()))
    assert sent(out) == [(5, HaltAck)]
    assert n.phase is None and "reply_wait" not in n.timers


def test_suspect_starts_an_election_unless_one_is_running():
    n = halted(2, by=5)
    n.step(Receive(5, NewCoordinator()))
    n.step(Receive(5, Ready("t")))
    out = n.step(Suspect())
    assert ElectionStarted() in out and rules_of(out) == {"1"}
    assert n.step(Suspect()) == []
