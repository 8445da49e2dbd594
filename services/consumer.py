"""A continuous pull consumer: messages are handed over the moment they arrive.

nats-py's ``fetch(batch, timeout)`` waits, once its first quick request comes back empty, until
the whole batch is there or the time is up, so a service idling between events would sit on
the next one for up to ``timeout``. This keeps pull requests outstanding instead (as the newer
NATS clients' "consume" does) and refills them when half of the requested messages arrived,
when the server ends a request (408/409), or when no heartbeat came for a while (a request
lost in a reconnect). Several instances of a service share one durable consumer this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

EXPIRES = 10.0
HEARTBEAT = 2.0


class PullConsumer:
    """Keep ``batch`` messages requested from a durable pull consumer; call ``handler`` on each."""

    def __init__(
        self,
        nc: Client,
        stream: str,
        durable: str,
        handler: Callable[[Msg], Awaitable[None]],
        batch: int = 256,
    ) -> None:
        self.nc = nc
        self.subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.handler = handler
        self.batch = batch
        self.outstanding = 0
        self.last_seen = 0.0
        self._sub: Any = None
        self._watchdog: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.inbox = self.nc.new_inbox()
        self._sub = await self.nc.subscribe(self.inbox, cb=self._on_msg, pending_msgs_limit=1_000_000)
        await self._pull()
        self._watchdog = asyncio.ensure_future(self._watch())

    async def stop(self) -> None:
        if self._watchdog:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    async def _pull(self) -> None:
        want = self.batch - self.outstanding
        if want <= 0:
            return
        request = {"batch": want, "expires": int(EXPIRES * 1e9), "idle_heartbeat": int(HEARTBEAT * 1e9)}
        self.outstanding += want
        self.last_seen = time.monotonic()
        await self.nc.publish(self.subject, json.dumps(request).encode(), reply=self.inbox)

    async def _on_msg(self, msg: Msg) -> None:
        self.last_seen = time.monotonic()
        headers = msg.headers or {}
        status = headers.get("Status")
        if status is not None and not msg.data:
            if status in ("408", "409"):  # a request expired or was cut short
                pending = int(headers.get("Nats-Pending-Messages", 0) or 0)
                self.outstanding = max(0, self.outstanding - pending) if pending else 0
                await self._pull()
            return  # 100: idle heartbeat
        self.outstanding -= 1
        if self.outstanding <= self.batch // 2:
            await self._pull()
        await self.handler(msg)

    async def kick(self) -> None:
        """Ask again now (after a reconnect the server has forgotten our requests)."""
        self.outstanding = 0
        with contextlib.suppress(Exception):
            await self._pull()

    async def _watch(self) -> None:
        """Re-request when nothing (not even a heartbeat) came for too long."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            if time.monotonic() - self.last_seen > 3 * HEARTBEAT:
                self.outstanding = 0
                with contextlib.suppress(Exception):
                    await self._pull()
