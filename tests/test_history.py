"""The history (playground/run/history.py): any instant of a session, shown again exactly,
from an index of its transcript and checkpoints, whatever the session's length."""

from contextlib import ExitStack

import pytest

from playground.core.command_lines import parse_at
from playground.core.config import ClusterConfig
from playground.core.engine import run_sync
from playground.record.reader import Reader
from playground.run import history as history_module
from playground.run.history import History
from playground.run.session import Session
from playground.run.state import ClusterState
from playground.run.wiring import start
from tests.support import at

CONFIG = ClusterConfig(timeout=4, probe_interval=2, delay_min=0.2, delay_max=1.5)
FAULTS = at("20 crash 6", "21 elect 2", "30 recover 6", "31 timeout 3", "40 crash 3", "55 recover 3")


def fresh_state(session: Session) -> ClusterState:
    return ClusterState(session.ids, session.config)


def recorded(tmp_path, until=90.0) -> tuple[Session, History]:
    """A session run with its history fed live, as the app does."""
    session = Session(nodes=6, config=CONFIG, commands=tuple(FAULTS), transcript=str(tmp_path / "t.jsonl"))
    with ExitStack() as files:
        engine, _, recorder = start(session, files, lookahead=False)
        history = History(session.transcript, session.header)
        recorder.index = history.offsets
        engine.subscribe(history.add)
        run_sync(engine, until)
    return session, history


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Checkpoints every 300 events, so that a short run has several."""
    monkeypatch.setattr(history_module, "CHECKPOINT", 300)


def test_the_index_made_while_recording_is_the_one_read_back(tmp_path):
    session, live = recorded(tmp_path)
    read = History.read(session.transcript)
    assert (list(live.offsets), list(live.starts), list(live.times), live.markers, live.count) == \
           (list(read.offsets), list(read.starts), list(read.times), read.markers, read.count)
    assert {"crash", "recover", "command", "election"} <= {m.kind for m in live.markers}


@pytest.mark.parametrize("where", [0, 0.3, 0.5, 0.77, 1.0])
def test_any_instant_shown_again_is_what_a_fold_from_the_start_gives(tmp_path, where):
    session, history = recorded(tmp_path)
    instant = min(history.instants - 1, int(where * history.instants))
    end = history.end_of(instant)
    expected = fresh_state(session)
    with Reader.open(session.transcript) as reader:
        expected.apply(events := [e for e in reader.events() if e.seq <= end])
    shown = fresh_state(session)
    recent = history.state_at(instant, shown, recent=500)
    assert shown.snapshot() == expected.snapshot()
    assert [e.seq for e in recent][-500:] == [e.seq for e in events][-500:]  # the last 500 at least, for a log


def test_markers_lead_from_instant_to_instant(tmp_path):
    _, history = recorded(tmp_path)
    before = max(i for i in range(history.instants) if history.times[i] < 20)
    crash = history.marker_near(before, +1)
    assert history.times[crash] == 20.0  # the command and the crash at t=20
    assert history.marker_near(crash, -1) <= before and history.times[history.marker_near(crash, -1)] < 20
    kinds = [m.kind for m in history.markers if m.t == 20.0]
    assert kinds == ["command", "crash"]


def test_a_moment_after_a_join_is_shown_again_from_any_checkpoint(tmp_path):
    """A transcript read back from a block after a join names the newcomer: the reader
    is told who had joined by then (it once said the node was none of the header's),
    and a checkpoint with the newcomer makes the model take it in."""
    path = tmp_path / "j.jsonl"
    session = Session("epoch-bully", 4, config=CONFIG, commands=tuple(parse_at(["10 join"], (1, 2, 3, 4))), transcript=str(path))
    with ExitStack() as files:
        engine, _, _ = start(session, files, lookahead=True)
        run_sync(engine, 2500)
    history = History.read(str(path))
    assert history.count > 3 * history_module.CHECKPOINT
    state = fresh_state(session)
    for instant in (history.instants - 1, 0, history.instants // 2, 3):
        history.state_at(instant, state)
        joined = history.times[instant] >= 10
        assert state.ids == (1, 2, 3, 4, 5) and (state.nodes[5].status != "not joined yet") == joined
