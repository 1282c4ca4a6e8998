"""Pure election algorithms. Each is a `Node` subclass, chosen by its `name`.

classic        the textbook Bully (the gsharma design, Wikipedia's Bully article)
garcia-molina  Garcia-Molina's original, with Halt and Reorganization (Garcia-Molina 1982)
stoller        Stoller's, with a heartbeat failure detector (Stoller's notes)
ring           Chang & Roberts on a logical ring (lecture 3-9)
epoch-bully    the classic Bully with the gsharma design's epochs, heartbeats and safe storage
raft           Raft's leader election, without the log (Ongaro & Ousterhout 2014)
hs             Hirschberg & Sinclair on a bidirectional ring (lecture 3-8)
invitation     Garcia-Molina's Invitation: groups that merge after a partition (Garcia-Molina 1982)

Mutual exclusion (mutex.py), beside an election, as "ELECTION+MUTEX" (classic+central):

central          a lock on the elected leader (lecture 3-4)
token-ring       a token round the members in id order (3-5)
lamport          Lamport's, 1978 (3-6)
ricart-agrawala  Ricart & Agrawala's, 1981 (3-7)
"""

from collections.abc import Iterator, MutableMapping
from functools import cache
from importlib import import_module

from .interface import (
    MEMBERSHIP_MESSAGES,
    CancelTimer,
    Config,
    ElectionStarted,
    Input,
    Join,
    Joining,
    Leave,
    Leaving,
    Message,
    MessageRole,
    Node,
    Output,
    Receive,
    SafeStorage,
    Send,
    SetTimer,
    Start,
    Status,
    StatusRole,
    Suspect,
    TimerFired,
)
from .mutex import CsState, Exit, Figures, Mutex, Serves, Want, serves, with_mutex


class Registry(MutableMapping):
    """Name -> class, each algorithm's module imported when its class is first asked for:
    a command that runs one algorithm, or refuses its arguments, does not pay for the
    others' (their messages are dataclasses, and making a dataclass costs). Listing the
    names imports nothing; the class's own `name` is checked against its key as it loads
    (tests/test_layers.py loads every entry). An algorithm of one's own is
    added as a class: `ALGORITHMS[Lighthouse.name] = Lighthouse`."""

    def __init__(self, where: dict[str, str]) -> None:
        self._where = where  # name -> "module:Class"
        self._loaded: dict[str, type] = {}

    def __getitem__(self, name: str) -> type:
        if name not in self._loaded:
            module, _, cls_name = self._where[name].partition(":")
            cls = getattr(import_module(f".{module}", __name__), cls_name)
            assert cls.name == name, f"{cls_name}.name is {cls.name!r}, registered as {name!r}"
            self._loaded[name] = cls
        return self._loaded[name]

    def __setitem__(self, name: str, cls: type) -> None:
        self._where[name] = f"{cls.__module__}:{cls.__qualname__}"
        self._loaded[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def named(self, cls_name: str) -> str | None:
        """The name under which the class called `cls_name` is registered, if it is."""
        return next((name for name, where in self._where.items() if where.endswith(f":{cls_name}")), None)


ALGORITHMS: Registry = Registry({
    "classic": "classic:ClassicBully",
    "garcia-molina": "garcia_molina:GarciaMolina",
    "stoller": "stoller:Stoller",
    "ring": "ring:Ring",
    "hs": "hs:HirschbergSinclair",
    "invitation": "invitation:InvitationNode",
    "epoch-bully": "epoch_bully:EpochBully",
    "raft": "raft:Raft",
})
MUTEXES: Registry = Registry({
    "central": "central:CentralLock",
    "token-ring": "token_ring:TokenRing",
    "lamport": "lamport:Lamport",
    "ricart-agrawala": "ricart_agrawala:RicartAgrawala",
})


def __getattr__(name: str) -> type:
    """`from protocol import Raft`: the class, its module imported then."""
    for registry in (ALGORITHMS, MUTEXES):
        registered = registry.named(name)
        if registered is not None:
            return registry[registered]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def split_name(name: str) -> tuple[str, str | None]:
    """"classic+central" -> ("classic", "central"); "classic" -> ("classic", None)."""
    election, _, mutex = name.partition("+")
    return election, mutex or None


def machine(name: str) -> type[Node]:
    """The class a runtime hosts for `name`: an election ("classic"), or an election with
    a mutex beside it ("classic+central"). KeyError for an unknown name."""
    election, mutex = split_name(name)
    if mutex is None:
        return ALGORITHMS[election]
    return _composed(ALGORITHMS[election], MUTEXES[mutex])


@cache
def _composed(election: type[Node], mutex: type[Mutex]) -> type[Node]:
    """One class per pair, so that everything keyed by class (the codec) is built once."""
    return with_mutex(election, mutex)


def known(name: str) -> bool:
    election, mutex = split_name(name)
    return election in ALGORITHMS and (mutex is None or mutex in MUTEXES)

__all__ = [
    "ALGORITHMS",
    "MEMBERSHIP_MESSAGES",
    "MUTEXES",
    "CancelTimer",
    "ClassicBully",
    "Config",
    "CsState",
    "ElectionStarted",
    "EpochBully",
    "Exit",
    "Figures",
    "GarciaMolina",
    "HirschbergSinclair",
    "Input",
    "InvitationNode",
    "Join",
    "Joining",
    "Leave",
    "Leaving",
    "Message",
    "MessageRole",
    "Mutex",
    "Node",
    "Output",
    "Receive",
    "Ring",
    "SafeStorage",
    "Send",
    "Serves",
    "SetTimer",
    "Start",
    "Status",
    "StatusRole",
    "Stoller",
    "Suspect",
    "TimerFired",
    "Want",
    "known",
    "machine",
    "serves",
    "split_name",
    "with_mutex",
]
