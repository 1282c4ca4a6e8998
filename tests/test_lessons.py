"""Lessons: the file format (record/lesson.py), each problem one line naming the file and
the line; and a lesson played beside a run (run/lesson.py): conditions met by events,
tasks checked against the student's commands, narration quoting the run."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from playground.core.commands import ChangeTimeout, Crash, Elect, SetTimeout
from playground.core.config import InputError
from playground.core.events import (
    AgreementEvent,
    ElectionStartEvent,
    SendEvent,
    StateEvent,
    ViolationEvent,
)
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


# --- the glossary, the whole lesson, the command ----------------------------------------------


def glossary_page_html() -> str:
    """The docs' glossary page as MkDocs makes it: its hook (mkdocs.yml) puts the terms in,
    and Markdown with the site's extensions for them draws it."""
    markdown = pytest.importorskip("markdown")  # (the docs' extra: mkdocs-material)
    pytest.importorskip("mkdocs")
    root = Path(__file__).parent.parent
    assert "  - docs/glossary_hook.py" in (root / "mkdocs.yml").read_text().splitlines()
    spec = importlib.util.spec_from_file_location("glossary_hook", root / "docs" / "glossary_hook.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="glossary.md"))
    text = hook.on_page_markdown((root / "docs" / "glossary.md").read_text(), page=page)
    return markdown.markdown(text, extensions=["def_list", "attr_list", "toc"])


def test_the_glossary_is_one_file_that_the_docs_include_and_each_name_is_one_terms():
    from lessons import GLOSSARY
    from playground.record.glossary import glossary, parse_glossary, term_named

    docs = (Path(__file__).parent.parent / "docs" / "glossary.md").read_text()
    assert "<!-- the terms: docs/glossary_hook.py -->" in docs and "**SLE1**" not in docs  # (made, not copied)
    entries = glossary()
    names = [name for e in entries for name in e.slugs]
    assert len(names) == len(set(names))
    for name in ("sle1", "sle2", "c", "t", "t-prime", "p", "δ", "delta", "epoch", "incarnation", "split-brain",
                 "critical-section", "client-delay", "synchronization-delay", "coordinator", "round"):
        assert term_named(name) is not None, name
    assert term_named("t-prime").term == "T′" and term_named("settle-time").term == "c"
    with pytest.raises(InputError, match="g.md line 3: expected a term"):
        parse_glossary("**A**\n: one\nloose words\n", "g.md")
    assert str(GLOSSARY).endswith("lessons/glossary.md")


def test_the_glossary_page_has_an_anchor_for_each_name_of_each_term():
    """A docs page links one term as a lesson does: glossary.md#sle1, #delta, #crash."""
    from playground.record.glossary import glossary

    html = glossary_page_html()
    ids = re.findall(r'\bid="([^"]*)"', html)
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]  # (the page's heading's too)
    terms = re.findall(r'<dt id="([^"]*)">(.*?)</dt>', html)
    assert [slug for slug, _ in terms] == [e.slug for e in glossary()]  # every term, in order, its own name on it
    for (_, shown), entry in zip(terms, glossary()):
        assert f"<strong>{entry.term.replace('&', '&amp;')}</strong>" in shown
        assert f'href="#{entry.slug}"' in shown  # its ¶
        assert re.findall(r'<span id="([^"]*)"></span>', shown) == list(entry.slugs[1:])
    assert {"sle1", "t-prime", "delta", "δ", "crash", "recovery", "normal", "round"} <= set(ids)


def test_a_link_to_a_term_the_glossary_has_not_is_refused_with_its_line(tmp_path):
    text = GOOD.replace("Who notices?", "Who [notices](glossary#noticing)?")
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=rf"{path} line 22: the glossary has no term 'noticing'"):
        read_lesson(path)
    assert read_lesson(write(tmp_path, GOOD.replace("Who notices?", "Who [leads](glossary#leader)?")))


def test_a_control_character_is_refused_with_its_line(tmp_path):
    with pytest.raises(InputError, match=r"line 11: a control character \('\\x1b'\)"):
        read_lesson(write(tmp_path, GOOD.replace("Every node starts", "\x1b[2JEvery node starts")))


def test_what_ends_a_step_in_a_batch_leaves_the_rest_of_the_batch_to_the_next():
    lesson = read_lesson_text("title: T\nabout: A\n# One\nuntil agreement\n# Two\nuntil election\n# Three\ncontinue\n")
    play = LessonPlay(lesson, (1, 2, 3))
    assert play.observe([AgreementEvent(0, 2.0, 3), ElectionStartEvent(1, 2.0, 1)])
    assert play.move_on(2.5) == "next" and play.index == 1 and play.now.began == 2.0
    assert play.over  # (the election after the agreement, in the same batch, was step two's)
    assert play.move_on(2.5) == "next" and not play.over and play.pace() is None  # a read step holds the run
    assert play.continue_asked() and play.move_on(3.0) == "end"


def test_a_step_of_T_towards_the_bound_is_neither_done_nor_wrong_and_the_run_says_when_it_is_past():
    lesson = read_lesson_text("title: T\nabout: A\n# S\nspeed 2\ntask timeout below 3\nhint Press -.\n")
    play = LessonPlay(lesson, (1, 2, 3))
    assert play.given(ChangeTimeout(-0.5), frozenset(), 4.0) is None and not play.now.task_done
    assert play.given(ChangeTimeout(0.5), frozenset(), 3.5) == "Press -."
    assert not play.timeout_is(3.0) and play.timeout_is(2.5) and play.pace() == 2


