"""The driver `bully-tui serve` starts its tabs' apps with: Textual's web driver, held
before the app starts until the server gives the process a tab.

A tab's first screen waits mostly for Python to start and import the app (over a second
on a busy machine). So the server starts each process ahead of time, a spare, which
imports everything, builds the app and then waits here, before the app is mounted and
its run begins (a live run's clock starts at mount). When a page opens, the server
hands it the spare and sends one packet on its standard input, the driver's packet
format: "M", a 4-byte size, and {"type": "go", "width": W, "height": H}, the page's size;
only those bytes are read here, and what follows is the page's, for the driver's own
reader. An app started again in the same process (the palette switched the algorithm,
the lesson menu opened a lesson) does not wait: only the first is held; it starts at
the page's latest size (a driver of its own would start at 80x24)."""

from __future__ import annotations

import json
import os
import sys

from textual.drivers.web_driver import WebDriver


class HeldWebDriver(WebDriver):
    held = False  # (the process's first app has waited: the next ones do not)
    page_size: tuple[int, int] | None = None  # the page's latest, for the process's next app

    def start_application_mode(self) -> None:
        if not HeldWebDriver.held:
            HeldWebDriver.held = True
            go = json.loads(_read_packet(sys.__stdin__.fileno()))
            HeldWebDriver.page_size = (int(go["width"]), int(go["height"]))
        self._size = HeldWebDriver.page_size
        super().start_application_mode()

    def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
        super().on_meta(packet_type, payload)
        if packet_type == "resize":
            HeldWebDriver.page_size = self._size


def _read_packet(fd: int) -> bytes:
    """One packet's payload, reading exactly its bytes from `fd` (nothing of the next)."""
    head = _read_exactly(fd, 5)
    return _read_exactly(fd, int.from_bytes(head[1:], "big"))


def _read_exactly(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:  # the server has gone before giving a tab
            raise SystemExit(0)
        data += chunk
    return data
