"""examples/json_bot.py, the raw-JSON bot of docs/bots.md, plays a real tournament through the
services (as ``skat tournament --remote ID:json`` seats it), reads its table's game and rules
from its own views, and exits by itself when the tournament is over."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.bus import Stack
from tests.skatbus.test_bot_ends import Proc

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(180)
async def test_the_json_bot_knows_the_rules_and_ends_with_the_tournament(stack: Stack, tmp_path: Path) -> None:
    bot = await Proc.start(sys.executable, str(ROOT / "examples" / "json_bot.py"), "jo", stack.url)
    runner = None
    try:
        runner = await Proc.start(
            sys.executable, "-m", "skatbus.cli", "tournament", "--remote", "jo:json", "--nats", stack.url,
            "--rounds", "1", "--ramsch", "--kontra", "--out", str(tmp_path), "--no-web",
        )  # fmt: skip
        assert await runner.wait() == 0, runner.err[-10:]
        assert await bot.wait(30) == 0, bot.err[-10:]
    finally:
        await bot.stop()
        if runner is not None:
            await runner.stop()
    tid = next(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert bot.out[-1] == f"tournament {tid} is over\n", bot.out
    seen = [json.loads(line) for line in bot.out[:-1]]
    assert seen and all(s["table"].startswith(tid) for s in seen), seen
    for s in seen:
        assert s["game"] == "skat" and s["rules"]["ramsch"] is True and s["rules"]["kontra"] is True, s
        assert s["rules"]["rounds"] == 1
