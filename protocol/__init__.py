"""Pure election algorithms. Each is a `Node` subclass, chosen by its `name`.

classic        the textbook Bully (seeds 001, 003)
garcia-molina  Garcia-Molina's original, with Halt and Reorganization (seed 000)
stoller        Stoller's, with a heartbeat failure detector (seed 004)
ring           Chang & Roberts on a logical ring (lecture 3-9)
epoch-bully    the classic Bully with seed 001's epochs, heartbeats and safe storage
"""

from .classic import ClassicBully
from .epoch_bully import EpochBully
from .garcia_molina import GarciaMolina
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
from .ring import Ring
from .stoller import Stoller

ALGORITHMS: dict[str, type[Node]] = {cls.name: cls for cls in (ClassicBully, GarciaMolina, Stoller, Ring, EpochBully)}

__all__ = [
    "ALGORITHMS",
    "MEMBERSHIP_MESSAGES",
    "CancelTimer",
    "ClassicBully",
    "Config",
    "ElectionStarted",
    "EpochBully",
    "GarciaMolina",
    "Input",
    "Join",
    "Joining",
    "Leave",
    "Leaving",
    "Message",
    "MessageRole",
    "Node",
    "Output",
    "Receive",
    "Ring",
    "SafeStorage",
    "Send",
    "SetTimer",
    "Start",
    "Status",
    "StatusRole",
    "Stoller",
    "Suspect",
    "TimerFired",
]
