"""`bully-tui`: the one entry point, live (the TUI) or `--headless` (virtual time).

Every argument is checked before anything runs. Bad input exits with status 2 and one
line that names the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from protocol import ALGORITHMS

from .commands import (
    MEMBERSHIP_COMMANDS,
    at_lines,
    membership_refused,
    parse_delay,
    parse_lines,
    parse_number,
    read_scenario,
)
from .compare import FORMATS, SIZES, compare, json_lines, table
from .config import COORDINATOR_TIMEOUT, INSTANT, PROBE_INTERVAL, SETTLE, TIMEOUT, ClusterConfig, InputError
from .export import FORMATS as EXPORT_FORMATS
from .export import Filters, export, parse_list
from .files import check_new, open_to_write, write_whole
from .ids import ID_KINDS, node_ids
from .session import Interrupted, Session, run_headless
from .transcript import Reader, WriteError
from .verify import Different, verify

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
            raise InputError(f"{where}: {e}" if where else str(e)) from None

    nodes = setting("nodes", lambda v, what: _whole_number(v, what, 1, MAX_NODES))
    seed = setting("seed", lambda v, what: _whole_number(v, what, 0))
    args.algorithm = setting("algorithm", _algorithm)
    args.ids = setting("ids", _id_kind)
    numbers = {}
    for name, time_range in (("timeout", TIMEOUT), ("coordinator-timeout", COORDINATOR_TIMEOUT),
                             ("probe-interval", PROBE_INTERVAL), ("settle", SETTLE)):
        value = setting(name, lambda v, what, r=time_range: r.check(parse_number(v, what), what))
        if value is not None:
            numbers[name.replace("-", "_")] = value
    delay = setting("delay", lambda v, _: parse_delay(v))
    if delay is not None:
        numbers["delay_min"], numbers["delay_max"] = delay
    config = ClusterConfig(**numbers)  # every value is checked by now
    if args.until is not None:
        if not args.headless:
            raise InputError("--until only applies with --headless (the live app runs until you quit)")
        args.until = INSTANT.check(parse_number(args.until, "--until"), "--until")
    if args.speed is not None:
        if args.headless:
            raise InputError("--speed only applies to the live app (--headless runs as fast as it can)")
        args.speed = parse_number(args.speed, "--speed")
        if not 0 < args.speed <= 1000:
            raise InputError(f"--speed must be above 0 and at most 1000, not {args.speed:g}")
    ids = node_ids(args.ids, nodes, seed)
    lines = scenario.lines_to_run() if scenario else []
    commands = parse_lines(lines + at_lines(args.at), ids, seed)
    _check_membership(commands, args.algorithm)
    session = Session(args.algorithm, nodes, seed, config, tuple(commands), args.transcript, args.overwrite, args.ids)
    return args, session


def _check_membership(commands: list, algorithm: str) -> None:
    for s in commands:
        name = s.command.name
        if name in MEMBERSHIP_COMMANDS and (why := membership_refused(algorithm)):
            raise InputError(f"{name} at {s.at:g} s: {why}")


def _algorithm(name: str, what: str) -> str:
    if name not in ALGORITHMS:
        raise InputError(f"unknown {what.removeprefix('--')} {name!r} (choose from: {', '.join(ALGORITHMS)})")
    return name


def _id_kind(kind: str, what: str) -> str:
    if kind not in ID_KINDS:
        raise InputError(f"unknown {what} {kind!r} (choose from: {', '.join(ID_KINDS)})")
    return kind


SUBCOMMANDS = {
    "verify": "bully-tui verify FILE: re-create a transcript from its header and commands, and compare every event",
    "replay": "bully-tui replay FILE: open a transcript in the app, at its end; go back in time, and branch",
    "export": "bully-tui export FILE --format svg|mermaid|shiviz [-o OUT [--overwrite]] [--from T] [--to T] "
              "[--nodes K,...] [--types T,...]: a transcript as a space-time diagram",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return _subcommand(argv[0], argv[1:])
    session = None
    try:
        args, session = parse_args(argv)
        for warning in session.config.warnings():
            print(f"bully-tui: warning: {warning}", file=sys.stderr)
        if not args.headless:
            return run_live(session, args.speed or 1.0)
        if args.compare:
            results = compare(session.config, session.seed, args.sizes or (session.nodes,), args.algorithms)
            print(json_lines(results) if args.format == "json" else table(results, session.config))
            return 0
        until = DEFAULT_UNTIL if args.until is None else args.until
        summary = run_headless(session, until, progress=sys.stderr.isatty())
    except (InputError, WriteError) as e:
        return _failed(e)
    except (Interrupted, KeyboardInterrupt) as e:
        at = f" at t={e.t:g} s" if isinstance(e, Interrupted) else ""
        kept = f"; the transcript so far is in {session.transcript}" if session and session.transcript else ""
        print(f"bully-tui: interrupted{at}{kept}", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


def _failed(e: InputError | WriteError) -> int:
    """One line for what went wrong, and the exit status it means: 2 for bad input, 1 for
    a file that could not be written."""
    print(f"bully-tui: error: {e}", file=sys.stderr)
    return 2 if isinstance(e, InputError) else 1


def _subcommand(name: str, rest: list[str]) -> int:
    if name == "export":
        try:
            return run_export(rest)
        except (InputError, WriteError) as e:
            return _failed(e)
    if len(rest) != 1 or rest[0].startswith("-"):
        print(f"bully-tui: error: usage: {SUBCOMMANDS[name]}", file=sys.stderr)
        return 2
    path = rest[0]
    try:
        if name == "replay":
            return run_replay(path)
        count = verify(path)
    except (InputError, WriteError) as e:  # (a replay's branch writes a transcript)
        return _failed(e)
    except Different as e:
        print(f"bully-tui: different: {e}", file=sys.stderr)
        return 1
    print(f"{path}: identical, {count:,} events")
    return 0


def run_export(argv: list[str]) -> int:
    p = _Parser(prog="bully-tui export", description=SUBCOMMANDS["export"])
    p.add_argument("file")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    p.add_argument("-o", "--output", help="the file to write (default: standard output)")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--from", dest="start", default="0")
    p.add_argument("--to", dest="stop")
    p.add_argument("--nodes", help="nodes by rank, 1 the lowest id: 1,2,5")
    p.add_argument("--types", help="message types by name: Election,Coordinator")
    args = p.parse_args(argv)
    start = INSTANT.check(parse_number(args.start, "--from"), "--from")
    stop = math.inf if args.stop is None else INSTANT.check(parse_number(args.stop, "--to"), "--to")
    if stop < start:
        raise InputError(f"--to ({stop:g}) is before --from ({start:g})")
    filters = Filters(start, stop, parse_list(args.nodes, "--nodes", int) if args.nodes else (),
                      parse_list(args.types, "--types", str) if args.types else ())
    if args.output is not None:
        check_new(args.output, "export", args.overwrite)  # before the work, not after
    text = export(args.file, args.format, filters)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    write_whole(args.output, "export", text.encode(), args.overwrite)
    print(f"{args.output}: {args.format}, {len(text.encode()):,} bytes", file=sys.stderr)
    return 0


def run_replay(path: str) -> int:
    app = replay_app(path)
    app.run()
    return finished(app)


def finished(app) -> int:
    """An app's exit status, saying why when it failed (one line, for bad input)."""
    if app.failure:
        print(app.failure, file=sys.stderr)
    return app.return_code or 0


def replay_app(path: str, save_dir: str = "."):  # -> BullyApp (Textual loads only when wanted)
    """The app on a saved transcript, at its end. The file's first block is read first
    (an empty or bad file is one line, before any screen); the app reads the rest, showing
    its latest instant as it goes, and ends with one line if a later line is bad."""
    from .ui.app import BullyApp
    from .ui.history import Loading
    from .ui.model import ClusterModel

    with Reader.open(path) as reader:
        session = Session.of(reader.header, (), path)
    loading = Loading(path, ClusterModel(session.ids, session.worst_case_messages, session.config))
    try:
        loading.take(loading.read(1))
        if not loading.history.instants:
            raise InputError(f"{path} has a header but no events: nothing to replay")
    except BaseException:
        loading.close()
        raise
    return BullyApp(session, paused=True, save_dir=save_dir, loading=loading)


def run_live(session: Session, speed: float) -> int:
    from .ui.app import BullyApp  # Textual loads only when the live app is wanted

    if session.transcript is not None:
        open_to_write(session.transcript, "transcript", session.overwrite).close()  # fail now, not inside the app
        session = replace(session, overwrite=True)
    while True:
        app = BullyApp(session, speed=speed)
        app.run()
        if app.restart_with is None:
            return finished(app)
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
