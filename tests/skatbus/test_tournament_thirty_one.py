"""Thirty-one tournaments through the five services and a real nats-server, as a user runs
them: ``skat tournament --game thirty-one`` end to end (the results checked against the pure
engine's fold of the archived tables), an interrupt and ``--resume``, and a remote player's
seat next to one that never connects (its time-outs counted, its forfeit ranked last)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import statistics
import subprocess
import sys
from pathlib import Path

import msgspec
import nats
import pytest
from nats.aio.client import Client

from protocol import fairness
from protocol.events import TablePaused
from protocol.thirty_one import T31DealScored, T31Dealt, fold
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.tournament import TableFinished, TournamentConfig, TournamentCreated, TournamentFinished
from services.store import EventStore
from skatbus.bots import make_bot
from skatbus.local import play_game_table
from skatbus.player import RemotePlayer
from skatbus.replay import TableLog, read_archive
from skatbus.thirty_one_bots import RandomBot
from skatbus.tournament import TournamentLog, run_tournament
from tests.bus import Stack

pytestmark = pytest.mark.timeout(120)
SKAT = [sys.executable, "-m", "skatbus.cli"]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SKAT_NATS")}
T31 = "thirty-one"


async def _skat(*argv: str, timeout: float = 90) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(*SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def expected_places(log: TableLog) -> list[int]:
    """A finished table's places by hand from its scored deals (T27, T37, T38): the seats still
    in first (one survivor; several only at ``max_deals``, ranked by coins), then the others
    in the reverse order of their elimination, one more than the seats placed above them."""
    n = len(log.events[0].players)  # type: ignore[union-attr]
    out_deal, coins = [0] * n, [0] * n
    for event in log.events:
        if isinstance(event, T31DealScored):
            coins = list(event.coins)
            for seat in event.eliminated:
                out_deal[seat] = event.deal
    key = [(1, -out_deal[s]) if out_deal[s] else (0, -coins[s]) for s in range(n)]
    return [1 + sum(other < mine for other in key) for mine in key]


def check_results(run: Path, tables: int) -> dict[str, object]:
    """results.json against the archive: every table folds (the pure engine) to a finished
    game, its places are the hand-made ones and its ``table_finished``, and every standing is
    what those places give (place points = players - place, mean per table, its 95 % interval,
    wins, mean coins), ranked by them with a forfeit below every finisher."""
    results = json.loads((run / "results.json").read_text())
    archive = read_archive(run / "archive.jsonl")
    assert results["game"] == T31 and len(results["tables"]) == len(archive) == tables
    points: dict[str, list[int]] = {}
    wins: dict[str, int] = {}
    coins: dict[str, list[int]] = {}
    for finished in results["tables"]:
        log = archive[finished["table"]]
        state = fold(log.events)
        assert state.closed and state.complete and log.problem is None
        places = expected_places(log)
        assert finished["places"] == places == state.places() and finished["coins"] == state.coins
        players = state.players
        for seat, player in enumerate(players):
            points.setdefault(player, []).append(len(players) - places[seat])
            wins[player] = wins.get(player, 0) + (places[seat] == 1)
            coins.setdefault(player, []).append(state.coins[seat])
    rows = results["standings"]
    assert {r["player"] for r in rows} == set(points)
    for row in rows:
        mine = points[row["player"]]
        assert row["place_points"] == sum(mine) and row["tables"] == len(mine) == tables
        assert row["per_table"] == pytest.approx(statistics.mean(mine)) and row["wins"] == wins[row["player"]]
        ci95 = 1.96 * statistics.stdev(mine) / len(mine) ** 0.5 if len(mine) > 1 else None
        assert row["ci95"] == pytest.approx(ci95)
        assert row["mean_coins"] == pytest.approx(statistics.mean(coins[row["player"]]))
    order = [(r["forfeit"], -r["per_table"]) for r in rows]  # a forfeit below every finisher
    assert order == sorted(order)
    return results  # type: ignore[no-any-return]


async def test_a_thirty_one_tournament_of_built_in_bots_through_the_command(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    out = tmp_path / "runs"
    code, said, err = await _skat(
        "tournament", "--game", T31, "--nats", stack.url, "--id", "t31", "--coins", "1", "--min-knock", "5",
        "--groups", "1", "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    lines = said.splitlines()
    assert lines[0] == (
        "Tournament t31: heuristic, random, random-2; 3 Thirty-one tables of 3, each played to the last survivor "
        "(at most 500 deals), 1 coin a seat; min-knock 5 (duplicate: every set of deals once per seat rotation, "
        "alike until a table's first elimination)."
    )
    progress = [line for line in lines if " tables (" in line and "deals/s" in line]
    assert progress and progress[-1].startswith("3.0/3 tables (") and "place pts/table: " in progress[-1]
    assert any(line.split()[2:4] == ["place", "pts/table"] for line in lines)
    assert any("players at the table minus place" in line for line in lines)
    results = check_results(out / "t31", tables=3)
    assert results["config"]["rules"]["min_knock"] == 5 and results["config"]["rules"]["coins"] == 1  # type: ignore[index]
    # The tables are what the pure engine plays with the same bots and seeds: nothing timed out,
    # nothing was lost or played twice over the bus.
    archive = read_archive(out / "t31" / "archive.jsonl")
    rules = ThirtyOneRules(coins=1, min_knock=5, max_timeouts=5)
    for table, log in archive.items():
        players = log.events[0].players  # type: ignore[union-attr]
        # Seeds as every new tournament derives them (protocol.fairness; no nonces here).
        bots = [make_bot({"random-2": "random"}.get(p, p), fairness.bot_seed("skatbus", p), T31) for p in players]
        seed = fairness.group_seed("skatbus", "t31", 0, fairness.nonces_digest({}))
        assert play_game_table(T31, table, players, bots, rules, seed).log == log.events, table
    # Duplicate: the three rotations deal the same first deal, each entrant each hand once.
    first = {t: next(e for e in log.events if isinstance(e, T31Dealt)) for t, log in archive.items()}
    assert len({tuple(d.deck) for d in first.values()}) == 1 and len({tuple(d.order) for d in first.values()}) == 1
    deal = next(iter(first.values()))
    hands = {frozenset(deal.deck[s :: len(deal.order)][:3]) for s in range(3)}  # dealt one card at a time
    for entrant in ("heuristic", "random", "random-2"):
        held = {frozenset(first[t].deck[log.events[0].players.index(entrant) :: 3][:3]) for t, log in archive.items()}  # type: ignore[union-attr]
        assert held == hands, entrant
    # The tournament's own log names the game and its rules; every table finished once.
    tlog = await TournamentLog(nc).read("t31")
    created = tlog[0]
    assert isinstance(created, TournamentCreated) and created.config.game == T31
    assert created.config.table_rules() == rules
    finished = [e for e in tlog if isinstance(e, TableFinished)]
    assert sorted(f.table for f in finished) == sorted(archive) and isinstance(tlog[-1], TournamentFinished)
    ratings = json.loads((out / "ratings.json").read_text())
    assert {(p["game"], p["player"]) for p in ratings["players"]} == {
        (T31, p) for p in ("heuristic", "random", "random-2")
    }


async def test_an_interrupted_thirty_one_tournament_resumes_and_finishes(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """Ctrl-C pauses the open tables; ``--resume`` resumes them, plays them to their last
    survivor, and the results are the archived tables' (no table lost or played twice)."""
    out = str(tmp_path / "runs")
    argv = ["tournament", "--game", T31, "--nats", stack.url, "--id", "t31r", "--players", "4", "--groups", "2",
            "--no-duplicate", "--out", out]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*SKAT, *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    store = EventStore(nc)
    try:
        for _ in range(1200):
            if any(isinstance(s.event, T31DealScored) for s in await store.read("t31r-g0")):
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err_bytes = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    err = err_bytes.decode()
    assert proc.returncode == 128 + signal.SIGINT, err
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(f"resume with: skat tournament --resume t31r --out {out} --nats {stack.url}")
    )
    before = await TournamentLog(nc).read("t31r")
    assert not any(isinstance(e, TournamentFinished | TableFinished) for e in before), "interrupted too late"
    for table in ("t31r-g0", "t31r-g1"):
        assert isinstance((await store.read(table))[-1].event, TablePaused), table
    # A Skat option with the resume of a Thirty-one tournament: one line, nothing touched.
    code, _, said = await _skat("tournament", "--nats", stack.url, "--resume", "t31r", "--out", out, "--kontra")
    assert code == 2 and "it is a Thirty-one tournament, and --kontra is not one of its options" in said, said
    code, said, err = await _skat("tournament", "--nats", stack.url, "--resume", "t31r", "--out", out)
    assert code == 0, err
    assert "Resuming: Tournament t31r: heuristic, random, random-2, heuristic-2; 2 Thirty-one tables of 4" in said
    assert "Resumed 2 paused tables." in said
    check_results(tmp_path / "runs" / "t31r", tables=2)
    after = await TournamentLog(nc).read("t31r")
    assert sorted(e.table for e in after if isinstance(e, TableFinished)) == ["t31r-g0", "t31r-g1"]


