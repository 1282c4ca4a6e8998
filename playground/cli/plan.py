"""`bully-tui [OPTIONS]`, the main command: its options, checked, as a typed plan of what
to run (the live app, a headless run, --compare, real nodes). A setting comes from the
command line, else the scenario file (`--scenario`), else its default; a bad value is
named as it was given (`--timeout`, or `d.scenario line 3: timeout`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protocol import ALGORITHMS, MUTEXES, machine

from ..core.command_lines import at_lines, parse_delay, parse_lines
from ..core.commands import USAGE, delay_refused, membership_refused, want_refused
from ..core.config import (
    INSTANT,
    MAX_NODES,
    MAX_SEED,
    SETTLE,
    ClusterConfig,
    Faults,
    InputError,
    Workload,
    check_drift,
    check_probability,
    parse_number,
    parse_whole,
    reorder_refused,
)
from ..core.ids import ID_KINDS, node_ids, ring_order
from ..record.scenario import Scenario, read_scenario
from ..record.transcript import Claim
from ..run.in_flight import MAX_IN_FLIGHT, MOST_ALLOWED
from ..run.session import Session
from .parser import (
    EVERY_MUTEX,
    HelpWhenShown,
    Parser,
    add_algorithm,
    add_faults,
    add_seed,
    add_timing,
    add_workload,
    choice,
    parse_hold,
    parse_switch,
    parse_think,
    timing_value,
)
from .subcommands import SUBCOMMANDS

DEFAULT_UNTIL = 60.0
COMPARE_FORMATS = ("markdown", "json")
DEFAULTS = {"algorithm": "classic", "nodes": "7", "ids": "seq", "seed": "1"}
# What --compare does not use: it runs its own scenario, on ids 1..N, to its own limit,
# and writes no transcript (and the ring algorithms over several orders of its own).
NOT_FOR_COMPARE = ("scenario", "at", "transcript", "overwrite", "until", "settle", "ids", "speed", "cs_think", "cs_hold",
                   "ring", "max_in_flight")


def on_a_ring() -> str:
    """"ring and hs": the algorithms whose nodes form a ring (each module imported)."""
    return " and ".join(name for name, cls in ALGORITHMS.items() if cls.on_a_ring)


@dataclass(frozen=True)
class Compare:
    """--compare: every algorithm (or the one named) for every size (or the one named)."""

    sizes: tuple[int, ...] | None  # None: compare.SIZES
    algorithms: tuple[str, ...] | None  # None: every one
    mutexes: tuple[str, ...] | None  # with --mutex: the locks to compare (and the election beside them)
    format: str = "markdown"


@dataclass(frozen=True)
class RunPlan:
    """What the main command is asked to do, every argument checked."""

    session: Session
    live: bool  # the app (else --headless)
    real: bool = False  # real node processes (--real)
    speed: float = 1.0  # live: virtual seconds per real second
    until: float | None = None  # headless: virtual (real: wall) seconds to run; None: the default
    compare: Compare | None = None
    by_hand: bool = False  # live: the user is the network from the start (--by-hand)
    max_in_flight: int = MAX_IN_FLIGHT  # headless: stop once more messages are in flight (0: never)


def parser() -> Parser:
    p = Parser(
        prog="bully-tui",
        description="A playground for leader election: N nodes elect a coordinator, live in the terminal "
                    "(or --headless, in virtual time).",
        epilog="subcommands:\n" + "\n".join(f"  bully-tui {name} {sub.args}  {sub.what}" for name, sub in SUBCOMMANDS.items())
               + "\n  (bully-tui SUBCOMMAND --help for each)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--headless", action="store_true", help="run in virtual time without the UI and print a JSON summary")
    p.add_argument("--nodes", metavar="N", help=f"number of nodes (1 to {MAX_NODES}; default {DEFAULTS['nodes']})")
    p.add_argument("--ids", metavar="KIND", help="node ids: seq (1..N, the default) or uuid (random 128-bit, from the seed)")
    add_algorithm(p, every_mutex=True)
    p.add_argument("--ring", metavar="ORDER", action=HelpWhenShown, help=lambda: (
        f"{on_a_ring()}: the order of the nodes round the ring: sorted (each node's successor is the next higher id; "
        "the default), reversed, shuffled (from the seed), or ranks K,L,... (every node once); a node that joins "
        "goes after the last"))
    add_workload(p)
    add_seed(p, "seed for the link delays and uuid ids")
    add_timing(p, ClusterConfig())
    add_faults(p)
    p.add_argument("--settle", metavar="C", help="SLE2: seconds after a crash or recovery by which all must agree "
                   "(default from T, P, delay, N)")
    p.add_argument("--until", metavar="SECONDS", help=f"headless: virtual seconds to run (default {DEFAULT_UNTIL:g})")
    p.add_argument("--max-in-flight", metavar="N", help="headless: stop the run, its summary and transcript whole, "
                   "once more than N messages are in flight (a storm that never settles); 0: no bound "
                   f"(default {MAX_IN_FLIGHT:,})")
    p.add_argument("--speed", metavar="X", help="live: virtual seconds per real second (default 1)")
    p.add_argument("--by-hand", action="store_true", help="live: you are the network from the start: nothing arrives "
                   "and no timer fires until you say (deliver, drop, duplicate, fire; b gives it back to the clock)")
    p.add_argument("--at", action="append", default=[], metavar="'TIME COMMAND ARGS'",
                   help="run a command at a time (virtual seconds); repeatable. COMMAND ARGS is one of: "
                        + ", ".join(USAGE.values()) + " (K, L: a node's rank, 1..N; T: seconds)")
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


def plan(argv: list[str], scenario: Scenario | None = None) -> RunPlan:
    """`scenario`: one already read (a lesson's step's setup, record/lesson.py), as if
    given by --scenario."""
    args = parser().parse_args(argv)
    if args.compare:
        _check_compare(args)
    elif args.format is not None:
        raise InputError("--format only applies to --compare")
    if args.scenario is not None:
        scenario = read_scenario(args.scenario)
    setting = _settings(args, scenario)

    nodes = setting("nodes", lambda v, what: parse_whole(v, what, 1, MAX_NODES))
    seed = setting("seed", lambda v, what: parse_whole(v, what, 0, MAX_SEED))
    algorithm = setting("algorithm", lambda v, what: choice(v, what, tuple(ALGORITHMS)))
    id_kind = setting("ids", lambda v, what: choice(v, what, ID_KINDS))
    numbers = {}
    for name in ("timeout", "coordinator-timeout", "probe-interval"):
        value = setting(name, lambda v, what, name=name: timing_value(name, v, what))
        if value is not None:
            numbers[name.replace("-", "_")] = value
    settle = setting("settle", lambda v, what: SETTLE.check(parse_number(v, what), what))
    if settle is not None:
        numbers["settle"] = settle
    delay = setting("delay", parse_delay)
    if delay is not None:
        numbers["delay_min"], numbers["delay_max"] = delay
    config = ClusterConfig(**numbers)  # every value is checked by now
    config = replace(config, faults=_faults(args, scenario, setting, config))
    until, ends = _until(args, scenario, setting)
    speed = _speed(args)
    mutex = setting("mutex", lambda v, what: v if v == EVERY_MUTEX else choice(v, what, tuple(MUTEXES)))
    compare = None
    if args.compare:  # (its runs make their own sessions: compare.py, compare_mutex.py)
        mutexes = None if mutex is None else tuple(MUTEXES) if mutex == EVERY_MUTEX else (mutex,)
        if mutexes and config.faults.any:
            raise InputError("--compare --mutex does not take --loss, --duplicate, --reorder or --drift (yet): "
                             "--compare without --mutex runs the elections with them")
        for name in mutexes or ():
            if why := delay_refused(f"{algorithm}+{name}", config.delay_max):
                raise InputError(f"--delay: {why}")
        fmt = "markdown" if args.format is None else choice(args.format, "--format", COMPARE_FORMATS)
        compare = Compare(None if args.nodes is None else (nodes,), None if args.algorithm is None else (algorithm,),
                          mutexes, fmt)
        mutex = None
    elif mutex == EVERY_MUTEX:
        raise InputError(f"--mutex needs a name (one of: {', '.join(MUTEXES)}); with no name, only with --compare")
    workload = _workload(args, scenario, setting, mutex)
    if mutex is not None:
        algorithm = f"{algorithm}+{mutex}"
        if why := delay_refused(algorithm, config.delay_max):
            raise InputError(f"--mutex {mutex}: {why}: give --delay above 0")
    ids = node_ids(id_kind, nodes, seed)
    if (args.ring is not None or _set(scenario, "ring")) and not machine(algorithm).on_a_ring:
        where = "--ring" if args.ring is not None else f"{scenario.settings['ring'][1]}: ring"
        raise InputError(f"{where} applies to {on_a_ring()} only: {algorithm}'s nodes do not form a ring")
    config = replace(config, ring=setting("ring", lambda v, what: ring_order(v, ids, seed, what)))
    lines = scenario.lines_to_run() if scenario else []
    commands = parse_lines(lines + at_lines(args.at), ids, seed, ends)
    _check_commands(commands, algorithm)
    if args.real:
        config = _check_real(args, commands, config, nodes, id_kind)
    claim = Claim(Path(scenario.path).name, scenario.claim) if scenario is not None and scenario.claim else None
    session = Session(algorithm, nodes, seed, config, tuple(commands), args.transcript, args.overwrite, id_kind,
                      workload=workload, claim=claim)
    if args.by_hand and (args.headless or args.real):
        raise InputError(f"--by-hand is for the live app, where you are the network: not with "
                         f"{'--headless' if args.headless else '--real'}")
    return RunPlan(session, live=not args.headless, real=args.real, speed=speed or 1.0, until=until, compare=compare,
                   by_hand=args.by_hand, max_in_flight=_max_in_flight(args))


def _settings(args: argparse.Namespace, scenario: Scenario | None) -> Callable[[str, Callable[[str, str], Any]], Any]:
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

    return setting


def _faults(args: argparse.Namespace, scenario: Scenario | None, setting, config: ClusterConfig) -> Faults:
    """--loss, --duplicate, --reorder and --drift (or the scenario's), checked; --reorder
    needs a delay range, or nothing could overtake."""
    values = {}
    for name, check in (("loss", check_probability), ("duplicate", check_probability), ("drift", check_drift)):
        value = setting(name, lambda v, what, check=check: check(parse_number(v, what), what))
        if value is not None:
            values[name] = value
    where = "--reorder"
    if not args.reorder and _set(scenario, "reorder"):
        text, line = scenario.settings["reorder"]
        where = f"{line}: reorder"
        try:
            args.reorder = parse_switch(text, "reorder")
        except InputError as e:
            raise InputError(f"{line}: {e}") from None
    if args.reorder:
        if why := reorder_refused(config.delay_min, config.delay_max):
            raise InputError(f"{where}: {why.removeprefix('--reorder ')}")
        values["reorder"] = True
    return Faults(**values)


def _check_compare(args: argparse.Namespace) -> None:
    if not args.headless:
        raise InputError("--compare only applies with --headless")
    unused = [f"--{name.replace('_', '-')}" for name in NOT_FOR_COMPARE if getattr(args, name) not in (None, False, [])]
    if unused:
        scenario = "its own workload" if args.mutex is not None else "its own scenario (the leader crashes once all agree)"
        raise InputError(f"--compare runs {scenario} and does not use {', '.join(unused)}")
    if args.delay is None:
        # PROTOCOLS.md counts with a constant delay. (Jitter also makes classic's
        # start-up at N = 64 a storm of millions of messages.)
        args.delay = "1"


def _until(args: argparse.Namespace, scenario: Scenario | None, setting) -> tuple[float | None, tuple[float, str] | None]:
    """A headless run's end as given (None: the default), and when it ends and what
    says so (a command after it would never run)."""
    if args.until is not None and not args.headless:
        raise InputError("--until only applies with --headless (the live app runs until you quit)")
    if not args.headless or args.compare:  # (a scenario's `set until` is for these; the live app runs until you quit)
        return None, None
    source = "--until" if args.until is not None else "the scenario's until" if _set(scenario, "until") else None
    if source is None:
        return None, (DEFAULT_UNTIL, "--until's default")
    until = setting("until", lambda v, what: INSTANT.check(parse_number(v, what), what))
    return until, (until, source)


def _max_in_flight(args: argparse.Namespace) -> int:
    if args.max_in_flight is None:
        return MAX_IN_FLIGHT
    if not args.headless or args.real:
        raise InputError("--max-in-flight only applies with --headless, in virtual time "
                         f"({'real nodes hold their own messages' if args.real else 'the live app runs until you quit'})")
    return parse_whole(args.max_in_flight, "--max-in-flight", 0, MOST_ALLOWED)


def _speed(args: argparse.Namespace) -> float | None:
    if args.speed is None:
        return None
    if args.headless:
        raise InputError("--speed only applies to the live app (--headless runs as fast as it can)")
    speed = parse_number(args.speed, "--speed")
    if not 0 < speed <= 1000:
        raise InputError(f"--speed must be above 0 and at most 1000, not {speed:g}")
    return speed


def _workload(args: argparse.Namespace, scenario: Scenario | None, setting, mutex: str | None) -> Workload | None:
    if mutex is None:
        for name in ("cs-think", "cs-hold"):
            if getattr(args, name.replace("-", "_")) is not None or _set(scenario, name):
                raise InputError(f"--{name} only applies with --mutex")
        return None
    default = Workload()
    think = setting("cs-think", parse_think) \
        if args.cs_think is not None or _set(scenario, "cs-think") else default.think  # (None: asked by want only)
    return Workload(think, setting("cs-hold", parse_hold) or default.hold)


def _check_real(args: argparse.Namespace, commands: list, config: ClusterConfig, nodes: int, id_kind: str) -> ClusterConfig:
    """What a real run (--real) cannot do yet, refused; its delay is a hold on each
    message, none unless asked."""
    from ..real.cluster import REAL_COMMANDS, REAL_MOST_NODES

    if args.compare or id_kind != "seq" or args.speed is not None or config.ring is not None:
        what = "--compare" if args.compare else "--ids uuid" if id_kind != "seq" else "--speed" \
            if args.speed is not None else "--ring"
        raise InputError(f"--real does not take {what}")
    for s in commands:
        if s.command.name not in REAL_COMMANDS:
            raise InputError(f"--real: a real cluster takes {', '.join(REAL_COMMANDS)}; not {s.command.name} (yet)")
    if nodes > REAL_MOST_NODES:
        raise InputError(f"--real: at most {REAL_MOST_NODES} node processes, not {nodes}")
    if config.faults.reorder:
        raise InputError("--real does not take --reorder: TCP hands each connection's messages over in the order sent, "
                         "so real links reorder nothing")
    return config if args.delay is not None else replace(config, delay_min=0.0, delay_max=0.0)


def _check_commands(commands: list, algorithm: str) -> None:
    """Commands the algorithm cannot take: join and leave where its members are fixed,
    want without a mutex, a delay of 0 where a mutex's messages never rest."""
    for s in commands:
        name = s.command.name
        if s.command.membership and (why := membership_refused(algorithm)):
            raise InputError(f"{name} at {s.at:g} s: {why}")
        if name == "want" and (why := want_refused(algorithm)):
            raise InputError(f"{name} at {s.at:g} s: {why}")
        if name == "delay" and (why := delay_refused(algorithm, s.command.high)):
            raise InputError(f"delay at {s.at:g} s: {why}")


def _set(scenario: Scenario | None, name: str) -> bool:
    return scenario is not None and name in scenario.settings
