"""A transcript as a space-time diagram, for people's notes: SVG, Mermaid, or a ShiViz log.

    bully-tui export FILE --format svg|mermaid|shiviz [-o OUT] [--from T] [--to T]
                          [--nodes K,...] [--types T,...]

One reading (`spacetime.py`: the transcript, streamed, into what a diagram draws,
through the filters), three writers: `svg.py` draws it to scale, `mermaid_shiviz.py`
tells it as text. This module is what the command and the app's `D` call.
"""

from __future__ import annotations

from .mermaid_shiviz import to_mermaid, to_shiviz
from .spacetime import Filters, collect
from .svg import AXES, to_svg

__all__ = ["AXES", "WRITERS", "Filters", "collect", "export"]

WRITERS = {"svg": to_svg, "mermaid": to_mermaid, "shiviz": to_shiviz}


def export(path: str, fmt: str, filters: Filters | None = None, axis: str = "scaled") -> str:
    diagram = collect(path, filters or Filters())
    return to_svg(diagram, axis) if fmt == "svg" else WRITERS[fmt](diagram)
