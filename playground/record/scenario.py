"""Scenario files: a page of `TIME COMMAND ARGS` lines (commands.py parses them) and
`set NAME VALUE` lines, settings named as the command line's options (`set algorithm
ring`, `set nodes 8`, `set delay 1`, `set until 200`, `set loss 0.2`, `set reorder on`). The settings are defaults: an
option given on the command line wins. Read here, checked against a cluster by the
command line (cli/plan.py); a failure names the file and the line. The comment lines
that open the file are its claim, which the app shows beside the run."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.command_lines import Line
from ..core.config import InputError, shown
from .files import read_text

# The options a scenario may set (`set NAME VALUE`), as the command line spells them.
SETTINGS = ("algorithm", "nodes", "ids", "ring", "seed", "timeout", "coordinator-timeout", "delay", "probe-interval", "settle",
            "until", "mutex", "cs-think", "cs-hold", "loss", "duplicate", "reorder", "drift")


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario file, read but not yet checked against a cluster: its settings
    (name -> (value, where)) and its command lines ((where, text), in order)."""

    path: str
    settings: dict[str, tuple[str, str]]
    lines: tuple[tuple[str, str], ...]
    claim: str = ""  # the comment lines that open the file, without their '#'

    def lines_to_run(self) -> list[Line]:
        return [Line(text, "scenario", where) for where, text in self.lines]


SCENARIO_LIMIT = 1_000_000  # bytes: a scenario is a page of commands, not a data set


def read_scenario(path: str) -> Scenario:
    text = read_text(path, "scenario", SCENARIO_LIMIT)
    settings: dict[str, tuple[str, str]] = {}
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path} line {n}"
        words = line.split("#", 1)[0].split()
        if words and words[0].lower() == "set":
            if len(words) != 3:
                raise InputError(f"{where}: expected set NAME VALUE")
            name = words[1].lower()
            if name not in SETTINGS:
                raise InputError(f"{where}: unknown setting {shown(words[1])} (expected one of: {', '.join(SETTINGS)})")
            if name in settings:
                raise InputError(f"{where}: {name} is already set on {settings[name][1]}")
            settings[name] = (words[2], where)
        else:
            lines.append((where, line))
    return Scenario(path, settings, tuple(lines), _claim(text))


def _claim(text: str) -> str:
    """The comment lines at the top of a scenario's text (blank lines before them aside)."""
    said = []
    for line in text.lstrip().splitlines():
        if not line.lstrip().startswith("#"):
            break
        said.append(line.lstrip()[1:].strip())
    return "\n".join(said).strip()


