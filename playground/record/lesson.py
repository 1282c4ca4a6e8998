"""Lesson files (lessons/*.lesson): narration in Markdown and a small step syntax, so a
teacher can write one without Python. Read and checked here; played by run/lesson.py.

A file is a header, then steps:

    title: The Bully algorithm
    about: How the highest node wins, what it costs at worst, and how it breaks.
    order: 3

    # The first election
    set algorithm classic
    set nodes 5
    speed 4
    until agreement

    Every node starts at once ... (Markdown: the narration, up to the next step)

A header line is `key: value` (title and about are needed; order sorts the menu). A
step starts with a line `# TITLE`; the lines right after it, up to the first blank
line, are its directives; the rest, up to the next `# ` line, is its narration (whose
own headings are `##` and deeper). The directives:

  set NAME VALUE        a setting, as a scenario's (nodes, algorithm, mutex, timeout,
                        delay, probe-interval, ...): a step with any starts a new run,
                        with these settings (the others at their defaults)
  at TIME COMMAND ARGS  a command of that run at TIME virtual seconds (crash 3, elect 1)
  speed X               the pace while the step waits (virtual seconds a second)
  until CONDITION       what ends the step, an event in the run (Condition below)
  task ACTION           what the student is asked to do; the step goes on once it is
                        done (then waits for `until`, if it has one)
  hint TEXT             what to say when the student does something else
  continue              the step ends when the student asks for the next (a reading step)

A step must be able to end: it has `until`, `task` or `continue`. The narration links a
term to the glossary as `[SLE1](glossary#sle1)` (glossary.py says how terms are named);
a link to a term the glossary has not is refused. Every problem is one line naming the
file, the line and what is wrong. The shipped lessons are lessons/*.lesson, listed in
their `order`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lessons import FOLDER

from ..core.config import InputError, parse_number, shown
from .files import read_text
from .glossary import LINK, term_named
from .scenario import SETTINGS, Scenario

LESSON_LIMIT = 1_000_000  # bytes: a lesson is pages of text
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # (a tab is text; the terminal would take the rest as commands)
HEADER_KEYS = ("title", "about", "order")
ROLES = ("electing", "waiting", "normal", "down")
PROPERTIES = ("sle1", "split-brain", "sle2", "mutual-exclusion", "cs-liveness")
TASKS = ("crash", "recover", "elect", "join", "leave", "want", "partition", "heal", "timeout")


@dataclass(frozen=True, slots=True)
class Condition:
    """What ends a step: an event in the run since the step began.

      agreement [under K]     every up node normal under one leader (K: that one)
      election                an election starts
      state ROLE [of K]       a node (K) enters a status of that role: electing,
                              waiting, normal or down
      message NAME            a message of that name is sent (Election, Coordinator)
      violation [PROPERTY]    the monitor reports a broken property (sle1,
                              split-brain, sle2, mutual-exclusion, cs-liveness)
      enter [K]               a node (K) enters the critical section
      time T                  T virtual seconds have passed
    """

    kind: str
    node: int | None = None  # a rank, where the condition names one
    name: str | None = None  # a role, a message's name, a property
    seconds: float | None = None

    def __str__(self) -> str:
        words = [self.kind]
        if self.kind == "agreement" and self.node is not None:
            words += ["under", str(self.node)]
        elif self.kind == "state":
            words += [self.name or ""] + (["of", str(self.node)] if self.node is not None else [])
        elif self.name is not None:
            words.append(self.name)
        elif self.node is not None:
            words.append(str(self.node))
        if self.seconds is not None:
            words.append(f"{self.seconds:g}")
        return " ".join(words)


@dataclass(frozen=True, slots=True)
class Task:
    """What the student is asked to do, a command given by a key:

      crash the leader | crash K | recover K | elect K | join | leave K | want K
      partition K,L,... | heal | timeout below T | timeout above T
    """

    command: str
    node: int | None = None  # a rank; None: any (or, for crash, the leader: `leader`)
    leader: bool = False
    group: tuple[int, ...] = ()
    below: float | None = None  # timeout: T set below this
    above: float | None = None

    def __str__(self) -> str:
        if self.leader:
            return "crash the leader"
        if self.command == "timeout":
            return f"timeout {'below' if self.below is not None else 'above'} {self.below or self.above:g}"
        if self.group:
            return f"partition {','.join(map(str, self.group))}"
        return self.command if self.node is None else f"{self.command} {self.node}"


@dataclass(frozen=True, slots=True)
class Step:
    title: str
    where: str  # "FILE line N", its first line
    narration: str
    settings: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value, where), a new run
    lines: tuple[tuple[str, str], ...] = ()  # (where, "TIME COMMAND ARGS") of that run
    speed: float | None = None
    until: Condition | None = None
    task: Task | None = None
    hint: str | None = None
    waits_for_continue: bool = False
    places: dict[str, str] = field(default_factory=dict)  # directive -> "FILE line N", where it is given

    @property
    def new_run(self) -> bool:
        return bool(self.settings or self.lines)


@dataclass(frozen=True, slots=True)
class Lesson:
    path: str
    title: str
    about: str
    order: float
    steps: tuple[Step, ...]

    @property
    def name(self) -> str:
        """How `bully-tui lesson NAME` names it: the file's name without .lesson."""
        return self.path.rsplit("/", 1)[-1].removesuffix(".lesson")

    def run_of(self, index: int) -> int | None:
        """The step whose setup the run of step `index` is: the latest with one, up to it
        (None: no step before it has one, and the run is the default cluster's)."""
        return next((k for k in range(index, -1, -1) if self.steps[k].new_run), None)

    def setup(self, index: int) -> Scenario:
        """The run of step `index`, as a scenario (empty: the defaults) for the command
        line to check and start as any other; a bad value names its line of the lesson."""
        first = self.run_of(index)
        if first is None:
            return Scenario(self.path, {}, ())
        step = self.steps[first]
        return Scenario(self.path, dict(step.settings), step.lines)


