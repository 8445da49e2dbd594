"""``skat web``'s view of tournaments of many entrants, in a real headless chromium
(tests/skatbus/cdp.py), each tournament run as ``skat tournament`` runs it (``run_tournament``)
through the services and a real nats-server, under the fair scheme:

- a Skat tournament of 10 entrants over 3 Swiss series (tables of 4 + 3 + 3), seven of them
  remote bots that take their time and give their nonces only once the page is open: the page
  shows the commitment and the nonces as they are given, series 1 waiting and series 2 and 3 to
  be drawn; then every series goes from to be drawn (or waiting) through playing to done, its
  tables and players as the tournament's log draws them, its standings as it plays; it ends
  with the standings overall and of each series and the crosstable that results.json holds;
- a Thirty-one tournament of 7 entrants over 2 round-robin series: the same, ranked by places;
- a one-seat-set tournament under the fair scheme shows its commitment beside its standings;
- in all of them nothing the pages received, and nothing they showed, ever held the server seed.

``SKAT_WEB_SERIES_SCREENSHOT=/tmp/series-page.png`` writes a screenshot of the whole Skat page at
the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from protocol import fairness
from protocol.skat.rules import Rules
from protocol.tournament import SeriesDrawn, TournamentConfig, fold_tournament
from services.connection import open_connection
from services.natsserver import EmbeddedServer
from skatbus.bots import make_bot
from skatbus.nonce_giver import NonceGiver
from skatbus.player import RemotePlayer
from skatbus.sdk import connect_player
from skatbus.tournament import TournamentLog, run_tournament
from skatbus.web.feed import SERIES_STATES
from skatbus.web.server import WebServer
from tests.bus import Stack

from .cdp import Browser, chromium
from .test_web import Slow

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium not found: apt-get install -y chromium (Debian) to run the browser tests"
)
T31 = "thirty-one"

PAGE = """(() => {
  const cells = r => [...r.querySelectorAll('td')].map(c => c.textContent);
  const fair = document.getElementById('fairbox').dataset;
  return {
    done: document.body.dataset.done || '', statuses: document.body.dataset.series || '',
    where: document.getElementById('where').textContent,
    fair: {nonces: fair.nonces, remote: fair.remote, closed: fair.closed, commitment: fair.commitment,
           shown: !document.getElementById('fairbox').classList.contains('hidden'),
           text: document.getElementById('fairness').textContent},
    standings: [...document.querySelectorAll('#standings tr[data-player]')].map(cells),
    series: [...document.querySelectorAll('#series [data-series]')].map(p => ({
      series: Number(p.dataset.series), status: p.dataset.status, heading: p.querySelector('h2').textContent,
      note: (p.querySelector('.reason') || {}).textContent || '',
      tables: [...p.querySelectorAll('.series-tables tr[data-table]')].map(r => [r.dataset.table, r.dataset.players]),
      standings: [...p.querySelectorAll('.series-standings tr[data-player]')].map(r => r.dataset.player),
    })),
    cross: [...document.querySelectorAll('#crosstable td[data-against]')].map(c => [c.parentElement.dataset.player,
      c.dataset.against, Number(c.dataset.tables), Number(c.dataset.ahead), Number(c.dataset.behind),
      Number(c.dataset.level), Number(c.dataset.margin)]),
    text: document.body.innerText, html: document.documentElement.outerHTML,
  };
})()"""
"""What the test reads from a tournament's page, at one instant."""


def js_fixed(x: float, places: int) -> str:
    """``x.toFixed(places)`` as the page's script writes it: the exact binary value rounded,
    a tie away from zero (Python's ``format`` would round it to even)."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def skat_row(rank: int, s: dict[str, Any]) -> list[str]:
    """A results.json Skat standing as the page's row shows it."""
    return [
        str(rank),
        s["player"] + (" (forfeit)" if s["forfeit"] else ""),
        str(s["seeger_fabian"]),
        js_fixed(s["per_deal"], 1),
        "" if s["ci95"] is None else js_fixed(s["ci95"], 1),
        str(s["deals"]),
        str(s["declared"]),
        str(s["won"]),
        str(s["timeouts"]),
    ]


