"""A person plays three Skat deals in the browser (``skat play``'s ``PlaySession``, in a real
headless chromium driven over the DevTools protocol: tests/skatbus/cdp.py), only by clicks, as a
Skat player who reads no help would, and the page is checked against the log at every prompt:

- bidding: the next bid is a button with its value, every higher legal bid is in a list, the
  answer to a bid says ``hold N``; the values offered are exactly the legal bids;
- the declaration is one small form (hand or not, the game, the announcements the rules allow):
  every combination it can be set to is a legal command, every legal command can be set, and
  what it sends is the one shown (the log's ``game_declared`` says so);
- play: the cards the page lets the person click are exactly the legal ones, the others are
  dimmed and say so to a screen reader; the hand is sorted for the game being played
  (trumps first: the jacks, then the trump suit A 10 K Q 9 8 7; null A K Q J 10 9 8 7; grand's
  order before a game is declared);
- the end of each deal shows its card points and its value explained, as the log scored it;
- every seat shows its position in the deal (forehand, middlehand, rearhand) as the log has
  it, and the person's seat is marked as the one to move at each prompt;
- the person's own seat reads naturally ("You bid 18", never "you bids", never "you are you");
- the game is saved as a run afterwards (results.json and an archive that verifies);
- the lobby's tournament line counts a running tournament's deals live and keeps finished
  runs apart.

The screenshots for the issue's note are taken by a separate script (docs/screenshots/take.py),
not here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from protocol.events import DealScored, Event, GameDeclared, PlayerTimedOut
from protocol.skat.commands import Declare
from protocol.skat.table import TableState, fold
from services.natsserver import EmbeddedServer
from skatbus.replay import read_archive, verify
from skatbus.web.play import PlaySession
from skatbus.web.play_options import add_play_arguments, play_spec
from tests.bus import Stack, wait_closed
from tests.skatbus.commands import stop_gently

from .cdp import Browser, chromium
from .test_web_seats import _first, _printed

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="chromium not found: apt-get install -y chromium (Debian) to run the browser tests"
)

PAGE = """(() => {
  const b = document.body;
  const hand = [...document.querySelectorAll('.seat.me [data-card]')];
  return {
    index: Number(b.dataset.index || 0), prompt: Number(b.dataset.prompt || -1), yourTurn: b.dataset.yourTurn === '1',
    closed: document.getElementById('where').textContent.includes('table closed'),
    sortedFor: b.dataset.sortedFor || '',
    hand: hand.map(c => c.dataset.card),
    legal: hand.filter(c => c.classList.contains('legal')).map(c => c.dataset.card),
    unplayable: hand.filter(c => c.classList.contains('unplayable')).map(c => [c.dataset.card, c.getAttribute('aria-disabled'),
      c.getAttribute('aria-label'), getComputedStyle(c).opacity]),
    labels: hand.filter(c => c.classList.contains('legal')).map(c => c.getAttribute('aria-label')),
    buttons: [...document.querySelectorAll('#buttons button')].map(x => [JSON.parse(x.dataset.action), x.textContent, x.className]),
    bidList: [...document.querySelectorAll('#bidvalue option')].map(o => Number(o.value)),
    form: !!document.querySelector('.declareform'),
    prompt_text: document.getElementById('prompt').textContent,
    title: document.getElementById('title').textContent,
    bidding: [...document.querySelectorAll('#bidding li')].map(li => li.textContent),
    tricks: [...document.querySelectorAll('#tricks li')].map(li => li.textContent),
    positions: Object.fromEntries([...document.querySelectorAll('#seats .seat')].map(s =>
      [s.dataset.seat, (s.querySelector('.position') || {textContent: ''}).textContent])),
    toMove: [...document.querySelectorAll('#seats .seat.to-move')].map(s => Number(s.dataset.seat)),
    result: (() => { const r = document.getElementById('resultbox');
      return r.classList.contains('hidden') ? null : {deal: Number(r.dataset.deal), text: r.innerText}; })(),
  };
})()"""

FORM_CHOICES = """(() => {
  // Every setting of the declaration form, as a person could make it: hand or not, each game,
  // each announcement; what the form would send for each. The form is left as it was found.
  const out = [];
  const submit = () => JSON.parse(document.getElementById('declare').dataset.action);
  const change = (e, value) => { if (value !== undefined) e.value = value; e.dispatchEvent(new Event('change')); };
  const hand = document.getElementById('handgame');
  const settings = hand ? [false, true] : [null];
  const start = document.getElementById('gamechoice') && document.getElementById('gamechoice').value;
  for (const h of settings) {
    if (hand) { const box = document.getElementById('handgame'); box.checked = h; change(box); }
    const select = document.getElementById('gamechoice');
    if (!select) { out.push(submit()); continue; }
    for (const g of [...select.options].map(o => o.value)) {
      change(document.getElementById('gamechoice'), g);
      const radios = [...document.querySelectorAll('input[name=announce]')].map(r => r.value);
      if (!radios.length) { out.push(submit()); continue; }
      for (const k of radios) {
        const r = document.getElementById('announce-' + k); r.checked = true; change(r);
        out.push(submit());
      }
    }
  }
  if (hand) { const box = document.getElementById('handgame'); box.checked = false; change(box); }
  if (start) change(document.getElementById('gamechoice'), start);
  return out;
})()"""

OWN_SEAT_WRONG = re.compile(
    r"\byou (bids|holds|passes|wins|picks|puts|declares|says|shows|takes|gives|plays|loses)\b|you are you|\(you\)",
    re.IGNORECASE,
)


def _spec(*argv: str) -> Any:
    parser = argparse.ArgumentParser(prog="skat play")
    add_play_arguments(parser)
    return play_spec(parser.parse_args(list(argv)))


def expected_order(cards: list[str], game: str) -> list[str]:
    """A Skat player's order of ``cards`` for ``game`` (C/S/H/D, G, N), written out again here
    (not the page's code): jacks clubs to diamonds, the trump suit A 10 K Q 9 8 7, then the
    other suits in the order clubs, spades, hearts, diamonds; null by suit, A K Q J 10 9 8 7."""
    suits = "CSHD"

    def key(c: str) -> tuple[int, int, int]:
        if game == "N":
            return (suits.index(c[0]), "AKQJT987".index(c[1]), 0)
        if c[1] == "J":
            return (0, suits.index(c[0]), 0)
        if c[0] == game:
            return (1, "ATKQ987".index(c[1]), 0)
        return (2, suits.index(c[0]), "ATKQ987".index(c[1]))

    return sorted(cards, key=key)


def _command(command: Any) -> dict[str, Any]:
    import msgspec

    data: dict[str, Any] = msgspec.to_builtins(command)
    data.pop("at", None)
    return data


def _key(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True)


def check_prompt(page: dict[str, Any], state: TableState, me: int) -> str:
    """The prompt's controls against the log's legal actions at that position; its kind."""
    positions = {str(seat): name for seat, name in zip(state.seats, ("forehand", "middlehand", "rearhand"))}
    assert page["positions"] == positions, (page["positions"], positions)
    assert page["toMove"] == [me], "the person's own seat is marked as the one to move"
    legal = [_command(a) for a in state.legal_actions(me)]
    types = {a["type"] for a in legal}
    deal = state.deal
    assert deal is not None
    offered = [b[0] for b in page["buttons"]]
    if "hold" in types:
        assert [b[1] for b in page["buttons"]] == [f"hold {deal.bid}", "pass"], page["buttons"]
        return "hold"
    if "bid" in types:
        bids = [a["value"] for a in legal if a["type"] == "bid"]
        main = [b for b in page["buttons"] if "main" in b[2].split()]
        assert main[0][1] == f"bid {bids[0]}" and main[0][0] == {"type": "bid", "value": bids[0]}
        assert [bids[0], *page["bidList"]] == bids, "every legal bid is offered, with its value"
        assert {"type": "pass"} in offered
        return "bid"
    if "pickup" in types or "declare" in types:
        assert page["form"] and len(page["buttons"]) == 1, "one form, one button: not a button per combination"
        return "declare"
    if "discard" in types:
        return "discard"
    if "play" in types:
        cards = {a["card"] for a in legal if a["type"] == "play"}
        assert set(page["legal"]) == cards, (page["legal"], cards)
        assert set(page["hand"]) - cards == {u[0] for u in page["unplayable"]}
        for card, disabled, label, opacity in page["unplayable"]:
            assert disabled == "true" and "not playable" in label and float(opacity) < 0.6, (card, label, opacity)
        assert all(label.endswith(", playable") for label in page["labels"])
        return "play"
    return "other"


async def _page(browser: Browser, session: PlaySession) -> tuple[dict[str, Any], list[Event]]:
    """The page at the person's next prompt (or once the table is closed), and the log."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 120
    while True:
        page = await browser.js(PAGE)
        if page["closed"] or page["yourTurn"]:
            return page, await session.log()
        if loop.time() > end:
            raise TimeoutError("no prompt for the person within 120 s")
        await asyncio.sleep(0.05)


def _button(action: dict[str, Any]) -> str:
    return f"#buttons button[data-action='{json.dumps(action, separators=(',', ':'))}']"


async def test_a_person_plays_three_deals_by_clicks(tmp_path: Path) -> None:
    spec = _spec("--name", "ann", "--vs", "heuristic,heuristic", "--turn-seconds", "90")
    session = PlaySession(spec, table="seat-page", seed="seat-page-3", runs=tmp_path / "runs")
    me = spec.seat
    seen: dict[str, int] = {}
    declared: list[dict[str, Any]] = []
    checked_ends: set[int] = set()
    sorted_games: set[str] = set()
    try:
        url = await session.start()
        async with Browser() as browser:
            await browser.goto(url)
            loop = asyncio.get_running_loop()
            end = loop.time() + 400
            while loop.time() < end:
                page, log = await _page(browser, session)
                await _check_ends(page, log, checked_ends)
                if page["closed"]:
                    break
                state = fold(log[: page["prompt"]])
                kind = check_prompt(page, state, me)
                seen[kind] = seen.get(kind, 0) + 1
                deal = state.deal
                assert deal is not None
                game = deal.declaration.game if deal.declaration is not None else None
                if kind in ("bid", "hold", "play"):
                    want = game or "G"  # before a game is declared: grand's order
                    assert page["sortedFor"] == want
                    assert page["hand"] == expected_order(page["hand"], want), (page["hand"], want)
                    if game:
                        sorted_games.add(game)
                if kind == "bid":
                    bid = next(b[0] for b in page["buttons"] if "main" in b[2].split())
                    if bid["value"] <= 20:
                        await browser.click(_button(bid))
                    elif page["bidList"] and bid["value"] <= 23 and not seen.get("jump"):
                        # A jump bid, chosen in the list as a person would, then its button.
                        seen["jump"] = 1
                        target = page["bidList"][0]
                        await browser.js(
                            f"(() => {{ const s = document.getElementById('bidvalue'); s.value = '{target}';"
                            " s.dispatchEvent(new Event('change')); })()"
                        )
                        await browser.wait_for(f"document.getElementById('bidchosen').textContent === 'bid {target}'")
                        await browser.click("#bidchosen")
                    else:
                        await browser.click(_button({"type": "pass"}))
                elif kind == "hold":
                    await browser.click(_button({"type": "hold"}) if deal.bid <= 24 else _button({"type": "pass"}))
                elif kind == "declare":
                    choices = await browser.js(FORM_CHOICES)
                    legal = {_key(_command(a)) for a in state.legal_actions(me)}
                    assert {_key(c) for c in choices} == legal, "the form offers exactly the legal commands"
                    assert len(choices) == len(legal), "and each once"
                    if "pickup" in {c["type"] for c in choices}:
                        await browser.click("#declare")  # the form's default: pick up the skat
                    else:
                        chosen = json.loads(await browser.js("document.getElementById('declare').dataset.action"))
                        declared.append(chosen)
                        await browser.click("#declare")
                elif kind == "discard":
                    if len(await browser.js("[...document.querySelectorAll('.seat.me .card.picked')]")) < 2:
                        first = await browser.js(
                            "[...document.querySelectorAll('.seat.me .card.legal:not(.picked)')].pop().dataset.card"
                        )
                        await browser.click(f'.seat.me .card[data-card="{first}"]')
                        await browser.wait_for(
                            f"!!document.querySelector('.seat.me .card.picked[data-card=\"{first}\"]')"
                        )
                        continue
                    await browser.click("#discard")
                elif kind == "play":
                    await browser.click(f'.seat.me .card.legal[data-card="{page["legal"][-1]}"]')
                else:
                    await browser.click("#buttons button.main")
                await browser.wait_for(
                    f"document.body.dataset.yourTurn !== '1' || Number(document.body.dataset.prompt) > {page['prompt']}"
                )
            log = await wait_closed(session.nc, session.table, timeout=30)
            page = await browser.wait_for(f"(() => {{ const p = {PAGE}; return p.result ? p : null; }})()")
            await _check_ends(page, log, checked_ends)
            text = await browser.js("document.body.innerText")
            assert not OWN_SEAT_WRONG.search(text), OWN_SEAT_WRONG.search(text)
            assert "playing as ann" in page["title"]
            assert any(line.startswith("You ") for line in page["bidding"] + page["tricks"]), page["bidding"]
        assert seen.get("bid") and seen.get("play") and seen.get("declare"), seen
        assert sorted_games & set("CSHD"), f"no suit game was played: {sorted_games}"
        scored = [e for e in log if isinstance(e, DealScored)]
        assert len(scored) == 3 and checked_ends == {1, 2, 3}
        games = [e for e in log if isinstance(e, GameDeclared) and e.seat == me]
        assert [_command(Declare(game=g.game.game, ouvert=g.game.ouvert)) for g in games] == declared
        mine = [e for e in log if isinstance(e, PlayerTimedOut) and e.seat == me]
        assert not mine, "the person's moves timed out"
        where = await session.save()
        assert where == tmp_path / "runs" / "seat-page"
        results = json.loads((where / "results.json").read_text())
        assert [t["table"] for t in results["tables"]] == ["seat-page"] and "ann" in results["config"]["entrants"]
        assert "ann" not in results["config"]["bots"]  # the person: a remote entrant
        archive = read_archive(where / "archive.jsonl")
        verdict = verify(archive["seat-page"])
        assert verdict.ok and verdict.deals == 3, verdict.message
    finally:
        await session.stop()


async def _check_ends(page: dict[str, Any], log: list[Event], checked: set[int]) -> None:
    """The end-of-deal panel, whenever it shows a deal: its card points, value and outcome."""
    result = page["result"]
    if result is None or result["deal"] in checked:
        return
    scored = next(e for e in log if isinstance(e, DealScored) and e.deal == result["deal"])
    r = scored.result
    text = result["text"]
    if r.kind == "passed":
        assert "Everybody passed" in text
    elif r.kind == "game":
        assert "Card points: " in text and f" {r.declarer_points} in {r.declarer_tricks} trick" in text, text
        if r.game is not None and r.game.game != "N":
            assert f"{r.base} \u00d7 {r.multiplier} (" in text and f") = {r.value}." in text, text
        outcome = "Won:" if r.won else "Overbid:" if r.overbid else "Lost:"
        assert outcome in text, text
        sign = "+" if r.game_score > 0 else "\u2212"
        assert f"{sign}{abs(r.game_score)}" in text, text
    checked.add(result["deal"])


async def test_skat_play_name_and_the_saved_run(tmp_path: Path) -> None:
    """``skat play --name``: the person's player id everywhere; the game, stopped before its
    end, is still saved as a run in ``--out``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "play", "--name", "ann", "--out", str(tmp_path / "kept")]
        + ["--listen", "127.0.0.1:0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SKAT_LOG_LEVEL": "warning"},
    )
    try:
        (table,) = await _printed(proc, r"Table (\S+): ann \(you, seat 0\) against heuristic, heuristic-2")
        (seat,) = await _printed(proc, r"(http://127\.0\.0\.1:\d+/play/ann\?token=\S+)")
        base = seat.group(1).split("/play/")[0]
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            lobby = await _first(http, base + "/events/lobby", lambda m: bool(m.get("tables")))
            assert lobby["tables"][0]["players"] == ["ann", "heuristic", "heuristic-2"]
        proc.send_signal(15)
        rest = await asyncio.to_thread(proc.communicate, timeout=60)
        assert proc.returncode in (0, 143)
        run = tmp_path / "kept" / table.group(1)
        assert f"Saved as a run: {run}" in rest[0]
        assert (run / "archive.jsonl").exists() and (run / "results.json").exists()
        assert json.loads((run / "results.json").read_text())["tables"] == []  # not finished: no table's result
    finally:
        stop_gently(proc)


LOBBY = """(() => {
  const line = e => e && {text: e.textContent, deals: Number(e.dataset.deals), done: e.dataset.done === '1'};
  return {running: [...document.querySelectorAll('#tournaments li[data-tournament]')].map(e => [e.dataset.tournament, line(e)]),
    earlier: [...document.querySelectorAll('#earlier li[data-tournament]')].map(e => [e.dataset.tournament, line(e)]),
    earlierShown: !document.getElementById('earlierbox').classList.contains('hidden')};
})()"""


async def test_the_lobby_counts_a_running_tournament_live_apart_from_earlier_runs(
    stack: Stack, nats_server: EmbeddedServer, tmp_path: Path
) -> None:
    from protocol.skat.rules import Rules
    from protocol.tournament import TournamentConfig
    from services.connection import open_connection
    from skatbus.tournament import run_tournament
    from skatbus.web.server import WebServer

    from .test_web import _bots

    nc = await open_connection(nats_server.url)
    web = WebServer(stack.settings, port=0)
    await web.start()
    entrants = ["ann", "bob", "cyd"]
    rules = Rules(rounds=2, seeger_fabian=True)
    bots = await _bots(nc, dict.fromkeys(entrants, "heuristic"), 0.04, "lobby")
    quiet = open(os.devnull, "w")
    run: asyncio.Future[Any] | None = None
    try:
        first = TournamentConfig(id="t-earlier", entrants=entrants, rules=rules, groups=1, duplicate=False, seed="a")
        await run_tournament(nc, first, out_dir=tmp_path, out=quiet)
        second = TournamentConfig(id="t-now", entrants=entrants, rules=rules, groups=1, duplicate=False, seed="b")
        run = asyncio.ensure_future(run_tournament(nc, second, out_dir=tmp_path, out=quiet))
        async with Browser() as browser:
            await browser.goto(web.url + "/")
            counts: list[int] = []
            while not run.done():
                lobby = await browser.js(LOBBY)
                running = dict(lobby["running"])
                if "t-now" in running:
                    assert "t-earlier" not in running, "a finished run is listed as running"
                    assert dict(lobby["earlier"])["t-earlier"]["text"].endswith("finished: 1 table")
                    now = running["t-now"]
                    if not counts or counts[-1] != now["deals"]:
                        counts.append(now["deals"])
                    assert f"playing: {now['deals']}/6 deals, 0/1 tables finished" in now["text"], now["text"]
                await asyncio.sleep(0.05)
            await run
            lobby = await browser.wait_for(
                f"(() => {{ const l = {LOBBY}; return l.earlier.length === 2 ? l : null; }})()", timeout=10
            )
        assert [t for t, _ in lobby["earlier"]] == ["t-now", "t-earlier"], "the newest finished run first"
        assert lobby["earlierShown"] and not lobby["running"]
        assert len([c for c in counts if 0 < c < 6]) >= 2, f"the deals were not counted as they were played: {counts}"
    finally:
        if run is not None and not run.done():
            run.cancel()
        quiet.close()
        for b in bots:
            await b.stop()
        await web.stop()
        await nc.close()
