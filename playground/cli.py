"""`bully-tui`: the one entry point, live (the TUI) or `--headless` (virtual time).

Every argument is checked before anything runs. Bad input exits with status 2 and one
line that names the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from protocol import ALGORITHMS

from .commands import SETTINGS, parse_at, parse_delay, parse_number, read_scenario
from .compare import FORMATS, SIZES, compare, json_lines, table
from .config import ClusterConfig, InputError, check_non_negative
from .session import ID_KINDS, Session, node_ids, run_headless
from .transcript import open_for_writing

MAX_NODES = 1000
DEFAULT_UNTIL = 60.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own: one line instead of usage + error
        raise InputError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="bully-tui",
        description="Watch N nodes elect a coordinator with the Bully algorithm.",
    )
    p.add_argument("--headless", action="store_true", help="run in virtual time without the UI and print a JSON summary")
    p.add_argument("--nodes", metavar="N", help=f"number of nodes (1 to {MAX_NODES}; default 7)")
    p.add_argument("--ids", metavar="KIND", help="node ids: seq (1..N, the default) or uuid (random 128-bit, from the seed)")
    p.add_argument("--algorithm", metavar="NAME", help=f"one of: {', '.join(ALGORITHMS)} (default classic)")
    p.add_argument("--seed", metavar="S", help="seed for the link delays and uuid ids (default 1)")
    p.add_argument("--timeout", metavar="T", help="T, seconds to wait for an answer (default 4)")
    p.add_argument("--coordinator-timeout", metavar="T2", help="T', seconds to wait for the Coordinator (default 2T)")
    p.add_argument("--delay", metavar="MIN[:MAX]", help="link delay bounds in seconds (default 0.5:1.5)")
    p.add_argument("--probe-interval", metavar="P", help="seconds between probes of the coordinator; 0 is off (default 5)")
    p.add_argument("--settle", metavar="C", help="SLE2: seconds after a crash or recovery by which all must agree (default from T, P, delay, N)")
    p.add_argument("--until", metavar="SECONDS", help=f"headless: virtual seconds to run (default {DEFAULT_UNTIL:g})")
    p.add_argument("--speed", metavar="X", help="live: virtual seconds per real second (default 1)")
    p.add_argument("--at", action="append", default=[], metavar="'TIME COMMAND ARGS'", help="run a command at a time; repeatable")
    p.add_argument("--scenario", metavar="FILE", help="a file of 'TIME COMMAND ARGS' and 'set OPTION VALUE' lines (scenarios/)")
    p.add_argument("--compare", action="store_true",
                   help="headless: crash the leader once all agree, on every algorithm (or --algorithm) for N = 4..64 "
                        "(or --nodes), and print a table")
    p.add_argument("--format", metavar="FORMAT", help=f"--compare's output: {' or '.join(FORMATS)} (one JSON object per row)")
    p.add_argument("--transcript", metavar="FILE", help="record everything to FILE (JSON Lines)")
    p.add_argument("--overwrite", action="store_true", help="let --transcript replace an existing file")
    return p


def _whole_number(text: str, what: str, low: int, high: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{what} must be a whole number, not {text!r}") from None
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise InputError(f"{what} must be {bounds}, not {value}")
    return value


DEFAULTS = {"algorithm": "classic", "nodes": "7", "ids": "seq", "seed": "1"}
# What --compare does not use: it runs its own scenario, on ids 1..N, to its own limit,
# and writes no transcript.
NOT_FOR_COMPARE = ("scenario", "at", "transcript", "overwrite", "until", "settle", "ids", "speed")


def _check_compare(args: argparse.Namespace) -> None:
    if not args.headless:
        raise InputError("--compare only applies with --headless")
    unused = [f"--{name}" for name in NOT_FOR_COMPARE if getattr(args, name) not in (None, False, [])]
    if unused:
        raise InputError(f"--compare runs its own scenario (the leader crashes once all agree) and does not use "
                         f"{', '.join(unused)}")
    if args.format is not None and args.format not in FORMATS:
        raise InputError(f"unknown --format {args.format!r} (choose from: {', '.join(FORMATS)})")
    args.sizes = SIZES if args.nodes is None else None  # None: the one size --nodes gives
    args.algorithms = None if args.algorithm is None else (args.algorithm,)
    if args.delay is None:
        # PROTOCOLS.md counts with a constant delay. (Jitter also makes classic's
        # start-up at N = 64 a storm of millions of messages: see the README.)
        args.delay = "1"


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, Session]:
    args = _parser().parse_args(argv)
    if args.compare:
        _check_compare(args)
    elif args.format is not None:
        raise InputError("--format only applies to --compare")
    scenario = read_scenario(args.scenario) if args.scenario else None
    # Where each value came from, so that a bad one from a scenario names its line.
    origin: dict[str, str] = {}
    for name in SETTINGS:
        attr = name.replace("-", "_")
        if getattr(args, attr) is None:
            if scenario is not None and name in scenario.settings:
                value, origin[attr] = scenario.settings[name]
                setattr(args, attr, value)
            elif attr in DEFAULTS:
                setattr(args, attr, DEFAULTS[attr])

    def checked(attr: str, parse):
        try:
            return parse(getattr(args, attr))
        except InputError as e:
            raise InputError(f"{origin[attr]}: {e}" if attr in origin else str(e)) from None

    nodes = checked("nodes", lambda v: _whole_number(v, "--nodes", 1, MAX_NODES))
    seed = checked("seed", lambda v: _whole_number(v, "--seed", 0))
    checked("algorithm", _check_algorithm)
    checked("ids", _check_ids)
    numbers = {}
    for attr in ("timeout", "coordinator_timeout", "probe_interval", "settle"):
        if getattr(args, attr) is not None:
            numbers[attr] = checked(attr, lambda v, attr=attr: parse_number(v, "--" + attr.replace("_", "-")))
    if args.delay is not None:
        numbers["delay_min"], numbers["delay_max"] = checked("delay", parse_delay)
    try:
        config = ClusterConfig(**numbers)  # it checks the values itself
    except InputError as e:
        # Name the scenario only if it set one of the values the config checks.
        from_scenario = scenario and origin.keys() & {*numbers, "delay"}
        raise InputError(f"{scenario.path}: {e}" if from_scenario else str(e)) from None
    if args.until is not None:
        if not args.headless:
            raise InputError("--until only applies with --headless (the live app runs until you quit)")
        args.until = parse_number(args.until, "--until")
        check_non_negative("--until", args.until)
    if args.speed is not None:
        if args.headless:
            raise InputError("--speed only applies to the live app (--headless runs as fast as it can)")
        args.speed = parse_number(args.speed, "--speed")
        if not 0 < args.speed <= 1000:
            raise InputError(f"--speed must be above 0 and at most 1000, not {args.speed:g}")
    ids = node_ids(args.ids, nodes, seed)
    commands = scenario.commands(ids) if scenario else []
    commands += parse_at(args.at, ids)
    session = Session(args.algorithm, nodes, seed, config, tuple(commands), args.transcript, args.overwrite, args.ids)
    return args, session


def _check_algorithm(name: str) -> None:
    if name not in ALGORITHMS:
        raise InputError(f"unknown algorithm {name!r} (choose from: {', '.join(ALGORITHMS)})")


def _check_ids(kind: str) -> None:
    if kind not in ID_KINDS:
        raise InputError(f"unknown --ids {kind!r} (choose from: {', '.join(ID_KINDS)})")


def main(argv: list[str] | None = None) -> int:
    try:
        args, session = parse_args(sys.argv[1:] if argv is None else argv)
        for warning in session.config.warnings():
            print(f"bully-tui: warning: {warning}", file=sys.stderr)
        if not args.headless:
            return run_live(session, args.speed or 1.0)
        if args.compare:
            results = compare(session.config, session.seed, args.sizes or (session.nodes,), args.algorithms)
            print(json_lines(results) if args.format == "json" else table(results, session.config))
            return 0
        summary = run_headless(session, DEFAULT_UNTIL if args.until is None else args.until)
    except InputError as e:
        print(f"bully-tui: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bully-tui: interrupted", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


def run_live(session: Session, speed: float) -> int:
    from .ui.app import BullyApp  # Textual loads only when the live app is wanted

    if session.transcript is not None:
        open_for_writing(session.transcript, session.overwrite).close()  # fail now, not inside the app
        session = replace(session, overwrite=True)
    while True:
        app = BullyApp(session, speed=speed)
        app.run()
        if app.restart_with is None:
            return app.return_code or 0
        # The palette picked another algorithm: the same run again with it. A transcript
        # goes to a new file beside the first, which stays as it was.
        transcript = session.transcript and free_path(session.transcript, app.restart_with)
        session = replace(session, algorithm=app.restart_with, transcript=transcript)
        speed = app.speed


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
