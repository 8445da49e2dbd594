"""``skat web`` and ``skat play`` at Thirty-one tables, in a real headless chromium (tests/skatbus/cdp.py).

- a spectator finds a Thirty-one table in the lobby (the game named) and watches it to its end:
  coins, kitty, stock, discard pile and places as the log has them, and no card the public may
  not see, in the page or in anything its event stream received;
- a person plays a whole small game against two bots by clicking the legal buttons and cards
  (``skatbus.web.play.PlaySession``, which is what ``skat play --game thirty-one`` runs), with
  and without ``throw_down``: at every prompt the buttons are exactly the seat's legal actions,
  the hand, its value, the stock, the pile and the coins are the log's, and no other seat's
  card is ever in the page (the DOM's card codes are compared with what the seat may know);
  the page is reloaded mid-game; the log verifies, and none of the person's turns timed out.
- the page's hand value (t31.js) equals ``protocol.thirty_one.cards.hand_value`` on random
  hands of three and four cards under every option.

``SKAT_WEB_SCREENSHOT_T31=docs/web-thirty-one.png`` writes a screenshot of the seat page at a prompt
(and ``web-thirty-one-end.png`` of the game's end).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

from protocol import registry
from protocol.events import Event, PlayerTimedOut
from protocol.thirty_one import ThirtyOneRules, hand_value
from protocol.thirty_one.cards import PACK
from protocol.thirty_one.events import T31DealEnded, T31Dealt, T31Discarded, T31Looked, T31Took
from protocol.thirty_one.state import ThirtyOneState
from protocol.wire import OpenTable
from services.connection import ConnectionSettings, open_connection
from services.natsserver import EmbeddedServer
from skatbus.bots import make_bot
from skatbus.player import RemotePlayer
from skatbus.web.play import PlaySession
from skatbus.web.play_options import add_play_arguments, play_spec
from skatbus.web.server import WebServer
from tests.bus import Stack, open_table, wait_closed

from .cdp import Browser, chromium
from .test_web import Slow

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium not found: apt-get install -y chromium (Debian) to run the browser tests"
)
CARD = re.compile(r"\b[CSHD][2-9TJQKA]\b")


def _cards_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if value in PACK else set()
    if isinstance(value, dict):
        return set().union(*(_cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards_in(v) for v in value)) if value else set()
    return set()


def visible(log: list[Event], index: int, seat: int) -> set[str]:
    """The cards ``seat`` (-1: a spectator) may know of after the log's first ``index`` events,
    in this deal or an earlier one: the discard pile's first card, every discard, every card
    taken from the pile, the hands shown at a deal's end; for a seat also its own dealt cards
    (under ``throw_down`` only once it looked or took a card, T30) and the cards it took from
    the stock."""
    known: set[str] = set()
    own: list[str] = []
    throw_down = False
    for event in log[:index]:
        if isinstance(event, T31Dealt):
            m = len(event.order)
            known.add(event.deck[3 * m])
            own = [event.deck[k] for k in range(event.order.index(seat), 3 * m, m)] if seat in event.order else []
            if not throw_down:
                known |= set(own)
        elif isinstance(event, T31Looked | T31Took) and event.seat == seat:
            known |= set(own)
        if isinstance(event, T31Took) and (event.source == "discard" or event.seat == seat):
            known.add(event.card)
        elif isinstance(event, T31Discarded):
            known.add(event.card)
        elif isinstance(event, T31DealEnded):
            known |= {c for hand in event.shown for c in hand}
        elif hasattr(event, "rules") and isinstance(event.rules, dict):  # table_opened/2
            throw_down = bool(event.rules.get("throw_down"))
    return known


def check_received(received: list[tuple[float, str]], log: list[Event], seat: int) -> int:
    """Every message the page's streams received holds only cards its reader may know then."""
    for _, data in received:
        message = json.loads(data)
        shown = _cards_in(message)
        allowed = visible(log, message["index"], seat) if "index" in message else set()  # the lobby: no cards
        assert shown <= allowed, (
            f"the page got hidden cards {sorted(shown - allowed)} at {message.get('index')}: {data}"
        )
    return len(received)


