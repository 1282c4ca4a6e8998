"""2. --at lines: a valid command with one part mutated (time, command name, argument
count, a rank, a value), and membership and partition rules. `meaningful` makes valid
command lines (the scenario files' too)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .cases import ACCEPT, EITHER, NODE_COMMANDS, QUICK, REFUSE, Builder


def _ranks(rng: random.Random, n: int, k: int) -> list[str]:
    return [str(r) for r in rng.sample(range(1, n + 1), k)]


AT_ARGS: dict[str, Callable[[random.Random, int], list[str]]] = {
    "crash": lambda r, n: _ranks(r, n, 1),
    "recover": lambda r, n: _ranks(r, n, 1),
    "elect": lambda r, n: _ranks(r, n, 1),
    "timeout": lambda r, n: [r.choice(["3", "4", "5.5"])],
    "delay": lambda r, n: [r.choice(["0.5:1", "1", "0:2", "0.25"])],
    "hold": lambda r, n: _ranks(r, n, 2),
    "release": lambda r, n: _ranks(r, n, 2),
    "partition": lambda r, n: [",".join(sorted(_ranks(r, n, r.randint(1, n - 1)), key=int))],
    "heal": lambda r, n: [],
    "join": lambda r, n: [],
    "leave": lambda r, n: _ranks(r, n, 1),
}
CONTEXT = ("crash", "recover", "elect", "timeout", "delay", "hold", "release", "heal")  # safe beside anything, in meaningful
AT_TIMES = [("negative", "-1", "bad"), ("huge", "1e13", "bad"), ("nan", "nan", "bad"), ("inf", "inf", "bad"),
            ("-inf", "-inf", "bad"), ("after-until", "40", "bad"), ("arabic", "١٠", "bad"),
            ("underscore", "1_0", "bad"), ("hex", "0x1", "bad"), ("missing", "", "bad"), ("1e-300", "1e-300", "either")]
AT_RANKS = ["0", "6", "two", "١", "1.5", "-1", "1e0", "９"]
AT_NAMES = [("unknown", "explode"), ("unknown", "kill"), ("unknown", "restart"), ("other-case", "CRASH"),
            ("other-case", "Heal")]
AT_VALUES = {"timeout": ["0", "1e308", "nan", "-1", "0.0001", "inf", "3_0"],
             "delay": ["2:1", "1:2:3", "x", "-1", "nan:1", "1e308", "0:inf"]}
AT_COUNTS = ["crash 1 2", "crash", "hold 1", "heal 1", "join 3", "partition", "timeout", "delay 1 2", "leave",
             "release 1 2 3", "elect 1 1"]


def _at_case(b: Builder, name: str, lines: list[str], expect: str, *, nodes: int = 5, algorithm: str | None = None,
             names: Any = "--at") -> None:
    algorithm = algorithm or b.rng.choice(QUICK)
    argv = ["--headless", "--nodes", str(nodes), "--until", "30", "--algorithm", algorithm]
    for line in lines:
        argv += ["--at", line]
    b.add(name, "headless", argv, expect, names=names)


def _with_context(b: Builder, bad: str) -> list[str]:
    """The bad line among 0 to 2 valid ones, at a random place."""
    lines = meaningful(b.rng, CONTEXT, [str(b.rng.randint(1, 25)) for _ in range(b.rng.randint(0, 2))])
    lines.insert(b.rng.randint(0, len(lines)), bad)
    return lines


def meaningful(r: random.Random, pool: tuple[str, ...], times: list[str], n: int = 5) -> list[str]:
    """Command lines at `times` (in time order), drawn from `pool`, that each mean
    something when they run: a crash of an up node, a recovery of a down one, an election
    at an up one (the parser refuses the others, which would do nothing)."""
    down: set[int] = set()
    lines = []
    for at in sorted(times, key=float):
        command = r.choice(pool)
        up = [k for k in range(1, n + 1) if k not in down]
        if command == "recover" and not down:
            command = "crash"
        if command in ("crash", "elect") and not up:
            command = "recover"
        if command == "crash":
            args = [str(r.choice(up))]
            down.add(int(args[0]))
        elif command == "recover":
            args = [str(r.choice(sorted(down)))]
            down.discard(int(args[0]))
        elif command == "elect":
            args = [str(r.choice(up))]
        else:
            args = AT_ARGS[command](r, n)
        lines.append(" ".join([at, command, *args]))
    return lines


def gen_at(b: Builder) -> None:
    """2. --at lines: valid commands with one part mutated."""
    r = b.rng
    times = [t for t in AT_TIMES if t[0] in ("negative", "huge", "nan", "after-until")]
    times += r.sample([t for t in AT_TIMES if t not in times], 2)
    for label, text, verdict in times:  # the time
        command = r.choice(list(AT_ARGS))
        bad = " ".join(w for w in [text, command, *AT_ARGS[command](r, 5)] if w)
        _at_case(b, f"at-time:{label}", _with_context(b, bad), REFUSE if verdict == "bad" else EITHER)
    for label, name in AT_NAMES:  # the command's name: unknown, or a known one in other case
        words = AT_ARGS[r.choice(list(AT_ARGS)) if label == "unknown" else name.lower()](r, 5)
        bad = " ".join([str(r.randint(1, 25)), name, *words])
        _at_case(b, f"at-name:{label}-{name}", _with_context(b, bad), REFUSE if label == "unknown" else EITHER)
    for text in r.sample(AT_COUNTS, 3):  # the number of arguments
        _at_case(b, f"at-count:{text.replace(' ', '_')}", _with_context(b, f"{r.randint(1, 25)} {text}"), REFUSE)
    for rank in ["0", "6", "two", "١", r.choice(AT_RANKS[4:])]:  # a rank: 0, N+1, a word, a digit not ASCII
        command = r.choice(NODE_COMMANDS)
        args = AT_ARGS[command](r, 5)
        args[r.randrange(len(args))] = rank
        _at_case(b, f"at-rank:{command}-{rank}", _with_context(b, " ".join([str(r.randint(1, 25)), command, *args])),
                 REFUSE)
    for command, values in AT_VALUES.items():  # a value
        for value in r.sample(values, 2 if command == "timeout" else 1):
            bad = f"{r.randint(1, 25)} {command} {value}"
            _at_case(b, f"at-value:{command}-{value}", _with_context(b, bad), REFUSE)
    # lines that say nothing
    for label, text in [("empty", ""), ("comment", "# x"), ("blank", "   ")]:
        _at_case(b, f"at-nothing:{label}", [text], REFUSE)
    # membership: a node that has left, the last member, partitions of everyone or no one
    k = r.randint(1, 5)
    after = r.choice(["crash", "recover", "elect", "leave"])
    _at_case(b, f"at-left:{after}", [f"5 leave {k}", f"6 {after} {k}"], REFUSE)
    other = r.choice([x for x in range(1, 6) if x != k])
    _at_case(b, "at-left:hold", [f"5 leave {k}", f"6 hold {other} {k}"], REFUSE)
    _at_case(b, "at-left:last-member", ["5 leave 1", "6 leave 2"], REFUSE, nodes=2)
    _at_case(b, "at-left:only-member", ["5 leave 1"], REFUSE, nodes=1)
    _at_case(b, "at-partition:everyone", ["10 partition 1,2,3,4,5"], REFUSE)
    _at_case(b, "at-partition:no-one", ["10 partition ,"], REFUSE)
    _at_case(b, "at-partition:other-side-left", ["5 leave 5", "6 leave 4", "10 partition 1,2,3"], REFUSE)
    _at_case(b, "at-valid:stoller-join", ["10 join"], ACCEPT, algorithm="stoller")
    _at_case(b, "at-valid:stoller-leave", ["10 leave 2"], ACCEPT, algorithm="stoller")
    # valid lines run
    _at_case(b, "at-valid:partition-after-join", ["5 join", "10 partition 1,2,3,4,5", "20 heal"], ACCEPT)
    _at_case(b, "at-valid:join-then-crash-newcomer", ["5 join", "10 crash 6"], ACCEPT)
    _at_case(b, "at-valid:leave-then-others", [f"5 leave {k}", f"6 crash {other}"], ACCEPT)
    for n in range(1):
        lines = meaningful(r, CONTEXT + ("partition",), [f"{r.uniform(0, 29):.3f}" for _ in range(r.randint(1, 4))])
        _at_case(b, f"at-valid:random-{n}", lines, ACCEPT)
