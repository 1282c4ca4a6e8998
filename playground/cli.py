"""`bully-tui`: the one entry point: the live app, `--headless` runs (virtual time),
`--compare`, and the subcommands `verify`, `replay`, `export` and `hunt`.

Every argument is checked before anything runs. Whatever happens, the program ends with
one line and a status, never a traceback (`main`):
  0    done
  1    a file or standard output could not be written, `verify` found a difference,
       or `hunt` found a counterexample
  2    bad input: an argument, a scenario or a transcript (nothing was written)
  128 + n  stopped by signal n: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
           (interrupt.py), with every file it wrote ending on a whole line.

Only what parsing needs is imported at first (the protocol's names, the parsers): a
refusal or --help answers at once, and the signals are ours from the start; the rest
comes with the command that needs it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from protocol import ALGORITHMS, MUTEXES, machine

from .core.commands import (
    MEMBERSHIP_COMMANDS,
    at_lines,
    delay_refused,
    membership_refused,
    parse_delay,
    parse_lines,
    parse_list,
    want_refused,
)
from .core.commands import USAGE as COMMAND_USAGE
from .core.config import (
    COORDINATOR_TIMEOUT,
    CS_HOLD,
    CS_THINK,
    INSTANT,
    MAX_NODES,
    MAX_SEED,
    PROBE_INTERVAL,
    SETTLE,
    TIMEOUT,
    ClusterConfig,
    InputError,
    TimeRange,
    Workload,
    WriteError,
    parse_number,
    parse_whole,
    shown,
)
from .core.ids import ID_KINDS, node_ids, ring_order
from .record.files import check_new, open_to_write
from .record.scenario import read_scenario
from .run import interrupt

DEFAULT_UNTIL = 60.0
COMPARE_FORMATS = ("markdown", "json")
EXPORT_FORMATS = ("svg", "mermaid", "shiviz")


class _Parser(argparse.ArgumentParser):
    """argparse, with one line for an error instead of usage and a message, no guessing
    of abbreviated options (`--node 3` is not `--nodes 3`), and values that may start
    with a dash (`--timeout -inf` is a bad timeout, not a missing one)."""

    def __init__(self, **kwargs: Any):
        super().__init__(allow_abbrev=False, **kwargs)

    @property
    def _takes_value(self) -> set[str]:
        """The options that take one value (those of argument groups too)."""
        return {name for action in self._actions if action.option_strings and action.nargs is None
                for name in action.option_strings}

    def error(self, message: str) -> None:
        usage = f" (usage: {self.usage})" if self.usage else ""  # a subcommand's: short
        if message.startswith("unrecognized arguments: "):  # argparse's words, for all the rest at once
            first = message.removeprefix("unrecognized arguments: ").split()[0]
            help_ = f"{self.prog} --help"
            message = (f"unknown option {first} ({help_} lists them)" if first.startswith("-")
                       else f"unexpected argument {shown(first)}" if usage
                       else f"unexpected argument {shown(first)}: options come as --NAME VALUE ({help_})")
        raise InputError(message + usage)

    def _print_message(self, message: str, file: Any = None) -> None:  # --help, on stdout
        if not message:
            return
        if file in (None, sys.stdout):
            _emit(message)
        else:
            _say(message.rstrip("\n"))

    def parse_args(self, argv: list[str]) -> argparse.Namespace:  # type: ignore[override]
        return super().parse_args(self._glue(argv))

    def _glue(self, argv: list[str]) -> list[str]:
        """`--timeout -inf` -> `--timeout=-inf`: argparse takes a value that starts with a
        dash for an option, and would say "expected one argument"."""
        out, options, takes_value = [], self._option_string_actions, self._takes_value
        for token in argv:
            if out and out[-1] in takes_value and token.startswith("-") and token not in options and token != "--":
                out[-1] = f"{out[-1]}={token}"
            else:
                out.append(token)
        return out


SUBCOMMANDS = {
    "verify": "re-create a transcript from its header and commands, and compare every event",
    "replay": "open a transcript in the app, at its end: go back in time, and branch",
    "export": "a transcript as a space-time diagram (SVG, Mermaid or ShiViz)",
    "hunt": "search schedules for a run that breaks a property, and write the smallest one found",
    "node": "run one real node: the same protocol over TCP, one process a node (bully-tui --real starts a cluster of them)",
    "merge": "merge the traces of real nodes run by hand (their state folders) into one transcript",
    "attach": "watch real nodes started by hand (bully-tui node), on this machine or others, live",
}


ARGS = {"hunt": "--property P ...", "node": "--id K ...", "merge": "DIR ... -o FILE", "attach": "ID@HOST:PORT,..."}


def _parser() -> _Parser:
    p = _Parser(
        prog="bully-tui",
        description="A playground for leader election: N nodes elect a coordinator, live in the terminal "
                    "(or --headless, in virtual time).",
        epilog="subcommands:\n" + "\n".join(f"  bully-tui {name} {ARGS.get(name, 'FILE ...')}  {what}"
                                             for name, what in SUBCOMMANDS.items())
               + "\n  (bully-tui SUBCOMMAND --help for each)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--headless", action="store_true", help="run in virtual time without the UI and print a JSON summary")
    p.add_argument("--nodes", metavar="N", help=f"number of nodes (1 to {MAX_NODES}; default 7)")
    p.add_argument("--ids", metavar="KIND", help="node ids: seq (1..N, the default) or uuid (random 128-bit, from the seed)")
    p.add_argument("--algorithm", metavar="NAME", help=f"one of: {', '.join(ALGORITHMS)} (default classic)")
    p.add_argument("--ring", metavar="ORDER", help=f"{' and '.join(ON_A_RING)}: the order of the nodes round the ring: "
                   "sorted (each node's successor is the next higher id; the default), reversed, shuffled (from the "
                   "seed), or ranks K,L,... (every node once); a node that joins goes after the last")
    p.add_argument("--mutex", metavar="NAME", nargs="?", const=EVERY_MUTEX,
                   help=f"mutual exclusion beside the election: {', '.join(MUTEXES)} (default none); with --compare "
                        "and no NAME, all four")
    p.add_argument("--cs-think", metavar="A[:B]", help="with --mutex: seconds a node thinks before it wants the critical "
                   "section, drawn in A..B; none: only the want command asks (default 5:20)")
    p.add_argument("--cs-hold", metavar="A[:B]", help="with --mutex: seconds a node holds the critical section (default 15:30)")
    p.add_argument("--seed", metavar="S", help="seed for the link delays and uuid ids (default 1)")
    p.add_argument("--timeout", metavar="T", help="T, seconds to wait for an answer (default 4)")
    p.add_argument("--coordinator-timeout", metavar="T2", help="T', seconds to wait for the Coordinator (default 2T)")
    p.add_argument("--delay", metavar="MIN[:MAX]", help="link delay bounds in seconds (default 0.5:1.5)")
    p.add_argument("--probe-interval", metavar="P", help="seconds between probes of the coordinator; 0 is off (default 5)")
    p.add_argument("--settle", metavar="C", help="SLE2: seconds after a crash or recovery by which all must agree (default from T, P, delay, N)")
    p.add_argument("--until", metavar="SECONDS", help=f"headless: virtual seconds to run (default {DEFAULT_UNTIL:g})")
    p.add_argument("--speed", metavar="X", help="live: virtual seconds per real second (default 1)")
    p.add_argument("--at", action="append", default=[], metavar="'TIME COMMAND ARGS'",
                   help="run a command at a time (virtual seconds); repeatable. COMMAND ARGS is one of: "
                        + ", ".join(COMMAND_USAGE.values()) + " (K, L: a node's rank, 1..N; T: seconds)")
    p.add_argument("--scenario", metavar="FILE", help="a file of 'TIME COMMAND ARGS' and 'set OPTION VALUE' lines (scenarios/)")
    p.add_argument("--compare", action="store_true",
                   help="headless: crash the leader once all agree, on every algorithm (or --algorithm) for N = 4..64 "
                        "(or --nodes), and print a table")
    p.add_argument("--format", metavar="FORMAT", help=f"--compare's output: {' or '.join(COMPARE_FORMATS)} (one JSON object per row)")
    p.add_argument("--real", action="store_true", help="real node processes on 127.0.0.1 over TCP, one a node "
                   "(bully-tui node), live (keys: x kill the leader, c crash, r recover, e elect, w want the critical "
                   "section, j join, l leave, p cut off, P heal, + and - T, s save; ? lists them all) or --headless "
                   "for --until real seconds (--at commands: crash, recover, elect, join, leave, timeout, partition, "
                   "heal, want); --delay S holds each message S seconds (default 0)")
    p.add_argument("--transcript", metavar="FILE", help="record everything to FILE (JSON Lines)")
    p.add_argument("--overwrite", action="store_true", help="let --transcript replace an existing file")
    return p


DEFAULTS = {"algorithm": "classic", "nodes": "7", "ids": "seq", "seed": "1"}
# What --compare does not use: it runs its own scenario, on ids 1..N, to its own limit,
# and writes no transcript.
NOT_FOR_COMPARE = ("scenario", "at", "transcript", "overwrite", "until", "settle", "ids", "speed", "cs_think", "cs_hold",
                   "ring")  # (it runs the ring algorithms over several orders of its own)
ON_A_RING = tuple(name for name, cls in ALGORITHMS.items() if cls.on_a_ring)
EVERY_MUTEX = "every"  # --mutex with no name: with --compare, all of them


def _check_compare(args: argparse.Namespace) -> None:
    if not args.headless:
        raise InputError("--compare only applies with --headless")
    unused = [f"--{name.replace('_', '-')}" for name in NOT_FOR_COMPARE if getattr(args, name) not in (None, False, [])]
    if unused:
        scenario = "its own workload" if args.mutex is not None else "its own scenario (the leader crashes once all agree)"
        raise InputError(f"--compare runs {scenario} and does not use {', '.join(unused)}")
    if args.format is not None:
        args.format = _choice(args.format, "--format", COMPARE_FORMATS)
    args.every_size, args.every_algorithm = args.nodes is None, args.algorithm is None
    if args.delay is None:
        # PROTOCOLS.md counts with a constant delay. (Jitter also makes classic's
        # start-up at N = 64 a storm of millions of messages: see the README.)
        args.delay = "1"


def parse_args(argv: list[str]):  # -> (argparse.Namespace, Session)
    from .run.session import Session

    args = _parser().parse_args(argv)
    if args.compare:
        _check_compare(args)
    elif args.format is not None:
        raise InputError("--format only applies to --compare")
    scenario = read_scenario(args.scenario) if args.scenario is not None else None

    def setting(name: str, parse: Callable[[str, str], Any]) -> Any:
        """One setting, parsed and checked, from the command line, else the scenario,
        else the default (None if there is none). A bad value is named as it was given:
        `--timeout` on the command line, `d.scenario line 3: timeout` in a file."""
        text, what, where = getattr(args, name.replace("-", "_")), f"--{name}", None
        if text is None and scenario is not None and name in scenario.settings:
            (text, where), what = scenario.settings[name], name
        if text is None:
            text = DEFAULTS.get(name)
        if text is None:
            return None
        try:
            return parse(text, what)
        except InputError as e:
            if where is None:
                raise
            raise InputError(f"{where}: {e}") from None

    nodes = setting("nodes", lambda v, what: parse_whole(v, what, 1, MAX_NODES))
    seed = setting("seed", lambda v, what: parse_whole(v, what, 0, MAX_SEED))
    args.algorithm = setting("algorithm", lambda v, what: _choice(v, what, tuple(ALGORITHMS)))
    args.ids = setting("ids", lambda v, what: _choice(v, what, ID_KINDS))
    numbers = {}
    for name, time_range in (("timeout", TIMEOUT), ("coordinator-timeout", COORDINATOR_TIMEOUT),
                             ("probe-interval", PROBE_INTERVAL), ("settle", SETTLE)):
        value = setting(name, lambda v, what, r=time_range: r.check(parse_number(v, what), what))
        if value is not None:
            numbers[name.replace("-", "_")] = value
    delay = setting("delay", parse_delay)
    if delay is not None:
        numbers["delay_min"], numbers["delay_max"] = delay
    config = ClusterConfig(**numbers)  # every value is checked by now
    if args.until is not None and not args.headless:
        raise InputError("--until only applies with --headless (the live app runs until you quit)")
    ends = None  # a headless run's end, and what set it (a command after it would never run)
    if args.headless and not args.compare:  # (a scenario's `set until` is for these; the live app runs until you quit)
        source = "--until" if args.until is not None else "the scenario's until" if scenario and "until" in scenario.settings \
            else None
        until = setting("until", lambda v, what: INSTANT.check(parse_number(v, what), what))
        args.until = until if source else None
        ends = (until, source) if source else (DEFAULT_UNTIL, "--until's default")
    if args.speed is not None:
        if args.headless:
            raise InputError("--speed only applies to the live app (--headless runs as fast as it can)")
        args.speed = parse_number(args.speed, "--speed")
        if not 0 < args.speed <= 1000:
            raise InputError(f"--speed must be above 0 and at most 1000, not {args.speed:g}")
    mutex = setting("mutex", lambda v, what: v if v == EVERY_MUTEX else _choice(v, what, tuple(MUTEXES)))
    if args.compare:  # (its runs make their own sessions: compare_mutex.py)
        args.compare_mutexes = None if mutex is None else tuple(MUTEXES) if mutex == EVERY_MUTEX else (mutex,)
        for name in args.compare_mutexes or ():
            if why := delay_refused(f"{args.algorithm}+{name}", config.delay_max):
                raise InputError(f"--delay: {why}")
        mutex = None
    elif mutex == EVERY_MUTEX:
        raise InputError(f"--mutex needs a name (one of: {', '.join(MUTEXES)}); with no name, only with --compare")
    workload = None
    if mutex is not None:
        default = Workload()
        think = setting("cs-think", parse_think) \
            if args.cs_think is not None or _set(scenario, "cs-think") else default.think  # (None: asked by want only)
        workload = Workload(think, setting("cs-hold", parse_hold) or default.hold)
        args.algorithm = f"{args.algorithm}+{mutex}"
        if why := delay_refused(args.algorithm, config.delay_max):
            raise InputError(f"--mutex {mutex}: {why}: give --delay above 0")
    else:
        for name in ("cs-think", "cs-hold"):
            if getattr(args, name.replace("-", "_")) is not None or _set(scenario, name):
                raise InputError(f"--{name} only applies with --mutex")
    ids = node_ids(args.ids, nodes, seed)
    if (args.ring is not None or _set(scenario, "ring")) and not machine(args.algorithm).on_a_ring:
        where = "--ring" if args.ring is not None else f"{scenario.settings['ring'][1]}: ring"
        raise InputError(f"{where} applies to {' and '.join(ON_A_RING)} only: {args.algorithm}'s nodes do not form a ring")
    config = replace(config, ring=setting("ring", lambda v, what: ring_order(v, ids, seed, what)))
    lines = scenario.lines_to_run() if scenario else []
    commands = parse_lines(lines + at_lines(args.at), ids, seed, ends)
    _check_membership(commands, args.algorithm)
    if args.real:
        config = _check_real(args, commands, config, nodes)
    session = Session(args.algorithm, nodes, seed, config, tuple(commands), args.transcript, args.overwrite, args.ids,
                      workload=workload)
    return args, session


def _check_real(args: argparse.Namespace, commands: list, config: ClusterConfig, nodes: int) -> ClusterConfig:
    """What a real run (--real) cannot do yet, refused; its delay is a hold on each
    message, none unless asked."""
    from .real.cluster import REAL_COMMANDS, REAL_MOST_NODES

    if args.compare or args.ids != "seq" or args.speed is not None or config.ring is not None:
        what = "--compare" if args.compare else "--ids uuid" if args.ids != "seq" else "--speed" \
            if args.speed is not None else "--ring"
        raise InputError(f"--real does not take {what}")
    for s in commands:
        if s.command.name not in REAL_COMMANDS:
            raise InputError(f"--real: a real cluster takes {', '.join(REAL_COMMANDS)}; not {s.command.name} (yet)")
    if nodes > REAL_MOST_NODES:
        raise InputError(f"--real: at most {REAL_MOST_NODES} node processes, not {nodes}")
    return config if args.delay is not None else ClusterConfig(config.timeout, config.coordinator_timeout,
                                                                config.probe_interval, 0.0, 0.0, config.settle)


def _set(scenario, name: str) -> bool:
    return scenario is not None and name in scenario.settings


def parse_span(text: str, what: str, allowed: TimeRange) -> tuple[float, float]:
    """"A:B" or "A" (seconds, in `allowed`), A not above B."""
    parts = text.split(":")
    if len(parts) > 2:
        raise InputError(f"{what} must be A or A:B (seconds), not {shown(text)}")
    low = allowed.check(parse_number(parts[0], what), what)
    high = allowed.check(parse_number(parts[-1], what), what)
    if low > high:
        raise InputError(f"{what}: {low:g} is above {high:g}")
    return low, high


def parse_think(text: str, what: str) -> tuple[float, float] | None:
    """A workload's think time: A or A:B seconds, or "none" (nobody asks but by `want`)."""
    return None if text.strip().lower() == "none" else parse_span(text, what, CS_THINK)


