"""Transcript format v4: what is written, the round trip, streaming, older versions, and loading errors."""

import json
from pathlib import Path

import pytest
import trio

from playground.core.commands import Crash
from playground.core.config import ClusterConfig, InputError
from playground.record import transcript
from playground.record.reader import load, parse
from playground.record.recorder import Recorder, dump
from playground.record.verify import verify
from playground.run.cluster import Cluster
from playground.run.session import Session
from playground.run.wiring import run_headless
from tests.support import at, make_engine

SESSION = Session(nodes=5, seed=3, config=ClusterConfig(probe_interval=2), commands=tuple(at("20 crash 5", "30 recover 5")))


@pytest.fixture
def recorded(tmp_path):
    path = tmp_path / "run.jsonl"
    run_headless(Session(**{**SESSION.__dict__, "transcript": str(path)}), 60)
    return path


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_header_is_line_one(recorded):
    assert lines(recorded)[0] == {
        "format": "bully-transcript",
        "version": 4,
        "algorithm": "classic",
        "nodes": [1, 2, 3, 4, 5],
        "seed": 3,
        "config": {"timeout": 4.0, "coordinator_timeout": None, "probe_interval": 2.0, "delay_min": 0.5, "delay_max": 1.5,
                   "settle": None},
    }


def test_events_carry_seq_t_kind_and_the_fields_of_their_kind(recorded):
    events = lines(recorded)[1:]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(list(e)[:3] == ["seq", "t", "kind"] for e in events)
    required = {
        "send": {"src", "dst", "id", "msg"},
        "deliver": {"id", "src", "dst"},
        "drop": {"id", "src", "dst", "reason"},
        "state": {"node", "status", "leader", "role", "epoch"},
        "agreement": {"leader"},
        "crash": {"node"},
        "recover": {"node"},
        "timer": {"node", "name"},
        "command": {"command", "args"},
    }
    seen = {e["kind"] for e in events}
    assert set(required) <= seen
    for e in events:
        assert required.get(e["kind"], set()) <= set(e), e
    types = {e["msg"]["type"] for e in events if e["kind"] == "send"}
    assert types == {"election", "answer", "coordinator", "probe", "probe_reply"}


def test_what_a_node_did_carries_the_rule_that_made_it(recorded):
    """v4: a send, a timer set or cancelled, an election begun and a change of state name
    the rule that made them (the algorithm's own, or a shared module's "probing N"); a
    crash's "down" is the runtime's, and names none."""
    events = lines(recorded)[1:]
    ruled = [e for e in events if e["kind"] in ("send", "timer_set", "timer_cancel", "election_start", "state")]
    assert all("rule" in e for e in ruled) and not any("rule" in e for e in events if e not in ruled)
    rules = {e["rule"] for e in ruled}
    assert {"1", "2", "4", "5", "probing 1", "probing 2", "probing 3", "probing 4", None} <= rules
    assert {e["rule"] for e in events if e["kind"] == "send" and e["msg"]["type"] == "probe"} == {"probing 1"}
    downs = [e for e in events if e["kind"] == "state" and e["status"] == "down"]
    assert downs and all(e["rule"] is None for e in downs)
    assert all(e["rule"] is not None for e in ruled if e["kind"] != "state" or e["status"] != "down")


def test_round_trip_is_exact(recorded):
    loaded = load(str(recorded))
    assert loaded.header.algorithm == "classic" and loaded.header.config.probe_interval == 2
    assert dump(loaded) == recorded.read_bytes()


@pytest.mark.trio
async def test_the_transcript_is_on_disk_while_the_run_goes_on(tmp_path, autojump_clock):
    path = tmp_path / "live.jsonl"
    engine, _ = make_engine(4)
    cluster = Cluster(engine)
    with open(path, "wb", buffering=0) as out:  # (as Recorder.create opens it: what it writes is on disk)
        engine.subscribe(Recorder(out, transcript.Header("classic", [1, 2, 3, 4], 1, ClusterConfig())))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cluster.run)
            await trio.sleep(10)
            cluster.submit(Crash(4))
            await trio.sleep(1)
            on_disk = path.read_text().splitlines()  # the file is still open
            nursery.cancel_scope.cancel()
    assert json.loads(on_disk[-1])["kind"] in ("crash", "state", "agreement")
    assert "crash" in {e.kind for e in parse(path.read_bytes()).events[-4:]}


