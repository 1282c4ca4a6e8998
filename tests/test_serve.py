"""`bully-tui serve`: the app in a browser, tested as the page meets the server (a
websocket, the screen drawn by pyte: tests/serve_client.py), with no browser: a tab
draws the app and takes keys, `D` and `s` are offered as downloads, the layout holds
from 80x24 to 240x60, a closed tab's processes end (a real run's nodes too), one tab
beyond --max-sessions is refused with a page that says so, the served command's own
refusal shows on the page, a frame that is not the page's closes only that tab; and
serve's own bad options are one line. (tests/test_serve_browser.py: in a real browser.)"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from playground.cli import main
from playground.cli.output import HELD_DRIVER, WEB_DRIVER, need_a_terminal
from playground.core.config import InputError
from tests.serve_client import ROOT, Page, Served, children, gone


def run(coroutine):
    return asyncio.run(coroutine)


async def a_page(served: Served, http: aiohttp.ClientSession, width: int = 100, height: int = 30) -> Page:
    return await Page(http, served.url, width, height).open()


def test_a_tab_draws_the_app_takes_keys_and_offers_its_files_as_downloads():
    """(D, s and the palette's exports: each a download, nothing written on the server.)"""
    async def tab(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            page = await a_page(served, http)
            await page.shows("1 ● normal →3", "2 ● normal →3", "messages")
            await page.keys("x")  # the leader crashes
            await page.shows("3 ✖ down", "user: crash 3")
            await page.keys("D")
            await page.until(lambda p: len(p.deliveries) == 1, "a download offered after D")
            name, svg = await page.download(page.deliveries[0])
            assert name.startswith("bully-classic-n3-") and name.endswith(".svg") and svg.startswith(b"<svg")
            await page.keys("s")
            await page.until(lambda p: len(p.deliveries) == 2, "a download offered after s")
            name, transcript = await page.download(page.deliveries[1])
            header, *events = transcript.decode().splitlines()
            assert name.endswith(".jsonl") and json.loads(header)["format"] == "bully-transcript"
            assert any('"crash"' in line for line in events)
            await page.shows("a download")  # (the note says so)
            await page.keys("\x10")  # ctrl+p: the palette's exports, Mermaid here
            await page.shows("Search for commands")
            await page.picks("Export the log's window: Mermaid")
            await page.until(lambda p: len(p.deliveries) == 3, "a download offered from the palette")
            name, mermaid = await page.download(page.deliveries[2])
            assert name.endswith(".mmd") and mermaid.startswith(b"sequenceDiagram")
            process = await served.tab(1)
            await page.close()
            await gone([process])

    with Served(args=("--nodes", "3")) as served:
        run(tab(served))
    assert not list(ROOT.glob("bully-classic-n3-*"))  # (the server's folder, the tabs' too)


def test_the_layout_holds_from_80x24_to_240x60_and_the_palette_switches_the_algorithm_in_the_same_tab():
    async def tab(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{served.url}/?fontsize=24") as response:  # (a projector's)
                html = await response.text()
            assert 'data-font-size="24"' in html and f'"{served.url.replace("http", "ws")}/ws"' in html
            page = await a_page(served, http, 80, 24)
            await page.shows("7 ● normal", "classic Bully")
            for width, height in ((240, 60), (80, 24)):
                await page.resize(width, height)
                await page.until(lambda p: "7 ●" in p.text and p.screen.display[-2].strip() and "t=" in p.text,
                                 f"the app drawn at {width}x{height}")
            # Another algorithm: the app ends and another starts in the same process; the tab goes on.
            await page.keys("\x10")  # ctrl+p
            await page.shows("Search for commands")
            await page.picks("Algorithm: ring")
            await page.shows("Chang & Roberts ring", "7 ●")
            assert not page.closed
            await page.close()

    with Served(args=("--nodes", "7")) as served:
        run(tab(served))


def test_a_lesson_served_opens_at_its_first_step():
    async def tab(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            page = await a_page(served, http, 120, 40)
            await page.until(lambda p: re.search(r"─ 1/\d+ · ", p.text) and "5 ●" in p.text, "the lesson's first step")
            await page.close()

    with Served(args=("lesson", "bully")) as served:
        run(tab(served))


def test_a_tab_opens_on_the_lesson_menu_and_enter_opens_the_first_lesson_at_the_pages_size():
    async def tab(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            page = await a_page(served, http, 120, 40)
            await page.shows("a playground for leader election", "1 The Bully algorithm · 12 steps", "enter opens")
            await page.keys("\r")
            await page.until(lambda p: re.search(r"─ 1/12 · ", p.text) and "5 ●" in p.text, "the first lesson's pane")
            pane = next(line for line in page.screen.display if "─ 1/12 · " in line)
            assert pane.rindex("╮") > 100, page.text  # (the lesson's app at the page's size too, not 80x24)
            await page.keys("\x11")  # ctrl+q: the lesson left, the menu again
            await page.shows("bully-tui lesson bully", "enter opens")
            assert not page.closed
            await page.close()

    with Served() as served:
        assert " bully-tui lesson at http" in served.first_line
        run(tab(served))


def test_a_closed_tab_ends_its_process_and_its_real_nodes():
    async def tab(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            page = await a_page(served, http)
            await page.shows("3 ● normal")
            app = await served.tab(1)
            nodes = children(app)
            assert len([pid for pid in nodes if "node" in _command(pid)]) == 3
            await page.close()
            await gone([app, *nodes])

    with Served(args=("--real", "--nodes", "3")) as served:
        run(tab(served))
        status, said = served.stop()
    assert status == 130 and said.splitlines()[-1] == "bully-tui: interrupted"
    assert "tab 1 closed" in said


def test_a_tab_beyond_max_sessions_gets_a_page_saying_so_and_the_server_stays_up():
    async def tabs(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            first = await a_page(served, http)
            await first.shows("3 ● normal")
            async with http.get(served.url) as response:
                assert response.status == 503 and "sessions of this server are in use" in await response.text()
            second = await a_page(served, http)
            await second.until(lambda p: p.closed, "the tab beyond the limit closed")
            assert "in use" in second.text
            await first.close()
            await served.said("tab 1 closed")
            third = await a_page(served, http)  # a place is free again
            await third.shows("3 ● normal")
            await third.close()

    with Served("--max-sessions", "1", args=("--nodes", "3")) as served:
        run(tabs(served))


def test_the_served_commands_refusal_shows_on_the_page_and_garbage_frames_close_only_their_tab():
    async def refused(served: Served) -> None:
        async with aiohttp.ClientSession() as http:
            async with http.get(served.url) as response:  # (behind a proxy: the page names its address)
                assert 'data-session-websocket-url="wss://class.example.org/ws"' in await response.text()
            page = Page(http, served.url)  # (the address the proxy would pass on to it)
            await page.open()
            await page.until(lambda p: p.closed, "the tab closed")
            assert "bully-tui: error: unknown option --nodez (bully-tui --help lists them)" in page.text

    async def garbage(served: Served) -> None:
        # (each tab's app would run on: the garbage is what closes it)
        async with aiohttp.ClientSession() as http:
            for frame in ("garbage", '["resize", {"width": 0, "height": 24}]', '["stdin", 7]', "[]",
                          '{"stdin": "x"}', '["exec", "rm"]', b"\x00" * 10):
                page = await a_page(served, http)
                await (page.ws.send_bytes(frame) if isinstance(frame, bytes) else page.send(frame))
                await page.until(lambda p: p.closed, f"the tab that sent {frame!r} closed")
            host, port = served.url.removeprefix("http://").split(":")
            for junk in (b"\x00\xffgarbage\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                         b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"):
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(junk)
                assert (await reader.read(12)).endswith(b" 400")  # (then it closes the connection)
                writer.close()
            await served.said("Invalid character in Content-Length")
            await served.said("tab 7 closed")

    with Served("--public-url", "https://class.example.org/", args=("--nodez", "3")) as served:
        run(refused(served))
    with Served(args=("--nodes", "1")) as served:
        run(garbage(served))
        status, said = served.stop()
    assert status == 130
    assert said.count("the page sent") == 7 and "not JSON ('garbage')" in said and "a binary frame (10 bytes)" in said
    assert "Traceback" not in said and "Invalid HTTP version" in said


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


# --- serve's own arguments -----------------------------------------------------------------


@pytest.mark.parametrize("argv, line", [
    (["--port", "70000"], "--port must be from 0 to 65535, not 70000"),
    (["--port", "http"], "--port must be a whole number, not 'http'"),
    (["--max-sessions", "0"], "--max-sessions must be from 1 to 1000, not 0"),
    (["--public-url", "ftp://example.org"], "--public-url must be an address like http://HOST:PORT"),
    (["--host", "no.such.host.invalid"], "--host 'no.such.host.invalid' is no address of this machine"),
    (["--", "serve"], "serve cannot serve itself"),
    (["--fontsize", "20"], "unknown option --fontsize"),
    (["lesson"], "unexpected argument 'lesson'"),
])
def test_bad_options_are_one_line(capsys, argv, line):
    assert main(["serve", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith(f"bully-tui: error: {line}")


def test_a_port_in_use_is_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"bully-tui: error: port {port} on 127.0.0.1 is in use (another --port, or 0 for a free one)\n"


def test_the_server_imports_neither_textual_nor_the_runtime():
    """Its tabs' processes draw the app; the server relays their bytes. Through the control
    surface it imported the runtime and Textual, a quarter of a second at each start."""
    script = "import json, sys; import playground.cli.serve, playground.cli.web_server; print(json.dumps(list(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)
    modules = json.loads(done.stdout or "null")
    assert modules and "playground.cli.web_server" in modules, done.stderr
    assert not [m for m in modules if m.split(".")[0] in ("textual", "trio") or m.startswith(("playground.ui", "playground.run.control"))]


def test_the_web_driver_is_a_screen_and_a_pipe_still_is_not(monkeypatch):
    for driver in (None, "textual.drivers.headless_driver:HeadlessDriver"):
        if driver is None:
            monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
        else:
            monkeypatch.setenv("TEXTUAL_DRIVER", driver)
        with pytest.raises(InputError, match="must be a terminal"):
            need_a_terminal("the live app draws on the terminal", "use --headless")  # (pytest's stdin is no terminal)
    for driver in (WEB_DRIVER, HELD_DRIVER):  # (textual-serve's; serve's own, held until a page takes the process)
        monkeypatch.setenv("TEXTUAL_DRIVER", driver)
        need_a_terminal("the live app draws on the terminal", "use --headless")
    # And as a command: a pipe is refused, the web driver is not asked about.
    refused = subprocess.run([sys.executable, "-m", "playground", "--nodes", "3"], cwd=ROOT, capture_output=True,
                             text=True, stdin=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"}, check=False)
    assert refused.returncode == 2 and "standard input and output must be a terminal" in refused.stderr
