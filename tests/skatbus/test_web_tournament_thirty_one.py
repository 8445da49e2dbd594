"""``skat web``'s view of a Thirty-one tournament, in a real headless chromium (tests/skatbus/cdp.py),
the tournament run as ``skat tournament --game thirty-one`` runs it (``run_tournament``) through
the services and a real nats-server, its entrants remote bots that take their time:

- the lobby lists the tournament with its game named, and links to its page;
- while it runs, each table's progress is measured by the lives lost in its scored deals (the
  runner's ``game_progress``), matches the table's stored log at the deals it says, never goes
  back, and the standings count only finished tables;
- it ends with the standings results.json holds (the feed's message has them as results.json
  does; the page's cells are those numbers as ``skat tournament`` rounds them), every table's
  places are its ``table_finished``'s, and a finished table's replay link opens its replay.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from protocol.thirty_one.events import T31DealScored
from protocol.tournament import TournamentConfig
from services.connection import open_connection
from services.natsserver import EmbeddedServer
from services.store import EventStore
from skatbus.bots import make_bot
from skatbus.player import RemotePlayer
from skatbus.tournament import game_progress, run_tournament
from skatbus.web.server import WebServer
from tests.bus import Stack

from .cdp import Browser, chromium
from .test_web import Slow

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium not found: apt-get install -y chromium (Debian) to run the browser tests"
)
T31 = "thirty-one"
COINS = 2
LIVES = COINS + 1  # the county is on by default (T25): a seat is out after its coins and one more
MAX_DEALS = 500  # ThirtyOneRules' default

PAGE = """(() => {
  const cells = r => [...r.querySelectorAll('td')].map(c => c.textContent);
  return {
    where: document.getElementById('where').textContent,
    done: document.body.dataset.done, finished: Number(document.body.dataset.finished || 0),
    standings: [...document.querySelectorAll('#standings tr[data-player]')].map(r => [r.dataset.player, cells(r)]),
    tables: [...document.querySelectorAll('#ttables tr[data-table]')].map(r =>
      [r.dataset.table, r.dataset.places || '', cells(r), !!r.querySelector('a.replay')]),
    scoring: (document.getElementById('scoring') || {}).textContent || '',
  };
})()"""
"""What the test reads from the tournament page, at one instant."""


def _ordinal(place: int) -> str:
    return f"{place}{'th' if 10 <= place % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(place % 10, 'th')}"


def expected_row(rank: int, s: dict[str, Any]) -> list[str]:
    """A results.json standing as the page's row should show it: the figures rounded as
    ``format_place_standings`` rounds them (place points per table and mean coins to two
    places), the places taken as ``1st 2, 2nd 1``."""
    return [
        str(rank),
        s["player"] + (" (forfeit)" if s["forfeit"] else ""),
        f"{s['per_table']:.2f}",
        "" if s["ci95"] is None else f"{s['ci95']:.2f}",
        str(s["tables"]),
        str(s["wins"]),
        f"{s['mean_coins']:.2f}",
        str(s["deals"]),
        str(s["timeouts"]),
        ", ".join(f"{_ordinal(int(p))} {n}" for p, n in s["places"].items()),
    ]


def check_running(messages: list[dict[str, Any]], logs: dict[str, list[Any]]) -> None:
    """Every message the page got: a running table's lives lost and progress are what its log's
    first ``deals`` scored deals give; no table's progress goes back; the tournament's progress
    is the tables'; the standings count only the finished tables."""
    before: dict[str, float] = {}
    for m in messages:
        assert m["progress"] == pytest.approx(sum(t["progress"] for t in m["tables"]))
        for t in m["tables"]:
            assert t["progress"] >= before.get(t["table"], 0.0), f"{t['table']} went back: {m}"
            before[t["table"]] = t["progress"]
            if t["places"] is None:
                scored = [e for e in logs[t["table"]] if isinstance(e, T31DealScored) and e.deal <= t["deals"]]
                assert len(scored) == t["deals"]
                lost = [sum(e.lives[seat] for e in scored) for seat in range(len(t["players"]))]
                assert t["lost"] == lost
                assert t["progress"] == pytest.approx(game_progress(lost, LIVES, t["deals"], MAX_DEALS, False))
        finished = sum(t["places"] is not None for t in m["tables"])
        assert m["finished"] == finished and all(s["tables"] == finished for s in m["standings"])
        assert len(m["standings"]) == (3 if finished else 0)