def parse_hold(text: str, what: str) -> tuple[float, float]:
    return parse_span(text, what, CS_HOLD)


def _check_membership(commands: list, algorithm: str) -> None:
    """Commands the algorithm cannot take: join and leave where its members are fixed,
    want without a mutex, a delay of 0 where a mutex's messages never rest."""
    for s in commands:
        name = s.command.name
        if name in MEMBERSHIP_COMMANDS and (why := membership_refused(algorithm)):
            raise InputError(f"{name} at {s.at:g} s: {why}")
        if name == "want" and (why := want_refused(algorithm)):
            raise InputError(f"{name} at {s.at:g} s: {why}")
        if name == "delay" and (why := delay_refused(algorithm, s.command.high)):
            raise InputError(f"delay at {s.at:g} s: {why}")


def _choice(text: str, what: str, choices: tuple[str, ...]) -> str:
    """A name from `choices`, in any case."""
    name = text.strip().lower()
    if name not in choices:
        raise InputError(f"unknown {what} {shown(text)} (choose from: {', '.join(choices)})")
    return name


# --- running, and the one place an ending becomes a line and a status ------------------------


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with interrupt.handled():
        try:
            if argv and argv[0] in SUBCOMMANDS:
                return SUBCOMMAND_RUNNERS[argv[0]](argv[1:])
            return _run(argv)
        except SystemExit as e:  # argparse, after printing --help
            return e.code if isinstance(e.code, int) else 0
        except BaseException as error:  # noqa: BLE001 - each ending is one line and a status, below
            return _ending(error)


