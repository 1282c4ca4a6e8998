"""The one parser of command lines, for `--at` and scenario files (record/scenario.py
reads those): `TIME COMMAND ARGS`, one a line; `#` starts a comment; blank lines are
skipped. Nodes are named by rank (1 the lowest id); the parser turns ranks into ids, so
a command holds ids from then on (and so does the trace). Every check happens before
anything runs, and a failure names where the line came from (`--at '...'`, or a
scenario file's line). What a command takes is its own declaration (commands.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .commands import (
    COMMANDS,
    DELAY,
    LINK,
    MESSAGE,
    NODE,
    NODES,
    PROBABILITY,
    SECONDS,
    TIMER,
    TIMER_NAME,
    USAGE,
    Command,
    Members,
    Scheduled,
    Takes,
    arguments_count,
    from_words,
)
from .config import INSTANT, TIMEOUT, InputError, check_delay, check_probability, parse_number, parse_whole, shown
from .ids import next_id


def parse_delay(text: str, what: str | None = None) -> tuple[float, float]:
    """`MIN` (a constant delay) or `MIN:MAX`, in seconds; a problem names `what` (the
    option, `--delay`) before the bound it is about."""
    try:
        low, sep, high = text.partition(":")
        delay_min = parse_number(low, "minimum delay")
        delay_max = parse_number(high, "maximum delay") if sep else delay_min
        return check_delay(delay_min, delay_max)
    except InputError as e:
        raise InputError(f"{what}: {e}" if what else str(e)) from None


def parse_node(text: str, ids: tuple[int, ...]) -> int:
    """A rank (1 is the lowest id), as the id it names."""
    rank = parse_whole(text, "node", 1)
    if rank > len(ids):
        raise InputError(f"there is no node {rank} (nodes are 1..{len(ids)})")
    return ids[rank - 1]


def parse_list(text: str, what: str) -> list[str]:
    """`1,2,5` -> ["1", "2", "5"]: a comma-separated list, no item empty."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise InputError(f"{what} must be a comma-separated list, not {shown(text)}")
    return items


def parse_command(words: list[str], ids: tuple[int, ...], seed: int = 1) -> Command:
    """A command's words, its nodes named by rank among `ids` (every node so far);
    a join's newcomer gets its id from `ids` and the seed."""
    name, args = words[0].lower(), words[1:]
    cls = COMMANDS.get(name)
    if cls is None:
        raise InputError(f"unknown command {shown(words[0])} (expected one of: {', '.join(COMMANDS)})")
    typed = sum(t.typed for t in cls.takes)
    rest = bool(cls.takes) and cls.takes[-1] is TIMER  # (a timer's name may be several words, the line's last)
    if len(args) != typed and not (rest and len(args) > typed):
        raise InputError(f"{name} takes {arguments_count(typed)}: {USAGE[name]}")
    values: list = []
    for k, takes in enumerate(cls.takes):
        last = rest and k == len(cls.takes) - 1
        mine, args = (args, []) if last else (args[:takes.typed], args[takes.typed:])
        values += _parsed(takes, mine, ids, seed, name)
    return from_words(name, tuple(values))


def _parsed(takes: Takes, words: list[str], ids: tuple[int, ...], seed: int, name: str) -> list:
    """The values one argument of a command gives, as the trace records them."""
    if takes is NODE:
        return [parse_node(words[0], ids)]
    if takes is LINK:
        src, dst = parse_node(words[0], ids), parse_node(words[1], ids)
        if src == dst:
            raise InputError(f"{name} needs two different nodes: {USAGE[name]}")
        return [src, dst]
    if takes is NODES:
        return sorted({parse_node(k, ids) for k in parse_list(words[0], f"{name}'s nodes")})
    if takes is SECONDS:
        return [TIMEOUT.check(parse_number(words[0], "timeout"))]
    if takes is DELAY:
        return list(parse_delay(words[0]))
    if takes is PROBABILITY:
        return [check_probability(parse_number(words[0], "probability"), "probability")]
    if takes is MESSAGE:
        return [parse_whole(words[0], "message id", 0)]
    if takes is TIMER:
        timer = " ".join(words)
        if not TIMER_NAME.fullmatch(timer):
            raise InputError(f"{name}: a timer's name is a word such as election or probe (the ring's: hop_wait K N), "
                             f"not {shown(timer)}")
        return [timer]
    return [next_id(ids, seed)]  # NEWCOMER


@dataclass(frozen=True, slots=True)
class Line:
    """A `TIME COMMAND ARGS` line from a scenario or --at, not yet parsed: `where` names it."""

    text: str
    source: str
    where: str


def parse_lines(lines: list[Line], ids: tuple[int, ...], seed: int,
                ends: tuple[float, str] | None = None) -> list[Scheduled]:
    """Command lines, blank and comment lines skipped, into commands in time order (lines
    of one time in the order given). They are read in that order so that a rank can
    name a node that joined before it, and a command on a node that has left by then,
    which could only do nothing, is refused (Members). `ends`: when the run ends, and
    what says so (a headless run's --until): a command after it would never run."""
    timed = []
    for line in lines:
        words = line.text.split("#", 1)[0].split()
        if not words and line.source == "scenario":
            continue  # a file's blank lines and comments; an --at must say something
        try:
            if len(words) < 2:
                raise InputError("expected TIME COMMAND ARGS")
            at = INSTANT.check(parse_number(words[0], "time"))
            if ends is not None and at > ends[0]:
                raise InputError(f"at {at:g} s, after the run ends at {ends[0]:g} s ({ends[1]}): it would never run")
            timed.append((at, words[1:], line))
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
    timed.sort(key=lambda entry: entry[0])  # stable
    out = []
    members = Members(tuple(ids))
    for at, words, line in timed:
        try:
            command = parse_command(words, members.every, seed)
            if why := members.refusal(command, lambda node: str(members.every.index(node) + 1)):
                raise InputError(f"at {at:g} s, {why}")
        except InputError as e:
            raise InputError(f"{line.where}: {e}") from None
        members.apply(command)
        out.append(Scheduled(at, command, line.source))
    return out


def at_lines(texts: list[str]) -> list[Line]:
    return [Line(text, "at", f"--at {shown(text)}") for text in texts]


def parse_at(texts: list[str], ids: tuple[int, ...], seed: int = 1) -> list[Scheduled]:
    return parse_lines(at_lines(texts), ids, seed)
