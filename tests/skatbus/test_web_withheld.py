"""``skat web`` withholds what the players may not see: a duplicate series' tables, whose feeds
a tournament with remote entrants withholds (``protocol.tournament.table_feed``).

The page is served to anyone on the machine, a player of the tournament too. So while a series
whose tables play the same deals is running, its tables are not watched (``/table/<t>`` and its
stream), not replayed (``/replay/<t>``), not offered in the lobby (403, and the reason); the
tournament's page shows of them only that they play and how many deals they have done, and its
standings only the series that have ended. Once every table of the series has closed, they open
as any finished table does.

Real nats-server and services; a fair tournament of 6 entrants over 2 series of 2 tables of 3,
duplicate, one of them remote, played by the SDK (``skatbus.sdk.play``) with a built-in bot that
holds its first move at each table until the test lets it go. So the test sees each series with
one table closed and its sibling still at its first deal, the moment a sibling's results would
tell the held player what its own deal holds. Then: a table that opens withheld while a
spectator's stream watches it cuts that stream; and, without a run, which tables are withheld
(``withheld_tables``) and what a withheld Thirty-one table's row still says (its deals alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from nats.aio.client import Client

from protocol import fairness
from protocol.events import Event
from protocol.skat.rules import Rules
from protocol.thirty_one.events import T31DealScored
from protocol.tournament import (
    TableOutcome,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentState,
    fold_tournament,
    schedule,
    standings_of,
    table_feed,
)
from protocol.wire import OpenTable, Update
from services.store import EventStore
from skatbus.bots import Bot, make_bot
from skatbus.sdk import play
from skatbus.tournament import TournamentLog, run_tournament
from skatbus.web.feed import WITHHELD_UNKNOWN, PlaceTables, withheld_tables
from skatbus.web.server import WebServer
from tests.bus import Stack, open_table

from .cdp import Browser, chromium

REMOTE = "remote-ann"
BOTS = {
    "heuristic": "heuristic",
    "random": "random",
    "stepping": "stepping-random",
    "random-2": "random",
    "h-2": "heuristic",
}
ROW_KEYS = {"table", "players", "deals", "of", "opened", "closed", "series", "withheld"}
"""All a Skat table's row may say (nothing of its scores)."""


class HeldBot:
    """A built-in bot that holds its first move at each table until the test lets it go
    (``release``), so that its table waits at its first deal while the others play on."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.held: dict[str, asyncio.Event] = {}
        self.holding: set[str] = set()

    def release(self, table: str) -> None:
        self.held.setdefault(table, asyncio.Event()).set()

    async def act(self, update: Update) -> Any:
        table = update.view.table
        gate = self.held.setdefault(table, asyncio.Event())
        if not gate.is_set():
            self.holding.add(table)
            await gate.wait()
        chosen = self.bot.act(update)
        return await chosen if asyncio.iscoroutine(chosen) else chosen


class Stream:
    """An event stream read as it comes, every message kept (``messages``, with its raw text)."""

    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http, self.url = http, url
        self.messages: list[tuple[bytes, dict[str, Any]]] = []
        self.status = 0
        self._new = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Stream:
        self._task = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task

    async def _read(self) -> None:
        async with self.http.get(self.url) as r:
            self.status = r.status
            async for line in r.content:
                if line.startswith(b"data: "):
                    raw = line[len(b"data: ") :].strip()
                    self.messages.append((raw, json.loads(raw)))
                    self._new.set()

    async def wait_for(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 120.0) -> dict[str, Any]:
        """The first message (from the start) that is ``wanted``; waits for it."""
        seen = 0
        async with asyncio.timeout(timeout):
            while True:
                for _, message in self.messages[seen:]:
                    if wanted(message):
                        return message
                seen = len(self.messages)
                self._new.clear()
                await self._new.wait()


async def _until(check: Callable[[], Any], timeout: float = 120.0, what: str = "condition") -> Any:
    async with asyncio.timeout(timeout):
        while not (value := await check()):
            await asyncio.sleep(0.05)
    return value


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(url, allow_redirects=False) as r:
        return r.status, (await r.text()) if r.content_type != "text/event-stream" else ""


async def _first_message(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with asyncio.timeout(30), http.get(url) as r:
        assert r.status == 200, f"{url}: {r.status}"
        async for line in r.content:
            if line.startswith(b"data: "):
                return json.loads(line[len(b"data: ") :])  # type: ignore[no-any-return]
    raise AssertionError(f"{url}: no message")


async def assert_refused(http: aiohttp.ClientSession, base: str, table: str, reason: str) -> None:
    """The table's spectator page, its stream and its replay: 403, saying why."""
    for path in (f"/table/{table}", f"/events/table/{table}", f"/replay/{table}"):
        status, text = await _get(http, base + path)
        assert status == 403 and reason in text, (path, status, text)


