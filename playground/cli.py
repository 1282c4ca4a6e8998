"""`bully-tui`: the one entry point, live (the TUI) or `--headless` (virtual time).

Every argument is checked before anything runs. Bad input exits with status 2 and one
line that names the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from protocol import ALGORITHMS

from .commands import load_scenario, parse_at, parse_delay, parse_number
from .config import ClusterConfig, InputError, check_non_negative
from .session import Session, run_headless
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
    p.add_argument("--nodes", default="7", metavar="N", help=f"number of nodes, ids 1..N (1 to {MAX_NODES}; default 7)")
    p.add_argument("--algorithm", default="classic", metavar="NAME", help=f"one of: {', '.join(ALGORITHMS)} (default classic)")
    p.add_argument("--seed", default="1", metavar="S", help="seed for the link delays (default 1)")
    p.add_argument("--timeout", metavar="T", help="T, seconds to wait for an answer (default 4)")
    p.add_argument("--coordinator-timeout", metavar="T2", help="T', seconds to wait for the Coordinator (default 2T)")
    p.add_argument("--delay", metavar="MIN[:MAX]", help="link delay bounds in seconds (default 0.5:1.5)")
    p.add_argument("--probe-interval", metavar="P", help="seconds between probes of the coordinator; 0 is off (default 5)")
    p.add_argument("--until", metavar="SECONDS", help=f"headless: virtual seconds to run (default {DEFAULT_UNTIL:g})")
    p.add_argument("--speed", metavar="X", help="live: virtual seconds per real second (default 1)")
    p.add_argument("--at", action="append", default=[], metavar="'TIME COMMAND ARGS'", help="run a command at a time; repeatable")
    p.add_argument("--scenario", metavar="FILE", help="a file of 'TIME COMMAND ARGS' lines")
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


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, Session]:
    args = _parser().parse_args(argv)
    nodes = _whole_number(args.nodes, "--nodes", 1, MAX_NODES)
    seed = _whole_number(args.seed, "--seed", 0)
    if args.algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {args.algorithm!r} (choose from: {', '.join(ALGORITHMS)})")
    config = ClusterConfig()
    knobs = {
        "timeout": args.timeout,
        "coordinator_timeout": args.coordinator_timeout,
        "probe_interval": args.probe_interval,
    }
    numbers = {k: parse_number(v, "--" + k.replace("_", "-")) for k, v in knobs.items() if v is not None}
    if args.delay is not None:
        numbers["delay_min"], numbers["delay_max"] = parse_delay(args.delay)
    config = replace(config, **numbers)  # ClusterConfig checks the values itself
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
    ids = tuple(range(1, nodes + 1))
    commands = load_scenario(args.scenario, ids) if args.scenario else []
    commands += parse_at(args.at, ids)
    session = Session(args.algorithm, nodes, seed, config, tuple(commands), args.transcript, args.overwrite)
    return args, session


def main(argv: list[str] | None = None) -> int:
    try:
        args, session = parse_args(sys.argv[1:] if argv is None else argv)
        for warning in session.config.warnings():
            print(f"bully-tui: warning: {warning}", file=sys.stderr)
        if not args.headless:
            return run_live(session, args.speed or 1.0)
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
    app = BullyApp(session, speed=speed)
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
