"""Lessons: the file format (record/lesson.py), each problem one line naming the file and
the line; and a lesson played beside a run (run/lesson.py): conditions met by events,
tasks checked against the student's commands, narration quoting the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from playground.core.commands import Crash, Elect, SetTimeout
from playground.core.config import InputError
from playground.core.events import AgreementEvent, ElectionStartEvent, SendEvent, StateEvent, ViolationEvent
from playground.core.rounds import Round, Rounds
from playground.record.lesson import read_lesson
from playground.run.lesson import LessonPlay, narration
from protocol import StatusRole
from protocol.classic import Answer, ClassicStatus, Coordinator, Election

GOOD = """title: A lesson
about: One line for the menu.
order: 2

# The first election
set algorithm classic
set nodes 5
speed 4
until agreement

Every node starts at once.

## A heading of the narration's own

More.

# Crash the leader
task crash the leader
hint Press **x**.
until agreement under 4

Who notices?

# What it cost
continue

That round took {round}.
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "x.lesson"
    path.write_text(text)
    return str(path)


def test_a_lesson_reads_into_steps_with_their_directives_and_narration(tmp_path):
    lesson = read_lesson(write(tmp_path, GOOD))
    assert (lesson.title, lesson.about, lesson.order, lesson.name) == ("A lesson", "One line for the menu.", 2, "x")
    first, crash, cost = lesson.steps
    assert first.settings == {"algorithm": ("classic", f"{tmp_path}/x.lesson line 6"),
                              "nodes": ("5", f"{tmp_path}/x.lesson line 7")}
    assert first.new_run and first.speed == 4 and str(first.until) == "agreement"
    assert first.narration.startswith("Every node starts at once.") and "## A heading" in first.narration
    assert str(crash.task) == "crash the leader" and crash.hint == "Press **x**." and str(crash.until) == "agreement under 4"
    assert not crash.new_run and cost.waits_for_continue and cost.until is None


@pytest.mark.parametrize(("change", "line", "said"), [
    (("until agreement\n\nEvery", "until agreement soon\n\nEvery"), 9, "cannot read the condition 'agreement soon'"),
    (("speed 4", "speed fast"), 8, "speed"),
    (("speed 4", "pace 4"), 8, "unknown step directive 'pace'"),
    (("set nodes 5", "set colour red"), 7, "expected set NAME VALUE"),
    (("task crash the leader", "task explode 3"), 18, "cannot read the task 'explode 3'"),
    (("task crash the leader", "task crash zero"), 18, "rank"),
    (("continue\n", "continue now\n"), 25, "continue takes nothing"),
    (("until agreement under 4", "until agreement under 4\nuntil election"), 21, "until is given twice"),
])
def test_a_bad_line_is_one_line_naming_the_file_and_the_line(tmp_path, change, line, said):
    path = write(tmp_path, GOOD.replace(*change, 1))
    with pytest.raises(InputError) as e:
        read_lesson(path)
    assert str(e.value).startswith(f"{path} line {line}: ") and said in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("text", "said"), [
    ("about: no title\n# A\ncontinue\n", "the header has no title"),
    ("title: T\nabout: A\n", "no steps"),
    ("title: T\nabout: A\nwho: me\n# A\ncontinue\n", "line 3: expected a header line"),
    ("title: T\nabout: A\n# A step that waits for nothing\n\nWords.\n", "cannot end: give it until, task or continue"),
    ("title: T\nabout: A\n# Hint only\nhint Press x\ncontinue\n", "has a hint but no task"),
])
def test_a_lesson_that_cannot_play_is_refused_with_one_line(tmp_path, text, said):
    with pytest.raises(InputError, match=said):
        read_lesson(write(tmp_path, text))


def events_of(*events):
    return list(events)


def test_a_step_ends_when_its_condition_is_met_after_it_began():
    lesson = read_lesson_text(GOOD)
    play = LessonPlay(lesson, ids=(1, 2, 3, 4, 5), at=1, began=10.0)
    status = ClassicStatus.NORMAL
    before = AgreementEvent(0, 5.0, 4)  # (before the step began: not this step's)
    assert not play.observe([before])
    assert play.given(Elect(4), frozenset({5})) == "Press **x**."  # something else: the hint
    assert play.given(Crash(5), frozenset({5})) is None  # the leader: done
    assert not play.observe([AgreementEvent(0, 12.0, 3)])  # agreement, but not under node 4
    assert not play.observe([StateEvent(0, 12.0, 4, status, 4, StatusRole.NORMAL)])
    assert play.observe([AgreementEvent(0, 13.0, 4)])


def test_a_reading_step_ends_when_the_student_asks_and_a_task_step_does_not_end_on_asking():
    lesson = read_lesson_text(GOOD)
    assert LessonPlay(lesson, (1, 2, 3), at=2).continue_asked()
    assert not LessonPlay(lesson, (1, 2, 3), at=1).continue_asked()


@pytest.mark.parametrize(("until", "event", "met"), [
    ("election", ElectionStartEvent(0, 1.0, 2), True),
    ("message Answer", SendEvent(0, 1.0, 2, 1, 1, Answer(), 2.0), True),
    ("message Answer", SendEvent(0, 1.0, 2, 3, 1, Election(), 2.0), False),
    ("state electing of 2", StateEvent(0, 1.0, 2, ClassicStatus.ELECTION, None, StatusRole.ELECTING), True),
    ("state electing of 3", StateEvent(0, 1.0, 2, ClassicStatus.ELECTION, None, StatusRole.ELECTING), False),
    ("violation split-brain", ViolationEvent(0, 1.0, "split_brain", "begin", (1, 2), ()), True),
    ("violation sle1", ViolationEvent(0, 1.0, "split_brain", "begin", (1, 2), ()), False),
])
def test_each_kind_of_condition(tmp_path, until, event, met):
    lesson = read_lesson_text(f"title: T\nabout: A\n# S\nuntil {until}\n")
    assert LessonPlay(lesson, (1, 2, 3)).observe([event]) is met


def test_time_and_timeout_tasks():
    lesson = read_lesson_text("title: T\nabout: A\n# S\ntask timeout below 3\nuntil time 5\n")
    play = LessonPlay(lesson, (1, 2, 3), began=10.0)
    assert play.given(SetTimeout(3.5), frozenset()) == "This step asks you to lower T below 3 s."
    assert play.given(SetTimeout(2.5), frozenset()) is None
    assert not play.time_passed(14.9) and play.time_passed(15.0)


def test_the_narration_quotes_the_run():
    lesson = read_lesson_text(GOOD)
    last = Round(20.0, 1, 1)
    last.messages.update({"election": 45, "answer": 36, "coordinator": 9})
    said = narration(lesson.steps[2], "classic", Rounds(count=2, current=last), 30.0)
    assert said == "That round took 45 Election, 36 Answer and 9 Coordinator messages."
    assert Coordinator.label == "Coordinator"


def read_lesson_text(text: str):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_lesson(write(Path(folder), text))
