"""`bully-tui node`: one real node process (playground/real/node.py), its arguments
checked before anything runs: bad input is one line and status 2, as every command's.
It runs until SIGTERM or SIGINT (0), or until it leaves (SIGUSR2)."""

from __future__ import annotations

import signal

from ..core.config import (
    DELAY,
    MAX_SEED,
    ClusterConfig,
    Faults,
    InputError,
    WriteError,
    check_drift,
    check_probability,
    parse_number,
    parse_whole,
    shown,
)
from ..real.deferred import defer
from ..real.wire import MAX_ID, Address
from .parser import (
    add_algorithm,
    add_faults,
    add_seed,
    add_timing,
    add_workload,
    algorithm_of,
    timing_value,
    workload_of,
)
from .subcommands import parser_for

USAGE = "bully-tui node --id K --listen HOST:PORT --peers ID@HOST:PORT,... --state-dir DIR [--algorithm A] ..."
DEFAULTS = ClusterConfig(delay_min=0.0, delay_max=0.0)  # a real link's delay is a hold on each message: none


def parser():
    p = parser_for("node", USAGE)
    p.add_argument("--id", required=True, metavar="K", help="this node's id, a whole number")
    p.add_argument("--listen", required=True, metavar="HOST:PORT", help="where this node takes its peers' connections")
    p.add_argument("--peers", metavar="ID@HOST:PORT,...", help="every other member, and where it listens (none: a "
                   "cluster of one)")
    add_algorithm(p)
    add_workload(p)
    p.add_argument("--state-dir", required=True, metavar="DIR", help="its safe storage (state.json) and trace (trace.jsonl)")
    add_timing(p, DEFAULTS, delay="hold each message S seconds before it goes")
    add_seed(p, "draws Raft's timeouts, and the losses, copies and clock rate below")
    add_faults(p, reorder=False)  # (TCP hands a connection's messages over in order: no --reorder)
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


def options(argv: list[str]):  # -> real.node.NodeOptions
    a = parser().parse_args(argv)
    me = parse_whole(a.id, "--id", 0, MAX_ID)
    algorithm = algorithm_of(a)
    workload = workload_of(a, a.mutex is not None)

    def seconds(name: str, default: float | None) -> float | None:
        text = getattr(a, name.replace("-", "_"))
        return default if text is None else timing_value(name, text, f"--{name}")

    hold = DEFAULTS.delay_max if a.delay is None else DELAY.check(parse_number(a.delay, "--delay"), "--delay")
    config = ClusterConfig(timeout=seconds("timeout", DEFAULTS.timeout),
                           coordinator_timeout=seconds("coordinator-timeout", DEFAULTS.coordinator_timeout),
                           probe_interval=seconds("probe-interval", DEFAULTS.probe_interval), delay_min=0, delay_max=hold,
                           faults=_faults(a))
    peers = {} if a.peers is None else parse_peers(a.peers, me)
    if not a.state_dir.strip():
        raise InputError("--state-dir must name a folder, not ''")
    held = () if a.held is None else tuple(parse_whole(i, "--held", 0, MAX_ID) for i in a.held.split(","))
    strangers = [i for i in held if i not in peers]
    if strangers:
        raise InputError(f"--held names node {strangers[0]}, which is not among the --peers")
    from ..real.node import NodeOptions  # (trio and the machines: once the arguments are good)

    return NodeOptions(me, Address.parse(a.listen, "--listen"), peers, algorithm, a.state_dir, config,
                       parse_whole("1" if a.seed is None else a.seed, "--seed", 0, MAX_SEED), a.join,
                       None if a.start_at is None else parse_number(a.start_at, "--start-at"),
                       None if a.parent is None else parse_whole(a.parent, "--parent", 1), held, a.wait_to_start,
                       workload)


def _faults(a) -> Faults:
    """--loss, --duplicate and --drift: what this node does to its own messages and clock."""
    faults = {}
    for name, check in (("loss", check_probability), ("duplicate", check_probability), ("drift", check_drift)):
        text = getattr(a, name)
        if text is not None:
            faults[name] = check(parse_number(text, f"--{name}"), f"--{name}")
    return Faults(**faults)


def run(argv: list[str]) -> int:
    defer()  # (first: trio and the parser import what a node never uses; real/deferred.py)
    for signum in (signal.SIGUSR1, signal.SIGUSR2):  # until the node takes them: not the default (an end)
        signal.signal(signum, signal.SIG_IGN)
    # A cluster starts its nodes with its stopping signals blocked (real/cluster.py): they
    # are the node's from here on (one that came meanwhile is taken now).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    node = options(argv)
    import trio

    from ..real.node import serve

    try:
        trio.run(serve, node)
    except BaseExceptionGroup as group:  # what stopped it, from inside trio's nursery: one line, as anywhere
        from ..run.session import exception_leaves

        said = next((e for e in exception_leaves(group) if isinstance(e, InputError | WriteError)), None)
        if said is None:
            raise
        raise said from None
    return 0
