"""Issue 17, "A campaign of our own": the generated hostile-input campaign of
tests/campaign/, run against this checkout as real processes, in shards.

Every case must hold its expectation (refuse, accept, different, write-error, signal or
help, as the package's docstring says); a case that does not falls in a failure class
(traceback, hang, silent, misleading, misrefused, partial, setup), and the test fails
with a table of those cases: class, name, argv, why, and the first 200 characters of
stderr. The suite runs a seeded sample of the campaign (`campaign.suite_sample`: every
case with a signal, a terminal, a standard output full or closed or a file-size limit,
and a third of the others, at least one of each operator in each group and expectation);
`python -m tests.campaign --report` runs every case from the command line (`--sample`:
the suite's).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pty
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from tests import campaign


def test_the_campaign_is_generated_deterministic_and_covers_every_subcommand():
    cases = campaign.build_cases(campaign.DEFAULT_SEED)
    again = campaign.build_cases(campaign.DEFAULT_SEED)
    other = campaign.build_cases(campaign.DEFAULT_SEED + 1)
    assert len(cases) >= 300
    assert [(c.name, c.argv, c.expect) for c in cases] == [(c.name, c.argv, c.expect) for c in again]
    assert [(c.name, c.argv) for c in cases] != [(c.name, c.argv) for c in other]
    assert len({c.name for c in cases}) == len(cases)
    groups = Counter(c.group for c in cases)
    assert set(groups) == set(campaign.GROUPS), groups
    expectations = Counter(c.expect for c in cases)
    assert {campaign.REFUSE, campaign.ACCEPT, campaign.EITHER, campaign.DIFFERENT, campaign.WRITE_ERROR,
            campaign.SIGNAL, campaign.HELP} <= set(expectations), expectations
    signals = [c for c in cases if c.signal is not None]
    assert len(signals) >= 40
    assert {c.signal.signum for c in signals} == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL}
    assert any(c.signal.again_ms for c in signals)
    assert any(c.fsize for c in cases) and any(c.stdout_full for c in cases)


def test_the_suites_sample_is_seeded_and_meets_every_group_expectation_operator_and_signal():
    """What the suite leaves out is only plain cases of an operator it runs some of: every
    group, expectation and operator of the campaign is in the sample, and every case with a
    signal (each signal, moment and kind of process), a terminal, a full or closed standard
    output or a file-size limit."""
    cases = campaign.build_cases(campaign.DEFAULT_SEED)
    sample = campaign.suite_sample(cases)
    assert [c.index for c in sample] == [c.index for c in campaign.suite_sample(campaign.build_cases(
        campaign.DEFAULT_SEED))]
    assert [c.index for c in sample] == sorted(c.index for c in sample)
    assert len(sample) <= len(cases) * 0.6, (len(sample), len(cases))
    kinds = Counter((c.group, c.expect, campaign.build.operator(c)) for c in cases)
    assert set(kinds) == {(c.group, c.expect, campaign.build.operator(c)) for c in sample}
    assert {c.index for c in cases if campaign.always_in_the_suite(c)} <= {c.index for c in sample}
    assert {c.group for c in sample} == set(campaign.GROUPS)
    assert {c.signal.signum for c in sample if c.signal} == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                                                              signal.SIGKILL}


# The campaign runs as shards, so that the suite's processes (pytest-xdist) share it out
# with the other tests; the shards of one process share the setup transcripts.
SHARDS = 8


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> campaign.Bases:
    """The setup transcripts: made once for the suite's run. Under pytest-xdist, in the
    folder its processes share (their base folders' parent, this run's own), the first
    process to want one makes it for both (Bases takes turns by a lock)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return campaign.Bases(campaign.REPO, tmp_path_factory.getbasetemp().parent / "campaign-bases")
    return campaign.Bases(campaign.REPO, tmp_path_factory.mktemp("campaign-bases"))


