"""``skat web`` in a real headless chromium, driven over the DevTools protocol (tests/skatbus/cdp.py).

- a spectator watches a table played by bots: every trick shows within a second of being stored;
- a tournament's standings change as its deals are scored, and finished tables link to replays;
- a person plays a whole table by clicking, reloads the page mid-deal and goes on: the log
  verifies and holds the person's moves, none timed out; the seat runs as its own NKey user;
- nothing any page's event stream received holds a card its reader may not see.

``SKAT_WEB_SCREENSHOT=docs/web.png`` writes a screenshot of the seat page mid-deal (the README's).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.events import (
    CardPlayed,
    CardsShown,
    DealDealt,
    Event,
    PlayerTimedOut,
    SkatTaken,
    TrickTaken,
)
from protocol.skat import cards as C
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.tournament import TournamentConfig
from protocol.wire import OpenTable, Update
from services.auth import write_auth
from services.connection import open_connection
from services.main import LocalStack
from services.natsserver import EmbeddedServer, free_port
from services.store import EventStore
from skatbus.bots import Bot, make_bot
from skatbus.player import RemotePlayer
from skatbus.replay import TableLog, verify
from skatbus.web.server import WebServer
from tests.bus import Stack, open_table, wait_closed

from .cdp import Browser, chromium

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium not found: apt-get install -y chromium (Debian) to run the browser tests"
)
CARD = re.compile(r"[CSHD][789TJQKA]")


class Slow:
    """A built-in bot that takes its time, so that a person (or a test) can watch."""

    def __init__(self, bot: Bot, delay: float) -> None:
        self.bot, self.delay = bot, delay

    async def act(self, update: Update) -> Any:
        await asyncio.sleep(self.delay)
        chosen = self.bot.act(update)
        return await chosen if asyncio.iscoroutine(chosen) else chosen


def _cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if CARD.fullmatch(value) else set()
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    return set()


def visible(log: list[Event], index: int, seat: int) -> set[str]:
    """The cards ``seat`` (-1: a spectator) may know of after the log's first ``index`` events:
    its own dealt cards, the skat it picked up, the cards played, the cards of a declarer
    whose hand lies open (ouvert once the doubling is over, or shown). Nothing of earlier
    deals: every message describes the current one."""
    known: set[str] = set()
    for event in log[:index]:
        if isinstance(event, DealDealt):
            known = set(event.hands[event.seats.index(seat)]) if seat in event.seats else set()
        elif isinstance(event, SkatTaken) and event.seat == seat:
            known |= set(event.cards)
        elif isinstance(event, CardPlayed):
            known.add(event.card)
        elif isinstance(event, TrickTaken | CardsShown):
            known |= set(event.cards)
    deal = fold(log[:index]).deal
    if deal is not None and deal.declarer is not None and deal.declaration is not None:
        if deal.declaration.ouvert and deal.phase != "doubling" or deal.shown:
            known |= set(C.codes(deal.hands[deal.declarer]))
    return known


def check_received(received: list[tuple[float, str]], log: list[Event], seat: int) -> int:
    """Every message the page received holds only cards its reader may see then; how many."""
    for _, data in received:
        message = json.loads(data)
        shown = _cards_in(message)
        allowed = visible(log, message["index"], seat) if "index" in message else set()  # the lobby: no cards
        assert shown <= allowed, (
            f"the page got hidden cards {sorted(shown - allowed)} at index {message['index']}: {data}"
        )
    return len(received)


async def _bots(nc: Any, names: dict[str, str], delay: float, seed: str) -> list[RemotePlayer]:
    players = [RemotePlayer(nc, pid, Slow(make_bot(bot, f"{seed}/{pid}"), delay)) for pid, bot in names.items()]
    for p in players:
        await p.start()
    await nc.flush()
    return players


# --- watching ------------------------------------------------------------------------------------


async def test_a_spectator_sees_every_trick_within_a_second(stack: Stack, nats_server: EmbeddedServer) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    names = {"ann": "heuristic", "bob": "heuristic", "cyd": "heuristic"}
    bots = await _bots(nc, names, 0.08, "watch")
    try:
        async with Browser() as browser:
            await browser.goto(web.url + "/")
            reply = await open_table(nc, OpenTable(table="w1", players=list(names), rules=Rules(rounds=1), seed="w1"))
            assert reply.ok, reply
            await browser.wait_for("document.querySelector('[data-table=\"w1\"] a')")  # the lobby lists it
            await browser.click('[data-table="w1"] a')
            await browser.wait_for("document.body.dataset.mode === 'spectator' && document.body.dataset.index > 0")
            log = await wait_closed(nc, "w1")
            await browser.wait_for("document.getElementById('where').textContent.includes('table closed')")
            seen = dict(await browser.js("[...T.firstSeen]"))
            stored = await EventStore(nc).read("w1")
            tricks = [(s.event, s.time) for s in stored if isinstance(s.event, TrickTaken)]
            deal_of = {}
            deal = 0
            for s in stored:
                if isinstance(s.event, DealDealt):
                    deal = s.event.deal
                if isinstance(s.event, TrickTaken):
                    deal_of[id(s.event)] = deal
            assert len(tricks) >= 10
            late = []
            for event, at in tricks:
                key = f"{deal_of[id(event)]}:{event.trick}"
                assert key in seen, f"trick {key} never showed"
                if seen[key] / 1000 - at > 1.0:
                    late.append((key, round(seen[key] / 1000 - at, 3)))
            assert not late, f"tricks shown more than a second after their event: {late}"
            assert check_received(browser.received, log, -1) > 10
    finally:
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()


async def test_tournament_standings_change_as_deals_finish(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    from skatbus.tournament import run_tournament

    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    entrants = ["ann", "bob", "cyd"]
    config = TournamentConfig(
        id="tw", entrants=entrants, rules=Rules(rounds=1, seeger_fabian=True), groups=1, duplicate=True, seed="tw"
    )
    bots = await _bots(nc, dict.fromkeys(entrants, "heuristic"), 0.03, "tw")
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
            await browser.wait_for("document.querySelector('[data-tournament=\"tw\"] a')")
            await browser.click('[data-tournament="tw"] a')
            await browser.wait_for(
                "document.body.dataset.page === 'tournament' && document.getElementById('standings')"
            )
            snapshots: list[tuple[int, str]] = []
            while not run.done():
                snap = await browser.js(
                    "[Number(document.body.dataset.deals || 0), document.getElementById('standings').innerText]"
                )
                if not snapshots or snapshots[-1] != tuple(snap):
                    snapshots.append(tuple(snap))
                await asyncio.sleep(0.05)
            results = run.result()
            await browser.wait_for("document.body.dataset.deals === '9'", timeout=10)
            await browser.wait_for("document.querySelectorAll('#ttables a.replay').length === 3", timeout=10)
            final = await browser.js("document.getElementById('standings').innerText")
            # The page's last state counts too: the three duplicate tables run in step, so the
            # deals may move in threes, and the run can end between two polls.
            snapshots.append((9, final))
            deals_seen = sorted({d for d, _ in snapshots})
            assert len(deals_seen) >= 4, f"the standings did not move with the deals: {deals_seen}"
            assert len({s for _, s in snapshots}) >= 4
            for row in results["standings"]:
                assert f"{row['player']}\t{row['seeger_fabian']}" in final
            first = results["tables"][0]["table"]
            await browser.click(f'#ttables tr[data-table="{first}"] a.replay')
            await browser.wait_for(f"document.title.includes('{first}') && document.querySelector('[data-card]')")
    finally:
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()


# --- playing -------------------------------------------------------------------------------------

CHOOSE = """(() => {
  const b = document.body;
  if (document.getElementById('where').textContent.includes('table closed')) return {closed: true};
  if (b.dataset.yourTurn !== '1') return null;
  const actions = [...document.querySelectorAll('#buttons button')].map(x => JSON.parse(x.dataset.action));
  const cards = [...document.querySelectorAll('.seat.me .card.legal')].map(x => x.dataset.card);
  const picked = [...document.querySelectorAll('.seat.me .card.picked')].map(x => x.dataset.card);
  return {prompt: Number(b.dataset.prompt), actions, cards, picked, phase: document.getElementById('where').textContent};
})()"""


def _pick(choice: dict[str, Any]) -> tuple[str, str]:
    """What the test's person does: (how, selector)."""
    types = [a["type"] for a in choice["actions"]]
    for wanted in ("hold", "pickup", "kontra", "re"):
        if wanted in types:
            return "button", f"#buttons button[data-action='{json.dumps({'type': wanted}, separators=(',', ':'))}']"
    bids = [a for a in choice["actions"] if a["type"] == "bid"]
    if bids and bids[0]["value"] <= 20:
        return "button", "#buttons button.main"
    if "discard" in types:
        if len(choice["picked"]) < 2:
            card = next(c for c in choice["cards"] if c not in choice["picked"])
            return "card", f'.seat.me .card[data-card="{card}"]'
        return "button", "#discard"
    declares = [a for a in choice["actions"] if a["type"] == "declare"]
    if declares:
        return "button", "#buttons button.main"
    if choice["cards"] and "discard" not in types:
        return "card", f'.seat.me .card[data-card="{choice["cards"][0]}"]'
    return "button", '#buttons button[data-action=\'{"type":"pass"}\']'


