"""`bully-tui serve` as a browser meets it, without a browser: the server started as a
process (`Served`), and a tab as the page's script (textual-serve's textual.js) is to the
server (`Page`): a websocket to /ws?width=W&height=H, the keys sent as ["stdin", TEXT], a
size as ["resize", {"width": W, "height": H}]; the screen's bytes come back as binary
frames, drawn here by a terminal emulator (pyte), and the server's other words as JSON
text frames (["deliver_file_start", KEY]: a download, fetched at /download/KEY).

Nothing here sleeps for a time: each wait is for a condition (a frame came and the
screen shows it, a process is gone), with a deadline that is generous, for a busy
machine. For the suite (tests/test_serve.py) and the benchmark (bench/serve.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp
import pyte

ROOT = Path(__file__).resolve().parent.parent
WITHIN = 60.0  # seconds a condition may take on a busy machine before the wait fails
ESCAPES = re.compile(rb"\x1b(?:\[[0-9;?<=>$]*[ -/]*[@-~]|[()][A-Z0-9]|[=>78])")  # CSI, charset, keypad


class Served:
    """`bully-tui serve --port 0 OPTIONS -- ARGS` as a process, its address read from its
    first line; stopped (SIGINT) by `stop`, which returns its status and its stderr."""

    def __init__(self, *options: str, args: tuple[str, ...] = ()):
        argv = [sys.executable, "-m", "playground", "serve", "--port", "0", *options, *(("--", *args) if args else ())]
        self.process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.first_line = self.process.stdout.readline()  # (blocks until it serves: no deadline needed, it ends or says)
        if " at http" not in self.first_line:
            self.process.kill()
            raise AssertionError(f"serve did not start: {self.first_line!r} {self.process.stderr.read()!r}")
        listening = re.search(r"\(listening on (\S+) port (\d+)\)", self.first_line)  # (behind --public-url)
        self.url = f"http://{listening[1]}:{listening[2]}" if listening else \
            self.first_line.split(" at ", 1)[1].split(",", 1)[0].split(" ", 1)[0]
        self.lines: list[str] = []  # what it said on stderr so far
        self._said = threading.Condition()
        self._listener = threading.Thread(target=self._listen, daemon=True)
        self._listener.start()

    def _listen(self) -> None:
        for line in self.process.stderr:
            with self._said:
                self.lines.append(line.rstrip("\n"))
                self._said.notify_all()

    async def said(self, text: str, within: float = WITHIN) -> None:
        """Wait until a line it said holds `text`."""
        def heard() -> bool:
            with self._said:
                return self._said.wait_for(lambda: any(text in line for line in self.lines), within)

        assert await asyncio.to_thread(heard), f"serve did not say {text!r} within {within:g} s: {self.lines}"

    async def tab(self, number: int) -> int:
        """The process of tab `number` (from 1), once it has opened."""
        await self.said(f"tab {number} opened: process ")
        line = next(line for line in self.lines if f"tab {number} opened: process " in line)
        return int(line.split("process ", 1)[1].split()[0])

    def stop(self) -> tuple[int, str]:
        """SIGINT, and the process ended: its status and all it said on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(WITHIN)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
        self._listener.join(WITHIN)
        return self.process.returncode, "\n".join(self.lines)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


