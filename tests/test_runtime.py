"""The runtime: links, crash and recovery, commands, the live interface, determinism."""

from dataclasses import astuple

import pytest
import trio
import trio.testing
from hypothesis import given, settings

from playground.core import engine as engine_module
from playground.core.commands import ChangeDelay, ChangeTimeout, Crash, Elect
from playground.core.config import ClusterConfig, InputError
from playground.core.engine import Engine, run_sync
from playground.run.cluster import Cluster
from protocol import ALGORITHMS, ClassicBully
from tests.support import WORST_CASE, at, final_states, make_engine, recorded, run, run_on_trio, sends, unchecked
from tests.test_mutex_runs import BUSY
from tests.test_random_schedules import cases

JITTER = ClusterConfig(timeout=4, probe_interval=2, delay_min=0.2, delay_max=1.5)


def by_kind(events, kind):
    return [e for e in events if e.kind == kind]


# --- links ---------------------------------------------------------------------------------


def test_a_message_to_a_down_node_is_dropped_with_the_reason():
    _, events = run(4, 30, commands=at("10 crash 4", "10 elect 1"))
    drops = by_kind(events, "drop")
    assert drops and all(d.dst == 4 and d.reason == "receiver down" and d.t > 10 for d in drops)
    sent_to_4 = {e.id for e in by_kind(events, "send") if e.dst == 4 and e.t >= 10}
    assert {d.id for d in drops} == sent_to_4


def test_delays_stay_in_bounds_and_links_stay_fifo_under_jitter():
    _, events = run(6, 120, JITTER, commands=at("30 crash 6", "50 recover 6"), seed=7)
    sent = {e.id: e for e in by_kind(events, "send")}
    held = 0
    for e in sent.values():
        delay = e.arrives - e.t
        assert delay >= 0.2 - 1e-9
        held += delay > 1.5 + 1e-9  # only the FIFO rule may hold a message longer
    arrived = [e for e in events if e.kind in ("deliver", "drop")]
    for e in arrived:
        assert e.t == sent[e.id].arrives
    for src in range(1, 7):
        for dst in range(1, 7):
            ids = [e.id for e in arrived if (e.src, e.dst) == (src, dst)]
            assert ids == sorted(ids), f"link {src}->{dst} reordered"
    assert held < len(sent)


def test_a_message_is_delivered_exactly_once():
    _, events = run(5, 100, JITTER, commands=at("20 crash 5", "40 recover 5"), seed=3)
    arrived = [e.id for e in events if e.kind in ("deliver", "drop")]
    due = [e.id for e in by_kind(events, "send") if e.arrives <= 100]
    assert sorted(arrived) == sorted(due)


# --- crash and recovery --------------------------------------------------------------------


def test_crash_halts_the_node_at_once():
    _, events = run(5, 60, JITTER, commands=at("10 crash 3"))
    after = [e for e in events if e.t >= 10 and getattr(e, "node", getattr(e, "src", None)) == 3]
    assert [e.kind for e in after[:2]] == ["crash", "state"]
    assert not [e for e in after if e.kind in ("send", "timer", "deliver", "timer_set")]


def test_recovery_restarts_from_safe_storage_and_runs_an_election():
    engine, events = run(5, 60, WORST_CASE, commands=at("10 crash 2", "20 recover 2"))
    assert engine.internals(2).storage["incarnation"] == 2
    # The epoch survived the crash in safe storage, and the whole cluster shares it.
    assert len({h.epoch for h in engine.hosts.values()}) == 1
    recovered = [e for e in events if e.t == 20 and getattr(e, "node", getattr(e, "src", None)) == 2]
    assert [e.kind for e in recovered][:3] == ["recover", "election_start", "send"]
    assert final_states(engine)[2] == ("normal", 5, True)


def test_crash_of_a_down_node_and_recovery_of_an_up_node_change_nothing():
    def effects(events):  # everything but the commands themselves, without seq numbers
        return [(e.kind, e.t, *astuple(e)[2:]) for e in events if e.kind != "command"]

    _, plain = run(4, 40, commands=at("10 crash 3"))
    _, noisy = run(4, 40, commands=unchecked("10 crash 3", "10 recover 2", "12 crash 3", "12 elect 3"))
    assert effects(noisy) == effects(plain)
    assert len(by_kind(noisy, "command")) == 4


# --- commands ------------------------------------------------------------------------------


def test_commands_at_the_same_time_run_in_the_order_given():
    _, events = run(4, 30, commands=at("10 crash 2", "10 recover 2", "10 crash 2"))
    kinds = [e.kind for e in events if e.t == 10 and e.kind in ("command", "crash", "recover")]
    assert kinds == ["command", "crash", "command", "recover", "command", "crash"]


def test_commands_run_before_the_work_due_at_the_same_instant():
    # Node 1's Election reaches 4 at t=21; the crash at 21 comes first, so it is dropped.
    _, events = run(4, 40, commands=at("20 elect 1", "21 crash 4"))
    first_drop = by_kind(events, "drop")[0]
    assert first_drop.t == 21
    assert [first_drop.id] == [e.id for e in by_kind(events, "send") if e.t == 20 and e.dst == 4]


