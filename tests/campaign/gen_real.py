"""Real nodes: `node` (its options, its state folder), `merge` (traces it cannot read or
place), `--real` (headless, signalled) and the live views (`--real`, `attach`) signalled
in a terminal of their own."""

from __future__ import annotations

import json
import signal

from .. import real_traces
from .cases import ACCEPT, ARGPARSE_MISREAD, BIG_LIMIT, DIRECTORY, FIFO, REFUSE, SIGNAL, TERMINAL, Builder, SignalPlan

NODE_VALUES = {  # option -> values that must be refused (none of them may start a node: it would run for ever)
    "--id": ["", "x", "-3", "1.5", "99999999999999999999999", "١"],
    "--listen": ["", "h", "h:0", "h:70000", ":80", "h:x", "h:-1"],
    "--peers": ["", "1@127.0.0.1:7001", "2@h:1,2@h:2", "2@h", "x@h:1", "2", "@", "2@h:0"],
    "--timeout": ["", "0", "-1", "nan", "inf", "1e999", "abc"],
    "--probe-interval": ["-1", "nan", "x"],
    "--coordinator-timeout": ["0", "-5", "y"],
    "--delay": ["-1", "inf", "1e7", "d"],
    "--seed": ["-1", "x", "1e3"],
    "--algorithm": ["", "paxos", "classic+central"],
    "--start-at": ["x", "nan", "-inf"],
    "--parent": ["0", "x", "-2"],
    "--held": ["", "3", "2,", "x", "2,,2", "-1"],
    "--mutex": ["", "paxos", "central+lamport"],
    "--cs-think": ["1", "x"],  # (without --mutex: it does not apply)
    "--cs-hold": ["1", "-1"],
}