def _ordinal(place: int) -> str:
    return f"{place}{'th' if 10 <= place % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(place % 10, 'th')}"


def place_row(rank: int, s: dict[str, Any]) -> list[str]:
    """A results.json standing by places as the page's row shows it."""
    return [
        str(rank),
        s["player"] + (" (forfeit)" if s["forfeit"] else ""),
        js_fixed(s["per_table"], 2),
        "" if s["ci95"] is None else js_fixed(s["ci95"], 2),
        str(s["tables"]),
        str(s["wins"]),
        js_fixed(s["mean_coins"], 2),
        str(s["deals"]),
        str(s["timeouts"]),
        ", ".join(f"{_ordinal(int(p))} {n}" for p, n in s["places"].items()),
    ]


def _fair(tid: str, entrants: list[str], bots: dict[str, str], **extra: Any) -> TournamentConfig:
    seed = fairness.new_server_seed()
    return TournamentConfig(
        id=tid,
        entrants=entrants,
        bots=bots,
        fair=fairness.SCHEME,
        seed=seed,
        commitment=fairness.commitment(seed),
        **extra,
    )


def tournament_messages(browser: Browser) -> list[dict[str, Any]]:
    return [m for m in map(json.loads, (d for _, d in browser.received)) if m.get("kind") == "tournament"]


def assert_no_seed(seed: str, *texts: str) -> None:
    """Neither the seed nor its first 16 hex digits (64 bits of it) in any of ``texts``."""
    for text in texts:
        assert seed not in text and seed[:16] not in text, f"the server seed leaked: {text[:300]}"


def check_series_states(messages: list[dict[str, Any]], series: int, first: dict[int, str]) -> None:
    """Every series went through its states in order (``SERIES_STATES``, none skipped back),
    starting as ``first`` says, was seen playing and ended done."""
    seen: dict[int, list[str]] = {}
    for m in messages:
        for s in m["series"]:
            states = seen.setdefault(s["series"], [])
            if not states or states[-1] != s["status"]:
                states.append(s["status"])
    assert sorted(seen) == list(range(1, series + 1))
    for number, states in seen.items():
        order = [SERIES_STATES.index(s) for s in states]
        assert order == sorted(order), f"series {number} went back: {states}"
        assert states[0] == first[number] and "playing" in states and states[-1] == "done", (number, states)


def check_running_tables(messages: list[dict[str, Any]]) -> None:
    """A table's deals never go back, nor beyond its deals (one round: a deal per seat); the
    standings count every deal the tables scored, once per seat (at a table of 4 the dealer sits
    out and still scores); a series' tables are the same ones in every message once it is drawn."""
    deals: dict[str, int] = {}
    drawn: dict[int, list[str]] = {}
    for m in messages:
        scored = 0
        for s in m["series"]:
            names = [t["table"] for t in s["tables"]]
            if names:
                assert drawn.setdefault(s["series"], names) == names
            for t in s["tables"]:
                assert t["of"] == len(t["players"]), t
                assert deals.get(t["table"], 0) <= t["deals"] <= t["of"], t
                deals[t["table"]] = t["deals"]
                scored += t["deals"] * len(t["players"])
        assert sum(s["deals"] for s in m["standings"]) == scored
        assert m["deals"] == sum(deals[t["table"]] for s in m["series"] for t in s["tables"])


async def screenshot(browser: Browser, path: str) -> None:
    """The whole page, not only the window: the window made as tall as the page first."""
    height = await browser.js("document.documentElement.scrollHeight")
    await browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": browser.size[0], "height": int(height), "deviceScaleFactor": 1, "mobile": False},
    )
    await browser.wait_for(f"window.innerHeight === {int(height)}")
    await browser.screenshot(Path(path))


