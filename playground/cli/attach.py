"""`bully-tui attach ID@HOST:PORT,...`: watch real nodes started by hand, live."""

from __future__ import annotations

from .live import real_finished
from .node import parse_peers
from .output import need_a_terminal
from .subcommands import parser_for

USAGE = "bully-tui attach ID@HOST:PORT,..."


def run(argv: list[str]) -> int:
    p = parser_for("attach", USAGE)
    p.add_argument("nodes", metavar="ID@HOST:PORT,...", help="every node of the cluster, and where it listens")
    peers = parse_peers(p.parse_args(argv).nodes, None, "the node list")
    need_a_terminal("the live app draws on the terminal", "to read the nodes' traces afterwards, use bully-tui merge")
    from ..real.attach import Attached
    from ..run.session import Session
    from ..ui.real_app import RealApp

    watching = Attached(peers)
    session = Session(watching.algorithm, len(watching.ids), 1, watching.config, given_ids=watching.ids)
    app = RealApp(session, watching=watching)
    app.run()
    return real_finished(app)