PAGE = """(() => {
  const b = document.body;
  const hands = [...document.querySelectorAll('#t31-seats [data-hand]')].map(h =>
    [Number(h.dataset.hand), [...h.querySelectorAll('[data-card]')].map(c => c.dataset.card)]);
  const value = document.querySelector('.seat.me .tag.value');
  return {
    index: Number(b.dataset.index || 0), phase: b.dataset.phase || '', game: b.dataset.game || '',
    yourTurn: b.dataset.yourTurn === '1', prompt: Number(b.dataset.prompt || -1),
    closed: document.getElementById('where').textContent.includes('table closed'),
    cards: [...document.querySelectorAll('[data-card]')].map(c => c.dataset.card),
    text: document.body.innerText, hands,
    actions: [...document.querySelectorAll('#t31-buttons button')].map(x => JSON.parse(x.dataset.action)),
    legalCards: [...document.querySelectorAll('.seat.me .card.legal')].map(x => x.dataset.card),
    value: value ? value.dataset.value : null,
    stock: Number(document.getElementById('t31-stocksize').dataset.stock),
    kitty: Number(document.getElementById('t31-kittysize').dataset.kitty),
    top: (document.querySelector('#t31-pile [data-card]') || {dataset: {}}).dataset.card || null,
    coins: [...document.querySelectorAll('#t31-seats .tag.coins')].map(c => Number(c.dataset.coins)),
    places: [...document.querySelectorAll('#t31-places tr[data-seat]')].map(r => [Number(r.dataset.seat), Number(r.dataset.place)]),
  };
})()"""
"""Everything a check needs from the page, read at one instant (with the log position it shows)."""


def check_page(page: dict[str, Any], log: list[Event], seat: int) -> None:
    """No card in the page that ``seat`` may not know, and no other seat's card face up while
    the deal runs (its cards are backs); the text names no card either."""
    allowed = visible(log, page["index"], seat)
    shown = set(page["cards"]) | set(CARD.findall(page["text"]))
    assert shown <= allowed, f"the page shows {sorted(shown - allowed)} at index {page['index']}"
    if page["phase"] in ("take", "discard"):
        for other, cards in page["hands"]:
            assert other == seat or not cards, f"seat {other}'s cards {cards} face up during the deal"


def state_at(log: list[Event], index: int) -> ThirtyOneState:
    state: ThirtyOneState = registry.fold(log[:index])
    return state


def check_public(page: dict[str, Any], state: ThirtyOneState) -> None:
    """The stock's size, the pile's top card, the kitty and the coins are the log's."""
    deal = state.deal
    if deal is not None and state.in_deal:
        assert page["stock"] == len(deal.stock), (page["stock"], len(deal.stock))
        assert page["top"] == (deal.pile[-1] if deal.pile else None)
    assert page["kitty"] == state.kitty
    assert page["coins"] == state.coins


def check_prompt(page: dict[str, Any], session: PlaySession, log: list[Event]) -> None:
    """At a prompt: the buttons and clickable cards are exactly the seat's legal actions, and
    the hand and its value are the seat's (unless it has not looked, under throw_down)."""
    me = session.spec.seat
    state = state_at(log, page["index"])
    assert page["prompt"] <= page["index"] <= len(log)
    legal = [json.loads(json.dumps(_builtins(a))) for a in state_at(log, page["prompt"]).legal_actions(me)]
    shown = page["actions"] + [{"type": "discard", "card": c} for c in page["legalCards"]]
    assert sorted(map(json.dumps, shown)) == sorted(map(json.dumps, legal)), (shown, legal)
    check_public(page, state)
    deal = state.deal
    assert deal is not None
    mine = page["hands"][me][1]
    if deal.sees_hand(me):
        assert sorted(mine) == sorted(deal.hands[me]), (mine, deal.hands[me])
        assert mine == sorted(mine, key=lambda c: ("CSHD".index(c[0]), -"23456789TJQKA".index(c[1])))  # by suit, rank
        assert float(page["value"]) == hand_value(deal.hands[me], state.rules) / 2
    else:
        assert not mine and page["value"] is None


def _builtins(command: Any) -> dict[str, Any]:
    import msgspec

    data: dict[str, Any] = msgspec.to_builtins(command)
    data.pop("at", None)
    return data


async def next_prompt(browser: Browser, session: PlaySession, samples: list[int]) -> tuple[dict[str, Any], list[Event]]:
    """The page at the person's next prompt (or once the table is closed) and the log; every
    state the page shows until then is checked (``check_page``) as it is seen."""
    log: list[Event] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + 90
    while True:
        try:
            page = await browser.js(PAGE)
        except RuntimeError:  # the page is being reloaded, or has not drawn the table yet
            page = None
        if page is None:
            if loop.time() > end:
                raise TimeoutError("the page shows no table")
            await asyncio.sleep(0.05)
            continue
        if page["index"] > len(log):
            log = await session.log()
        check_page(page, log, session.spec.seat)
        samples[0] += 1
        if page["closed"] or page["yourTurn"]:
            return page, log
        if loop.time() > end:
            raise TimeoutError("no prompt for the person within 90 s")
        await asyncio.sleep(0.05)


