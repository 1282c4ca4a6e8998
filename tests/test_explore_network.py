"""The exhaustive hunt's network (run/explore.py rule 7, explore_steps.py rule 5,
explore_network.py): lossless FIFO links by default, as before; links that drop,
duplicate or reorder when asked, each fault bounded; a finding on such links written as
the user being the network (by-hand commands at their times), which verify re-creates
and a scenario runs again. Each search here is a few hundred to a few thousand states.
(tests/test_explore.py checks copy on write on such links too.)"""

from __future__ import annotations

import json
import re

import pytest

from playground.cli import main
from playground.core.config import ClusterConfig
from playground.core.monitor import SLE1
from playground.run.explore import Bounds, Explored, Model, _start, explore, steps_taken
from playground.run.explore_network import rerun
from playground.run.explore_steps import take

EDGE = ClusterConfig(timeout=4, delay_min=1, delay_max=2, probe_interval=0)
LOST_ELECTION = ["--algorithm", "classic", "--nodes", "2", "--faults", "0", "--elects", "1"]
LAMPORT = ["--algorithm", "classic", "--mutex", "lamport", "--nodes", "2", "--faults", "0", "--requests", "2"]


def hunt(capsys, *args: str) -> tuple[int, str]:
    code = main(["hunt", "--exhaustive", *args])
    out, err = capsys.readouterr()
    assert not err, err
    return code, out


def without_seconds(line: str) -> str:
    return re.sub(r"; [0-9.]+ s\)", ")", line)


def test_the_default_network_is_lossless_fifo_and_counts_as_before():
    """No faults named: the search as it was before the network model, counted then
    (classic, 3 nodes, one fault; Lamport's lock, 2 nodes, two requests): the same
    states, steps and finding."""
    found, explored = explore(Model("classic", 3, EDGE), None, Bounds(faults=1))
    assert (explored.states, explored.steps, explored.deepest, explored.bound) == (10_913, 17_975, 10, None)
    assert found.steps[-3:] == ("fire 2 answer_wait", "at 7", "deliver 2 1")
    found, explored = explore(Model("classic+lamport", 2, EDGE), None, Bounds(faults=0, requests=2))
    assert found is None and (explored.states, explored.steps) == (707, 1_404)


def test_network_fifo_is_the_default_search(tmp_path, capsys):
    base = str(tmp_path / "f")
    default = hunt(capsys, *LOST_ELECTION, "-o", base)
    fifo = hunt(capsys, *LOST_ELECTION, "--network", "fifo", "-o", base)
    assert default[0] == fifo[0] == 0
    assert without_seconds(default[1]) == without_seconds(fifo[1])
    assert "no counterexample in 139 states" in fifo[1] and "links" not in fifo[1]


def test_a_lost_election_makes_two_coordinators_and_the_finding_verifies(tmp_path, capsys):
    """Classic, 2 nodes, one `elect`: safe on lossless links (above), broken once the
    links may drop one message. The finding is a scenario of by-hand commands and a
    transcript that verify re-creates; the scenario, run again, gives its events."""
    base = tmp_path / "lost"
    code, out = hunt(capsys, *LOST_ELECTION, "--network", "drop", "-o", str(base))
    assert code == 1
    assert out.startswith("SLE1 broken: 2 nodes, 8 steps after the start, none shorter")
    assert "links drop (at most 1)" in out and f"bully-tui --scenario {base}.scenario" in out
    scenario = (tmp_path / "lost.scenario").read_text()
    lines = [line for line in scenario.splitlines() if line and not line.startswith(("#", "set "))]
    assert lines[0] == "0 by-hand"
    assert [line.split("  #")[0] for line in lines if " drop " in line] == ["2 drop 4"]
    assert "# 1→2 Election e3" in scenario and "set until 7" in scenario
    transcript = tmp_path / "lost.jsonl"
    header = json.loads(transcript.read_text().splitlines()[0])
    assert "by_hand" not in header  # (a run its commands re-create, not one stepped by the search)
    assert main(["verify", str(transcript)]) == 0
    assert "identical" in capsys.readouterr().out
    again = tmp_path / "again.jsonl"
    assert main(["--headless", "--scenario", str(tmp_path / "lost.scenario"), "--transcript", str(again)]) == 0
    capsys.readouterr()
    assert again.read_text().splitlines()[1:] == transcript.read_text().splitlines()[1:]


