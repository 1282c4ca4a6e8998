"""The model's assumptions broken on purpose (issue 33): --loss and --duplicate (a
probability from 0 to 1), --drift (from 0 to below 1), each at its valid values, just
outside them and the hostile pool; --reorder with a constant delay (nothing could
overtake), and beside --real or a node (TCP reorders nothing); --by-hand off the live app; `lossy`
lines naming a stranger or a probability out of range; by-hand commands naming what the
parser cannot read, and a message not in flight (the run says so in a warning, and
records nothing: accepted)."""

from __future__ import annotations

import re

from .cases import ACCEPT, ARGPARSE_MISREAD, HOSTILE, QUICK, REFUSE, Builder, shortened

_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII, no sign
RATES = (  # (flag, the highest it takes, whether that bound itself is taken, valid values, just outside)
    ("--loss", 1.0, True, ("0", "0.1", "1"), ("1.0001", "-0.1")),
    ("--duplicate", 1.0, True, ("0", "0.3", "1"), ("1.5", "-0.001")),
    ("--drift", 1.0, False, ("0", "0.2", "0.999"), ("1", "-0.01")),
)


def rate_verdict(text: str, high: float, inclusive: bool) -> str:
    """"ok" or "bad" for a probability or a drift bound, by the guide's ranges."""
    if text.startswith("-") and _DECIMAL.fullmatch(text[1:]) and float(text[1:]) == 0:
        return "ok"  # -0 is 0
    if not _DECIMAL.fullmatch(text):
        return "bad"
    value = float(text)
    return "ok" if 0 <= value <= high and (inclusive or value < high) else "bad"


def _rate_case(b: Builder, op: str, flag: str, value: str, high: float, inclusive: bool) -> None:
    verdict = rate_verdict(value, high, inclusive)
    argv = ["--headless", "--nodes", "4", "--until", "20", "--algorithm", b.rng.choice(QUICK), *b.spelled(flag, value)]
    b.add(f"{op}:{flag}={shortened(value, 16)}", "headless", argv, ACCEPT if verdict == "ok" else REFUSE, names=flag,
          forbid=ARGPARSE_MISREAD if value.startswith("-") else None)


def _at(b: Builder, name: str, line: str, expect: str) -> None:
    argv = ["--headless", "--nodes", "5", "--until", "20", "--algorithm", b.rng.choice(QUICK), "--at", line]
    b.add(name, "headless", argv, expect, names="--at")


def gen_faults(b: Builder) -> None:
    for flag, high, inclusive, valid, outside in RATES:
        for value in valid:
            _rate_case(b, "faults-valid", flag, value, high, inclusive)
        for value in outside:
            _rate_case(b, "faults-outside", flag, value, high, inclusive)
        for label, value in b.rng.sample(HOSTILE, 6):
            _rate_case(b, f"faults-hostile-{label}", flag, value, high, inclusive)
    base = ["--headless", "--nodes", "4", "--until", "20"]
    b.add("faults-reorder:constant-delay", "headless", [*base, "--reorder", "--delay", "1"], REFUSE, names="--reorder")
    b.add("faults-reorder:default-delay", "headless", [*base, "--reorder"], ACCEPT)
    b.add("faults-reorder:real", "real", ["--real", "--headless", "--nodes", "3", "--until", "2", "--reorder",
                                          "--delay", "0:0.1"], REFUSE, names=("--reorder", "TCP"))
    b.add("faults-by-hand:headless", "headless", [*base, "--by-hand"], REFUSE, names="--by-hand")
    node = ["node", "--id", "1", "--listen", "127.0.0.1:1", "--state-dir", "n"]
    b.add("faults-node:loss", "node", [*node, "--loss", "2"], REFUSE, names="--loss")
    b.add("faults-node:drift", "node", [*node, "--drift", "nan"], REFUSE, names="--drift")
    b.add("faults-node:reorder", "node", [*node, "--reorder"], REFUSE, names="--reorder")
    b.add("faults-compare-mutex", "compare", ["--headless", "--compare", "--mutex", "--nodes", "4", "--loss", "0.1"],
          REFUSE, names="--loss")
    for name, line in (("stranger", "5 lossy 1 9 0.5"), ("same-node", "5 lossy 2 2 0.5"), ("above-1", "5 lossy 1 2 1.5"),
                       ("nan", "5 lossy 1 2 nan"), ("missing-p", "5 lossy 1 2"), ("timer-name", "5 fire 1 Election!"),
                       ("negative-id", "5 deliver -1"), ("word-id", "5 drop x"), ("fire-stranger", "5 fire 9 probe"),
                       ("by-hand-args", "5 by-hand 1")):
        _at(b, f"faults-at:{name}", line, REFUSE)
    for name, line in (("lossy", "5 lossy 1 2 0.5"), ("lossless-again", "5 lossy 1 2 0"),
                       ("not-in-flight", "5 deliver 99999"), ("no-such-timer", "5 fire 2 no_such_timer"),
                       ("by-clock-unasked", "5 by-clock")):
        _at(b, f"faults-at:{name}", line, ACCEPT)
