"""Tournaments through the services: reproducible, duplicate, resumable."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import nats
from nats.aio.client import Client

from protocol import fairness
from protocol.events import DealDealt
from protocol.skat.rules import Rules
from protocol.tournament import TournamentConfig, TournamentFinished
from services.main import LocalStack
from services.store import EventStore
from skatbus.tournament import TournamentLog, run_tournament
from tests.bus import Stack

# Named as `skat tournament --bots stepping-random,random,stepping-random` names them.
ENTRANTS = {"stepping-random": "stepping-random", "random": "random", "stepping-random-2": "stepping-random"}


def _config(tid: str, groups: int = 1, rounds: int = 1, duplicate: bool = True) -> TournamentConfig:
    return TournamentConfig(
        id=tid,
        entrants=list(ENTRANTS),
        bots=ENTRANTS,
        rules=Rules(rounds=rounds, seeger_fabian=True, turn_seconds=30),
        groups=groups,
        duplicate=duplicate,
        seed="tour",
        fair=fairness.SCHEME,  # as skat tournament makes every new tournament (the resume test runs it)
        commitment=fairness.commitment("tour"),
    )


async def test_a_small_duplicate_tournament(stack: Stack, nc: Client, tmp_path: Path) -> None:
    results = await run_tournament(nc, _config("small", groups=2), out_dir=tmp_path, out=io.StringIO())
    # 2 groups x 3 rotations, one round (3 deals) each: every entrant plays all 18 deals.
    assert len(results["tables"]) == 6
    assert {s["player"] for s in results["standings"]} == set(ENTRANTS)
    assert all(s["deals"] == 18 for s in results["standings"])
    assert sum(s["seeger_fabian"] for s in results["standings"]) == sum(
        sum(t["seeger_fabian"]) for t in results["tables"]
    )
    for name in ("results.json", "standings.csv", "archive.jsonl"):
        assert (tmp_path / "small" / name).stat().st_size > 0
    archive = [json.loads(line) for line in (tmp_path / "small" / "archive.jsonl").read_text().splitlines()]
    assert {a["table"] for a in archive} == {t["table"] for t in results["tables"]}
    # Duplicate: within a group every rotation gets the same cards, each entrant each hand once.
    store = EventStore(nc)
    for group in range(2):
        dealt = {}
        for r in range(3):
            table = f"small-g{group}r{r}"
            events = [s.event for s in await store.read(table)]
            dealt[r] = [e for e in events if isinstance(e, DealDealt)]
        for deal_index in range(3):
            hands = {tuple(map(tuple, dealt[r][deal_index].hands)) for r in range(3)}
            assert len(hands) == 1, "the rotated tables must play the same deal"
    tlog = await TournamentLog(nc).read("small")
    assert isinstance(tlog[-1], TournamentFinished)


async def test_same_seed_same_results_and_resume_after_a_kill(stack: Stack, nc: Client, tmp_path: Path) -> None:
    straight = await run_tournament(nc, _config("same", groups=2, rounds=2), out_dir=tmp_path / "a", out=io.StringIO())
    # The same tournament on a second, separate stack: identical standings.
    async with LocalStack() as other_url:
        other = await nats.connect(other_url)
        again = await run_tournament(
            other, _config("same", groups=2, rounds=2), out_dir=tmp_path / "b", out=io.StringIO()
        )
        await other.close()
    assert again["standings"] == straight["standings"]
    assert again["tables"] == straight["tables"]
    # Killed halfway, then resumed: the same results as the straight run.
    async with LocalStack() as third_url:
        cmd = [
            sys.executable,
            "-m",
            "skatbus.cli",
            "tournament",
            "--nats",
            third_url,
            "--id",
            "same",
            "--seed",
            "tour",
            "--bots",
            "stepping-random,random,stepping-random",
            "--groups",
            "2",
            "--rounds",
            "2",
            "--out",
            str(tmp_path / "c"),
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        third = await nats.connect(third_url)
        store = EventStore(third)
        for _ in range(600):
            stored = await store.read("same-g0r0") if await _exists(third) else []
            if sum(type(s.event).__name__ == "DealScored" for s in stored) >= 2:
                break
            await asyncio.sleep(0.02)
        proc.kill()
        proc.wait()
        before = await TournamentLog(third).read("same")
        assert before and not isinstance(before[-1], TournamentFinished), "killed too late to test a resume"
        resumed = await run_tournament(third, resume="same", out_dir=tmp_path / "c", out=io.StringIO())
        await third.close()
    assert resumed["standings"] == straight["standings"]
    assert resumed["tables"] == straight["tables"]


async def _exists(nc: Client) -> bool:
    return bool(await TournamentLog(nc).read("same"))


async def test_a_remote_player_takes_part(stack: Stack, nc: Client, tmp_path: Path) -> None:
    """Entrants not listed as built-in bots are remote players that connect by themselves."""
    from skatbus.bots import SteppingRandomBot
    from skatbus.player import RemotePlayer

    remote = RemotePlayer(nc, "visitor", SteppingRandomBot("v"))
    await remote.start()
    config = TournamentConfig(
        id="visit",
        entrants=["heuristic", "visitor", "random"],
        bots={"heuristic": "heuristic", "random": "random"},
        rules=Rules(rounds=1, seeger_fabian=True),
        groups=1,
        seed="visit",
    )
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    await remote.stop()
    assert {s["player"] for s in results["standings"]} == {"heuristic", "visitor", "random"}
    assert not remote.rejections