def choose(page: dict[str, Any], turns: int, deal: int) -> str | None:
    """What the test's person clicks (None: nothing, wait for the next prompt). Under
    throw_down it looks at its hand in deal 1 (in turn or out of it) and throws down unseen
    whenever it may from deal 2 on; it knocks with 20 or more after two turns, or after five;
    it takes the discard pile's top card every third turn, the stock otherwise; it discards
    its first clickable card. The bots play as deterministically, so the game is always the same."""
    types = {a["type"] for a in page["actions"]}
    if "throw" in types and deal >= 2:
        return _button({"type": "throw"})
    if "look" in types and deal == 1:
        return _button({"type": "look"})
    if page["legalCards"]:
        return f'.seat.me .card.legal[data-card="{page["legalCards"][0]}"]'
    if "take" not in types:
        return None  # only a look, out of turn: not now
    value = float(page["value"] or 0)
    if "knock" in types and ((turns >= 2 and value >= 20) or turns >= 5):
        return _button({"type": "knock"})
    stock = {"type": "take", "source": "stock"}
    if turns % 3 == 2 or stock not in page["actions"]:
        return _button({"type": "take", "source": "discard"})
    return _button(stock)


def _button(action: dict[str, Any]) -> str:
    return f"#t31-buttons button[data-action='{json.dumps(action, separators=(',', ':'))}']"


def _spec(*argv: str) -> Any:
    parser = argparse.ArgumentParser(prog="skat play")
    add_play_arguments(parser)
    return play_spec(parser.parse_args(["--game", "thirty-one", *argv]))


@pytest.mark.parametrize(
    "options", [["--coins", "1"], ["--coins", "1", "--throw-down"]], ids=["standard", "throw-down"]
)
async def test_a_person_plays_a_whole_game_by_clicks(options: list[str]) -> None:
    spec = _spec("--vs", "heuristic,heuristic", "--seat", "0", *options)
    session = PlaySession(spec, table="t31-play", seed="t31-play-" + "-".join(options))
    me = spec.seat
    try:
        url = await session.start()
        assert session.web is not None
        async with Browser() as browser:
            await browser.goto(session.web.url + "/")  # the lobby lists the table, the game named
            listed = await browser.wait_for(
                "(() => { const e = document.querySelector('[data-table=\"t31-play\"]');"
                " return e && e.dataset.game === 'thirty-one' && e.textContent; })()"
            )
            assert "Thirty-one" in listed and "you" in listed and "heuristic-2" in listed
            await browser.goto(url)
            assert "token" not in await browser.js("location.href")
            await browser.wait_for("document.body.dataset.game === 'thirty-one'")
            moves, reloaded, shot, prompts = 0, False, False, 0
            samples = [0]
            turns: dict[int, int] = {}
            loop = asyncio.get_running_loop()
            end = loop.time() + 300
            while loop.time() < end:
                page, log = await next_prompt(browser, session, samples)
                if page["closed"]:
                    break
                prompts += 1
                check_prompt(page, session, log)
                state = state_at(log, page["index"])
                if not shot and page["legalCards"]:
                    shot = True
                    target = os.environ.get("SKAT_WEB_SCREENSHOT_T31")
                    if target:
                        await browser.screenshot(Path(target))
                selector = choose(page, turns.get(state.deal_no, 0), state.deal_no)
                if selector is None:
                    await browser.wait_for(f"Number(document.body.dataset.prompt) > {page['prompt']}", timeout=90)
                    continue
                await browser.click(selector)
                if '"take"' in selector or '"knock"' in selector:
                    turns[state.deal_no] = turns.get(state.deal_no, 0) + 1
                moves += 1
                await browser.wait_for(
                    f"document.body.dataset.yourTurn !== '1' || Number(document.body.dataset.prompt) > {page['prompt']}"
                )
                if moves == 6 and not reloaded:  # mid-game: the page starts again, the seat says hello
                    await browser.reload()
                    reloaded = True
            assert reloaded and moves >= 6 and prompts >= 6 and samples[0] > prompts
            log = await wait_closed(session.nc, session.table, timeout=30)
            page = await browser.wait_for(f"(() => {{ const p = {PAGE}; return p.places.length ? p : null; }})()")
            check_page(page, log, me)
            if os.environ.get("SKAT_WEB_SCREENSHOT_T31"):
                shot_at = Path(os.environ["SKAT_WEB_SCREENSHOT_T31"])
                await browser.screenshot(shot_at.with_name(shot_at.stem + "-end" + shot_at.suffix))
            final = registry.fold(log)
            assert final.complete and len(final.active) == 1
            assert dict(page["places"]) == dict(enumerate(final.places()))
            assert page["coins"] == final.coins and page["kitty"] == final.kitty == 0
            assert check_received(browser.received, log, me) > 20
            await browser.goto(f"{session.web.url}/replay/{session.table}")  # the link skat play prints
            await browser.wait_for(
                f"document.title.includes('{session.table}') && document.querySelector('[data-card]')"
            )
        mine = [e for e in log if getattr(e, "seat", None) == me]
        assert not [e for e in mine if isinstance(e, PlayerTimedOut)], "the person's turns timed out"
        assert sum(isinstance(e, T31Discarded) for e in mine) >= 2  # each a click on a card
        if "--throw-down" in options:
            assert any(type(e).__name__ == "T31Threw" for e in mine) and any(isinstance(e, T31Looked) for e in mine)
    finally:
        await session.stop()


