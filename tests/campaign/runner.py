"""One run of the cases against one checkout (`Campaign`, `run_campaign`): the setup
transcripts made once (`Bases`), each case's files made in a fresh folder, its process
spawned, waited for, judged, and the folder removed."""

from __future__ import annotations

import fcntl
import os
import random
import resource
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import ACCEPT, BIG_LIMIT, DIRECTORY, EITHER, FIFO, Base, Case, Derived
from .forkserver import Forked, ForkServer
from .judge import judge, snapshot
from .spawn import Measured, kill_group, nodes_by_hand, spawn, spawn_env, spawn_in_terminal
from .transcripts import BASES, MUTATIONS, Lines

REPO = Path(__file__).resolve().parents[2]


WORKERS = 2
KILL_GRACE = 3.0  # seconds to wait for what a killed run left to be mended (the product's guardian)
# The plain cases are forked by a server that has done Python's start-up and the first
# imports (forkserver.py); BULLY_CAMPAIGN_SPAWN=1 spawns every case, as a user starts it.
FORK = os.environ.get("BULLY_CAMPAIGN_SPAWN") != "1"
REPLAY_FIRST_BLOCK = 513  # replay reads this many lines before anything else: a bad line there is named


@dataclass
class Result:
    case: Case
    outcome: str
    problems: list[tuple[str, str]]
    returncode: int | None = None
    stderr: str = ""
    seconds: float = 0.0
    cpu: float = 0.0  # seconds of CPU its processes took (the case's, a verify after it, attach's nodes)

    @property
    def failure(self) -> str | None:
        return self.problems[0][0] if self.problems else None


class Bases:
    """The setup transcripts, recorded by the checkout under test: each made once, by the
    first run of cases that needs it, and kept for every later run that shares this
    object (the suite's shards of the campaign in one process share one), or this folder:
    processes that share it (the suite's, under pytest-xdist) take turns, by a lock a
    transcript, and the first to want one makes it for all."""

    def __init__(self, root: Path, folder: Path):
        self.root = root
        self.folder = folder
        self.made: dict[str, Path] = {}
        self.errors: dict[str, str] = {}
        self.cpu: dict[str, float] = {}  # seconds of CPU each took to record (those this process made)
        self._lock = threading.Lock()
        self._parsed: dict[str, Lines] = {}

    def make(self, keys: set[str], pool: ThreadPoolExecutor, forks: ForkServer | None = None) -> None:
        """`forks`: the fork server that starts them (a plain run), or None: each is spawned."""
        with self._lock:
            wanted = sorted(keys - set(self.made) - set(self.errors), key=lambda k: k != "big")
            self.folder.mkdir(parents=True, exist_ok=True)
            list(pool.map(lambda key: self._make(key, forks), wanted))

    def _make(self, key: str, forks: ForkServer | None) -> None:
        made, failed = self.folder / f"{key}.jsonl", self.folder / f"{key}.error"
        with open(self.folder / f"{key}.lock", "wb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # (released as it closes, or as its process ends)
            if not made.exists() and not failed.exists():
                self._record(key, made, failed, forks)
        if made.exists():
            self.made[key] = made
        else:
            self.errors[key] = failed.read_text()

    def _record(self, key: str, made: Path, failed: Path, forks: ForkServer | None) -> None:
        work = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=self.folder))
        cwd, tmp = work / "cwd", work / "tmp"
        cwd.mkdir(), tmp.mkdir()
        proc = spawn([*BASES[key], "--transcript", "t.jsonl"], cwd, tmp, self.root, limit=60, forks=forks)
        self.cpu[key] = proc.cpu or 0.0
        path = cwd / "t.jsonl"
        if proc.returncode != 0 or not path.exists():
            failed.write_text(f"`{' '.join(BASES[key][:6])} ...` exit {proc.returncode}: "
                              f"{proc.stderr.decode('utf-8', 'replace').strip()[-200:]}")
        else:
            path.replace(made)
        shutil.rmtree(work, ignore_errors=True)

    def lines(self, key: str) -> Lines:
        with self._lock:
            if key not in self._parsed:
                self._parsed[key] = Lines(self.made[key].read_bytes())
            return self._parsed[key]

    def missing(self, key: str) -> str | None:
        """Why the transcript `key` is not there (None: it is)."""
        return None if key in self.made else f"setup transcript {key!r}: {self.errors.get(key, 'not made')}"


