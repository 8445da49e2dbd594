"""Deliberately broken remote bots, for tests/skatbus/test_check_bot.py: each gets one thing of
the protocol wrong, so that ``skat check-bot`` must catch it.

    python -m tests.skatbus.broken_bot KIND --player ID --nats URL

- ``no-json``: reads msgpack only (drops every update that starts with ``{``) and never asks
  for JSON, so a table that seats it with JSON updates gets no answer.
- ``stale-forever``: treats ``stale`` like ``busy`` and sends the same command again and again
  until the prompt's deadline.
- ``no-hello``: never says hello, neither on connecting nor after a reconnect.
- ``no-dedupe``: answers every prompt it gets, also one it has answered already.
- ``slow``: thinks 4 s about every move.

Stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time

import msgspec
import nats
from nats.aio.msg import Msg

from protocol.subjects import command_subject
from protocol.wire import Reply, Update, decode, encode
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer

KINDS = ("no-json", "stale-forever", "no-hello", "no-dedupe", "slow")


class BrokenPlayer(RemotePlayer):
    def __init__(self, kind: str, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.kind = kind

    async def _on_update(self, msg: Msg) -> None:
        if self.kind == "no-json" and msg.data[:1] == b"{":
            return
        if self.kind == "no-dedupe":
            self.answered.clear()
        await super()._on_update(msg)

    async def _act(self, table: str, update: Update) -> None:
        if self.kind == "slow":
            await asyncio.sleep(4.0)
        if self.kind != "stale-forever":
            await super()._act(table, update)
            return
        action = msgspec.structs.replace(self.bot.act(update), at=update.index)  # type: ignore[type-var]
        while time.time() < update.deadline:
            try:
                msg = await self.inbox.request(command_subject(self.player, table), encode(action), timeout=1.0)
                reply: Reply = decode(msg.data, Reply)
            except Exception:
                continue
            if reply.ok:
                return
            await asyncio.sleep(0.1)  # stale, busy, anything: the same again (the bug)


async def main(kind: str, player: str, url: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    nc = await nats.connect(url, inbox_prefix=f"_INBOX.{player}", max_reconnect_attempts=-1, reconnect_time_wait=0.5)
    remote = BrokenPlayer(kind, nc, player, HashedBot(player), hello_on_reconnect=kind != "no-hello")
    await remote.start()
    await nc.flush()
    if kind != "no-hello":
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
