"""Every registered game's tables played through the five service processes, by players that
speak raw JSON the way a bot author in any language would, equal the pure engine's tables; also
with the play service killed and restarted in the middle, and with both games on one set of
services at once.

The players choose among ``view.legal`` by a hash of the prompt's log position, so the pure
engine driven by the same choice over ``state.legal_actions`` gives the same log."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import registry
from protocol.events import Event, TableClosed
from protocol.rummy.table import RummyTableRules
from protocol.skat.rules import Rules
from protocol.subjects import command_subject, parse_view_subject
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.wire import OpenTable
from tests.bus import Stack, open_table, wait_closed, wait_events

TABLES: dict[str, tuple[list[str], Any]] = {
    "skat": (["ann", "bob", "cyd"], Rules(rounds=1, turn_seconds=60)),
    "thirty-one": (["ann", "bob", "cyd", "dan"], ThirtyOneRules(coins=1, turn_seconds=60)),
    "rummy": (["ann", "bob", "cyd"], RummyTableRules(variant="c", max_deals=1, turn_seconds=60)),
}


def choose(policy: str, index: int, legal: list[Any]) -> Any:
    digest = hashlib.sha256(f"{policy}:{index}".encode()).digest()
    return legal[int.from_bytes(digest[:8], "big") % len(legal)]


def pure_log(game_name: str, table: str, seed: str, policy: str) -> list[Event]:
    """The table as the engine alone plays it, with the players' choice."""
    game = registry.get(game_name)
    players, rules = TABLES[game_name]
    state = game.new_state()
    log: list[Event] = []

    def add(event: Event) -> None:
        state.apply(event)
        log.append(event)

    add(game.open_event(table, players, rules, seed, {p: "json" for p in players}))
    while not state.closed:
        owed = game.due(state)
        if owed is not None:
            add(owed)
            continue
        seat = state.to_move
        assert seat is not None, "nothing due and nobody to move"
        legal = msgspec.to_builtins(list(state.legal_actions(seat)))
        action = {**choose(policy, state.events, legal), "at": state.events}
        command, _ = game.decode_command(json.dumps(action).encode())
        result = game.decide(state, seat, command)
        assert isinstance(result, list), result
        for event in result:
            add(event)
    return log


class JsonPlayer:
    """A player in raw JSON: answers each turn prompt with a hashed choice of ``view.legal``."""

    def __init__(self, nc: Client, player: str, table: str, policy: str) -> None:
        self.nc, self.player, self.table, self.policy = nc, player, table, policy
        self.refused: list[dict[str, Any]] = []
        self.n = 0

    async def start(self) -> None:
        await self.nc.subscribe(f"skat.view.{self.player}.{self.table}", cb=self._on_update)
        await self.nc.subscribe(f"_INBOX.{self.player}.{self.table}.*", cb=self._on_reply)
        await self.nc.flush()

    async def _on_update(self, msg: Msg) -> None:
        update = json.loads(msg.data)
        index = update.get("index", 0)
        _, table = parse_view_subject(msg.subject)
        if not update.get("your_turn"):
            return
        # A repeated prompt (after a restart) is answered again: the first answer may have
        # been lost while the service was down, and a second one is refused as stale.
        action = {**choose(self.policy, index, update["view"]["legal"]), "at": index}
        self.n += 1
        await self.nc.publish(
            command_subject(self.player, table),
            json.dumps(action).encode(),
            reply=f"_INBOX.{self.player}.{table}.{self.n}",
        )

    async def _on_reply(self, msg: Msg) -> None:
        reply = json.loads(msg.data)
        if not reply.get("ok") and reply.get("code") != "stale":
            self.refused.append(reply)


async def play(nc: Client, game_name: str, table: str, seed: str, policy: str) -> list[JsonPlayer]:
    players, rules = TABLES[game_name]
    seated = [JsonPlayer(nc, p, table, policy) for p in players]
    for p in seated:
        await p.start()
    request = OpenTable(
        table=table, players=players, rules=rules, game=game_name, seed=seed, formats={p: "json" for p in players}
    )
    reply = await open_table(nc, request)
    assert reply.ok, reply
    return seated


@pytest.mark.parametrize("game_name", sorted(TABLES))
async def test_a_table_of_each_game_over_the_bus_equals_the_engine(stack: Stack, nc: Client, game_name: str) -> None:
    assert set(TABLES) == set(registry.names()), "every registered game is played over the bus here"
    table = f"bus-{game_name}"
    seated = await play(nc, game_name, table, "seed-1", "p1")
    log = await wait_closed(nc, table, timeout=180)
    assert log == pure_log(game_name, table, "seed-1", "p1")
    assert all(not p.refused for p in seated), [p.refused for p in seated]


@pytest.mark.parametrize("game_name", sorted(TABLES))
async def test_killing_the_play_service_mid_table_changes_nothing(stack: Stack, nc: Client, game_name: str) -> None:
    table = f"kill-{game_name}"
    seated = await play(nc, game_name, table, "seed-2", "p2")
    await wait_events(nc, table, 12, timeout=60)
    stack.kill("play")
    stack.start("play")
    log = await wait_closed(nc, table, timeout=180)
    assert log == pure_log(game_name, table, "seed-2", "p2")
    assert isinstance(log[-1], TableClosed)
    assert all(not p.refused for p in seated), [p.refused for p in seated]


async def test_both_games_at_once_on_one_set_of_services(stack: Stack, nc: Client) -> None:
    tables = {name: f"both-{name}" for name in TABLES}
    for name, table in tables.items():
        await play(nc, name, table, "seed-3", "p3")
    logs = await asyncio.gather(*(wait_closed(nc, t, timeout=180) for t in tables.values()))
    for (name, table), log in zip(tables.items(), logs):
        assert log == pure_log(name, table, "seed-3", "p3"), name
