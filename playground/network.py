"""The simulated network: one lossless FIFO link per ordered pair of nodes.

Each message's delay is drawn in [min, max] from one RNG seeded by `--seed`. The caller
draws in a fixed order (see cluster.py), so the same seed gives the same delays. A link
is FIFO even when a later message draws a shorter delay: it is held until the one before
it has arrived (equal arrival times keep send order, which the caller's queue preserves).
"""

from __future__ import annotations

import random


class Network:
    def __init__(self, seed: int, delay_min_us: int, delay_max_us: int):
        self._rng = random.Random(seed)
        self.delay_min_us = delay_min_us
        self.delay_max_us = delay_max_us
        self._last_arrival: dict[tuple[int, int], int] = {}

    def set_delay(self, delay_min_us: int, delay_max_us: int) -> None:
        """New bounds apply to messages sent from now on; those in flight keep theirs."""
        self.delay_min_us = delay_min_us
        self.delay_max_us = delay_max_us

    def arrival(self, src: int, dst: int, sent_us: int) -> int:
        """When a message sent now on src->dst arrives."""
        low, high = self.delay_min_us, self.delay_max_us
        delay = low if low == high else self._rng.randint(low, high)
        link = (src, dst)
        arrives = max(sent_us + delay, self._last_arrival.get(link, 0))
        self._last_arrival[link] = arrives
        return arrives