async def test_a_spectator_watches_a_thirty_one_table(stack: Stack, nats_server: EmbeddedServer) -> None:
    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    names = ["ann", "bob", "cyd"]
    bots = [RemotePlayer(nc, p, Slow(make_bot("heuristic", f"w/{p}", "thirty-one"), 0.03)) for p in names]
    for b in bots:
        await b.start()
    try:
        async with Browser() as browser:
            await browser.goto(web.url + "/")
            request = OpenTable(
                table="w31", players=names, rules=ThirtyOneRules(coins=1), game="thirty-one", seed="w31"
            )
            assert (await open_table(nc, request)).ok
            await browser.wait_for('document.querySelector(\'[data-table="w31"][data-game="thirty-one"] a\')')
            assert "Thirty-one" in await browser.js("document.querySelector('[data-table=\"w31\"]').textContent")
            await browser.click('[data-table="w31"] a')
            await browser.wait_for("document.body.dataset.game === 'thirty-one' && document.body.dataset.index > 1")
            checked = 0
            closed = False
            loop = asyncio.get_running_loop()
            end = loop.time() + 120
            while not closed and loop.time() < end:
                page = await browser.js(PAGE)
                log = [s for s in await _log(nc, "w31")]
                check_page(page, log, -1)
                if page["index"] and page["index"] <= len(log):
                    check_public(page, state_at(log, page["index"]))
                checked += 1
                closed = page["closed"] and bool(page["places"])
                await asyncio.sleep(0.05)
            log = await wait_closed(nc, "w31", timeout=10)
            final = registry.fold(log)
            assert dict(page["places"]) == dict(enumerate(final.places())) and page["coins"] == final.coins
            rows = await browser.js("document.querySelectorAll('#t31-sheet tr[data-deal]').length")
            assert rows == len(final.sheet) and checked > 5
            assert check_received(browser.received, log, -1) > 5
    finally:
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()


async def _log(nc: Any, table: str) -> list[Any]:
    from services.store import EventStore

    return [s.event for s in await EventStore(nc).read(table) if s.event is not None]


HAND_VALUES = """(cases => cases.map(([cards, rules]) => t31HandValue(cards, rules)))(%s)"""


async def test_the_pages_hand_value_is_the_rules(nats_server: EmbeddedServer) -> None:
    """t31.js counts a hand as ``hand_value`` does (T9, T10), on random hands under every option."""
    web = WebServer(ConnectionSettings((nats_server.url,)), port=0)
    await web.start()
    rng = random.Random(31)
    cases = []
    for _ in range(600):
        rules = ThirtyOneRules(three_of_a_kind=rng.choice(["off", "30", "30.5"]), straight_flush=rng.random() < 0.5)
        cards: list[str] = rng.sample(PACK, rng.choice([3, 3, 4]))
        if rng.random() < 0.2:  # three of one rank, or a run of one suit: the options' cases
            rank, suit = rng.randrange(11), rng.choice("CSHD")
            cards = [suit + "23456789TJQKA"[rank + i] for i in range(3)] if rng.random() < 0.5 else [
                s + "23456789TJQKA"[rank] for s in rng.sample("CSHD", 3)]  # fmt: skip
        cases.append((cards, {"three_of_a_kind": rules.three_of_a_kind, "straight_flush": rules.straight_flush}, rules))
    try:
        async with Browser() as browser:
            await browser.goto(web.url + "/table/x1")
            await browser.wait_for("typeof t31HandValue === 'function'")
            got = await browser.js(HAND_VALUES % json.dumps([[c, r] for c, r, _ in cases]))
        want = [hand_value(c, rules) for c, _, rules in cases]
        assert got == want
    finally:
        await web.stop()
