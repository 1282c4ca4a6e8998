"""The exhaustive search on several processes (`hunt --exhaustive --workers W`): the same
search as on one, with the same counts and the same finding.

Rules (explore.py's rules 1-3 say what a state, the order and the bounds are):
  1. Levels. The search goes breadth first, a level at a time. The search's process
     grows the first levels itself, until one has SHARED_FROM entries a worker
     (explore.py); then it forks W workers, and each takes every W-th state of that
     level, with all its entries (worker 0 the first, worker 1 the second, ...:
     neighbours in a level have like futures, so a run of them would make one
     worker's share much bigger than another's; and a state's entries in two workers
     would be stepped in each, and so would all that came of them). From there on a worker
     grows what it made and the search kept, and no state crosses processes; the level
     keeps one process's order, the workers' entries interleaved: the search's process
     knows which worker has each entry.
  2. A level in two rounds. A worker grows each entry of its slice (explore.grow), and
     sends the forms it met first (explore_state's rule 4: a host's or a message's, which
     it numbered Pending); the search's process numbers them, each worker's in order,
     worker after worker, and sends the numbers back. So every process numbers alike,
     and a worker makes the keys of what it grew, and sends them, with where a finding
     or a bound came.
  3. The search's process owns the seen set: it takes the workers' keys in the level's
     order, entry by entry, as one process takes them (explore.visit), and tells each
     worker which it kept (its entries of the next level, in that order). The counts,
     the bound and the finding are one process's; a worker stops growing at its first
     finding (none after it counts, and the search's process meets it before any entry
     of that worker's after it).
  4. A form is sent as it is, but for an object that is equal only to itself (a ring's
     layout, shared by the states that have it: explore_values' rule 1): sent as which
     object it is, the search's process's own if it was made before the fork, else a
     stand-in of its own (a worker keeps what it named: a name is never reused).
  5. Signals: the workers are forked with the stopping signals blocked and ignore them
     (forked.py); the search's process waits for them a tenth of a second at a time and
     raises a signal in between. It ends them as it returns, whatever it returns with.
"""

from __future__ import annotations

import io
import multiprocessing
import multiprocessing.connection
import pickle
import traceback
import types
from collections.abc import Callable
from enum import Enum
from typing import Self

from protocol import Node as Machine
from protocol import machine

from . import interrupt
from .explore import Counterexample, Explored, grow, visit
from .explore_steps import Node, Search
from .forked import worker_ignores_signals

KEY = 16  # bytes of a state's key (explore_state's rule 4)
WAIT = 0.1  # seconds the search's process waits for its workers before it looks for a signal


def shared(search: Search, level: list[Node], seen: set[bytes], workers: int,
           on_progress: Callable[[Explored], None] | None) -> tuple[Counterexample | None, Explored]:
    """The search from `level` on, on `workers` processes (rule 1): as explore.explore."""
    explored, stepper = search.explored, search.stepper
    known = _objects([*stepper._hosts, *stepper._messages])  # rule 4
    stand_ins: dict[tuple[int, int], object] = {}
    states: dict[int, int] = {}  # rule 1: every W-th state, each with all its entries
    owners = [states.setdefault(id(node[0]), len(states) % workers) for node in level]
    with _Crew(search, [[node for node, w in zip(level, owners) if w == mine] for mine in range(workers)], known) as crew:
        kept: list[list[int] | None] = [None] * workers
        while True:
            met = crew.ask(kept)
            grown = crew.ask([stepper.numbers(_Receiver(forms, known, stand_ins, w).load()) for w, forms in enumerate(met)])  # rule 2: worker after worker
            found, owners, kept = _visit_level(search, seen, owners, grown, workers, on_progress)
            if found is not None or not owners:
                return found, explored


def _visit_level(search: Search, seen: set[bytes], owners: list[int], grown: list[list], workers: int,
                 on_progress: Callable[[Explored], None] | None) -> tuple[Counterexample | None, list[int], list[list[int]]]:
    """Rule 3: each worker's keys in the level's order, as one process visits them: (a
    finding, the next level's owners, what each worker keeps: its made entries, in order;
    no owners: the search is over)."""
    explored, most = search.explored, search.bounds.most
    answers = [iter(nodes) for nodes in grown]  # (each worker's entries, in the level's order)
    made = [0] * workers  # each worker's entries of the next level so far, in the order it made them
    next_owners: list[int] = []
    kept: list[list[int]] = [[] for _ in range(workers)]
    for w in owners:
        interrupt.raise_if_stopped()
        for item in next(answers[w]):
            if type(item) is tuple:
                depth, keys = item
                for at in range(0, len(keys), KEY):
                    new = visit(explored, seen, keys[at:at + KEY], depth, most, on_progress)
                    if new is None:
                        return None, [], kept
                    if new:
                        next_owners.append(w)
                        kept[w].append(made[w])
                    made[w] += 1
            elif type(item) is Counterexample:
                return item, [], kept
            else:
                explored.bound = item
    return None, next_owners, kept


