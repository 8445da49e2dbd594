"""The Python bot SDK: write ``act(observation) -> action``, get a remote player.

    from skatbus import run
    from skatbus import RandomBot

    run(RandomBot(), player="alice", url="tls://skat.example.org:4222",
        creds="alice.nk", tls_ca="ca.pem")   # the files `skat auth --tls` wrote

One API for every game: ``act`` gets the update of its table's game (``protocol.wire.Update``
at a Skat table, ``ThirtyOneUpdate`` at a Thirty-one table; both have ``view.legal`` and
``index``), read with the game the view names (``protocol.registry.decode_update``). A bot for
one game plays that game's tables; ``ByGame`` seats one player with a bot per game, and
``knowledge(view)`` gives what a seat knows in either game (``Knowledge``,
``ThirtyOneKnowledge``).

``url`` may be a comma-separated server list; without ``creds``/``tls_ca`` (or ``url``) the
environment's ``SKAT_NATS_CREDS``/``SKAT_NATS_CA`` (``SKAT_NATS_URL``) apply, as for every
``skat`` command (see ``services/connection.py`` for the credential file formats).

The SDK connects (with the player's own inbox prefix, as the broker's permissions require),
answers every prompt with the bot's action (stamped with the prompt's log position, so a retry
can never count twice), retries while the table is busy, asks for its pending prompts again
after every (re)connect (``skat.hello.<player>``), and shuts down cleanly on Ctrl-C or SIGTERM.
``act`` may be a plain function or ``async``; a plain one runs on the event loop, so it must be
quick (a few milliseconds) or set ``blocking = True`` on the bot to run in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import signal
from collections.abc import Mapping
from typing import Any, Protocol

from nats.aio.client import Client

from protocol import registry
from protocol.skat.knowledge import Knowledge
from protocol.skat.views import PlayerView
from protocol.subjects import check_token, hello_subject
from protocol.thirty_one.knowledge import Knowledge as ThirtyOneKnowledge
from protocol.thirty_one.views import ThirtyOneUpdate, ThirtyOneView
from protocol.wire import Update
from services import logs
from services.connection import ConnectionSettings, connect

from .bots import bot_games, bots_of, make_bot
from .nonce_giver import NonceGiver
from .player import RemotePlayer

__all__ = [
    "AnyBot", "AnyUpdate", "ByGame", "Knowledge", "ThirtyOneKnowledge", "built_in", "connect_player", "game_of",
    "hello", "knowledge", "play", "run",
]  # fmt: skip

AnyUpdate = Update | ThirtyOneUpdate
"""What a bot's ``act`` gets: the update of its table's game."""


class AnyBot(Protocol):
    """What a bot author writes, for any game: ``act(update) -> one of update.view.legal``
    (``update`` is its table's game's; ``act`` may be ``async def``; set ``blocking = True`` on
    a slow plain one to run it in a thread)."""

    def act(self, obs: Any) -> Any: ...


def game_of(update: Any) -> str:
    """The name of the game an update is of (``"skat"``, ``"thirty-one"``), by its type: a
    Skat view's ``game`` field is the declaration, not the game's name."""
    for name in registry.names():
        if isinstance(update, registry.get(name).update_type):
            return name
    raise ValueError(f"not a player's update of any game: {type(update).__name__}")


def knowledge(view: PlayerView | ThirtyOneView) -> Knowledge | ThirtyOneKnowledge:
    """What the seat of ``view`` knows of its deal, in the view's game: Skat's ``Knowledge``
    (cards played, voids, partner, ...) or ``ThirtyOneKnowledge`` (the cards each seat is known
    to hold, the discard pile, the cards never seen, ...). Never more than the rules showed."""
    if isinstance(view, ThirtyOneView):
        return ThirtyOneKnowledge.of(view)
    return Knowledge.of(view)


async def _ask(bot: Any, obs: Any) -> Any:
    """A bot's action: awaited when ``act`` is async, in a worker thread when it is ``blocking``."""
    if getattr(bot, "blocking", False):
        return await asyncio.to_thread(bot.act, obs)
    chosen = bot.act(obs)
    if inspect.isawaitable(chosen):
        chosen = await chosen
    return chosen


class _Threaded:
    """Runs a blocking bot's ``act`` in a worker thread, keeping the event loop free."""

    def __init__(self, bot: AnyBot) -> None:
        self.bot = bot

    async def act(self, obs: Any) -> Any:
        return await asyncio.to_thread(self.bot.act, obs)


