"""`bully-tui --headless --compare`: one scenario, every algorithm, N = 4 to 64, one table.

The scenario is the one every election algorithm exists for: the cluster starts, agrees
on a leader, and then the leader crashes. Each algorithm notices with its own failure
detector (probes every P, Stoller's heartbeats, Garcia-Molina's Timeout procedure) and
elects again. Everything is read off the trace by one observer that knows no algorithm:

  start-up   messages sent from the start (every node starts at once) to the crash, by
             type: election traffic (for ring and hs the crash waits until every one of
             them has arrived: their announcement's last hop, back to its leader, may be
             on its way when all follow)
  detect     from the crash to the first election started
  agree      from the crash to the monitor's next agreement (every up node normal under
             the highest up node, judged at the end of an instant, as the monitor does)
  messages   sent from the crash to that agreement, by type: election traffic, and
             failure-detector traffic (by each message's declared role) apart

With faults given (--loss, --duplicate, --reorder, --drift), each algorithm runs the same
scenario a second time with them, and the table gains their columns: whether it agreed
again, in what time, with how many messages, and how many violations the monitor saw
(the first run is the lossless FIFO one, as ever).

A run that never settles (the classic Bully with a delay range, or reordering links:
each late Election starts a round again) would take hours to reach its limit, so each
run stops as a storm once its election traffic from the start passes N^2 x max(100, t/s)
messages sent at virtual time t, or more than in_flight.MAX_IN_FLIGHT are in flight; its
row says where it stopped.

The algorithms on a ring (ring, hs) cost very different amounts by the order of the
ids round it, so they run on several: sorted (the first table's rows: each node's
successor is the next higher id), reversed, and SHUFFLES shuffles, shuffle k drawn as
`--ring shuffled --seed S+k` draws it. A second table gives each order's figures, the
shuffles' mean and worst, beside what the theory says (the algorithm's declaration:
protocol/ring_order.py), counting only the messages the theory counts.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

import trio

from protocol import ALGORITHMS, MessageRole

from ..core.commands import Crash, Scheduled
from ..core.config import NO_FAULTS, ClusterConfig
from ..core.engine import Engine
from ..core.events import AgreementEvent, DeliverEvent, DropEvent, ElectionStartEvent, Event, SendEvent, ViolationEvent
from ..core.ids import ring_order
from .cluster import Cluster, MockClock
from .in_flight import MAX_IN_FLIGHT, in_flight
from .interrupt import run_trio
from .session import fewer_gc_passes

SIZES = (4, 8, 16, 32, 64)
SHUFFLES = 10  # seeded shuffles of the ring, for each algorithm on a ring and size
FORMATS = ("markdown", "json")
# A storm: election traffic from the start past N^2 x max(STORM_ELECTIONS, t / 1 s), a
# hundred Bully elections' worth (N^2 each, about), and more than one a virtual second
# since the start. The most a run that settles sends in the default comparison is 7.9 N^2
# (hs at N = 4); hs with --loss 0.1 never agrees again but sends 0.03 N^2 a second; the
# classic Bully's storm at N = 64 with delay 1..3 s sends 17 N^2 a second, and reaches
# the bound at t = 14 s, in 13 s of CPU.
STORM_ELECTIONS = 100


@dataclass(frozen=True, slots=True)
class Result:
    algorithm: str
    nodes: int
    fault_at: float | None  # when the leader crashed (None: the start-up never agreed)
    detect: float | None  # seconds from the crash to the first election (None: none began)
    agree: float | None  # seconds from the crash to agreement (None: not within the limit)
    messages: dict[str, int]  # election traffic from the crash to agreement, by type
    detector_messages: dict[str, int]  # failure-detector traffic in the same span, by type
    # The order round the ring: "sorted", "reversed" or "shuffled S" (drawn from seed S);
    # None for an algorithm whose nodes do not form a ring.
    ring: str | None = None
    start_up: dict[str, int] = field(default_factory=dict)  # election traffic up to the first agreement, by type
    violations: int = 0  # violations the monitor saw begin, from the start to the run's end
    with_faults: Result | None = None  # the same run with the faults given, if any
    # Where a storm's bound stopped the run: {"t", "sent", "in_flight"} (None: it was not stopped)
    storm: dict[str, float | int] | None = None

    def row(self) -> dict[str, object]:
        """The JSON row: everything but the crash's own time (and the violations of the
        lossless run, as it always was); with faults, that run's figures too."""
        row = {k: v for k, v in asdict(self).items() if k not in ("fault_at", "violations", "with_faults", "storm")}
        if self.storm is not None:
            row["storm"] = self.storm
        if self.with_faults is not None:
            f = self.with_faults
            row["with_faults"] = {"started_up": f.fault_at is not None, "detect": f.detect, "agree": f.agree,
                                  "messages": f.messages, "violations": f.violations}
            if f.storm is not None:
                row["with_faults"]["storm"] = f.storm
        return row


