"""How things look: a glyph (readable without colour) and a theme colour variable (never
a literal colour), by role. Algorithms declare a role for each status and message
(protocol/interface.py), so this module names none of their statuses or messages, and
a new algorithm looks right without touching it. Shared by the grid, the log and the panel."""

from __future__ import annotations

from protocol import MessageRole, StatusRole

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
assert ROLE_LOOK.keys() == set(StatusRole) and MESSAGE_COLOUR.keys() == set(MessageRole), "a role without a look"

# Log lines that are not messages, by event kind.
EVENT_COLOUR = {
    "state": "$primary",
    "crash": "$error",
    "recover": "$success",
    "start": "$success",
    "command": "$secondary",
    "violation": "$error",
    "agreement": "$success",
}

LEADER_MARK = "★"
BAR = 4  # cells in a countdown bar


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


def timer_label(name: str, width: int = 6) -> str:
    """"coordinator_wait" -> "coord.": what is awaited, cut to fit a card."""
    label = name.removesuffix("_wait")
    return label if len(label) <= width else label[: width - 1] + "."
