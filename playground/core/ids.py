"""Node ids: 1..N, or random 128-bit UUIDs (seed 001), and the id a newcomer gets.

Both are made from the seed, so a run's ids, a joiner's included, are the same every
time; a transcript records them, so a re-run does not need to make them again."""

from __future__ import annotations

import random
import uuid

ID_KINDS = ("seq", "uuid")


def node_ids(kind: str, count: int, seed: int) -> tuple[int, ...]:
    """`seq`: 1..count; `uuid`: random 128-bit ids from the seed."""
    return uuid_ids(count, seed) if kind == "uuid" else tuple(range(1, count + 1))


def uuid_ids(count: int, seed: int) -> tuple[int, ...]:
    """`count` distinct random version-4 UUIDs as 128-bit ints (seed 001), from the seed."""
    rng = random.Random(f"ids {seed}")
    ids: set[int] = set()
    while len(ids) < count:
        ids.add(uuid.UUID(int=rng.getrandbits(128), version=4).int)
    return tuple(sorted(ids))


def next_id(ids: tuple[int, ...], seed: int) -> int:
    """The id of a node that joins a cluster that has had `ids` (left ones included):
    the next integer if they are 1..N, or else a new UUID (from the seed and how many
    there have been, so that the same joins give the same ids)."""
    if ids == tuple(range(1, len(ids) + 1)):
        return len(ids) + 1
    rng = random.Random(f"joiner {seed} {len(ids)}")
    while True:
        new = uuid.UUID(int=rng.getrandbits(128), version=4).int
        if new not in ids:
            return new