class _Watcher:
    """Trace observer: crash the leader once all agree, then time detection and agreement.
    With `quiet`, not before the start-up's election traffic has all arrived too: a ring
    algorithm's announcement may still be on its way back to its leader when all follow,
    and the theory counts it."""

    def __init__(self, engine: Engine, cancel: trio.CancelScope, quiet: bool):
        self.engine = engine
        self.cancel = cancel
        self.quiet = quiet
        self.fault_at: float | None = None
        self.detect: float | None = None
        self.agree: float | None = None
        self.sent = {True: Counter(), False: Counter()}  # detector traffic? -> type -> count
        self.start_up: Counter = Counter()  # election traffic before the crash, by type
        self.in_flight: set[int] = set()  # ids of the election messages sent before the crash and not yet arrived
        self.agreed: int | None = None  # whom all follow now (None: they do not agree)
        self.violations = 0
        self.sent_in_run = 0  # election messages sent from the start
        self.n2 = len(engine.ids) ** 2
        self.storm: dict[str, float | int] | None = None

    def __call__(self, events: list[Event]) -> None:
        for e in events:
            kind = type(e)
            if kind is SendEvent:
                detector = e.msg.role is MessageRole.DETECTOR
                self.sent_in_run += not detector
                if self.fault_at is not None:
                    self.sent[detector][e.msg.type] += 1
                elif not detector:
                    self.start_up[e.msg.type] += 1
                    if self.quiet:
                        self.in_flight.add(e.id)
            elif kind is DeliverEvent or kind is DropEvent:
                self.in_flight.discard(e.id)
            elif kind is ElectionStartEvent:
                if self.fault_at is not None and self.detect is None:
                    self.detect = _since(self.fault_at, e.t)
            elif kind is ViolationEvent:
                self.violations += e.phase == "begin"
            elif kind is AgreementEvent:
                self.agreed = e.leader
                if e.leader is not None and self.fault_at is not None:
                    self.agree = _since(self.fault_at, e.t)
                    self.cancel.cancel()
                    return
        flying = in_flight(self.engine.links)
        storm = self.sent_in_run > self.n2 * max(STORM_ELECTIONS, self.engine.now)
        if self.storm is None and (storm or flying > MAX_IN_FLIGHT):
            self.storm = {"t": round(self.engine.now, 3), "sent": self.sent_in_run, "in_flight": flying}
            self.cancel.cancel()
            return
        if events and self.fault_at is None and self.agreed is not None and not self.in_flight:
            # Crash the leader at the next microsecond: the instant is over (one instant
            # a batch: no lookahead), and nothing else can be due before then.
            self.fault_at = events[-1].t + 1e-6
            self.engine.schedule([Scheduled(self.fault_at, Crash(self.agreed), "compare")])


def _since(fault_at: float, t: float) -> float:
    """Seconds from the crash, to the millisecond: the crash comes a microsecond after
    agreement, an artefact of scheduling it, not a result."""
    return round(t - fault_at, 3)


def ring_orders(seed: int) -> list[str]:
    """The orders an algorithm on a ring runs on: sorted first (its row in the first table)."""
    return ["sorted", "reversed", *(f"shuffled {seed + k}" for k in range(SHUFFLES))]