async def assert_open(http: aiohttp.ClientSession, base: str, table: str) -> None:
    """The table's page, stream and replay open as any finished table's do."""
    status, page = await _get(http, f"{base}/table/{table}")
    assert status == 200 and "<html" in page.lower()
    status, replay = await _get(http, f"{base}/replay/{table}")
    assert status == 200 and table in replay
    watched = await _first_message(http, f"{base}/events/table/{table}")
    assert watched["kind"] == "table" and watched["closed"] and watched["view"]["table"] == table


def series_of(message: dict[str, Any], number: int) -> dict[str, Any]:
    return next(s for s in message["series"] if s["series"] == number)


def table_row(message: dict[str, Any], table: str) -> dict[str, Any]:
    return next(t for s in message["series"] for t in s["tables"] if t["table"] == table)


def closed_row(message: dict[str, Any], table: str) -> bool:
    """Whether the message shows ``table`` closed with its 3 deals played."""
    row = table_row(message, table)
    return bool(row["closed"] and row["deals"] == 3)


def assert_withheld_series(raw: bytes, message: dict[str, Any], number: int) -> None:
    """Of a running withheld series, a message shows its tables' progress and nothing more."""
    series = series_of(message, number)
    assert series["withheld"] and series["standings"] == [], series
    for row in series["tables"]:
        assert row["withheld"] and set(row) <= ROW_KEYS, row
    if number == 1:  # nothing has ended yet: no standings, no crosstable, no score anywhere
        assert message["standings"] == [] and message["crosstable"] == {} and b"seeger_fabian" not in raw, raw[:400]
    else:  # the standings are series 1's alone: every entrant with the 3 deals it played there
        assert all(s["deals"] == 3 for s in message["standings"]), message["standings"]
        assert all(r["tables"] == 1 for row in message["crosstable"].values() for r in row.values())


SERIES_PANEL = """(() => {
  const p = document.querySelector('#series [data-series="%d"]');
  if (!p || !p.querySelector('tr[data-table]')) return null;
  return {withheld: p.dataset.withheld || '', note: (p.querySelector('p.withheld') || {}).textContent || '',
          links: [...p.querySelectorAll('a')].map(a => a.getAttribute('href')),
          rows: [...p.querySelectorAll('tr[data-table]')].map(r => [r.dataset.table, r.dataset.withheld || '',
            r.lastElementChild.textContent]),
          standings: document.querySelector('#standings').textContent};
})()"""
"""What the tournament page shows of one series, in the browser."""


async def check_the_page(base: str, tid: str, held: str, sibling: str) -> None:
    """In headless chromium, while series 1 runs: the lobby lists the held table without a link;
    the tournament page shows series 1 withheld, with no link to its tables nor replays (its
    sibling "finished", not "replay"), and no standings."""
    async with Browser() as browser:
        await browser.goto(base + "/")
        entry = await browser.wait_for(
            f"(() => {{ const e = document.querySelector('li[data-table=\"{held}\"]'); return e && "
            f"{{withheld: e.dataset.withheld || '', links: e.querySelectorAll('a').length, text: e.textContent}}; }})()"
        )
        assert entry["withheld"] == "1" and entry["links"] == 0 and "series 1" in entry["text"], entry
        await browser.goto(f"{base}/tournament/{tid}")
        panel = await browser.wait_for(SERIES_PANEL % 1)
        assert panel["withheld"] == "1" and "same deals" in panel["note"] and panel["links"] == [], panel
        assert sorted(panel["rows"]) == sorted([[held, "1", "playing"], [sibling, "1", "finished"]])
        assert "no deal scored yet" in panel["standings"]


async def _logs(store: EventStore, specs: list[TableSpec]) -> list[list[Event]]:
    return [[s.event for s in await store.read(t.table) if isinstance(s.event, Event)] for t in specs]


