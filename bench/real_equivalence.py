"""A real run, merged before and after a change to how real nodes trace (the node's
runner, the trace's format, the merge), to show that the merged events are the same.

    python bench/real_equivalence.py record OUT --root BEFORE   # a run with the code of BEFORE
    python bench/real_equivalence.py check OUT                  # this checkout's, on the same inputs

`record` runs five processes of Garcia-Molina's algorithm on the loopback with the
checkout at BEFORE (crash 5 at 1.5 s, recover it at 3 s, elect 1 at 4 s, T = 0.7 at
4.5 s, partition 1,2 at 5 s, heal at 6 s, until 7.5 s) and keeps what it made in OUT:
the nodes' traces (old format), the cluster's log and the merged transcript. `check`
runs each node of this checkout on the very inputs the recorded nodes took, at their
wall times (each delivery, timer firing, election and stop, read from the recorded
traces; the runner's draws are seeded alike): a RealNode's step with its sockets and
trio's timers left out. Their traces merged with the cluster's log must give the
recorded transcript's events, line for line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RECORD = '''
import json, sys, time
from playground.core.commands import Crash, Elect, Heal, Partition, Recover, SetTimeout
from playground.core.config import ClusterConfig
from playground.real.cluster import RealCluster
from playground.record.codec import LineEncoder
out = sys.argv[1]
config = ClusterConfig(timeout=0.5, probe_interval=0.5, delay_min=0, delay_max=0)
schedule = [(1.5, Crash(5)), (3.0, Recover(5)), (4.0, Elect(1)), (4.5, SetTimeout(0.7)), (5.0, Partition((1, 2))),
            (6.0, Heal())]
with RealCluster((1, 2, 3, 4, 5), "garcia-molina", config, out) as cluster:
    start = cluster.log[0][0]
    for at, command in schedule:
        time.sleep(max(0.0, start + at - time.time()))
        assert cluster.submit(command) is None
    time.sleep(max(0.0, start + 7.5 - time.time()))
events = cluster.events(final=True)
encode = LineEncoder("garcia-molina")
with open(out + "/merged.jsonl", "w") as f:
    f.writelines(encode(e) for e in events)
with open(out + "/log.json", "w") as f:
    json.dump(cluster.log, f)
print(len(events), "events")
'''


def record(out: Path, root: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", RECORD, str(out)], cwd=root, check=True, env={**os.environ, "PYTHONPATH": str(root)})


def check(out: Path) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from playground.core.config import ClusterConfig
    from playground.core.events import DropEvent
    from playground.core.runner import DROPPED_RECEIVER_DOWN
    from playground.core.commands import Elect, Leave
    from playground.core.work import Deliver, Fire
    from playground.real import node as node_module
    from playground.real.merge import merge
    from playground.real.traces import TraceWriter, read_trace
    from playground.real.wire import Address
    from playground.record.codec import LineEncoder, converter
    from protocol import Message

    algorithm, ids = "garcia-molina", (1, 2, 3, 4, 5)
    config = ClusterConfig(timeout=0.5, probe_interval=0.5, delay_min=0, delay_max=0)
    old = {node: [json.loads(line) for line in (out / str(node) / "trace.jsonl").read_text().splitlines()] for node in ids}
    sends = {r["id"]: r for lines in old.values() for r in lines if r["kind"] == "send"}
    structure = converter(algorithm).structure
    steps = []  # (t, node, the old lines of one step or one line on its own)
    for node, lines in old.items():
        group: list[dict] = []
        for r in lines:
            if group and (r["t"] != group[0]["t"] or r["kind"] in ("boot", "drop", "stop") or group[0]["kind"] == "drop"):
                steps.append((group[0]["t"], node, group))
                group = []
            group.append(r)
        if group:
            steps.append((group[0]["t"], node, group))
    steps.sort(key=lambda s: (s[0], s[1]))

    class Nursery:
        def start_soon(self, *_):
            pass

    node_module.Link.put = lambda *_: None  # (no sockets: what a link would do is in the recorded traces)
    folder = Path(tempfile.mkdtemp(prefix="bully-equivalence-"))
    nodes: dict[int, node_module.RealNode] = {}
    ids_now: dict[str, int] = {}  # a recorded message's id -> its id in this replay
    new_sends: list[bytes] = []  # the send lines of the step just replayed
    for t, node, group in steps:
        first = group[0]
        if first["kind"] == "boot":
            options = node_module.NodeOptions(node, Address("127.0.0.1", 1), {i: Address("127.0.0.1", 1) for i in ids
                                                                               if i != node}, algorithm,
                                              str(folder / str(node)), config.with_timeout(first["timeout"]))
            os.makedirs(options.state_dir, exist_ok=True)
            real = nodes[node] = node_module.RealNode(options, Nursery())
            real.trace = TraceWriter(str(folder / str(node) / "trace.jsonl"), algorithm)
            real.trace.watchers.append(lambda line, sent=new_sends: sent.append(line) if b'"kind":"send"' in line else None)
            real.first_step(t)
        else:
            real = nodes[node]
            real.instant = t
            if first["kind"] == "drop":
                real.trace.event(DropEvent(0, t, ids_now[first["id"]], node, first["dst"], DROPPED_RECEIVER_DOWN), real.lamport)
            elif first["kind"] == "stop":
                real._take(node_module.Stop())
            elif first["kind"] == "timeout":
                real._command({"command": "timeout", "value": first["value"]})
            elif first["kind"] == "deliver":
                sent = sends[first["id"]]
                real._take(Deliver(first["src"], ids_now[first["id"]], structure(sent["msg"], Message), sent["lamport"]))
            elif first["kind"] == "timer":
                real._take(Fire(first["name"], real.runner.timers[first["name"]][1]))
            elif any(r["kind"] == "leave" for r in group):
                real._take(Leave(real.options.node))
            else:  # a step with no line of its own: an election asked for (SIGUSR1)
                real._take(Elect(real.options.node))
            real.instant = None
        old_sends = [r for r in group if r["kind"] == "send"]
        for r, line in zip(old_sends, new_sends, strict=True):
            ids_now[r["id"]] = json.loads(line)["id"]
        new_sends.clear()
    for real in nodes.values():
        real.trace.close()
    log = [(t, name, tuple(args)) for t, name, args in json.loads((out / "log.json").read_text())]
    events = merge(algorithm, ids, config, log, {node: read_trace(str(folder / str(node) / "trace.jsonl")) for node in ids})
    encode = LineEncoder(algorithm)
    now = [encode(e) for e in events]
    before = (out / "merged.jsonl").read_text().splitlines(keepends=True)
    different = next((k for k, (a, b) in enumerate(zip(before, now)) if a != b), None)
    if different is None and len(before) == len(now):
        print(f"the same {len(now)} events, line for line")
        return 0
    print(f"{len(before)} events recorded, {len(now)} now; the first difference at line {different}:")
    if different is not None:
        print(" before:", before[different], "  now:   ", now[different])
    return 1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["record", "check"])
    p.add_argument("out")
    p.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    args = p.parse_args()
    out = Path(args.out).resolve()
    if args.what == "record":
        record(out, Path(args.root).resolve())
    else:
        sys.exit(check(out))


if __name__ == "__main__":
    main()
