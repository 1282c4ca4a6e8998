"""Running the main command's plan: the live app, a headless run, --compare, real nodes."""

from __future__ import annotations

import json
import sys

from ..run import interrupt
from ..run.in_flight import stopped_line
from .output import emit, say, warn
from .plan import DEFAULT_UNTIL, RunPlan, plan


def run(argv: list[str]) -> int:
    return run_plan(plan(argv))


def run_plan(p: RunPlan) -> int:
    interrupt.raise_if_stopped()  # (a signal during the imports above may have been swallowed)
    session = p.session
    if p.live:
        from . import live

        return live.run_real_live(session) if p.real else live.run_live(session, p.speed, by_hand=p.by_hand)
    warn(session.config)
    if p.compare is not None and p.compare.mutexes:
        from ..run.compare_mutex import SIZES, compare_mutex, mutex_json_lines, mutex_table

        results = compare_mutex(session.config, session.seed, p.compare.sizes or SIZES, p.compare.mutexes,
                                session.algorithm)
        emit((mutex_json_lines(results) if p.compare.format == "json"
              else mutex_table(results, session.config, session.algorithm)) + "\n")
        return 0
    if p.compare is not None:
        from ..run.compare import SIZES, compare, json_lines, table

        results = compare(session.config, session.seed, p.compare.sizes or SIZES, p.compare.algorithms)
        emit((json_lines(results) if p.compare.format == "json" else table(results, session.config)) + "\n")
        return 0
    if p.real:
        from ..real.cluster import REAL_UNTIL, run_headless_real

        emit(json.dumps(run_headless_real(session, REAL_UNTIL if p.until is None else p.until)) + "\n")
        return 0
    from ..run.wiring import run_headless

    summary = run_headless(session, DEFAULT_UNTIL if p.until is None else p.until, progress=sys.stderr.isatty(),
                           max_in_flight=p.max_in_flight)
    for refused in summary.get("refused", ()):  # (a by-hand command no key checked first: one line each, not recorded)
        say(f"bully-tui: warning: at {refused['t']:g} s, {refused['command']}: {refused['why']}; nothing done")
    emit(json.dumps(summary) + "\n")
    if "stopped" in summary:  # --max-in-flight: the run did not reach its end (status 1, as a finding; no signal came)
        say(stopped_line(summary["stopped"], session.transcript))
        return 1
    return 0
