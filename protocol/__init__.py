"""Pure election algorithms. Each is a `Node` subclass, chosen by its `name`.

Siblings (Garcia-Molina's original, Stoller's, a Chang-Roberts ring) are added as
modules beside `classic` and listed in ALGORITHMS; nothing else needs to change.
"""

from .classic import ClassicBully
from .interface import (
    CancelTimer,
    Config,
    ElectionStarted,
    Input,
    Message,
    Node,
    Output,
    Receive,
    SafeStorage,
    Send,
    SetTimer,
    Start,
    Suspect,
    TimerFired,
)

ALGORITHMS: dict[str, type[Node]] = {cls.name: cls for cls in (ClassicBully,)}

__all__ = [
    "ALGORITHMS",
    "CancelTimer",
    "ClassicBully",
    "Config",
    "ElectionStarted",
    "Input",
    "Message",
    "Node",
    "Output",
    "Receive",
    "SafeStorage",
    "Send",
    "SetTimer",
    "Start",
    "Suspect",
    "TimerFired",
]
