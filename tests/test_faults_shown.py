"""What a run with the model's assumptions broken says of it (issue 33): the status line
names those broken now, and every report of a violation (the alert, the log, the
summary, the exports) what was broken when it began, and since when; the panel gives a
drifting node's clock rate."""

import json

from playground.cli import main
from playground.core.config import ClusterConfig
from playground.core.engine import run_sync
from playground.core.host import Internals
from playground.record.export import collect
from playground.run.state import ClusterState
from playground.ui.model import ClusterModel, NodeView
from playground.ui.node_panel import rows
from playground.ui.status_bar import Status, fit, parts
from tests.support import at, make_engine

SHORT_T = ClusterConfig(timeout=1, delay_min=1.5, delay_max=1.5)  # synchrony broken from the start


def folded(config: ClusterConfig, commands=(), until: float = 60, seed: int = 1) -> tuple[ClusterState, list]:
    engine, events = make_engine(5, config, commands, seed)
    run_sync(engine, until)
    state = ClusterState(engine.ids, config)
    state.apply(events)
    return state, events


def test_the_state_says_which_assumptions_are_broken_now_and_each_violation_what_was_then():
    config = ClusterConfig(delay_min=0.5, delay_max=1.5).with_faults(drift=0.2)
    state, _ = folded(config, at("10 lossy 5 1 1", "10 lossy 5 2 1", "10 lossy 5 3 1", "10 lossy 5 4 1",
                                 "40 lossy 5 1 0"), until=120)
    assert state.faults_broken == ("links lossy", "clocks drift")
    after = [e for e in state.episodes.all if e.began.t > 10]
    assert after and all(e.broken == "links lossy since t=10.00 · clocks drift since t=0.00" for e in after)
    moment = state.snapshot()
    later, _ = folded(config, at("10 lossy 5 1 1", "10 lossy 5 2 1", "10 lossy 5 3 1", "10 lossy 5 4 1",
                                 "40 lossy 5 1 0", "50 lossy 5 2 0", "50 lossy 5 3 0", "50 lossy 5 4 0"), until=120)
    assert later.faults_broken == ("clocks drift",)
    later.load(moment)
    assert later.faults_broken == ("links lossy", "clocks drift")


def test_the_log_and_the_summary_say_what_was_broken_when_a_violation_began(tmp_path, capsys):
    state, events = folded(SHORT_T, until=30)
    model = ClusterModel(state, None)
    model.add(events)
    began = [line.text for line in model.log if line.kind == "violation" and line.text.startswith("⚠")]
    assert began and all(text.endswith(" · synchrony broken since t=0.00") for text in began)
    path = str(tmp_path / "t.jsonl")
    assert main(["--headless", "--nodes", "5", "--timeout", "1", "--delay", "1.5", "--until", "30",
                 "--transcript", path]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["violations"] and all(v["broken"] == "synchrony broken since t=0.00" for v in summary["violations"])
    bands = collect(path).bands
    assert bands and all(b.text.endswith(" · synchrony broken since t=0.00") for b in bands)


def test_a_run_breaking_nothing_says_nothing_of_it(tmp_path, capsys):
    state, _ = folded(ClusterConfig(), at("20 crash 5"), until=40)
    assert state.faults_broken == () and all(e.broken == "" for e in state.episodes.all)
    assert main(["--headless", "--nodes", "5", "--until", "30", "--at", "10 crash 5"]) == 0
    assert '"broken"' not in capsys.readouterr().out


def test_the_status_line_names_the_broken_assumptions_and_keeps_them_when_narrow():
    status = Status(38.46, 1, False, None, ClusterConfig(), 3, False, 132, None,
                    faults=("links lossy", "links reorder", "clocks drift"))
    wide = fit(parts(status), 200).plain
    assert "│ T=4 ≥ 2×1.5 │ links lossy · links reorder · clocks drift │ δ 0.5–1.5 │" in wide
    narrow = fit(parts(status), 60).plain
    assert "lossy·reorder·drift" in narrow and len(narrow) <= 60
    assert "lossy" not in fit(parts(Status(38.46, 1, False, None, ClusterConfig(), 3, False, 132, None)), 200).plain


def test_the_panel_gives_a_drifting_nodes_clock_rate():
    node = NodeView(3, up=True)
    drifting = "\n".join(text for text, _ in rows(node, Internals(True, {}, {}, 1.0312), 0, {3: "3"}))
    assert "its clock runs at ×1.0312" in drifting
    assert "clock" not in "\n".join(text for text, _ in rows(node, Internals(True, {}, {}, 1.0), 0, {3: "3"}))
    engine, _ = make_engine(4, ClusterConfig().with_faults(drift=0.3), seed=2)
    assert {engine.internals(i).rate for i in engine.ids} == {engine.hosts[i].rate for i in engine.ids}
    assert len({engine.internals(i).rate for i in engine.ids}) == 4
