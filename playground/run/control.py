"""The one surface a screen drives a session through, whichever world runs it.

Two worlds offer it: the simulation's timeline (timeline.py: a live run or a replay,
with its whole past) and a real cluster followed from its nodes' traces (followed.py:
processes this program started, or nodes it attached to). A screen holds a `Control`
and asks it for:

  - `state`: the cluster at the moment shown (state.py), which the screen renders and
    never copies; `now()`: the time shown;
  - `refusal(command, name)` and `submit(command)`: a typed command (core/commands.py)
    carried out, or why it cannot mean anything at that moment (one line each; a real
    run's cluster says why when it is given one);
  - `internals(node)`: a node's variables and safe storage where they are known
    (`internals_unknown` says why they never will be, when it is so);
  - `save(folder)`: the run so far, as a new transcript in `folder`;
  - `time_travel`: whether the moment shown can be other than the present, a command
    given there branching the run (the simulation: it is deterministic), or not (a
    real run);
  - `close()`: the run stopped and its files closed.

This module is also a front end's door to the runtime: beside the surface it names
what a front end opens and handles (the sessions that offer it, the state's types, the
errors the surface raises, quitting on a signal, a run's failure in words, a lesson
played beside a run and the glossary it links into), so that the UI reads the runtime
through a handful of modules (tests/test_layers.py counts them).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import outcome

from ..core.commands import LiveCommand
from ..core.config import ClusterConfig, InputError, WriteError
from ..core.host import Internals
from ..record.glossary import glossary, term_named
from .followed import FollowedRun
from .history import Loading
from .lesson import END, NEW_RUN, LessonAt, LessonPlay, describe_condition, describe_task, narration
from .quit_signals import QuitOnSignals
from .session import Session, exception_leaves
from .state import ClusterState, NodeState
from .timeline import Timeline

__all__ = ["END", "NEW_RUN", "ClusterConfig", "ClusterState", "Control", "FollowedRun", "InputError", "Internals",
           "LessonAt", "LessonPlay", "Loading", "NodeState", "QuitOnSignals", "Session", "Timeline", "WriteError",
           "describe_condition", "describe_task", "failure", "glossary", "narration", "term_named"]


@runtime_checkable
class Control(Protocol):
    state: ClusterState
    time_travel: ClassVar[bool]

    def now(self) -> float:
        """The time shown."""

    def refusal(self, command: LiveCommand | None, name: Callable[[int], str]) -> str | None:
        """Why `command` cannot mean anything at the moment shown (one line, nodes named
        by `name`), or None; for None, why no command can be given now at all."""

    def submit(self, command: LiveCommand) -> str | None:
        """Carry `command` out now; None, or why it could not be (one line)."""

    def internals(self, node: int) -> Internals | None:
        """A node's variables and storage at the moment shown (None: not known)."""

    @property
    def internals_unknown(self) -> str | None:
        """Why a node's own variables are not known and will not be (None: they are, or will be)."""

    def save(self, folder: Path) -> tuple[Path, int]:
        """The run so far as a new transcript in `folder`: that file, and how many
        transcripts it branched from were saved beside it. InputError or WriteError if
        it cannot be."""

    async def close(self) -> None:
        """The run stopped, its files closed."""


def failure(result: outcome.Outcome) -> str | None:
    """How a run that ended by itself failed, for its front end to print once its screen
    is gone: one line for a transcript that could not be written, the traceback of a
    bug; None if it did not fail (it was stopped)."""
    if not isinstance(result, outcome.Error):
        return None
    error = result.error
    written = [e for e in exception_leaves(error) if isinstance(e, WriteError)]
    if written:
        return f"bully-tui: error: {written[0]}"
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return f"bully-tui: the simulation failed:\n{text}"
