"""A remote player over NATS: receives its updates, answers its prompts with commands."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import Any, Protocol

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.subjects import command_subject
from protocol.wire import Reply, Update, decode, encode

from . import logs
from .bots import Bot

RETRY_CODES = frozenset({"busy", "unavailable", "rate_limited"})


class Observer(Protocol):
    """Told when a prompt arrives and when a command goes out (the benchmark's stopwatch)."""

    def prompted(self, table: str) -> None: ...

    def sent(self, table: str) -> None: ...


class RemotePlayer:
    """Plays every table it is seated at: one prompt, one command, until stopped."""

    def __init__(
        self,
        nc: Client,
        player: str,
        bot: Bot,
        request_timeout: float = 5.0,
        observer: Observer | None = None,
    ) -> None:
        self.nc = nc
        self.observer = observer
        self.player = player
        self.bot = bot
        self.request_timeout = request_timeout
        self.answered: dict[str, int] = {}
        self.rejections: list[Reply] = []
        self.log = logs.get(player=player)
        self._sub: Any = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_update(self, msg: Msg) -> None:
        update: Update = decode(msg.data, Update)
        table = update.view.table
        if not update.your_turn or self.answered.get(table, -1) >= update.index:
            return
        self.answered[table] = update.index
        if self.observer is not None:
            self.observer.prompted(table)
        task = asyncio.ensure_future(self._act(update))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _act(self, update: Update) -> None:
        view = update.view
        chosen = self.bot.act(update)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        action = msgspec.structs.replace(chosen, at=update.index)
        for attempt in range(50):
            if self.observer is not None:
                self.observer.sent(view.table)
            try:
                msg = await self.nc.request(command_subject(self.player, view.table), encode(action), timeout=self.request_timeout)
            except Exception as exc:  # no responder yet (a service restarting) or a time-out
                self.log.debug("command_retry", error=repr(exc), attempt=attempt)
                await asyncio.sleep(0.1)
                continue
            reply: Reply = decode(msg.data, Reply, "msgpack")
            if reply.ok:
                return
            if reply.code in RETRY_CODES:
                await asyncio.sleep(0.2 if reply.code == "rate_limited" else 0.02)
                continue
            self.rejections.append(reply)
            self.log.warning("command_rejected", code=reply.code, reason=reply.reason)
            return