def test_every_shipped_lesson_ends_headless_each_step_in_its_bound():
    from playground.cli.lesson import session_of
    from playground.record.lesson import shipped
    from playground.run.lesson_headless import STEP_BOUND, play_headless

    lessons = shipped()
    assert "bully" in [lesson.name for lesson in lessons]
    for lesson in lessons:
        results = list(play_headless(lesson, lambda k, lesson=lesson: session_of(lesson, k)))
        assert [r.index for r in results] == list(range(len(lesson.steps))), lesson.name
        assert all(0 <= r.ended - r.began <= STEP_BOUND for r in results)
        if any(step.task for step in lesson.steps):
            assert sum(r.hint is not None for r in results) == 1, lesson.name  # (done wrong once, and told)


def test_the_bully_lesson_shows_45_36_9_then_1_and_9_and_ends_on_the_students_split_brain():
    from playground.cli.lesson import open_lesson, session_of
    from playground.run.lesson_headless import play_headless

    lesson = open_lesson("bully")
    results = {r.title: r for r in play_headless(lesson, lambda k: session_of(lesson, k))}
    assert dict(results["Counting the worst case"].quoted) == {"round": "45 Election, 36 Answer and 9 Coordinator messages"}
    assert dict(results["Counting the best case"].quoted) == {"round": "1 Election and 9 Coordinator messages"}
    assert results["Split brain"].ended_by == "task: start an election at node 4, until violation split-brain"
    assert results["Crash the leader"].hint.startswith("Press **x**")


def test_a_step_whose_event_never_comes_is_refused_naming_its_line(tmp_path):
    from playground.cli.lesson import session_of
    from playground.run.lesson_headless import play_headless

    path = write(tmp_path, "title: T\nabout: A\n# S\nset nodes 3\nset probe-interval 0\nuntil state down of 1\n")
    lesson = read_lesson(path)
    with pytest.raises(InputError, match=f"{path} line 6: step 'S' did not end within 300 s of virtual time"):
        list(play_headless(lesson, lambda k: session_of(lesson, k)))


@pytest.mark.parametrize(("text", "line", "said"), [
    ("# S\nset nodes 3\ntask crash 5\n", 5, "names node 5, but its run has 3 nodes"),
    ("# S\nuntil message Elektion\n", 4, "never sends"),
    ("# S\nuntil enter\n", 4, "no lock"),
    ("# S\nset algorithm ring\ntask partition 1,3\n", 5, "no key or palette command"),
    ("# S\nset nodes 3\nat 5 crash 4\ncontinue\n", 5, "4"),
    ("# S\nset timeout -1\ncontinue\n", 4, "timeout must be"),
])
def test_check_refuses_a_step_that_could_never_end_with_one_line(tmp_path, capsys, text, line, said):
    from playground.cli.entry import main

    path = write(tmp_path, f"title: T\nabout: A\n{text}")
    assert main(["lesson", "--check", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"bully-tui: error: {path} line {line}: ") and said in err and "\n" not in err


def test_the_command_lists_checks_and_plays_headless(capsys):
    from playground.cli.entry import main

    assert main(["lesson"]) == 0
    assert re.search(r"^bully +The Bully algorithm \(12 steps\): ", capsys.readouterr().out, re.MULTILINE)
    assert main(["lesson", "--check"]) == 0
    assert "bully.lesson: ok, 12 steps" in capsys.readouterr().out
    assert main(["lesson", "bully", "--headless"]) == 0
    out = capsys.readouterr().out
    assert " 6/12 Counting the worst case: continue" in out and "{round} = 45 Election, 36 Answer" in out
    assert main(["lesson", "no-such"]) == 2
    assert "no lesson called 'no-such' (the lessons: bully" in capsys.readouterr().err


def test_a_scenarios_claim_goes_with_its_run_into_the_transcript(tmp_path):
    from playground.cli.plan import plan
    from playground.record.reader import Reader
    from playground.run.wiring import run_headless

    scenario = Path(__file__).parent.parent / "scenarios" / "classic-best-case.scenario"
    session = plan(["--headless", "--scenario", str(scenario), "--transcript", str(tmp_path / "t.jsonl")]).session
    assert session.claim.scenario == "classic-best-case.scenario"
    assert session.claim.text.startswith("Classic Bully, best case") and "#" not in session.claim.text
    run_headless(session, 30)
    with Reader.open(str(tmp_path / "t.jsonl")) as reader:
        assert reader.header.claim == session.claim


# --- the ring and mutual exclusion lessons: what each narration claims, as the run shows it ---


def test_a_condition_names_a_property_as_the_screen_does():
    from playground.record.lesson import parse_condition
    from playground.run.lesson import describe_condition

    said = [describe_condition(parse_condition(f"violation {p}")) for p in ("sle2", "split-brain", "cs-liveness")]
    assert said == ["the monitor to report SLE2", "the monitor to report split brain",
                    "the monitor to report critical section liveness"]


def test_a_node_that_joins_takes_its_rank_for_the_steps_after():
    from playground.core.commands import Leave
    from playground.core.events import JoinEvent

    lesson = read_lesson_text("title: T\nabout: A\n# S\ntask leave 4\n")
    play = LessonPlay(lesson, (1, 2, 3))
    assert play.given(Leave(3), frozenset()) is not None  # (node 4 is not there yet)
    play.observe([JoinEvent(0, 1.0, 4)])
    assert play.ids == (1, 2, 3, 4) and play.given(Leave(4), frozenset()) is None and play.now.task_done


def test_a_rounds_messages_are_named_in_the_order_the_algorithm_declares_them():
    last = Round(0.0, 1, 4)
    last.messages.update({"halt": 3, "are_you_there": 6, "yes": 6, "ready": 0})
    assert narration(read_lesson_text("title: T\nabout: A\n# S\ncontinue\n\n{round}\n").steps[0], "garcia-molina",
                     Rounds(count=1, current=last), 0.0) == "6 AreYouThere, 6 Yes and 3 Halt messages"
