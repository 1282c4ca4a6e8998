"""The web server of `bully-tui serve`: textual-serve's, one process of the app per tab,
with what a classroom needs beside it.

textual-serve (its Server and AppService) serves the page that draws an app with xterm.js
and, for each websocket the page opens, starts the command with Textual's web driver
(TEXTUAL_DRIVER), the page's keys going to its standard input and its screen coming back
from its standard output, in packets. This module keeps that, and adds:

  - each tab's process is started ahead, a spare that has imported and built the app
    and waits before it starts (ui/held_driver.py): a page takes it, and another is
    started, so a first screen waits for no Python start-up;
  - at most `max_sessions` tabs at once: the page of one more says so, and tries again
    by itself (`busy_page`); its websocket, if it comes anyway, is told so and closed;
  - a closed tab's process quits as on ctrl+q (the driver's "quit"), and is killed,
    with its process group, if it has not within QUIT_WITHIN; the real nodes of a real
    run stop by themselves once it is gone (real/node.py, `--parent`). Every process
    also gets SIGTERM if the server dies (PR_SET_PDEATHSIG), so none outlives it;
  - what a command says on standard error (a refusal's one line), or writes before its
    app starts (a command that draws no app, `--help`), is shown on the page once it
    ends, and the session ends: the page says so under the screen (templates/);
  - an app that ends and another that starts in the same process (the palette switched
    the algorithm) is one session: the driver's "exit" does not close the page, its end
    does, and the driver's prelude may come again;
  - a frame from the page that is not one the page sends closes that tab, with one line
    in the server's log: the server and the other tabs go on;
  - the page's websocket address is the one the browser used to reach the page, unless
    `public_url` says otherwise (a proxy in front), so `--host 0.0.0.0` works as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from aiohttp.http_exceptions import HttpProcessingError
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager
from textual_serve.server import Server, to_int

from ..run.quit_signals import QuitOnSignals
from .output import HELD_DRIVER

log = logging.getLogger("bully-tui serve")

PAGE = Path(__file__).with_name("templates")  # app_index.html, the page of a tab
QUIT_WITHIN = 1.2  # seconds a closed tab's app has to quit before it is killed (a real run's stop takes up to 1)
PRELUDE = b"__GANGLION__\n"  # the web driver's first line, each time an app starts in the process
SAID_AT_MOST = 16_384  # bytes of what a command says (stderr, or stdout before an app) shown on its page
CELLS = range(1, 1001)  # a screen's width or height, in cells, as a page may ask
PAGE_KEYS = ("stdin", "resize", "ping", "blur", "focus")  # what textual.js sends, as [key, data]


class Tab(AppService):
    """One tab's process: `argv` started with the web driver, its packets relayed to the
    page until it ends (the base's relay, with the differences the module's header says)."""

    def __init__(self, argv: list[str], download_manager: DownloadManager):
        super().__init__(" ".join(argv), write_bytes=_nowhere, write_str=_nowhere, close=_nowhere,
                         download_manager=download_manager)
        self.argv = argv
        self.number = 0  # the tab's number since the server started, for the log (0: a spare)
        self.said = ""  # what the command said when it ended, as shown on its page
        self.drawing = False  # its app has started (the driver's prelude came)
        self._stopping: asyncio.Future | None = None

    async def launch(self) -> Tab:
        """The process started, held until `take` (ui/held_driver.py)."""
        pipe = asyncio.subprocess.PIPE
        environment = self._build_environment()
        environment["TEXTUAL_DRIVER"] = HELD_DRIVER
        self._process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=pipe, stdout=pipe, stderr=pipe, env=environment,
            start_new_session=True,  # (its group killed at once, if need be)
            preexec_fn=_die_with_parent)  # (between fork and exec: one prctl call, which takes no lock)
        self._stdin = self._process.stdin
        return self

    async def take(self, websocket: web.WebSocketResponse, number: int, width: int, height: int) -> None:
        """The process given to the page on `websocket`, at its size: its app starts."""
        self.remote_write_bytes, self.remote_write_str, self.remote_close = \
            websocket.send_bytes, websocket.send_str, websocket.close
        self.number = number
        await self.send_meta({"type": "go", "width": width, "height": height})
        self._task = asyncio.create_task(self.run())

    async def discard(self) -> None:
        """A spare no page took: killed (nothing is made before its app starts)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)
        await self._process.wait()

    async def run(self) -> None:
        process = self._process
        stderr = asyncio.create_task(_read_some(process.stderr))
        before = b""
        try:
            before = await self._before_the_app(process.stdout)
            await self._relay(process.stdout)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass  # (the process has ended, or its output closed)
        await process.wait()
        said = (before + await stderr).decode("utf-8", "replace").strip()
        self.said = said
        for line in said.splitlines():
            log.info("tab %d: %s", self.number, line)
        with contextlib.suppress(ConnectionResetError, RuntimeError):  # (the tab is closed already)
            if said:
                text = said.replace("\r\n", "\n").replace("\n", "\r\n")
                await self.remote_write_bytes(f"\x1b[?1049l\x1b[2J\x1b[H\x1b[1m{text}\x1b[0m\r\n".encode())
            await self.remote_close()

    async def _before_the_app(self, stdout: asyncio.StreamReader) -> bytes:
        """What the command writes before its app starts (the driver's prelude): nothing,
        for an app; a command that draws none ends without it (IncompleteReadError
        then, carrying what it wrote)."""
        before = b""
        while (line := await stdout.readline()) != PRELUDE:
            if not line:
                raise asyncio.IncompleteReadError(before, None)
            before = (before + line)[:SAID_AT_MOST]
        self.drawing = True
        return before

    async def _relay(self, stdout: asyncio.StreamReader) -> None:
        """The driver's packets (a kind, D, M or P, a size and the payload) to the page,
        until the process ends."""
        handlers = {b"D": self.on_data, b"M": self.on_meta, b"P": self.on_packed}
        while True:
            kind = await stdout.readexactly(1)
            if kind == PRELUDE[:1]:  # another app starts in this process
                await stdout.readline()
                continue
            size = int.from_bytes(await stdout.readexactly(4), "big")
            payload = await stdout.readexactly(size)
            if kind in handlers:
                await handlers[kind](payload)

    async def on_data(self, payload: bytes) -> None:
        with contextlib.suppress(ConnectionResetError):  # (the tab is being closed: its app is told to quit)
            await self.remote_write_bytes(payload)

    async def on_meta(self, data: bytes) -> None:
        if json.loads(data).get("type") != "exit":  # (an app has ended: the process's end closes the page)
            await super().on_meta(data)

    async def stop(self) -> None:
        """The app told to quit (before it has started, while the command reads its
        arguments and imports: SIGTERM, its usual stop); killed, with its group, unless
        it has ended within QUIT_WITHIN. Returns once its process has ended and its relay
        is done, however many ask (the tab's handler, the server's shutdown)."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        if self._task is None:
            return
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        if self.drawing:
            await self.send_meta({"type": "quit"})
        else:
            with contextlib.suppress(ProcessLookupError):
                self._process.terminate()
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), QUIT_WITHIN)
        except TimeoutError:
            log.info("tab %d: its app did not quit within %g s: killed", self.number, QUIT_WITHIN)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
        await self._task


class Classroom(Server):
    """textual-serve's server for `argv` on the socket `sock` (bound already), at most
    `max_sessions` tabs at once; `public_url`: the address the pages name, where it is not
    the one the browser used."""

    def __init__(self, argv: list[str], title: str, sock: socket.socket, public_url: str | None, max_sessions: int):
        host, port = sock.getsockname()[:2]
        super().__init__(title, host=host, port=port, title=title, public_url=public_url, templates_path=PAGE)
        self.argv, self.sock, self.max_sessions = argv, sock, max_sessions
        self.given_url = public_url
        self.tabs: set[Tab] = set()
        self.opened = 0  # tabs opened since the start
        self.spare: asyncio.Task[Tab] | None = None  # the next tab's process, started ahead (ui/held_driver.py)
        self.stopping = False

    @property
    def full(self) -> bool:
        return len(self.tabs) >= self.max_sessions

    def initialize_logging(self) -> None:
        """One plain line on stderr for each thing worth the teacher's eye: a tab opened
        or closed, what its command said, a bad frame. (aiohttp's access log is off.)"""
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(OneLine("bully-tui serve: %(message)s"))
        for name, level in (("bully-tui serve", logging.INFO), ("textual-serve", logging.WARNING),
                            ("aiohttp", logging.ERROR)):
            logger = logging.getLogger(name)
            logger.handlers[:] = [handler]
            logger.setLevel(level)
            logger.propagate = False

    async def on_startup(self, app: web.Application) -> None:
        """(The command says where it serves: serve.py.)"""
        self._start_a_spare()

    async def on_shutdown(self, app: web.Application) -> None:
        self.stopping = True
        spare, self.spare = self.spare, None
        await asyncio.gather(*(tab.stop() for tab in list(self.tabs)), *([_discard(spare)] if spare else []))

    def _start_a_spare(self) -> None:
        if not self.stopping:
            self.spare = asyncio.create_task(Tab(self.argv, self.download_manager).launch())

    async def _a_process(self) -> Tab:
        """The spare (another started for the next tab), or a process started now."""
        spare, self.spare = self.spare, None
        self._start_a_spare()
        return await (spare or Tab(self.argv, self.download_manager).launch())

    def serve_until_stopped(self, started: Callable[[], None]) -> int:
        """Serve until a signal comes (SIGINT, SIGTERM, SIGHUP: QuitOnSignals), calling
        `started` once the pages are served; then every tab's process ended. The signal."""
        self.initialize_logging()

        async def main() -> int:
            stopping = asyncio.Event()
            signals = QuitOnSignals(stopping.set, drawn=False)
            runner = web.AppRunner(await self._make_app(), access_log=None, shutdown_timeout=QUIT_WITHIN)
            try:
                await runner.setup()
                await web.SockSite(runner, self.sock).start()
                started()
                await stopping.wait()
            finally:
                await runner.cleanup()
                signals.give_back()
            return signals.by

        return asyncio.run(main())

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if self.full:
            return busy_page(self.max_sessions)
        base = self.given_url or f"{request.scheme}://{request.host}"
        websocket = ("wss:" if base.startswith("https:") else "ws:") + base.split(":", 1)[1] + "/ws"
        context = {"font_size": to_int(request.query.get("fontsize", "16"), 16), "app_websocket_url": websocket,
                   "config": {"static": {"url": f"{base}/static/"}}, "application": {"name": self.title}}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        if self.full:
            log.info("a tab beyond the %d sessions allowed was refused", self.max_sessions)
            await websocket.send_bytes(f"\x1b[1m{busy_line(self.max_sessions)}\x1b[0m\r\n".encode())
            await websocket.close()
            return websocket
        width, height = (_cells(request.query.get(name), default) for name, default in (("width", 80), ("height", 24)))
        self.opened += 1
        number = self.opened
        tab = await self._a_process()
        self.tabs.add(tab)
        log.info("tab %d opened: process %d (%d of at most %d tabs)", number, tab._process.pid, len(self.tabs),
                 self.max_sessions)
        try:
            await tab.take(websocket, number, width, height)
            await self._process_messages(websocket, tab)
        finally:
            await tab.stop()
            self.tabs.discard(tab)
            log.info("tab %d closed", tab.number)
        return websocket

    async def _process_messages(self, websocket: web.WebSocketResponse, tab: Tab) -> None:
        """The page's frames to the tab's process, each checked (`page_frame`)."""
        async for message in websocket:
            if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                continue
            try:
                key, data = page_frame(message.data)
            except ValueError as e:
                log.info("tab %d: the page sent %s: the tab is closed", tab.number, e)
                await websocket.close()
                return
            if key == "stdin":
                await tab.send_bytes(data.encode("utf-8"))
            elif key == "resize":
                await tab.set_terminal_size(data["width"], data["height"])
            elif key == "ping":
                await websocket.send_json(["pong", data])
            else:
                await (tab.blur() if key == "blur" else tab.focus())


class OneLine(logging.Formatter):
    """A request that is not HTTP (aiohttp answers 400) is one line naming what was wrong
    with it, not a traceback: bad input, not a bug. (A bug keeps its traceback.)"""

    def formatException(self, exc_info) -> str:
        if isinstance(exc_info[1], HttpProcessingError):
            return ""
        return super().formatException(exc_info)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.exc_info and isinstance(error := record.exc_info[1], HttpProcessingError):
            what = " ".join(str(error.message).split()) if error.message else type(error).__name__
            text = f"{text.rstrip()}: {what[:120]} (answered {error.code})"
        return text


def page_frame(frame: str | bytes) -> tuple[str, Any]:
    """A frame the page sent, as [key, data]: ["stdin", TEXT], ["resize", {"width": W,
    "height": H}], ["ping", TEXT], ["blur"], ["focus"]. ValueError saying what else it is."""
    if isinstance(frame, bytes):
        raise ValueError(f"a binary frame ({len(frame):,} bytes)")
    try:
        envelope = json.loads(frame)
    except ValueError:
        raise ValueError(f"a frame that is not JSON ({_shown(frame)})") from None
    if not (isinstance(envelope, list) and 1 <= len(envelope) <= 2 and envelope[0] in PAGE_KEYS):
        raise ValueError(f"a frame that is not [KEY, DATA] with a key of {', '.join(PAGE_KEYS)} ({_shown(frame)})")
    key, data = envelope[0], envelope[1] if len(envelope) == 2 else None
    if key in ("stdin", "ping") and not isinstance(data, str):
        raise ValueError(f"a {key} frame without its text ({_shown(frame)})")
    if key == "resize" and not (isinstance(data, dict) and all(
            type(data.get(name)) is int and data[name] in CELLS for name in ("width", "height"))):
        raise ValueError(f"a resize frame without a width and a height of 1 to {CELLS[-1]} cells ({_shown(frame)})")
    return key, data


def busy_line(max_sessions: int) -> str:
    return (f"All {max_sessions} sessions of this server are in use: close a tab, or wait for one to end "
            "(the server's --max-sessions sets how many).")


def busy_page(max_sessions: int) -> web.Response:
    """The page of a tab beyond the limit: says so, and tries again every few seconds."""
    html = ("<!DOCTYPE html><html><head><meta charset='utf-8'><meta http-equiv='refresh' content='5'>"
            "<title>bully-tui: all sessions in use</title></head>"
            "<body style='background:#0c181f;color:#eee;font:18px monospace;padding:48px'>"
            f"<p>{busy_line(max_sessions)}</p><p>This page tries again every 5 seconds.</p></body></html>")
    return web.Response(text=html, content_type="text/html", status=503, headers={"Retry-After": "5"})


async def _discard(spare: asyncio.Task[Tab]) -> None:
    await (await spare).discard()


async def _nowhere(*_: object) -> None:
    """Where a spare's output would go: it has none before a page takes it."""


async def _read_some(stream: asyncio.StreamReader) -> bytes:
    """A stream to its end, keeping its first SAID_AT_MOST bytes."""
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[:SAID_AT_MOST]
    return kept


def _cells(text: str | None, default: int) -> int:
    return min(max(to_int(text or "", default), CELLS[0]), CELLS[-1])


def _shown(frame: str) -> str:
    return repr(frame if len(frame) <= 40 else frame[:40] + "...")


def _prctl() -> Callable[..., int] | None:
    """Linux's prctl, looked up before any fork (not in the child: dlopen takes locks)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None).prctl


PRCTL = _prctl()


def _die_with_parent() -> None:
    """In the child, before it runs the command: SIGTERM when the server's process ends,
    however it ends (PR_SET_PDEATHSIG; elsewhere the closed tab's quit is all)."""
    if PRCTL is not None:
        PRCTL(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