class _Crew:
    """The workers, forked for one search and ended after it (rule 4)."""

    def __init__(self, search: Search, slices: list[list[Node]], known: dict[int, object]):
        self.search, self.slices, self.known = search, slices, known
        self.processes: list[multiprocessing.Process] = []
        self.pipes: list[multiprocessing.connection.Connection] = []

    def __enter__(self) -> Self:
        context = multiprocessing.get_context("fork")
        try:
            with interrupt.held():  # (one that comes meanwhile is raised as the block ends)
                for n, part in enumerate(self.slices):
                    ours, theirs = context.Pipe()
                    process = context.Process(target=_serve, args=(theirs, self.search, part, n, self.known), daemon=True)
                    process.start()
                    theirs.close()
                    self.processes.append(process)
                    self.pipes.append(ours)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.join()
        for pipe in self.pipes:
            pipe.close()

    def ask(self, questions: list) -> list:
        """Each worker's answer to its question, in the workers' order."""
        for pipe, question in zip(self.pipes, questions):
            pipe.send(question)
        answers: list = [None] * len(self.pipes)
        waiting = {pipe: n for n, pipe in enumerate(self.pipes)}
        while waiting:
            interrupt.raise_if_stopped()
            for pipe in multiprocessing.connection.wait(list(waiting), WAIT):
                try:
                    answer = pipe.recv()
                except EOFError:
                    raise RuntimeError(f"worker {waiting[pipe]} of the exhaustive search ended") from None
                if isinstance(answer, _Failed):
                    raise RuntimeError(f"worker {waiting[pipe]} of the exhaustive search failed:\n{answer.text}")
                answers[waiting.pop(pipe)] = answer
        return answers


class _Failed:
    """What a worker raised, as text (rule 4: the search's process raises it)."""

    def __init__(self, text: str):
        self.text = text


def _serve(pipe: multiprocessing.connection.Connection, search: Search, level: list[Node], worker: int,
           known: dict[int, object]) -> None:
    """A worker: grows its slice of each level, as the search's process asks (rules 1-2)."""
    worker_ignores_signals()
    stepper = search.stepper
    stepper.pending = []
    for state in {id(node[0]): node[0] for node in level}.values():  # (counted below: the search's count was its own)
        state.waiting = 0
    made: list[Node] = []
    named: dict[int, object] = {}  # rule 4: the objects this worker made that it named
    try:
        while True:
            kept = pipe.recv()
            if kept is not None:
                level = [made[n] for n in kept]
            for node in level:
                node[0].waiting += 1
            grown = []
            for node in level:
                items = list(grow(search, node))
                grown.append(items)
                if items and type(items[-1]) is Counterexample:
                    break
            level = []
            pipe.send(_Sender.dumps([(host, form) for host, form, _ in stepper.pending], known, named))
            for (_, _, pending), number in zip(stepper.pending, pipe.recv()):
                pending.number = number
            stepper.pending.clear()
            made = []
            answer = []
            for items in grown:
                mine: list = []
                for item in items:
                    if type(item) is tuple:
                        child, spent, trail, choices = item
                        mine.append((trail.depth, b"".join(stepper.key(child, arrivals, spent) for arrivals in choices)))
                        made += [(child, arrivals, spent, trail) for arrivals in choices]
                    else:
                        mine.append(item)
                answer.append(mine)
            pipe.send(answer)
    except EOFError:  # (the search is over)
        pass
    except Exception:
        pipe.send(_Failed(traceback.format_exc()))



# --- forms between processes (rule 4) ---------------------------------------------------------

_SELF_EQUAL: dict[type, bool] = {}  # (by type: equal only to itself, and sent by value)


def _self_equal(value: object) -> bool:
    t = type(value)
    answer = _SELF_EQUAL.get(t)
    if answer is None:
        answer = _SELF_EQUAL[t] = (t.__eq__ is object.__eq__ and value is not None and not issubclass(
            t, (type, Enum, types.FunctionType, types.BuiltinFunctionType, types.ModuleType)) and t.__reduce__ is object.__reduce__)
    return answer


def _objects(forms: list[object]) -> dict[int, object]:
    """The objects equal only to themselves in the search's forms so far (rule 4), by id."""
    found: dict[int, object] = {}
    walked: set[int] = set()
    todo = list(forms)
    while todo:
        value = todo.pop()
        if id(value) in walked:
            continue
        walked.add(id(value))
        if isinstance(value, (tuple, frozenset)):
            todo += value
        elif _self_equal(value):
            found[id(value)] = value
    return found


class _Sender(pickle.Pickler):
    def __init__(self, file: io.BytesIO, known: dict[int, object], named: dict[int, object]):
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.known, self.named = known, named

    @classmethod
    def dumps(cls, value: object, known: dict[int, object], named: dict[int, object]) -> bytes:
        file = io.BytesIO()
        cls(file, known, named).dump(value)
        return file.getvalue()

    def persistent_id(self, value: object) -> tuple | None:
        if isinstance(value, type) and issubclass(value, Machine) and "+" in value.name:
            return ("machine", value.name)  # (an election with a lock: a class made at run time, by its name)
        if not _self_equal(value):
            return None
        if self.known.get(id(value)) is value:
            return ("known", id(value))
        self.named[id(value)] = value
        return ("named", id(value))


class _Receiver(pickle.Unpickler):
    def __init__(self, data: bytes, known: dict[int, object], stand_ins: dict[tuple[int, int], object], worker: int):
        super().__init__(io.BytesIO(data))
        self.known, self.stand_ins, self.worker = known, stand_ins, worker

    def persistent_load(self, pid: tuple) -> object:
        kind, number = pid
        if kind == "machine":
            return machine(number)
        if kind == "known":
            return self.known[number]
        return self.stand_ins.setdefault((self.worker, number), _StandIn())


class _StandIn:
    """An object a worker made, equal only to itself (rule 4)."""
