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

from functools import cache

from .central import CentralLock
from .classic import ClassicBully
from .epoch_bully import EpochBully
from .garcia_molina import GarciaMolina
from .hs import HirschbergSinclair
from .invitation import InvitationNode
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
from .lamport import Lamport
from .mutex import CsState, Exit, Figures, Mutex, Serves, Want, serves, with_mutex
from .ricart_agrawala import RicartAgrawala
from .raft import Raft
from .ring import Ring
from .stoller import Stoller
from .token_ring import TokenRing

ALGORITHMS: dict[str, type[Node]] = {cls.name: cls for cls in (ClassicBully, GarciaMolina, Stoller, Ring, HirschbergSinclair, InvitationNode, EpochBully, Raft)}
MUTEXES: dict[str, type[Mutex]] = {cls.name: cls for cls in (CentralLock, TokenRing, Lamport, RicartAgrawala)}


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