def run_one(algorithm: str, nodes: int, config: ClusterConfig, seed: int, ring: str = "sorted") -> Result:
    """The scenario for one algorithm and size, in virtual time; `ring`, one of
    ring_orders, for an algorithm on a ring."""
    cls = ALGORITHMS[algorithm]
    if cls.on_a_ring:
        name, _, drawn_from = ring.partition(" ")
        config = replace(config, ring=ring_order(name, tuple(range(1, nodes + 1)), int(drawn_from or seed)))
    # One instant per window (no lookahead): the crash is scheduled from inside a window.
    engine = Engine(cls, range(1, nodes + 1), config, seed, lookahead=False)
    limit = 2 * engine.settle_time()  # the start-up, then the election after the crash

    async def main() -> _Watcher:
        with trio.CancelScope() as scope:
            watcher = _Watcher(engine, scope, quiet=cls.on_a_ring)
            engine.subscribe(watcher)
            await Cluster(engine).run(limit)
        return watcher

    with fewer_gc_passes():
        w = run_trio(main, clock=MockClock(autojump_threshold=0))
    return Result(algorithm, nodes, w.fault_at, w.detect, w.agree, dict(w.sent[False]), dict(w.sent[True]),
                  ring if cls.on_a_ring else None, dict(w.start_up), w.violations, storm=w.storm)


def compare(config: ClusterConfig, seed: int, sizes: tuple[int, ...] = SIZES,
            algorithms: tuple[str, ...] | None = None) -> list[Result]:
    """Each algorithm at each size: one run, or one on each ring order for an algorithm on a
    ring; lossless and FIFO, and with the faults `config` has, if any, again (on the sorted
    ring only: the row the first table shows)."""
    lossless = replace(config, faults=NO_FAULTS)
    results = []
    for n in sizes:
        for name in algorithms or ALGORITHMS:
            for ring in ring_orders(seed) if ALGORITHMS[name].on_a_ring else ["sorted"]:
                result = run_one(name, n, lossless, seed, ring)
                if config.faults.any and ring == "sorted":
                    result = replace(result, with_faults=run_one(name, n, config, seed, ring))
                results.append(result)
    return results