def _ending(error: BaseException) -> int:
    """What stopped a command, as one line on stderr and its exit status. A bug is none of
    these, and keeps its traceback."""
    stop = interrupt.stopped_by(error)
    if stop is not None:
        _say(interrupt.said(stop))
        return stop.status
    if isinstance(error, InputError):
        _say(f"bully-tui: error: {error}")
        return 2
    if isinstance(error, WriteError):
        _say(f"bully-tui: error: {error}")
        return 1
    raise error


def _say(line: str) -> None:
    """A line on stderr, if stderr can take it (None: closed before we started)."""
    if sys.stderr is None:
        return  # (print would write it to stdout)
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        pass


def _emit(text: str) -> None:
    """The command's result on stdout. One that cannot be written (a full disk, a closed
    pipe, closed before we started: `>&-`) is a write error like any other file's."""
    if sys.stdout is None:  # (Python found no standard output)
        raise WriteError("cannot write to standard output: it is closed")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        try:  # what is still buffered must not fail again when Python exits
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise WriteError(f"cannot write to standard output: {e.strerror or e}") from None


def _run(argv: list[str]) -> int:
    args, session = parse_args(argv)
    interrupt.raise_if_stopped()  # (a signal during the imports above may have been swallowed)
    if not args.headless and args.real:
        return run_real_live(session)
    if not args.headless:
        return run_live(session, args.speed or 1.0)
    _warn(session)
    if args.compare and args.compare_mutexes:
        from .run.compare_mutex import SIZES, compare_mutex, mutex_json_lines, mutex_table

        sizes = SIZES if args.every_size else (session.nodes,)
        results = compare_mutex(session.config, session.seed, sizes, args.compare_mutexes, session.algorithm)
        text = mutex_json_lines(results) if args.format == "json" else mutex_table(results, session.config, session.algorithm)
        _emit(text + "\n")
        return 0
    if args.compare:
        from .run.compare import SIZES, compare, json_lines, table

        sizes = SIZES if args.every_size else (session.nodes,)
        results = compare(session.config, session.seed, sizes, None if args.every_algorithm else (args.algorithm,))
        _emit((json_lines(results) if args.format == "json" else table(results, session.config)) + "\n")
        return 0
    if args.real:
        from .real.cluster import REAL_UNTIL, run_headless_real

        until = REAL_UNTIL if args.until is None else args.until
        _emit(json.dumps(run_headless_real(session, until)) + "\n")
        return 0
    from .run.wiring import run_headless

    until = DEFAULT_UNTIL if args.until is None else args.until
    summary = run_headless(session, until, progress=sys.stderr.isatty())
    _emit(json.dumps(summary) + "\n")
    return 0