def shipped() -> list[Lesson]:
    """The shipped lessons, in their order (then by name)."""
    found = [read_lesson(str(path)) for path in FOLDER.glob("*.lesson")]
    return sorted(found, key=lambda lesson: (lesson.order, lesson.name))


def shipped_path(name: str) -> str | None:
    """The shipped lesson called `name` (its file's name without .lesson), or None."""
    path = FOLDER / f"{name}.lesson"
    return str(path) if "/" not in name and path.is_file() else None


def read_lesson(path: str) -> Lesson:
    text = read_text(path, "lesson", LESSON_LIMIT)
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        if bad := CONTROL.search(line):
            raise InputError(f"{path} line {n}: a control character ({bad.group()!r}): a lesson is text")
    header: dict[str, str] = {}
    n = 0
    while n < len(lines) and not lines[n].startswith("# "):
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        key, sep, value = line.partition(":")
        where = f"{path} line {n}"
        if not sep or key.strip().lower() not in HEADER_KEYS:
            raise InputError(f"{where}: expected a header line (title: ..., about: ..., order: N) or a step (# TITLE), "
                             f"not {shown(line)}")
        header[key.strip().lower()] = value.strip()
    for key in ("title", "about"):
        if not header.get(key):
            raise InputError(f"{path}: the header has no {key} (a line '{key}: ...' before the first step)")
    order = parse_number(header.get("order", "0"), f"{path}: order")
    steps = []
    while n < len(lines):
        start = n
        n += 1
        while n < len(lines) and not lines[n].startswith("# "):
            n += 1
        steps.append(_step(path, start, lines[start:n]))
    if not steps:
        raise InputError(f"{path}: no steps (each starts with a line '# TITLE')")
    return Lesson(path, header["title"], header["about"], order, tuple(steps))


def _step(path: str, start: int, lines: list[str]) -> Step:
    title = lines[0][2:].strip()
    where = f"{path} line {start + 1}"
    if not title:
        raise InputError(f"{where}: a step needs a title after '# '")
    fields: dict = {"settings": {}, "lines": [], "places": {}}
    k = 1
    while k < len(lines) and lines[k].strip():
        _directive(fields, lines[k].strip(), f"{path} line {start + k + 1}")
        k += 1
    _check_links(lines, k, path, start)
    narration = "\n".join(lines[k:]).strip()
    step = Step(title, where, narration, fields["settings"], tuple(fields["lines"]), fields.get("speed"),
                fields.get("until"), fields.get("task"), fields.get("hint"), fields.get("continue", False),
                fields["places"])
    if step.until is None and step.task is None and not step.waits_for_continue:
        raise InputError(f"{where}: step {shown(title)} cannot end: give it until, task or continue")
    if step.hint is not None and step.task is None:
        raise InputError(f"{where}: step {shown(title)} has a hint but no task")
    return step


def _check_links(lines: list[str], first: int, path: str, start: int) -> None:
    """Each link into the glossary names a term it has."""
    for k in range(first, len(lines)):
        for name in LINK.findall(lines[k]):
            if term_named(name) is None:
                raise InputError(f"{path} line {start + k + 1}: the glossary has no term {shown(name)} (a link is "
                                 "[text](glossary#TERM); the terms are in lessons/glossary.md)")


