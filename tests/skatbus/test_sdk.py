"""The bot SDK over a real stack: reconnecting bots, flooding bots, the schema, the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from nats.aio.client import Client

from protocol.events import PlayerTimedOut
from protocol.schema import player_schema
from protocol.skat.commands import Bid, PlayCard
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.wire import OpenTable, Reply, Update, encode
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from skatbus.sdk import play
from tests.bus import Stack, ask, open_table, wait_closed, wait_events

PLAYERS = ["ann", "bob", "cyd"]


def _bot_process(url: str, player: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "skatbus.cli", "bot", "stepping-random", "--player", player, "--nats", url]
    )


async def test_a_bot_that_reconnects_gets_its_prompt_again(stack: Stack, nc: Client) -> None:
    others = [RemotePlayer(nc, p, HashedBot("r")) for p in ("ann", "cyd")]
    for p in others:
        await p.start()
    bob = _bot_process(stack.url, "bob")
    try:
        rules = Rules(rounds=1, turn_seconds=60)
        assert (await open_table(nc, OpenTable(table="re", players=PLAYERS, rules=rules, seed="re"))).ok
        await wait_events(nc, "re", 15)
        bob.kill()  # gone mid-deal, possibly with a prompt unanswered
        bob.wait()
        await asyncio.sleep(0.5)
        bob = _bot_process(stack.url, "bob")  # back: it says hello and gets its prompt again
        log = await wait_closed(nc, "re", timeout=60)
    finally:
        bob.terminate()
        assert bob.wait(10) == 0  # a clean shutdown on SIGTERM
        for p in others:
            await p.stop()
    fold(log)
    assert not [e for e in log if isinstance(e, PlayerTimedOut)]


class Flooder:
    """Plays legally, but first fires a burst of illegal and malformed commands at the table."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc, self.player = nc, player
        self.inner = HashedBot("flood")
        self.replies: list[Reply] = []

    async def act(self, obs: Update) -> object:
        junk = [
            b"\x00\x01garbage",
            b'{"type": "play", "card": "ZZ"}',
            encode(Bid(value=19)),
            encode(PlayCard(card="CJ", at=0)),
        ]
        answers = await asyncio.gather(
            *(ask(self.nc, self.player, obs.view.table, junk[i % len(junk)]) for i in range(40)), return_exceptions=True
        )
        self.replies += [a for a in answers if not isinstance(a, BaseException)]
        return self.inner.act(obs)


async def test_a_flooding_bot_is_refused_and_cannot_stall_the_table(stack: Stack, nc: Client) -> None:
    flooder = Flooder(nc, "bob")
    players = [
        RemotePlayer(nc, "ann", HashedBot("f")),
        RemotePlayer(nc, "bob", flooder),
        RemotePlayer(nc, "cyd", HashedBot("f")),
    ]
    for p in players:
        await p.start()
    rules = Rules(rounds=1, turn_seconds=30)
    assert (await open_table(nc, OpenTable(table="flood", players=PLAYERS, rules=rules, seed="flood"))).ok
    log = await wait_closed(nc, "flood", timeout=90)
    for p in players:
        await p.stop()
    fold(log)
    assert flooder.replies and all(not r.ok for r in flooder.replies)
    assert {r.code for r in flooder.replies} <= {"malformed", "illegal", "out_of_turn", "stale"}
    assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))


async def test_sdk_play_with_an_async_bot(stack: Stack, nc: Client) -> None:
    class AsyncBot:
        def __init__(self) -> None:
            self.inner = HashedBot("a")

        async def act(self, obs: Update) -> object:
            await asyncio.sleep(0)
            return self.inner.act(obs)

    stop = asyncio.Event()
    tasks = [asyncio.ensure_future(play(AsyncBot(), p, stack.url, stop)) for p in PLAYERS]
    assert (await open_table(nc, OpenTable(table="sdk", players=PLAYERS, rules=Rules(rounds=1), seed="sdk"))).ok
    fold(await wait_closed(nc, "sdk", timeout=60))
    stop.set()
    for remote in await asyncio.gather(*tasks):
        assert not remote.rejections


def test_schema_covers_every_command() -> None:
    document = json.loads(player_schema())
    tags = {
        d["properties"]["type"]["enum"][0]
        for name, d in document["$defs"].items()
        if name
        in {
            "Bid",
            "Hold",
            "Pass",
            "PickUpSkat",
            "Discard",
            "Declare",
            "Kontra",
            "Re",
            "PlayCard",
            "ShowCards",
            "Resign",
        }
    }
    assert tags == {"bid", "hold", "pass", "pickup", "discard", "declare", "kontra", "re", "play", "show", "resign"}
    assert {"command", "reply", "update"} <= set(document["properties"])


async def test_a_flood_beyond_the_rate_limit_is_refused_as_such(nats_server: object, nc: Client) -> None:
    from services.main import wait_ready

    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    stack.env["SKAT_PLAYER_RATE"] = "5"
    stack.start_all()
    try:
        await wait_ready(stack.url)
        assert (await open_table(nc, OpenTable(table="rl", players=PLAYERS, rules=Rules(rounds=1), seed="rl"))).ok
        answers = await asyncio.gather(
            *(ask(nc, "ann", "rl", encode(Bid(value=19)), timeout=1.0) for _ in range(40)), return_exceptions=True
        )
        codes = [a.code for a in answers if isinstance(a, Reply) and a.code != "no_responders"]
        # The burst (twice the rate) is read and refused on its merits; beyond it, commands are
        # dropped unread (or by the broker, once her door is shut), and the sender hears
        # "rate_limited" once, not once each.
        assert codes.count("rate_limited") == 1, codes
        assert 8 <= len(codes) - 1 <= 14 and set(codes) <= {"rate_limited", "out_of_turn", "illegal"}, codes
        unanswered = [a for a in answers if isinstance(a, TimeoutError) or getattr(a, "code", "") == "no_responders"]
        assert len(unanswered) >= 24
        await asyncio.sleep(2.5)  # the penalty (1 s) is over and the bucket refills: read again
        assert (await ask(nc, "ann", "rl", encode(Bid(value=19)))).code == "out_of_turn"
        assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))
    finally:
        stack.stop()
