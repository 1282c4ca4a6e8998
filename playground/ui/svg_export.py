"""`D`: the log's window as an SVG space-time diagram, beside the saved transcripts. The
window is what the log shows: from its first line's time to the moment shown, through
its node and message-type filters, with failure-detector traffic if it shows it. The
session's transcript is read and drawn in a thread (run/timeline.py's export_svg), so
the app keeps going; a note says where the file is, or why there is none."""

from __future__ import annotations

import math
from pathlib import Path

from textual.app import App

from ..run.control import InputError, WriteError


def export_window(app: App) -> None:
    lines, timeline = app.model.log, app.timeline
    if not lines or timeline is None:
        app.notify("Nothing to export yet.")
        return
    log = app.log_view
    nodes = (log.node_filter,) if log.node_filter is not None else ()
    types = (log.topic_filter,) if log.topic_filter in app.state.topics else ()
    start, stop = lines[0].t, timeline.now()
    target = free_name(app.save_dir, f"bully-{app.session.algorithm}-n{app.session.nodes}-"
                                     f"t{math.floor(start)}-{math.ceil(stop)}s")

    def export() -> None:  # (in a thread)
        try:
            timeline.export_svg(target, start, stop, nodes=nodes, types=types, detector=log.show_detector)
        except (InputError, WriteError) as e:
            app.call_from_thread(app.notify, f"Could not export: {e}", severity="error")
            return
        app.call_from_thread(app.notify, f"Exported the diagram to {target}")

    app.run_worker(export, thread=True, group="export")


def free_name(folder: Path, stem: str) -> Path:
    """FOLDER/STEM.svg, or STEM-2.svg, STEM-3.svg, ...: the first not taken."""
    target, n = folder / f"{stem}.svg", 1
    while target.exists():
        n += 1
        target = folder / f"{stem}-{n}.svg"
    return target
