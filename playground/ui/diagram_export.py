"""`D` (and the palette's exports): the log's window as a space-time diagram, an SVG
drawing or, from the palette, Mermaid or a ShiViz log, beside the saved transcripts (in a
browser: offered as a download, downloads.py). The window is what the log shows: from
its first line's time to the moment shown, through its node and message-type filters,
with failure-detector traffic if it shows it. The session's transcript is read and
drawn in a thread (run/timeline.py's export_diagram), so the app keeps going; a note
says where the file is, or why there is none."""

from __future__ import annotations

import math
from pathlib import Path

from textual.app import App

from ..run.control import InputError, WriteError
from . import downloads

# Each format's name, its file's suffix, and what it is (for the palette).
FORMATS = {"svg": ("SVG", ".svg", "a space-time diagram drawn to scale (D)"),
           "mermaid": ("Mermaid", ".mmd", "a sequence diagram as Mermaid text"),
           "shiviz": ("ShiViz", ".log", "a log for the ShiViz visualizer")}


def export_window(app: App, fmt: str = "svg") -> None:
    lines, timeline = app.model.log, app.timeline
    if not lines or timeline is None:
        app.notify("Nothing to export yet.")
        return
    log = app.log_view
    nodes = (log.node_filter,) if log.node_filter is not None else ()
    types = (log.topic_filter,) if log.topic_filter in app.state.topics else ()
    start, stop = lines[0].t, timeline.now()
    name, suffix, _ = FORMATS[fmt]
    folder = downloads.folder_for(app, app.save_dir)
    target = free_name(folder, f"bully-{app.session.algorithm}-n{app.session.nodes}-"
                               f"t{math.floor(start)}-{math.ceil(stop)}s", suffix)

    def export() -> None:  # (in a thread)
        try:
            timeline.export_diagram(target, start, stop, fmt=fmt, nodes=nodes, types=types,
                                    detector=log.show_detector)
        except (InputError, WriteError) as e:
            app.call_from_thread(downloads.discard, app, folder)
            app.call_from_thread(app.notify, f"Could not export: {e}", severity="error")
            return
        app.call_from_thread(exported, app, folder, target, name)

    app.run_worker(export, thread=True, group="export")


def exported(app: App, folder: Path, target: Path, name: str) -> None:
    if not downloads.offered(app, folder, f"Exported the diagram ({name})"):
        app.notify(f"Exported the diagram to {target}")


def free_name(folder: Path, stem: str, suffix: str = ".svg") -> Path:
    """FOLDER/STEM.svg, or STEM-2.svg, STEM-3.svg, ...: the first not taken."""
    target, n = folder / f"{stem}{suffix}", 1
    while target.exists():
        n += 1
        target = folder / f"{stem}-{n}{suffix}"
    return target