def _by_type(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def table(results: list[Result], config: ClusterConfig) -> str:
    """A Markdown table, readable in a terminal and pasteable into the README (the ring
    algorithms on the sorted ring); and, if they ran, the ring orders' table."""
    rings = [r for r in results if r.ring is not None]
    main = [r for r in results if r.ring in (None, "sorted")]
    return _main_table(main, config) + ("\n\n" + ring_table(rings) if rings else "")


def _main_table(results: list[Result], config: ClusterConfig) -> str:
    faulty = config.faults.any
    said = f" The last columns: the same run {faults_text(config)} (from the start: every violation the monitor saw)." \
        if faulty else ""
    rows = [
        (f"Leader crashes once all agree; T = {config.timeout:g} s, P = {config.probe_interval:g} s, "
         f"delay {config.delay_min:g}..{config.delay_max:g} s. From the crash: time to detect it, time to "
         f"agree again, and the messages sent until then (election, and failure detection apart).{said}"),
        "",
        "| algorithm | N | detect | agree | election msgs | by type | detector msgs | by type |"
        + (" with faults: agree | msgs | violations |" if faulty else ""),
        "|---|---:|---:|---:|---:|---|---:|---|" + ("---|---:|---:|" if faulty else ""),
    ]
    for r in results:
        if r.storm is not None:
            detect = "–" if r.detect is None else f"{r.detect:.1f} s"
            row = f"| {r.algorithm} | {r.nodes} | {detect} | {storm_text(r.storm)} | – | – | – | – |"
        elif r.fault_at is None:
            row = f"| {r.algorithm} | {r.nodes} | start-up never agreed | – | – | – | – | – |"
        else:
            detect = "–" if r.detect is None else f"{r.detect:.1f} s"
            agree = "not within the limit" if r.agree is None else f"{r.agree:.1f} s"
            row = (f"| {r.algorithm} | {r.nodes} | {detect} | {agree} | {sum(r.messages.values()):,} | "
                   f"{_by_type(r.messages)} | {sum(r.detector_messages.values()):,} | {_by_type(r.detector_messages)} |")
        if faulty:
            f = r.with_faults
            if f.storm is not None:
                row += f" {storm_text(f.storm)} | – | {f.violations:,} |"
            elif f.fault_at is None:
                row += f" start-up never agreed | – | {f.violations:,} |"
            else:
                agree = "never again" if f.agree is None else f"{f.agree:.1f} s"
                row += f" {agree} | {sum(f.messages.values()):,} | {f.violations:,} |"
        rows.append(row)
    return "\n".join(rows)


def storm_text(storm: dict[str, float | int]) -> str:
    """"storm: stopped at t = 14.4 s, 410,059 election msgs": where a storm's bound stopped a run."""
    return f"storm: stopped at t = {storm['t']:.1f} s, {storm['sent']:,} election msgs"


def faults_text(config: ClusterConfig) -> str:
    """"with loss 0.1, duplicates 0.05, reordering links, drift 0.2": the faults given."""
    f = config.faults
    said = [f"loss {f.loss:g}" if f.loss else "", f"duplicates {f.duplicate:g}" if f.duplicate else "",
            "reordering links" if f.reorder else "", f"drift {f.drift:g}" if f.drift else ""]
    return "with " + ", ".join(s for s in said if s)


def json_lines(results: list[Result]) -> str:
    """One JSON object per row."""
    return "\n".join(json.dumps(r.row()) for r in results)


def ring_table(results: list[Result]) -> str:
    """The algorithms on a ring, order by order: what the theory counts of the start-up
    election (every node starts at once) and of the one after the leader's crash."""
    rows = [
        (f"The algorithms on a ring, by the order of the ids round it: sorted (each node's successor is the next "
         f"higher id), reversed, and {SHUFFLES} seeded shuffles (their mean, and the worst of each column). Messages "
         f"as the theory counts them (acks and Backs are transport, left out): in the start-up election, every node "
         f"starting at once, beside the theory's fewest..most over every order (ring: 3N-1 on the sorted ring, "
         f"N(N+1)/2 + N on the reversed; hs: at most 8N(1 + ceil(log2 N)) + N-1); then after the leader's crash."),
        "",
        "| algorithm | N | ring | start-up msgs | by type | theory | after the crash: agree | msgs |",
        "|---|---:|---|---:|---|---:|---:|---:|",
    ]
    groups: dict[tuple[str, int], list[Result]] = {}
    for r in results:
        groups.setdefault((r.algorithm, r.nodes), []).append(r)
    for (algorithm, n), group in groups.items():
        cls = ALGORITHMS[algorithm]
        counted = tuple(m.type for m in cls.counted)
        fewest, most = cls.all_start_messages(n)
        theory = f"≤ {most:,}" if fewest is None else f"{fewest:,}..{most:,}"
        figures = [_ring_figures(r, counted) for r in group]
        shuffled = [f for r, f in zip(group, figures) if r.ring.startswith("shuffled")]
        for r, f in zip(group, figures):
            if not r.ring.startswith("shuffled"):
                rows.append(_ring_row(algorithm, n, r.ring, f, theory, "{:,.0f}"))
        if shuffled:
            mean = {k: statistics.fmean(f[k] for f in shuffled) for k in shuffled[0] if k != "by_type"}
            mean["by_type"] = {t: statistics.fmean(f["by_type"].get(t, 0) for f in shuffled) for t in counted}
            rows.append(_ring_row(algorithm, n, f"shuffled ×{len(shuffled)}: mean", mean, theory, "{:,.1f}"))
            worst = {k: max(f[k] for f in shuffled) for k in mean if k != "by_type"}
            worst["by_type"] = max(shuffled, key=lambda f: f["start_up"])["by_type"]
            rows.append(_ring_row(algorithm, n, f"shuffled ×{len(shuffled)}: worst", worst, theory, "{:,.0f}"))
    return "\n".join(rows)


def _ring_figures(r: Result, counted: tuple[str, ...]) -> dict:
    """One run's figures for the ring table (inf where the run never agreed)."""
    never = r.fault_at is None or r.agree is None
    return {"start_up": sum(r.start_up.get(t, 0) for t in counted),
            "by_type": {t: r.start_up.get(t, 0) for t in counted},
            "agree": float("inf") if never else r.agree,
            "after": float("inf") if never else sum(r.messages.get(t, 0) for t in counted)}


def _ring_row(algorithm: str, n: int, ring: str, f: dict, theory: str, number: str) -> str:
    """One row; `number` formats a count (a mean has a decimal)."""
    def count(value: float) -> str:
        return "never agreed" if value == float("inf") else number.format(value)

    agree = "never agreed" if f["agree"] == float("inf") else f"{f['agree']:.1f} s"
    by_type = ", ".join(f"{t} {number.format(c)}" for t, c in f["by_type"].items())
    return f"| {algorithm} | {n} | {ring} | {count(f['start_up'])} | {by_type} | {theory} | {agree} | {count(f['after'])} |"
