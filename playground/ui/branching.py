"""A command given while looking at the past branches the session there, after asking
(branch_screen.py): the engine of that instant is re-created and goes on in a new
transcript beside the first, which stays as it is (run/timeline.py), with the command
run at once and the session paused, its screen showing the branch from then on."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from .branch_screen import BranchScreen
from .model import LOG_CAP


def ask_to_branch(app: App, command: object, text: str) -> None:
    """Ask whether to branch with `command` (`text`: as the user would say it) at the
    instant shown; or say why the session cannot branch there (yet)."""
    timeline = app.timeline
    if why := timeline.branch_refusal():
        app.notify(why, severity="warning")
        return
    path = timeline.branch_path()
    temporary = timeline.kept_transcript is None
    asking = BranchScreen(text, timeline.now(), str(path) if temporary else path.name, temporary=temporary)
    app.push_screen(asking, lambda yes: yes and app.run_worker(_branch(app, command, path), exclusive=True,
                                                              group="branch"))


async def _branch(app: App, command: object, path: Path) -> None:
    events = await app.timeline.branch(command, path, speed=app.speed, recent=LOG_CAP, **app.live_calls)
    app.session = app.timeline.session
    app.model.reload(events)
    app.redraws.pause()
    if app.kept_transcript is None:
        app.notify(f"A new future, recorded to a temporary file, {path}, removed when you quit: "
                   f"s keeps it (with what it branched from) in {app.save_dir.resolve()}.")
    else:
        app.notify(f"A new future: recorded in {path}")
    app.redraw(text=True)
