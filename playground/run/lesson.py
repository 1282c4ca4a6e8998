"""A lesson played beside a run: which step it is at, when that step ends (its
condition met by the run's events, its task done by the student, or the student asking
for the next), and its narration with the run's own figures in it.

It knows no algorithm: it reads the trace's events (what happened, to which node, the
role of a status, a message's name) as the monitor does. Nodes are named by rank in a
lesson file (1 is the lowest id), as everywhere on the command line.

Narration may quote the run: `{round}` is the last election round's messages by name
("45 Election, 36 Answer and 9 Coordinator messages"), `{rounds}` how many rounds so
far, `{t}` the time the step ended at. With a lock, the critical section's figures as
the status bar measures them (core/cs_entries.py): `{entries}` ("3 entries"),
`{per-entry}` ("12 messages per entry": per request that entered and left),
`{client-delay}` and `{sync-delay}` (the last entry's wait and the last hand-over's,
"2 s"). The tests play every shipped lesson and check that what its narration claims is
what the run shows.

Going on. Whoever drives the run (the app, or lesson_headless.py's scripted student)
feeds it events, commands and the time, and once a step is `over`, asks `move_on`: the
lesson was at its end; or the next step starts a run of its own (the driver starts it,
from `Lesson.setup`); or the next step goes on in this run, from the moment the last
ended (an event that ended it: the events after it in the same batch are the new
step's first), and may itself be over at once. Both drivers go through the same calls,
so a lesson that ends headless ends in the app.

Pace. A step plays at its `speed`, else the last speed an earlier step gave, else 1; a
reading step (only `continue`) with no speed of its own holds the run still, so the
screen stays as its narration describes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from protocol import CsState, machine

from ..core.commands import (
    ChangeTimeout,
    Crash,
    Elect,
    Heal,
    Join,
    Leave,
    LiveCommand,
    Partition,
    Recover,
    SetTimeout,
    WantCs,
)
from ..core.cs_entries import CsEntries
from ..core.events import (
    AgreementEvent,
    CsEvent,
    ElectionStartEvent,
    Event,
    JoinEvent,
    SendEvent,
    StateEvent,
    ViolationEvent,
)
from ..core.monitor import CS_WAIT, MUTEX, PROPERTY_NAMES, SLE1, SLE2, SPLIT_BRAIN
from ..core.rounds import Round, Rounds
from ..record.lesson import Condition, Lesson, Step, Task

PROPERTY = {"sle1": SLE1, "split-brain": SPLIT_BRAIN, "sle2": SLE2, "mutual-exclusion": MUTEX, "cs-liveness": CS_WAIT}
COMMAND_OF_TASK = {"crash": Crash, "recover": Recover, "elect": Elect, "join": Join, "leave": Leave, "want": WantCs,
                   "partition": Partition, "heal": Heal, "timeout": (SetTimeout, ChangeTimeout)}
END, NEW_RUN, NEXT = "end", "new run", "next"  # what `move_on` did


@dataclass(frozen=True, slots=True)
class LessonAt:
    """A lesson to play beside an app's run, from step `step` (the run is that step's)."""

    lesson: Lesson
    step: int = 0


@dataclass(slots=True)
class StepPlay:
    """One step under way: since when, and what of it is done."""

    step: Step
    began: float  # the run's virtual time when the step began
    task_done: bool = False
    met: bool = False  # its condition (`until`) has been met
    continued: bool = False  # the student asked for the next step

    @property
    def over(self) -> bool:
        s = self.step
        if s.waits_for_continue and not self.continued:
            return False
        if s.task is not None and not self.task_done:
            return False
        return s.until is None or self.met


class LessonPlay:
    """A lesson and the step it is at, for a run whose node ids are `ids`."""

    def __init__(self, lesson: Lesson, ids: tuple[int, ...], at: int = 0, began: float = 0.0):
        self.lesson = lesson
        self.ids = ids
        self.index = at
        self.now = StepPlay(lesson.steps[at], began)
        self._rest: list[Event] = []  # the events after the one that ended the step, in its batch
        self._ended_at: float | None = None  # when an event ended it
    @property
    def step(self) -> Step:
        return self.now.step

    @property
    def last(self) -> bool:
        return self.index == len(self.lesson.steps) - 1

    def go_to(self, index: int, began: float) -> None:
        self.index = index
        self.now = StepPlay(self.lesson.steps[index], began)
        self._rest, self._ended_at = [], None

    @property
    def over(self) -> bool:
        return self.now.over

    def move_on(self, t: float) -> str:
        """The step is over (`t`: the run's time now): END if it was the last; NEW_RUN if
        the next starts a run of its own (the driver starts it, and calls `go_to`); else
        NEXT: this is at the next step, begun when the last ended, its first events those
        after the one that ended the last. (It may be over at once: ask `over`.)"""
        if self.last:
            return END
        if self.lesson.steps[self.index + 1].new_run:
            return NEW_RUN
        rest, began = self._rest, t if self._ended_at is None else self._ended_at
        self.go_to(self.index + 1, began)
        if rest:
            self.observe(rest)
        return NEXT

    def pace(self) -> float | None:
        """The speed this step plays at (virtual seconds a second), or None: held still."""
        steps = self.lesson.steps
        own = self.step.speed
        if own is None and self.step.waits_for_continue and self.step.until is None and self.step.task is None:
            return None
        if own is not None:
            return own
        return next((steps[k].speed for k in range(self.index - 1, -1, -1) if steps[k].speed is not None), 1.0)

    # --- what ends a step ---------------------------------------------------------------

    def observe(self, events: Iterable[Event]) -> bool:
        """Take the run's events (in order); whether the step is over now. A node that
        joins takes its rank among the ids (ranks count every node the run has had)."""
        for e in events:
            if type(e) is JoinEvent and e.node not in self.ids:
                self.ids = tuple(sorted((*self.ids, e.node)))
        condition = self.step.until
        if condition is not None and not self.now.met:
            for k, e in enumerate(events):
                if e.t >= self.now.began and self._meets(condition, e):
                    self.now.met = True
                    if self.now.over:  # (ended by this event: what follows it is the next step's)
                        self._rest, self._ended_at = list(events[k + 1:]), e.t
                    break
        return self.now.over

    def time_passed(self, t: float) -> bool:
        """The run is at virtual time `t` (for `until time T`): whether the step is over."""
        c = self.step.until
        if c is not None and c.kind == "time" and t >= self.now.began + c.seconds:
            self.now.met = True
        return self.now.over

    def continue_asked(self) -> bool:
        """The student asks for the next step: a reading step ends; a step whose task or
        condition is still to come goes on (False)."""
        self.now.continued = True
        return self.now.over

    def _meets(self, c: Condition, e: Event) -> bool:
        kind = type(e)
        node = None if c.node is None else self._id(c.node)
        if c.kind == "agreement":
            return kind is AgreementEvent and e.leader is not None and (node is None or e.leader == node)
        if c.kind == "election":
            return kind is ElectionStartEvent
        if c.kind == "state":
            return kind is StateEvent and e.role == c.name and (node is None or e.node == node)
        if c.kind == "message":
            return kind is SendEvent and c.name in (e.msg.label, e.msg.type)
        if c.kind == "violation":
            return kind is ViolationEvent and e.phase == "begin" and (c.name is None or e.property == PROPERTY[c.name])
        if c.kind == "enter":
            return kind is CsEvent and e.state is CsState.HELD and (node is None or e.node == node)
        return False  # time: time_passed

    def _id(self, rank: int) -> int | None:
        return self.ids[rank - 1] if 0 < rank <= len(self.ids) else None

    # --- the student's task -------------------------------------------------------------

    def given(self, command: LiveCommand, leaders: frozenset[int], timeout: float | None = None,
              refused: bool = False) -> str | None:
        """The student gave `command` (`leaders`: the nodes that believed they led just
        before; `timeout`: T before, for a change of T; `refused`: the run would not take
        it, so it does nothing). None if it does what the step asks, or goes the way it
        asks (a step of T towards the bound), or the step asks nothing; else the words
        to say: the hint, or what the step asks for."""
        task = self.step.task
        if task is None or self.now.task_done:
            return None
        does = self.does(command, leaders, timeout)
        if does is None or (does and refused):
            return None
        if does:
            self.now.task_done = True
            return None
        return self.step.hint or f"This step asks you to {describe_task(task)}."

    def timeout_is(self, seconds: float) -> bool:
        """The run's T is `seconds` now: a task to take T past a bound is done once it is
        (several presses of a key may land together); whether the step is over."""
        task = self.step.task
        if task is not None and task.command == "timeout" and not self.now.task_done and (
                seconds < task.below if task.below is not None else seconds > task.above):
            self.now.task_done = True
        return self.now.over

    def does(self, command: LiveCommand, leaders: frozenset[int], timeout: float | None = None) -> bool | None:
        """Whether `command` does this step's task; None: not yet, but it goes that way
        (T changed towards the bound, not past it)."""
        task = self.step.task
        if task is None or not isinstance(command, COMMAND_OF_TASK[task.command]):
            return False
        if task.command == "timeout":
            before = timeout if timeout is not None else 0.0
            after = command.seconds if type(command) is SetTimeout else max(before + command.by, abs(command.by))
            bound, lower = (task.below, True) if task.below is not None else (task.above, False)
            if (after < bound) if lower else (after > bound):
                return True
            return None if (after < before if lower else after > before) else False
        if task.leader:
            return command.node in leaders
        if task.node is not None:
            return getattr(command, "node", None) == self._id(task.node)
        if task.group:  # (a cut is the same cut from either side)
            group, asked = set(command.group), {self._id(k) for k in task.group}
            return group == asked or group == set(self.ids) - asked
        return True

    def skip(self) -> None:
        """The student skips the step: it is over, whatever it waited for."""
        self.now.task_done = self.now.met = self.now.continued = True
        self._rest, self._ended_at = [], None


# --- in words -------------------------------------------------------------------------------


def describe_condition(c: Condition, name=str) -> str:
    """What a step waits for, in words (`name`: a node's name from its rank)."""
    node = None if c.node is None else f"node {name(c.node)}"
    if c.kind == "agreement":
        return "every up node to follow " + (node if node else "one leader")
    if c.kind == "election":
        return "an election to start"
    if c.kind == "state":
        return f"{node or 'a node'} to be {c.name}"
    if c.kind == "message":
        return f"a {c.name} message"
    if c.kind == "violation":
        return f"the monitor to report {PROPERTY_NAMES[PROPERTY[c.name]] if c.name else 'a violation'}"
    if c.kind == "enter":
        return f"{node or 'a node'} to enter the critical section"
    return f"{c.seconds:g} s to pass"


def describe_task(t: Task, name=str) -> str:
    """What a step asks the student to do, in words."""
    if t.leader:
        return "crash the leader"
    node = "a node" if t.node is None else f"node {name(t.node)}"
    if t.command == "timeout":
        return f"lower T below {t.below:g} s" if t.below is not None else f"raise T above {t.above:g} s"
    if t.command == "partition":
        return f"cut node{'s' if len(t.group) > 1 else ''} {', '.join(name(k) for k in t.group)} off from the others"
    if t.command == "join":
        return "let a new node join"
    if t.command == "heal":
        return "heal every held link"
    if t.command == "elect":
        return f"start an election at {node}"
    if t.command == "want":
        return f"make {node} ask for the critical section"
    if t.command == "leave":
        return f"make {node} leave"
    return f"{t.command} {node}"


def quotes(step: Step, algorithm: str, rounds: Rounds, t: float, cs: CsEntries | None = None) -> dict[str, str]:
    """What the step's narration quotes of the run now, by template (see the module's
    header); `cs`: the critical section's measures, in a run with a lock."""
    text, said = step.narration, {}
    if "{round}" in text:
        said["round"] = round_text(algorithm, rounds.current)
    if "{rounds}" in text:
        said["rounds"] = f"{rounds.count:,}"
    if "{t}" in text:
        said["t"] = f"{t:g}"
    for name in CS_FIGURES:
        if f"{{{name}}}" in text:
            said[name] = cs_text(name, cs)
    return said


def narration(step: Step, algorithm: str, rounds: Rounds, t: float, cs: CsEntries | None = None) -> str:
    """The step's narration with the run's figures in it."""
    text = step.narration
    for name, value in quotes(step, algorithm, rounds, t, cs).items():
        text = text.replace(f"{{{name}}}", value)
    return text


CS_FIGURES = ("entries", "per-entry", "client-delay", "sync-delay")


def cs_text(name: str, cs: CsEntries | None) -> str:
    """One of CS_FIGURES in words: "3 entries", "12 messages per entry", "2 s"."""
    if cs is None:
        return "nothing (this run has no lock)"
    if name == "entries":
        return "no entry yet" if not cs.entries else f"{cs.entries:,} entr{'y' if cs.entries == 1 else 'ies'}"
    if name == "per-entry":
        each = cs.messages_per_entry
        if each is None:  # (counted per request that entered and left)
            return "no figure yet: no request has entered and left"
        return f"{round(each, 2):g} message{'' if each == 1 else 's'} per entry"
    delays = cs.client_delays if name == "client-delay" else cs.sync_delays
    if not delays:
        return "no entry yet" if name == "client-delay" else "no hand-over yet"
    return f"{round(delays[-1], 2):g} s"  # (to the hundredth: 0.999999 s is 1 s)


def round_text(algorithm: str, last: Round | None) -> str:
    """A round's messages by name, in the order the algorithm declares them (a request
    before its reply), failure detection apart: "45 Election, 36 Answer and 9
    Coordinator messages"."""
    if last is None:
        return "no election round yet"
    labels = {m.type: m.label for m in machine(algorithm).messages}  # (a round counts no detector traffic)
    counts = [(label, last.messages[kind]) for kind, label in labels.items() if last.messages.get(kind)]
    parts = [f"{count:,} {label}" for label, count in counts]
    if not parts:
        return "no messages"
    total = sum(count for _, count in counts)
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + \
        (" message" if total == 1 else " messages")
