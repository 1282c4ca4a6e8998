"""`bully-tui merge DIR ... -o FILE`: the traces of real nodes run by hand, as one transcript."""

from __future__ import annotations

from .output import emit, say
from .subcommands import parser_for

USAGE = "bully-tui merge DIR [DIR ...] -o FILE [--overwrite]"


def run(argv: list[str]) -> int:
    from ..real.merge import merge
    from ..real.traces import read_traces
    from ..record.recorder import Recorder
    from ..record.transcript import Header

    p = parser_for("merge", USAGE)
    p.add_argument("folders", nargs="+", metavar="DIR", help="each node's --state-dir (its trace.jsonl), every node's")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the transcript to write")
    p.add_argument("--overwrite", action="store_true", help="let -o replace an existing file")
    args = p.parse_args(argv)
    run = read_traces(args.folders)
    for where in run.cut_short:
        say(f"bully-tui: warning: {where} was cut short (no newline: its node was killed writing it): left out")
    events = merge(run.algorithm, run.ids, run.config, [], run.traces, run.files)
    with Recorder.create(args.output, Header(run.algorithm, list(run.ids), 1, run.config, real=True),
                         args.overwrite) as recorder:
        recorder(events)
    emit(f"{args.output}: {len(events):,} events from {len(run.ids)} nodes\n")
    return 0
