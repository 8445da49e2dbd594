"""The Python bot SDK: write ``act(observation) -> action``, get a remote player.

    from skatbus import run
    from skatbus import RandomBot

    run(RandomBot(), player="alice", url="tls://skat.example.org:4222",
        creds="alice.nk", tls_ca="ca.pem")   # the files `skat auth --tls` wrote

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
import os
import signal
from typing import Any

from nats.aio.client import Client

from protocol.subjects import check_token, hello_subject
from protocol.wire import Update
from services import logs
from services.connection import ConnectionSettings, connect

from .bots import Bot
from .player import RemotePlayer


class _Threaded:
    """Runs a blocking bot's ``act`` in a worker thread, keeping the event loop free."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def act(self, obs: Update) -> Any:
        return await asyncio.to_thread(self.bot.act, obs)


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
    bot: Bot,
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


async def _serve(nc: Client, bot: Bot, player: str, stop: asyncio.Event) -> RemotePlayer:
    """Play on an open connection until ``stop`` is set, then drain it."""
    # The connection says hello after each reconnect (connect_player); the player need not.
    remote = RemotePlayer(
        nc, player, _Threaded(bot) if getattr(bot, "blocking", False) else bot, hello_on_reconnect=False
    )
    await remote.start()
    await nc.flush()
    await remote.hello()
    try:
        await stop.wait()
    finally:
        await remote.stop()
        with contextlib.suppress(Exception):
            await nc.drain()
    return remote


def run(
    bot: Bot,
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
