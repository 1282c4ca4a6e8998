"""`bully-tui verify FILE`: re-create a transcript from its header and commands, and compare."""

from __future__ import annotations

from .output import emit, say
from .subcommands import parser_for

USAGE = "bully-tui verify FILE"


def file_parser(name: str, usage: str):
    """A subcommand's parser that takes one transcript."""
    p = parser_for(name, usage)
    p.add_argument("file", metavar="FILE", help="a transcript (bully-tui --transcript FILE, or s in the app)")
    return p


def run(argv: list[str]) -> int:
    from ..record.verify import Different, verify

    path = file_parser("verify", USAGE).parse_args(argv).file
    try:
        count = verify(path)
    except Different as e:
        say(f"bully-tui: different: {e}")
        return 1
    emit(f"{path}: identical, {count:,} events\n")
    return 0
