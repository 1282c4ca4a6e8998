"""`bully-tui lesson [NAME|PATH] [--check] [--headless] [--step N]`: the lessons.

With no lesson, on a terminal (or served, in a browser), the lesson menu (ui/lesson_menu.py):
the shipped lessons (lessons/*.lesson, in their order) to pick from. The lesson picked
plays in the live app as `bully-tui lesson NAME` plays it, and leaving that app (ctrl+q)
comes back to the menu, at that lesson; q in the menu quits. Piped, the list, a line
each. A NAME is a shipped lesson's (`bully`); a PATH, a teacher's own file. The lesson
opens in the live app beside its run (`--step N` at its Nth step); `--headless` plays
it with a scripted student and prints what ended each step and how long it took;
`--check` checks files (every shipped lesson if none is named) and says "ok" for each,
or one line per problem, naming the file and the line (exit 2).

A lesson is checked whole before anything runs: its syntax (record/lesson.py), each
step's setup as the main command checks a scenario (plan.py: a step's `set` and `at`
lines are a scenario's), and what each step waits for against its run: a node it names
that the run has not, a message its algorithm never sends, a critical section without
a lock, a task the algorithm cannot take. Such a step could never end.
"""

from __future__ import annotations

from protocol import MUTEXES, machine

from ..core.commands import membership_refused, want_refused
from ..core.config import InputError, parse_whole, shown
from ..record.lesson import Lesson, Step, read_lesson, shipped, shipped_path
from ..run.session import Session
from .output import can_draw, emit, finished, left_by_page, need_a_terminal, say
from .plan import plan
from .subcommands import parser_for

USAGE = "bully-tui lesson [NAME|PATH] [--step N] [--headless] | bully-tui lesson --check [PATH ...]"
MUTEX_PROPERTIES = ("mutual-exclusion", "cs-liveness")


def run(argv: list[str]) -> int:
    p = parser_for("lesson", USAGE)
    p.add_argument("lessons", nargs="*", metavar="NAME|PATH", help="a shipped lesson's name or a lesson file; with "
                   "--check, any number of files. Without one: the lesson menu (piped: the lessons, a line each)")
    p.add_argument("--check", action="store_true", help="check the files (every shipped lesson if none is named): "
                   "'ok', or a line per problem naming the file and the line")
    p.add_argument("--headless", action="store_true", help="play the lesson without a screen, a scripted student doing "
                   "each task, and print what ended each step and its virtual and wall time")
    p.add_argument("--step", metavar="N", help="open at step N (from 1)")
    args = p.parse_args(argv)
    if args.check:
        if args.headless or args.step is not None:
            raise InputError("--check takes only files")
        return check_files(args.lessons)
    if not args.lessons:
        if args.headless or args.step is not None:
            raise InputError("name a lesson (bully-tui lesson lists them)")
        return lesson_menu() if can_draw() else list_lessons()
    if len(args.lessons) > 1:
        raise InputError(f"one lesson at a time, not {len(args.lessons)} (--check takes several)")
    lesson = open_lesson(args.lessons[0])
    step = 0 if args.step is None else parse_whole(args.step, "--step", 1, len(lesson.steps)) - 1
    if args.headless:
        if args.step is not None:
            raise InputError("--headless plays the whole lesson: --step is for the app")
        return play_headless(lesson)
    need_a_terminal("a lesson plays in the terminal app", "to check one, use --check; to play it without a screen, "
                    "--headless")
    from ..run.lesson import LessonAt
    from .live import run_live

    return run_live(session_of(lesson, step), speed=1.0, lesson=LessonAt(lesson, step),
                    session_of=lambda k: session_of(lesson, k))


def list_lessons() -> int:
    lessons = shipped()
    width = max((len(lesson.name) for lesson in lessons), default=0)
    lines = [f"{lesson.name:<{width}}  {lesson.title} ({len(lesson.steps)} steps): {lesson.about}" for lesson in lessons]
    emit("\n".join(lines + ["", "bully-tui lesson NAME opens one; bully-tui lesson PATH a lesson file of your own "
                                "(docs/guide/lessons.md says how to write one)"]) + "\n")
    return 0


def lesson_menu() -> int:
    """The menu, and the lesson picked in the live app, until the menu is quit (or a
    lesson's app ends otherwise than by its quit key: a signal, a failure, its page gone)."""
    from ..run.lesson import LessonAt
    from ..ui.app import BullyApp  # noqa: F401 (imported before the menu is drawn: a served tab's spare does it)
    from ..ui.lesson_menu import LessonMenu
    from .live import play_live, release

    lessons = shipped()
    at = 0
    while True:
        menu = LessonMenu(lessons, at)
        menu.run()
        if menu.chosen is None:
            return finished(menu)
        at = menu.chosen
        lesson = lessons[at]
        check(lesson)
        app = play_live(session_of(lesson, 0), speed=1.0, lesson=LessonAt(lesson, 0),
                        session_of=lambda k, lesson=lesson: session_of(lesson, k))
        status = finished(app)
        if status or left_by_page(app):
            return status
        app = None
        release()


