"""`bully-tui hunt`: its arguments, checked before anything runs, and what it says and
writes. A random search (run/hunt.py) ends with a scenario and a transcript; an
exhaustive one (run/explore.py) with an interaction file and a transcript (on links
that drop, duplicate or reorder: a scenario of by-hand commands, run/explore_network.py).
Either way: 1 for a finding, 0 for none, 2 for bad input (one line), as the package's
header says of every command.

A finding's two files appear whole and together, or not at all (record/together.py): a
signal at any moment, before they take their names, leaves nothing."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path

from protocol import MUTEXES, split_name

from ..core.command_lines import parse_delay, parse_list
from ..core.commands import membership_refused
from ..core.config import CS_HOLD, ClusterConfig, InputError, Workload, WriteError, parse_number, parse_whole, shown
from ..record.files import check_new
from ..record.together import Together
from ..run import interrupt
from ..run.hunt_space import (
    LINK_FAULTS,
    LIVENESS,
    MAX_NODES,
    NEEDS_A_MUTEX,
    NETWORK_FAULTS,
    PROPERTIES,
    SAFETY,
    Space,
)
from .live import replay_app
from .output import emit, finished, need_a_terminal, warn
from .parser import add_algorithm, add_seed, add_timing, algorithm_of, choice, given, seed_of, timing_value
from .subcommands import parser_for

USAGE = "bully-tui hunt [--algorithm A] [--property P] [--budget B] [--exhaustive] ... (bully-tui hunt --help lists them)"
EXHAUSTIVE_DEFAULTS = ClusterConfig(timeout=4.0, probe_interval=0.0, delay_min=1.0, delay_max=2.0)  # T = 2 x max delay
EXHAUSTIVE_MOST_NODES = 4
EXHAUSTIVE_ONLY = ("async_", "timeout", "coordinator_timeout", "delay", "probe_interval", "faults", "depth", "max_states",
                   "midpoint", "elects", "requests", "joins", "leaves", "cs_hold", "network", "drops", "duplicates")
RANDOM_ONLY = ("budget", "seed", "break_synchrony", "commands", "link_faults", "scheduler")


def _parser():
    p = parser_for("hunt", USAGE)
    add_algorithm(p)
    p.add_argument("--property", default="any", metavar="P", help=f"what to break: {', '.join(PROPERTIES)} (default any)")
    p.add_argument("--nodes", metavar="A:B", help=f"nodes a run starts with, from A to B (at most {MAX_NODES}; default "
                   f"2:8; --exhaustive: at most {EXHAUSTIVE_MOST_NODES}, default 3)")
    p.add_argument("-o", "--output", metavar="BASE", help="write BASE.scenario (--exhaustive: BASE.txt, its steps) and "
                   "BASE.jsonl; default hunt-ALGORITHM-PROPERTY, numbered if taken")
    p.add_argument("--overwrite", action="store_true", help="let -o replace existing files")
    p.add_argument("--open", action="store_true", help="open the finding in the app, paused at its first violation")
    p.add_argument("--workers", metavar="W", help=f"processes sharing the search (default: the machine's cores, "
                   f"{os.cpu_count() or 1}; --exhaustive: 1); the finding and the counts do not depend on it")
    random = p.add_argument_group("a random search (the default)")
    random.add_argument("--budget", metavar="B", help="how long to search: seconds (60s, 5m) or a number of schedules "
                        "(5000: the same --seed then gives the same finding, byte for byte); default 60s")
    add_seed(random, "the search's seed")
    random.add_argument("--break-synchrony", action="store_true", help="let T fall below 2 x max delay (by default "
                        "the search keeps the synchrony every algorithm assumes)")
    random.add_argument("--commands", metavar="NAME,...", help="the commands a schedule may use (default: every one "
                        "the algorithm takes: crash, recover, elect, and join, leave, want where they apply)")
    random.add_argument("--link-faults", metavar="F,...", help=f"what the links may do besides lossless FIFO: "
                        f"{', '.join(LINK_FAULTS)} (each drawn per schedule, none first: a finding keeps only those it "
                        f"needs; default none)")
    random.add_argument("--scheduler", metavar="ADDRESS", help="run the search on a Dask cluster, its scheduler at "
                        "tcp://HOST:PORT (the extra bully-tui[cluster]); the finding is the same as on one process")
    every = p.add_argument_group("an exhaustive search: every run of a tiny cluster, up to the bounds")
    every.add_argument("--exhaustive", action="store_true", help="search every run, breadth first: the finding is a "
                       "shortest one (safety; sle2 and mutex-liveness too when timed, within 60 s)")
    every.add_argument("--async", dest="async_", action="store_true", help="the asynchronous model: any message may "
                       "arrive and any timer fire next (default: timed, each delay one of the bounds)")
    add_timing(every, EXHAUSTIVE_DEFAULTS)
    every.add_argument("--faults", metavar="F", help="crashes and recoveries in a run, at most (default 2)")
    every.add_argument("--elects", metavar="E", help="elect commands in a run, at most (default 0)")
    every.add_argument("--joins", metavar="J", help="nodes that join in a run, at most (default 0)")
    every.add_argument("--leaves", metavar="L", help="nodes that leave in a run, at most (default 0)")
    every.add_argument("--requests", metavar="R", help="with --mutex: want commands in a run, at most: nodes ask for "
                       "the critical section only so (default 2)")
    every.add_argument("--cs-hold", metavar="H", help="with --mutex: seconds a node holds the critical section "
                       f"(default {Workload().hold[0]:g})")
    every.add_argument("--depth", metavar="D", help="steps in a run, at most (default 40)")
    every.add_argument("--max-states", metavar="S", help="states to explore, at most (default 200000)")
    every.add_argument("--midpoint", action="store_true", help="timed: a delay may also be the bounds' midpoint "
                       "(many times the states)")
    every.add_argument("--network", metavar="N,...", help="what the links may do: fifo (lossless FIFO, the default), "
                       "or drop, duplicate, reorder, together as you like (drop,reorder); a finding is then written as "
                       "the user being the network: BASE.scenario and BASE.jsonl, which verify re-creates")
    every.add_argument("--drops", metavar="K", help="with --network drop: messages lost in a run, at most (default 1)")
    every.add_argument("--duplicates", metavar="K", help="with --network duplicate: messages copied in a run, at most "
                       "(default 1)")
    return p


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    algorithm = algorithm_of(args)
    prop = choice(args.property, "--property", tuple(PROPERTIES))
    if prop in NEEDS_A_MUTEX and args.mutex is None:
        raise InputError(f"--property {prop} needs a mutex (--mutex {'|'.join(MUTEXES)})")
    named = split_name(algorithm)
    default = f"hunt-{named[0]}{'-' + named[1] if named[1] else ''}-{prop}"
    if args.exhaustive:
        _only(args, RANDOM_ONLY, "a random search")
        return _exhaustive(args, algorithm, prop, default, argv)
    _only(args, EXHAUSTIVE_ONLY, "--exhaustive")
    return _random(args, algorithm, prop, default, argv)


def _only(args, names: tuple[str, ...], where: str) -> None:
    given = [f"--{name.rstrip('_').replace('_', '-')}" for name in names if getattr(args, name) not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)} only applies to {where}")


WHAT = {".scenario": "scenario", ".jsonl": "transcript", ".txt": "interaction"}


def _outputs(args, default: str, suffixes: tuple[str, ...]) -> list[str]:
    """The files a finding goes to (-o BASE, or a free name), checked now: before the
    search, not after it."""
    if args.output is None:
        base = free_base(default, suffixes)
    else:  # (-o f.scenario, f.jsonl or f.txt: f, whichever the user named)
        base = args.output
        for suffix in WHAT:
            base = base.removesuffix(suffix)
        _check_name(args.output, os.path.basename(base), suffixes)
    paths = [f"{base}{suffix}" for suffix in suffixes]
    for path, suffix in zip(paths, suffixes, strict=True):
        check_new(path, WHAT[suffix], args.overwrite)
    return paths


def _check_name(given: str, name: str, suffixes: tuple[str, ...]) -> None:
    """-o names the files, as --transcript does: an empty name, or one that would make
    hidden files (`-o .jsonl` is `.scenario` and `.jsonl`; `-o d/` is `d/.scenario`), is
    refused."""
    files = f"BASE{suffixes[0]} and BASE{suffixes[1]}"
    if not name:
        raise InputError(f"-o {shown(given)} names no file: give a name BASE for {files}")
    if name.startswith("."):
        raise InputError(f"-o {shown(given)} would write hidden files ({name}{suffixes[0]}, {name}{suffixes[1]}): "
                         "give a name that does not start with a dot")


def _write_finding(overwrite: bool, first: tuple[str, str, str], transcript: str, record: Callable[[str], object],
                   found: str, said: Callable[[], None]) -> None:
    """A finding's two files, whole and together, or neither: `first` (its path, what it
    is, its text) and the transcript that `record(path)` writes; then `said()` says where
    they are. `found` says what was found, for a signal's line when nothing is written; a
    signal once they are in place, before their line is out, says that they are."""
    path, what, text = first
    placed = False
    try:
        with Together(overwrite) as files:
            with interrupt.checked():  # (a temporary file made is one the guardian knows of)
                first_part, transcript_part = files.beside(path, what), files.beside(transcript, "transcript")
            try:
                with open(first_part, "wb") as f:
                    f.write(text.encode())
            except OSError as e:
                raise WriteError(f"cannot write {what} {path}: {e.strerror or e}") from None
            try:
                record(transcript_part)
            except WriteError as e:  # (it names the file it would have been)
                raise WriteError(str(e).replace(transcript_part, transcript)) from None
            with interrupt.checked():  # every name, or none; a signal meanwhile ends the command after
                files.place()
                placed = True
        said()
    except interrupt.Stopped as stop:  # (not the time of the finding's own run, nor its temporary file)
        stop.t, stop.transcript = None, None
        stop.done = f"the finding is written: {path}, {transcript}" if placed else found
        raise


def _random(args, algorithm: str, prop: str, default: str, argv: list[str]) -> int:
    low, high = parse_node_range(given(args.nodes, "2:8"), MAX_NODES)
    schedules, seconds = parse_budget(given(args.budget, "60s"))
    seed = seed_of(args.seed)
    workers = parse_whole(args.workers, "--workers", 1, 64) if args.workers is not None else os.cpu_count() or 1
    scheduler = None if args.scheduler is None else parse_scheduler(args.scheduler)
    if scheduler is not None and args.workers is not None:
        raise InputError("--workers and --scheduler do not go together: on a cluster, its workers share the search")
    space = Space(algorithm, (low, high), synchrony=not args.break_synchrony)
    if args.commands is not None:
        space = replace(space, chosen=tuple(choice(c, "--commands", space.commands)
                                            for c in parse_list(args.commands, "--commands")))
    if args.link_faults is not None:
        space = replace(space, link_faults=tuple(dict.fromkeys(
            choice(f, "--link-faults", LINK_FAULTS) for f in parse_list(args.link_faults, "--link-faults"))))
    scenario_path, transcript = _outputs(args, default, (".scenario", ".jsonl"))
    _terminal_to_open(args)
    if scheduler is not None:
        from ..run.hunt_cluster import need_distributed, on_cluster

        need_distributed()
    from ..run.hunt import Hunt, Result, search  # (hypothesis: loaded once the arguments are good)
    from ..run.hunt_report import HuntProgress, finding_line, nothing_line, scenario_text, searched_so_far
    from ..run.wiring import run_headless

    hunt = Hunt(space, PROPERTIES[prop], seed, schedules, seconds)
    started = time.monotonic()
    latest: list[Result] = []  # the search so far, for a signal's line
    with HuntProgress(hunt) if sys.stderr.isatty() else nullcontext() as progress:

        def seen(result: Result, found: int | None) -> None:
            latest[:] = [result]
            if progress is not None:
                progress(result, found)

        try:
            if scheduler is None:
                result = search(hunt, workers, seen)
            else:
                with on_cluster(scheduler) as batches:
                    result = search(hunt, on_batch=seen, batches=batches)
        except interrupt.Stopped as stop:
            if latest:
                stop.done = searched_so_far(latest[0])
            raise
    finding = result.finding
    if finding is None:
        emit(nothing_line(hunt, result, time.monotonic() - started) + "\n")
        return 0
    command_line = " ".join(["bully-tui", "hunt", *argv])
    def said() -> None:
        emit(finding_line(finding, transcript) + "\n")
        emit(f"the scenario: {scenario_path} (bully-tui --scenario {scenario_path}); searched "
             f"{result.searched.schedules:,} schedules in {time.monotonic() - started:.1f} s\n")

    _write_finding(args.overwrite, (scenario_path, "scenario", scenario_text(hunt, finding, command_line)), transcript,
                   lambda path: run_headless(finding.schedule.session(algorithm, path), finding.schedule.until(algorithm)),
                   searched_so_far(result), said)
    _open(args, transcript)
    return 1


def _terminal_to_open(args) -> None:
    if args.open:
        need_a_terminal("--open shows the finding in the terminal app", "without --open, replay it later")


def _open(args, transcript: str) -> None:
    """--open: the finding in the app, at its first violation."""
    if args.open:
        app = replay_app(transcript, open_at="violation")
        app.run()
        finished(app)


def _exhaustive(args, algorithm: str, prop: str, default: str, argv: list[str]) -> int:
    wanted = PROPERTIES[prop]
    if wanted in LIVENESS and args.async_:
        raise InputError(f"--exhaustive --async checks safety ({', '.join(p for p, w in PROPERTIES.items() if w in SAFETY)}"
                         f" or any), not {prop}: what must happen eventually needs time, which the asynchronous model "
                         "does not have (the timed one judges it within 60 s)")
    mutex = split_name(algorithm)[1] is not None
    for option in ("requests", "cs_hold"):
        if getattr(args, option) is not None and not mutex:
            raise InputError(f"--{option.replace('_', '-')} only applies with --mutex")
    if (args.joins or args.leaves) and membership_refused(algorithm):
        raise InputError(membership_refused(algorithm))
    network = parse_network(args)
    low, high = parse_node_range(given(args.nodes, "3"), EXHAUSTIVE_MOST_NODES)
    d = EXHAUSTIVE_DEFAULTS
    delay = parse_delay(args.delay, "--delay") if args.delay is not None else (d.delay_min, d.delay_max)
    config = ClusterConfig(
        timeout=d.timeout if args.timeout is None else timing_value("timeout", args.timeout, "--timeout"),
        coordinator_timeout=None if args.coordinator_timeout is None else
        timing_value("coordinator-timeout", args.coordinator_timeout, "--coordinator-timeout"),
        probe_interval=d.probe_interval if args.probe_interval is None else
        timing_value("probe-interval", args.probe_interval, "--probe-interval"),
        delay_min=delay[0], delay_max=delay[1])
    limits = dict(faults=parse_whole(given(args.faults, "2"), "--faults", 0, 10),  # noqa: C408 (Bounds' names: it loads later)
                  depth=parse_whole(given(args.depth, "40"), "--depth", 1, 10_000),
                  most=parse_whole(given(args.max_states, "200000"), "--max-states", 1, 100_000_000),
                  elects=parse_whole(given(args.elects, "0"), "--elects", 0, 10),
                  requests=parse_whole(given(args.requests, "2" if mutex else "0"), "--requests", 0, 10),
                  joins=parse_whole(given(args.joins, "0"), "--joins", 0, 10),
                  leaves=parse_whole(given(args.leaves, "0"), "--leaves", 0, 10),
                  drops=parse_whole(given(args.drops, "1"), "--drops", 1, 10),
                  duplicates=parse_whole(given(args.duplicates, "1"), "--duplicates", 1, 10))
    hold = Workload().hold[0] if args.cs_hold is None else CS_HOLD.check(parse_number(args.cs_hold, "--cs-hold"),
                                                                            "--cs-hold")
    workers = parse_whole(given(args.workers, "1"), "--workers", 1, 64)
    path, transcript = _outputs(args, default, (".scenario" if network else ".txt", ".jsonl"))
    _terminal_to_open(args)
    # (the search's modules: loaded once the arguments are good)
    from ..run.explore import Bounds, Model, explore, interaction_text, record, steps_taken
    from ..run.explore_network import finding_line as network_line
    from ..run.explore_network import rerun
    from ..run.explore_network import scenario_text as network_scenario
    from ..run.hunt_report import ExploreProgress, explored_line, explored_so_far, steps_line

    bounds = Bounds(**limits)
    warn(config)
    started = time.monotonic()
    searched = 0  # states of the smaller clusters, searched whole (for a signal's line)
    for nodes in range(low, high + 1):  # the smallest cluster first: its finding is the smaller
        model = Model(algorithm, nodes, config, timed=not args.async_, midpoint=args.midpoint, hold=hold, network=network)
        latest = [0]  # this cluster's states so far, as its progress last said
        with ExploreProgress() if sys.stderr.isatty() else nullcontext() as progress, interrupt.checked():

            def seen(so_far, progress=progress, latest=latest) -> None:
                latest[0] = so_far.states
                if progress is not None:
                    progress(so_far)

            try:
                found, explored = explore(model, wanted, bounds, seen, workers)
            except interrupt.Stopped as stop:
                stop.done = explored_so_far(searched + latest[0])
                raise
        searched += explored.states
        if found is not None:
            claim = steps_line(model, found, path, transcript).split("; the steps")[0]  # (the line, without the files)
            comments = [f"Found by: {' '.join(['bully-tui', 'hunt', *argv])}", f"Claim: {claim}."]
            unwritten = f"a finding ({model.nodes + found.steps.count('join')} nodes, {_steps(steps_taken(found.steps))}), not written"
            if network:  # (the user as the network: a scenario, and a transcript its commands re-create)
                run = rerun(model, found)
                text = network_scenario(model, run, [*comments, ("A shortest run that breaks it (breadth first), "
                                                     "the user being the network: each step a command at its time.")])
                _write_finding(args.overwrite, (path, "scenario", text), transcript,
                               partial(run.record, overwrite=True), unwritten,
                               lambda: emit(network_line(path, transcript, claim) + "\n"))
            else:
                text = interaction_text(model, found, [*comments, ("A shortest run that breaks it (breadth first): "
                                                                   "each step below, then what it did.")])
                _write_finding(args.overwrite, (path, "interaction", text), transcript,
                               partial(record, model, found, overwrite=True), unwritten,
                               lambda: emit(steps_line(model, found, path, transcript) + "\n"))
            emit(explored_line(model, wanted, explored, bounds, time.monotonic() - started, found=True) + "\n")
            _open(args, transcript)
            return 1
        emit(explored_line(model, wanted, explored, bounds, time.monotonic() - started, found=False) + "\n")
    return 0


def _steps(n: int) -> str:
    return f"{n} step{'' if n == 1 else 's'}"


def parse_network(args) -> frozenset[str]:
    """--network: what the links may do besides lossless FIFO (none: `fifo`, the
    default); --drops and --duplicates only with the fault they bound."""
    network: frozenset[str] = frozenset()
    if args.network is not None:
        names = {choice(name, "--network", ("fifo", *NETWORK_FAULTS)): None for name in parse_list(args.network, "--network")}
        if "fifo" in names and len(names) > 1:
            raise InputError(f"--network {shown(args.network)}: fifo is lossless FIFO links, which do not "
                             f"{' or '.join(n for n in names if n != 'fifo')}: name the faults alone")
        network = frozenset(names) - {"fifo"}
    for option, fault in (("drops", "drop"), ("duplicates", "duplicate")):
        if getattr(args, option) is not None and fault not in network:
            raise InputError(f"--{option} only applies with --network {fault} (it bounds the messages the links {fault})")
    return network


def parse_node_range(text: str, most: int) -> tuple[int, int]:
    """"A:B" or "N": how many nodes a hunt's runs start with."""
    parts = text.split(":")
    if len(parts) > 2:
        raise InputError(f"--nodes must be A:B or N, not {shown(text)}")
    low, high = (parse_whole(part, "--nodes", 1, most) for part in (parts[0], parts[-1]))
    if low > high:
        raise InputError(f"--nodes: {low} is above {high}")
    return low, high


