"""`bully-tui export FILE --format svg|mermaid|shiviz`: a transcript as a diagram."""

from __future__ import annotations

import math

from ..core.command_lines import parse_list
from ..core.config import INSTANT, InputError, parse_number, parse_whole
from ..record.files import check_new
from .output import emit, say
from .parser import choice
from .verify import file_parser

USAGE = ("bully-tui export FILE --format svg|mermaid|shiviz [-o OUT [--overwrite]] [--from T] [--to T] "
         "[--nodes K,...] [--types NAME,...] [--hide-detector] [--axis scaled|instants]")
FORMATS = ("svg", "mermaid", "shiviz")


def run(argv: list[str]) -> int:
    p = file_parser("export", USAGE)
    p.add_argument("--format", required=True, help=f"{', '.join(FORMATS)}")
    p.add_argument("-o", "--output", metavar="OUT", help="the file to write (default: standard output)")
    p.add_argument("--overwrite", action="store_true", help="let -o replace an existing file")
    p.add_argument("--from", dest="start", default="0", metavar="T", help="the messages sent from T seconds on")
    p.add_argument("--to", dest="stop", metavar="T", help="... up to T seconds")
    p.add_argument("--nodes", metavar="K,...", help="the messages between these nodes, by rank (1 the lowest id): 1,2,5; "
                                                      "one node: its messages with any node")
    p.add_argument("--types", metavar="NAME,...", help="the messages of these types, by name: Election,Coordinator")
    p.add_argument("--hide-detector", action="store_true", help="leave failure-detector traffic out (probes, heartbeats)")
    p.add_argument("--axis", default="scaled", help="SVG: time down to scale where there is room (scaled, the default), "
                                                     "or every instant one row (instants)")
    args = p.parse_args(argv)
    fmt = choice(args.format, "--format", FORMATS)
    start = INSTANT.check(parse_number(args.start, "--from"), "--from")
    stop = math.inf if args.stop is None else INSTANT.check(parse_number(args.stop, "--to"), "--to")
    if stop < start:
        raise InputError(f"--to ({stop:g}) is before --from ({start:g})")
    ranks = tuple(parse_whole(k, "--nodes", 1) for k in parse_list(args.nodes, "--nodes")) if args.nodes is not None else ()
    types = tuple(parse_list(args.types, "--types")) if args.types is not None else ()
    from ..record.export import AXES, Filters, export  # (drawing needs Textual's themes: only now)

    axis = choice(args.axis, "--axis", AXES)
    filters = Filters(start, stop, ranks, types, detector=not args.hide_detector)
    if args.output is not None:
        check_new(args.output, "export", args.overwrite)  # before the work, not after
    text = export(args.file, fmt, filters, axis)
    if args.output is None:
        emit(text)
        return 0
    from ..record.files import write_whole

    write_whole(args.output, "export", text.encode(), args.overwrite)
    say(f"{args.output}: {fmt}, {len(text.encode()):,} bytes")
    return 0