async def test_a_thirty_one_tournaments_live_view_ends_with_its_results(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    entrants = ["ann", "bob", "cyd"]
    config = TournamentConfig(
        id="t31w", entrants=entrants, game=T31, game_rules={"coins": COINS}, groups=1, duplicate=True, seed="t31w"
    )
    bots = [RemotePlayer(nc, p, Slow(make_bot("heuristic", f"t31w/{p}", T31), 0.05)) for p in entrants]
    for b in bots:
        await b.start()
    await nc.flush()
    created = asyncio.Event()
    try:
        async with Browser() as browser:
            run = asyncio.ensure_future(
                run_tournament(
                    nc, config, out_dir=tmp_path, out=open(os.devnull, "w"), on_created=lambda c: created.set()
                )
            )
            await asyncio.wait_for(created.wait(), 30)
            await browser.goto(web.url + "/")
            listed = await browser.wait_for(
                "(() => { const e = document.querySelector('[data-tournament=\"t31w\"]');"
                " return e && e.dataset.game === 'thirty-one' && e.textContent; })()"
            )
            assert "Thirty-one" in listed and "ann, bob, cyd" in listed
            await browser.click('[data-tournament="t31w"] a')
            await browser.wait_for("document.body.dataset.game === 'thirty-one'")
            assert not run.done(), "the tournament ended before its page was open: nothing live was seen"
            results = await asyncio.wait_for(run, 150)
            page = await browser.wait_for(
                f"(() => {{ const p = {PAGE}; return p.done === '1' && p.finished === 3 ? p : null; }})()", timeout=15
            )

            # The standings are results.json's: in the feed's message, and on the page.
            messages = [m for m in map(json.loads, (d for _, d in browser.received)) if m.get("kind") == "tournament"]
            final = messages[-1]
            assert final["done"] and final["standings"] == results["standings"]
            assert [p for p, _ in page["standings"]] == [s["player"] for s in results["standings"]]
            assert [cells for _, cells in page["standings"]] == [
                expected_row(rank, s) for rank, s in enumerate(results["standings"], 1)
            ]
            assert results["scoring"] in page["scoring"]

            # Every table's places are its table_finished's, with a replay link; the deals add up.
            finished = {t["table"]: t for t in results["tables"]}
            assert {t for t, *_ in page["tables"]} == set(finished)
            for table, places, cells, replay in page["tables"]:
                assert places == ",".join(map(str, finished[table]["places"])) and replay
                assert cells[2] == str(finished[table]["deals"]) and cells[3] == "100\u00a0%"
            deals = sum(t["deals"] for t in results["tables"])
            assert page["where"] == f"3.0/3 tables ({deals} deals) \u2014 finished"

            # While it ran: progress by lives lost, as the logs have them; a table seen mid-game.
            store = EventStore(nc)
            logs = {t: [s.event for s in await store.read(t)] for t in finished}
            check_running(messages, logs)
            assert any(0 < t["progress"] < 1 for m in messages for t in m["tables"]), "no table was seen mid-game"
            assert len({round(m["progress"], 6) for m in messages}) >= 4, "the progress did not move"

            first = results["tables"][0]["table"]
            await browser.click(f'#ttables tr[data-table="{first}"] a.replay')
            await browser.wait_for(f"document.title.includes('{first}') && document.querySelector('[data-card]')")
    finally:
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()
