"""`bully-tui --headless --compare --mutex`: the lecture's figures for mutual exclusion
(3-3 to 3-7), measured, for every mutex algorithm (or the one named) and N = 4 to 64.

Each run: an election (the classic Bully unless --algorithm names one) elects a leader,
every message takes exactly `delay` seconds (1 by default, so that a delay in seconds
is one in messages), and each node wants the critical section after a think time of
2N to 6N seconds (`workload`: light enough that most requests find the CS free, as the
lecture's per-entry figures assume, and some do not, for the synchronization delay)
and holds it 1 to 3 s, for RUN seconds. Read off the summary (core/cs_entries.py, the one
definition): messages per entry (per request that entered and left), client delay
(asking to entering) and synchronization delay (an exit that left the CS empty to the
next entry, while someone waits), median and worst, beside the lecture's figure; and the bandwidth used when nobody wants the CS (an idle run of the
same length: only the token ring's token keeps moving).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from protocol import MUTEXES

from ..core.config import ClusterConfig, Workload
from .session import Session
from .wiring import run_headless

SIZES = (4, 8, 16, 32, 64)
RUN = 300.0  # virtual seconds per run


def workload(nodes: int) -> Workload:
    return Workload(think=(2.0 * nodes, 6.0 * nodes), hold=(1.0, 3.0))


@dataclass(frozen=True, slots=True)
class MutexResult:
    mutex: str
    nodes: int
    entries: int
    messages_per_entry: float | None
    client_delay: dict[str, float] | None  # median, worst (seconds)
    sync_delay: dict[str, float] | None
    sync_left_out: int  # exits while another node was inside: no synchronization delay to measure
    idle_messages_per_second: float
    violations: int
    lecture: dict[str, str]


def run_one(mutex: str, nodes: int, config: ClusterConfig, seed: int, election: str = "classic") -> MutexResult:
    session = Session(f"{election}+{mutex}", nodes, seed, config, workload=workload(nodes))
    busy = run_headless(session, RUN)["mutex"]
    idle = run_headless(replace(session, workload=Workload(think=None)), RUN)["mutex"]
    return MutexResult(mutex, nodes, busy["entries"], busy["messages_per_entry"], busy["client_delay"],
                       busy["sync_delay"], busy["sync_delay_left_out"], round(idle["messages"] / RUN, 3),
                       busy["violations"], busy["lecture"])


def compare_mutex(config: ClusterConfig, seed: int, sizes: tuple[int, ...] = SIZES,
                  mutexes: tuple[str, ...] | None = None, election: str = "classic") -> list[MutexResult]:
    return [run_one(name, n, config, seed, election) for n in sizes for name in (mutexes or MUTEXES)]


def _spread(values: dict[str, float] | None) -> str:
    return "–" if values is None else f"{values['median']:.2f} / {values['worst']:.2f}"


def _left_out(count: int) -> str:
    return f" ({count:,} left out: two inside)" if count else ""


def mutex_table(results: list[MutexResult], config: ClusterConfig, election: str = "classic") -> str:
    rows = [
        (f"Mutual exclusion beside {election}; every message takes {config.delay_min:g}"
         f"{'' if config.delay_min == config.delay_max else f'..{config.delay_max:g}'} s; each node wants the "
         f"critical section after 2N..6N s and holds it 1..3 s; {RUN:g} s per run. Messages per entry are counted "
         "per request that entered and left; delays in seconds (median / worst), a synchronization delay only "
         "from an exit that left the CS empty; idle: messages per second when nobody wants the CS."),
        "",
        "| mutex | N | entries | msgs per entry | lecture | client delay | sync delay | lecture (msgs) | idle msgs/s |"
        " violations |",
        "|---|---:|---:|---:|---|---:|---:|---|---:|---:|",
    ]
    for r in results:
        per_entry = "–" if r.messages_per_entry is None else f"{r.messages_per_entry:g}"
        rows.append(f"| {r.mutex} | {r.nodes} | {r.entries:,} | {per_entry} | {r.lecture['messages_per_entry']} | "
                    f"{_spread(r.client_delay)} | {_spread(r.sync_delay)}{_left_out(r.sync_left_out)} | "
                    f"{r.lecture['sync_delay_messages']} | "
                    f"{r.idle_messages_per_second:g} | {r.violations} |")
    return "\n".join(rows)


def mutex_json_lines(results: list[MutexResult]) -> str:
    return "\n".join(json.dumps(asdict(r)) for r in results)
