"""A lesson played beside a run: which step it is at, when that step ends (its
condition met by the run's events, its task done by the student, or the student asking
for the next), and its narration with the run's own figures in it.

It knows no algorithm: it reads the trace's events (what happened, to which node, the
role of a status, a message's name) as the monitor does. Nodes are named by rank in a
lesson file (1 is the lowest id), as everywhere on the command line.

Narration may quote the run: `{round}` is the last election round's messages by name
("45 Election, 36 Answer and 9 Coordinator messages"), `{rounds}` how many rounds so
far, `{t}` the time the step ended at. The tests play every shipped lesson and check
that what its narration claims is what the run shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from protocol import CsState, machine

from ..core.commands import Command, Crash, Elect, Join, Leave, Partition, Recover, SetTimeout, WantCs
from ..core.events import AgreementEvent, CsEvent, ElectionStartEvent, Event, SendEvent, StateEvent, ViolationEvent
from ..core.monitor import CS_WAIT, MUTEX, SLE1, SLE2, SPLIT_BRAIN
from ..core.rounds import Round
from ..record.lesson import Condition, Lesson, Step, Task

PROPERTY = {"sle1": SLE1, "split-brain": SPLIT_BRAIN, "sle2": SLE2, "mutual-exclusion": MUTEX, "cs-liveness": CS_WAIT}
COMMAND_OF_TASK = {"crash": Crash, "recover": Recover, "elect": Elect, "join": Join, "leave": Leave, "want": WantCs,
                   "partition": Partition, "timeout": SetTimeout}


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

    @property
    def step(self) -> Step:
        return self.now.step

    @property
    def last(self) -> bool:
        return self.index == len(self.lesson.steps) - 1

    def go_to(self, index: int, began: float) -> None:
        self.index = index
        self.now = StepPlay(self.lesson.steps[index], began)

    # --- what ends a step ---------------------------------------------------------------

    def observe(self, events: Iterable[Event]) -> bool:
        """Take the run's events (in order); whether the step is over now."""
        condition = self.step.until
        if condition is not None and not self.now.met:
            for e in events:
                if e.t >= self.now.began and self._meets(condition, e):
                    self.now.met = True
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

    def given(self, command: Command, leaders: frozenset[int]) -> str | None:
        """The student gave `command` (`leaders`: the nodes that believed they led just
        before). None if it does what the step asks (or the step asks nothing), else the
        words to say: the hint, or what the step asks for."""
        task = self.step.task
        if task is None or self.now.task_done:
            return None
        if self._does(task, command, leaders):
            self.now.task_done = True
            return None
        return self.step.hint or f"This step asks you to {task}."

    def _does(self, task: Task, command: Command, leaders: frozenset[int]) -> bool:
        if type(command) is not COMMAND_OF_TASK[task.command]:
            return False
        if task.leader:
            return command.node in leaders
        if task.node is not None:
            return getattr(command, "node", None) == self._id(task.node)
        if task.group:
            return tuple(sorted(command.group)) == tuple(self._id(k) for k in task.group)
        if task.below is not None:
            return command.seconds < task.below
        if task.above is not None:
            return command.seconds > task.above
        return True


def narration(step: Step, algorithm: str, rounds: list[Round], t: float) -> str:
    """The step's narration with the run's figures in it (see the module's header)."""
    text = step.narration
    if "{round}" in text:
        text = text.replace("{round}", round_text(algorithm, rounds[-1] if rounds else None))
    return text.replace("{rounds}", f"{len(rounds):,}").replace("{t}", f"{t:g}")


def round_text(algorithm: str, last: Round | None) -> str:
    """A round's messages by name, failure detection apart: "45 Election, 36 Answer and 9
    Coordinator messages"."""
    if last is None:
        return "no election round yet"
    labels = {m.type: m.label for m in machine(algorithm).messages}  # (a round counts no detector traffic)
    parts = [f"{count:,} {labels.get(kind, kind)}" for kind, count in last.messages.items() if kind in labels]
    if not parts:
        return "no messages"
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + " messages"
