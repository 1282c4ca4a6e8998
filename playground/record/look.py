"""How things look: a glyph (readable without colour) and a theme colour variable (never
a literal colour), by role. Algorithms declare a role for each status and message
(protocol/interface.py), so this module names none of their statuses or messages, and
a new algorithm looks right without touching it. Shared by the grid, the log and the panel.

Beside the looks, the words the screens write are named here too, though each is defined
where its meaning is: a node's and a command's names and a rule's (labels.py), a time (the
configuration's), a violation (the monitor's). So a screen reads how things look and
how they are said in one place (the UI's imports of the runtime are counted:
tests/test_layers.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol import CsState, MessageRole, StatusRole

from ..core.config import duration_text, instant_text
from ..core.monitor import PROPERTY_NAMES, describe, describe_groups
from .labels import command_text, node_labels, rule_sentence, rule_text

__all__ = ["BAR", "CS_LOOK", "CS_WORD", "EVENT_COLOUR", "LEADER_MARK", "MESSAGE_COLOUR", "NO_LEADER", "PROPERTY_NAMES",
           "ROLE_LOOK", "command_text", "countdown", "cs_badge", "describe", "describe_groups", "duration_text",
           "inside", "instant_text", "leader_text", "line_colour", "node_labels", "role_look", "rule_sentence",
           "rule_text", "short_list", "short_status", "timer_label"]

# A status's role: glyph and colour, in the order a legend lists them.
ROLE_LOOK = {
    StatusRole.NORMAL: ("●", "$success"),
    StatusRole.ELECTING: ("◆", "$warning"),
    StatusRole.WAITING: ("◇", "$accent"),
    StatusRole.DOWN: ("✖", "$error"),
}

# A message's role: requests and announcements stand out, replies and detection recede.
MESSAGE_COLOUR = {
    MessageRole.REQUEST: "$warning",
    MessageRole.REPLY: "$accent",
    MessageRole.ANNOUNCEMENT: "$secondary",
    MessageRole.DETECTOR: "$text-muted",
    MessageRole.MEMBERSHIP: "$primary",
}
# A node's place with respect to the critical section (a mutex beside the election):
# glyph, colour, and what the log says when it gets there. A card shows only a node
# waiting or inside (cs_badge); an exported lane marks each change.
CS_LOOK = {
    CsState.RELEASED: ("□", "$text-muted", "is out of the critical section"),
    CsState.WANTED: ("⧖", "$warning", "wants the critical section"),
    CsState.HELD: ("▣", "$secondary", "enters the critical section"),
}
assert ROLE_LOOK.keys() == set(StatusRole) and MESSAGE_COLOUR.keys() == set(MessageRole) \
    and CS_LOOK.keys() == set(CsState), "a role without a look"

# Log lines that are not messages, by event kind.
EVENT_COLOUR = {
    "state": "$primary",
    "crash": "$error",
    "recover": "$success",
    "start": "$success",
    "command": "$secondary",
    "violation": "$error",
    "agreement": "$success",
    "cs": "$secondary",
}

LEADER_MARK = "★"
NO_LEADER = "?"  # a node that follows nobody: "→?"
BAR = 4  # cells in a countdown bar


CS_WORD = {CsState.RELEASED: "out of CS", CsState.WANTED: "wants CS", CsState.HELD: "in CS"}  # beside a lane


def inside(state: object) -> bool:
    """Whether a node in `state` (a cs line's, or None) is in the critical section."""
    return state is CsState.HELD


def cs_badge(state: CsState | None) -> tuple[str, str] | None:
    """A card's glyph and colour for a node waiting for the critical section or inside
    it; None for one outside (or with no mutex): nothing to show."""
    return None if state is None or state is CsState.RELEASED else CS_LOOK[state][:2]


def role_look(role: StatusRole) -> tuple[str, str]:
    """Glyph and colour of a status, by its role."""
    return ROLE_LOOK[role]


def short_status(status: str, width: int = 8) -> str:
    """"reorganization" -> "reorg.": a status cut to fit a card beside its leader."""
    return status if len(status) <= width else status[:5] + "."


def line_colour(kind: str, role: MessageRole | None) -> str:
    """A log line's colour: its message's role, or its event's kind."""
    if role is not None:
        return MESSAGE_COLOUR[role]
    return EVENT_COLOUR.get(kind, "$foreground")


def countdown(set_at: float, fires: float, now: float, cells: int = BAR) -> str:
    """A bar that empties as the timer runs out."""
    span = fires - set_at
    left = 0.0 if span <= 0 else min(1.0, max(0.0, (fires - now) / span))
    full = round(left * cells)
    return "█" * full + "░" * (cells - full)


def timer_label(name: str, labels: Mapping[int, str], width: int | None = None) -> str:
    """A timer's name for people, the same words on the card and in the panel:
    "hop_wait 3 12" -> "hop wait (3, 12)" (node ids among the arguments by their short
    names), cut to `width` at a word's end ("hop"), or with a dot if even its first
    word is longer ("coordinator wait" -> "coordi.")."""
    base, *args = name.split(" ")
    words = base.replace("_", " ")
    if args:
        words += " (" + ", ".join(labels.get(int(a), a) if a.isdigit() else a for a in args) + ")"
    if width is None or len(words) <= width:
        return words
    cut = words[:width + 1].rsplit(" ", 1)[0].rstrip(" (,")
    return cut if len(cut) <= width else words[:width - 1] + "."


def leader_text(leader: int | None, labels: Mapping[int, str]) -> str:
    """Whom a node follows, as the card and the panel both write it: "→7", "→?" (none)."""
    return f"→{NO_LEADER if leader is None else labels[leader]}"


def short_list(values: Sequence[object], labels: Mapping[int, str], width: int) -> str:
    """A list in at most `width` cells where it can be, node ids by their short names:
    whole if it fits; else runs of three or more consecutive ids as one ("1–64 (64)");
    else its first and last items around "…" ("1, 2, …, 63, 64 (64)"), as many as fit.
    A shortened list says how many it holds. The shortest form may still be wider than
    `width`: then the caller wraps it."""
    if not values:
        return "none"
    items = [_text(v, labels) for v in values]
    pieces: list[str] = []
    for run in _runs(values):
        if len(run) >= 3:
            pieces.append(f"{_text(run[0], labels)}–{_text(run[-1], labels)}")
        else:
            pieces += [_text(v, labels) for v in run]
    shorter = [items, pieces]  # whole, runs joined, then fewer and fewer pieces around "…"
    shorter += [pieces[:(keep + 1) // 2] + ["…"] + pieces[len(pieces) - keep // 2:] for keep in range(len(pieces) - 1, 1, -1)]
    texts = [", ".join(shown) + (f" ({len(values)})" if shown != items else "") for shown in shorter]
    return next((text for text in texts if len(text) <= width), min(texts, key=len))


def _runs(values: Sequence[object]) -> list[list[object]]:
    """Consecutive integers (ids 4, 5, 6) grouped; anything else on its own."""
    runs: list[list[object]] = []
    for v in values:
        last = runs[-1][-1] if runs else None
        if type(v) is int and type(last) is int and v == last + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return runs


def _text(value: object, labels: Mapping[int, str]) -> str:
    return labels.get(value, f"{value:,}") if type(value) is int else str(value)
