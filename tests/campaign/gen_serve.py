"""`bully-tui serve`'s cases: its options with hostile values (a valid port or session
count would serve until the case's time limit, so only values the contract refuses are
drawn), addresses that are not this machine's, URLs that are not http(s), options that
are unknown or lack their value, ARGS that would serve itself, its help, a standard
output that cannot take its address; and signals at seeded moments while it serves
(port 0: a free one), which end it with its one line."""

from __future__ import annotations

import signal

from .cases import HELP, HOSTILE, REFUSE, SIGNAL, WRITE_ERROR, Builder, in_the_work, whole_verdict

SERVE_START_UP = 0.5  # seconds from the start to serving: Python's start-up, the web server's imports

PUBLIC_URLS = [("ftp", "ftp://example.org"), ("no-scheme", "example.org:8000"), ("no-host", "http://"),
               ("query", "http://example.org/?a=1"), ("empty", ""), ("spaces", "   "), ("word", "classroom")]
HOSTS = [("empty", ""), ("spaces", "   "), ("unknown", "no.such.host.invalid"), ("not-here", "192.0.2.1"),
         ("garbage", "zé%$[]{}~")]


def gen_serve(b: Builder) -> None:
    r = b.rng

    def case(label: str, argv: list[str], names, **kw) -> None:
        b.add(f"serve:{label}", "serve", ["serve", *argv], REFUSE, names=names, **kw)

    for flag, low, high in (("--port", 0, 65535), ("--max-sessions", 1, 1000)):
        values = [*HOSTILE, ("above", str(high + 1)), ("far-above", str(high * 1000))]
        for label, value in values:
            if whole_verdict(value, low, high) == "bad":
                case(f"{flag[2:]}-{label}", ["--port", "0", *b.spelled(flag, value)], flag)
    for label, value in PUBLIC_URLS:
        case(f"public-url-{label}", ["--port", "0", *b.spelled("--public-url", value)], "--public-url")
    for label, value in HOSTS:
        case(f"host-{label}", ["--port", "0", *b.spelled("--host", value)], "--host")
    for flag in ("--port", "--max-sessions", "--public-url", "--host"):
        case(f"missing-{flag[2:]}", ["--port", "0", flag] if flag != "--port" else [flag], flag)
    case("unknown-option", ["--port", "0", "--fontsize", "24"], "--fontsize")
    case("abbreviated", ["--max", "3"], "--max")
    case("positional", ["lesson"], "lesson")
    case("serves-itself", ["--port", "0", "--", "serve", "--port", "0"], "serve")
    b.add("help:serve --help", "help", ["serve", "--help"], HELP)
    # where it says its address cannot be written: one line, and nothing served
    b.add("serve:stdout-full", "serve", ["serve", "--port", "0"], WRITE_ERROR, names="standard output", stdout_full=True)
    b.add("serve:stdout-closed", "serve", ["serve", "--port", "0"], WRITE_ERROR, names="standard output",
          stdout_closed=True)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        # (past its start-up, SERVE_START_UP, a moment of its serving: in_the_work; a second of
        # it meets what later ones would)
        plan = in_the_work(signum, round(r.uniform(0.05, 1.5), 3), SERVE_START_UP)
        b.add(f"serve:signal-{signal.Signals(signum).name}", "serve", ["serve", "--port", "0"], SIGNAL,
              names="interrupted" if signum == signal.SIGINT else None, signal=plan)
