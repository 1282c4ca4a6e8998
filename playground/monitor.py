"""The safety and liveness monitor: it reads the trace and reports broken properties.

It lives in the runtime (the cluster feeds it every event in trace order), so every
observer sees its reports as `violation` events: the transcript records them, the
summary lists them, the UI raises an alert. It judges only what the trace says (who is
up, each node's status, leader and whether that status is normal), so it works for
every algorithm without knowing any of them.

  SLE1         two up nodes in a normal status follow different leaders.
  split brain  two up nodes each believe they lead (leader == itself).
  SLE2         c seconds after the last crash or recovery (start-up counts as one),
               some up node is not normal under the highest up node.

SLE1 and split brain are episodes: one event when they begin, one when they end, with
the duration. SLE2 is checked once per quiet period, at its deadline; the cluster asks
for that moment through `deadline`, so a cluster with nothing else to do still checks.
"""

from __future__ import annotations

from collections import Counter

from .config import to_seconds, to_us
from .events import CrashEvent, Event, RecoverEvent, StartEvent, StateEvent, ViolationEvent

SLE1, SPLIT_BRAIN, SLE2 = "sle1", "split_brain", "sle2"
_UNSET = 0  # seq, stamped by the cluster


def _names(nodes) -> str:
    return ", ".join(map(str, sorted(nodes)))


class Monitor:
    def __init__(self, ids: tuple[int, ...], settle: float):
        self.up: set[int] = set()
        self.leader: dict[int, int | None] = dict.fromkeys(ids)
        self.normal: dict[int, bool] = dict.fromkeys(ids, False)
        self.settle_us = to_us(settle)
        self.deadline: int | None = None  # when SLE2 is next checked (us)
        self._normal_leaders: Counter[int | None] = Counter()  # over up nodes in normal
        self._leading: set[int] = set()  # up nodes whose leader is themselves
        self._open: dict[str, tuple[float, tuple[int, ...]]] = {}  # property -> (began, nodes)

    def observe(self, event: Event) -> list[ViolationEvent]:
        """Take one event (in trace order); return the violations it begins or ends."""
        kind = type(event)
        if kind is StateEvent:
            self._forget(event.node)
            self.leader[event.node], self.normal[event.node] = event.leader, event.normal
            self._count(event.node)
        elif kind is CrashEvent:
            self._forget(event.node)
            self.up.discard(event.node)
            self._fault(event.t)
        elif kind is StartEvent or kind is RecoverEvent:
            self.up.add(event.node)
            self._count(event.node)
            self._fault(event.t)
        else:
            return []
        return self._episodes(event.t)

    def check_settled(self) -> list[ViolationEvent]:
        """SLE2, at the deadline: every up node normal under the highest up node."""
        t = to_seconds(self.deadline)
        self.deadline = None
        behind = self.unsettled()
        if not behind:
            return []
        top = max(self.up)
        detail = f"{to_seconds(self.settle_us):g} s after the last crash or recovery, node(s) {_names(behind)} not normal under {top}"
        return [ViolationEvent(_UNSET, t, SLE2, "begin", tuple(behind), detail)]

    def unsettled(self) -> list[int]:
        """The up nodes not (yet) normal under the highest up node: none means agreement."""
        if not self.up:
            return []
        top = max(self.up)
        return sorted(i for i in self.up if not (self.normal[i] and self.leader[i] == top))

    # --- bookkeeping ----------------------------------------------------------------

    def _fault(self, t: float) -> None:
        self.deadline = to_us(t) + self.settle_us

    def _forget(self, node: int) -> None:
        if node in self.up:
            if self.normal[node]:
                leader = self.leader[node]
                self._normal_leaders[leader] -= 1
                if not self._normal_leaders[leader]:
                    del self._normal_leaders[leader]
            self._leading.discard(node)

    def _count(self, node: int) -> None:
        if node in self.up:
            if self.normal[node]:
                self._normal_leaders[self.leader[node]] += 1
            if self.leader[node] == node:
                self._leading.add(node)

    def _episodes(self, t: float) -> list[ViolationEvent]:
        sle1, split = len(self._normal_leaders) > 1, len(self._leading) > 1
        if not (sle1 or split or self._open):  # the common case: nothing broken, nothing open
            return []
        out = []
        for prop, broken in ((SLE1, sle1), (SPLIT_BRAIN, split)):
            if broken and prop not in self._open:
                nodes, detail = self._describe(prop)
                self._open[prop] = (t, nodes)
                out.append(ViolationEvent(_UNSET, t, prop, "begin", nodes, detail))
            elif not broken and prop in self._open:
                began, nodes = self._open.pop(prop)
                lasted = round(t - began, 6)  # whole microseconds, as virtual time is
                out.append(ViolationEvent(_UNSET, t, prop, "end", nodes, f"over after {lasted:g} s", lasted))
        return out

    def _describe(self, prop: str) -> tuple[tuple[int, ...], str]:
        if prop == SPLIT_BRAIN:
            nodes = tuple(sorted(self._leading))
            return nodes, f"nodes {_names(nodes)} each believe they lead"
        groups: dict[int | None, list[int]] = {}
        for i in sorted(self.up):
            if self.normal[i]:
                groups.setdefault(self.leader[i], []).append(i)
        nodes = tuple(sorted(i for members in groups.values() for i in members))
        sides = "; ".join(f"{_names(members)} follow {leader}" for leader, members in sorted(groups.items(), key=lambda group: group[1]))
        return nodes, f"normal nodes disagree: {sides}"