class Page:
    """One tab: its websocket, the screen it draws (`text`), the downloads it was
    offered (`deliveries`), whether the server closed it (`closed`)."""

    def __init__(self, http: aiohttp.ClientSession, url: str, width: int = 100, height: int = 30, draw: bool = True):
        """`draw`: the screen drawn by pyte; without, `text` is what came since `forget`,
        its escape sequences taken out (cheap: for many tabs at once, on a busy machine)."""
        self.http, self.url, self.draw = http, url, draw
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.ByteStream(self.screen)
        self.unread: list[bytes] = []  # what came and `text` has not taken yet (taken when looked at)
        self.plain = ""  # without `draw`: what came since `forget`, as text
        self.deliveries: list[str] = []
        self.changed = asyncio.Event()  # set by every frame, and when the socket closes
        self.closed = False
        self.frames = 0  # binary frames received
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task | None = None

    async def open(self) -> Page:
        width, height = self.screen.columns, self.screen.lines
        self.ws = await self.http.ws_connect(f"{self.url.replace('http', 'ws', 1)}/ws?width={width}&height={height}")
        await self.send(["resize", {"width": width, "height": height}])  # (as the page does once open)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        async for message in self.ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.unread.append(message.data)
                self.frames += 1
            elif message.type == aiohttp.WSMsgType.TEXT:
                key, *data = json.loads(message.data)
                if key == "deliver_file_start":
                    self.deliveries.append(data[0])
            self.changed.set()
        self.closed = True
        self.changed.set()

    async def send(self, frame: object) -> None:
        await self.ws.send_str(frame if isinstance(frame, str) else json.dumps(frame))

    async def keys(self, text: str) -> None:
        await self.send(["stdin", text])

    async def resize(self, width: int, height: int) -> None:
        _ = self.text  # (what came before, drawn at the old size)
        self.screen.resize(height, width)
        await self.send(["resize", {"width": width, "height": height}])

    @property
    def text(self) -> str:
        """The screen as it is, what has come drawn (only now: the reader stays free to
        answer the server's pings, however busy the machine)."""
        if self.unread:
            data = b"".join(self.unread)
            self.unread.clear()
            if not self.draw:
                self.plain += ESCAPES.sub(b"", data).decode("utf-8", "replace")
                return self.plain
            self.stream.feed(data)
        return self.plain if not self.draw else "\n".join(self.screen.display)

    def forget(self) -> None:
        """Without `draw`: what came so far is forgotten (`text` holds what comes next)."""
        self.unread.clear()
        self.plain = ""

    async def until(self, ok, what: str, within: float = WITHIN) -> float:
        """Wait until `ok(self)` holds, checked after each frame; the seconds it took.
        AssertionError saying `what`, and the screen, if it has not within `within`."""
        start = time.monotonic()
        deadline = start + within
        while not ok(self):
            if self.closed:
                raise AssertionError(f"the tab closed ({self.ws.close_code}, {self.ws.exception()!r}) before {what}:\n{self.text}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise AssertionError(f"not {what} within {within:g} s:\n{self.text}") from None
        return time.monotonic() - start

    async def shows(self, *texts: str, within: float = WITHIN) -> float:
        return await self.until(lambda page: all(t in page.text for t in texts), f"showing {texts}", within)

    async def picks(self, option: str) -> None:
        """In the open command palette, `option` typed and taken. The query is echoed
        before the list has followed it (on a busy machine, a while before), and enter
        takes the option highlighted then: it is pressed once the one option left is
        `option` (its words before the colon shown twice: the query, the option)."""
        await self.keys(option)
        kind = option.split(":")[0] + ":"
        await self.until(lambda page: page.text.count(kind) == page.text.count(option) == 2,
                         f"the palette's list narrowed to {option!r}")
        await self.keys("\r")

    async def download(self, key: str) -> tuple[str, bytes]:
        """A download offered: its file name (Content-Disposition) and its bytes."""
        async with self.http.get(f"{self.url}/download/{key}") as response:
            assert response.status == 200, response.status
            return response.headers["Content-Disposition"].split("filename=", 1)[1], await response.read()

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            await self._reader


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


async def gone(pids: list[int], within: float = WITHIN) -> float:
    """Wait until every one of `pids` has ended (a pidfd becomes readable then, Linux
    5.3 and later: processes that are not our children too); the seconds it took."""
    start, loop = time.monotonic(), asyncio.get_running_loop()
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # (ended already)
        ended = asyncio.Event()
        loop.add_reader(fd, ended.set)
        try:
            await asyncio.wait_for(ended.wait(), max(0.0, start + within - time.monotonic()))
        except TimeoutError:
            raise AssertionError(f"process {pid} still runs after {within:g} s") from None
        finally:
            loop.remove_reader(fd)
            os.close(fd)
    return time.monotonic() - start
