"""The files the app writes (`s`'s transcripts, the exports), for a user in a browser.

In a terminal they are written to the save folder and the app says where, as always.
Served (`bully-tui serve`, `App.is_web`), that folder is the server's, which the student
cannot reach: each save or export writes into a new private folder instead, and every
file there is offered to the browser (Textual's deliver_binary: the page opens its
download), the folder removed at once. An open file stays readable once its name is
gone, so the download reads it whole whenever the browser asks, and nothing is left on
the server's disk, whatever ends the app later."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from textual.app import App

MIME = {".jsonl": "application/x-ndjson", ".svg": "image/svg+xml", ".mmd": "text/plain", ".log": "text/plain"}
POP_UPS = "a download (if the browser blocks it, allow this page's pop-ups)"


def folder_for(app: App, save_dir: Path) -> Path:
    """Where a save or an export writes: `save_dir` in a terminal; served, a new folder
    of its own (`offered` hands its files over and removes it)."""
    return Path(tempfile.mkdtemp(prefix="bully-download-")) if app.is_web else save_dir


def offered(app: App, folder: Path, what: str) -> bool:
    """Served: every file in `folder` offered as a download, the folder removed, and the
    user told (`what` was written: "The transcript"); True. In a terminal: False, and
    nothing done. Called on the app's thread."""
    if not app.is_web:
        return False
    names = []
    for path in sorted(folder.iterdir()):
        app.deliver_binary(path.open("rb"), save_filename=path.name, mime_type=MIME.get(path.suffix))
        names.append(path.name)
    shutil.rmtree(folder, ignore_errors=True)
    app.notify(f"{what}: {', '.join(names)}, {POP_UPS}")
    return True


def discard(app: App, folder: Path) -> None:
    """A served save or export that failed: its folder goes."""
    if app.is_web:
        shutil.rmtree(folder, ignore_errors=True)
