"""The bot SDK across games: ``act(update)`` gets its table's game's update, ``ByGame`` seats a
player with a bot per game, ``knowledge(view)`` knows either game, ``built_in`` makes the
built-in bots of every game; and over a real stack, SDK players play Thirty-one tables, and one
player plays a Skat and a Thirty-one table at once."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from nats.aio.client import Client

from protocol import registry
from protocol.events import PlayerTimedOut, TableClosed
from protocol.skat.knowledge import Knowledge
from protocol.skat.rules import Rules
from protocol.thirty_one import Discard, Knock, ThirtyOneRules, ThirtyOneView, hand_value
from protocol.thirty_one.views import ThirtyOneUpdate
from protocol.wire import OpenTable, Update
from skatbus.bots import HashedBot
from skatbus.sdk import AnyBot, ByGame, ThirtyOneKnowledge, built_in, game_of, knowledge, play
from skatbus.thirty_one_bots import HeuristicBot as T31Heuristic
from skatbus.thirty_one_bots import RandomBot as T31Random
from tests.bus import Stack, open_table, wait_closed


def _prompt(name: str, players: list[str], rules: Any) -> Any:
    """The first prompt of a fresh table of game ``name``, as the services would send it."""
    game = registry.get(name)
    state = game.new_state()
    state.apply(game.open_event("t", players, rules, "sdk-seed", {}))
    while state.to_move is None:
        owed = game.due(state)
        assert owed is not None
        state.apply(owed)
    seat = state.to_move
    return game.update_type(view=game.view(state, seat), your_turn=True, index=state.events)


SKAT = ("skat", ["ann", "bob", "cyd"], Rules())
THIRTY_ONE = ("thirty-one", ["ann", "bob", "cyd"], ThirtyOneRules())


def test_game_of_names_the_game_of_each_update() -> None:
    skat, t31 = _prompt(*SKAT), _prompt(*THIRTY_ONE)
    assert isinstance(skat, Update) and isinstance(t31, ThirtyOneUpdate)
    assert (game_of(skat), game_of(t31)) == ("skat", "thirty-one")
    with pytest.raises(ValueError, match="not a player's update"):
        game_of(object())


def test_knowledge_knows_each_games_view() -> None:
    skat, t31 = _prompt(*SKAT), _prompt(*THIRTY_ONE)
    k = knowledge(t31.view)
    assert isinstance(k, ThirtyOneKnowledge) and k.hand == t31.view.hand and len(k.hand) == 3
    assert k.pile == t31.view.pile and len(k.unseen) == 52 - 4  # own three and the pile's first
    sk = knowledge(skat.view)
    assert isinstance(sk, Knowledge) and sk.seat == skat.view.seat


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[Any] = []

    def act(self, obs: Any) -> Any:
        self.seen.append(obs)
        return obs.view.legal[0]


async def test_by_game_hands_each_update_to_its_games_bot() -> None:
    skat_bot, t31_bot = _Named("skat"), _Named("thirty-one")
    player = ByGame({"skat": skat_bot, "thirty-one": t31_bot})
    skat, t31 = _prompt(*SKAT), _prompt(*THIRTY_ONE)
    assert await player.act(t31) == t31.view.legal[0]
    assert await player.act(skat) == skat.view.legal[0]
    assert skat_bot.seen == [skat] and t31_bot.seen == [t31]


async def test_by_game_awaits_async_bots_and_threads_blocking_ones() -> None:
    threads: list[threading.Thread] = []

    class Blocking:
        blocking = True

        def act(self, obs: Any) -> Any:
            threads.append(threading.current_thread())
            return obs.view.legal[-1]

    class Async:
        async def act(self, obs: Any) -> Any:
            await asyncio.sleep(0)
            return obs.view.legal[0]

    skat, t31 = _prompt(*SKAT), _prompt(*THIRTY_ONE)
    player = ByGame({"skat": Async(), "thirty-one": Blocking()})
    assert await player.act(skat) == skat.view.legal[0]
    assert await player.act(t31) == t31.view.legal[-1]
    assert threads and threads[0] is not threading.main_thread()


async def test_by_game_refuses_a_game_it_has_no_bot_for() -> None:
    player = ByGame({"skat": _Named("skat")})
    with pytest.raises(LookupError, match="no bot for thirty-one tables"):
        await player.act(_prompt(*THIRTY_ONE))
    with pytest.raises(ValueError, match="no game 'chess'"):
        ByGame({"chess": _Named("chess")})


def test_built_in_bots_of_every_game() -> None:
    both = built_in("random", "s")
    assert set(both.bots) == {"skat", "thirty-one"} and isinstance(both.bots["thirty-one"], T31Random)
    assert set(built_in("pimc").bots) == {"skat"}
    assert set(built_in("heuristic", game="thirty-one").bots) == {"thirty-one"}
    with pytest.raises(
        ValueError, match=r"unknown bot 'nope'; built-in bots: .*\(Skat\); heuristic, random \(Thirty-one\)"
    ):
        built_in("nope")
    with pytest.raises(ValueError, match=r"unknown bot 'pimc' for Thirty-one .*: heuristic, random"):
        built_in("pimc", game="thirty-one")


class Knocker:
    """The Python bot of docs/bots.md, written against ``update.view`` as a Thirty-one bot is."""

    def act(self, update: ThirtyOneUpdate) -> Any:
        view: ThirtyOneView = update.view
        knock = next((a for a in view.legal if isinstance(a, Knock)), None)
        if knock is not None and view.hand_value >= 25:
            return knock
        discards = [a for a in view.legal if isinstance(a, Discard)]
        if discards:
            return max(discards, key=lambda d: hand_value([c for c in view.hand if c != d.card], view.rules))
        return view.legal[0]


PLAYERS = ["ann", "bob", "cyd"]


async def test_sdk_players_play_a_thirty_one_table_to_its_end(stack: Stack, nc: Client) -> None:
    stop = asyncio.Event()
    bots: list[AnyBot] = [Knocker(), T31Heuristic("b"), T31Random("c")]
    tasks = [asyncio.ensure_future(play(bot, p, stack.url, stop)) for bot, p in zip(bots, PLAYERS)]
    request = OpenTable(
        table="sdk31", players=PLAYERS, rules=ThirtyOneRules(coins=1, turn_seconds=30), game="thirty-one", seed="sdk31"
    )
    assert (await open_table(nc, request)).ok
    log = await wait_closed(nc, "sdk31", timeout=90)
    stop.set()
    state = registry.fold(log)
    assert isinstance(log[-1], TableClosed) and sorted(state.places())[0] == 1
    assert not [e for e in log if isinstance(e, PlayerTimedOut)]
    for remote in await asyncio.gather(*tasks):
        assert not remote.rejections and not remote.ignored


async def test_one_player_plays_a_skat_and_a_thirty_one_table_at_once(stack: Stack, nc: Client) -> None:
    """``ByGame``: the same three players sit at a table of each game; each update goes to the
    bot of its table's game, and both tables play to their end without a refusal or time-out."""
    stop = asyncio.Event()
    tasks = [
        asyncio.ensure_future(play(ByGame({"skat": HashedBot(p), "thirty-one": T31Random(p)}), p, stack.url, stop))
        for p in PLAYERS
    ]
    tables = {
        "both-skat": OpenTable(table="both-skat", players=PLAYERS, rules=Rules(rounds=1), seed="b1"),
        "both-t31": OpenTable(
            table="both-t31", players=PLAYERS, rules=ThirtyOneRules(coins=1), game="thirty-one", seed="b2"
        ),
    }
    for request in tables.values():
        assert (await open_table(nc, request)).ok
    logs = await asyncio.gather(*(wait_closed(nc, t, timeout=120) for t in tables))
    stop.set()
    for log in logs:
        registry.fold(log)
        assert isinstance(log[-1], TableClosed)
        assert not [e for e in log if isinstance(e, PlayerTimedOut)], log
    for remote in await asyncio.gather(*tasks):
        assert not remote.rejections and not remote.ignored
