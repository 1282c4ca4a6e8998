"""The user as the network (engine rule 8), as DSLabs' debugger and Oddity let a student
be: in the by-hand mode nothing arrives and no timer fires by itself, and the clock stands
still; each choice is a command, recorded like any other, so a by-hand session is saved,
verified, replayed and branched like any run.

  - deliver ID: message ID arrives now, whatever its place on its link (the first of it
    due, if a copy is in flight too); a down receiver drops it, as ever.
  - drop ID: message ID never arrives; its drop is noted now, at its receiver.
  - duplicate ID: a copy of message ID goes on its link, after a delay of its own.
  - fire K NAME: node K's timer NAME fires now (its later firing is stale: host rule 3).
  - by-clock: the network and the timers run by themselves again, from where the clock
    stands; what fell due meanwhile (each step moves the clock on by a microsecond)
    arrives or fires then, in the order it was due.

These commands are also taken outside the mode (a message delivered early). A command
that names a message not in flight, or a timer not set, is refused (`refusal`) before
anything is recorded: the app says why in one line; a transcript never holds one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .commands import Command, DeliverMessage, DropMessage, DuplicateMessage, FireTimer
from .config import to_seconds
from .events import UNSET, DuplicateEvent
from .work import COMMAND, Deliver, Fire, Lost

if TYPE_CHECKING:
    from .engine import Engine, Window

DROPPED_BY_HAND = "dropped by hand"  # a drop's reason


def refusal(engine: Engine, command: Command, name=str) -> str | None:
    """Why the by-hand `command` cannot run now (one line, nodes named by `name`), or None."""
    if type(command) in (DeliverMessage, DropMessage, DuplicateMessage):
        if engine.links.find(command.msg) is None:
            where = ("it waits at a held link's end, and arrives when the link is released"
                     if engine.links.waits(command.msg) else "it has arrived or been dropped, or was never sent")
            return f"message {command.msg} is not in flight: {where}"
    elif type(command) is FireTimer:
        host = engine.hosts.get(command.node)
        if host is None or command.timer not in host.timers:
            return f"node {name(command.node)} has no timer {command.timer} set"
    return None


def allowed(engine: Engine, command: Command) -> bool:
    """Whether the by-hand `command` can run now; if not, why is kept in the engine's
    `refusals` (a scenario's or --at's, which no key checked first: the run says so)."""
    why = refusal(engine, command)
    if why is not None:
        engine.refusals.append((engine.now, command, why))
    return why is None


def work(engine: Engine, command: Command) -> Window | None:
    """The node work `command` gives (the receiver's, or the timer's node's), now; None
    for a duplicate, which runs no node: the event that says its copy is on its link is
    published at once."""
    from .engine import Window  # (the engine imports this module)

    t = engine.now_us
    if type(command) is DuplicateMessage:
        src, dst, msg = engine.links.find(command.msg)
        arrives = engine.links.copy(src, dst, command.msg, msg, t + engine.network.delay())
        engine.trace.publish([DuplicateEvent(UNSET, to_seconds(t), command.msg, src, dst, to_seconds(arrives))])
        return None
    if type(command) is FireTimer:
        _, generation = engine.hosts[command.node].timers[command.timer]
        return Window(t, t + 1, {command.node: [(t, COMMAND, 0, Fire(command.timer, generation))]})
    src, dst, msg = engine.links.take_message(command.msg)
    item = Deliver(src, command.msg, msg) if type(command) is DeliverMessage else Lost(src, command.msg, DROPPED_BY_HAND)
    return Window(t, t + 1, {dst: [(t, COMMAND, 0, item)]})