def test_an_existing_file_is_not_overwritten(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("my notes")
    with pytest.raises(InputError, match="already exists"):
        run_headless(Session(transcript=str(path)), 10)
    assert path.read_text() == "my notes"
    run_headless(Session(transcript=str(path), overwrite=True), 10)
    assert load(str(path)).header.nodes == list(range(1, 8))


# --- loading errors: one line naming the line and the field -----------------------------

# A version 1 header: v1 transcripts (no epochs, no violations) must still load.
HEADER = json.dumps({"format": "bully-transcript", "version": 1, "algorithm": "classic", "nodes": [1, 2, 3],
                     "seed": 1, "config": {"timeout": 4, "delay_min": 1, "delay_max": 1, "probe_interval": 0}})
SEND = '{"seq": 0, "t": 0.0, "kind": "send", "src": 1, "dst": 2, "id": 0, "msg": {"type": "election"}, "arrives": 1.0}'
DELIVER = '{"seq": 1, "t": 1.0, "kind": "deliver", "id": 0, "src": 1, "dst": 2}'
V4_HEADER = HEADER.replace('"version": 1', '"version": 4')


def doc(*lines: str, complete: bool = True) -> str:
    return "\n".join(lines) + ("\n" if complete else "")


def field(line: str, old: str, new: str) -> str:
    return line.replace(old, new)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "is empty"),
        (doc("{not json"), "line 1: not valid JSON"),
        (doc('{"format": "csv"}'), "line 1: field 'format'"),
        (doc(field(HEADER, '"version": 1', '"version": 5')), "line 1: field 'version': this program reads versions 1, 2, 3 and 4"),
        (doc(field(HEADER, "classic", "paxos")), 'line 1: field \'algorithm\': unknown algorithm "paxos"'),
        (doc(field(HEADER, '"seed": 1', '"seed": "one"')), "line 1: field 'seed': expected a whole number"),
        (doc(field(HEADER, '"timeout": 4', '"timeout": -4')), "line 1: field 'config'"),
        (doc(field(HEADER, "[1, 2, 3]", "[]")), "line 1: field 'nodes'"),
        (doc(HEADER, "[1, 2]"), "line 2: expected a JSON object"),
        (doc(HEADER, field(SEND, "send", "teleport")), 'line 2: field \'kind\': unknown event kind "teleport"'),
        (doc(HEADER, field(SEND, '"dst": 2', '"dst": "2"')), 'line 2: field \'dst\': expected int, got "2"'),
        (doc(HEADER, field(SEND, ', "id": 0', "")), "line 2: field 'id': required field missing"),
        (doc(HEADER, field(SEND, "election", "halt")), 'line 2: field \'msg\': unknown classic message type "halt"'),
        (doc(HEADER, field(SEND, '"seq": 0', '"seq": 5')), "line 2: field 'seq': expected 0, got 5"),
        (doc(HEADER, field(SEND, '"dst": 2', '"dst": 9')), "line 2: field 'dst': 9 is not one of the header's nodes"),
        (doc(HEADER, SEND, field(DELIVER, "1.0", "-1.0")), "line 3: field 't': -1 s is out of range"),
        (doc(HEADER, field(SEND, '"t": 0.0', '"t": 2.0'), DELIVER), "line 3: field 't': 1 is earlier than the line before"),
        (doc(HEADER, field(SEND, '}, "arrives"', '}, "rule": "1", "arrives"')),
         'line 2: field "rule": not a field of a send event in a version 3 transcript (version 4 added it)'),
        (doc(V4_HEADER, field(SEND, '}, "arrives"', '}, "rule": 1, "arrives"')), "line 2: field 'rule': expected string, got 1"),
        (doc(V4_HEADER, field(SEND, '}, "arrives"', '}, "rule": "central 1", "arrives"')),
         'line 2: field \'rule\': not a rule of this algorithm: "central 1"'),
        (doc(HEADER, SEND, DELIVER[:30], complete=False), "line 3: not valid JSON"),
        (doc(HEADER, SEND, DELIVER[:30], complete=False), "(the file ends mid-line: was the run killed?)"),
    ],
)
def test_malformed_transcripts_get_one_line_naming_line_and_field(text, expected):
    with pytest.raises(InputError) as info:
        parse(text.encode(), name="t.jsonl")
    message = str(info.value)
    assert expected in message and message.startswith("t.jsonl")
    assert "\n" not in message


def test_a_valid_hand_written_transcript_loads():
    loaded = parse(f"{HEADER}\n{SEND}\n{DELIVER}\n".encode())
    assert [e.kind for e in loaded.events] == ["send", "deliver"]
    assert loaded.events[0].msg.type == "election"


V2_HEADER = field(HEADER, '"version": 1', '"version": 2').replace('"algorithm": "classic"', '"algorithm": "garcia-molina"')
V2_LINES = [
    '{"seq": 0, "t": 0.0, "kind": "start", "node": 1}',
    '{"seq": 1, "t": 0.0, "kind": "state", "node": 1, "status": "down", "leader": null, "normal": false, "epoch": 1}',
    '{"seq": 2, "t": 1.0, "kind": "state", "node": 1, "status": "normal", "leader": 1, "normal": true, "epoch": 1}',
    '{"seq": 3, "t": 2.0, "kind": "crash", "node": 1}',
    '{"seq": 4, "t": 2.0, "kind": "state", "node": 1, "status": "down", "leader": null, "normal": false, "epoch": 1}',
    '{"seq": 5, "t": 3.0, "kind": "violation", "property": "sle1", "phase": "begin", "nodes": [2, 3], '
    '"detail": "normal nodes disagree", "duration": null}',
]


def test_an_older_version_is_upgraded_as_it_loads():
    """A v2 line gave `normal` where v3 gives the status's role, which for Garcia-Molina's
    "down" depends on whether the node is up (recovering) or crashed."""
    loaded = parse(doc(V2_HEADER, *V2_LINES).encode())
    roles = [e.role for e in loaded.events if e.kind == "state"]
    assert roles == ["waiting", "normal", "down"]
    [violation] = [e for e in loaded.events if e.kind == "violation"]
    assert (violation.nodes, violation.leaders) == ((2, 3), (None, None))
    assert loaded.header.version == 4  # dumped again, it is a v4 transcript
    assert parse(dump(loaded)).events == loaded.events


# Recorded by the commit before transcripts carried rules (40fff26): classic with a central
# lock, a crash, a join, a recovery and a leave.
V3_TRANSCRIPT = str(Path(__file__).parent / "transcripts" / "v3-classic-central.jsonl")


def test_a_v3_transcript_reads_with_no_rule_known_and_verifies():
    loaded = load(V3_TRANSCRIPT)
    kinds = {e.kind for e in loaded.events}
    assert {"send", "state", "cs", "timer_set", "join", "leave"} <= kinds
    assert all(getattr(e, "rule", None) is None for e in loaded.events)
    assert verify(V3_TRANSCRIPT) == len(loaded.events)


def test_an_unreadable_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"cannot read transcript .*nope.jsonl: No such file"):
        load(str(tmp_path / "nope.jsonl"))