# --- subcommands ---------------------------------------------------------------------------


USAGE = {
    "verify": "usage: bully-tui verify FILE",
    "replay": "usage: bully-tui replay FILE [--at T|violation]",
    "export": "usage: bully-tui export FILE --format svg|mermaid|shiviz [-o OUT [--overwrite]] [--from T] [--to T] "
              "[--nodes K,...] [--types NAME,...] [--hide-detector] [--axis scaled|instants]",
    "hunt": "usage: bully-tui hunt [--algorithm A] [--property P] [--budget B] [--exhaustive] ... "
            "(bully-tui hunt --help lists them)",
    "node": "usage: bully-tui node --id K --listen HOST:PORT --peers ID@HOST:PORT,... --state-dir DIR [--algorithm A] ...",
    "merge": "usage: bully-tui merge DIR [DIR ...] -o FILE [--overwrite]",
    "attach": "usage: bully-tui attach ID@HOST:PORT,...",
}


def subcommand_parser(name: str) -> _Parser:
    """A subcommand's parser: its name, what it does and its usage line, from the one table."""
    return _Parser(prog=f"bully-tui {name}", description=SUBCOMMANDS[name], usage=USAGE[name].removeprefix("usage: "))


def _file_parser(name: str) -> _Parser:
    p = subcommand_parser(name)
    p.add_argument("file", metavar="FILE", help="a transcript (bully-tui --transcript FILE, or s in the app)")
    return p


