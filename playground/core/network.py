"""Link delays: each message's delay is drawn in [min, max] from one RNG seeded by
`--seed`. The engine draws in a fixed order (the merged trace's), so the same seed
gives the same delays. FIFO is the links' (links.py), not the network's."""

from __future__ import annotations

import random


class Network:
    def __init__(self, seed: int, delay_min_us: int, delay_max_us: int):
        self._rng = random.Random(seed)
        self.set_delay(delay_min_us, delay_max_us)

    def set_delay(self, delay_min_us: int, delay_max_us: int) -> None:
        """New bounds apply to messages sent from now on; those in flight keep theirs."""
        self.delay_min_us = delay_min_us
        self.delay_max_us = delay_max_us
        # randint draws through _randbelow: the same numbers, without its checks
        self._span = delay_max_us - delay_min_us + 1

    def delay(self) -> int:
        """A new message's delay, in microseconds."""
        if self._span == 1:
            return self.delay_min_us
        return self.delay_min_us + self._rng._randbelow(self._span)


class ByHand(Network):
    """The network of a run stepped by hand (engine rule 6, run/harness.py): no message
    arrives by itself. Each is due so far ahead (about 31 years) that no run reaches it,
    and waits in its link, in order, until the test brings it to the present
    (Links.bring_forward). The delay bounds are kept, for whoever asks, but draw nothing."""

    UNSCHEDULED_US = 10**15

    def delay(self) -> int:
        return self.UNSCHEDULED_US
