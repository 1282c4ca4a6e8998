"""The subcommands, one module each in this package: the one table of their names, what
they do and how their arguments look (for `bully-tui --help` and each one's own)."""

from __future__ import annotations

from dataclasses import dataclass

from .parser import Parser, subcommand_parser


@dataclass(frozen=True)
class Subcommand:
    module: str  # playground.cli.<module>: its `run(argv)` and `USAGE`
    what: str  # one line, for --help
    args: str = "FILE ..."  # how its arguments look, for --help


SUBCOMMANDS = {
    "verify": Subcommand("verify", "re-create a transcript from its header and commands, and compare every event"),
    "replay": Subcommand("replay", "open a transcript in the app, at its end: go back in time, and branch"),
    "export": Subcommand("export", "a transcript as a space-time diagram (SVG, Mermaid or ShiViz)"),
    "hunt": Subcommand("hunt", "search schedules for a run that breaks a property, and write the smallest one found",
                       "--property P ..."),
    "node": Subcommand("node", "run one real node: the same protocol over TCP, one process a node (bully-tui --real "
                       "starts a cluster of them)", "--id K ..."),
    "merge": Subcommand("merge", "merge the traces of real nodes run by hand (their state folders) into one transcript",
                        "DIR ... -o FILE"),
    "lesson": Subcommand("lesson", "the lessons: the playground teaches an algorithm step by step, beside its run "
                         "(no NAME: the menu to pick one)", "[NAME|PATH] [--check] [--headless]"),
    "attach": Subcommand("attach", "watch real nodes started by hand (bully-tui node), on this machine or others, live",
                         "ID@HOST:PORT,..."),
    "serve": Subcommand("serve", "the app in a browser, for a classroom: each tab runs bully-tui ARGS (by default the "
                        "lesson menu) in a process of its own", "[--port P] [-- ARGS ...]"),
}


def parser_for(name: str, usage: str) -> Parser:
    """A subcommand's parser: its name and what it does, from the table, and its usage."""
    return subcommand_parser(name, SUBCOMMANDS[name].what, usage)
