"""Transcripts of 20 recipes, to show that a change leaves runs byte for byte as they were.

    python bench/transcripts.py OUT [--root CHECKOUT]

writes OUT/t1.jsonl .. t20.jsonl with the `bully-tui` of CHECKOUT (default: this
one): every algorithm with seq and uuid ids under crashes, an election, T and delay
changes, held links and a partition; joins and leaves; a short T; 40 nodes; two
shipped scenarios; classic's worst case; a long Stoller run. To check a refactor:

    git worktree add /tmp/before <commit before>
    python bench/transcripts.py /tmp/t-before --root /tmp/before
    python bench/transcripts.py /tmp/t-after
    diff -r /tmp/t-before /tmp/t-after   # nothing: the same transcripts
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

FAULTS = ["--nodes", "6", "--until", "120", "--at", "20 crash 6", "--at", "21 elect 1", "--at", "30 recover 6",
          "--at", "31 timeout 3", "--at", "35 delay 0.2:0.8", "--at", "40 hold 1 2", "--at", "50 release 1 2",
          "--at", "55 partition 1,2", "--at", "70 heal", "--at", "80 crash 3"]
MEMBERS = ["--nodes", "5", "--until", "100", "--at", "10 join", "--at", "30 leave 2", "--at", "40 join",
           "--at", "60 crash 6"]
RECIPES = [
    *(["--algorithm", algorithm, "--ids", ids, *FAULTS]
      for algorithm in ("classic", "garcia-molina", "stoller", "ring", "epoch-bully") for ids in ("seq", "uuid")),
    *(["--algorithm", algorithm, *MEMBERS] for algorithm in ("classic", "garcia-molina", "ring", "epoch-bully")),
    ["--nodes", "5", "--timeout", "1", "--delay", "1.5", "--until", "60"],
    ["--nodes", "40", "--until", "30"],
    ["--scenario", "scenarios/split-brain-short-timeout.scenario"],
    ["--scenario", "scenarios/partition-garcia-molina.scenario"],
    ["--nodes", "10", "--delay", "1", "--timeout", "4", "--probe-interval", "0", "--at", "20 crash 10",
     "--at", "20 elect 1", "--until", "60"],
    ["--algorithm", "stoller", "--nodes", "12", "--until", "300", "--seed", "7"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for n, recipe in enumerate(RECIPES, 1):
        target = out / f"t{n}.jsonl"
        subprocess.run([sys.executable, "-m", "playground", "--headless", *recipe, "--transcript", str(target),
                        "--overwrite"], cwd=args.root, check=True, stdout=subprocess.DEVNULL)
    print(f"{len(RECIPES)} transcripts in {out}")


if __name__ == "__main__":
    main()