def open_lesson(name: str) -> Lesson:
    """A shipped lesson by name, or a lesson file, checked whole."""
    path = shipped_path(name)
    if path is None and "/" not in name and not name.endswith(".lesson"):
        names = ", ".join(lesson.name for lesson in shipped())
        raise InputError(f"no lesson called {shown(name)} (the lessons: {names}; or give a lesson file's path)")
    lesson = read_lesson(path or name)
    check(lesson)
    return lesson


def check_files(paths: list[str]) -> int:
    """Each file checked: 'ok', or its problem (one line); 2 if any has one."""
    bad = 0
    for path in paths or [lesson.path for lesson in shipped()]:
        try:
            lesson = read_lesson(path)
            check(lesson)
        except InputError as e:
            say(f"bully-tui: error: {e}")
            bad += 1
            continue
        emit(f"{path}: ok, {len(lesson.steps)} steps\n")
    return 2 if bad else 0


def session_of(lesson: Lesson, index: int) -> Session:
    """The run step `index` plays in: the setup of the latest step up to it that has one
    (the defaults if none has), checked as a scenario is."""
    return plan([], scenario=lesson.setup(index)).session


def check(lesson: Lesson) -> None:
    """What would stop a step from ending, found before anything runs (see the header)."""
    session = session_of(lesson, 0)
    joins = 0
    for index, step in enumerate(lesson.steps):
        if step.new_run:
            session, joins = session_of(lesson, index), 0
        joins += sum(1 for _, line in step.lines if line.split()[1:2] == ["join"]) + (
            step.task is not None and step.task.command == "join")
        if found := _problem(step, session, session.nodes + joins):
            directive, problem = found
            raise InputError(f"{step.places.get(directive, step.where)}: step {shown(step.title)} {problem}")


def _problem(step: Step, session: Session, ranks: int) -> tuple[str, str] | None:
    """(the directive, what is wrong with it) for a step that could never end in its run."""
    algorithm = session.algorithm
    c, task = step.until, step.task
    for directive, named in (("until", [c.node] if c else []), ("task", [task.node, *task.group] if task else [])):
        if any(k is not None and k > ranks for k in named):
            return directive, f"names node {max(k for k in named if k)}, but its run has {ranks} node{'s' * (ranks != 1)}"
    if c is not None and c.kind == "message":
        messages = machine(algorithm).messages
        if c.name not in {name for m in messages for name in (m.type, m.label)}:
            return "until", (f"waits for a message {shown(c.name)}, which {algorithm} never sends (its messages: "
                             f"{', '.join(m.label for m in messages)})")
    needs_mutex = c is not None and (c.kind == "enter" or c.name in MUTEX_PROPERTIES)
    if needs_mutex and machine(algorithm).mutex is None:
        return "until", f"waits for the critical section, but its run has no lock (set mutex: {', '.join(MUTEXES)})"
    if task is not None and task.command in ("join", "leave") and (why := membership_refused(algorithm)):
        return "task", f"asks to {task.command}: {why}"
    if task is not None and task.command == "want" and (why := want_refused(algorithm)):
        return "task", f"asks to want the critical section: {why}"
    if task is not None and len(task.group) > 1 and not _cut_by_a_key(task.group, session.nodes):
        return "task", (f"asks to cut nodes {','.join(map(str, task.group))} off, which no key or palette command does "
                        "(p cuts one node off; the palette splits the lowest ranks from the others)")
    return None


def _cut_by_a_key(group: tuple[int, ...], nodes: int) -> bool:
    """Whether the palette's split (ranks 1..k against the rest) makes this cut."""
    ranks = set(group)
    return ranks == set(range(1, len(ranks) + 1)) or ranks == set(range(nodes - len(ranks) + 1, nodes + 1))


def play_headless(lesson: Lesson) -> int:
    from ..run.lesson_headless import play_headless as play

    total_virtual = total_wall = 0.0
    count = len(lesson.steps)
    results = list(play(lesson, lambda k: session_of(lesson, k)))  # (all, or one line saying which step did not end)
    emit(f"{lesson.title} ({lesson.path}): {count} steps, played by a scripted student\n")
    for r in results:
        took = r.ended - r.began
        total_virtual, total_wall = total_virtual + took, total_wall + r.wall
        emit(f"{r.index + 1:>2}/{count} {r.title}: {r.ended_by}; t {r.began:.2f} -> {r.ended:.2f} s "
             f"({took:.2f} s virtual, {r.wall * 1000:.1f} ms wall)\n")
        if r.hint is not None:
            emit(f"      done wrong first, and told: {r.hint}\n")
        for name, value in r.quoted:
            emit(f"      {{{name}}} = {value}\n")
    emit(f"done: {total_virtual:.2f} s of virtual time, {total_wall:.2f} s of wall time\n")
    return 0
