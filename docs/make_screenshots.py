"""Regenerate the README's screenshots (Textual's own SVG export) and its example diagram.

    python docs/make_screenshots.py

The screenshots are taken on a frozen clock stepped forward, so they come out the same
every time: 80x24 with 7 nodes, a few seconds after the leader was crashed; the same
with the log drawn as the space-time diagram (d); 200x50 with 32 nodes; 100x30, the
split-brain scenario just after the monitor raised its alert. The diagram is
`bully-tui export` of classic at N = 4 where 4 crashes, 1 notices and 4 comes back
mid-election (SLE1).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.cli import main  # noqa: E402
from playground.cli.plan import plan  # noqa: E402
from playground.core.config import ClusterConfig  # noqa: E402
from playground.run.session import Session  # noqa: E402
from playground.ui.app import BullyApp  # noqa: E402
from tests.test_app import advance  # noqa: E402


async def shoot(name: str, size: tuple[int, int], session: Session, before: float, after: float,
                keys: tuple[str, ...] = ("x",)) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = BullyApp(session, paused=True, save_dir=tmp)
        async with app.run_test(size=size) as pilot:
            await advance(pilot, app, before)
            await pilot.press(*keys)
            await advance(pilot, app, after)
            await pilot.pause()
            (ROOT / "docs" / name).write_text(app.export_screenshot(title="bully-tui"))
            await app.action_quit()
    print(f"wrote docs/{name}")


def spacetime() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        transcript = str(Path(tmp) / "t.jsonl")
        assert main(["--headless", "--nodes", "4", "--delay", "1", "--probe-interval", "0", "--at", "10 crash 4",
                     "--at", "10 elect 1", "--at", "16 recover 4", "--until", "30", "--transcript", transcript]) == 0
        assert main(["export", transcript, "--format", "svg", "--from", "9", "-o", str(ROOT / "docs" / "spacetime.svg"),
                     "--overwrite"]) == 0


async def main_() -> None:
    spacetime()
    await shoot("screenshot-80x24.svg", (80, 24), Session(nodes=7), before=12, after=11)
    await shoot("screenshot-80x24-diagram.svg", (80, 24), Session(nodes=7), before=12, after=11, keys=("x", "d"))
    await shoot("screenshot-200x50.svg", (200, 50), Session(nodes=32, config=ClusterConfig(delay_min=1, delay_max=1)),
                before=12, after=11)
    split_brain = plan(["--scenario", str(ROOT / "scenarios" / "split-brain-short-timeout.scenario")]).session
    await shoot("screenshot-split-brain.svg", (100, 30), split_brain, before=21, after=0.2, keys=("4",))


if __name__ == "__main__":
    asyncio.run(main_())
