"""How states and message types look: a glyph (readable without colour) and a theme
colour variable (never a literal colour). Shared by the grid, the log and the panel."""

from __future__ import annotations

STATUS_LOOK = {
    "down": ("✖", "$error"),
    "election": ("◆", "$warning"),
    "waiting": ("◇", "$accent"),
    "normal": ("●", "$success"),
    # Garcia-Molina's: halted, and taken in by the new coordinator but not yet Ready
    "reorganization": ("◈", "$accent"),
    # Stoller's: looking for a higher node, halting the lower ones, halted, normal
    "elec1": ("◆", "$warning"),
    "elec2": ("◆", "$warning"),
    "wait": ("◇", "$accent"),
    "norm": ("●", "$success"),
}

TOPIC_COLOUR = {
    "election": "$warning",
    "answer": "$accent",
    "coordinator": "$secondary",
    "probe": "$text-muted",
    "probe_reply": "$text-muted",
    "state": "$primary",
    "crash": "$error",
    "recover": "$success",
    "start": "$success",
    "command": "$secondary",
    "violation": "$error",
    # the other algorithms' messages: announcements stand out, requests and acks recede
    "halt": "$warning",
    "new_coordinator": "$secondary",
    "ready": "$secondary",
    "ldr": "$secondary",
    "elected": "$secondary",
    "heartbeat": "$text-muted",
    "ack": "$text-muted",
    "halt_ack": "$text-muted",
    "new_coordinator_ack": "$text-muted",
    "ready_ack": "$text-muted",
    "are_you_there": "$text-muted",
    "yes": "$text-muted",
    "are_you_normal": "$text-muted",
    "normal_reply": "$text-muted",
}

LEADER_MARK = "★"
BAR = 4  # cells in a countdown bar


def status_look(status: str, normal: bool) -> tuple[str, str]:
    """Glyph and colour of a status; statuses of other algorithms fall back on `normal`."""
    return STATUS_LOOK.get(status, ("●", "$success") if normal else ("◆", "$warning"))


def short_status(status: str, width: int = 8) -> str:
    """"reorganization" -> "reorg.": a status cut to fit a card beside its leader."""
    return status if len(status) <= width else status[:5] + "."


def topic_colour(topic: str) -> str:
    return TOPIC_COLOUR.get(topic, "$foreground")


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
