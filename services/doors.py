"""One door per seated player: the subscriptions through which players reach a service.

A service listens on ``skat.cmd.<player>.*`` (or ``skat.hello.<player>``) for each player seated
at an open table it knows, instead of on ``skat.cmd.*.*``. What nobody should hear is then
dropped by the broker, not read by Python one message at a time: commands from a player who
sits at no open table (the broker answers "no responders"), and, for a while, everything from a
player who floods. A flooder's door is closed for a second at the first offence and twice as
long at each repeat within a minute (at most ``MAX_BENCH`` seconds), so a flood at any rate
costs the services about one burst per penalty, while an honest bot never notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from nats.aio.client import Client
from nats.aio.msg import Msg

MAX_BENCH: Final = 30.0
FORGIVE_AFTER: Final = 60.0


class Doors:
    """Per-player subscriptions of one service: opened while the player is seated somewhere
    and not benched, closed otherwise."""

    def __init__(
        self, nc: Client, pattern: str, queue: str, handler: Callable[[Msg], Awaitable[None]]
    ) -> None:
        self.nc = nc
        self.pattern = pattern
        """Subject with ``{player}``, e.g. ``skat.cmd.{player}.*``."""
        self.queue = queue
        self.handler = handler
        self.seated: dict[str, int] = {}
        """Player -> open tables at which it sits (among those the service knows)."""
        self.benched_until: dict[str, float] = {}
        self._penalty: dict[str, tuple[float, float]] = {}
        """Player -> (last penalty in seconds, when it ended)."""
        self._subs: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    def seat(self, player: str) -> None:
        self.seated[player] = self.seated.get(player, 0) + 1
        if self.seated[player] == 1:
            self._reconcile(player)

    def unseat(self, player: str) -> None:
        left = self.seated.get(player, 0) - 1
        if left > 0:
            self.seated[player] = left
            return
        self.seated.pop(player, None)
        self._reconcile(player)

    def is_open(self, player: str) -> bool:
        return player in self._subs

    def bench(self, player: str) -> float:
        """Close ``player``'s door for a penalty that doubles with each repeat; its length."""
        now = time.monotonic()
        if player in self.benched_until:
            return self.benched_until[player] - now
        last, ended = self._penalty.get(player, (0.0, -1e9))
        penalty = min(MAX_BENCH, 2 * last) if last and now - ended < FORGIVE_AFTER else 1.0
        self._penalty[player] = (penalty, now + penalty)
        self.benched_until[player] = now + penalty
        if len(self._penalty) > 100_000:
            self._penalty.clear()
        asyncio.get_running_loop().call_later(penalty, self._unbench, player)
        self._reconcile(player)
        return penalty

    def _unbench(self, player: str) -> None:
        self.benched_until.pop(player, None)
        self._reconcile(player)

    def _reconcile(self, player: str) -> None:
        """Bring the subscription in line with the wish, in a task of its own (an unsubscribe
        from inside the subscription's own callback would cancel that callback)."""
        task = asyncio.ensure_future(self._apply(player))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _apply(self, player: str) -> None:
        async with self._lock:
            wanted = not self.closed and player in self.seated and player not in self.benched_until
            sub = self._subs.get(player)
            if wanted and sub is None:
                subject = self.pattern.format(player=player)
                self._subs[player] = await self.nc.subscribe(subject, queue=self.queue, cb=self.handler)
            elif not wanted and sub is not None:
                del self._subs[player]
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()

    async def flush(self) -> None:
        """Wait until every pending subscription change was sent."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        self.closed = True
        await self.flush()
        async with self._lock:
            for sub in self._subs.values():
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()
            self._subs.clear()
