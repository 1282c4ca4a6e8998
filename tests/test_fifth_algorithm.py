"""Adding an algorithm touches its own module and one registry line: nothing in the
runtime, the monitor, the transcript or the UI names an algorithm, a status or a message.
Shown with a small algorithm of this test's own, registered the way protocol/__init__.py
registers the others, run headless, through a transcript, and in the app."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest

from playground.cli import main
from playground.record.reader import load
from playground.run.session import Session
from playground.ui.app import BullyApp
from protocol import ALGORITHMS, Message, MessageRole, Node, Status, StatusRole
from tests.test_app import advance, card_text, on_asyncio, palette


@dataclass(frozen=True, slots=True)
class Beam(Message):
    type: ClassVar[str] = "beam"
    role: ClassVar[MessageRole] = MessageRole.ANNOUNCEMENT


class Glow(Status):
    DARK = "dark", StatusRole.WAITING
    SHINING = "shining", StatusRole.NORMAL
    GUIDED = "guided", StatusRole.NORMAL


class Lighthouse(Node):
    """Each node shines its beam to all the others and, after T, follows the highest
    beam it has seen (its own included). No failure detection: a toy."""

    name = "lighthouse"
    title = "Lighthouse (a test's own)"
    messages = (Beam,)
    statuses = Glow

    def on_start(self) -> None:
        self.seen = {self.id}
        self.status = Glow.DARK
        self.announce_election()
        self.broadcast(self.others, Beam)
        self.set_timer("look", self.config.timeout)

    def on_message(self, src: int, msg: Message) -> None:
        self.seen.add(src)

    def on_timer(self, name: str) -> None:
        self.leader = max(self.seen)
        self.status = Glow.SHINING if self.leader == self.id else Glow.GUIDED

    def on_suspect(self) -> None:
        pass

    def variables(self) -> dict[str, object]:
        return {"seen": sorted(self.seen)}


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, Lighthouse.name, Lighthouse)  # the one registry line


def test_it_runs_headless_with_a_transcript_and_the_monitor(registered, tmp_path, capsys):
    path = tmp_path / "beams.jsonl"
    code = main(["--headless", "--algorithm", "lighthouse", "--nodes", "5", "--until", "20", "--transcript", str(path)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["violations"] == []
    assert summary["leader"] == {str(i): 5 for i in range(1, 6)} and summary["messages"] == {"beam": 20, "total": 20}
    loaded = load(str(path))
    assert {e.role for e in loaded.events if e.kind == "state"} == {"waiting", "normal"}
    assert [e.leader for e in loaded.events if e.kind == "agreement"] == [5]


def test_it_is_compared_like_any_other(registered, capsys):
    code = main(["--headless", "--compare", "--algorithm", "lighthouse", "--nodes", "3", "--format", "json"])
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and row["algorithm"] == "lighthouse"
    assert row["detect"] is None  # it has no failure detector: nobody notices the crash


@on_asyncio
async def test_it_shows_in_the_app_by_its_roles_and_names(registered, tmp_path):
    app = BullyApp(Session(algorithm="lighthouse", nodes=4), paused=True, save_dir=str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await advance(pilot, app, 1)
        assert "◇ dark" in card_text(app, 1)  # waiting, by its role
        await advance(pilot, app, 4)
        assert "● shining ★" in card_text(app, 4) and "● guided →4" in card_text(app, 1)
        assert any(line.text.endswith("Beam #0") for line in app.model.log)
        await pilot.press("1")
        assert "seen: 1, 2, 3, 4" in app.panel.shown_text()  # (a list that fits is shown whole)
        assert "Algorithm: classic" in await palette(app)