def test_reordering_breaks_lamports_lock_which_fifo_links_keep_safe(tmp_path, capsys):
    """Lamport's mutual exclusion assumes FIFO links: a Reply that overtakes its
    sender's Request lets the receiver in while the sender holds the lock."""
    assert hunt(capsys, *LAMPORT, "-o", str(tmp_path / "fifo"))[0] == 0
    code, out = hunt(capsys, *LAMPORT, "--network", "reorder", "-o", str(tmp_path / "reorder"))
    assert code == 1 and out.startswith("mutual exclusion broken: 2 nodes, 11 steps")
    scenario = (tmp_path / "reorder.scenario").read_text()
    request, reply = scenario.index("1→2 Request(ts=1)"), scenario.index("1→2 Reply(ts=3)")
    assert reply < request  # (the Reply, sent after the Request, arrives first)
    assert main(["verify", str(tmp_path / "reorder.jsonl")]) == 0
    capsys.readouterr()


def test_a_copy_is_delivered_as_the_message_it_copies():
    """`duplicate ID` puts a copy at the tail of the message's link; each arrives as
    message ID (the by-hand command's words), and then the link is empty."""
    m = Model("classic", 3, EDGE, timed=False, network=frozenset({"duplicate"}))
    search, state, _ = _start(m, None, Bounds(faults=0), Explored())
    (src, dst), queue = next(iter(state.flight.items()))
    key, number, _ = queue[-1]
    copied, own, _, _ = take(search, state, ("duplicate", src, dst, len(queue) - 1))
    assert own[0] == f"duplicate {key}" and state.flight[(src, dst)] == queue  # (the state stepped from: as it was)
    assert [(k < 0, n) for k, n, _ in copied.flight[(src, dst)][-2:]] == [(False, number), (True, number)]
    delivered = []
    for _ in range(len(queue) + 1):
        copied, own, _, _ = take(search, copied, ("deliver", src, dst, 0, None))
        delivered.append(own[0])
    assert delivered[-2:] == [f"deliver {key}"] * 2 and (src, dst) not in copied.flight


def test_each_fault_is_bounded_and_widens_the_search():
    """Classic, 2 nodes, one elect: every run to its end whatever the links may do (the
    bounds keep it finite), in more states than on lossless FIFO links; a second drop
    allowed makes a shorter finding (both messages of the start lost)."""
    def search(network: str, **bounds):
        m = Model("classic", 2, EDGE, network=frozenset(network.split(",")) - {""})
        return explore(m, None, Bounds(faults=0, elects=1, **bounds))

    fifo, reorder, duplicate = (search(network)[1] for network in ("", "reorder", "duplicate"))
    assert fifo.states == 139 and None is fifo.bound is reorder.bound is duplicate.bound
    assert fifo.states < reorder.states and fifo.states < duplicate.states
    one, two = search("drop")[0], search("drop", drops=2)[0]
    assert steps_taken(one.steps) == 8 and one.steps.count("drop 4") == 1
    assert steps_taken(two.steps) == 4 and two.steps[:2] == ("drop 0", "drop 1")


def test_a_faulty_search_gives_the_same_finding_and_counts_every_time():
    m = Model("classic", 2, EDGE, network=frozenset({"drop", "reorder"}))
    first, again = (explore(m, None, Bounds(faults=0, elects=1)) for _ in range(2))
    assert first == again and first[0] is not None


def test_the_re_run_of_a_finding_breaks_what_the_search_found(tmp_path):
    """Asynchronous too: each step a millisecond apart, as the search took them."""
    m = Model("classic", 3, EDGE, timed=False, network=frozenset({"drop"}))
    found, _ = explore(m, SLE1, Bounds(faults=0))
    run = rerun(m, found)
    assert [line for _, line in run.lines] == ["by-hand", "fire 1 answer_wait"] and run.until == 0.002
    assert steps_taken(found.steps) == 1


@pytest.mark.parametrize(("args", "error"), [
    (["--network", "bogus"], "unknown --network 'bogus' (choose from: fifo, drop, duplicate, reorder)"),
    (["--network", "fifo,drop"], "--network 'fifo,drop': fifo is lossless FIFO links, which do not drop"),
    (["--network", "drop,"], "--network must be a comma-separated list, not 'drop,'"),
    (["--drops", "1"], "--drops only applies with --network drop"),
    (["--network", "drop", "--drops", "-1"], "--drops must be from 1 to 10, not -1"),
    (["--network", "drop", "--drops", "0"], "--drops must be from 1 to 10, not 0"),
    (["--network", "reorder", "--duplicates", "2"], "--duplicates only applies with --network duplicate"),
])
def test_bad_network_arguments_are_one_line(capsys, tmp_path, args, error):
    assert main(["hunt", "--exhaustive", "-o", str(tmp_path / "x"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bully-tui: error: ") and error in err, err
    assert not list(tmp_path.iterdir())


def test_network_needs_the_exhaustive_search(capsys):
    assert main(["hunt", "--network", "drop"]) == 2
    assert capsys.readouterr().err == "bully-tui: error: --network only applies to --exhaustive\n"

