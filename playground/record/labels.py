"""Short names for node ids. Ids 1..N are their own names; UUID ids (`--ids uuid`,
128-bit) are shown as the shortest hex prefix, at least four digits, that tells every
node apart: enough to match a node across the grid, the log and the panel. And a
command by those names, as the log and the exports tell it."""

from __future__ import annotations

from ..core.commands import NODE_ARGUMENTS


def node_labels(ids: tuple[int, ...]) -> dict[int, str]:
    if all(0 < i < 1_000_000 for i in ids):
        return {i: str(i) for i in ids}
    hexes = {i: f"{i:032x}" for i in ids}
    width = 4
    while len({h[:width] for h in hexes.values()}) < len(ids):
        width += 1
    return {i: h[:width] for i, h in hexes.items()}


def command_text(command: str, args: tuple[int | float, ...], labels: dict[int, str]) -> str:
    """"crash 3", "partition 1 2", "timeout 4.5": a command, its nodes by their names."""
    named = command in NODE_ARGUMENTS or command == "join"
    return " ".join([command, *(labels[a] if named else f"{a:g}" for a in args)])