async def test_a_duplicate_series_with_a_remote_entrant_is_withheld_until_it_has_ended(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    tid = "held6"
    seed = fairness.new_server_seed()
    config = TournamentConfig(
        id=tid,
        entrants=[REMOTE, *BOTS],
        bots=BOTS,
        rules=Rules(rounds=1, seeger_fabian=True, turn_seconds=120),
        series=2,
        fair=fairness.SCHEME,
        seed=seed,
        commitment=fairness.commitment(seed),
        nonce_seconds=60.0,
    )
    assert table_feed(config) == "withheld"
    web = WebServer(stack.settings, port=0)
    base = await web.start()
    store = EventStore(nc)
    bot = HeldBot(make_bot("random", "ann"))
    stop = asyncio.Event()
    remote = asyncio.ensure_future(play(bot, REMOTE, stack.url, stop=stop))
    created = asyncio.Event()
    run = asyncio.ensure_future(
        run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO(), on_created=lambda c: created.set())
    )
    try:
        await asyncio.wait_for(created.wait(), 60)
        log = fold_tournament(await TournamentLog(nc).read(tid))
        held = {n: next(t for t in log.series_of(n) if REMOTE in t.players) for n in (1, 2)}
        sibling = {n: next(t for t in log.series_of(n) if REMOTE not in t.players) for n in (1, 2)}
        reason = {
            n: f"withheld until series {n} of tournament {tid} has ended: its tables play the same deals"
            for n in (1, 2)
        }
        async with aiohttp.ClientSession() as http, Stream(http, f"{base}/events/tournament/{tid}") as feed:

            async def at_first_deal(n: int) -> bool:
                closed = await store.has_event(sibling[n].table, "table_closed")
                return held[n].table in bot.holding and closed

            # Series 1: the sibling has played its deals and closed; the remote entrant's table
            # waits at the same first deal.
            await _until(lambda: at_first_deal(1), what="series 1 with its sibling closed")
            for table in (held[1].table, sibling[1].table, held[2].table, sibling[2].table):
                await assert_refused(http, base, table, reason[1] if table.startswith(f"{tid}-s1") else reason[2])
            lobby = await _first_message(http, f"{base}/events/lobby")
            listed = {t["table"]: t for t in lobby["tables"]}
            assert listed[held[1].table]["withheld"] == reason[1] and sibling[1].table not in listed
            message = await feed.wait_for(lambda m: bool(m.get("many")) and closed_row(m, sibling[1].table))
            assert table_row(message, held[1].table)["deals"] == 0
            if chromium() is not None:  # one look in a real browser (skipped where there is no chromium)
                await check_the_page(base, tid, held[1].table, sibling[1].table)
            for raw, seen in feed.messages:
                assert_withheld_series(raw, seen, 1)

            # Series 1 ends, series 2 reaches the same point: series 1 opens, series 2 does not.
            bot.release(held[1].table)
            await _until(lambda: at_first_deal(2), what="series 2 with its sibling closed")
            for table in (held[1].table, sibling[1].table):
                await assert_open(http, base, table)
            for table in (held[2].table, sibling[2].table):
                await assert_refused(http, base, table, reason[2])
            message = await feed.wait_for(
                lambda m: series_of(m, 1)["status"] == "done" and closed_row(m, sibling[2].table)
            )
            first = msgspec.to_builtins(standings_of("skat", await _logs(store, log.series_of(1))))
            assert message["standings"] == first and series_of(message, 1)["standings"] == first
            assert not series_of(message, 1)["withheld"] and not table_row(message, held[1].table).get("withheld")
            s1 = {frozenset((a, b)) for t in log.series_of(1) for a in t.players for b in t.players if a != b}
            assert {frozenset((a, b)) for a, row in message["crosstable"].items() for b in row} == s1
            ended = next(i for i, (_, m) in enumerate(feed.messages) if series_of(m, 1)["status"] == "done")
            for raw, seen in feed.messages[ended:]:
                if series_of(seen, 2)["tables"] and series_of(seen, 2)["status"] != "done":
                    assert_withheld_series(raw, seen, 2)

            # The end: every table opens, and the page shows what results.json holds.
            bot.release(held[2].table)
            results = await asyncio.wait_for(run, 120)
            for table in (held[2].table, sibling[2].table):
                await assert_open(http, base, table)
            final = await feed.wait_for(lambda m: m["done"] and m["standings"] == results["standings"])
            assert final["crosstable"] == results["crosstable"]
            assert [s["standings"] for s in final["series"]] == [s["standings"] for s in results["series"]]
            assert not any(s["withheld"] for s in final["series"])
    finally:
        stop.set()
        run.cancel()  # done already, unless the test failed
        for task in (run, remote):
            with contextlib.suppress(BaseException):
                await task
        await web.stop()


