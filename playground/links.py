"""The links: one lossless FIFO queue per ordered pair of nodes.

A message waits in its link's queue from its send to its arrival, and a link hands
over only its head, so FIFO holds by construction for whoever drives the run: the
engine at the times the network draws, or a test harness in the order a test picks.

A message that draws a shorter delay than the one before it on the same link is held
until that one has arrived (equal arrival times keep send order). So a link's arrival
times never go backwards, and the time a send reports (`arrives`) is when it arrives.
Empty links keep nothing: a thousand nodes have a million links.
"""

from __future__ import annotations

from protocol import Message


class Links:
    def __init__(self):
        self._queues: dict[tuple[int, int], list[tuple[int, Message, int]]] = {}

    def push(self, src: int, dst: int, msg_id: int, msg: Message, earliest: int = 0) -> int:
        """Put a message on src->dst; return when it arrives: `earliest`, or when the
        message before it does, if that is later."""
        link = (src, dst)
        queue = self._queues.get(link)
        if queue is None:
            self._queues[link] = [(msg_id, msg, earliest)]
            return earliest
        arrives = max(earliest, queue[-1][2])
        queue.append((msg_id, msg, arrives))
        return arrives

    def pop(self, src: int, dst: int) -> tuple[int, Message]:
        """Take the message at the head of src->dst: (its id, the message)."""
        link = (src, dst)
        queue = self._queues[link]
        msg_id, msg, _ = queue.pop(0)
        if not queue:
            del self._queues[link]
        return msg_id, msg

    def waiting(self) -> dict[tuple[int, int], list[tuple[int, Message]]]:
        """Every link with messages in flight: (src, dst) -> [(id, message)], head first."""
        return {link: [(i, m) for i, m, _ in queue] for link, queue in sorted(self._queues.items())}

    def __len__(self) -> int:
        return sum(map(len, self._queues.values()))