async def test_a_person_plays_a_table_by_clicks_and_reloads_mid_deal(tmp_path: Path) -> None:
    auth_dir = tmp_path / "auth"
    write_auth(auth_dir, ["ann", "bob", "cyd"], str(tmp_path / "js"), listen=("127.0.0.1", free_port()))
    stack = LocalStack(auth_dir=str(auth_dir))
    await stack.__aenter__()
    assert stack.auth is not None
    nc = await open_connection(stack.settings)
    web = WebServer(stack.settings, port=0, seats={"ann": stack.auth.settings("ann", stack.server.url)})
    bots: list[RemotePlayer] = []
    try:
        await web.start()
        bots = await _bots(nc, {"bob": "heuristic", "cyd": "heuristic"}, 0.05, "play")
        rules = Rules(rounds=1, kontra=True, turn_seconds=60)
        reply = await open_table(nc, OpenTable(table="p1", players=["ann", "bob", "cyd"], rules=rules, seed="p1-seed"))
        assert reply.ok, reply
        async with Browser() as browser:
            await browser.goto(web.seat_url("ann"))
            assert "token" not in await browser.js("location.href")  # into a cookie, out of the address bar
            moves, reloaded, shot = 0, False, False
            loop = asyncio.get_running_loop()
            end = loop.time() + 240
            while loop.time() < end:
                choice = await browser.wait_for(CHOOSE, timeout=90)
                if choice.get("closed"):
                    break
                if (
                    not shot
                    and choice["cards"]
                    and await browser.js("document.querySelectorAll('#trick .card').length")
                ):
                    shot = True  # the person to play, cards on the table: the README's picture
                    target = os.environ.get("SKAT_WEB_SCREENSHOT")
                    if target:
                        await browser.screenshot(Path(target))
                how, selector = _pick(choice)
                await browser.click(selector)
                if how == "card" and "discard" in [a["type"] for a in choice["actions"]]:
                    await browser.wait_for(
                        f"document.querySelectorAll('.seat.me .card.picked').length > {len(choice['picked'])}"
                    )
                    continue
                moves += 1
                await browser.wait_for(
                    f"document.body.dataset.yourTurn !== '1' || Number(document.body.dataset.prompt) > {choice['prompt']}"
                )
                if moves == 8 and not reloaded:  # mid-deal: the page starts again, the seat says hello
                    await browser.reload()
                    reloaded = True
            assert reloaded and moves >= 10
            log = await wait_closed(nc, "p1", timeout=30)
            assert check_received(browser.received, log, 0) > 20
        verdict = verify(TableLog("p1", log))
        assert verdict.ok and verdict.deals == 3, verdict.message
        mine = [e for e in log if getattr(e, "seat", None) == 0 and not isinstance(e, TrickTaken)]
        assert not [e for e in mine if isinstance(e, PlayerTimedOut)], "the person's moves timed out"
        assert sum(isinstance(e, CardPlayed) for e in mine) >= 10  # at least a deal's cards, each a click
    finally:
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()
        await stack.__aexit__(None, None, None)


async def test_the_seat_refuses_what_is_not_legal(stack: Stack, nats_server: EmbeddedServer) -> None:
    """The page's backend sends only the prompt's legal actions, and only with the token."""
    import aiohttp

    web = WebServer(stack.settings, port=0, seats={"ann": stack.settings})
    await web.start()
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # unsafe: cookies of an IP
            async with http.post(web.url + "/play/ann/t1", data=b'{"type":"pass"}', headers={"X-Skat": "1"}) as r:
                assert r.status == 403  # no token
            async with http.get(web.seat_url("ann"), allow_redirects=False) as r:
                assert r.status == 303
            async with http.post(web.url + "/play/ann/t1", data=b'{"type":"pass"}') as r:
                assert r.status == 403  # the header only the page sends
            async with http.post(web.url + "/play/ann/t1", data=b'{"type":"pass"}', headers={"X-Skat": "1"}) as r:
                body = msgspec.json.decode(await r.read())
                assert body["ok"] is False and body["code"] == "refused"
            async with http.get(web.url + "/table/a.b") as r:
                assert r.status == 404
            async with http.get(web.url + "/", headers={"Host": "evil.example:80"}) as r:
                assert r.status == 421
    finally:
        await web.stop()