class Remote:
    """Remote entrants (not the runner's bots), each on a connection of its own as a player's
    (inbox ``_INBOX.<player>``: the nonce desk answers nowhere else): built-in bots behind the
    services that take ``delay`` seconds a move, so that the page sees the tables play, and
    that give their nonces when told to (``give_nonces``)."""

    def __init__(self, players: dict[str, str], tid: str, game: str, delay: float) -> None:
        self.players, self.tid, self.game, self.delay = players, tid, game, delay
        self.connections: list[Client] = []
        self.seats: list[RemotePlayer] = []
        self.givers: list[NonceGiver] = []

    async def start(self, url: str) -> None:
        for player, bot in self.players.items():
            nc = await connect_player(player, url)
            self.connections.append(nc)
            seat = RemotePlayer(nc, player, Slow(make_bot(bot, f"{self.tid}/{player}", self.game), self.delay))
            await seat.start()
            self.seats.append(seat)
            await nc.flush()

    async def give_nonces(self) -> None:
        for nc, player in zip(self.connections, self.players, strict=True):
            giver = NonceGiver(nc, player)
            await giver.start()
            self.givers.append(giver)

    async def stop(self) -> None:
        for giver in self.givers:
            await giver.stop()
        for seat in self.seats:
            await seat.stop()
        for nc in self.connections:
            with contextlib.suppress(Exception):
                await nc.close()


async def _stop(run: asyncio.Future[Any] | None, remote: Remote) -> None:
    if run is not None and not run.done():
        run.cancel()
        with contextlib.suppress(BaseException):
            await run
    await remote.stop()


async def _open_page(browser: Browser, web: WebServer, tid: str) -> str:
    """From the lobby, where the tournament is listed with its series, to its page."""
    await browser.goto(web.url + "/")
    listed = await browser.wait_for(
        f"(() => {{ const e = document.querySelector('[data-tournament=\"{tid}\"]'); return e && e.textContent; }})()"
    )
    await browser.click(f'[data-tournament="{tid}"] a')
    await browser.wait_for("document.body.dataset.many === '1'")
    return str(listed)


