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

When ``act`` raises, or returns something that is not one of ``view.legal``, the player logs
one ``bot_fault`` line (player, table, index, error), counts it (``BotPlayer.faults``) and sends
the seat's default move at once: the one the services apply at a time-out
(``skatbus.bot_guard``, which ``RemotePlayer`` plays every bot through). ``run`` ends by itself
when the tournament the bot plays in is over (``skatbus.tournament_end``: the runner's last
announcement or, when the bot missed it, the copy kept in stream ``SKATEND``, which the bot asks
for when it starts, after a reconnect and when idle), and while its server is away it retries
with a growing pause and says so in a few log lines, not one per attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import signal
from collections.abc import Mapping
from typing import Any, Final, Protocol

import msgspec
import structlog
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import registry
from protocol.skat.knowledge import Knowledge
from protocol.skat.views import PlayerView
from protocol.subjects import check_token, hello_subject
from protocol.thirty_one.knowledge import Knowledge as ThirtyOneKnowledge
from protocol.thirty_one.views import ThirtyOneUpdate, ThirtyOneView
from protocol.wire import Update
from services import logs
from services.connection import ConnectionSettings, connect
from services.requester import for_connection

from .bots import bot_games, bots_of, make_bot
from .nonce_giver import NonceGiver
from .player import RemotePlayer
from .tournament_end import TournamentEnd

__all__ = [
    "AnyBot", "AnyUpdate", "BotPlayer", "ByGame", "Knowledge", "ThirtyOneKnowledge", "built_in", "connect_player",
    "game_of", "hello", "knowledge", "play", "run",
]  # fmt: skip

RECONNECT_WAIT: Final = 0.5
"""Seconds between the first reconnect attempts; doubled after each failure..."""
MAX_RECONNECT_WAIT: Final = 30.0
"""... up to this, so a bot whose server is gone for good costs a try every 30 s."""

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


class BotPlayer(RemotePlayer):
    """The remote player ``play`` returns: ``rejections`` and ``faults`` as every
    ``RemotePlayer`` (a turn its bot failed, played by the default move), and why it stopped
    (``ended``: "" when told to, else e.g. ``"tournament t-... is over"``)."""

    def __init__(self, nc: Client, player: str, bot: AnyBot, end: TournamentEnd | None = None, **options: Any) -> None:
        super().__init__(nc, player, bot, **options)
        self.ended = ""
        self.end = end
        """Told of every update: its table names the tournament to ask about, and it is not idle."""

    async def _on_update(self, msg: Msg) -> None:
        if self.end is not None and self.plays(msg.subject.rpartition(".")[2]):  # another's: not a sign of life
            self.end.heard(msg.subject)
        await super()._on_update(msg)


class ByGame:
    """One player, one bot per game: each update goes to the bot of its table's game
    (``game_of``). At a table of a game without a bot here ``act`` raises ``LookupError``
    (logged once per table), so the player plays the seat's default move at once
    (``skatbus.bot_guard``), as at a time-out."""

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
    backoff = _Backoff(logs.get(player=player))

    async def say_hello(nc: Client) -> None:
        backoff.reset()
        await hello(nc, player)

    nc = await connect(
        settings,
        f"skat-player-{player}",
        on_reconnected=say_hello,
        log=logs.get(player=player),
        inbox_prefix=f"_INBOX.{player}",
        error_cb=backoff.on_error,
        reconnect_time_wait=RECONNECT_WAIT,
        **options,
    )
    backoff.nc = nc
    return nc


class _Backoff:
    """Reconnects that slow down while the server stays away: the pause between attempts doubles
    from ``RECONNECT_WAIT`` to ``MAX_RECONNECT_WAIT`` (nats-py reads it before each attempt),
    and only the 1st, 2nd, 4th, 8th, ... failure is logged (``nats_unreachable``): a bot left
    running after its server stopped writes a dozen lines a day, not two a second."""

    def __init__(self, log: Any) -> None:
        self.log = log
        self.nc: Client | None = None
        self.failed = 0

    def reset(self) -> None:
        self.failed = 0
        if self.nc is not None:
            self.nc.options["reconnect_time_wait"] = RECONNECT_WAIT

    async def on_error(self, exc: Exception) -> None:
        nc = self.nc
        if nc is None or not nc.is_reconnecting:
            self.log.warning("nats_error", error=repr(exc)[:300])
            return
        self.failed += 1
        wait = min(MAX_RECONNECT_WAIT, RECONNECT_WAIT * 2 ** min(self.failed, 16))
        nc.options["reconnect_time_wait"] = wait
        if self.failed & (self.failed - 1) == 0:  # a power of two
            self.log.warning("nats_unreachable", attempts=self.failed, next_try_in=wait, error=repr(exc)[:200])