def test_timeout_command_changes_T_for_timers_set_afterwards():
    _, events = run(4, 60, commands=at("20 timeout 2.5", "20 crash 4", "20 elect 1"))
    waits = [e for e in by_kind(events, "timer_set") if e.name == "answer_wait"]
    assert {round(e.fires - e.t, 6) for e in waits if e.t < 20} == {4}
    assert {round(e.fires - e.t, 6) for e in waits if e.t >= 20} == {2.5}


def test_delay_command_changes_the_bounds_for_later_messages():
    _, events = run(4, 60, commands=at("20 delay 0.25:0.5", "20 crash 4", "20 elect 1"))
    delays = {round(e.arrives - e.t, 6) for e in by_kind(events, "send")}
    early = {round(e.arrives - e.t, 6) for e in by_kind(events, "send") if e.t < 20}
    late = {round(e.arrives - e.t, 6) for e in by_kind(events, "send") if e.t >= 20}
    assert early == {1.0} and late and all(0.25 <= d <= 0.5 for d in late)
    assert delays == early | late


def test_every_command_is_in_the_trace():
    _, events = run(4, 30, commands=at("5 elect 2", "6 timeout 3", "7 delay 1:2"))
    got = [(e.t, e.command, e.args, e.source) for e in by_kind(events, "command")]
    assert got == [(5, "elect", (2,), "test"), (6, "timeout", (3.0,), "test"), (7, "delay", (1.0, 2.0), "test")]


def test_elect_on_a_down_node_does_nothing_but_is_recorded():
    _, events = run(4, 30, commands=unchecked("5 crash 2", "6 elect 2"))
    assert not [e for e in events if e.t >= 6 and e.kind == "election_start"]
    assert by_kind(events, "command")[-1].command == "elect"


# --- the live interface (what the UI uses) ------------------------------------------------


@pytest.mark.trio
async def test_submitted_commands_run_at_the_current_virtual_time(autojump_clock):
    engine, events = make_engine(5)
    cluster = Cluster(engine)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(cluster.run)
        await trio.sleep(10)
        cluster.submit(Crash(5))
        await trio.sleep(0.5)
        cluster.submit(Elect(1))
        await trio.sleep(30)
        nursery.cancel_scope.cancel()
    crash = by_kind(events, "crash")[0]
    assert crash.t == pytest.approx(10, abs=1e-6) and crash.node == 5
    assert by_kind(events, "command")[0].source == "user"
    assert final_states(engine)[1] == ("normal", 4, True)
    assert not cluster.running


def test_rule2_a_live_command_never_runs_at_an_instant_that_has_already_run():
    engine, events = make_engine(4)
    run_sync(engine, 1)  # the Elections of t=0 arrived at t=1
    engine.submit(Crash(4), "user", clock_us=0)  # the clock lags: the user pressed at "t=0"
    run_sync(engine, 2)
    [crash] = by_kind(events, "command")
    assert crash.t == 1.000001  # the first instant not yet run
    assert [e.kind for e in events if e.seq > crash.seq][:1] == ["crash"]


def test_relative_commands_are_resolved_when_they_run_and_recorded_absolute():
    engine, events = make_engine(4)
    run_sync(engine, 1)
    for request in (ChangeTimeout(0.5), ChangeTimeout(0.5), ChangeDelay(-0.25), ChangeDelay(-1), ChangeDelay(-0.75),
                    ChangeTimeout(-9), ChangeDelay(0.25)):
        engine.submit(request, "user", clock_us=1_000_001)
    run_sync(engine, 2)
    got = [(e.command, e.args) for e in by_kind(events, "command")]
    # T never drops below the step; a delay step is taken whole or not at all (the
    # minimum never below 0), so a step back undoes a step; a no-op is not a command.
    assert got == [("timeout", (4.5,)), ("timeout", (5.0,)), ("delay", (0.75, 0.75)), ("delay", (0.0, 0.0)),
                   ("delay", (0.25, 0.25))]
    assert (engine.config.timeout, engine.config.delay_max) == (5.0, 0.25)


def test_an_exception_in_a_node_surfaces_from_the_run():
    class Broken(ClassicBully):
        name = "broken"

        def on_message(self, src, msg):
            raise RuntimeError("bug in the protocol")

    cluster = Cluster(Engine(Broken, range(1, 4), WORST_CASE, 1))
    with pytest.raises(ExceptionGroup) as info:
        trio.run(cluster.run, 10, clock=trio.testing.MockClock(autojump_threshold=0))
    assert info.group_contains(RuntimeError, match="bug in the protocol")
    notes = {note.split(", handling")[0] for e in info.value.exceptions for note in e.__notes__}
    assert notes == {f"broken node {i} at t=1" for i in (1, 2, 3)}  # each got a message at t=1