SCHEDULER = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")
SCHEMES = ("tcp", "tls")  # (how a Dask scheduler is reached)


def parse_scheduler(text: str) -> str:
    """--scheduler's value, "tcp://HOST:PORT" (HOST:PORT, tls://HOST:PORT), checked before
    anything is imported or reached."""
    m = SCHEDULER.fullmatch(text.strip())
    if m is None or not 1 <= int(m["port"]) <= 65535:
        raise InputError(f"--scheduler must be a Dask scheduler's address, tcp://HOST:PORT, not {shown(text)}")
    scheme = m["scheme"] or "tcp"
    if scheme not in SCHEMES:
        raise InputError(f"--scheduler {shown(text)}: a Dask scheduler is reached over {' or '.join(SCHEMES)}, "
                         f"not {scheme}")
    return f"{scheme}://{m['host']}:{int(m['port'])}"


def parse_budget(text: str) -> tuple[int | None, float | None]:
    """"60s" or "5m": seconds of searching; "5000": schedules. (schedules, seconds)."""
    word = text.strip().lower()
    if word.endswith(("s", "m")):
        seconds = parse_number(word[:-1], "--budget") * (60 if word.endswith("m") else 1)
        if not 0.1 <= seconds <= 7 * 86400:
            raise InputError(f"--budget must be from 0.1 s to a week, not {shown(text)}")
        return None, seconds
    if not word.isdigit():
        raise InputError(f"--budget must be seconds (60s, 5m) or a number of schedules (5000), not {shown(text)}")
    return parse_whole(word, "--budget", 1, 100_000_000), None


def free_base(base: str, suffixes: tuple[str, ...]) -> str:
    """`base`, or `base-2`, ...: a name free with each suffix."""
    for n in range(1, 1000):
        candidate = base if n == 1 else f"{base}-{n}"
        if not any(Path(f"{candidate}{suffix}").exists() for suffix in suffixes):
            return candidate
    raise InputError(f"no free file name beside {base}")
