"""The command line's parsing, shared by every subcommand: argparse with one line for an
error, and the options several commands take, each declared once here with its default
taken from the configuration (core/config.py), and parsed by one function."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.config import (
    COORDINATOR_TIMEOUT,
    CS_HOLD,
    CS_THINK,
    MAX_SEED,
    PROBE_INTERVAL,
    TIMEOUT,
    ClusterConfig,
    InputError,
    TimeRange,
    Workload,
    parse_number,
    parse_whole,
    shown,
)
from . import output

ALGORITHM_DEFAULT = "classic"


class HelpWhenShown(argparse.Action):
    """An option taking one value, whose help is a function called when --help shows it:
    a help that names algorithms by what they declare would otherwise import every one
    of them to build the parser, for each command, even one refused at once."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)

    @property
    def help(self) -> str | None:
        return self._help() if callable(self._help) else self._help

    @help.setter
    def help(self, text: Any) -> None:
        self._help = text


class Parser(argparse.ArgumentParser):
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
            output.emit(message)
        else:
            output.say(message.rstrip("\n"))

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


def subcommand_parser(name: str, description: str, usage: str) -> Parser:
    return Parser(prog=f"bully-tui {name}", description=description, usage=usage)


def choice(text: str, what: str, choices: tuple[str, ...]) -> str:
    """A name from `choices`, in any case."""
    name = text.strip().lower()
    if name not in choices:
        raise InputError(f"unknown {what} {shown(text)} (choose from: {', '.join(choices)})")
    return name


def given(value: str | None, default: str) -> str:
    """An option's value as given (an empty one is bad, not absent), or its default."""
    return default if value is None else value


# --- the options several commands take ------------------------------------------------------


EVERY_MUTEX = "every"  # --mutex with no name: with --compare, all of them


def add_algorithm(p: argparse._ActionsContainer, *, every_mutex: bool = False) -> None:
    """--algorithm and --mutex; `every_mutex`: --mutex may come without a name (--compare's)."""
    from protocol import ALGORITHMS, MUTEXES  # (imported by the commands that take an algorithm only)

    p.add_argument("--algorithm", metavar="NAME", help=f"one of: {', '.join(ALGORITHMS)} (default {ALGORITHM_DEFAULT})")
    every = {"nargs": "?", "const": EVERY_MUTEX} if every_mutex else {}
    p.add_argument("--mutex", metavar="NAME", **every,
                   help=f"mutual exclusion beside the election: {', '.join(MUTEXES)} (default none)"
                   + ("; with --compare and no NAME, all four" if every_mutex else ""))


def algorithm_of(args: argparse.Namespace) -> str:
    """The machine's name, "classic" or "classic+central", checked."""
    from protocol import ALGORITHMS, MUTEXES

    election = choice(given(args.algorithm, ALGORITHM_DEFAULT), "--algorithm", tuple(ALGORITHMS))
    if args.mutex is None:
        return election
    return f"{election}+{choice(args.mutex, '--mutex', tuple(MUTEXES))}"


def add_workload(p: argparse._ActionsContainer) -> None:
    default = Workload()
    p.add_argument("--cs-think", metavar="A[:B]", help="with --mutex: seconds a node thinks before it wants the critical "
                   f"section, drawn in A..B; none: only the want command asks (default {_span(default.think)})")
    p.add_argument("--cs-hold", metavar="A[:B]", help="with --mutex: seconds a node holds the critical section "
                   f"(default {_span(default.hold)})")


def workload_of(args: argparse.Namespace, mutex: bool) -> Workload | None:
    """The workload a mutex runs with (None without a mutex; its options refused then)."""
    if not mutex:
        for name in ("cs-think", "cs-hold"):
            if getattr(args, name.replace("-", "_")) is not None:
                raise InputError(f"--{name} only applies with --mutex")
        return None
    default = Workload()
    return Workload(default.think if args.cs_think is None else parse_think(args.cs_think, "--cs-think"),
                    default.hold if args.cs_hold is None else parse_hold(args.cs_hold, "--cs-hold"))


def add_timing(p: argparse._ActionsContainer, defaults: ClusterConfig, *, delay: str | None = None) -> None:
    """--timeout, --coordinator-timeout, --probe-interval and --delay, their defaults those
    of `defaults` (the command's own configuration). `delay`: what --delay means, where it
    is not the links' delay bounds."""
    p.add_argument("--timeout", metavar="T", help=f"T, seconds to wait for an answer (default {defaults.timeout:g})")
    p.add_argument("--coordinator-timeout", metavar="T2", help="T', seconds to wait for the Coordinator (default "
                   + ("2T" if defaults.coordinator_timeout is None else f"{defaults.coordinator_timeout:g}") + ")")
    p.add_argument("--probe-interval", metavar="P", help="seconds between probes of the coordinator; 0 is off "
                   f"(default {defaults.probe_interval:g})")
    bounds = f"{defaults.delay_min:g}" if defaults.delay_min == defaults.delay_max else \
        f"{defaults.delay_min:g}:{defaults.delay_max:g}"
    p.add_argument("--delay", metavar="MIN[:MAX]" if delay is None else "S",
                   help=f"{delay or 'link delay bounds in seconds'} (default {bounds})")


def add_faults(p: argparse._ActionsContainer, *, reorder: bool = True) -> None:
    """--loss, --duplicate, --reorder and --drift: the model's assumptions, broken on
    purpose (`reorder`: whether links can reorder; a real node's TCP cannot)."""
    p.add_argument("--loss", metavar="P", help="links lose each message with probability P, drawn from the seed "
                   "(default 0: lossless; the lossy K L P command sets one link's)")
    p.add_argument("--duplicate", metavar="P", help="links deliver each message twice with probability P, the copy "
                   "after its own delay (default 0)")
    if reorder:
        p.add_argument("--reorder", action="store_true", help="links are not FIFO: each message's delay is its own, so "
                       "a later one may overtake (needs a delay range MIN:MAX)")
    p.add_argument("--drift", metavar="R", help="each node's clock runs at its own rate in [1-R, 1+R], drawn from the "
                   "seed, R below 1 (default 0: clocks keep time)")


def parse_switch(text: str, what: str) -> bool:
    """on or off (a scenario's `set reorder on`)."""
    return choice(text, what, ("on", "off")) == "on"


def timing_value(name: str, text: str, what: str) -> float:
    """One of add_timing's values (not --delay), checked in its range."""
    kind = {"timeout": TIMEOUT, "coordinator-timeout": COORDINATOR_TIMEOUT, "probe-interval": PROBE_INTERVAL}[name]
    return kind.check(parse_number(text, what), what)


def add_seed(p: argparse._ActionsContainer, what: str) -> None:
    p.add_argument("--seed", metavar="S", help=f"{what} (default 1)")


def seed_of(text: str | None, what: str = "--seed") -> int:
    return parse_whole(given(text, "1"), what, 0, MAX_SEED)


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


def _span(span: tuple[float, float] | None) -> str:
    return "none" if span is None else f"{span[0]:g}:{span[1]:g}"