@pytest.fixture(scope="module")
def forks() -> campaign.ForkServer | None:
    """One fork server for the tests of one process (its imports cost a second of CPU); it
    ends when it is asked to (its standard input closed), and well."""
    if not campaign.FORK:
        yield None
        return
    server = campaign.ForkServer(campaign.REPO, campaign.spawn_env(campaign.REPO, Path(tempfile.gettempdir())))
    try:
        yield server
    finally:
        server.close()
    assert server.process.returncode == 0


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_case_of_the_campaign_falls_in_a_failure_class(shard, bases, forks):
    """The suite's sample of the campaign (the module's docstring), a shard at a time."""
    cases = [c for c in campaign.suite_sample(campaign.build_cases(campaign.DEFAULT_SEED)) if c.index % SHARDS == shard]
    # Two cases at a time, under pytest-xdist too: much of a case is waiting (for its
    # signal's moment, for real nodes), and a case's limit counts its CPU, not the clock.
    workers = campaign.WORKERS
    results, seconds, setup = campaign.run_campaign(cases, root=campaign.REPO, workers=workers, bases=bases,
                                                    forks=forks)
    report = campaign.summary(results, seconds, setup)
    print(report)
    failing = [r for r in results if r.failure]
    if failing:
        pytest.fail(f"{len(failing)} of {len(results)} cases fall in a failure class\n{report}\n\n"
                    f"{campaign.failure_table(failing, stderr_chars=200)}", pytrace=False)


def test_a_case_hangs_by_the_cpu_it_uses_or_a_long_wait_not_by_a_busy_machine():
    """A slow case on a busy machine is not a hang: the limit counts its processes' CPU
    (a loop), and the clock only at several times the limit (a wait for what never comes)."""
    import subprocess
    import sys
    import time

    from tests.campaign.spawn import WALL_TIMES, cpu_seconds, over

    sleeping = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        while cpu_seconds(busy.pid) < 0.3:  # (its progress, however loaded the machine)
            time.sleep(0.05)
        assert over(busy.pid, time.monotonic(), limit=0.2)  # a loop: past its CPU, whatever the clock
        assert not over(sleeping.pid, time.monotonic(), limit=10)  # waiting, well within its time
        assert over(sleeping.pid, time.monotonic() - WALL_TIMES * 10 - 1, limit=10)  # ... and past it
        assert cpu_seconds(sleeping.pid) < 0.3 <= cpu_seconds(busy.pid)
    finally:
        busy.kill(), sleeping.kill()
        busy.wait(), sleeping.wait()


def test_a_forked_case_ends_as_a_spawned_one(tmp_path, forks):
    """The fork server (tests/campaign/forkserver.py) starts the cases whose start-up is not
    under test: each must end as the same command spawned does, its status, its words, its
    files; a signal after its first file as well (but for the moment its line names, and
    the length of the transcript it cut), and one it ignores from the start (none came)."""
    from tests.campaign.forkserver import ForkServer, child_limits
    from tests.campaign.spawn import spawn, spawn_env

    run = ["--headless", "--nodes", "3", "--until", "5"]
    long_run = ["--headless", "--algorithm", "stoller", "--nodes", "12", "--until", "100000", "--transcript", "t.jsonl"]
    commands = [  # (argv, stdout /dev/full too: where it writes to it, signal)
        (["--nodes", "0"], False, None), (["verify", "missing.jsonl"], False, None), (["--help"], True, None),
        (["hunt", "--budget", "x"], False, None), ([*run, "--transcript", "t.jsonl"], True, None), (run, False, None),
        (long_run, False, campaign.SignalPlan(signal.SIGTERM, 0.1, after_file=True)),
        (["--headless", "--algorithm", "stoller", "--nodes", "12", "--until", "60"], False,
         campaign.SignalPlan(signal.SIGHUP, 0.05, again_ms=50, ignored=True, after_start=True))]
    server = forks or ForkServer(campaign.REPO, spawn_env(campaign.REPO, tmp_path))  # (the campaign's, or one)
    try:
        for i, (argv, full_too, plan) in enumerate(commands):
            for full in (False, True) if full_too else (False,):
                ended = {}
                for how, starter in (("spawned", None), ("forked", server)):
                    cwd, tmp = tmp_path / f"{i}-{full}-{how}", tmp_path / f"{i}-{full}-{how}.tmp"
                    cwd.mkdir(), tmp.mkdir()
                    p = spawn(argv, cwd, tmp, campaign.REPO, limit=30, stdout_full=full, forks=starter, plan=plan)
                    if plan is not None:
                        assert p.after_signal is not None, (argv, how)  # (it was signalled before it ended)
                    cut = plan is not None and not plan.ignored
                    transcript = (cwd / "t.jsonl").read_bytes() if (cwd / "t.jsonl").exists() else None
                    ended[how] = (p.returncode, p.stdout, re.sub(rb"t=[0-9.]+", b"t=...", p.stderr) if cut else p.stderr,
                                  sorted(f.name for f in cwd.iterdir()),
                                  transcript.endswith(b"\n") if cut and transcript else transcript)
                assert ended["forked"] == ended["spawned"], (argv, full)
        # its standard streams are those Python's start-up makes: into pipes and files, and
        # in a terminal (a live view's), where its stdout is buffered by lines, and none
        # where the standard output is closed (`>&-`)
        for where in ("pipes", "a terminal", "a closed stdout"):
            reports = {}
            for how in ("spawned", "forked"):
                report = tmp_path / f"{where[-4:]}-{how}.json"
                with contextlib.ExitStack() as opened:
                    if where == "a terminal":
                        master, slave = pty.openpty()
                        opened.callback(os.close, master), opened.callback(os.close, slave)
                        streams = {"stdin": slave, "stdout": slave, "stderr": slave}
                    elif where == "a closed stdout":
                        streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
                    else:
                        out = opened.enter_context(open(os.devnull, "wb"))
                        streams = {"stdin": subprocess.DEVNULL, "stdout": out, "stderr": subprocess.PIPE}
                    if how == "spawned":  # (as spawn.py starts a case)
                        subprocess.run([sys.executable, "-m", "tests.campaign.stdio_probe", str(report)], **streams,
                                       env=spawn_env(campaign.REPO, tmp_path), cwd=tmp_path, check=True, timeout=60,
                                       preexec_fn=functools.partial(child_limits, None,
                                                                    where == "a closed stdout"))
                    else:
                        server.spawn("tests.campaign.stdio_probe", [str(report)], tmp_path, spawn_env(
                            campaign.REPO, tmp_path), None, streams["stdout"], streams["stderr"],
                            stdin=slave if where == "a terminal" else None).communicate(timeout=60)
                reports[how] = json.loads(report.read_text())
            assert reports["forked"] == reports["spawned"], where
        assert server.cpu > 0
    finally:
        if server is not forks:
            server.close()


