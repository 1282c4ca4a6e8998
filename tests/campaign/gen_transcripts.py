"""4. verify, replay and export of mutated transcripts (one case per mutation and
reader), the setup transcripts themselves, and export's own options."""

from __future__ import annotations

from typing import Any

from .cases import (
    ACCEPT,
    ARGPARSE_MISREAD,
    DIFFERENT,
    DIRECTORY,
    EITHER,
    EXPORT_EXTENSIONS,
    FIFO,
    REFUSE,
    TERMINAL,
    WRITE_ERROR,
    Base,
    Builder,
    Derived,
)
from .transcripts import EVENT_FIELDS, FIXED_BASE, HEADER_FIELDS, HEADER_ONLY, SMALL_BASES, WELL_FORMED

# (mutation, its parameters): each is made into a verify, replay or export case (one or two)
TRANSCRIPT_SPECS: list[tuple[str, tuple]] = [
    ("wrong_type", ("kind", 0, "send")),  # "kind": ["send"]
    ("header_wrong_type", ("algorithm", 0)),  # "algorithm": ["classic"]
    ("wrong_type", ("node", 0)),  # "node": [1]
    ("args_float", ()),  # "args": [4.0]
    ("delete_msg_type", ()),
    ("extra", ("event", "one")), ("extra", ("event", "deep")), ("extra", ("header", "text")), ("extra", ("msg", "one")),
    ("t_huge", ()), ("t_negative", ()), ("seq_skip", ()), ("seq_repeat", ()), ("time_back", ()),
    ("seed_negative", ()), ("nodes_5000", ()), ("nodes_155000", ()), ("config_timeout_huge", ()),
    ("config_delay_inverted", ()), ("version_float", ()), ("version_unknown", ()),
    ("unknown_kind", ()), ("unknown_command", ()), ("args_count", ()), ("violation_property", ()),
    ("violation_phase", ()), ("sle1_short_leaders", ()), ("unknown_role", ()), ("role_contradicts_status", ()), ("stranger_node", ()),
    ("args_stranger", ()), ("parent_string", ()), ("nan_literal", ()), ("infinity_literal", ()),
    ("cut", ()), ("cut", ()), ("empty", ()), ("header_only", ()), ("garbage", ()), ("blank_line", ()),
    ("two_objects", ()), ("long_line", ()), ("deep_nesting", ()),
    ("fires_changed", ()), ("status_changed", ()), ("arrives_changed", ()),
]
REQUIRED = {  # fields every line of the kind must have (deleting one is malformed)
    "send": ("src", "dst", "id", "msg", "arrives"), "deliver": ("id", "src", "dst"),
    "state": ("node", "status", "leader", "role"), "timer_set": ("node", "name", "fires"),
    "command": ("command", "args", "source"), "violation": ("property", "phase", "nodes"), "cs": ("node", "state"),
}


def _transcript_case(b: Builder, op: str, params: tuple, group: str) -> None:
    base = FIXED_BASE.get(op) or b.rng.choices(SMALL_BASES, weights=(4, 2, 2, 2, 2, 2))[0]
    files = {"run.jsonl": Derived(base, op, params, b.seed())}
    label = f"transcript-{op}{'(' + ','.join(map(str, params)) + ')' if params else ''}:{base}"
    line = "run.jsonl" if op == "empty" else "line {line}"
    if group == "verify":
        if op in WELL_FORMED:
            b.add(label, group, ["verify", "run.jsonl"], DIFFERENT, names="line {line}", files=files)
        elif op in HEADER_ONLY:
            b.add(label, group, ["verify", "run.jsonl"], EITHER, files=files)
        else:
            b.add(label, group, ["verify", "run.jsonl"], REFUSE, names=line, files=files)
    elif group == "replay":
        if op in WELL_FORMED:
            b.add(label, group, ["replay", "run.jsonl"], REFUSE, names=TERMINAL, files=files)
        else:  # a bad line past replay's first block may be found after the terminal is missed
            b.add(label, group, ["replay", "run.jsonl"], REFUSE, names=None if op in HEADER_ONLY else line + "?replay",
                  files=files)
    else:
        fmt = b.rng.choice(list(EXPORT_EXTENSIONS))
        argv = ["export", "run.jsonl", "--format", fmt]
        outputs = {}
        if b.rng.random() < 0.5:
            out = f"out.{EXPORT_EXTENSIONS[fmt]}"
            argv += ["-o", out]
            outputs = {out: "svg" if fmt == "svg" else "text"}
        if op in WELL_FORMED:
            b.add(label, group, argv, ACCEPT, files=files, outputs=outputs)
        elif op in HEADER_ONLY:
            b.add(label, group, argv, EITHER, files=files, outputs=outputs)
        else:
            b.add(label, group, argv, REFUSE, names=line, files=files, outputs=outputs)