class Campaign:
    """One run of the cases against one checkout: its work folder, and the setup
    transcripts (its own, or `bases` shared with other runs)."""

    def __init__(self, root: Path, workers: int = WORKERS, keep: bool = False, bases: Bases | None = None,
                 forks: ForkServer | None = None):
        """`forks`: a fork server of the same checkout shared with other runs (their owner
        closes it), or None: this run's own, started by its first plain case."""
        self.root = Path(root).resolve()
        self.workers = workers
        self.keep = keep
        self.work = Path(tempfile.mkdtemp(prefix="bully-campaign-"))
        self.bases = bases or Bases(self.root, self.work / "bases")
        self.cpu = 0.0  # seconds of CPU the processes took
        self._forks: ForkServer | None = forks
        self._own_forks = forks is None
        self._forks_lock = threading.Lock()

    @property
    def forks(self) -> ForkServer | None:
        """The fork server of the plain cases (forkserver.py), started by the first;
        None where every case is spawned (FORK)."""
        if not FORK:
            return None
        with self._forks_lock:
            if self._forks is None:
                self._forks = ForkServer(self.root, spawn_env(self.root, self.work))
            return self._forks

    def close(self) -> None:
        if self._forks is not None and self._own_forks:
            self._forks.close()
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    def derive(self, spec: Derived) -> tuple[bytes, int | None]:
        """The mutated transcript, and the line it spoiled. If its base has no line the
        mutation needs, the classic base (which has every kind of line) is used."""
        for key in (spec.base, "classic"):
            if why := self.bases.missing(key):
                raise LookupError(why)
            made = MUTATIONS[spec.op](self.bases.lines(key), random.Random(spec.seed), *spec.params)
            if made is not None:
                return made
        raise LookupError(f"no line for mutation {spec.op!r} in the setup transcripts")

    def run_case(self, case: Case) -> Result:
        if case.terminal:
            return self._run_in_terminal(case)
        folder = Path(tempfile.mkdtemp(prefix=f"{case.index:03d}-", dir=self.work))
        cwd, tmp = folder / "cwd", folder / "tmp"
        cwd.mkdir(), tmp.mkdir()
        try:
            try:
                line = self._make_files(case, cwd)
            except LookupError as e:
                return Result(case, "setup", [("setup", str(e))])
            names = _resolve(case, line)
            before = snapshot(cwd)
            proc = spawn(case.argv, cwd, tmp, self.root, limit=case.limit, plan=case.signal, fsize=case.fsize,
                         stdout_full=case.stdout_full, stdout_closed=case.stdout_closed,
                         forks=self.forks)
            if case.signal is not None:
                self._wait_mended(case, cwd, tmp)
            outcome, problems = judge(case, proc, names, cwd, tmp, before)
            cpu = [proc.cpu or 0.0]
            if case.verify_after and not problems:
                problems += self._verify_left(case, cwd, tmp, cpu)
            err = proc.stderr.decode("utf-8", "replace")
            return Result(case, outcome, problems, proc.returncode, err, proc.seconds, sum(cpu))
        finally:
            if not self.keep:
                shutil.rmtree(folder, ignore_errors=True)

    def _make_files(self, case: Case, cwd: Path) -> int | None:
        line = None
        for name, content in case.files.items():
            path = cwd / name
            if content is DIRECTORY:
                path.mkdir()
            elif content is FIFO:
                os.mkfifo(path)
            elif isinstance(content, Base):
                if why := self.bases.missing(content.key):
                    raise LookupError(why)
                shutil.copyfile(self.bases.made[content.key], path)
            elif isinstance(content, Derived):
                data, line = self.derive(content)
                path.write_bytes(data)
            else:
                path.write_bytes(content)
        return line

    def _wait_mended(self, case: Case, cwd: Path, tmp: Path) -> None:
        """After a signal, give the product's guardian KILL_GRACE seconds to end each file
        at a whole line and to empty TMPDIR."""
        deadline = time.monotonic() + KILL_GRACE
        while time.monotonic() < deadline:
            done = not os.listdir(tmp) and not any(name.startswith(".bully-") for name in os.listdir(cwd))
            for name in case.outputs:
                path = cwd / name
                if path.is_file() and path.stat().st_size:
                    with open(path, "rb") as f:
                        f.seek(-1, os.SEEK_END)
                        done = done and f.read(1) == b"\n"
            if done:
                return
            time.sleep(0.05)

    def _verify_left(self, case: Case, cwd: Path, tmp: Path, cpu: list[float]) -> list[tuple[str, str]]:
        """A transcript cut by a signal is still the beginning of its run: verify says so
        (the CPU it took appended to `cpu`)."""
        for name, kind in case.outputs.items():
            path = cwd / name
            if kind != "transcript" or not path.is_file() or path.read_bytes().count(b"\n") < 2:
                continue  # none, or only a header
            proc = spawn(["verify", name], cwd, tmp, self.root, limit=BIG_LIMIT, forks=self.forks)
            cpu.append(proc.cpu or 0.0)
            if proc.returncode != 0:
                first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
                said = first[0][:150] if first else ""
                return [("partial", f"verify on what the signal left: exit {proc.returncode}: {said}")]
        return []

    def _run_in_terminal(self, case: Case) -> Result:
        """A case of the live views: in a terminal (spawn_in_terminal), beside the real nodes
        it watches (`beside`, started by hand and stopped after), judged as any other."""
        folder = Path(tempfile.mkdtemp(prefix=f"{case.index:03d}-", dir=self.work))
        cwd, tmp, elsewhere = folder / "cwd", folder / "tmp", folder / "beside"
        for made in (cwd, tmp, elsewhere):
            made.mkdir()
        nodes: list[Measured | Forked] = []
        try:
            argv = case.argv
            if case.beside:
                nodes, where = nodes_by_hand(case.beside, elsewhere, self.root, self.forks)
                argv = [a.replace("{nodes}", where) for a in argv]
            before = snapshot(cwd)
            proc = spawn_in_terminal(argv, cwd, tmp, self.root, limit=case.limit, plan=case.signal,
                                     forks=self.forks if case.signal is not None else None)
            self._wait_mended(case, cwd, tmp)
            outcome, problems = judge(case, proc, _resolve(case, None), cwd, tmp, before)
            if case.signal is not None and outcome == ACCEPT:  # (a live view does not end by itself: 0 is silence)
                problems.append(("silent", f"exit 0 after {signal.Signals(case.signal.signum).name}"))
            if nodes and any(p.poll() is not None for p in nodes):
                problems.append(("partial", "a node it watched ended with it (attach only watches)"))
            result = Result(case, outcome, problems, proc.returncode, proc.stderr.decode("utf-8", "replace"),
                            proc.seconds, proc.cpu or 0.0)
        except LookupError as e:
            return Result(case, "setup", [("setup", str(e))])
        finally:
            for p in nodes:
                kill_group(p)
                p.wait()
            if not self.keep:
                shutil.rmtree(folder, ignore_errors=True)
        result.cpu += sum(p.cpu or 0.0 for p in nodes)
        return result

    def run(self, cases: list[Case],
            progress: Callable[[Result], None] | None = None) -> tuple[list[Result], float, float]:
        """Every case, `workers` at a time, the longest first; results in the cases' order.
        Also notes the CPU time the processes took (`self.cpu`): on a busy machine the wall
        time says little, and the CPU time divided by the cores is what it would be idle."""
        start = time.monotonic()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        forked_before = self._forks.cpu if self._forks is not None else 0.0  # (a shared server's, before this run)
        keys = {c.key for case in cases for c in case.files.values() if isinstance(c, (Base,))}
        keys |= {c.base for case in cases for c in case.files.values() if isinstance(c, Derived)}
        if any(isinstance(c, Derived) for case in cases for c in case.files.values()):
            keys.add("classic")
        with ThreadPoolExecutor(self.workers) as pool:
            self.bases.make(keys, pool, self.forks if keys else None)  # (no server for a run that needs none)
            setup = time.monotonic() - start

            def one(case: Case) -> Result:
                result = self.run_case(case)
                if progress:
                    progress(result)
                return result

            order = sorted(cases, key=_expected_cost, reverse=True)
            results = {r.case.index: r for r in pool.map(one, order)}
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        forked = (self._forks.cpu if self._forks is not None else 0.0) - forked_before
        self.cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime + forked
        return [results[case.index] for case in cases], time.monotonic() - start, setup