async def test_a_table_that_opens_withheld_under_a_spectators_eyes_cuts_the_stream(stack: Stack, nc: Client) -> None:
    """A table of no tournament, watched before it opens: once it opens withheld, its stream
    ends with the notice (not one event of it), and it is refused and not offered."""
    web = WebServer(stack.settings, port=0)
    base = await web.start()
    table = "adhoc-withheld"
    try:
        async with aiohttp.ClientSession() as http, Stream(http, f"{base}/events/table/{table}") as watched:
            before = await watched.wait_for(lambda m: m["kind"] == "table")
            assert watched.status == 200 and before["view"] is None
            reply = await open_table(nc, OpenTable(table=table, players=["p1", "p2", "p3"], feed="withheld"))
            assert reply.ok, reply
            notice = await watched.wait_for(lambda m: m["kind"] == "withheld")
            assert "withheld" in notice["reason"]
            assert all(m["kind"] == "withheld" or m["view"] is None for _, m in watched.messages)
            await assert_refused(http, base, table, WITHHELD_UNKNOWN)
            lobby = await _first_message(http, f"{base}/events/lobby")
            assert next(t for t in lobby["tables"] if t["table"] == table)["withheld"] == WITHHELD_UNKNOWN
    finally:
        await web.stop()


# --- which tables, and what of them, without a tournament run ------------------------------------


def _many(game: str = "skat", remote: bool = True, duplicate: bool = True, **extra: Any) -> TournamentConfig:
    entrants = ["e1", "e2", "e3", "e4", "e5", "e6"]
    bots = {e: "random" for e in entrants[1 if remote else 0 :]}
    return TournamentConfig(id="unit", entrants=entrants, bots=bots, series=2, duplicate=duplicate, game=game, **extra)


def _state(config: TournamentConfig) -> TournamentState:
    state = TournamentState()
    state.apply(TournamentCreated(config=config, tables=schedule(config)))
    return state


def test_withheld_tables_are_those_of_a_duplicate_series_with_a_table_still_to_close() -> None:
    config = _many()
    state = _state(config)
    s1, s2 = ([t.table for t in state.series_of(n)] for n in (1, 2))
    assert withheld_tables(config, state, []) == {*s1, *s2}
    assert withheld_tables(config, state, s1[:1]) == {*s1, *s2}, "a closed sibling is withheld while one plays"
    assert withheld_tables(config, state, s1) == set(s2)
    assert withheld_tables(config, state, s1 + s2) == set()
    for public in (_many(remote=False), _many(duplicate=False)):  # feeds public: nothing withheld
        assert withheld_tables(public, _state(public), []) == set()


def test_a_withheld_thirty_one_table_shows_its_deals_and_nothing_of_how_they_went() -> None:
    config = _many("thirty-one", game_rules={"coins": 2}, table_size=3)
    state = _state(config)
    running, finished = state.series_of(1)
    places = PlaceTables(config, store=None)  # type: ignore[arg-type]  # message() reads nothing
    places.scored[running.table] = {
        1: T31DealScored(deal=1, lives=[1, 0, 0], coins=[1, 2, 2], kitty=1, eliminated=[]),
        2: T31DealScored(deal=2, lives=[0, 2, 0], coins=[1, 0, 2], kitty=3, eliminated=[]),
    }
    places.outcomes[finished.table] = TableOutcome(
        table=finished.table, players=finished.players, closed=True, deals=4, places=[2, 1, 3], coins=[0, 3, 0],
        dealt=[4, 4, 4],
    )  # fmt: skip
    shown = {t["table"]: t for t in places.message("unit", state)["tables"]}
    assert shown[running.table]["lost"] == [1, 2, 0] and shown[finished.table]["places"] == [2, 1, 3]
    hidden = withheld_tables(config, state, places.closed)
    assert {running.table, finished.table} <= hidden
    message = places.message("unit", state, hidden)
    rows = {t["table"]: t for t in message["tables"]}
    assert rows[running.table]["deals"] == 2 and rows[finished.table]["deals"] == 4
    for row in (rows[running.table], rows[finished.table]):
        assert row["lost"] == [] and row["places"] is None and row["coins"] is None and row["broken"] == ""
    assert rows[finished.table]["closed"] and rows[finished.table]["progress"] == 1.0
    max_deals = config.table_rules().max_deals
    assert rows[running.table]["progress"] == min(0.99, 2 / max_deals), "progress by its deals alone"