class ByGame:
    """One player, one bot per game: each update goes to the bot of its table's game
    (``game_of``). A table of a game without a bot here is not answered (its time-out plays
    the default action) and an error is logged, once per table."""

    def __init__(self, bots: Mapping[str, AnyBot]) -> None:
        for name in bots:
            registry.get(name)  # a ValueError naming the games there are
        if not bots:
            raise ValueError("ByGame needs a bot for at least one game")
        self.bots = dict(bots)
        self._told: set[str] = set()

    async def act(self, obs: Any) -> Any:
        game = game_of(obs)
        bot = self.bots.get(game)
        if bot is None:
            table = str(getattr(obs.view, "table", ""))
            if table not in self._told:
                self._told.add(table)
                logs.get().error("no_bot_for_game", game=game, table=table, games=sorted(self.bots))
            raise LookupError(f"no bot for {game} tables (this player plays {', '.join(sorted(self.bots))})")
        return await _ask(bot, obs)


def built_in(name: str, seed: str = "", game: str | None = None) -> ByGame:
    """The built-in bot ``name`` as a player: for ``game`` only, or (None) for every game that
    has a built-in bot of that name (``random`` and ``heuristic`` play Skat and Thirty-one; the
    bots are ``skatbus.bots.bots_of(game)``). Raises ``ValueError`` naming the bots there are."""
    if game is not None:
        return ByGame({game: make_bot(name, seed, game)})
    games = bot_games(name)
    if not games:
        known = "; ".join(f"{', '.join(sorted(bots_of(g)))} ({registry.get(g).title})" for g in _games_with_bots())
        raise ValueError(f"unknown bot {name!r}; built-in bots: {known}")
    return ByGame({g: make_bot(name, seed, g) for g in games})


def _games_with_bots() -> list[str]:
    out = []
    for g in registry.names():
        try:
            bots_of(g)
        except ValueError:
            continue
        out.append(g)
    return out


async def connect_player(
    player: str,
    url: str | ConnectionSettings | None = None,
    creds: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Client:
    """A connection for ``player`` (inbox prefix ``_INBOX.<player>``, which the broker's
    permissions require) that re-asks for its prompts whenever it reconnects."""
    check_token("player", player)
    settings = ConnectionSettings.resolve(url, creds, tls_ca)

    async def say_hello(nc: Client) -> None:
        await hello(nc, player)

    return await connect(
        settings,
        f"skat-player-{player}",
        on_reconnected=say_hello,
        log=logs.get(player=player),
        inbox_prefix=f"_INBOX.{player}",
        **options,
    )


async def hello(nc: Client, player: str) -> int:
    """Ask the views service to send our pending prompts again; how many it sent (-1: no answer)."""
    try:
        reply = await nc.request(hello_subject(player), b"", timeout=2.0)
    except Exception:
        return -1
    import msgspec

    return int(msgspec.json.decode(reply.data).get("prompts", 0))


async def play(
    bot: AnyBot,
    player: str,
    url: str | ConnectionSettings | None = None,
    stop: asyncio.Event | None = None,
    creds: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
) -> RemotePlayer:
    """Play as ``player`` until ``stop`` is set; returns the player (its rejections, for one)."""
    check_token("player", player)
    nc = await connect_player(player, url, creds, tls_ca)
    return await _serve(nc, bot, player, stop or asyncio.Event())


async def _serve(nc: Client, bot: AnyBot, player: str, stop: asyncio.Event) -> RemotePlayer:
    """Play on an open connection until ``stop`` is set, then drain it."""
    # The connection says hello after each reconnect (connect_player); the player need not.
    remote = RemotePlayer(
        nc, player, _Threaded(bot) if getattr(bot, "blocking", False) else bot, hello_on_reconnect=False
    )
    nonces = NonceGiver(nc, player)  # a fair tournament that seats us gets a nonce of ours
    await nonces.start()
    await remote.start()
    await nc.flush()
    await remote.hello()
    try:
        await stop.wait()
    finally:
        await nonces.stop()
        await remote.stop()
        with contextlib.suppress(Exception):
            await nc.drain()
    return remote


def run(
    bot: AnyBot,
    player: str,
    url: str | ConnectionSettings | None = None,
    creds: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    patience: float | None = None,
) -> None:
    """Play until Ctrl-C or SIGTERM (the blocking entry point for scripts). The settings are
    checked before anything starts, so a missing key file fails at once (``SettingsError``).

    With ``patience`` (seconds; ``math.inf`` for ever) a server that cannot be reached, or
    that refuses the credentials, ends it with ``services.connection.Unreachable`` (one line
    to show); Ctrl-C and SIGTERM stop it while it is still connecting, too."""
    check_token("player", player)
    settings = ConnectionSettings.resolve(url, creds, tls_ca)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        logs.get(player=player).info(
            "bot_started", bot=type(bot).__name__, server=settings.describe(), tls=settings.wants_tls
        )
        connecting = asyncio.ensure_future(connect_player(player, settings, patience=patience))
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait({connecting, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not connecting.done():  # stopped before the server answered
            connecting.cancel()
            with contextlib.suppress(BaseException):
                await connecting
            return
        await _serve(connecting.result(), bot, player, stop)

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())
