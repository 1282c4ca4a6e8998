"""A lesson played in the simulation's app, and a scenario's claim shown: what the
narration pane (narration.py) says, and what the lesson does to the run.

The lesson itself is the runtime's (run/lesson.py's LessonPlay, through the control
surface): which step it is at and when each ends. This module hands it what happens
(the run's events as the app takes them, the student's commands as the app is given
them, the time on a tick) and does what it decides: the run's pace for each step (a
reading step holds it still), the pane redrawn, and a step whose setup is a run of its
own started as the palette's algorithm switch starts one (the app ends with a Restart,
and cli/live.py opens the next with that step's run). `←` takes the run back to the
instant the previous step began (a branch there, as the time machine makes one), or
restarts that step's run if it began in another. Leaving the lesson (escape) hides the
pane and leaves the run as it is; `L` brings it back at the step it was at, which waits
afresh from then.

A scenario's claim (its file's comment lines, which its transcript keeps) shows in the
same pane until it is dismissed.
"""

from __future__ import annotations

from textual.app import App

from ..run.control import END, NEW_RUN, LessonAt, LessonPlay, describe_condition, describe_task, narration
from .cluster_app import algorithm_refusal
from .model import LOG_CAP
from .narration import NarrationPane, keys_for

TICK = 0.25  # seconds between looks at the time (a step `until time T`) and at the figures the narration quotes


