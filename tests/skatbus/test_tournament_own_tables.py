"""A tournament's players play only its own tables. A player's subject names the player, not its
tournament, and the built-in bots have the same names in every tournament: so the tables an
older, interrupted tournament left open on the same server prompt a new tournament's bots too.
They must not answer them (nor count a fault for a table of another game), and a remote bot
started for one tournament (``skat bot --tournament ID``) ignores the others' tables as well."""

from __future__ import annotations

import asyncio
import functools
import io
from pathlib import Path
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import DealDealt, Event
from protocol.skat.rules import Rules
from protocol.tournament import TableSpec, TournamentConfig
from protocol.wire import OpenTable
from services.store import EventStore
from skatbus.bots import RandomBot
from skatbus.sdk import play
from tests.bus import Stack, open_table, wait_events

BOTS = {"heuristic": "heuristic", "random": "random", "random-2": "random"}


async def _log(nc: Client, table: str) -> list[Event]:
    return [s.event for s in await EventStore(nc).read(table)]


async def _watch_prompts(nc: Client, subject: str) -> tuple[Any, list[str]]:
    """A subscription of our own that records the tables prompted on ``subject``."""
    seen: list[str] = []

    async def on(msg: Msg) -> None:
        if b"your_turn" in msg.data:  # msgpack keeps field names: a prompt, not a deal's update
            seen.append(msg.subject.rpartition(".")[2])

    return await nc.subscribe(subject, cb=on), seen


async def _note(into: list[Msg], msg: Msg) -> None:
    into.append(msg)


async def test_a_new_tournament_leaves_an_older_ones_thirty_one_table_alone(
    stack: Stack, nc: Client, tmp_path: Path
) -> None:
    """As in the trial: a Thirty-one table of tournament ``old`` still open, seating the same
    names, prompts them while a Skat tournament ``new`` plays. Nobody answers it, and no bot of
    ``new`` counts a fault for it (its Skat bots cannot read a Thirty-one view)."""
    from skatbus.tournament import run_tournament

    sub, prompted = await _watch_prompts(nc, "skat.view.*.old-g0")
    opened: list[asyncio.Future[Any]] = []

    def on_table_open(spec: TableSpec) -> None:  # the bots are subscribed by now
        if not opened:
            request = OpenTable(table="old-g0", players=list(BOTS), game="thirty-one", seed="old")
            opened.append(asyncio.ensure_future(open_table(nc, request)))

    config = TournamentConfig(
        id="new", entrants=list(BOTS), bots=BOTS, rules=Rules(rounds=2, seeger_fabian=True), groups=1, seed="new"
    )
    results = await run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO(), on_table_open=on_table_open)
    prompted_while_playing = list(prompted)  # the bots were still subscribed
    await sub.unsubscribe()
    assert opened and (await opened[0]).ok
    assert prompted_while_playing, "the old table prompted nobody while the tournament played: this tests nothing"
    assert not any(results["faults"].values()), results["faults"]
    log = await _log(nc, "old-g0")
    assert sum(isinstance(e, DealDealt) for e in log) <= 1 and len(log) <= 3, log[-3:]  # open, dealt: no move


async def test_a_bot_started_for_one_tournament_ignores_another_ones_table(stack: Stack, nc: Client) -> None:
    """``play(..., tournament="mine")``: a prompt from ``other-g0`` is dropped unread (counted in
    ``elsewhere``), one from ``mine-g0`` answered."""
    sub, prompted = await _watch_prompts(nc, "skat.view.ann.*")
    hellos: list[Msg] = []
    heard = await nc.subscribe("skat.hello.ann", cb=functools.partial(_note, hellos))
    await nc.flush()
    stop = asyncio.Event()
    bot = asyncio.ensure_future(play(RandomBot("a"), "ann", stack.url, stop=stop, tournament="mine"))
    try:
        async with asyncio.timeout(20):
            while not hellos:  # ann is subscribed (it says hello after that)
                await asyncio.sleep(0.01)
        rules = Rules(rounds=1, turn_seconds=60)
        players = ["bob", "ann", "cyd"]  # ann is middlehand: the first to bid
        assert (await open_table(nc, OpenTable(table="other-g0", players=players, rules=rules, seed="o"))).ok
        async with asyncio.timeout(20):
            while "other-g0" not in prompted:
                await asyncio.sleep(0.01)
        opened = len(await _log(nc, "other-g0"))
        assert (await open_table(nc, OpenTable(table="mine-g0", players=players, rules=rules, seed="m"))).ok
        mine = 0
        async with asyncio.timeout(20):
            while "mine-g0" not in prompted:
                await asyncio.sleep(0.01)
            mine = len(await _log(nc, "mine-g0"))
            await wait_events(nc, "mine-g0", mine + 1)  # ann's bid or pass
    finally:
        stop.set()
        player = await asyncio.wait_for(bot, 20)
        await sub.unsubscribe()
        await heard.unsubscribe()
    assert len(await _log(nc, "other-g0")) == opened  # nobody answered there
    assert player.elsewhere >= 1 and "other-g0" not in player.answered and player.faults == 0