def _directive(fields: dict, line: str, where: str) -> None:
    word, _, rest = line.partition(" ")
    word, rest = word.lower(), rest.strip()
    try:
        if word == "set":
            parts = rest.split()
            if len(parts) != 2 or parts[0].lower() not in SETTINGS:
                raise InputError(f"expected set NAME VALUE, NAME one of: {', '.join(SETTINGS)}")
            if parts[0].lower() in fields["settings"]:
                raise InputError(f"{parts[0].lower()} is set twice in this step")
            fields["settings"][parts[0].lower()] = (parts[1], where)
        elif word == "at":
            if len(rest.split()) < 2:
                raise InputError("expected at TIME COMMAND ARGS")
            fields["lines"].append((where, rest))
        elif word in ("speed", "until", "task", "hint", "continue"):
            key = word
            if key in fields:
                raise InputError(f"{word} is given twice in this step")
            fields[key] = _value(word, rest)
            fields["places"][key] = where
        else:
            raise InputError(f"unknown step directive {shown(word)} (expected one of: set, at, speed, until, task, hint, "
                             "continue; a blank line ends the directives)")
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _value(word: str, rest: str) -> object:
    if word == "speed":
        speed = parse_number(rest, "speed")
        if not 0 < speed <= 1000:
            raise InputError(f"speed must be above 0 and at most 1000, not {speed:g}")
        return speed
    if word == "until":
        return parse_condition(rest)
    if word == "task":
        return parse_task(rest)
    if word == "hint":
        if not rest:
            raise InputError("a hint needs its words")
        return rest
    if rest:
        raise InputError("continue takes nothing after it")
    return True


def parse_condition(text: str) -> Condition:
    words = text.lower().split()
    if not words:
        raise InputError("until needs a condition (agreement, election, state ROLE, message NAME, violation, enter, "
                         "time T)")
    kind, args = words[0], words[1:]
    if kind == "agreement" and not args:
        return Condition(kind)
    if kind == "agreement" and len(args) == 2 and args[0] == "under":
        return Condition(kind, node=_rank(args[1]))
    if kind == "election" and not args:
        return Condition(kind)
    if kind == "state" and args and args[0] in ROLES and (len(args) == 1 or len(args) == 3 and args[1] == "of"):
        return Condition(kind, node=_rank(args[2]) if len(args) == 3 else None, name=args[0])
    if kind == "message" and len(args) == 1:
        return Condition(kind, name=text.split()[1])  # (as written: Election, Coordinator)
    if kind == "violation" and len(args) <= 1 and (not args or args[0] in PROPERTIES):
        return Condition(kind, name=args[0] if args else None)
    if kind == "enter" and len(args) <= 1:
        return Condition(kind, node=_rank(args[0]) if args else None)
    if kind == "time" and len(args) == 1:
        seconds = parse_number(args[0], "time")
        if seconds <= 0:
            raise InputError(f"time must be above 0, not {seconds:g}")
        return Condition(kind, seconds=seconds)
    raise InputError(f"cannot read the condition {shown(text)} (agreement [under K], election, state ROLE [of K], "
                     f"message NAME, violation [{'|'.join(PROPERTIES)}], enter [K], time T)")


def parse_task(text: str) -> Task:
    words = text.lower().split()
    if not words or words[0] not in TASKS:
        raise InputError(f"cannot read the task {shown(text)} (one of: crash the leader, crash K, recover K, elect K, "
                         "join, leave K, want K, partition K,L,..., heal, timeout below T, timeout above T)")
    command, args = words[0], words[1:]
    if command == "crash" and args == ["the", "leader"]:
        return Task(command, leader=True)
    if command in ("join", "heal") and not args:
        return Task(command)
    if command in ("crash", "recover", "elect", "leave", "want") and len(args) <= 1:
        return Task(command, node=_rank(args[0]) if args else None)
    if command == "partition" and len(args) == 1:
        return Task(command, group=tuple(sorted({_rank(k) for k in args[0].split(",")})))
    if command == "timeout" and len(args) == 2 and args[0] in ("below", "above"):
        seconds = parse_number(args[1], "timeout")
        return Task(command, below=seconds if args[0] == "below" else None, above=seconds if args[0] == "above" else None)
    raise InputError(f"cannot read the task {shown(text)}")


def _rank(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"a node is named by its rank, a whole number from 1, not {shown(text)}")
    return int(text)
