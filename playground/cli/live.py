"""The apps a command opens on the terminal: the live run (and the run again after the
palette switched its algorithm), a replay, the real view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from protocol import machine

from ..core.config import InputError, Workload
from ..record.files import check_new, open_to_write
from .output import finished, need_a_terminal, say, served, warn


def run_live(session, speed: float, lesson=None, session_of=None, by_hand: bool = False) -> int:
    """The live app, again after the palette switched the algorithm; `lesson` (a
    run.lesson.LessonAt) played beside it, `session_of(k)` the run of its step k, which
    the next app runs when a step has a run of its own; `by_hand`: the user is the
    network from the start (--by-hand). Its exit status."""
    return finished(play_live(session, speed, lesson, session_of, by_hand))


def play_live(session, speed: float, lesson=None, session_of=None, by_hand: bool = False):  # -> the last BullyApp
    """run_live's apps, one after another; the last, once it has ended for good."""
    if session.transcript is not None:
        check_new(session.transcript, "transcript", session.overwrite)  # fail now, not inside the app
    need_a_terminal("the live app draws on the terminal", "for a run without a screen, use --headless")
    if not served():
        warn(session.config)  # (after the checks: a refusal is one line)
    from ..ui.app import BullyApp  # Textual loads only when the live app is wanted

    if session.transcript is not None:
        open_to_write(session.transcript, "transcript", session.overwrite).close()
        session = replace(session, overwrite=True)
    restart = None
    while True:
        app = BullyApp(session, speed=speed, again=restart, lesson=lesson, by_hand=by_hand and restart is None)
        if served() and restart is None:
            warn(session.config, app)
        app.run()
        if app.restart_with is None:
            return app
        # The palette picked another algorithm: the same run again with it, the settings as
        # they were. A transcript goes to a new file beside the first, which stays as it was.
        restart, speed = app.restart_with, app.speed
        app = None
        release()
        lesson = restart.lesson
        if lesson is not None:  # a lesson's step with a run of its own (the palette's switch leaves the lesson)
            session = session_of(lesson.step)
            continue
        transcript = session.transcript and free_path(session.transcript, restart.algorithm)
        workload = (session.workload or Workload()) if machine(restart.algorithm).mutex else None  # (a mutex's, kept)
        session = replace(session, algorithm=restart.algorithm, config=restart.config, transcript=transcript,
                          workload=workload, claim=None)  # (a scenario's claim was of its algorithm)


def run_real_live(session) -> int:
    if session.transcript is not None:
        check_new(session.transcript, "transcript", session.overwrite)  # fail now, not inside the app
    need_a_terminal("the live app draws on the terminal", "for a run without a screen, use --headless")
    from ..ui.real_app import RealApp

    app = RealApp(session)
    app.run()
    status = real_finished(app)
    if status == 0 and session.transcript is not None:
        say(f"the real run is in {session.transcript} (bully-tui replay or export it)")
    return status


def real_finished(app) -> int:
    """The real view's exit status: a signal's, a failure's (one line), or 0."""
    if app.stopped_by is not None:
        return finished(app)
    if app.failure is not None:
        say(f"bully-tui: error: {app.failure}")
        return 1
    return 0


def replay_app(path: str, save_dir: str = ".", open_at: float | str | None = None, *,
               before_the_app: Callable[[], None] | None = None):  # -> BullyApp (Textual loads only when wanted)
    """The app on a saved transcript, at its end (or `open_at`: a time, or "violation",
    once read). The file's first block is read first (an empty or bad file is one line,
    before any screen); then `before_the_app` checks what else the app needs (a terminal),
    before the app's modules load; the app reads the rest, showing its latest instant as
    it goes, and ends with one line if a later line is bad."""
    from ..record.reader import Reader
    from ..run.history import Loading
    from ..run.session import Session

    with Reader.open(path) as reader:
        session = Session.of(reader.header, (), path)
    loading = Loading(path)
    try:
        loading.take(loading.read(1))
        if not loading.history.instants:
            raise InputError(f"{path} has a header but no events: nothing to replay")
        if before_the_app is not None:
            before_the_app()
    except BaseException:
        loading.close()
        raise
    from ..ui.app import BullyApp

    return BullyApp(session, paused=True, save_dir=save_dir, loading=loading, open_at=open_at)


def release() -> None:
    """What an app that has ended leaves (a whole run, whose objects refer to each other
    in cycles) is out of the collector's sight while it runs (ui/app.py, on_mount): free
    it before another starts in this process."""
    import gc

    gc.unfreeze()
    gc.collect()


def free_path(path: str, algorithm: str) -> str:
    """`run.jsonl` -> `run.ring.jsonl` (or `run.ring-2.jsonl`, ...): a name not yet taken."""
    p = Path(path)
    for n in range(1, 1000):
        candidate = p.with_name(f"{p.stem}.{algorithm}{'' if n == 1 else f'-{n}'}{p.suffix}")
        if not candidate.exists():
            return str(candidate)
    raise InputError(f"no free transcript name beside {path}")
