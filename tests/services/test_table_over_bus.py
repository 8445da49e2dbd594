"""A table played through the five service processes equals the pure engine's table."""

from __future__ import annotations

from nats.aio.client import Client

from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.wire import OpenTable
from skatbus.bots import HashedBot
from skatbus.local import play_table
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed

PLAYERS = ["ann", "bob", "cyd"]


def pure_log(table: str, rules: Rules, seed: str, policy_seed: str) -> list:
    return play_table(table, PLAYERS, [HashedBot(policy_seed)] * 3, rules, seed).log


async def test_table_matches_pure_engine(stack: Stack, nc: Client) -> None:
    rules = Rules(rounds=2, kontra=True, turn_seconds=60)
    players = [RemotePlayer(nc, p, HashedBot("p1")) for p in PLAYERS]
    for p in players:
        await p.start()
    reply = await open_table(nc, OpenTable(table="t1", players=PLAYERS, rules=rules, seed="seed-1"))
    assert reply.ok, reply
    log = await wait_closed(nc, "t1")
    for p in players:
        await p.stop()
    expected = pure_log("t1", rules, "seed-1", "p1")
    assert log == expected
    assert fold(log).sheet == fold(expected).sheet
    assert all(not p.rejections for p in players)
