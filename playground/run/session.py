"""A session: everything that defines a run. Light to import (no trio, no codec): the
command line builds one before it knows whether anything will run. What runs it is in
wiring.py."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from protocol import machine

from ..core.commands import Scheduled
from ..core.config import ClusterConfig, Workload
from ..core.ids import node_ids
from ..record.transcript import Claim, Header, Recipe


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
    claim: Claim | None = None  # made from a scenario file: what it claims (shown beside the run)

    @property
    def ids(self) -> tuple[int, ...]:
        """The node ids, lowest first: rank k (how people name a node) is ids[k - 1]."""
        return self.given_ids or node_ids(self.id_kind, self.nodes, self.seed)

    @property
    def worst_case_messages(self) -> int | None:
        return machine(self.algorithm).worst_case_messages(self.nodes)

    @property
    def header(self) -> Header:
        return Header(self.algorithm, list(self.ids), self.seed, self.config, workload=self.workload, claim=self.claim)

    @property
    def recipe(self) -> Recipe:
        return Recipe(self.header, self.commands)

    @classmethod
    def of(cls, header: Header, commands: tuple[Scheduled, ...], transcript: str) -> Session:
        """The session a transcript records: its settings and commands (the recipe)."""
        return cls(header.algorithm, len(header.nodes), header.seed, header.config, commands, transcript,
                   given_ids=tuple(sorted(header.nodes)), workload=header.workload, claim=header.claim)


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """A big run allocates millions of short-lived, acyclic objects (events, queue
    entries) while a window's worth of them is alive at once. At CPython's default
    (a young collection every 700 allocations) the collector keeps rescanning them:
    about a quarter of the run's time at N = 300. Collect far less often, for the run only,
    and never fully: the run's data has no cycles (its objects die by reference counting),
    and a full collection walks every object alive, seconds at a gigabyte, while no signal
    can be taken. A run stopped by one (a KeyboardInterrupt) leaves what it made frozen:
    the process ends, and a collection that came first would walk all of that."""
    before = gc.get_threshold()
    gc.freeze()  # what was allocated before the run lives on; stop rescanning it
    gc.set_threshold(50_000, 10, NEVER)
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        gc.set_threshold(*before)
        if stopped:
            gc.freeze()
        else:
            gc.unfreeze()


NEVER = 1_000_000_000  # a threshold no count of collections reaches


def exception_leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside trio's (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in exception_leaves(e)]
    return [error]
