"""Which instance of a service owns which tables: partitions agreed by heartbeats.

Tables are spread over ``protocol.subjects.PARTITIONS`` partitions (a stable hash of the table
id, which is also the last token of every log subject). Each running instance of a service
owns some partitions: it alone consumes their events, answers their players' commands, arms
their deadlines and prompts their players. So two instances never work on one table at once,
and adding instances adds capacity instead of optimistic-concurrency conflicts. (The expected-
sequence check on every append stays as the safety net for the moments when ownership moves.)

Agreement needs no store and no leader: every instance publishes a heartbeat on
``skat.members.<service>`` every ``PERIOD`` seconds, and all of them compute the same
assignment from the same set of live members: the members sorted by id, partition ``p`` to
member ``p mod n``. A member silent for ``DEAD_AFTER`` seconds is gone and its partitions move
to the others; a member that stops cleanly says so and they move at once. A new member asks
who is there (its first heartbeat is a request the others answer at once), so it starts with
the right picture instead of claiming everything for a moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.subjects import PARTITIONS, is_token

PERIOD: Final = 0.5
"""Seconds between heartbeats."""
DEAD_AFTER: Final = 2.0
"""Seconds of silence after which a member is taken for dead and its partitions move."""
ROLL_CALL: Final = 0.25
"""Seconds a new member listens for the answers to its first heartbeat before claiming."""


class Heartbeat(msgspec.Struct, frozen=True):
    member: str
    leaving: bool = False


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Heartbeat).decode


def members_subject(service: str) -> str:
    return f"skat.members.{service}"


def forward_subject(service: str, member: str) -> str:
    """Where the instance ``member`` takes commands another instance passes on to it."""
    return f"skat.own.{service}.{member}"


def member_id(instance: str) -> str:
    """A unique id for this instance: its name (a PID is unique on one host only) and a random
    suffix, limited to the characters of a subject token."""
    name = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "-" for c in instance)[:40] or "i"
    return f"{name}-{secrets.token_hex(3)}"


def assignment(members: list[str]) -> dict[int, str]:
    """Partition -> owner for a set of live members: the same answer in every instance."""
    ordered = sorted(members)
    return {p: ordered[p % len(ordered)] for p in range(PARTITIONS)} if ordered else {}


class Ownership:
    """This instance's share of the partitions of ``service``, kept current.

    ``claim(p)`` is awaited when this instance becomes the owner of ``p``, ``release(p)`` when
    it stops being the owner (another member joined, or this one stops). Both run one at a time,
    in the order ownership changes.
    """

    def __init__(
        self,
        nc: Client,
        service: str,
        me: str,
        claim: Callable[[int], Awaitable[None]],
        release: Callable[[int], Awaitable[None]],
        log: Any,
    ) -> None:
        self.nc = nc
        self.subject = members_subject(service)
        self.me = me
        self._claim, self._release = claim, release
        self.log = log
        self.seen: dict[str, float] = {me: time.monotonic()}
        self.owned: set[int] = set()
        self.owners: dict[int, str] = {}
        self._sub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._started = False

    # --- questions -------------------------------------------------------------------------

    def owns(self, partition: int) -> bool:
        return partition in self.owned

    def owner_of(self, partition: int) -> str | None:
        """The member that owns ``partition`` as this instance sees it (None before it knows)."""
        return self.owners.get(partition)

    @property
    def members(self) -> list[str]:
        return sorted(self.seen)

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(self.subject, cb=self._on_heartbeat)
        inbox = self.nc.new_inbox()
        answers = await self.nc.subscribe(inbox, cb=self._on_heartbeat)
        try:
            await self.nc.publish(self.subject, _encode(Heartbeat(self.me)), reply=inbox)
            await asyncio.sleep(ROLL_CALL)
        finally:
            await answers.unsubscribe()
        self._started = True
        await self.rebalance()
        self._task = asyncio.ensure_future(self._beat())

    async def stop(self) -> None:
        """Say goodbye (the others take over at once) and release every partition."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(Exception):
            await self.nc.publish(self.subject, _encode(Heartbeat(self.me, leaving=True)))
            await self.nc.flush(timeout=1)
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        async with self._lock:
            for partition in sorted(self.owned):
                self.owned.discard(partition)
                await self._release(partition)

    async def _beat(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(PERIOD)
            try:
                await self._beat_once(late=time.monotonic() - last > 2 * PERIOD)
            except Exception as exc:  # never die silently: a member that stops beating loses its share
                self.log.error("heartbeat_failed", error=repr(exc))
            last = time.monotonic()

    async def _beat_once(self, late: bool) -> None:
        with contextlib.suppress(Exception):  # a reconnecting client: the next beat will do
            await self.nc.publish(self.subject, _encode(Heartbeat(self.me)))
        now = time.monotonic()
        self.seen[self.me] = now
        # After a stall of our own event loop the others' heartbeats are still queued, not
        # missing: judge them at the next beat, not now.
        gone = [] if late else [m for m, at in self.seen.items() if now - at > DEAD_AFTER]
        for member in gone:
            del self.seen[member]
        if gone:
            self.log.warning("members_gone", members=gone, live=self.members)
        # Also retries a claim or release that failed at the last change of members.
        await self.rebalance()

    async def _on_heartbeat(self, msg: Msg) -> None:
        try:
            beat = _decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if not is_token(beat.member) or beat.member == self.me:
            return
        if msg.reply:  # a newcomer's roll call: answer at once
            with contextlib.suppress(Exception):
                await self.nc.publish(msg.reply, _encode(Heartbeat(self.me)))
        known = beat.member in self.seen
        if beat.leaving:
            if known:
                del self.seen[beat.member]
                self.log.info("member_left", member=beat.member, live=self.members)
                await self.rebalance()
            return
        self.seen[beat.member] = time.monotonic()
        if not known:
            self.log.info("member_joined", member=beat.member, live=self.members)
            await self.rebalance()

    async def rebalance(self) -> None:
        """Release what now belongs to others, then claim what now belongs to us. A partition
        counts as ours only once its claim succeeded; one that failed (the connection is down)
        is claimed again at the next heartbeat."""
        if not self._started:
            return
        async with self._lock:
            self.owners = assignment(list(self.seen))
            mine = {p for p, member in self.owners.items() if member == self.me}
            for partition in sorted(self.owned - mine):
                self.owned.discard(partition)
                try:
                    await self._release(partition)
                except Exception as exc:
                    self.log.error("release_failed", partition=partition, error=repr(exc))
            for partition in sorted(mine - self.owned):
                try:
                    await self._claim(partition)
                except Exception as exc:
                    self.log.error("claim_failed", partition=partition, error=repr(exc))
                    continue
                self.owned.add(partition)
