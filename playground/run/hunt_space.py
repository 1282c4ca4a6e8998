"""What a hunt may vary and what it looks for (hunt.py's rule 1): the properties it
names, the bounds on a cluster, and a search's `Space`. Kept apart from the search,
which is hypothesis's, so that the command line checks a hunt's arguments without
loading it (a refusal is one line, quick)."""

from __future__ import annotations

from dataclasses import dataclass

from protocol import machine

from ..core.commands import membership_refused
from ..core.monitor import CS_WAIT, MUTEX, SLE1, SLE2, SPLIT_BRAIN

# What --property names (as people type them), and the monitor's name for each (None: any).
PROPERTIES = {"sle1": SLE1, "split-brain": SPLIT_BRAIN, "sle2": SLE2, "mutex-safety": MUTEX,
              "mutex-liveness": CS_WAIT, "any": None}
NEEDS_A_MUTEX = ("mutex-safety", "mutex-liveness")
SAFETY = (SLE1, SPLIT_BRAIN, MUTEX)  # judged at every step; the exhaustive search's "any"
LIVENESS = (SLE2, CS_WAIT)  # judged after time has passed: the exhaustive search's timed model only
MAX_NODES = 64  # a hunt's runs are many and short: small clusters
LINK_FAULTS = ("loss", "duplicate", "reorder")  # what --link-faults may let the links do (config.Faults)
NETWORK_FAULTS = ("drop", "duplicate", "reorder")  # what --network may let the exhaustive search's links do


@dataclass(frozen=True, slots=True)
class Space:
    """What a search may vary (rule 1)."""

    algorithm: str  # as the engine hosts it: "classic", or "classic+central"
    nodes: tuple[int, int] = (2, 8)
    synchrony: bool = True  # keep T >= 2 x max delay
    chosen: tuple[str, ...] = ()  # the commands a schedule may use (none given: all it takes)
    link_faults: tuple[str, ...] = ()  # what the links may do besides lossless FIFO (LINK_FAULTS): none by default

    @property
    def commands(self) -> tuple[str, ...]:
        """The commands a schedule may use: those chosen, or every one the algorithm takes."""
        if self.chosen:
            return self.chosen
        names = ["crash", "recover", "elect"]
        if machine(self.algorithm).mutex is not None:
            names.append("want")
        if membership_refused(self.algorithm) is None:
            names += ["join", "leave"]
        return tuple(names)