async def test_a_skat_tournament_of_ten_entrants_over_three_swiss_series_live(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    tid = "sw10"
    remote = {p: "heuristic" for p in ["ann", "bob", "cyd", "dan", "eve", "fay", "gus"]}
    bots = {"hal": "heuristic", "ivy": "random", "jon": "stepping-random"}
    entrants = [*remote, *bots]
    config = _fair(
        tid,
        entrants,
        bots,
        rules=Rules(rounds=1, seeger_fabian=True, turn_seconds=20),
        series=3,
        pairing="swiss",
        duplicate=False,  # remote entrants: each table its own deals (a sibling table's are no secret)
        nonce_seconds=120.0,
    )
    players = Remote(remote, tid, "skat", 0.02)
    await players.start(stack.url)
    created = asyncio.Event()
    run: asyncio.Future[Any] | None = None
    try:
        async with Browser() as browser:
            run = asyncio.ensure_future(
                run_tournament(
                    nc, config, out_dir=tmp_path, out=open(os.devnull, "w"), on_created=lambda c: created.set()
                )
            )
            await asyncio.wait_for(created.wait(), 30)
            listed = await _open_page(browser, web, tid)
            assert "3 series" in listed and ", ".join(entrants) in listed

            # Before the nonces close: the commitment, none of 7 nonces, series 1 drawn and
            # waiting, series 2 and 3 to be drawn by the standings (Swiss).
            start = await browser.wait_for(
                f"(() => {{ const p = {PAGE}; return p.fair.shown && p.statuses ? p : null; }})()"
            )
            assert start["fair"]["commitment"] == config.commitment and config.commitment in start["fair"]["text"]
            assert (start["fair"]["nonces"], start["fair"]["remote"], start["fair"]["closed"]) == ("0", "7", "0")
            assert [s["heading"] for s in start["series"]] == [
                "Series 1 of 3 \u2014 waiting",
                "Series 2 of 3 \u2014 to be drawn",
                "Series 3 of 3 \u2014 to be drawn",
            ]
            assert "standings once series 1 has finished" in start["series"][1]["note"]
            log = fold_tournament(await TournamentLog(nc).read(tid))
            first = [[t.table, ",".join(t.players)] for t in log.series_of(1)]
            assert start["series"][0]["tables"] == first and len(first) == 3
            assert not start["series"][1]["tables"] and not start["series"][2]["tables"]
            assert_no_seed(config.seed, start["text"], start["html"])

            # The remote entrants give their nonces: the tournament plays.
            await players.give_nonces()
            pages = 0
            while not run.done():
                page = await browser.js(PAGE)
                assert_no_seed(config.seed, page["text"], page["html"])
                pages += 1
                await asyncio.sleep(0.05)
            results = run.result()
            end = await browser.wait_for(
                f"(() => {{ const p = {PAGE}; return p.done === '1' && p.statuses === 'done,done,done'"
                f" && p.cross.length ? p : null; }})()",
                timeout=15,
            )
            assert_no_seed(config.seed, end["text"], end["html"], *(d for _, d in browser.received))
            shot = os.environ.get("SKAT_WEB_SERIES_SCREENSHOT")
            if shot:
                await screenshot(browser, shot)

            # The page got what results.json holds: standings overall and per series, crosstable.
            messages = tournament_messages(browser)
            final = messages[-1]
            assert final["done"] and final["standings"] == results["standings"]
            assert [s["standings"] for s in final["series"]] == [s["standings"] for s in results["series"]]
            assert final["crosstable"] == results["crosstable"]
            assert final["fairness"]["commitment"] == results["fairness"]["commitment"] == config.commitment
            assert final["fairness"]["nonces"] == len(results["fairness"]["nonces"]) == 7
            assert final["fairness"]["closed"] and "seed" not in final["fairness"]
            assert end["fair"]["nonces"] == "7" and end["fair"]["closed"] == "1"

            # The page shows them as skat tournament rounds them, in results.json's order.
            assert end["standings"] == [skat_row(rank, s) for rank, s in enumerate(results["standings"], 1)]
            log = fold_tournament(await TournamentLog(nc).read(tid))
            drawn = [e for e in await TournamentLog(nc).read(tid) if isinstance(e, SeriesDrawn)]
            assert [d.series for d in drawn] == [2, 3]
            for shown, expected in zip(end["series"], results["series"], strict=True):
                number = shown["series"]
                assert shown["heading"] == f"Series {number} of 3 \u2014 done"
                assert shown["tables"] == [[t.table, ",".join(t.players)] for t in log.series_of(number)]
                assert [players.split(",") for _, players in shown["tables"]] == (
                    results["schedule"]["series"][number - 1]
                )
                assert shown["standings"] == [s["player"] for s in expected["standings"]]
                if number > 1:
                    assert shown["note"] == drawn[number - 2].reason + "."
            cross = {(a, b): r for a, row in results["crosstable"].items() for b, r in row.items()}
            assert {(a, b): [t, ah, be, lv, mg] for a, b, t, ah, be, lv, mg in end["cross"]} == {
                k: [r["tables"], r["ahead"], r["behind"], r["level"], r["margin"]] for k, r in cross.items()
            }

            # While it ran: every series went through its states in order; tables and standings
            # moved together; the standings and a series' own standings changed as it played.
            check_series_states(messages, 3, {1: "waiting", 2: "to be drawn", 3: "to be drawn"})
            check_running_tables(messages)
            assert len({json.dumps(m["standings"]) for m in messages}) >= 6, "the standings did not move"
            for number in (1, 2, 3):
                live = {
                    json.dumps(s["standings"])
                    for m in messages
                    for s in m["series"]
                    if s["series"] == number and s["status"] == "playing"
                }
                assert len(live) >= 2, f"series {number}'s standings did not move while it played"
            assert pages >= 10, "the page was read too seldom while the tournament ran"

            table = log.series_of(3)[0].table
            await browser.click(f'#series tr[data-table="{table}"] a.replay')
            await browser.wait_for(f"document.title.includes('{table}') && document.querySelector('[data-card]')")
    finally:
        await _stop(run, players)
        await web.stop()
        await nc.close()


async def test_a_thirty_one_tournament_of_seven_entrants_over_two_series_live(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    tid = "t31s7"
    remote = {"ann": "heuristic", "bob": "random"}
    bots = {"cyd": "heuristic", "dan": "random", "eve": "heuristic", "fay": "random", "gus": "heuristic"}
    config = _fair(
        tid,
        [*remote, *bots],
        bots,
        game=T31,
        game_rules={"coins": 1, "turn_seconds": 20},
        series=2,
        table_size=3,
        duplicate=False,
        nonce_seconds=120.0,
    )
    players = Remote(remote, tid, T31, 0.01)
    await players.start(stack.url)
    created = asyncio.Event()
    run: asyncio.Future[Any] | None = None
    try:
        async with Browser() as browser:
            run = asyncio.ensure_future(
                run_tournament(
                    nc, config, out_dir=tmp_path, out=open(os.devnull, "w"), on_created=lambda c: created.set()
                )
            )
            await asyncio.wait_for(created.wait(), 30)
            await _open_page(browser, web, tid)
            start = await browser.wait_for(f"(() => {{ const p = {PAGE}; return p.statuses ? p : null; }})()")
            # A round robin draws every series before the first deal: both wait for the nonces.
            assert start["statuses"] == "waiting,waiting"
            assert (start["fair"]["nonces"], start["fair"]["remote"]) == ("0", "2")
            log = fold_tournament(await TournamentLog(nc).read(tid))
            for shown in start["series"]:
                assert shown["tables"] == [[t.table, ",".join(t.players)] for t in log.series_of(shown["series"])]
            await players.give_nonces()
            results = await asyncio.wait_for(run, 240)
            end = await browser.wait_for(
                f"(() => {{ const p = {PAGE}; return p.done === '1' && p.statuses === 'done,done' ? p : null; }})()",
                timeout=15,
            )
            assert_no_seed(config.seed, end["text"], end["html"], *(d for _, d in browser.received))
            messages = tournament_messages(browser)
            final = messages[-1]
            assert final["ranking"] == "places" and final["standings"] == results["standings"]
            assert [s["standings"] for s in final["series"]] == [s["standings"] for s in results["series"]]
            assert final["crosstable"] == results["crosstable"]
            assert final["fairness"]["nonces"] == len(results["fairness"]["nonces"]) == 2
            assert end["standings"] == [place_row(rank, s) for rank, s in enumerate(results["standings"], 1)]
            for shown, expected in zip(end["series"], results["series"], strict=True):
                assert shown["heading"] == f"Series {shown['series']} of 2 \u2014 done"
                assert [p.split(",") for _, p in shown["tables"]] == results["schedule"]["series"][shown["series"] - 1]
                assert shown["standings"] == [s["player"] for s in expected["standings"]]
            check_series_states(messages, 2, {1: "waiting", 2: "waiting"})
    finally:
        await _stop(run, players)
        await web.stop()
        await nc.close()


async def test_a_fair_tournament_of_one_seat_set_shows_its_commitment_never_its_seed(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    entrants = ["ann", "bob", "cyd"]
    config = _fair(
        "fair3", entrants, dict.fromkeys(entrants, "heuristic"), rules=Rules(rounds=1, seeger_fabian=True), groups=1
    )
    try:
        async with Browser() as browser:
            results = await run_tournament(nc, config, out_dir=tmp_path, out=open(os.devnull, "w"))
            await browser.goto(web.url + "/tournament/fair3")
            page = await browser.wait_for(
                f"(() => {{ const p = {PAGE}; return document.body.dataset.deals === '9' && p.fair.shown ? p : null; }})()"
            )
            assert page["fair"]["commitment"] == config.commitment and page["fair"]["remote"] == "0"
            for row in results["standings"]:
                assert f"{row['player']}\t{row['seeger_fabian']}" in page["text"]
            assert not page["series"] and not page["statuses"]
            assert_no_seed(config.seed, page["text"], page["html"], *(d for _, d in browser.received))
            assert results["fairness"]["seed"] == config.seed  # revealed in the results, not on the page
    finally:
        await web.stop()
        await nc.close()
