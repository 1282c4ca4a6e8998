"""Short names for node ids. Ids 1..N are their own names; UUID ids (`--ids uuid`,
128-bit) are shown as the shortest hex prefix, at least four digits, that tells every
node apart: enough to match a node across the grid, the log and the panel."""

from __future__ import annotations


def node_labels(ids: tuple[int, ...]) -> dict[int, str]:
    if all(0 < i < 1_000_000 for i in ids):
        return {i: str(i) for i in ids}
    hexes = {i: f"{i:032x}" for i in ids}
    width = 4
    while len({h[:width] for h in hexes.values()}) < len(ids):
        width += 1
    return {i: h[:width] for i, h in hexes.items()}
