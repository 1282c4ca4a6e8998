"""An exhaustive search's finding on a faulty network (explore.py's rule 7), as the user
being the network would have made it (core/by_hand.py): a run that its commands
re-create, so that `verify` checks it and `--scenario` runs it again.

Rules:
  1. The run starts as every run of its cluster does (nodes 1..N, seed 1, the search's
     settings), and `by-hand` at t=0, after the boot: from then on nothing arrives and no
     timer fires but by a command. Each step of the search is its command at the time
     the search took it (`deliver ID`, `drop ID`, `duplicate ID`, `fire K NAME`, `crash
     K`, ...; asynchronous: a millisecond apart, timed: at the step's own time, several
     in one instant as the search had them), and the run ends when the search's last
     `at` closed the instant broken.
  2. The engine re-runs those commands (record/transcript.Recipe, as verify does), so the
     transcript is its run, whole, byte for byte what verify re-creates, and the
     scenario holds the same settings and lines. The re-run must break the property
     the search found broken: if it did not, the search and the engine disagree (a
     bug), and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol import split_name

from ..core.command_lines import parse_command
from ..core.commands import Join, Scheduled
from ..core.engine import run_sync
from ..core.events import Event, SendEvent, ViolationEvent
from ..record.recorder import Recorder
from ..record.transcript import Header, Recipe
from .explore_steps import DROP, DUPLICATE
from .hunt_space import NETWORK_FAULTS
from .interaction import Interaction, message_text

__all__ = ["Rerun", "finding_line", "network_text", "rerun", "scenario_text"]

SOURCE = "scenario"  # the commands' source: the scenario's lines, which re-create them


def network_text(network: frozenset[str], drops: int, duplicates: int) -> str:
    """What the links may do: "links lossless FIFO", "links drop (at most 1), reorder"."""
    if not network:
        return "links lossless FIFO"
    bound = {DROP: drops, DUPLICATE: duplicates}
    return "links " + ", ".join(f"{fault}{f' (at most {bound[fault]})' if fault in bound else ''}"
                                for fault in NETWORK_FAULTS if fault in network)  # (in the order --network lists them)


@dataclass(frozen=True, slots=True)
class Rerun:
    """A finding re-run as its commands (rule 2)."""

    header: Header
    lines: tuple[tuple[float, str], ...]  # (time, command line as a scenario has it)
    until: float  # when the run ends (rule 1)
    events: tuple[Event, ...]

    def record(self, path: str, overwrite: bool = False) -> None:
        """The transcript (rule 2)."""
        with Recorder.create(path, self.header, overwrite) as recorder:
            recorder(list(self.events))


def rerun(model, found) -> Rerun:
    """`found` (explore.Counterexample, on `model`'s faulty network) re-run as commands."""
    engine = Interaction()
    engine.run(model.cluster_line)  # (the cluster the search stepped: its ids, seed, settings, workload)
    template = engine.h.engine
    header = Header(model.algorithm, list(template.ids), template.seed, template.config, workload=template.workload)
    lines, t = [(0.0, "by-hand")], 0.0
    for step in found.steps:
        if step.startswith("at "):
            t = float(step[3:])
        else:
            lines.append((t, step))
    ids, commands = tuple(template.ids), []
    for at, line in lines:
        command = parse_command(line.split(), ids, template.seed)
        if type(command) is Join:
            ids = (*ids, command.node)
        commands.append(Scheduled(at, command, SOURCE))
    run = Recipe(header, tuple(commands)).engine()
    events: list[Event] = []
    run.subscribe(events.extend)
    run_sync(run, t)
    if not any(type(e) is ViolationEvent and e.phase == "begin" and e.property == found.property for e in events):
        raise RuntimeError(f"the search found {found.property} broken, but its steps re-run as commands do not break it")
    return Rerun(header, tuple(lines), t, tuple(events))


def scenario_text(model, run: Rerun, claim: list[str]) -> str:
    """The finding as a scenario: `bully-tui --scenario FILE` runs it again (rule 2). A
    message's line names it, as the trace does (`# 3→1 Answer e1`)."""
    c, workload = run.header.config, run.header.workload
    election, mutex = split_name(model.algorithm)
    sent = {e.id: e for e in run.events if type(e) is SendEvent}
    lines = [*(f"# {line}" for line in claim), f"set algorithm {election}"]
    if mutex is not None:
        lines += [f"set mutex {mutex}", f"set cs-think {_span(workload.think)}", f"set cs-hold {_span(workload.hold)}"]
    lines += [f"set nodes {len(run.header.nodes)}", f"set seed {run.header.seed}", f"set timeout {c.timeout:g}",
              f"set delay {c.delay_min:g}:{c.delay_max:g}", f"set probe-interval {c.probe_interval:g}"]
    if c.coordinator_timeout is not None:
        lines.append(f"set coordinator-timeout {c.coordinator_timeout:g}")
    lines += [f"set until {run.until:g}", ""]
    for at, line in run.lines:
        words = line.split()
        e = sent.get(int(words[1])) if words[0] in ("deliver", DROP, DUPLICATE) else None
        lines.append(f"{at:g} {line}" + (f"  # {e.src}→{e.dst} {message_text(e.msg)}" if e is not None else ""))
    return "\n".join(lines) + "\n"


def finding_line(scenario: str, transcript: str, claim: str) -> str:
    """What the command says of a finding: its claim (hunt_report.steps_line's), and
    where its files are."""
    return (f"{claim}; the steps, as the user being the network: {scenario} (bully-tui --scenario {scenario}); "
            f"replay with: bully-tui replay {transcript} --at violation (bully-tui verify re-creates it)")


def _span(span: tuple[float, float] | None) -> str:
    return "none" if span is None else f"{span[0]:g}:{span[1]:g}"
