"""`bully-tui serve [--host H] [--port P] [--public-url URL] [--max-sessions N] [-- ARGS ...]`:
the app in a browser, for a classroom. Each tab that opens the printed address runs
`bully-tui ARGS` (by default DEFAULT_ARGS: the lesson menu) in a process of its own, drawn by Textual's
web driver (web_server.py serves it, with textual-serve); the same app as in a terminal,
where `s` and the exports are offered as downloads.

Every option is checked, and the address bound, before anything is served: a port in
use or out of range is one line. ARGS are the served command's own, checked when a tab
opens (its one line shows on the page). The server runs until a signal; then every
tab's process is ended (its real nodes too) and the line is the usual one."""

from __future__ import annotations

import errno
import shlex
import socket
import sys
from urllib.parse import urlsplit

from ..core.config import InputError, parse_whole, shown
from ..run import interrupt
from .output import emit
from .subcommands import parser_for

USAGE = "bully-tui serve [--host H] [--port P] [--public-url URL] [--max-sessions N] [-- ARGS ...]"
DEFAULT_ARGS = ["lesson"]  # what a tab runs without ARGS: the lesson menu, where a student starts
MAX_SESSIONS = 8
MOST_SESSIONS = 1000


def run(argv: list[str]) -> int:
    own, served = split_at_dashes(argv)
    p = parser_for("serve", USAGE)
    p.epilog = ("ARGS, after --, are bully-tui's own (without them: lesson, the lesson menu): -- lesson bully, "
                "-- --nodes 7 --mutex central, -- replay FILE. "
                "Students open the printed address (this machine's, with --host 0.0.0.0); ?fontsize=24 after it "
                "makes the page's text bigger, for a projector.")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine "
                   "only; 0.0.0.0: every network it is on, for a classroom)")
    p.add_argument("--port", default="8000", metavar="P", help="the port (default 8000; 0: a free one, printed)")
    p.add_argument("--public-url", metavar="URL", help="the address the pages name for their websocket, where it is "
                   "not the one the browser used (a proxy in front: https://class.example.org)")
    p.add_argument("--max-sessions", default=str(MAX_SESSIONS), metavar="N",
                   help=f"tabs at once, each a process (default {MAX_SESSIONS}); one more gets a page saying so")
    args = p.parse_args(own)
    port = parse_whole(args.port, "--port", 0, 65535)
    max_sessions = parse_whole(args.max_sessions, "--max-sessions", 1, MOST_SESSIONS)
    public_url = None if args.public_url is None else checked_url(args.public_url)
    served = served or DEFAULT_ARGS
    if served[:1] == ["serve"]:
        raise InputError("serve cannot serve itself: after --, the arguments of the command each tab runs")
    title = shlex.join(["bully-tui", *served])
    sock = bound(args.host, port)  # (before the server's imports: a port in use is said at once)
    from .web_server import Classroom  # aiohttp and textual-serve load only to serve

    classroom = Classroom([sys.executable, "-m", "playground", *served], title, sock, public_url, max_sessions)
    host, port = sock.getsockname()[:2]
    everywhere = host in ("0.0.0.0", "::")
    address = public_url or f"http://{'127.0.0.1' if everywhere else host}:{port}"
    where = f" (listening on {host} port {port})" if public_url else \
        f" (listening on every address of this machine, port {port}: students use this machine's address)" \
        if everywhere else ""
    tabs = f"{max_sessions} tab{'s' if max_sessions > 1 else ''}"
    signum = classroom.serve_until_stopped(
        lambda: emit(f"bully-tui serve: {title} at {address}{where}, at most {tabs} at once; ctrl+c stops\n"))
    if signum is not None:
        raise interrupt.Stopped(signum)
    return 0


def split_at_dashes(argv: list[str]) -> tuple[list[str], list[str]]:
    """serve's own arguments, and those after `--` (the served command's)."""
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1:]


def checked_url(text: str) -> str:
    """An http(s) address with a host, without its trailing slash."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(f"--public-url must be an address like http://HOST:PORT or https://HOST, not {shown(text)}")
    return text.strip().rstrip("/")


def bound(host: str, port: int) -> socket.socket:
    """A listening socket on `host` and `port`, or one line saying why there is none (an
    empty host is refused: to getaddrinfo it would mean every address)."""
    if not host.strip():
        raise InputError(f"--host must be an address or a name, not {shown(host)} (0.0.0.0: every address)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise InputError(f"--host {shown(host)} is no address of this machine ({getattr(e, 'strerror', e)})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (a server just stopped leaves its port waiting)
        sock.bind(address)
        sock.listen(128)
    except OSError as e:
        sock.close()
        why = {errno.EADDRINUSE: f"port {port} on {host} is in use (another --port, or 0 for a free one)",
               errno.EACCES: f"port {port} needs privileges on this machine (choose one above 1023)",
               errno.EADDRNOTAVAIL: f"--host {shown(host)} is no address of this machine"}
        raise InputError(why.get(e.errno, f"cannot listen on {host} port {port}: {e.strerror or e}")) from None
    return sock
