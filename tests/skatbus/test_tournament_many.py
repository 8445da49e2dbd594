"""Tournaments of many entrants through the services: series, duplicate across tables, fair deals.

Real nats-server, real services. Each tournament is small (one round a table) so that the whole
file stays quick; what is checked is structural: who sat where, which tables shared deals, what
the tournament's log and results say, and that the deals follow from the committed seed and the
nonces as protocol.fairness says.
"""

from __future__ import annotations

import asyncio
import io
import json
from itertools import combinations
from pathlib import Path

import msgspec
from nats.aio.client import Client

from protocol import fairness, seating
from protocol.events import DealDealt, TableOpened
from protocol.skat.rules import Rules
from protocol.thirty_one.events import T31Dealt
from protocol.tournament import (
    NonceGiven,
    NoncesClosed,
    SeriesDrawn,
    TournamentConfig,
    TournamentCreated,
    TournamentFinished,
)
from services.store import EventStore
from skatbus.sdk import play
from skatbus.signing import load_or_create_key, public_key_of
from skatbus.tournament import TournamentLog, run_tournament
from skatbus.verify import verify_run
from tests.bus import Stack

BOTS = ["heuristic", "random", "stepping-random", "random-2", "stepping-random-2", "heuristic-2", "random-3"]


def _skat(tid: str, entrants: list[str], series: int = 2, **extra: object) -> TournamentConfig:
    bots = {e: e.rsplit("-", 1)[0] if e[-1].isdigit() else e for e in entrants if not e.startswith("remote")}
    seed = fairness.new_server_seed()
    return TournamentConfig(
        id=tid,
        entrants=entrants,
        bots=bots,
        rules=Rules(rounds=1, seeger_fabian=True, turn_seconds=20),
        series=series,
        fair=fairness.SCHEME,
        seed=seed,
        commitment=fairness.commitment(seed),
        **extra,  # type: ignore[arg-type]
    )


async def _dealt(store: EventStore, table: str) -> list[list[list[int]]]:
    return [[list(h) for h in s.event.hands] for s in await store.read(table) if isinstance(s.event, DealDealt)]


async def test_seven_entrants_sit_at_a_table_of_four_and_one_of_three_sharing_the_deals(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    config = _skat("many7", BOTS)
    key = load_or_create_key(tmp_path / "signing.nk")
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO(), sign_key=key)
    store = EventStore(nc)
    events = await TournamentLog(nc).read("many7")
    created = events[0]
    assert isinstance(created, TournamentCreated)
    assert isinstance(events[1], NoncesClosed) and events[1].nonces == {}
    assert isinstance(events[-1], TournamentFinished)
    tables = created.tables
    for series in (1, 2):
        specs = [t for t in tables if t.series == series]
        # 7 = 4 + 3: everyone once per series, the dealer of the table of 4 sits out.
        assert sorted(len(t.players) for t in specs) == [3, 4]
        assert sorted(p for t in specs for p in t.players) == sorted(BOTS)
        # Duplicate across tables: both tables play the same cards in the deals both have.
        four, three = sorted(specs, key=lambda t: -len(t.players))
        deals4, deals3 = await _dealt(store, four.table), await _dealt(store, three.table)
        assert len(deals4) == 4 and len(deals3) == 3
        assert deals4[:3] == deals3
        # The table seed follows from the server seed, the group and the (empty) nonces.
        opened = [s.event for s in await store.read(three.table)][0]
        assert isinstance(opened, TableOpened)
        assert opened.seed == fairness.group_seed(config.seed, "many7", series, fairness.nonces_digest({}))
    # The two series play different deals.
    s1 = await _dealt(store, next(t.table for t in tables if t.series == 1))
    s2 = await _dealt(store, next(t.table for t in tables if t.series == 2))
    assert s1[0] != s2[0]
    # Results: overall and per-series standings, a crosstable of the pairs that met, the reveal.
    assert {s["player"] for s in results["standings"]} == set(BOTS)
    assert [s["series"] for s in results["series"]] == [1, 2]
    met = {frozenset(p) for t in tables for p in combinations(t.players, 2)}
    cross = results["crosstable"]
    assert {frozenset((a, b)) for a in cross for b in cross[a]} == met
    for a, b in combinations(BOTS, 2):
        if b in cross.get(a, {}):
            assert cross[a][b]["ahead"] == cross[b][a]["behind"]
    fair = results["fairness"]
    assert fair["seed"] == config.seed and fair["commitment"] == fairness.commitment(config.seed)
    assert results["schedule"]["series"] == [[t.players for t in tables if t.series == s] for s in (1, 2)]
    run = tmp_path / "many7"
    assert [json.loads(line)["type"] for line in (run / "tournament.jsonl").read_text().splitlines()][0] == (
        "tournament_created/1"
    )
    # What the services wrote checks out: seed, deals, rules, results and the signature.
    checked = verify_run(run, expect_key=public_key_of(key))
    assert checked.problems == [] and checked.tables == 4


