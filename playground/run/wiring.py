"""The wiring of engine, summary and transcript that the headless command and the live
app share, and a headless run: a session run in virtual time."""

from __future__ import annotations

from contextlib import ExitStack, nullcontext

from protocol import machine

from ..core.config import WriteError
from ..core.engine import Engine
from ..record.recorder import Recorder
from ..record.summary import Summary
from .cluster import Cluster, MockClock
from .in_flight import InFlightBound
from .interrupt import run_trio, stopped_by
from .session import Session, exception_leaves, fewer_gc_passes


def start(session: Session, files: ExitStack, *, lookahead: bool) -> tuple[Engine, Summary, Recorder | None]:
    """An engine ready to run, with its summary and (if asked) its transcript's
    recorder attached. The transcript file is opened here, before anything runs, so
    a bad path fails first."""
    engine = session.recipe.engine(lookahead=lookahead)
    cls = machine(session.algorithm)
    mutex = cls.mutex
    summary = Summary(session.ids, tuple(m.type for m in cls.messages), mutex, session.config)
    engine.subscribe(summary)
    recorder = None
    if session.transcript is not None:
        recorder = files.enter_context(Recorder.create(session.transcript, session.header, session.overwrite))
        engine.subscribe(recorder)
    return engine, summary, recorder


def run_headless(session: Session, until: float, progress: bool = False, max_in_flight: int = 0) -> dict[str, object]:
    """Run in virtual time, as fast as the CPU allows, and return the JSON summary.
    `progress`: show it on stderr (a terminal) if the run lasts more than a second.
    `max_in_flight`: stop once more messages than that are in flight (0: never), the
    summary's "stopped" saying when (in_flight.py).
    A signal stops it with its transcript whole (interrupt.Stopped says when)."""
    with ExitStack() as files, fewer_gc_passes():
        engine, summary, _ = start(session, files, lookahead=True)
        if progress:  # (rich's progress bar is imported only where it is shown: 23 ms a start)
            from .progress import RunProgress

            engine.subscribe(files.enter_context(RunProgress(engine, until, max_in_flight=max_in_flight)))
        bound = None
        if max_in_flight:
            bound = InFlightBound(engine, max_in_flight)
            engine.subscribe(bound)

        async def run() -> None:
            with bound.scope if bound is not None else nullcontext():
                await Cluster(engine).run(until)

        try:
            run_trio(run, clock=MockClock(autojump_threshold=0))
        except BaseException as error:  # trio hands back what stopped it inside exception groups
            stop = stopped_by(error)
            if stop is not None:
                stop.t, stop.transcript = engine.now, session.transcript
                raise stop from None
            written = next((e for e in exception_leaves(error) if isinstance(e, WriteError)), None)
            if written is None:
                raise
            raise written from None
    refused = [{"t": t, "command": " ".join(map(str, (command.name, *command.words()[1]))), "why": why}
               for t, command, why in engine.refusals]
    return {
        "algorithm": session.algorithm,
        "nodes": session.nodes,
        "seed": session.seed,
        "until": until,
        **summary.report(),
        **({"refused": refused} if refused else {}),  # by-hand commands that could not run (engine rule 8)
        **({"stopped": bound.reached} if bound is not None and bound.reached else {}),  # --max-in-flight
    }
