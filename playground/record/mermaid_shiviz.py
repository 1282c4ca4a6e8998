"""A space-time diagram as text: a Mermaid `sequenceDiagram`, or a ShiViz log.

  - Mermaid: participants in id order, one arrow per message when it arrives (a cross
    when it is dropped), notes for crashes, recoveries, state changes and violations;
    a message and a change of state say the rule that made them ("Election · rule 1").
  - ShiViz, its default format (line 1 the parsing expression, line 2 the executions
    delimiter, left empty): each event a line, then `host {"host": n, ...}`, its vector
    clock. Every event ticks its own host's entry by one, and a delivery first takes the
    maximum with the clock its message was sent with; so a host's entries count 1, 2, 3
    with no gap, and a clock only names events that are in the log (the rules ShiViz
    checks; `tests/test_export.py` checks them too). A send and a change of state say the
    rule that made them too.

Both draw a `Diagram` (`spacetime.py`), in the transcript's order.
"""

from __future__ import annotations

import json

from ..core.config import InputError
from .spacetime import Diagram, Flight, Mark, by_rule


def to_mermaid(d: Diagram) -> str:
    name = {node: f"n{k + 1}" for k, node in enumerate(d.ids)}
    out = ["sequenceDiagram"]
    out += [f"    participant {name[node]} as {_mermaid_text(d.labels[node])}" for node in d.ids]
    bands = sorted(d.bands, key=lambda b: b.t)
    everyone = f"{name[d.ids[0]]},{name[d.ids[-1]]}" if len(d.ids) > 1 else name[d.ids[0]] if d.ids else ""
    b = 0
    for what, item in d.order:
        while b < len(bands) and bands[b].t < _time(what, item):  # judged at the end of its instant
            out.append(f"    Note over {everyone}: ⚠ {_mermaid_text(bands[b].text)}")
            b += 1
        if what == "deliver":
            out.append(f"    {name[item.src]}->>{name[item.dst]}: {_mermaid_text(by_rule(item.label, item.rule))}")
        elif what == "drop":
            out.append(f"    {name[item.src]}-x{name[item.dst]}: {_mermaid_text(by_rule(item.label, item.rule))} "
                       f"(dropped: {item.why or 'down'})")
        elif what == "mark":
            out.append(f"    Note over {name[item.node]}: {_mermaid_text(item.text)}")
    out += [f"    Note over {everyone}: ⚠ {_mermaid_text(band.text)}" for band in bands[b:]]
    return "\n".join(out) + "\n"


def _time(what: str, item: Flight | Mark) -> float:
    return item.t if what == "mark" else item.sent if what == "send" else item.ended


def _mermaid_text(text: str) -> str:
    """Mermaid reads `;` as a statement's end and `#` as an entity's start."""
    return text.replace(";", ",").replace("#", "no. ")


# --- ShiViz ------------------------------------------------------------------------------

SHIVIZ_REGEX = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})"


SHIVIZ_ENTRIES = 20_000_000  # clock entries (events x nodes, at most) a ShiViz log may hold: some hundreds of MB


def to_shiviz(d: Diagram) -> str:
    if len(d.order) * len(d.ids) > SHIVIZ_ENTRIES:  # every line carries its node's whole clock
        raise InputError(f"a ShiViz log gives every event its node's vector clock: {len(d.order):,} events x "
                         f"{len(d.ids)} nodes is more than {SHIVIZ_ENTRIES:,} entries; choose fewer with --nodes, "
                         f"--from and --to, or --types")
    host = {node: f"node{d.labels[node]}" for node in d.ids}
    clocks: dict[int, dict[str, int]] = {node: {} for node in d.ids}
    sent_with: dict[int, dict[str, int]] = {}  # message id -> its sender's clock at the send
    arriving: dict[int, int] = {}  # message id -> its arrivals still to come (a copy is a second)
    out = [SHIVIZ_REGEX, ""]  # line 1: how to read it (ShiViz's default); line 2: one execution
    for what, item in d.order:
        if what == "copy":  # the link's doing, no node's: a second arrival to come
            arriving[item.id] = arriving.get(item.id, 0) + 1
            continue
        if what == "send":
            node, text = item.src, by_rule(f"t={item.sent:g} send {item.label} #{item.id} to {d.labels[item.dst]}", item.rule)
            arriving[item.id] = 1
        elif what == "deliver":
            node, text = item.dst, f"t={item.ended:g} receive {item.label} #{item.id} from {d.labels[item.src]}"
            clock = clocks[node]
            for h, n in _arrival(item.id, sent_with, arriving).items():
                if clock.get(h, 0) < n:
                    clock[h] = n
        elif what == "drop":
            _arrival(item.id, sent_with, arriving)  # it never arrives: nothing happens at the receiver
            continue
        else:
            node, text = item.node, f"t={item.t:g} {item.text}"
        clock = clocks[node]
        clock[host[node]] = clock.get(host[node], 0) + 1
        if what == "send":
            sent_with[item.id] = dict(clock)
        out.append(text)
        out.append(f"{host[node]} {json.dumps(clock)}")
    return "\n".join(out) + "\n"


def _arrival(msg_id: int, sent_with: dict[int, dict[str, int]], arriving: dict[int, int]) -> dict[str, int]:
    """The clock message `msg_id` was sent with, forgotten once its last arrival is in."""
    arriving[msg_id] -= 1
    if arriving[msg_id]:
        return sent_with[msg_id]
    del arriving[msg_id]
    return sent_with.pop(msg_id, {})
