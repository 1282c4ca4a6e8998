"""What a hunt says: its progress on a terminal, its lines, and the scenario file it
writes for a finding (the claim in its first lines, like the shipped ones)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from protocol import split_name

from ..core.config import Workload, instant_text, to_seconds
from ..core.monitor import PROPERTY_NAMES
from .explore import steps_taken
from .explore_network import network_text
from .progress import StderrShort

if TYPE_CHECKING:  # (run.hunt loads hypothesis: an exhaustive hunt, or a refused one, does without)
    from .hunt import Finding, Hunt, Result, Searched

REFRESH = 0.2  # seconds between redraws


def property_text(prop: str | None) -> str:
    return "any property" if prop is None else PROPERTY_NAMES[prop]


def finding_line(finding: Finding, transcript: str) -> str:
    """"SLE1 broken: 4 nodes, 3 commands, at t=21.400 (...); replay with: bully-tui replay FILE --at violation"."""
    return (f"{PROPERTY_NAMES[finding.property]} broken: {finding.size}, at t={instant_text(finding.t)} ({finding.text}); "
            f"replay with: bully-tui replay {transcript} --at violation")


def searched_text(searched: Searched) -> str:
    return (f"{searched.schedules:,} schedules, {searched.events:,} events, {searched.seconds:,.0f} virtual seconds, "
            f"{len(searched.shapes)} shapes (nodes × commands)")


def searched_so_far(result: Result) -> str:
    """What a hunt stopped by a signal had done: "searched 3,200 schedules, nothing found yet"."""
    found = "nothing found yet" if result.finding is None else f"a finding ({result.finding.size}), not written"
    return f"searched {result.searched.schedules:,} schedules, {found}"


def explored_so_far(states: int) -> str | None:
    """What an exhaustive search stopped by a signal had done (as its progress last said:
    every thousand states): "searched 110,000 states, nothing found yet"."""
    return f"searched {states:,} states, nothing found yet" if states else None


def nothing_line(hunt: Hunt, result: Result, elapsed: float) -> str:
    return (f"no counterexample: {property_text(hunt.property)} held in {searched_text(result.searched)} "
            f"({elapsed:.1f} s, seed {hunt.seed})")


def steps_line(model, found, path: str, transcript: str) -> str:
    """An exhaustive finding: "SLE1 broken: 3 nodes, 10 steps after the start, none shorter (...); the steps ...: FILE"."""
    steps = steps_taken(found.steps)
    joins = found.steps.count("join")
    nodes = f"{model.nodes + joins} nodes" + (f" ({model.nodes} at the start, {joins} joining)" if joins else "")
    return (f"{PROPERTY_NAMES[found.property]} broken: {nodes}, {steps} step{'' if steps == 1 else 's'} after "
            f"the start, none shorter ({found.text}); the steps, and what each did: {path}; replay with: bully-tui replay "
            f"{transcript} --at violation")


def explored_line(model, prop: str, explored, bounds, elapsed: float, found: bool) -> str:
    """How much an exhaustive search explored, and up to where."""
    c = model.config
    if model.timed:
        delays = " or ".join(f"{to_seconds(d):g}" for d in model.delays_us)
        how = f"timed: each delay {delays} s, T = {c.timeout:g} s"
    else:
        how = "asynchronous: any arrival or timer next"
    if model.network:
        how += f"; {network_text(model.network, bounds.drops, bounds.duplicates)}"
    faults = "at most " + ", ".join(f"{n} {what}{'' if n == 1 else 's'}" for what, n in (
        ("fault", bounds.faults), ("elect", bounds.elects), ("request", bounds.requests), ("join", bounds.joins),
        ("leave", bounds.leaves)) if n or what == "fault")
    if found:
        return f"searched {explored.states:,} states ({how}; {faults}; {elapsed:.1f} s)"
    cut = {None: "every run to its end", "depth": f"runs cut at {bounds.depth} steps",
           "horizon": f"runs cut at t = {bounds.horizon:g} s", "states": f"stopped at {bounds.most:,} states"}[explored.bound]
    return (f"no counterexample in {explored.states:,} states: {property_text(prop)} held in every run of "
            f"{model.algorithm} with {model.nodes} nodes ({how}; {faults}; {cut}; {elapsed:.1f} s)")


def scenario_text(hunt: Hunt, finding: Finding, command_line: str) -> str:
    """The finding as a scenario file: `bully-tui --scenario FILE` runs it again."""
    s = finding.schedule
    election, mutex = split_name(hunt.space.algorithm)
    c = s.config
    delay = f"{c.delay_min:g}" if c.delay_min == c.delay_max else f"{c.delay_min:g}:{c.delay_max:g}"
    lines = [
        f"# Found by: {command_line}",
        f"# Claim: {PROPERTY_NAMES[finding.property]} is broken at t = {instant_text(finding.t)}: {finding.text}.",
        f"# The smallest found ({finding.size}): no single simplification the shrinker knows",
        "# (fewer nodes or commands, earlier times, simpler numbers) still breaks it.",
        f"set algorithm {election}",
    ]
    if mutex is not None:
        w = Workload()
        lines += [f"set mutex {mutex}", f"set cs-think {_span(w.think)}", f"set cs-hold {_span(w.hold)}"]
    lines += [f"set nodes {s.nodes}", f"set seed {s.seed}", f"set timeout {c.timeout:g}", f"set delay {delay}",
              f"set probe-interval {c.probe_interval:g}"]
    f = c.faults
    lines += [*([f"set loss {f.loss:g}"] if f.loss else []), *([f"set duplicate {f.duplicate:g}"] if f.duplicate else []),
              *(["set reorder on"] if f.reorder else []), f"set until {s.until(hunt.space.algorithm):g}", ""]
    lines += [f"{at:g} {text}" for at, text in s.lines]
    return "\n".join(lines) + "\n"


def _span(span: tuple[float, float]) -> str:
    return f"{span[0]:g}:{span[1]:g}"


class _ProgressLine:
    """One line of progress on stderr, redrawn at most every REFRESH seconds, gone when
    done. Only on a terminal (the caller asks): pipes and CI stay clean."""

    def __init__(self, *columns, total: float | None = None):
        self._start = time.monotonic()
        self._drawn = 0.0
        self._display = Progress(TextColumn("{task.description}"), *columns, console=StderrShort(),
                                 transient=True, auto_refresh=False)
        self._task = self._display.add_task("", total=total)

    def __enter__(self):
        self._display.start()
        self._display.refresh()
        return self

    def __exit__(self, *_: object) -> None:
        self._display.stop()

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self._start, 1e-9)

    def show(self, description: str, completed: float | None = None) -> None:
        self._display.update(self._task, description=description, completed=completed)
        if time.monotonic() - self._drawn >= REFRESH:
            self._drawn = time.monotonic()
            self._display.refresh()


class HuntProgress(_ProgressLine):
    """Schedules tried, the best finding so far and the time left."""

    def __init__(self, hunt: Hunt):
        super().__init__(BarColumn(), TimeRemainingColumn(),
                         total=hunt.schedules if hunt.schedules is not None else hunt.seconds)
        self.hunt = hunt

    def __call__(self, result: Result, _found: int | None) -> None:
        searched = result.searched
        best = "none yet" if result.finding is None else f"{result.finding.size} at t={result.finding.t:g}"
        self.show(f"{searched.schedules:,} schedules · {searched.runs / self.elapsed:,.0f} runs/s · best: {best} · "
                  "Ctrl-C stops", searched.schedules if self.hunt.schedules is not None else self.elapsed)


class ExploreProgress(_ProgressLine):
    """An exhaustive search's states so far, and how deep its runs have gone."""

    def __call__(self, explored) -> None:
        self.show(f"{explored.states:,} states ({explored.states / self.elapsed:,.0f}/s) · runs {explored.deepest} "
                  "steps deep so far · Ctrl-C stops")
