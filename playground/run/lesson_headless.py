"""A lesson played without a screen, by a scripted student, in virtual time: for
`bully-tui lesson NAME --headless` and the tests, to check that every step can end and
to time it.

The student does each task as asked, at once (once in the lesson, first doing it
wrong: a command the run refuses, so the run is as the lesson expects, and the step's
hint must be said), presses Continue as soon as the rest of a step is done, and
otherwise waits. The run is the app's, instant by instant (an engine without
lookahead), each step's run started from its setup as the app starts it; every step
must end within STEP_BOUND seconds of virtual time from its start, or the lesson is
refused with one line naming the step. The driving goes through LessonPlay's calls, as
the app's does (run/lesson.py), so a lesson that ends here ends there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core.commands import ChangeTimeout, Crash, Elect, Heal, Join, Leave, LiveCommand, Members, Partition, Recover
from ..core.commands import WantCs
from ..core.config import InputError, shown, to_us
from ..core.engine import step_sync
from ..core.events import CommandEvent, Event
from ..record.lesson import Lesson, Task
from .lesson import END, NEXT, LessonPlay, describe_condition, describe_task, quotes
from .session import Session
from .state import ClusterState

STEP_BOUND = 300.0  # virtual seconds a step may take, from its start
T_KEY = 0.5  # what the student's - and + keys change T by (the app's step)
MOST_KEYS = 100  # presses a task may take (T from 50 s to 0.5 s)


@dataclass(frozen=True, slots=True)
class StepResult:
    index: int
    title: str
    ended_by: str  # what ended it, in words
    began: float  # the run's virtual time at its start and end
    ended: float
    wall: float  # seconds it took to play here
    hint: str | None = None  # what the student was told when it did the task wrong
    quoted: tuple[tuple[str, str], ...] = ()  # what its narration quotes of the run at its end ({round}: ...)


def play_headless(lesson: Lesson, session_of: Callable[[int], Session], bound: float = STEP_BOUND,
                  wrong_once: bool = True) -> Iterator[StepResult]:
    """Each step's result as it ends. `session_of(k)`: the run step k starts (a step
    with a setup, or the first). InputError for a step that does not end in time."""
    index, wrong = 0, wrong_once
    while True:
        student = Student(lesson, session_of(index), index, wrong)
        for result in student.play():
            yield result
        wrong = student.wrong
        if student.move == END:
            return
        index = student.play_at.index + 1


class Student:
    """One run of a lesson (the steps from one setup to the next), and the student in it."""

    def __init__(self, lesson: Lesson, session: Session, index: int, wrong: bool):
        self.algorithm = session.algorithm
        self.engine = session.recipe.engine(lookahead=False)
        self.state = ClusterState(session.ids, session.config, session.algorithm)
        self.batch: list[Event] = []
        self.engine.subscribe(self.batch.extend)
        self.play_at = LessonPlay(lesson, session.ids, at=index)
        self.wrong = wrong  # still to do a task wrong once
        self.clock = 0.0  # the run's virtual time (the engine's, or later while nothing is due)
        self.move = NEXT

    def play(self) -> Iterator[StepResult]:
        play = self.play_at
        while True:
            began, wall, hint = play.now.began, time.perf_counter(), None
            while not play.over:
                hint = self._act() or hint
                if play.over:
                    break
                if not self._run_on(began + STEP_BOUND):
                    step = play.step
                    where = step.places.get("task" if step.task and not play.now.task_done else "until", step.where)
                    raise InputError(f"{where}: step {shown(step.title)} did not end within {STEP_BOUND:g} s of "
                                     f"virtual time ({_waiting(play)})")
            quoted = quotes(play.step, self.algorithm, self.state.rounds, self.clock, self.state.cs)
            yield StepResult(play.index, play.step.title, _ended_by(play), began, self.clock,
                             time.perf_counter() - wall, hint, tuple(quoted.items()))
            self.move = play.move_on(self.clock)
            if self.move != NEXT:
                return

    def _act(self) -> str | None:
        """What the student does now: the task (once, first wrong), or Continue once the
        rest is done. The hint it was given, if any."""
        play, hint = self.play_at, None
        step = play.step
        if step.task is not None and not play.now.task_done:
            for _ in range(MOST_KEYS):  # (T goes a step a key)
                command = student_command(step.task, self.state, play.ids)
                if command is None:
                    return hint  # not possible yet (no leader): wait
                if self.wrong:
                    self.wrong = False
                    hint = self._give(wrong_command(step.task, self.state))
                    if hint is None:
                        raise InputError(f"{step.where}: step {shown(step.title)} gave no hint for a wrong command")
                if self._give(command) is not None or play.now.task_done:
                    return hint
            raise InputError(f"{step.where}: step {shown(step.title)} asks to {describe_task(step.task)}, which "
                             f"{MOST_KEYS} presses of a key do not do")
        elif step.waits_for_continue and (step.until is None or play.now.met):
            play.continue_asked()
        return hint

    def _give(self, command: LiveCommand) -> str | None:
        """Give `command` as a key would (a refused one does nothing); the words said."""
        state = self.state
        refused = isinstance(command, (Crash, Recover, Elect, Join, Leave, Partition, Heal, WantCs)) and \
            Members(state.joined, state.left, state.down).refusal(command) is not None
        said = self.play_at.given(command, frozenset(state.leaders()), state.config.timeout, refused=refused)
        if not refused:
            self.engine.submit(command, "user", to_us(self.clock))
            while not any(type(e) is CommandEvent and e.source == "user" for e in self._step()):
                pass  # (until the run has taken it: the next command reads what it did)
        return said

    def _run_on(self, limit: float) -> bool:
        """One instant more, or the time on to a `time` condition; False past `limit`."""
        play = self.play_at
        due = self.engine.due()
        c = play.step.until
        timed = play.now.began + c.seconds if c is not None and c.kind == "time" and not play.now.met else None
        if timed is not None and (due is None or to_us(timed) < due):
            self.clock = max(self.clock, timed)
            play.time_passed(self.clock)
            return self.clock <= limit
        if due is None or due > to_us(limit):
            return False
        self._step()
        return True

    def _step(self) -> list[Event]:
        self.batch.clear()
        step_sync(self.engine)
        self.clock = max(self.clock, self.engine.now)
        events = list(self.batch)
        self.state.apply(events)
        self.play_at.observe(events)
        self.play_at.timeout_is(self.state.config.timeout)
        self.play_at.time_passed(self.clock)
        return events


def student_command(task: Task, state: ClusterState, ids: tuple[int, ...]) -> LiveCommand | None:
    """The command a student gives for `task` now, as its key would (None: it cannot be
    given yet: no node leads, or none has started). Nodes named by rank are ids[rank - 1]."""
    up = [i for i in state.joined if i not in state.down and i not in state.left]
    if not up:  # (a run's first instant: its nodes start there)
        return None
    node = ids[task.node - 1] if task.node is not None and task.node <= len(ids) else None
    if task.leader:
        leaders = state.leaders()
        return Crash(max(leaders)) if leaders else None
    if task.command == "timeout":
        return ChangeTimeout(-T_KEY if task.below is not None else T_KEY)
    if task.command == "join":
        return Join()
    if task.command == "heal":
        return Heal()
    if task.command == "partition":
        return Partition(tuple(ids[k - 1] for k in task.group))
    if task.command == "recover":
        return Recover(node if node is not None else min(state.down, default=ids[0]))
    kind = {"crash": Crash, "elect": Elect, "leave": Leave, "want": WantCs}[task.command]
    return kind(node if node is not None else up[0])


def wrong_command(task: Task, state: ClusterState) -> LiveCommand:
    """A command the run refuses and `task` does not ask for: recovering a node that is
    up, or, where the task is to recover any node, crashing one that is down."""
    up = [i for i in state.joined if i not in state.down and i not in state.left]
    if task.command == "recover" and task.node is None:
        return Crash(min(state.down))
    return Recover(up[0])


def _waiting(play: LessonPlay) -> str:
    step, now = play.step, play.now
    if step.task is not None and not now.task_done:
        return f"its task: {describe_task(step.task)}"
    if step.until is not None and not now.met:
        return f"waiting for {describe_condition(step.until)}"
    return "waiting for Continue"


def _ended_by(play: LessonPlay) -> str:
    step = play.step
    words = [f"task: {describe_task(step.task)}"] if step.task is not None else []
    if step.until is not None:
        words.append(f"until {step.until}")
    if step.waits_for_continue:
        words.append("continue")
    return ", ".join(words)
