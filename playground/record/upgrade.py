"""Older transcripts, read as the current version: each line upgraded in place as it is
read. A version 1 or 2 line is made a version 3 line here; a version 3 line needs nothing
(version 4 only added each line's rule, which reads as not known, None, where a line has
none), so the reader upgrades versions 1 and 2 only (UPGRADED)."""

from __future__ import annotations

from typing import Any

from protocol import Node, StatusRole

UPGRADED = (1, 2)  # the versions whose lines need upgrading


class Upgrade:
    """An older version's event line, as version 3 writes it (in place, line by line:
    a state's role depends on whether its node is up, which earlier lines say)."""

    def __init__(self, algorithm: type[Node]):
        self.roles = {status.value: status.role.value for status in algorithm.statuses}  # what each name means
        self.up: set[object] = set()

    def __call__(self, raw: dict[str, Any]) -> None:
        kind, node = raw.get("kind"), raw.get("node")
        if type(node) is not int:
            node = None  # (the event's own check names a wrong one)
        if kind in ("start", "recover"):
            self.up.add(node)
        elif kind == "crash":
            self.up.discard(node)
        elif kind == "state" and "normal" in raw:
            normal = raw.pop("normal")
            status = raw.get("status")
            if normal is True:
                raw["role"] = StatusRole.NORMAL.value
            elif node not in self.up:
                raw["role"] = StatusRole.DOWN.value
            elif type(status) is str:  # (one it does not know is refused by the event's own check)
                raw["role"] = self.roles.get(status, StatusRole.ELECTING.value)
        elif kind == "violation" and "detail" in raw:
            raw.pop("detail")
            nodes = raw.get("nodes")
            raw["leaders"] = [None] * len(nodes) if isinstance(nodes, list) else nodes