def test_internals_are_what_the_trace_does_not_say():
    engine, _ = run(4, 22, commands=at("20 crash 4", "20 elect 1"), algorithm="ring")
    inside = engine.internals(1)
    assert inside.up and set(inside.variables) == {"participant", "backing", "successor", "unacked"}
    assert inside.storage == {"incarnation": 1, "epoch": engine.hosts[1].epoch, "members": (1, 2, 3, 4)}
    down = engine.internals(4)
    assert (down.up, down.variables) == (False, {})  # lost in the crash; storage is not
    assert down.storage["incarnation"] == 1


# --- determinism ---------------------------------------------------------------------------


FAULTS = ("30 crash 8", "31 crash 7", "60 recover 8", "61 elect 2")


def transcript_bytes(*, driver: str = "trio", **kw) -> bytes:
    engine, events = (run_on_trio if driver == "trio" else run)(8, 150, JITTER, commands=at(*FAULTS), **kw)
    return recorded("classic", engine, events, JITTER)


def test_same_seed_gives_a_byte_identical_transcript():
    first = transcript_bytes(seed=5)
    assert all(transcript_bytes(seed=5) == first for _ in range(4))
    assert transcript_bytes(seed=6) != first


def test_lookahead_batching_does_not_change_the_trace():
    assert transcript_bytes(seed=5, lookahead=True) == transcript_bytes(seed=5, lookahead=False)


def test_running_a_crowded_instant_in_slices_does_not_change_the_trace(monkeypatch):
    """A slice of 65,536 / N work items normally; here of 16, so that every instant of
    the start-up and the election is cut into many slices."""
    whole = transcript_bytes(seed=5)
    monkeypatch.setattr(engine_module, "SLICE_EVENTS", 1)
    assert transcript_bytes(seed=5) == whole


@pytest.mark.parametrize("lookahead", [True, False])
def test_the_trio_cluster_and_the_plain_driver_give_the_same_trace(lookahead):
    assert transcript_bytes(seed=5, lookahead=lookahead, driver="sync") == transcript_bytes(seed=5, lookahead=lookahead)


@pytest.mark.parametrize("algorithm", [*ALGORITHMS, "classic+lamport", "garcia-molina+ricart-agrawala"])
@settings(max_examples=max(10, settings.default.max_examples // 6))  # (each example runs the trio cluster)
@given(case=cases())
def test_the_trio_cluster_and_the_plain_driver_agree_on_any_schedule(algorithm, case):
    """Why the tests of an algorithm's runs may take the plain driver (tests/support.run):
    on random schedules (crashes and recoveries in the middle of elections, random
    delays, T and probing), of every election and two locks under a busy workload, the
    trio cluster's transcript is the plain driver's, byte for byte."""
    workload = BUSY if "+" in algorithm else None
    until = case.last_fault + 40
    kw = {"seed": case.seed, "algorithm": algorithm, "workload": workload}
    on_trio = run_on_trio(case.nodes, until, case.config, case.faults, **kw)
    plain = run(case.nodes, until, case.config, case.faults, **kw)
    assert recorded(algorithm, *on_trio, case.config, workload) == recorded(algorithm, *plain, case.config, workload)


def test_worst_case_counts_do_not_depend_on_batching():
    _, events = run(10, 60, commands=at("20 crash 10", "20 elect 1"), lookahead=False)
    assert sends(events, after=20) == {"election": 45, "answer": 36, "coordinator": 9}


def test_a_copy_of_an_engine_runs_on_exactly_as_the_original():
    engine, events = make_engine(8, JITTER, at(*FAULTS), seed=5)
    run_sync(engine, 45)
    twin = engine.copy()
    theirs: list = []
    twin.subscribe(theirs.extend)
    cut = len(events)
    run_sync(engine, 150)
    run_sync(twin, 150)
    mine = [astuple(e) for e in events[cut:]]
    assert mine and [astuple(e) for e in theirs] == mine
    assert twin.hosts[1].machine is not engine.hosts[1].machine  # nothing shared but immutable messages


def test_the_parser_refuses_a_command_that_can_do_nothing_and_says_why():
    """Only commands crash and bring back nodes, so a crash of a down node, a recovery of
    an up one, an election or a leave at a down one are known to do nothing before the
    run: refused with the line's place and why (commands.Members)."""
    cases = {("5 crash 2", "6 crash 2"): "node 2 is down already",
             ("6 recover 2",): "node 2 is up: only a crashed node recovers",
             ("5 crash 2", "6 elect 2"): "node 2 is down: only an up node can start an election",
             ("5 crash 2", "6 leave 2"): "node 2 is down: only an up node can leave"}
    for lines, why in cases.items():
        with pytest.raises(InputError) as refused:
            at(*lines)
        assert str(refused.value) == f"--at '{lines[-1]}': at 6 s, {why}"
    assert [s.command.name for s in at("5 crash 2", "6 recover 2", "7 elect 2")] == ["crash", "recover", "elect"]