async def test_an_entrant_that_never_connects_forfeits_and_the_next_series_is_drawn_without_it(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    entrants = ["remote-ghost", *BOTS[:6]]
    config = _skat("ghost", entrants, series=2, duplicate=False)
    config = msgspec.structs.replace(
        config, rules=Rules(rounds=1, seeger_fabian=True, turn_seconds=1.0, max_timeouts=1), nonce_seconds=0.5
    )
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    events = await TournamentLog(nc).read("ghost")
    drawn = [e for e in events if isinstance(e, SeriesDrawn)]
    assert [d.series for d in drawn] == [2]
    assert "remote-ghost" in drawn[0].reason
    assert sorted(p for t in drawn[0].tables for p in t.players) == sorted(BOTS[:6])
    ghost = next(s for s in results["standings"] if s["player"] == "remote-ghost")
    assert ghost["forfeit"] and results["standings"][-1]["player"] == "remote-ghost"
    assert results["schedule"]["redrawn"] == {"2": drawn[0].reason}
    assert any("remote-ghost" in w for w in results["warnings"])


async def test_a_remote_entrants_nonce_goes_into_every_deal(stack: Stack, nc: Client, tmp_path: Path) -> None:
    entrants = ["remote-ann", *BOTS[:5]]
    config = _skat("fairnonce", entrants, series=1, nonce_seconds=60.0)
    stop = asyncio.Event()
    from skatbus.bots import make_bot

    bot = asyncio.ensure_future(play(make_bot("random", "ann"), "remote-ann", stack.url, stop=stop))
    try:
        # The SDK sees the announcement and gives its nonce; the nonces close as soon as it has
        # (not after 60 s), and the tournament plays.
        results = await asyncio.wait_for(run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO()), 120)
    finally:
        stop.set()
        await bot
    events = await TournamentLog(nc).read("fairnonce")
    given = [e for e in events if isinstance(e, NonceGiven)]
    closed = next(e for e in events if isinstance(e, NoncesClosed))
    assert [g.player for g in given] == ["remote-ann"]
    assert closed.nonces == {"remote-ann": given[0].nonce}
    assert results["fairness"]["nonces"] == closed.nonces
    store = EventStore(nc)
    spec = next(t for t in events[0].tables)  # type: ignore[union-attr]
    opened = [s.event for s in await store.read(spec.table)][0]
    assert isinstance(opened, TableOpened)
    assert opened.seed == fairness.group_seed(config.seed, "fairnonce", spec.group, closed.digest)
    assert opened.seed != fairness.group_seed(config.seed, "fairnonce", spec.group, fairness.nonces_digest({}))
    # Both tables play the same deals with a remote entrant seated: their feeds are withheld.
    assert spec.group == 1 and opened.feed == "withheld"


async def test_a_swiss_tournament_draws_each_later_series_from_the_standings(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    entrants = BOTS[:6]
    config = _skat("swiss6", entrants, series=3, pairing="swiss")
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    events = await TournamentLog(nc).read("swiss6")
    assert isinstance(events[0], TournamentCreated)
    assert {t.series for t in events[0].tables} == {1}
    drawn = [e for e in events if isinstance(e, SeriesDrawn)]
    assert [d.series for d in drawn] == [2, 3]
    for d in drawn:
        assert sorted(p for t in d.tables for p in t.players) == sorted(entrants)
    # Series 2 is drawn from the standings after series 1 (as results.json gives them), by
    # seating.swiss's rule: best first, exchanged between neighbouring tables against repeats.
    after_first = [s["player"] for s in results["series"][0]["standings"]]
    met = seating.pair_counts(t.players for t in events[0].tables)
    assert [t.players for t in drawn[0].tables] == seating.swiss(after_first, [3, 3], met, rotate=1)
    assert len(results["tables"]) == 6


async def test_a_thirty_one_tournament_of_many_entrants(stack: Stack, nc: Client, tmp_path: Path) -> None:
    entrants = ["random", "heuristic", "random-2", "heuristic-2", "random-3", "heuristic-3", "random-4"]
    seed = fairness.new_server_seed()
    config = TournamentConfig(
        id="t31many",
        entrants=entrants,
        bots={e: e.split("-")[0] for e in entrants},
        game="thirty-one",
        game_rules={"coins": 1, "turn_seconds": 20},
        series=2,
        table_size=3,
        fair=fairness.SCHEME,
        seed=seed,
        commitment=fairness.commitment(seed),
    )
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO())
    tables = [t for t in (await TournamentLog(nc).read("t31many"))[0].tables]  # type: ignore[union-attr]
    assert sorted(len(t.players) for t in tables if t.series == 1) == [3, 4]
    store = EventStore(nc)
    for series in (1, 2):
        decks = set()
        for t in (t for t in tables if t.series == series):
            dealt = [s.event for s in await store.read(t.table) if isinstance(s.event, T31Dealt)]
            decks.add(tuple(dealt[0].deck))
        assert len(decks) == 1, "the tables of a series deal their first deal from the same pack"
    assert {s["player"] for s in results["standings"]} == set(entrants)
    assert "crosstable" in results and len(results["series"]) == 2


async def test_an_append_from_a_stale_position_is_stored_not_taken_for_a_duplicate(nc: Client) -> None:
    """An append that landed although every answer to it was lost leaves the writer's position
    behind; its next event then carries the landed one's message id. It must be stored after
    it, not dropped as a duplicate of it (a lost nonces_closed would reopen the nonces)."""
    tlog = TournamentLog(nc)
    await tlog.ensure_stream()
    config = _skat("stale", BOTS[:3], series=1)
    await tlog.append("stale", TournamentCreated(config=config, tables=[]))
    stale = TournamentLog(nc)  # as the writer was before that append's answer came
    closed = NoncesClosed(nonces={}, digest=fairness.nonces_digest({}))
    await stale.append("stale", closed)
    assert await TournamentLog(nc).read("stale") == [TournamentCreated(config=config, tables=[]), closed]
    await stale.append("stale", closed)  # the same event appended again later: a new position
    assert len(await TournamentLog(nc).read("stale")) == 3
