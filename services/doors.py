"""How players reach a service, and how a flood is shut out by the broker.

Normally a service listens on one wildcard (``skat.cmd.*.>``): every command reaches it, from
whoever sends it, seated or not, the moment a table opens. A flood through that wildcard
costs the service a little for every message, even those it drops at once, and at ten times a
player's limit that little adds up. So when a player floods (``bench``), the service switches to
*guarded* mode: it listens through one door per player seated at an open table it knows
(``skat.cmd.<player>.>``) and closes the flooder's door, so that the broker drops the rest of
the flood without bothering anyone. The flooder's door stays closed for a second at the first
offence and twice as long at each repeat within a minute (at most ``MAX_BENCH`` seconds); when
no one has been benched for ``CALM_AFTER`` seconds the service goes back to the wildcard.

The wildcard and the doors share the service's queue group name, and nats-server groups queue
subscribers by name across subjects: while both kinds exist (a switch in either direction), a
command still reaches exactly one of them.
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
CALM_AFTER: Final = 60.0


class Doors:
    """A service's subscriptions for players' messages: a wildcard, or per-player doors."""

    def __init__(
        self,
        nc: Client,
        pattern: str,
        wildcard: str,
        queue: str,
        handler: Callable[[Msg], Awaitable[None]],
        calm_after: float = CALM_AFTER,
        log: Any = None,
    ) -> None:
        self.nc = nc
        self.pattern = pattern
        """A door's subject with ``{player}``, e.g. ``skat.cmd.{player}.>``."""
        self.wildcard = wildcard
        self.queue = queue
        self.handler = handler
        self.calm_after = calm_after
        self.log = log
        """The service's structlog logger (None: say nothing)."""
        self.guarded = False
        """True while the service listens through doors (someone flooded recently)."""
        self.seated: dict[str, int] = {}
        """Player -> open tables at which it sits (among those the service knows)."""
        self.expected: dict[str, float] = {}
        """Players of tables being opened, until when (``expect``)."""
        self.benched_until: dict[str, float] = {}
        self._penalty: dict[str, tuple[float, float]] = {}
        """Player -> (last penalty in seconds, when it ends)."""
        self._last_bench = -1e9
        self._subs: dict[str, Any] = {}
        self._wildcard_sub: Any = None
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    async def open(self) -> None:
        """Start listening (on the wildcard)."""
        self._wildcard_sub = await self.nc.subscribe(self.wildcard, queue=self.queue, cb=self.handler)

    # --- who sits where ---------------------------------------------------------------

    def seat(self, player: str) -> None:
        self.seated[player] = self.seated.get(player, 0) + 1
        if self.seated[player] == 1 and self.guarded:
            self._later(self._reconcile(player))

    def unseat(self, player: str) -> None:
        left = self.seated.get(player, 0) - 1
        if left > 0:
            self.seated[player] = left
            return
        self.seated.pop(player, None)
        if self.guarded:
            self._later(self._reconcile(player))

    def expect(self, players: list[str], within: float = 30.0) -> None:
        """Players about to be seated (a table is being opened): their doors open now, before
        the table's first event reaches us, so that their first command finds an open door."""
        until = time.monotonic() + within
        for player in players:
            fresh = player not in self.expected and player not in self.seated
            self.expected[player] = until
            if fresh and self.guarded:
                self._later(self._reconcile(player))
        asyncio.get_running_loop().call_later(within + 0.1, self._expire_expected)

    def _expire_expected(self) -> None:
        now = time.monotonic()
        for player in [p for p, until in self.expected.items() if until <= now]:
            del self.expected[player]
            if self.guarded:
                self._later(self._reconcile(player))

    def is_open(self, player: str) -> bool:
        """Whether ``player``'s messages reach the service."""
        return not self.guarded or player in self._subs

    # --- floods ---------------------------------------------------------------------------

    def bench(self, player: str) -> float:
        """Shut ``player`` out for a penalty that doubles with each repeat; its length."""
        now = time.monotonic()
        if player in self.benched_until:
            return self.benched_until[player] - now
        last, ended = self._penalty.get(player, (0.0, -1e9))
        penalty = min(MAX_BENCH, 2 * last) if last and now - ended < FORGIVE_AFTER else 1.0
        if len(self._penalty) > 100_000:
            self._penalty.clear()
        self._penalty[player] = (penalty, now + penalty)
        self.benched_until[player] = now + penalty
        self._last_bench = now
        asyncio.get_running_loop().call_later(penalty, self._unbench, player)
        self._later(self._guard() if not self.guarded else self._reconcile(player))
        return penalty

    def _unbench(self, player: str) -> None:
        self.benched_until.pop(player, None)
        if self.guarded:
            self._later(self._reconcile(player))
        if not self.benched_until:
            asyncio.get_running_loop().call_later(self.calm_after, self._maybe_unguard)

    def _maybe_unguard(self) -> None:
        if self.guarded and not self.benched_until and time.monotonic() - self._last_bench >= self.calm_after:
            self._later(self._unguard())

    # --- switching --------------------------------------------------------------------------

    def _later(self, coro: Awaitable[None]) -> None:
        """Subscription changes run as tasks of their own: an unsubscribe from inside the
        subscription's own callback would cancel that callback."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guard(self) -> None:
        """Wildcard -> doors: open every seated player's door first, then leave the wildcard."""
        async with self._lock:
            if self.guarded or self.closed:
                return
            self.guarded = True
            if self.log is not None:
                self.log.warning("listening_per_player", seated=len(self.seated), expected=len(self.expected))
            for player in {*self.seated, *self.expected}:
                await self._apply(player)
            if self._wildcard_sub is not None:
                # Drained, not just unsubscribed: what it already received (an honest player's
                # command among the flood) is still handled; unsubscribing would drop it.
                self._later(_drain(self._wildcard_sub))
                self._wildcard_sub = None

    async def _unguard(self) -> None:
        """Doors -> wildcard: listen on the wildcard first, then close every door."""
        async with self._lock:
            if not self.guarded or self.closed or self.benched_until:
                return
            if self._wildcard_sub is None:  # (a guard that failed half-way may have left it)
                self._wildcard_sub = await self.nc.subscribe(self.wildcard, queue=self.queue, cb=self.handler)
            self.guarded = False
            if self.log is not None:
                self.log.info("listening_to_everyone")
            for player in list(self._subs):
                await self._apply(player)

    async def _reconcile(self, player: str) -> None:
        async with self._lock:
            await self._apply(player)

    async def _apply(self, player: str) -> None:
        """Bring one door in line with the wish (the lock is held)."""
        present = player in self.seated or player in self.expected
        wanted = self.guarded and not self.closed and present and player not in self.benched_until
        sub = self._subs.get(player)
        if wanted and sub is None:
            subject = self.pattern.format(player=player)
            self._subs[player] = await self.nc.subscribe(subject, queue=self.queue, cb=self.handler)
        elif not wanted and sub is not None:
            del self._subs[player]
            if player in self.benched_until:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()  # and what it holds of the flood goes with it
            else:
                self._later(_drain(sub))

    async def flush(self) -> None:
        """Wait until every pending subscription change was made."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        self.closed = True
        await self.flush()
        async with self._lock:
            for sub in [*self._subs.values(), self._wildcard_sub]:
                if sub is not None:
                    with contextlib.suppress(Exception):
                        await sub.unsubscribe()
            self._subs.clear()
            self._wildcard_sub = None


async def _drain(sub: Any) -> None:
    """Stop a subscription after handling what it has already received."""
    with contextlib.suppress(Exception):
        await sub.drain()
