"""A session: everything that defines a run, and the wiring of cluster, summary and
transcript that the headless command and the live app share."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from protocol import machine

from ..core.commands import Scheduled
from ..core.config import ClusterConfig, Workload, WriteError
from ..core.engine import Engine
from ..core.ids import node_ids
from ..record.recorder import Recorder
from ..record.summary import Summary
from ..record.transcript import Header, Recipe
from .cluster import Cluster, MockClock
from .interrupt import run_trio, stopped_by


@dataclass(frozen=True)
class Session:
    """Everything that defines a run. `commands` name nodes by id (the parser turned
    ranks into ids)."""

    algorithm: str = "classic"
    nodes: int = 7
    seed: int = 1
    config: ClusterConfig = field(default_factory=ClusterConfig)
    commands: tuple[Scheduled, ...] = ()
    transcript: str | None = None
    overwrite: bool = False
    id_kind: str = "seq"
    given_ids: tuple[int, ...] = ()  # ids read from a transcript (replay), instead of made
    workload: Workload | None = None  # with a mutex ("classic+central"): who wants the CS when

    @property
    def ids(self) -> tuple[int, ...]:
        """The node ids, lowest first: rank k (how people name a node) is ids[k - 1]."""
        return self.given_ids or node_ids(self.id_kind, self.nodes, self.seed)

    @property
    def worst_case_messages(self) -> int | None:
        return machine(self.algorithm).worst_case_messages(self.nodes)

    @property
    def header(self) -> Header:
        return Header(self.algorithm, list(self.ids), self.seed, self.config, workload=self.workload)

    @property
    def recipe(self) -> Recipe:
        return Recipe(self.header, self.commands)

    @classmethod
    def of(cls, header: Header, commands: tuple[Scheduled, ...], transcript: str) -> Session:
        """The session a transcript records: its settings and commands (the recipe)."""
        return cls(header.algorithm, len(header.nodes), header.seed, header.config, commands, transcript,
                   given_ids=tuple(sorted(header.nodes)), workload=header.workload)

    def start(self, files: ExitStack, *, lookahead: bool) -> tuple[Engine, Summary, Recorder | None]:
        """An engine ready to run, with its summary and (if asked) its transcript's
        recorder attached. The transcript file is opened here, before anything runs, so
        a bad path fails first."""
        engine = self.recipe.engine(lookahead=lookahead)
        cls = machine(self.algorithm)
        mutex = cls.mutex
        summary = Summary(self.ids, tuple(m.type for m in cls.messages), mutex)
        engine.subscribe(summary)
        recorder = None
        if self.transcript is not None:
            recorder = files.enter_context(Recorder.create(self.transcript, self.header, self.overwrite))
            engine.subscribe(recorder)
        return engine, summary, recorder


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """A big run allocates millions of short-lived, acyclic objects (events, queue
    entries) while a window's worth of them is alive at once. At CPython's default
    (a young collection every 700 allocations) the collector keeps rescanning them:
    about a quarter of the run's time at N = 300. Collect far less often, for the run only."""
    before = gc.get_threshold()
    gc.freeze()  # what was allocated before the run lives on; stop rescanning it
    gc.set_threshold(50_000, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def run_headless(session: Session, until: float, progress: bool = False) -> dict[str, object]:
    """Run in virtual time, as fast as the CPU allows, and return the JSON summary.
    `progress`: show it on stderr (a terminal) if the run lasts more than a second.
    A signal stops it with its transcript whole (interrupt.Stopped says when)."""
    with ExitStack() as files, fewer_gc_passes():
        engine, summary, _ = session.start(files, lookahead=True)
        if progress:  # (rich's progress bar is imported only where it is shown: 23 ms a start)
            from .progress import RunProgress

            engine.subscribe(files.enter_context(RunProgress(engine, until)))
        try:
            run_trio(Cluster(engine).run, until, clock=MockClock(autojump_threshold=0))
        except BaseException as error:  # trio hands back what stopped it inside exception groups
            stop = stopped_by(error)
            if stop is not None:
                stop.t, stop.transcript = engine.now, session.transcript
                raise stop from None
            written = next((e for e in exception_leaves(error) if isinstance(e, WriteError)), None)
            if written is None:
                raise
            raise written from None
    return {
        "algorithm": session.algorithm,
        "nodes": session.nodes,
        "seed": session.seed,
        "until": until,
        **summary.report(),
    }


def exception_leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside trio's (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in exception_leaves(e)]
    return [error]
