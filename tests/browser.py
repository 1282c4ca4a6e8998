"""A real browser for the tests: the system's Chromium (Debian's `chromium`), headless,
driven over the Chrome DevTools Protocol with aiohttp's websocket client (no browser is
downloaded: `find_chromium` says where it is, or None).

    async with Browser.open(url, width, height) as browser:
        await browser.until("document.body.classList.contains('-first-byte')")
        await browser.type("x")
        png = await browser.screenshot()

Each wait is for a condition the page can tell (a JavaScript expression, evaluated
until it is true), never for a time."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
from contextlib import asynccontextmanager

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WITHIN = 60.0  # seconds a condition may take on a busy machine


def find_chromium() -> str | None:
    """The system's Chromium (CHROMIUM names another), or None."""
    for name in (os.environ.get("CHROMIUM"), *CANDIDATES):
        if name and (path := shutil.which(name)):
            return path
    return None


class Browser:
    """One page of a headless Chromium, and its DevTools socket."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse):
        self.socket = socket
        self._ids = 0
        self._answers: dict[int, asyncio.Future] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str, width: int, height: int):
        """Chromium on `url` in a window of `width` x `height` pixels; closed on the way out."""
        profile = tempfile.mkdtemp(prefix="bully-chromium-")
        process = subprocess.Popen(
            [find_chromium(), "--headless=new", "--no-sandbox", "--no-first-run", "--disable-extensions",
             "--enable-unsafe-swiftshader",  # WebGL in software: xterm.js draws with it
             "--remote-debugging-port=0", f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
            start_new_session=True)
        try:
            port = await _devtools_port(process)
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                    page = next(t for t in await response.json() if t["type"] == "page")
                async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as socket:
                    browser = cls(socket)
                    try:
                        await browser.go(url)
                        yield browser
                    finally:
                        browser._reader.cancel()
        finally:
            process.kill()
            process.wait()
            shutil.rmtree(profile, ignore_errors=True)

    async def _read(self) -> None:
        async for message in self.socket:
            answer = json.loads(message.data)
            if (future := self._answers.pop(answer.get("id", answer.get("method")), None)) is not None \
                    and not future.done():
                future.set_result(answer)

    async def go(self, url: str) -> None:
        """Open `url`, and return once it has loaded (its scripts have run)."""
        await self.call("Page.enable")
        loaded = self._answers["Page.loadEventFired"] = asyncio.get_running_loop().create_future()
        await self.call("Page.navigate", url=url)
        await asyncio.wait_for(loaded, WITHIN)

    async def call(self, method: str, **params: object) -> dict:
        self._ids += 1
        future = self._answers[self._ids] = asyncio.get_running_loop().create_future()
        await self.socket.send_str(json.dumps({"id": self._ids, "method": method, "params": params}))
        answer = await asyncio.wait_for(future, WITHIN)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    async def evaluate(self, expression: str) -> object:
        result = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        return result["result"].get("value")

    async def until(self, expression: str, within: float = WITHIN) -> None:
        """Wait until `expression` is true in the page: a promise that resolves when it is
        (checked at each animation frame: the page's own clock, not a sleep here)."""
        waited = (f"new Promise(done => {{ const check = () => ({expression}) ? done(true) : "
                  "requestAnimationFrame(check); check(); })")
        try:
            await asyncio.wait_for(self.evaluate(waited), within)
        except TimeoutError:
            raise AssertionError(f"the page did not get to {expression!r} within {within:g} s") from None

    async def type(self, text: str) -> None:
        """Keys, as a user types them into the page's terminal."""
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        for char in text:
            await self.call("Input.dispatchKeyEvent", type="keyDown", key=char, text=char)
            await self.call("Input.dispatchKeyEvent", type="keyUp", key=char)

    async def screenshot(self) -> bytes:
        """The page as it is drawn now, as PNG."""
        return base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])


async def _devtools_port(process: subprocess.Popen) -> int:
    """The port Chromium chose, from the line it says on stderr once it listens ("DevTools
    listening on ws://127.0.0.1:PORT/..."); the rest of what it says is read and dropped."""
    loop = asyncio.get_running_loop()
    found = loop.create_future()

    def listen() -> None:
        for line in process.stderr:
            if line.startswith("DevTools listening on ") and not found.done():
                loop.call_soon_threadsafe(found.set_result, int(line.split(":")[2].split("/")[0]))
        if not found.done():
            loop.call_soon_threadsafe(found.set_exception, RuntimeError(f"chromium ended (status {process.wait()})"))

    threading.Thread(target=listen, daemon=True).start()
    return await asyncio.wait_for(found, WITHIN)