def run_verify(argv: list[str]) -> int:
    from .record.verify import Different, verify

    path = _file_parser("verify").parse_args(argv).file
    try:
        count = verify(path)
    except Different as e:
        _say(f"bully-tui: different: {e}")
        return 1
    _emit(f"{path}: identical, {count:,} events\n")
    return 0


def run_export(argv: list[str]) -> int:
    from .record.export import AXES, Filters, export

    p = _file_parser("export")
    p.add_argument("--format", required=True, help=f"{', '.join(EXPORT_FORMATS)}")
    p.add_argument("-o", "--output", metavar="OUT", help="the file to write (default: standard output)")
    p.add_argument("--overwrite", action="store_true", help="let -o replace an existing file")
    p.add_argument("--from", dest="start", default="0", metavar="T", help="the messages sent from T seconds on")
    p.add_argument("--to", dest="stop", metavar="T", help="... up to T seconds")
    p.add_argument("--nodes", metavar="K,...", help="the messages between these nodes, by rank (1 the lowest id): 1,2,5; "
                                                      "one node: its messages with any node")
    p.add_argument("--types", metavar="NAME,...", help="the messages of these types, by name: Election,Coordinator")
    p.add_argument("--hide-detector", action="store_true", help="leave failure-detector traffic out (probes, heartbeats)")
    p.add_argument("--axis", default="scaled", help="SVG: time down to scale where there is room (scaled, the default), "
                                                     "or every instant one row (instants)")
    args = p.parse_args(argv)
    fmt = _choice(args.format, "--format", EXPORT_FORMATS)
    axis = _choice(args.axis, "--axis", AXES)
    start = INSTANT.check(parse_number(args.start, "--from"), "--from")
    stop = math.inf if args.stop is None else INSTANT.check(parse_number(args.stop, "--to"), "--to")
    if stop < start:
        raise InputError(f"--to ({stop:g}) is before --from ({start:g})")
    ranks = tuple(parse_whole(k, "--nodes", 1) for k in parse_list(args.nodes, "--nodes")) if args.nodes is not None else ()
    types = tuple(parse_list(args.types, "--types")) if args.types is not None else ()
    filters = Filters(start, stop, ranks, types, detector=not args.hide_detector)
    if args.output is not None:
        check_new(args.output, "export", args.overwrite)  # before the work, not after
    text = export(args.file, fmt, filters, axis)
    if args.output is None:
        _emit(text)
        return 0
    from .record.files import write_whole

    write_whole(args.output, "export", text.encode(), args.overwrite)
    _say(f"{args.output}: {fmt}, {len(text.encode()):,} bytes")
    return 0