class LessonGuide:
    def __init__(self, app: App, lesson: LessonAt | None, claim=None):
        """`claim`: a scenario's (its `scenario` and `text`), shown until dismissed."""
        self.app = app
        self.pane = NarrationPane()
        self.at = lesson
        self.claim = claim
        self.play: LessonPlay | None = None
        self.showing: str | None = "lesson" if lesson else "claim" if claim else None  # what the pane shows
        self.starts: dict[int, int] = {}  # a step of this run -> the instant it began at
        self.hint: str | None = None
        self.skip_asked = False
        self.finished = False

    @property
    def narrating(self) -> bool:
        """A lesson is in the pane (its keys are on)."""
        return self.showing == "lesson"

    @property
    def has_something(self) -> bool:
        return self.at is not None or self.claim is not None

    def start(self) -> None:
        """The run has started (the app's mount)."""
        if self.at is not None:
            self.play = LessonPlay(self.at.lesson, self.app.session.ids, at=self.at.step)
            self._began()
            self.app.set_interval(TICK, self.tick)  # (none without a lesson: a paused app does nothing)
        self.draw()

    # --- what happens ------------------------------------------------------------------------

    def observe(self, events: list) -> None:
        """The run's new events, as the app takes them."""
        if self._listening:
            self.play.observe(events)
            self.play.timeout_is(self.app.state.config.timeout)
            self._go_on()

    def given(self, command: object) -> None:
        """The student gives `command` (a key, the palette): its task done, or the hint."""
        if not self._listening:
            return
        app = self.app
        state = app.state
        refused = app.control is None or bool(algorithm_refusal(command, app.session.algorithm)
                                              or app.control.refusal(command, app.model.label.__getitem__))
        self.hint = self.play.given(command, frozenset(state.leaders()), state.config.timeout, refused=refused)
        self.skip_asked = False
        self._go_on()
        self.draw()

    def tick(self) -> None:
        if self._listening and self.app.timeline.at_present:
            self.play.time_passed(self.app.timeline.now())
            self._go_on()
        self.draw()

    @property
    def _listening(self) -> bool:
        return self.narrating and self.play is not None and not self.finished

    # --- the keys -------------------------------------------------------------------------------

    def next(self) -> None:
        """→: a read step ends; one that still waits asks first, and a second → skips it."""
        play = self.play
        if self.finished:
            self.app.notify("That was the last step: escape leaves the lesson, and the run goes on.")
            return
        step, now = play.step, play.now
        rest_done = (step.task is None or now.task_done) and (step.until is None or now.met)
        if rest_done:
            play.continue_asked()
        elif self.skip_asked:
            play.skip()
        else:
            self.skip_asked = True
            self.hint = f"This step waits for {self._waiting()}: press → again to skip it."
            self.draw()
            return
        self._go_on()

    def back(self) -> None:
        """←: the previous step, the run back to when it began (or its own run, again)."""
        play = self.play
        if play.index == 0:
            self.app.notify("This is the first step.")
            return
        k = play.index - 1
        lesson = play.lesson
        if k in self.starts and not (lesson.steps[k].new_run or k == self.at.step):
            self.app.run_worker(self._rewind(k, self.starts[k]), exclusive=True, group="lesson")
        else:
            self._restart(lesson.run_of(k) or 0)

    def hide(self) -> None:
        """Escape: the pane goes, the run stays as it is (a claim is dismissed)."""
        self.showing = None
        self.pane.screen.fit(self.pane.screen.size.width)

    def show_again(self) -> None:
        """L: the lesson (or the claim) again; a lesson's step waits afresh from now."""
        self.showing = "lesson" if self.at is not None else "claim"
        if self.play is not None and not self.finished:
            self.play.go_to(self.play.index, self.app.timeline.now())
            self._began()
        self.pane.screen.fit(self.pane.screen.size.width)
        self.draw()

    # --- going on ---------------------------------------------------------------------------------

    def _go_on(self) -> None:
        play = self.play
        while play.over:
            move = play.move_on(self.app.timeline.now())
            if move == END:
                self.finished = True
                break
            if move == NEW_RUN:
                self._restart(play.index + 1)
                return
            self._began()
        self.draw()

    def _began(self) -> None:
        """A step begins: note its instant, set the run's pace."""
        timeline, live = self.app.timeline, self.app.live
        self.starts = {k: i for k, i in self.starts.items() if k < self.play.index}
        self.starts[self.play.index] = max(timeline.history.instants - 1, 0)
        self.hint, self.skip_asked = None, False
        if live is None or not timeline.at_present:
            return
        pace = self.play.pace()
        if pace is None:
            if not live.paused:
                live.pause()
                self.app.redraws.pause()
        else:
            live.set_speed(pace)
            if live.paused:
                live.resume()
                self.app.redraws.resume()
        self.app.redraw()

    def _restart(self, index: int) -> None:
        """Step `index` starts a run of its own: this app ends, the next runs it."""
        from .app import Restart  # (the app holds this guide)

        app = self.app
        app.restart_with = Restart(app.session.algorithm, app.state.config, app.selected,
                                   diagram=app.log_view.diagram, lesson=LessonAt(self.play.lesson, index))
        app.exit()

    async def _rewind(self, index: int, instant: int) -> None:
        """The run goes back to `instant` and on from there (a branch), at step `index`."""
        app = self.app
        timeline = app.timeline
        timeline.seek(instant)
        if why := timeline.branch_refusal():
            app.notify(why, severity="warning")
            app.moved(timeline.present(LOG_CAP))
            return
        events = await timeline.branch(None, timeline.branch_path(), speed=app.speed, recent=LOG_CAP,
                                       **app.live_calls)
        app.session = timeline.session
        app.model.reload(events)
        app.redraws.pause()
        self.play.go_to(index, timeline.history.times[instant])
        self.finished = False
        self._began()
        app.redraw(text=True)
        self.draw()

    # --- the pane -------------------------------------------------------------------------------------

    def draw(self) -> None:
        if self.showing is None:
            return
        if self.showing == "claim":
            name = self.claim.scenario.removesuffix(".scenario")
            self.pane.show(f"Scenario {name}", "", None, self.claim.text, "esc closes")
            return
        play, app = self.play, self.app
        if play is None:
            return
        steps = play.lesson.steps
        text = narration(play.step, app.session.algorithm, app.state.rounds, app.timeline.now(), app.state.cs)
        keys = "→ next  ← back  esc leave" if self.finished or play.over or self._reading else \
            "→ skip  ← back  esc leave"
        self.pane.show(f"{play.index + 1}/{len(steps)} · {play.step.title}", self._status(), self.hint, text, keys)

    @property
    def _reading(self) -> bool:
        step, now = self.play.step, self.play.now
        return step.waits_for_continue and (step.task is None or now.task_done) and (step.until is None or now.met)

    def _status(self) -> str:
        step, now = self.play.step, self.play.now
        if self.finished:
            return "✓ the end of the lesson: escape leaves it, the run goes on; ctrl+q leaves the app"
        if step.task is not None and not now.task_done:
            return f"your turn: {describe_task(step.task, self._name)} ({keys_for(step.task)})"
        if step.until is not None and not now.met:
            return f"waiting for: {self._waiting()}"
        return "→ continue"

    def _waiting(self) -> str:
        step, now = self.play.step, self.play.now
        if step.task is not None and not now.task_done:
            return f"you to {describe_task(step.task, self._name)}"
        c = step.until
        if c is None or now.met:
            return "you to continue"
        if c.kind == "time":
            left = now.began + c.seconds - self.app.timeline.now()
            return f"{describe_condition(c, self._name)} ({max(left, 0):.0f} s left)"
        return describe_condition(c, self._name)

    def _name(self, rank: int) -> str:
        ids = self.play.ids
        return self.app.model.label.get(ids[rank - 1], str(rank)) if rank <= len(ids) else str(rank)
