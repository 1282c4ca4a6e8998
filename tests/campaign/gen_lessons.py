"""13. Lesson files (`bully-tui lesson`): a generated valid lesson, checked, played
headless and opened live; the same with one line spoiled (a directive it does not know,
a condition or task it cannot read, a setup the scenario parser refuses, a step that
cannot end, a link to no glossary term), named as "FILE line N"; a step that never ends
in its run (headless: refused once its time is up); whole-file problems (binary junk,
empty, missing, a directory, a pipe); the subcommand's own arguments."""

from __future__ import annotations

import random

from .cases import ACCEPT, DIRECTORY, FIFO, QUICK, REFUSE, TERMINAL, Builder

# Each bad line replaces a step's directive (the step keeps what ends it), or is added:
# (label, line, where: "directive" | "narration").
BAD_LINES = [
    ("unknown-directive", "pace 4", "directive"),
    ("bad-condition", "until agreement soon", "directive"),
    ("bad-condition-role", "until state sleeping", "directive"),
    ("bad-task", "task explode 3", "directive"),
    ("bad-task-rank", "task crash zero", "directive"),
    ("bad-speed", "speed fast", "directive"),
    ("speed-zero", "speed 0", "directive"),
    ("continue-words", "continue now", "directive"),
    ("setting-unknown", "set colour red", "directive"),
    ("setting-refused", "set nodes 0", "directive"),
    ("setting-nan", "set timeout nan", "directive"),
    ("command-unknown", "at 5 explode 1", "directive"),
    ("command-no-node", "at 5 crash 9", "directive"),
    ("never-ends-message", "until message Elektion", "directive"),
    ("never-ends-rank", "until state down of 9", "directive"),
    ("never-ends-cs", "until enter", "directive"),
    ("unknown-term", "See [the term](glossary#no-such-term).", "narration"),
]


def _valid_lesson(r: random.Random) -> list[str]:
    """A lesson that ends, headless, in a few seconds: a setup, its agreement, a read
    step, the leader crashed by the student and the agreement after, a timed step."""
    algorithm, nodes = r.choice(QUICK), r.randint(3, 6)
    return ["title: A generated lesson", "about: Made by the campaign.", f"order: {r.randint(0, 9)}", "",
            "# Start", f"set algorithm {algorithm}", f"set nodes {nodes}", "set delay 1", "speed 4",
            "until agreement", "", "The nodes agree on a [leader](glossary#leader).", "",
            "# Read", "continue", "", "Words, **bold**.", "",
            "# Crash", "task crash the leader", "hint Press **x**.", "until agreement", "", "Crash it.", "",
            "# Wait", f"until time {r.randint(1, 9)}", "", "Time passes."]


def _spoiled(r: random.Random, line: str, where: str) -> tuple[list[str], int]:
    """A valid lesson with `line` in it, and its line number (from 1)."""
    lines = _valid_lesson(r)
    if where == "narration":
        at = lines.index("Words, **bold**.")
        lines[at] = line
        return lines, at + 1
    # (a setting goes where no other is set, a condition replaces the step's own: one problem each)
    step = "# Crash" if line.startswith(("set", "at")) else r.choice(["# Start", "# Crash"])
    if line.startswith("until"):
        at = lines.index("until agreement", lines.index(step))
        lines[at] = line
    else:
        at = lines.index(step) + 1
        lines.insert(at, line)
    return lines, at + 1


def gen_lessons(b: Builder) -> None:
    r = b.rng

    def case(label: str, argv: list[str], expect: str, data: bytes | None = None, names=None, name: str = "l.lesson",
             group: str = "headless") -> None:
        files = {} if data is None else {name: data}
        b.add(f"lesson:{label}", group, ["lesson", *argv], expect, names=names, files=files)

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode()

    valid = text(_valid_lesson(r))
    case("valid-check", ["--check", "l.lesson"], ACCEPT, valid)
    case("valid-headless", ["l.lesson", "--headless"], ACCEPT, valid)
    case("valid-live", ["l.lesson"], REFUSE, valid, names=TERMINAL, group="live")
    case("list", [], ACCEPT)
    case("shipped-check", ["--check"], ACCEPT)
    case("shipped-headless", ["bully", "--headless"], ACCEPT)
    for label, line, where in r.sample(BAD_LINES, len(BAD_LINES)):
        lines, at = _spoiled(r, line, where)
        name = r.choice(["l.lesson", "my lesson.lesson", "ü.lesson"])
        how = r.choice(["check", "headless", "live"])
        argv = {"check": ["--check", name], "headless": [name, "--headless"], "live": [name]}[how]
        case(f"line-{label}-{how}", argv, REFUSE, text(lines), names=f"{name} line {at}", name=name,
             group="live" if how == "live" else "headless")
    # a step that cannot end: nothing ends it; one whose event never comes (refused once its time is up)
    lines = _valid_lesson(r)
    lines.remove("continue")
    case("cannot-end", ["--check", "l.lesson"], REFUSE, text(lines), names=f"l.lesson line {lines.index('# Read') + 1}")
    lines = _valid_lesson(r)
    at = next(k for k, x in enumerate(lines) if x.startswith("until time"))
    lines[at] = "until state down of 1"
    case("never-comes", ["l.lesson", "--headless"], REFUSE, text(lines), names=f"l.lesson line {at + 1}")
    # whole files
    case("header-missing", ["--check", "l.lesson"], REFUSE, text(_valid_lesson(r)[1:]), names="l.lesson")
    case("no-steps", ["--check", "l.lesson"], REFUSE, b"title: T\nabout: A\n", names="l.lesson")
    case("empty", ["--check", "l.lesson"], REFUSE, b"", names="l.lesson")
    case("binary-junk", ["--check", "l.lesson"], REFUSE, bytes(r.randrange(256) for _ in range(2000)), names="l.lesson")
    case("nul-byte", ["l.lesson", "--headless"], REFUSE, valid.replace(b"Words", b"Wo\x00rds"), names="l.lesson")
    case("crlf-bom", ["--check", "l.lesson"], ACCEPT, b"\xef\xbb\xbf" + valid.replace(b"\n", b"\r\n"))
    case("over-1MB", ["--check", "l.lesson"], REFUSE, b"title: T\nabout: A\n" + b"# S\ncontinue\n\nx\n" * 100_000,
         names="l.lesson")
    for label, argv_name, files in [("directory", "dir.lesson", {"dir.lesson": DIRECTORY}),
                                    ("fifo", "pipe.lesson", {"pipe.lesson": FIFO}),
                                    ("dev-zero", "/dev/zero", {}), ("missing", "nowhere.lesson", {})]:
        for how, argv in (("check", ["--check", argv_name]), ("open", [argv_name])):
            b.add(f"lesson:{label}-{how}", "live" if how == "open" else "headless", ["lesson", *argv], REFUSE,
                  names=argv_name, files=files)
    # the subcommand's arguments
    case("unknown-name", ["no-such-lesson"], REFUSE, names="no-such-lesson", group="live")
    case("step-zero", ["bully", "--step", "0"], REFUSE, names="--step", group="live")
    case("step-beyond", ["bully", "--step", "99"], REFUSE, names="--step", group="live")
    case("two-lessons", ["bully", "bully"], REFUSE, names="one lesson", group="live")
    case("check-and-headless", ["--check", "--headless"], REFUSE, names="--check")
    case("headless-no-name", ["--headless"], REFUSE, names="name a lesson")
    case("bogus-option", ["--bogus"], REFUSE, names="--bogus")
