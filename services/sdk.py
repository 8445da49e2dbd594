"""The Python bot SDK: write ``act(observation) -> action``, get a remote player.

    from services.sdk import run
    from services.bots import RandomBot

    run(RandomBot(), player="alice", url="nats://127.0.0.1:4222")

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
import signal
from typing import Any

import nats
from nats.aio.client import Client

from protocol.subjects import check_token, hello_subject
from protocol.wire import Update

from . import logs
from .bots import Bot
from .player import RemotePlayer


class _Threaded:
    """Runs a blocking bot's ``act`` in a worker thread, keeping the event loop free."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def act(self, obs: Update) -> Any:
        return await asyncio.to_thread(self.bot.act, obs)


async def connect_player(player: str, url: str, **options: Any) -> Client:
    """A connection for ``player`` that re-asks for its prompts whenever it reconnects."""
    log = logs.get(player=player)
    nc: Client

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", error=str(exc))

    async def disconnected_cb() -> None:
        log.warning("disconnected")

    async def reconnected_cb() -> None:
        log.info("reconnected")
        await hello(nc, player)

    nc = await nats.connect(
        url,
        name=f"skat-player-{player}",
        inbox_prefix=f"_INBOX.{player}",
        error_cb=error_cb,
        disconnected_cb=disconnected_cb,
        reconnected_cb=reconnected_cb,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        **options,
    )
    return nc


async def hello(nc: Client, player: str) -> int:
    """Ask the views service to send our pending prompts again; how many it sent (-1: no answer)."""
    try:
        reply = await nc.request(hello_subject(player), b"", timeout=2.0)
    except Exception:
        return -1
    import msgspec

    return int(msgspec.json.decode(reply.data).get("prompts", 0))


async def play(bot: Bot, player: str, url: str, stop: asyncio.Event | None = None) -> RemotePlayer:
    """Play as ``player`` until ``stop`` is set; returns the player (its rejections, for one)."""
    check_token("player", player)
    stop = stop or asyncio.Event()
    nc = await connect_player(player, url)
    remote = RemotePlayer(nc, player, _Threaded(bot) if getattr(bot, "blocking", False) else bot)
    await remote.start()
    await nc.flush()
    await hello(nc, player)
    try:
        await stop.wait()
    finally:
        await remote.stop()
        with contextlib.suppress(Exception):
            await nc.drain()
    return remote


def run(bot: Bot, player: str, url: str) -> None:
    """Play until Ctrl-C or SIGTERM (the blocking entry point for scripts)."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        logs.get(player=player).info("bot_started", bot=type(bot).__name__, url=url.rpartition("@")[2])
        await play(bot, player, url, stop)

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())
