"""`bully-tui replay FILE [--at T|violation]`: a transcript in the app."""

from __future__ import annotations

from ..core.config import INSTANT, parse_number
from .live import replay_app
from .output import finished, need_a_terminal
from .verify import file_parser

USAGE = "bully-tui replay FILE [--at T|violation]"


def run(argv: list[str]) -> int:
    p = file_parser("replay", USAGE)
    p.add_argument("--at", metavar="T|violation", help="open at the instant at or before T seconds, or at the first "
                   "violation (default: the end)")
    args = p.parse_args(argv)
    open_at = None
    if args.at is not None:
        open_at = "violation" if args.at.strip().lower() == "violation" else \
            INSTANT.check(parse_number(args.at, "--at"), "--at")
    app = replay_app(args.file, open_at=open_at, before_the_app=lambda: need_a_terminal(
        "replay shows a transcript in the terminal app", "to check one, use verify; to draw one, export"))
    app.run()
    return finished(app)
