"""The model's assumptions, broken on purpose: which a run breaks now, since when, and
the draws that break them.

The links of the model are lossless and FIFO, and every node's clock keeps time; the
synchrony bound (T >= 2 x max delay, no link held) is the fifth assumption. A run may
break any of them (config.Faults, `lossy K L P`, held links, a short T): seeing what
breaks is the point. Each draw comes from a generator of the run's own, seeded by its
seed, and is made in the engine's merged order, so a run with faults is re-created
event for event like any other; a run without them draws nothing new, and its trace is
what it always was.

  - `ASSUMPTIONS`: each assumption's key and the words for it broken ("links lossy").
  - `broken(config, held, lossy)`: the keys of those broken by these settings.
  - `BrokenSince`: a fold of settings over time: what is broken and since when, so that a
    report of a violation can say what was broken when it began (the monitor's reports,
    the summary, the app; it knows no algorithm).
  - `clock_rate(seed, node, drift)`: a node's clock rate, its own, drawn once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .config import US, ClusterConfig, Faults, to_us
from .events import UNSET, DuplicateEvent, Event, SendEvent
from .links import Links

SYNCHRONY, LOSS, DUPLICATION, ORDER, DRIFT = "synchrony", "loss", "duplication", "order", "drift"
# Each assumption, as it is said broken (the status bar, a violation's report).
LOST_ON_THE_LINK = "lost on the link"  # a lost message's drop, where it would have arrived (host rule 10)
ASSUMPTIONS = {SYNCHRONY: "synchrony broken", LOSS: "links lossy", DUPLICATION: "links duplicate",
               ORDER: "links reorder", DRIFT: "clocks drift"}


def broken(config: ClusterConfig, held: Iterable = (), lossy: Iterable[tuple[int, int, float]] = ()) -> tuple[str, ...]:
    """The assumptions these settings break, in ASSUMPTIONS' order: the synchrony bound (T
    below 2 x max delay, or a link held), lossless links (--loss, or a link made lossy),
    no duplicates, FIFO links, clocks that keep time."""
    f = config.faults
    out = []
    if not config.synchronous or any(True for _ in held):
        out.append(SYNCHRONY)
    if f.loss or any(p for _, _, p in lossy):
        out.append(LOSS)
    if f.duplicate:
        out.append(DUPLICATION)
    if f.reorder:
        out.append(ORDER)
    if f.drift:
        out.append(DRIFT)
    return tuple(out)


@dataclass(slots=True)
class BrokenSince:
    """What is broken now and since when (virtual seconds), as settings change in time
    order: `update(t, broken(...))` after each change."""

    since: dict[str, float] = field(default_factory=dict)

    def update(self, t: float, keys: tuple[str, ...]) -> None:
        for key in list(self.since):
            if key not in keys:
                del self.since[key]
        for key in keys:
            self.since.setdefault(key, t)

    def copy(self) -> BrokenSince:
        return BrokenSince(dict(self.since))

    def text(self) -> str:
        """"links lossy since t=3.20 · clocks drift since t=0.00", or "" if nothing is broken."""
        return " · ".join(f"{ASSUMPTIONS[key]} since t={t:.2f}" for key, t in self.items())

    def items(self) -> list[tuple[str, float]]:
        return sorted(self.since.items(), key=lambda item: list(ASSUMPTIONS).index(item[0]))


def clock_rate(seed: int, node: int, drift: float) -> float:
    """How fast node `node`'s clock runs (1: it keeps time), drawn once in [1 - drift,
    1 + drift] from a generator of its own (the run's seed and the node's id: the same on
    a re-run, whatever order nodes run in; a real node draws its own alike). A timer of
    d seconds fires after d / rate. Rounded to 1e-4, as the panel shows it."""
    if not drift:
        return 1.0
    return round(1 + drift * (2 * random.Random(f"{seed}/{node}/drift").random() - 1), 4)


def route_faulty(events: list[Event], msg_id: int, links: Links, delay: Callable[[], int], draws: FaultDraws,
                 faults: Faults, lossy: tuple[tuple[int, int, float], ...]) -> tuple[list[Event], int]:
    """The engine's routing of a window's sends when messages may be lost or duplicated
    (engine rules 3 and 7): each gets its id and arrival, then is drawn lost with its
    link's probability (`lossy`'s, else --loss), and if not, duplicated with --duplicate's:
    its copy goes on the link after a delay of its own, and a duplicate event follows the
    send. Returns the events with those, and the next id."""
    loss, duplicate, lossy_links = faults.loss, faults.duplicate, {(src, dst): p for src, dst, p in lossy}
    happens = draws.happens
    out: list[Event] = []
    for e in events:
        out.append(e)
        if type(e) is SendEvent:
            e.id = msg_id
            sent = to_us(e.t)
            e.arrives = links.send(e.src, e.dst, msg_id, e.msg, sent + delay()) / US
            if happens(lossy_links.get((e.src, e.dst), loss) if lossy_links else loss):
                links.lose(msg_id, LOST_ON_THE_LINK)
            elif duplicate and happens(duplicate):
                arrives = links.copy(e.src, e.dst, msg_id, e.msg, sent + delay()) / US
                out.append(DuplicateEvent(UNSET, e.t, msg_id, e.src, e.dst, arrives))
            msg_id += 1
    return out, msg_id


class FaultDraws:
    """Whether a message is lost or duplicated: one generator of the run's (its seed),
    drawn in the engine's merged order, and only for a message that can be (a probability
    above 0), so a run without faults draws nothing."""

    def __init__(self, seed: int):
        self._rng = random.Random(f"{seed}/faults")

    def happens(self, p: float) -> bool:
        return p > 0 and (p >= 1 or self._rng.random() < p)
