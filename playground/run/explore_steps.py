"""What can happen next in a state of the exhaustive search (explore.py), and taking it.

A step is an action on the engine (explore_state.Stepper puts the state into it, runs
the action, and keeps what it left): a message delivered, a timer fired, time moving on,
or a command, as an interaction file says each (`deliver 1 2`, `fire 2 answer_wait`,
`at 12`, `crash 3`, `recover 3`, `elect 2`, `want 2`, `join`, `leave 3`).

Rules (explore.py's rules 1-3 say what a state and the bounds are):
  1. What happens next. Timed: the one thing due first (deliveries before timers, then by
     node), at its time, each message it sends with each delay the model allows (a
     choice of arrivals per state on the frontier). Asynchronous: any link's head
     message, or any running timer, each step an instant of its own (1 ms on).
  2. Besides, between any two steps, each within its own bound (Bounds): a crash (right
     after a step of the node's own: any later moment before its next step is the same
     to every node, and it being up longer only adds to what the monitor sees) or a
     recovery (faults); an `elect` at an up node (its failure detector fires); with a
     lock, `want` at an up node that is out of the critical section and does not want it
     (requests: the workload asks nothing by itself, so the space is finite); a new node
     joining (joins); an up member leaving (leaves). What is used of each bound is part
     of the state.
  3. Liveness (a property that must hold eventually, `prop` SLE2 or the critical
     section's): timed only, judged by the monitor when its time comes, as any
     instant; a run where nothing is left to happen has time move on to the horizon,
     so that a wait that never ends is judged (and is found).
  4. A state's steps are taken once, however many entries on the frontier it has (a
     state with each choice of arrivals is one state to the engine: its crash, say, is
     one state too): kept on the state until its last entry has been expanded.
  5. A faulty network (explore.py's rule 7). Reordering: any message in flight on a
     link may arrive next, not only its head (asynchronous: of those alike on a link,
     the first; timed: each message's delay is its own, and what is due first arrives
     first). Dropping and duplicating, each within its bound, strike a message the step
     before sent, as a step of their own (`drop ID`, `duplicate ID`) that is still that
     node's turn (a crash may follow): nothing tells a message lost later from one lost
     as it is sent, for no node sees it meanwhile. A copy joins the tail of its link with
     a delay of its own. The steps are then the by-hand commands (`deliver ID`, `fire K
     NAME`, ...), each message by the id the trace gives it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from protocol import CsState

from ..core.commands import Crash, Elect, Join, Leave, Recover, WantCs
from ..core.config import to_seconds
from ..core.events import ViolationEvent
from .explore_state import State, Stepper
from .harness import Harness
from .hunt_space import NETWORK_FAULTS, SAFETY  # (SAFETY: what is judged when no property is named)

if TYPE_CHECKING:
    from .explore import Bounds, Explored

ASYNC_STEP_US = 1000  # the asynchronous model's steps each come 1 ms apart: instants, not time
COMMANDS = {"crash": Crash, "recover": Recover, "elect": Elect, "want": WantCs, "leave": Leave}
DROP, DUPLICATE, REORDER = NETWORK_FAULTS  # what a faulty network may do (rule 5)
# What a state has used of each bound of rules 2 and 5, in this order (a frontier entry's `spent`).
FAULTS, ELECTS, REQUESTS, JOINS, LEAVES, DROPS, DUPLICATES = range(7)
NOTHING_SPENT = (0, 0, 0, 0, 0, 0, 0)
SAME_TURN = -2  # a Trail's stepper: a drop or a copy, still the turn of the node before it (rule 5)


class Trail:
    """The steps that led to a state: its own (a step, with the `at` that says when) after
    those of the state it came from, shared with it."""

    __slots__ = ("before", "depth", "own", "stepper")

    def __init__(self, before: Trail | None, own: tuple[str, ...], depth: int, stepper: int | None):
        self.before, self.own = before, own
        self.depth = depth  # steps taken (the `at` lines are no step)
        self.stepper = stepper  # the node that took the last step (-1: a crash, nobody's step; None: the start)

    def then(self, own: tuple[str, ...], stepper: int | None = None) -> Trail:
        """`own`: a step and its `at`; `stepper`: the node that took it (None: time only
        moved on, and `own` is an `at`)."""
        if stepper is None:
            return Trail(self, own, self.depth, self.stepper)
        return Trail(self, own, self.depth + 1, self.stepper if stepper == SAME_TURN else stepper)

    def steps(self) -> tuple[str, ...]:
        trails, trail = [], self
        while trail is not None:
            trails.append(trail.own)
            trail = trail.before
        return tuple(step for own in reversed(trails) for step in own)


# A state on the frontier: the engine as it was, the arrival of each message in flight
# (timed), what it has used of each bound (rule 2) and the steps that led to it.
Node = tuple[State, dict[int, int], tuple[int, ...], Trail]


@dataclass(slots=True)
class Search:
    """One search: what it looks for, up to where, and the engine it steps."""

    timed: bool
    prop: str | None
    bounds: Bounds
    stepper: Stepper
    explored: Explored
    delays_us: tuple[int, ...]  # (the model's, asked for each state)
    horizon_us: int
    liveness: bool  # rule 3
    network: frozenset[str] = frozenset()  # rule 5: what the network may do besides lossless FIFO
    horizon_met: bool = False  # timed: an action was past the horizon (explore.grow tells the search)


def successors(search: Search, node: Node) -> Iterator[tuple[State, tuple[int, ...], Trail, list, ViolationEvent | None]]:
    """(state, what it has used of the bounds, its steps, the arrivals each choice of delays
    gives, what it broke) of every state one step on."""
    state, arrivals, spent, trail = node
    bounds = search.bounds
    ids, _, members, _ = state.members
    hosts = list(zip(ids, state.hosts))
    actions: list[tuple[tuple, int | None]] = []  # (action, the bound it uses)
    if spent[FAULTS] < bounds.faults:
        stepped = trail.stepper
        actions += [(("crash", i), FAULTS) for i, host in hosts if host.up and stepped in (None, i)]
        actions += [(("recover", i), FAULTS) for i, host in hosts if not host.up and i in members]
    if spent[ELECTS] < bounds.elects:
        actions += [(("elect", i), ELECTS) for i, host in hosts if host.up]
    if spent[REQUESTS] < bounds.requests:
        actions += [(("want", i), REQUESTS) for i, host in hosts if host.up and host.mutex and host.cs is CsState.RELEASED]
    if spent[JOINS] < bounds.joins:
        actions.append((("join",), JOINS))
    if spent[LEAVES] < bounds.leaves:
        actions += [(("leave", i), LEAVES) for i, host in hosts if host.up]
    network = search.network
    if network:
        actions += network_faults(search, state, spent)
    for action, bound in actions:
        child, own, who, violation = take(search, state, action)
        used = (*spent[:bound], spent[bound] + 1, *spent[bound + 1:])
        before = arrivals
        if bound == DROPS and search.timed:  # (what is no longer in flight has no arrival)
            before = {key: t for key, t in arrivals.items() if key != state.flight[action[1:3]][action[3]][0]}
        yield child, used, trail.then(own, who), delays(search, child, before), violation
    if search.timed:
        action = timed_next(search, state, arrivals)
        if action is None:
            return
        child, own, who, violation = take(search, state, action)
        if action[0] == "deliver":
            arrivals = dict(arrivals)
            del arrivals[state.flight[action[1:3]][action[3]][0]]
        yield child, spent, trail.then(own, who), delays(search, child, arrivals), violation
        return
    if REORDER in network:  # rule 5
        steps = [("deliver", src, dst, n, None) for (src, dst), queue in state.flight.items() for n in _unlike(queue)]
    else:
        steps = [("deliver", src, dst, 0, None) for src, dst in state.flight]
    steps += [("fire", i, name) for i, host in hosts if host.up for name in sorted(host.timers)]
    for action in steps:
        child, own, who, violation = take(search, state, action)
        yield child, spent, trail.then(own, who), [{}], violation


def network_faults(search: Search, state: State, spent: tuple[int, ...]) -> list[tuple[tuple, int]]:
    """Rule 5: the drops and copies of what the step before sent, within their bounds
    (action, the bound it uses)."""
    fresh, bounds, network = state.fresh, search.bounds, search.network
    if not fresh:
        return []
    just_sent = [(src, dst, n) for (src, dst), queue in state.flight.items()
                 for n, (key, _, _) in enumerate(queue) if key in fresh]
    actions = []
    if DROP in network and spent[DROPS] < bounds.drops:
        actions += [(("drop", *where), DROPS) for where in just_sent]
    if DUPLICATE in network and spent[DUPLICATES] < bounds.duplicates:
        actions += [(("duplicate", *where), DUPLICATES) for where in just_sent]
    return actions


def _unlike(queue: tuple) -> list[int]:
    """The places on a link of its messages unlike any ahead of them (asynchronous,
    reordering: delivering either of two alike gives one state)."""
    seen, places = set(), []
    for n, (_, number, _) in enumerate(queue):
        if number not in seen:
            seen.add(number)
            places.append(n)
    return places


def timed_next(search: Search, state: State, arrivals: dict[int, int]) -> tuple | None:
    """Timed: the one thing due first (deliveries before timers, then by node), as an
    action at its time; at the horizon, time moving on to it (or nothing, once there)."""
    if REORDER in search.network:  # rule 5: any message of a link may be due first
        due = [(arrivals[key], 0, dst, src, n) for (src, dst), queue in state.flight.items()
               for n, (key, _, _) in enumerate(queue)]
    else:
        due = [(arrivals[queue[0][0]], 0, dst, src, 0) for (src, dst), queue in state.flight.items()]
    timer = state.first_timer
    if timer is None:  # (the same for each of the state's entries: found once)
        timers = [(fires, 1, i, 0, name) for i, host in zip(state.members[0], state.hosts) if host.up
                  for name, (fires, _) in host.timers.items()]
        timer = state.first_timer = min(timers) if timers else ()
    if timer:
        due.append(timer)
    if not due:  # nothing will ever happen again: a run that ends here (or waits: rule 3)
        judged = search.liveness and state.monitor.deadline is not None and state.now_us < search.horizon_us
        return ("at", search.bounds.horizon) if judged else None
    t_us, kind, i, src, name = min(due)
    if t_us > search.horizon_us:
        search.horizon_met = True
        return ("at", search.bounds.horizon) if state.now_us < search.horizon_us else None
    return ("deliver", src, i, name, t_us) if kind == 0 else ("fire", i, name, t_us)


def take(search: Search, state: State, action: tuple) -> tuple[State, tuple[str, ...], int | None,
                                                                 ViolationEvent | None]:
    """(the state after `action`, its steps, the node that took it, what it broke): rule 4."""
    taken = state.taken.get(action) if state.taken is not None else None
    if taken is not None:
        return taken
    stepper = search.stepper
    kind = action[0]
    delivered = copied = None
    if kind in COMMANDS:
        node = who = action[1]
        stepper.restore(state, node).command(COMMANDS[kind](node))
        own: tuple[str, ...] = (f"{kind} {node}",)
        if kind == "crash":
            who = -1  # (nobody's step)
    elif kind == "join":
        stepper.restore(state, None).command(Join())
        node = who = max(set(stepper.h.engine.ids) - set(state.members[0]))
        own = ("join",)
    elif kind == "at":  # (the horizon: the last instant before it is judged)
        stepper.restore(state, None).at(action[1])
        node, who, own = None, None, (f"at {action[1]:g}",)
    elif kind in (DROP, DUPLICATE):  # rule 5: no node steps
        stepper.restore(state, None)
        node, who = None, SAME_TURN
        own = (f"{kind} {stepper.message_id(state.flight[action[1:3]][action[3]][0])}",)
        if kind == DROP:
            delivered = action[1:]
        else:
            copied = action[1:]
    else:
        node = who = action[2] if kind == "deliver" else action[1]
        h = stepper.restore(state, node, copied=False)
        own = ()
        t_us = action[-1]
        if search.timed and t_us > h.now_us:
            h.at(to_seconds(t_us))
            own = (f"at {to_seconds(t_us):g}",)
        if kind == "deliver":
            delivered = action[1:4]
            stepper.deliver(*delivered)
            own += (f"deliver {stepper.message_id(state.flight[action[1:3]][action[3]][0])}" if search.network else
                    f"deliver {action[1]} {action[2]}",)
        else:
            stepper.fire(node, action[2])
            own += (f"fire {node} {action[2]}",)
    own = tick(search, stepper.h, own)
    taken = (stepper.after(state, node, delivered, copied), own, who, broken(stepper.h, search.prop))
    if state.taken is None:
        state.taken = {}
    state.taken[action] = taken
    return taken


def tick(search: Search, h: Harness, steps: tuple[str, ...]) -> tuple[str, ...]:
    """Asynchronous: each step is an instant of its own, over 1 ms on (so the monitor
    judges it); the steps, with the `at` that says so. Timed: the instant stays open
    until the next thing due comes later."""
    if search.timed:
        return steps
    t = to_seconds(h.now_us + ASYNC_STEP_US)
    h.at(t)
    return (*steps, f"at {t:g}")


def delays(search: Search, state: State, arrivals: dict[int, int]) -> list[dict[int, int]]:
    """Timed: the arrival of every message in flight, for each choice of delay for
    those just sent (FIFO: none before the one ahead of it). `arrivals`: those of the
    messages that were in flight already (the state's before, but the one delivered).
    Asynchronous: none."""
    if not search.timed:
        return [{}]
    new: list[tuple[tuple[int, int], int]] = []
    last: dict[tuple[int, int], int] = {}  # a link with new messages: the arrival of its last one before them
    fifo = REORDER not in search.network  # (else each delay is its own: rule 5)
    flight = state.flight
    for link in flight if state.added_to is None else state.added_to:  # (only a link the step added to has new ones)
        queue = flight[link]
        if queue[-1][0] not in arrivals:  # (new messages are at the end of their link)
            for msg_id, _, _ in queue:
                arrives = arrivals.get(msg_id)
                if arrives is None:
                    new.append((link, msg_id))
                else:
                    last[link] = arrives
    if not new:
        return [arrivals]
    out = []
    for chosen_delays in itertools.product(search.delays_us, repeat=len(new)):
        chosen, ahead = dict(arrivals), dict(last)
        for (link, msg_id), delay in zip(new, chosen_delays, strict=True):
            chosen[msg_id] = ahead[link] = max(state.now_us + delay, ahead.get(link, 0)) if fifo else state.now_us + delay
        out.append(chosen)
    return out


def broken(h: Harness, prop: str | None) -> ViolationEvent | None:
    """The first report of `prop` (None: of any safety property) in what the last step did."""
    events, h.events[:] = list(h.events), []
    for e in events:
        if type(e) is ViolationEvent and e.phase == "begin" and (e.property == prop or prop is None and
                                                                 e.property in SAFETY):
            return e
    return None