def gen_transcripts(b: Builder) -> None:
    """4. verify, replay and export of mutated transcripts."""
    r = b.rng
    specs = list(TRANSCRIPT_SPECS)
    for name in r.sample(sorted(EVENT_FIELDS), 4):  # more wrong types: random fields, values drawn when made
        specs.append(("wrong_type", (name,)))
    for name in r.sample(sorted(HEADER_FIELDS), 2):
        specs.append(("header_wrong_type", (name,)))
    for kind in r.sample(sorted(REQUIRED), 2):
        specs.append(("delete", (r.choice(REQUIRED[kind]),)))
    specs.append(("header_delete", (r.choice(sorted(HEADER_FIELDS)),)))
    groups = ["verify", "export", "replay"]
    for op, params in specs:
        if op in WELL_FORMED:  # verify must say different; one other reader must take it
            chosen = ["verify", r.choice(groups[1:])]
        else:
            chosen = r.sample(groups, 2) if r.random() < 0.1 else r.choices(groups, weights=(4, 4, 2))
        for group in chosen:
            _transcript_case(b, op, params, group)
    # the setup transcripts themselves
    for key in SMALL_BASES:
        b.add(f"intact:verify-{key}", "verify", ["verify", "run.jsonl"], ACCEPT, files={"run.jsonl": Base(key)})
    b.add("intact:replay", "replay", ["replay", "run.jsonl"], REFUSE, names=TERMINAL,
          files={"run.jsonl": Base("classic")})
    for fmt in r.sample(list(EXPORT_EXTENSIONS), 2):
        key = r.choice(SMALL_BASES)
        b.add(f"intact:export-{fmt}-{key}", "export", ["export", "run.jsonl", "--format", fmt], ACCEPT,
              files={"run.jsonl": Base(key)})
    # the subcommands' own arguments
    for group in ("verify", "replay"):
        b.add(f"{group}-args:none", group, [group], REFUSE)
        b.add(f"{group}-args:two-files", group, [group, "run.jsonl", "run.jsonl"], REFUSE,
              files={"run.jsonl": Base("classic")})
        b.add(f"{group}-args:unknown-option", group, [group, "-x", "run.jsonl"], REFUSE, names="-x",
              files={"run.jsonl": Base("classic")})
        unreadable = [("missing", "nowhere.jsonl", {}), ("directory", "dir.jsonl", {"dir.jsonl": DIRECTORY}),
                      ("fifo", "pipe.jsonl", {"pipe.jsonl": FIFO}), ("dev-zero", "/dev/zero", {})]
        for label, argv_name, files in r.sample(unreadable, 2):
            b.add(f"{group}-args:{label}", group, [group, argv_name], REFUSE, names=argv_name, files=files)


