"""A real node's memory: each process of an idle cluster (playground/real/), beside what
Python and trio alone take.

    python bench/node_memory.py [--nodes 3 16 64] [--algorithm garcia-molina] [--idle 5] [--within 900]

For each N: a cluster starts (RealCluster, the processes `bully-tui --real` starts), all
agree (waited for up to `--within` seconds: 64 processes on a busy machine of two cores
can take minutes), and after `--idle` seconds more each node's resident memory is read from
/proc/PID/smaps_rollup: RSS (what `ps` and the issue count) and PSS (its share of the pages
it shares with the other nodes: libpython, libc and the like, counted once across
the cluster), the median node's, and the largest node's RSS. For one node of the first
N: what its RSS is made of, mapping by mapping.
Beside them, what a node is made of: a bare `python -c pass`, `python -c "import trio"`,
and trio as a node imports it, without the TLS, hashes and compression it never uses
(real/deferred.py). T = P = 0.5 s, no injected delay. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.real.cluster import RealCluster  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real import CONFIG, agreed, wait  # noqa: E402  (bench/real.py: its cluster's settings, and its wait)

GROUPS = ("anonymous (Python's objects, the stack)", "heap (malloc)", "libpython", "libcrypto, libssl and their modules",
          "other libraries and files")


def group(name: str) -> str:
    """Which of GROUPS a mapping (its file's name, [heap], [stack] and the like, or "":
    anonymous) is counted in."""
    if name == "[heap]":
        return GROUPS[1]
    if name == "" or name.startswith("["):  # ([stack], [vdso], [vvar]: the kernel's and the thread's, no file)
        return GROUPS[0]
    if name.startswith("libpython"):
        return GROUPS[2]
    if name.startswith(("libcrypto", "libssl", "_ssl.", "_hashlib.")):
        return GROUPS[3]
    return GROUPS[4]


def rollup(pid: int) -> dict[str, int]:
    """smaps_rollup's fields, in kB."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return {k.rstrip(":"): int(v) for k, v, *_ in (line.split() for line in f) if k.endswith(":") and v.isdigit()}


def mappings(pid: int) -> Counter:
    """RSS by what is mapped (kB): the file's name, [heap], or "" (anonymous)."""
    rss, name = Counter(), ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split(maxsplit=5)  # (a path may hold spaces, and end " (deleted)")
            if not parts[0].endswith(":"):  # a mapping's first line: address, perms, offset, dev, inode[, path]
                name = parts[5].rstrip().removesuffix(" (deleted)").rsplit("/", 1)[-1] if len(parts) > 5 else ""
            elif parts[0] == "Rss:":
                rss[name] += int(parts[1])
    return rss


def breakdown(pid: int) -> list[tuple[str, int]]:
    rss = Counter()
    for name, kb in mappings(pid).items():
        rss[group(name)] += kb
    return [(label, rss[label]) for label in GROUPS]


def floor(code: str) -> int:
    """A fresh Python's RSS (kB) once `code` has run."""
    probe = f"{code}\nprint(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmRSS')))"
    return int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)


def one(n: int, algorithm: str, idle: float, within: float) -> tuple[list[dict], list[tuple[str, int]]]:
    ids = tuple(range(1, n + 1))
    with tempfile.TemporaryDirectory() as folder, RealCluster(ids, algorithm, CONFIG, folder) as cluster:
        wait(cluster, lambda ev: agreed(ev, n), within, f"{n} nodes agreeing on node {n}")
        time.sleep(idle)
        pids = [p.pid for p in cluster.processes.values()]
        return [rollup(pid) for pid in pids], breakdown(pids[0])


def mb(kb: float) -> str:
    return f"{kb / 1024:.1f} MB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, nargs="+", default=[3, 16, 64])
    p.add_argument("--algorithm", default="garcia-molina")
    p.add_argument("--idle", type=float, default=5.0, help="seconds to wait once all agree")
    p.add_argument("--within", type=float, default=900.0, help="seconds the nodes have to agree before the bench gives up")
    args = p.parse_args()
    as_a_node = "from playground.real.deferred import defer; defer(); import trio"
    print(f"python alone: {mb(floor('pass'))}; python with trio imported: {mb(floor('import trio'))}, "
          f"as a node imports it: {mb(floor(as_a_node))}")
    print(f"{args.algorithm}, T = P = 0.5 s, idle {args.idle:g} s after agreement; each node's RSS and PSS (median)")
    print("| N | RSS a node | RSS, the largest | PSS a node | RSS, all | PSS, all |")
    print("|---:|---:|---:|---:|---:|---:|")
    shown = None
    for n in args.nodes:
        nodes, parts = one(n, args.algorithm, args.idle, args.within)
        shown = shown or parts
        rss, pss = [r["Rss"] for r in nodes], [r["Pss"] for r in nodes]
        cells = (statistics.median(rss), max(rss), statistics.median(pss), sum(rss), sum(pss))
        print(f"| {n} | {' | '.join(map(mb, cells))} |", flush=True)
    print("\none node's RSS:")
    for label, kb in shown:
        print(f"  {label:36} {mb(kb):>9}")


if __name__ == "__main__":
    main()