def gen_real(b: Builder) -> None:
    r = b.rng
    base = {"--id": "1", "--listen": "127.0.0.1:1", "--peers": "2@127.0.0.1:9", "--state-dir": "d"}
    for flag, values in NODE_VALUES.items():
        for value in r.sample(values, min(3, len(values))):
            argv = ["node", *(x for k, v in base.items() if k != flag for x in (k, v)), *b.spelled(flag, value)]
            names = flag if flag not in ("--peers",) else ("--peers", "peer")
            b.add(f"node{flag}:{value}", "node", argv, REFUSE, names=names,
                  forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    for missing in r.sample([k for k in base if k != "--peers"], 2):  # (no --peers: a cluster of one, which runs)
        b.add(f"node-missing:{missing}", "node", ["node", *(x for k, v in base.items() if k != missing for x in (k, v))],
              REFUSE, names=missing)
    b.add("node-state-dir:a-file", "node", ["node", *(x for k, v in {**base, "--state-dir": "f"}.items() for x in (k, v))],
          REFUSE, names="f", files={"f": b"not a folder\n"})
    damaged = {"d/state.json": b'{"algorithm": "classic", "storage": {"incar'}
    b.add("node-state:damaged", "node", ["node", *(x for k, v in base.items() for x in (k, v))], REFUSE,
          names="state.json", files={"d": DIRECTORY, **damaged})
    foreign = {"d/state.json": json.dumps({"algorithm": "raft", "storage": {}}).encode()}
    b.add("node-state:foreign", "node", ["node", *(x for k, v in base.items() for x in (k, v))], REFUSE,
          names="state.json", files={"d": DIRECTORY, **foreign})
    for port, (label, files, names) in enumerate([  # what is in the way in a state folder: one line, never a hang or a traceback
            ("state-nested", {"d/state.json": b"[" * 100_000 + b"]" * 100_000}, "state.json"),
            ("state-fifo", {"d/state.json": FIFO}, "state.json"), ("state-a-folder", {"d/state.json": DIRECTORY},
                                                                    "state.json"),
            ("state-huge", {"d/state.json": b" " * (2 << 20)}, "state.json"),
            ("control-a-folder", {"d/control.sock": DIRECTORY}, "control.sock"),
            ("control-a-file", {"d/control.sock": b"mine\n"}, "control.sock"),
            ("trace-fifo", {"d/trace.jsonl": FIFO}, "trace.jsonl")], start=11):
        # (each on a port of its own: some are refused once the node listens, and two cases run at a time)
        node = ["node", *(x for k, v in {**base, "--listen": f"127.0.0.1:{port}"}.items() for x in (k, v))]
        b.add(f"node-{label}", "node", node, REFUSE, names=names, files={"d": DIRECTORY, **files})
    for flag, value in [("--seed", ""), ("--state-dir", ""), ("--state-dir", "  ")]:  # (empty: refused as anywhere)
        argv = ["node", *(x for k, v in base.items() if k != flag for x in (k, v)), flag, value]
        b.add(f"node-empty{flag}:{value!r}", "node", argv, REFUSE, names=flag)
    # merge
    good, other = real_traces.first_lines(1), real_traces.first_lines(2)  # (tests/real_traces.py: the node's format)
    b.add("merge-valid", "merge", ["merge", "a", "b", "-o", "m.jsonl"], ACCEPT, outputs={"m.jsonl": "transcript"},
          files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other})
    b.add("merge-missing-node", "merge", ["merge", "a", "-o", "m.jsonl"], REFUSE, names="missing",
          files={"a": DIRECTORY, "a/trace.jsonl": good})
    b.add("merge-no-trace", "merge", ["merge", "a", "-o", "m.jsonl"], REFUSE, names="a", files={"a": DIRECTORY})
    b.add("merge-no-output", "merge", ["merge", "a"], REFUSE, names=("-o", "--output"),
          files={"a": DIRECTORY, "a/trace.jsonl": good})
    b.add("merge-output-exists", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE, names="m.jsonl",
          files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other, "m.jsonl": b"mine\n"})
    hostile = real_traces.HOSTILE
    for n, line in enumerate(r.sample(hostile, 4)):
        b.add(f"merge-hostile-line:{n}", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE, names="b",
              files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other + line + b"\n" + other})
    strangers = real_traces.STRANGERS
    for label, line in strangers:  # a line it cannot place: one line naming the file and the line
        b.add(f"merge-{label}", "merge", ["merge", "a", "b", "-o", "m.jsonl"], REFUSE,
              names=f"b/trace.jsonl line {real_traces.FIRST_LINES + 1}",
              files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY, "b/trace.jsonl": other + line + b"\n"})
    b.add("merge-cut-short-last-line", "merge", ["merge", "a", "b", "-o", "m.jsonl"], ACCEPT,
          outputs={"m.jsonl": "transcript"}, files={"a": DIRECTORY, "a/trace.jsonl": good, "b": DIRECTORY,
                                                   "b/trace.jsonl": other + real_traces.CUT_SHORT})
    # --real
    quick = ["--real", "--headless", "--nodes", "2", "--timeout", "0.5", "--probe-interval", "0.5", "--until", "1"]
    b.add("real-valid", "real", [*quick, "--transcript", "r.jsonl"], ACCEPT, outputs={"r.jsonl": "transcript"})
    b.add("real-valid:mutex", "real", [*quick, "--mutex", "central", "--cs-think", "0.1:0.3", "--transcript", "r.jsonl"],
          ACCEPT, outputs={"r.jsonl": "transcript"})
    for extra, names in [(["--compare"], "--compare"), (["--ids", "uuid"], "--ids"), (["--speed", "2"], "--speed"),
                         (["--at", "0.5 hold 1 2"], "hold"), (["--at", "0.5 delay 1"], "delay"),
                         (["--nodes", "65"], "65"), (["--at", "0.5 release 1 2"], "release")]:
        b.add(f"real-refused:{' '.join(extra)}", "real", [*quick, *extra], REFUSE, names=names)
    b.add("real-live-without-terminal", "real", ["--real", "--nodes", "2"], REFUSE, names=TERMINAL)
    # signals to a headless real run: its status and line, no folder left in TMPDIR (the guardian's, after a SIGKILL).
    # On 4 nodes: their start still takes a while on 2 cores (0.3-1 s in: the early SIGTERMs land in it), each
    # node a process (0.35 s of CPU to start, and its share of the run after).
    for signum, low, high in [(signal.SIGTERM, 0.3, 0.6), (signal.SIGTERM, 0.3, 0.6), (signal.SIGTERM, 0.3, 0.6),
                              (signal.SIGINT, 0.3, 2.0), (signal.SIGHUP, 0.3, 2.0), (signal.SIGKILL, 0.3, 2.0),
                              (signal.SIGKILL, 2.0, 3.0)]:
        delay = round(r.uniform(low, high), 3)
        b.add(f"real-signal:{signal.Signals(signum).name}@{delay}s-4", "real",
              ["--real", "--headless", "--nodes", "4", "--until", "60"], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay), limit=BIG_LIMIT)
    # signals to the live views, in a terminal, a seeded moment after the nodes run: the simulation app's ending
    # (with as few nodes as make a cluster, 2: each node is a process, 0.3 s of CPU to start)
    for group, argv, beside in [("real", ["--real", "--nodes", "2", "--timeout", "0.5"], 0), ("attach", ["attach", "{nodes}"], 2)]:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            delay = round(r.uniform(0.0, 1.5), 3)
            b.add(f"{group}-live-signal:{signal.Signals(signum).name}@{delay}s", group, argv, SIGNAL,
                  names="interrupted" if signum == signal.SIGINT else None, signal=SignalPlan(signum, delay),
                  limit=BIG_LIMIT, terminal=True, beside=beside)
    # attach
    for value, names in r.sample([("1@h:1,1@h:2", "twice"), ("", "at least one"), ("1@h", "HOST:PORT"),
                                  ("x@h:1", "whole number"), ("1@h:99999", "port")], 3):
        b.add(f"attach:{value}", "attach", ["attach", value], REFUSE, names=names)
    b.add("attach-without-terminal", "attach", ["attach", "1@127.0.0.1:9"], REFUSE, names=TERMINAL)
