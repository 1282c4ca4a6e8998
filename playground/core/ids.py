"""Node ids: 1..N, or random 128-bit UUIDs (the gsharma design), the id a newcomer gets, and the
order of the ids round the ring algorithms' ring.

All are made from the seed, so a run's ids, a joiner's included, and its ring are the
same every time; a transcript records them, so a re-run does not need to make them again."""

from __future__ import annotations

import random
import uuid

from .config import InputError, shown

ID_KINDS = ("seq", "uuid")
RING_ORDERS = ("sorted", "reversed", "shuffled")


def node_ids(kind: str, count: int, seed: int) -> tuple[int, ...]:
    """`seq`: 1..count; `uuid`: random 128-bit ids from the seed."""
    return uuid_ids(count, seed) if kind == "uuid" else tuple(range(1, count + 1))


def uuid_ids(count: int, seed: int) -> tuple[int, ...]:
    """`count` distinct random version-4 UUIDs as 128-bit ints (the gsharma design), from the seed."""
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


def ring_order(text: str, ids: tuple[int, ...], seed: int, what: str = "--ring") -> tuple[int, ...] | None:
    """The ids (`ids`, lowest first) in their order round the ring, as Config.ring takes
    it: `sorted`, None (each node's successor is the next higher id: the default);
    `reversed` (the next lower id); `shuffled`, a random order drawn from the seed; or
    the ranks of every node once, in ring order ("3,1,2": 3's successor is 1, 1's is 2,
    2's is 3). A node that joins later goes after the last one (protocol/ring_order.py)."""
    name = text.strip().lower()
    if name == "sorted":
        return None
    if name == "reversed":
        return tuple(reversed(ids))
    if name == "shuffled":
        order = list(ids)
        random.Random(f"ring {seed}").shuffle(order)
        return tuple(order)
    ranks = [part.strip() for part in text.split(",")]
    if not all(rank.isascii() and rank.isdigit() and len(rank) <= 7 for rank in ranks):
        raise InputError(f"{what} must be {', '.join(RING_ORDERS)} or the ranks of every node in ring order "
                         f"(like 3,1,2), not {shown(text)}")
    order, seen = [], set()
    for rank in map(int, ranks):
        if not 1 <= rank <= len(ids):
            raise InputError(f"{what}: there is no node {rank} (nodes are 1..{len(ids)})")
        if rank in seen:
            raise InputError(f"{what} lists node {rank} twice (a ring order lists every node once)")
        seen.add(rank)
        order.append(ids[rank - 1])
    if len(order) < len(ids):
        missing = [str(rank) for rank in range(1, len(ids) + 1) if rank not in seen]
        shown_missing = ", ".join(missing[:5]) + (f" and {len(missing) - 5:,} more" if len(missing) > 5 else "")
        raise InputError(f"{what} leaves out node{'s' if len(missing) > 1 else ''} {shown_missing} "
                         "(a ring order lists every node once)")
    return tuple(order)