def run_replay(argv: list[str]) -> int:
    p = _file_parser("replay")
    p.add_argument("--at", metavar="T|violation", help="open at the instant at or before T seconds, or at the first "
                   "violation (default: the end)")
    args = p.parse_args(argv)
    open_at = None
    if args.at is not None:
        open_at = "violation" if args.at.strip().lower() == "violation" else \
            INSTANT.check(parse_number(args.at, "--at"), "--at")
    app = replay_app(args.file, open_at=open_at)  # the file's first block is read and checked before anything else
    try:
        _need_a_terminal("replay shows a transcript in the terminal app", "to check one, use verify; to draw one, export")
    except InputError:
        app.timeline.close_files()
        raise
    app.run()
    return finished(app)


def run_hunt(argv: list[str]) -> int:
    from .hunt_command import run_hunt as run

    return run(argv)


def run_node(argv: list[str]) -> int:
    from .node_command import run_node as run

    return run(argv)


def run_merge(argv: list[str]) -> int:
    from .real.merge import merge
    from .real.traces import read_traces
    from .record.recorder import Recorder
    from .record.transcript import Header

    p = subcommand_parser("merge")
    p.add_argument("folders", nargs="+", metavar="DIR", help="each node's --state-dir (its trace.jsonl), every node's")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the transcript to write")
    p.add_argument("--overwrite", action="store_true", help="let -o replace an existing file")
    args = p.parse_args(argv)
    run = read_traces(args.folders)
    for where in run.cut_short:
        _say(f"bully-tui: warning: {where} was cut short (no newline: its node was killed writing it): left out")
    events = merge(run.algorithm, run.ids, run.config, [], run.traces, run.files)
    with Recorder.create(args.output, Header(run.algorithm, list(run.ids), 1, run.config, real=True),
                         args.overwrite) as recorder:
        recorder(events)
    _emit(f"{args.output}: {len(events):,} events from {len(run.ids)} nodes\n")
    return 0


