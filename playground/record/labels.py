"""Short names for node ids. Ids 1..N are their own names; UUID ids (`--ids uuid`,
128-bit) are shown as the shortest hex prefix, at least four digits, that tells every
node apart: enough to match a node across the grid, the log and the panel. And a
command by those names, and the rule that made a node's event (protocol/interface.py,
"Rules, as data"), as the log, the panel and the exports tell them."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.commands import COMMANDS, node_places


def node_labels(ids: tuple[int, ...]) -> dict[int, str]:
    if all(0 < i < 1_000_000 for i in ids):
        return {i: str(i) for i in ids}
    hexes = {i: f"{i:032x}" for i in ids}
    width = 4
    while len({h[:width] for h in hexes.values()}) < len(ids):
        width += 1
    return {i: h[:width] for i, h in hexes.items()}


def rule_text(key: str) -> str:
    """An event's rule as the log says it: "4" -> "rule 4" (the algorithm's own); "probing
    2", "members 1", "central 3" as they are (shared code's, a mutex's)."""
    return f"rule {key}" if key.isdigit() else key


def rule_sentence(key: str | None, rules: Mapping[str, str]) -> str | None:
    """"rule 4: Election from a lower node: ..." (`rules`: the run's table, key ->
    sentence); None if no rule made it."""
    if key is None:
        return None
    return f"{rule_text(key)}: {rules.get(key, 'not a rule of this algorithm')}"


def command_text(command: str, args: tuple[int | float | str, ...], labels: dict[int, str]) -> str:
    """"crash 3", "partition 1 2", "timeout 4.5", "lossy 1 2 0.5", "fire 3 election": a
    command, its nodes by their names."""
    places = node_places(COMMANDS[command], len(args), newcomer=True)
    return " ".join([command, *(labels[a] if node else a if type(a) is str else f"{a:g}"
                                for a, node in zip(args, places, strict=True))])