async def hello(nc: Client, player: str) -> int:
    """Ask the views service to send our pending prompts again; how many it sent (-1: no answer)."""
    try:  # through the connection's one reply inbox, shared with its other requests
        reply = await for_connection(nc).request(hello_subject(player), b"", timeout=2.0)
    except Exception:
        return -1
    return int(msgspec.json.decode(reply.data).get("prompts", 0))


async def play(
    bot: AnyBot,
    player: str,
    url: str | ConnectionSettings | None = None,
    stop: asyncio.Event | None = None,
    creds: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    tournament: str | None = None,
    forever: bool = True,
) -> BotPlayer:
    """Play as ``player`` until ``stop`` is set; returns the player (its rejections and
    faults, for one). ``forever`` False: also stop once the tournament that named this
    player is over; ``tournament``: play only that tournament's tables, and stop once it is
    over (``BotPlayer.ended`` says which)."""
    check_token("player", player)
    if tournament is not None:
        check_token("tournament", tournament)
    nc = await connect_player(player, url, creds, tls_ca)
    return await _serve(nc, bot, player, stop or asyncio.Event(), tournament, forever)


async def _serve(
    nc: Client,
    bot: AnyBot,
    player: str,
    stop: asyncio.Event,
    tournament: str | None = None,
    forever: bool = True,
) -> BotPlayer:
    """Play on an open connection until ``stop`` is set (or the tournament is over, unless
    ``forever`` and no ``tournament``), then drain it."""
    # The connection says hello after each reconnect (connect_player); the player need not.
    bot = _Threaded(bot) if getattr(bot, "blocking", False) else bot
    end = TournamentEnd(nc, player, tournament) if tournament is not None or not forever else None
    # With its tournament known, only that tournament's tables are played (``RemotePlayer.plays``).
    remote = BotPlayer(nc, player, bot, end, hello_on_reconnect=False, tournament=tournament)  # guarded
    nonces = NonceGiver(nc, player)  # a fair tournament that seats us gets a nonce of ours
    if end is not None:
        await end.start()  # asks at once whether the tournament already ended
    await nonces.start()
    await remote.start()
    await nc.flush()
    await remote.hello()
    waits = [asyncio.ensure_future(stop.wait())]
    if end is not None:
        waits.append(asyncio.ensure_future(end.over.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if end is not None and end.over.is_set() and not stop.is_set():
            remote.ended = end.why
            logs.get(player=player).info("bot_stopped", reason=end.why, faults=remote.faults)
    finally:
        for waiting in waits:
            waiting.cancel()
        if end is not None:
            await end.stop()
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
    tournament: str | None = None,
    forever: bool = False,
) -> str:
    """Play until Ctrl-C or SIGTERM, or until the tournament that seated this player is over
    (the blocking entry point for scripts); returns why it stopped ("" for a signal, else e.g.
    ``"tournament t-... is over"``). ``tournament``: play only that one's tables, and stop when it
    is over (at once if it ended before the bot started); ``forever``: never stop for a tournament's end. The settings are checked before anything starts, so a
    missing key file fails at once (``SettingsError``).

    With ``patience`` (seconds; ``math.inf`` for ever) a server that cannot be reached, or
    that refuses the credentials, ends it with ``services.connection.Unreachable`` (one line
    to show); Ctrl-C and SIGTERM stop it while it is still connecting, too."""
    check_token("player", player)
    if tournament is not None:
        check_token("tournament", tournament)
    settings = ConnectionSettings.resolve(url, creds, tls_ca)
    if not structlog.is_configured():  # a script's bot: its log lines on stderr, as skat bot's
        logs.configure()
    ended = [""]

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
        remote = await _serve(connecting.result(), bot, player, stop, tournament, forever)
        ended[0] = remote.ended

    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())
    return ended[0]
