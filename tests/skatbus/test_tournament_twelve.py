"""The issue's whole trial, as a user runs it: twelve entrants, three series, through the services.

``skat tournament`` with nine built-in bots, two remote bots (``skat bot`` processes that connect
with the key files the tournament prints) and one person, who plays every one of her turns by
clicks in a real headless chromium at the seat address printed for her alone. Then the results
on disk are read as an organiser would, and ``skat verify`` must say ``verified``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.skatbus.cdp import Browser, chromium
from tests.skatbus.commands import stop_gently
from tests.skatbus.test_web import CHOOSE, _pick

TURN = CHOOSE.replace(
    "if (document.getElementById('where').textContent.includes('table closed')) return {closed: true};", ""
)
"""What the person sees when it is her turn. Not whether the table is closed: her table of one
series closes, and her next table's prompt comes on the same page."""

pytestmark = [
    pytest.mark.skipif(chromium() is None, reason="needs chromium (Debian's chromium package)"),
    pytest.mark.timeout(900),
]

BOTS = "heuristic,random,stepping-random,heuristic,random,stepping-random,heuristic,random,stepping-random"


async def _lines(
    proc: subprocess.Popen[str], patterns: dict[str, str], timeout: float = 120.0
) -> dict[str, re.Match[str]]:
    """The first line of the tournament's output matching each pattern, whatever their order."""
    assert proc.stdout is not None
    found: dict[str, re.Match[str]] = {}
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while len(found) < len(patterns):
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), max(0.1, end - loop.time()))
        if not line:
            raise AssertionError(f"the tournament ended before printing {sorted(set(patterns) - set(found))}")
        for name, pattern in patterns.items():
            match = re.search(pattern, line)
            if match and name not in found:
                found[name] = match
    return found


async def test_twelve_entrants_two_remote_bots_and_a_person_play_three_series_that_verify(tmp_path: Path) -> None:
    env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
    argv = [sys.executable, "-m", "skatbus.cli", "tournament", "--bots", BOTS, "--series", "3", "--rounds", "1"]
    argv += ["--remote", "alice", "--remote", "bob", "--remote", "carol", "--human", "carol"]
    argv += ["--turn-seconds", "90", "--nonce-seconds", "20", "--out", str(tmp_path / "runs")]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, text=True, env=env)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        said = await _lines(
            proc,
            {
                "tid": r"^Tournament (t-[\w-]+): ",
                "commitment": r"^Commitment: ([0-9a-f]{64})",
                "alice": r"Remote player alice: connect to (\S+), e\.g\. .* --creds (\S+)",
                "bob": r"Remote player bob: connect to (\S+), e\.g\. .* --creds (\S+)",
                "carol": r"carol plays in the browser at: (http://127\.0\.0\.1:\d+/play/carol\?token=\S+)",
            },
        )
        tid, commitment, seat = said["tid"][1], said["commitment"][1], said["carol"][1]
        for player in ("alice", "bob"):
            cmd = [sys.executable, "-m", "skatbus.cli", "bot", "heuristic", "--player", player]
            bots.append(subprocess.Popen([*cmd, "--nats", said[player][1], "--creds", said[player][2]], env=env))
        assert proc.stdout is not None
        rest = asyncio.ensure_future(asyncio.to_thread(proc.stdout.read))  # a full pipe would stop the run
        async with Browser() as browser:
            await browser.goto(seat)
            moves = 0
            while proc.poll() is None:
                try:
                    choice = await browser.wait_for(TURN, timeout=2.0)
                except TimeoutError:
                    continue  # not her turn (or between her tables): the tournament goes on
                how, selector = _pick(choice)
                await browser.click(selector)
                if how == "card" and "discard" in [a["type"] for a in choice["actions"]]:
                    continue
                try:
                    await browser.wait_for(
                        "document.body.dataset.yourTurn !== '1' || "
                        f"Number(document.body.dataset.prompt) > {choice['prompt']}",
                        timeout=15,
                    )
                except TimeoutError:
                    continue  # the click missed (the page drew itself anew under it): as a person would, again
                moves += 1
        assert await asyncio.to_thread(proc.wait, 60) == 0
        assert moves > 5, "the person hardly played"
        assert "Signed:  by " in await rest
    finally:
        stop_gently(proc)
        for bot in bots:
            stop_gently(bot)
    run = tmp_path / "runs" / tid
    results = json.loads((run / "results.json").read_text())
    assert len(results["standings"]) == 12 and [s["series"] for s in results["series"]] == [1, 2, 3]
    by_player = {s["player"]: s for s in results["standings"]}
    for player in ("alice", "bob", "carol"):
        assert by_player[player]["answered"] > 0 and not by_player[player]["forfeit"], by_player[player]
    assert by_player["carol"]["timeouts"] == 0, "the person's clicks came in time"
    # The remote bots and the person's seat gave nonces, and the deals came from them and the seed.
    assert results["fairness"]["commitment"] == commitment
    assert sorted(results["fairness"]["nonces"]) == ["alice", "bob", "carol"]  # her seat gives one too
    assert results["crosstable"]["carol"]
    said = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "verify", str(run)], capture_output=True, text=True, env=env, timeout=120
    )
    assert said.returncode == 0 and said.stdout.splitlines()[-1].startswith(f"verified: {tid}, 12 tables"), said
