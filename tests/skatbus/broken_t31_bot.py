"""Deliberately broken remote Thirty-one bots, for tests/skatbus/test_check_bot_thirty_one.py:
each gets one thing of the protocol wrong, so that ``skat check-bot --game thirty-one`` must
catch it. They play as the built-in random Thirty-one bot otherwise.

    python -m tests.skatbus.broken_t31_bot KIND --player ID --nats URL

- ``illegal``: answers every prompt with a command that is not in ``view.legal``: a discard
  when it is to take a card, a knock when it is to discard.
- ``silent``: says hello, reads every update, and never sends a command.
- ``no-at``: answers with a legal command but without ``at``.

Stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

import msgspec
import nats

from protocol.subjects import command_subject
from protocol.thirty_one.commands import KNOCK, Discard, Take
from protocol.wire import encode
from skatbus.player import RemotePlayer
from skatbus.thirty_one_bots import RandomBot

KINDS = ("illegal", "silent", "no-at")


class IllegalBot:
    """What a bot that ignores ``view.legal`` does: the wrong step of the turn."""

    def act(self, obs: Any) -> Any:
        legal = obs.view.legal
        if any(isinstance(a, Take) for a in legal):
            return Discard(card=obs.view.hand[0])  # a card must be taken first
        return KNOCK  # a knock comes instead of taking a card, never after it


class BrokenPlayer(RemotePlayer):
    def __init__(self, kind: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind

    async def _act(self, table: str, update: Any) -> None:
        if self.kind == "silent":
            return
        if self.kind == "illegal":  # sent as the bot chose it: the player's guard would play the default
            command = msgspec.structs.replace(IllegalBot().act(update), at=update.index)
            with contextlib.suppress(Exception):
                await self.inbox.request(command_subject(self.player, table), encode(command), timeout=2.0)
            return
        if self.kind == "no-at":  # the legal command as listed: "at" left at its default, so not sent
            with contextlib.suppress(Exception):
                await self.inbox.request(command_subject(self.player, table), encode(self.bot.act(update)), timeout=2.0)
            return
        await super()._act(table, update)


async def main(kind: str, player: str, url: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    nc = await nats.connect(url, inbox_prefix=f"_INBOX.{player}", max_reconnect_attempts=-1, reconnect_time_wait=0.5)
    bot = IllegalBot() if kind == "illegal" else RandomBot(player)
    remote = BrokenPlayer(kind, nc, player, bot)
    await remote.start()
    await nc.flush()
    await remote.hello()
    await stop.wait()
    await remote.stop()
    await nc.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--player", required=True)
    parser.add_argument("--nats", required=True)
    args = parser.parse_args()
    asyncio.run(main(args.kind, args.player, args.nats))