def gen_export_options(b: Builder) -> None:
    """4. export's own options, on an intact transcript."""
    r = b.rng
    good = {"run.jsonl": Base("classic")}
    precious = b"<svg>the user's own drawing</svg>\n"

    def case(label: str, extra: list[str], expect: str, names: Any = None, fmt: str | None = "svg", **kw: Any) -> None:
        kw.setdefault("files", dict(good))
        formats = [] if fmt is None else ["--format", fmt]
        b.add(f"export-option:{label}", "export", ["export", "run.jsonl", *formats, *extra], expect, names=names, **kw)

    for value, expect in [("png", REFUSE), (r.choice(["SVG", "Mermaid", "SHIVIZ"]), EITHER), ("", REFUSE)]:
        case(f"--format={value}", [], expect, names="--format", fmt=value)
    case("no-format", [], REFUSE, names="--format", fmt=None)
    case("-o-exists", ["-o", "out.svg"], REFUSE, names="out.svg", files={**good, "out.svg": precious})
    case("-o-exists+overwrite", ["-o", "out.svg", "--overwrite"], ACCEPT, files={**good, "out.svg": precious},
         may_change=("out.svg",), outputs={"out.svg": "svg"})
    case("-o-directory", ["-o", "out.d"], REFUSE, names="out.d", files={**good, "out.d": DIRECTORY})
    case("-o-dev-full", ["-o", "/dev/full"], WRITE_ERROR, names="/dev/full", also=(REFUSE,))
    case("-o-empty", ["-o", ""], REFUSE, names=("-o", "--output", "file name"))
    case("-o-missing-folder", ["-o", "missing-dir/out.svg"], REFUSE, names="missing-dir")
    case("-o-the-input", ["-o", "run.jsonl", "--overwrite"], EITHER, fmt="mermaid", may_change=("run.jsonl",),
         outputs={"run.jsonl": "text"})
    others = [("--from", "abc"), ("--to", "inf"), ("--from", ""), ("--to", "-5"), ("--from", "1e308")]
    for flag, value in [("--from", "-1"), ("--from", "nan"), ("--to", "1e300"), r.choice(others)]:
        case(f"{flag}={value}", [flag, value], REFUSE, names=flag,
             forbid=ARGPARSE_MISREAD if value.startswith("-") else None)
    case("--to-before-from", ["--from", "10", "--to", "5"], REFUSE, names=("--to", "--from"))
    case("--from-to-window", ["--from", "10", "--to", "20"], ACCEPT, fmt="mermaid")
    # Windows that cut messages in flight (told when they arrive, after the view), one
    # that opens after the transcript's last event, one of its first instant alone.
    for label, window in [("cut-in-flight", ["--from", "9", "--to", "10.5"]), ("after-the-end", ["--from", "1000"]),
                          ("first-instant", ["--to", "0"])]:
        case(f"window-{label}", [*window, "-o", "w.svg"], ACCEPT, outputs={"w.svg": "svg"})
    for value in ["0", "99", "1,,2", "", "a", "١"]:
        case(f"--nodes={value}", ["--nodes", value], REFUSE, names="--nodes", fmt=r.choice(list(EXPORT_EXTENSIONS)))
    case("--nodes=1,2", ["--nodes", "1,2"], ACCEPT, fmt="shiviz")
    for value in r.sample(["Bogus", "election,nothing", "", "Election;Answer"], 1):
        case(f"--types={value}", ["--types", value], REFUSE, names="--types")
    case("--types-any-case", ["--types", "election,COORDINATOR"], ACCEPT, fmt="mermaid")
    case("unknown-option", ["--colour", "red"], REFUSE, names="--colour")
    b.add("export-option:no-file", "export", ["export", "--format", "svg"], REFUSE)
    b.add("export-option:two-files", "export", ["export", "run.jsonl", "run.jsonl", "--format", "svg"], REFUSE,
          files=dict(good))
    unreadable = [("missing", "nowhere.jsonl", {}), ("fifo", "pipe.jsonl", {"pipe.jsonl": FIFO}),
                  ("dev-zero", "/dev/zero", {})]
    for label, argv_name, files in r.sample(unreadable, 2):
        b.add(f"export-option:file-{label}", "export", ["export", argv_name, "--format", "mermaid"], REFUSE,
              names=argv_name, files=files)
    b.add("export-option:svg-far-moment", "export", ["export", "far.jsonl", "--format", "svg", "-o", "far.svg"], ACCEPT,
          files={"far.jsonl": Base("far")}, outputs={"far.svg": "svg"}, max_bytes=50_000_000)