def _expected_cost(case: Case) -> float:
    if case.signal is not None:
        return 10 + case.signal.delay
    if case.group in ("live", "replay"):
        return 5
    return 1 if case.expect in (ACCEPT, EITHER) else 0


def _resolve(case: Case, line: int | None) -> Any:
    """`names` with the line the mutation spoiled filled in ("line {line}")."""
    def one(name: str) -> str | None:
        replay_only = name.endswith("?replay")
        name = name.removesuffix("?replay")
        if "{line}" in name and (line is None or replay_only and line > REPLAY_FIRST_BLOCK):
            return None
        return name.replace("{line}", str(line))
    if case.names is None:
        return None
    wanted = [n for n in map(one, (case.names,) if isinstance(case.names, str) else case.names) if n]
    return tuple(wanted) or None


def run_campaign(cases: list[Case], root: Path = REPO, workers: int = WORKERS, keep: bool = False,
                 progress: Callable[[Result], None] | None = None,
                 bases: Bases | None = None, forks: ForkServer | None = None) -> tuple[list[Result], float, float]:
    """(results, wall seconds, of which setup); the CPU seconds are in the module's LAST_CPU.
    `bases`, `forks`: shared with other runs of the same checkout (Campaign)."""
    global LAST_CPU
    campaign = Campaign(root, workers, keep, bases, forks)
    try:
        return campaign.run(cases, progress)
    finally:
        LAST_CPU = campaign.cpu
        campaign.close()


LAST_CPU = 0.0
