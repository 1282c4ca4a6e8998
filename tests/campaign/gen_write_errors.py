"""6, 7. An unwritable standard output (/dev/full), a closed one (`>&-`), and file-size
limits (RLIMIT_FSIZE), which fail writes as a full disk does."""

from __future__ import annotations

from .cases import ACCEPT, EXPORT_EXTENSIONS, REFUSE, WRITE_ERROR, Base, Builder


def gen_write_errors(b: Builder) -> None:
    r = b.rng
    good = {"run.jsonl": Base("classic")}
    full = {"stdout_full": True}
    b.add("dev-full:headless-summary", "headless", ["--headless", "--until", "5"], WRITE_ERROR, **full)
    b.add("dev-full:headless+transcript", "headless", ["--headless", "--until", "5", "--transcript", "t.jsonl"],
          WRITE_ERROR, outputs={"t.jsonl": "transcript"}, **full)
    b.add("dev-full:compare", "compare", ["--headless", "--compare", "--nodes", "4", "--algorithm", "classic"],
          WRITE_ERROR, **full)
    b.add("dev-full:export-stdout", "export", ["export", "run.jsonl", "--format", r.choice(list(EXPORT_EXTENSIONS))],
          WRITE_ERROR, files=dict(good), **full)
    b.add("dev-full:verify", "verify", ["verify", "run.jsonl"], WRITE_ERROR, files=dict(good), **full)
    b.add("dev-full:refusal-still-one-line", "headless", ["--headless", "--nodes", "x"], REFUSE, names="--nodes",
          **full)
    b.add("dev-full:export-to-file", "export", ["export", "run.jsonl", "--format", "svg", "-o", "out.svg"], ACCEPT,
          files=dict(good), outputs={"out.svg": "svg"}, **full)
    # file limits: like a full disk
    big_run = ["--headless", "--algorithm", "stoller", "--nodes", "10", "--until", "300", "--transcript", "t.jsonl"]
    for n in range(2):
        limit = r.randint(4096, 300_000)
        b.add(f"fsize:headless-transcript-{limit}", "headless", big_run, WRITE_ERROR, fsize=limit,
              outputs={"t.jsonl": "transcript"})
    for n in range(2):  # (the svg and shiviz exports of the classic transcript are over 40 kB)
        limit = r.randint(4096, 30_000)
        fmt = r.choice(["svg", "shiviz"])
        out = f"out.{EXPORT_EXTENSIONS[fmt]}"
        b.add(f"fsize:export-{fmt}-{limit}", "export", ["export", "run.jsonl", "--format", fmt, "-o", out], WRITE_ERROR,
              fsize=limit, files=dict(good), outputs={out: "svg" if fmt == "svg" else "text"})
    limit = r.randint(4096, 30_000)
    b.add(f"fsize:export-overwrite-keeps-old-{limit}", "export",
          ["export", "run.jsonl", "--format", "svg", "-o", "out.svg", "--overwrite"], WRITE_ERROR, fsize=limit,
          files={**good, "out.svg": b"<svg>the old drawing</svg>\n"}, outputs={"out.svg": "svg"})
    b.add("fsize:headless-no-transcript", "headless", ["--headless", "--until", "5"], ACCEPT, fsize=4096)
    b.add("fsize:verify", "verify", ["verify", "run.jsonl"], ACCEPT, fsize=4096, files=dict(good))
    # a standard output closed before the start (`>&-`): one line, as for /dev/full (hunt: gen_hunt)
    closed = {"stdout_closed": True, "names": "standard output"}
    b.add("closed-stdout:verify", "verify", ["verify", "run.jsonl"], WRITE_ERROR, files=dict(good), **closed)
    b.add("closed-stdout:headless-summary", "headless", ["--headless", "--until", "5"], WRITE_ERROR, **closed)
    b.add("closed-stdout:headless+transcript", "headless", ["--headless", "--until", "5", "--transcript", "t.jsonl"],
          WRITE_ERROR, outputs={"t.jsonl": "transcript"}, **closed)
    b.add("closed-stdout:export", "export", ["export", "run.jsonl", "--format", r.choice(list(EXPORT_EXTENSIONS))],
          WRITE_ERROR, files=dict(good), **closed)
    b.add("closed-stdout:refusal-still-one-line", "headless", ["--headless", "--nodes", "x"], REFUSE, names="--nodes",
          stdout_closed=True)