# Python's own report, word for word, of a Ctrl-C that came while `site` ran the editable
# install's .pth line (a campaign case at 0.06 s): it goes on, and the run starts as if
# none had come (the case hung, its run never-ending).
SITE_LINES = (
    "Error processing line 1 of /v/lib/python3.11/site-packages/__editable__.bully_tui-0.1.0.pth:", "",
    "  Traceback (most recent call last):",
    '    File "/p/lib/python3.11/functools.py", line 972, in __set_name__',
    "      def __set_name__(self, owner, name):", "      ",
    "  KeyboardInterrupt", "  ",
    "  The above exception was the direct cause of the following exception:", "  ",
    "  Traceback (most recent call last):",
    '    File "<frozen site>", line 186, in addpackage',
    '    File "<string>", line 1, in <module>',
    '    File "/v/lib/python3.11/site-packages/__editable___bully_tui_0_1_0_finder.py", line 7, in <module>',
    "      from pathlib import Path",
    "  RuntimeError: Error calling __set_name__ on 'cached_property' instance 'broadcast_address' in '_BaseNetwork'",
    "", "Remainder of file ignored", "")
SITE_REPORT = "\n".join(SITE_LINES)


def test_a_ctrl_c_lost_while_python_reads_a_pth_file_is_pressed_again():
    """The campaign (spawn._lost) and the signal tests press Ctrl-C again when Python lost
    the first in its start-up; `site`'s report of a .pth line it could not run is such a
    loss, and what follows it is judged as bully-tui's."""
    from tests import signals_support

    ours = "bully-tui: interrupted at t=1.000 s; the transcript so far is in t.jsonl\n"
    assert signals_support.lost_by_python(SITE_REPORT + ours) == (True, ours)
    assert not signals_support.lost_by_python(ours)[0]
    mine = SITE_REPORT.replace("<frozen site>", "/w/playground/cli/entry.py")  # (our code ran: not Python's loss)
    assert not signals_support.lost_by_python(mine + ours)[0]
    cut = SITE_REPORT.replace("  KeyboardInterrupt\n", "  ValueError\n")  # (no Ctrl-C in it)
    assert not signals_support.lost_by_python(cut + ours)[0]
