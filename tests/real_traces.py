"""Lines of a real node's trace (playground/real/traces.py: a transcript header at each
start, then transcript lines with the node's Lamport clock), for the tests and the
campaign (tests/campaign/): a node's first lines, and lines that `merge` refuses,
naming the file and the line."""

from __future__ import annotations

# (Written out, not made by playground's code: the campaign imports no code of the checkout it tries.)
HEADER = (b'{"format":"bully-transcript","version":3,"algorithm":"classic","nodes":[1,2],"seed":1,"config":'
          b'{"timeout":4.0,"coordinator_timeout":null,"probe_interval":5.0,"delay_min":0,"delay_max":0,"settle":null},'
          b'"real":true}\n')
FIRST_LINES = 2  # a header and a start: a line after them is line 3


def first_lines(node: int) -> bytes:
    """Node `node`'s trace from its start: its header, then its start (classic, nodes 1 and 2)."""
    return HEADER + b'{"seq":0,"t":1.0,"kind":"start","node":%d,"lamport":0}\n' % node


# Lines merge cannot read (after node 2's first lines): one line naming the file and the line.
HOSTILE = [
    b"[]", b"{}", b'{"seq": 0, "t": "x", "kind": "start", "node": 2, "lamport": 0}',
    b'{"t": 1, "lamport": 0, "node": 2}', b'{"t": 1e999, "lamport": 0, "node": 2, "kind": "stop"}', b"\xff\xfe",
    (b'{"seq": 0, "t": 1, "kind": "send", "src": 2, "dst": 1, "id": 1, "msg": {"type": "paxos"}, "arrives": 0, '
     b'"lamport": 0}'),
    b'{"t": 1.0, "lamport": 0, "node": 2, "kind": "boot", "algorithm": "classic", "ids": [1, 2]}',  # (an older format's)
]
# Lines whole and well formed that merge cannot place: another node's, or naming a node of no trace.
STRANGERS = [
    ("line-of-node-99", b'{"t": 2, "lamport": 1, "node": 99, "kind": "stop"}'),
    ("send-to-99", (b'{"seq": 0, "t": 2, "kind": "send", "src": 2, "dst": 99, "id": 1, '
                    b'"msg": {"type": "election", "epoch": 0}, "arrives": 0, "lamport": 1}')),
    ("leader-99", (b'{"seq": 0, "t": 2, "kind": "state", "node": 2, "status": "normal", "leader": 99, "role": "normal", '
                   b'"epoch": 1, "lamport": 1}')),
    ("garbage-last-line", b"garbage"),  # (whole, its newline written: not a line a kill cut short)
]
CUT_SHORT = b'{"seq": 0, "t": 2, "lam'  # a last line a kill cut short: left out, with a warning
