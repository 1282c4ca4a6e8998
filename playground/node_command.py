"""`bully-tui node`: one real node process (playground/real/node.py), its arguments
checked before anything runs: bad input is one line and status 2, as cli.py says of
every command. It runs until SIGTERM or SIGINT (0), or until it leaves (SIGUSR2)."""

from __future__ import annotations

import signal

import trio

from protocol import ALGORITHMS, MUTEXES

from .cli import _choice, _Parser, parse_hold, parse_think, subcommand_parser
from .core.config import (
    COORDINATOR_TIMEOUT,
    DELAY,
    MAX_SEED,
    PROBE_INTERVAL,
    TIMEOUT,
    ClusterConfig,
    InputError,
    Workload,
    WriteError,
    parse_number,
    parse_whole,
    shown,
)
from .real.node import NodeOptions, serve
from .real.wire import MAX_ID, Address


def _parser() -> _Parser:
    p = subcommand_parser("node")
    p.add_argument("--id", required=True, metavar="K", help="this node's id, a whole number")
    p.add_argument("--listen", required=True, metavar="HOST:PORT", help="where this node takes its peers' connections")
    p.add_argument("--peers", metavar="ID@HOST:PORT,...", help="every other member, and where it listens (none: a "
                   "cluster of one)")
    p.add_argument("--algorithm", default="classic", metavar="A", help=f"one of: {', '.join(ALGORITHMS)} (default classic)")
    p.add_argument("--mutex", metavar="M", help=f"mutual exclusion beside the election: {', '.join(MUTEXES)}")
    p.add_argument("--cs-think", metavar="A[:B]", help="with --mutex: seconds it thinks before it wants the critical "
                   "section (default 5:20; none: never)")
    p.add_argument("--cs-hold", metavar="A[:B]", help="with --mutex: seconds it holds the critical section (default 15:30)")
    p.add_argument("--state-dir", required=True, metavar="DIR", help="its safe storage (state.json) and trace (trace.jsonl)")
    p.add_argument("--timeout", metavar="T", help="T, seconds (default 4)")
    p.add_argument("--coordinator-timeout", metavar="T2", help="T', seconds (default 2T)")
    p.add_argument("--probe-interval", metavar="P", help="P, seconds; 0 turns probing off (default 5)")
    p.add_argument("--delay", metavar="S", help="hold each message S seconds before it goes (default 0)")
    p.add_argument("--seed", metavar="S", help="draws Raft's timeouts (default 1)")
    p.add_argument("--join", action="store_true", help="start as a new member: send Join to every peer first")
    p.add_argument("--parent", metavar="PID", help="stop when process PID, which started this one, is gone")
    p.add_argument("--held", metavar="ID,...", help="peers whose links are held from the start (a cluster's "
                   "partition, for a node started while it lasts)")
    p.add_argument("--wait-to-start", action="store_true", help="listen at once, but take the first step when the "
                   "control socket says (a cluster's nodes, once every one of them listens)")
    p.add_argument("--start-at", metavar="UNIX_TIME", help="listen at once, but take the first step at this wall time "
                   "(so that the nodes of a cluster start together)")
    return p


def parse_peers(text: str, me: int | None, what: str = "--peers") -> dict[int, Address]:
    """"2@host:7002,3@host:7003" (`me`: this node, which may not be among them)."""
    peers: dict[int, Address] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        ident, sep, where = item.partition("@")
        if not sep:
            raise InputError(f"{what}: each is ID@HOST:PORT, not {shown(item)}")
        node = parse_whole(ident, "a peer's id", 0, MAX_ID)
        if node == me:
            raise InputError(f"--peers names this node itself ({node}): list the other members only")
        if node in peers:
            raise InputError(f"{what} names node {node} twice")
        peers[node] = Address.parse(where, f"{what}: node {node}'s address")
    if not peers:
        raise InputError(f"{what} must name at least one {'other member' if me is not None else 'node'}")
    return peers


def options(argv: list[str]) -> NodeOptions:
    a = _parser().parse_args(argv)
    me = parse_whole(a.id, "--id", 0, MAX_ID)
    algorithm = _choice(a.algorithm, "--algorithm", tuple(ALGORITHMS))
    workload = None
    if a.mutex is not None:
        algorithm = f"{algorithm}+{_choice(a.mutex, '--mutex', tuple(MUTEXES))}"
        default = Workload()
        workload = Workload(default.think if a.cs_think is None else parse_think(a.cs_think, "--cs-think"),
                            default.hold if a.cs_hold is None else parse_hold(a.cs_hold, "--cs-hold"))
    elif a.cs_think is not None or a.cs_hold is not None:
        raise InputError(f"--{'cs-think' if a.cs_think is not None else 'cs-hold'} only applies with --mutex")

    def seconds(value: str | None, kind, default):
        flag = f"--{kind.name.replace(' ', '-')}"
        return default if value is None else kind.check(parse_number(value, flag), flag)

    timeout = seconds(a.timeout, TIMEOUT, 4.0)
    config = ClusterConfig(timeout=timeout, coordinator_timeout=seconds(a.coordinator_timeout, COORDINATOR_TIMEOUT, None),
                           probe_interval=seconds(a.probe_interval, PROBE_INTERVAL, 5.0),
                           delay_min=0, delay_max=seconds(a.delay, DELAY, 0.0))
    peers = {} if a.peers is None else parse_peers(a.peers, me)
    if not a.state_dir.strip():
        raise InputError("--state-dir must name a folder, not ''")
    held = () if a.held is None else tuple(parse_whole(i, "--held", 0, MAX_ID) for i in a.held.split(","))
    strangers = [i for i in held if i not in peers]
    if strangers:
        raise InputError(f"--held names node {strangers[0]}, which is not among the --peers")
    return NodeOptions(me, Address.parse(a.listen, "--listen"), peers, algorithm, a.state_dir, config,
                       parse_whole("1" if a.seed is None else a.seed, "--seed", 0, MAX_SEED), a.join,
                       None if a.start_at is None else parse_number(a.start_at, "--start-at"),
                       None if a.parent is None else parse_whole(a.parent, "--parent", 1), held, a.wait_to_start,
                       workload)


def run_node(argv: list[str]) -> int:
    for signum in (signal.SIGUSR1, signal.SIGUSR2):  # until the node takes them: not the default (an end)
        signal.signal(signum, signal.SIG_IGN)
    # A cluster starts its nodes with its stopping signals blocked (real/cluster.py): they
    # are the node's from here on (one that came meanwhile is taken now).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    node = options(argv)
    try:
        trio.run(serve, node)
    except BaseExceptionGroup as group:  # what stopped it, from inside trio's nursery: one line, as anywhere
        from .run.session import exception_leaves

        said = next((e for e in exception_leaves(group) if isinstance(e, InputError | WriteError)), None)
        if said is None:
            raise
        raise said from None
    return 0