async def test_a_remote_thirty_one_player_takes_a_seat_and_a_silent_one_forfeits(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """A remote entrant plays Thirty-one with its own bot (the updates it gets are Thirty-one's);
    one that never connects times out, is withdrawn after two turns in a row and ranks below
    every entrant that finished, with the warnings that say why."""
    remote_nc = await nats.connect(stack.url)
    visitor = RemotePlayer(remote_nc, "visitor", RandomBot("v"))  # type: ignore[arg-type]
    await visitor.start()
    await remote_nc.flush()
    config = TournamentConfig(
        id="t31v",
        entrants=["heuristic", "visitor", "ghost"],
        bots={"heuristic": "heuristic"},
        groups=1,
        duplicate=False,
        seed="t31v",
        game=T31,
        game_rules=msgspec.to_builtins(ThirtyOneRules(coins=1, turn_seconds=1.5, max_timeouts=2)),
    )
    try:
        results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    finally:
        await visitor.stop()
        await remote_nc.close()
    rows = {r["player"]: r for r in results["standings"]}
    assert [r["player"] for r in results["standings"]][-1] == "ghost" and rows["ghost"]["forfeit"]
    assert not rows["visitor"]["forfeit"] and rows["visitor"]["answered"] > 0 and not visitor.rejections
    assert rows["ghost"]["answered"] == 0 and rows["ghost"]["timeouts"] > 2
    assert [(f["player"], f["table"], f["missed"]) for f in results["forfeits"]] == [("ghost", "t31v-g0", 2)]
    assert any(w.startswith("ghost never connected") for w in results["warnings"])
    assert any(w.startswith("ghost forfeited: withdrawn at t31v-g0") for w in results["warnings"])
    assert results["heard"]["visitor"]["commands"] > 0 and results["heard"]["visitor"]["taken"] > 0
    check_results(tmp_path / "t31v", tables=1)