def run_attach(argv: list[str]) -> int:
    from .node_command import parse_peers

    p = subcommand_parser("attach")
    p.add_argument("nodes", metavar="ID@HOST:PORT,...", help="every node of the cluster, and where it listens")
    peers = parse_peers(p.parse_args(argv).nodes, None, "the node list")
    _need_a_terminal("the live app draws on the terminal", "to read the nodes' traces afterwards, use bully-tui merge")
    from .real.attach import Attached
    from .run.session import Session
    from .ui.real_app import RealApp

    watching = Attached(peers)
    session = Session(watching.algorithm, len(watching.ids), 1, watching.config, given_ids=watching.ids)
    app = RealApp(session, watching=watching)
    app.run()
    if app.stopped_by is not None:
        return finished(app)
    if app.failure is not None:
        _say(f"bully-tui: error: {app.failure}")
        return 1
    return 0


SUBCOMMAND_RUNNERS = {"verify": run_verify, "replay": run_replay, "export": run_export, "hunt": run_hunt, "node": run_node,
                      "merge": run_merge, "attach": run_attach}


def _need_a_terminal(what: str, instead: str) -> None:
    """The live app draws a full screen and reads keys: into a pipe it would draw for
    nobody, and spin."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError(f"{what}, so standard input and output must be a terminal ({instead})")


def finished(app) -> int:
    """An app's exit status, saying why when it failed (one line, for bad input) or
    what signal ended it."""
    if app.stopped_by is not None:
        stop = interrupt.Stopped(app.stopped_by)
        stop.transcript = app.kept_transcript
        _say(interrupt.said(stop))
        return stop.status
    if app.failure:
        _say(app.failure)
    return app.return_code or 0


def replay_app(path: str, save_dir: str = ".", open_at: float | str | None = None):  # -> BullyApp (Textual loads only when wanted)
    """The app on a saved transcript, at its end (or `open_at`: a time, or "violation",
    once read). The file's first block is read first
    (an empty or bad file is one line, before any screen); the app reads the rest, showing
    its latest instant as it goes, and ends with one line if a later line is bad."""
    from .record.reader import Reader
    from .run.history import Loading
    from .run.session import Session
    from .ui.app import BullyApp

    with Reader.open(path) as reader:
        session = Session.of(reader.header, (), path)
    loading = Loading(path)
    try:
        loading.take(loading.read(1))
        if not loading.history.instants:
            raise InputError(f"{path} has a header but no events: nothing to replay")
    except BaseException:
        loading.close()
        raise
    return BullyApp(session, paused=True, save_dir=save_dir, loading=loading, open_at=open_at)


def _warn(session) -> None:
    """Settings that break an assumption: allowed, and said out loud."""
    for warning in session.config.warnings():
        _say(f"bully-tui: warning: {warning}")


def run_live(session, speed: float) -> int:
    if session.transcript is not None:
        check_new(session.transcript, "transcript", session.overwrite)  # fail now, not inside the app
    _need_a_terminal("the live app draws on the terminal", "for a run without a screen, use --headless")
    _warn(session)  # (after the checks: a refusal is one line)
    from .ui.app import BullyApp  # Textual loads only when the live app is wanted

    if session.transcript is not None:
        open_to_write(session.transcript, "transcript", session.overwrite).close()
        session = replace(session, overwrite=True)
    restart = None
    while True:
        app = BullyApp(session, speed=speed, again=restart)
        app.run()
        if app.restart_with is None:
            return finished(app)
        # The palette picked another algorithm: the same run again with it, the settings as
        # they were. A transcript goes to a new file beside the first, which stays as it was.
        restart, speed = app.restart_with, app.speed
        app = None
        release()
        transcript = session.transcript and free_path(session.transcript, restart.algorithm)
        workload = (session.workload or Workload()) if machine(restart.algorithm).mutex else None  # (a mutex's, kept)
        session = replace(session, algorithm=restart.algorithm, config=restart.config, transcript=transcript,
                          workload=workload)


def run_real_live(session) -> int:
    if session.transcript is not None:
        check_new(session.transcript, "transcript", session.overwrite)  # fail now, not inside the app
    _need_a_terminal("the live app draws on the terminal", "for a run without a screen, use --headless")
    from .ui.real_app import RealApp

    app = RealApp(session)
    app.run()
    if app.stopped_by is not None:
        return finished(app)
    if app.failure is not None:
        _say(f"bully-tui: error: {app.failure}")
        return 1
    if session.transcript is not None:
        _say(f"the real run is in {session.transcript} (bully-tui replay or export it)")
    return 0


def release() -> None:
    """What an app that has ended leaves (a whole run, whose objects refer to each other
    in cycles) is out of the collector's sight while it runs (ui/app.py, on_mount): free
    it before another starts in this process."""
    import gc

    gc.unfreeze()
    gc.collect()


def free_path(path: str, algorithm: str) -> str:
    """`run.jsonl` -> `run.ring.jsonl` (or `run.ring-2.jsonl`, ...): a name not yet taken."""
    p = Path(path)
    for n in range(1, 1000):
        candidate = p.with_name(f"{p.stem}.{algorithm}{'' if n == 1 else f'-{n}'}{p.suffix}")
        if not candidate.exists():
            return str(candidate)
    raise InputError(f"no free transcript name beside {path}")


if __name__ == "__main__":
    sys.exit(main())
