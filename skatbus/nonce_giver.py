"""The bot side of provably fair deals: give every tournament one seats us in a nonce of our own.

A tournament under the fair scheme announces its commitment on ``skat.public.tournament.<id>``
while it takes nonces (``skatbus.nonces``). A bot made with the SDK listens there; when an
announcement names its player among the entrants it sends 256 random bits as its nonce, once
per tournament, and logs the commitment and the nonce it gave (``tournament_nonce_given``), so
that after the tournament its author can check with ``skat verify`` that the deals came from the
seed the tournament committed to and from this very nonce. Nothing here is needed to play: a bot
that never sends a nonce plays the same tables, it just adds no randomness of its own.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.subjects import is_token
from services import logs

ANNOUNCEMENTS = "skat.public.tournament.*"


class NonceGiver:
    """Sends ``player``'s nonce to each tournament that announces it as an entrant."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc, self.player = nc, player
        self.given: dict[str, dict[str, Any]] = {}
        """Tournament id -> the desk's answer (commitment, the nonce that counts)."""
        self._pending: set[str] = set()
        self._sub: Any = None
        self.log = logs.get(player=player)

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(ANNOUNCEMENTS, cb=self._on_announcement)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _on_announcement(self, msg: Msg) -> None:
        try:
            body = msgspec.json.decode(msg.data)
        except msgspec.DecodeError:
            return
        if not isinstance(body, dict):
            return
        tid = body.get("tournament")
        entrants = body.get("entrants")
        if (
            not isinstance(tid, str)
            or not is_token(tid)
            or msg.subject != f"skat.public.tournament.{tid}"
            or not body.get("open")
            or not isinstance(entrants, list)
            or self.player not in entrants
            or tid in self.given
            or tid in self._pending
        ):
            return
        self._pending.add(tid)
        try:
            nonce = secrets.token_hex(32)
            request = msgspec.json.encode({"type": "nonce", "nonce": nonce})
            reply = await self.nc.request(f"skat.cmd.{self.player}.tournament.{tid}", request, timeout=5.0)
            answer = msgspec.json.decode(reply.data)
        except Exception as exc:  # the next announcement (a second later) tries again
            self.log.warning("tournament_nonce_failed", tournament=tid, error=type(exc).__name__)
            return
        finally:
            self._pending.discard(tid)
        if isinstance(answer, dict) and answer.get("ok"):
            self.given[tid] = answer
            self.log.info(
                "tournament_nonce_given", tournament=tid, commitment=answer.get("commitment"), nonce=answer.get("nonce")
            )
        elif isinstance(answer, dict):
            self.given[tid] = answer  # refused (closed, taken): not asked again
            self.log.warning("tournament_nonce_refused", tournament=tid, code=answer.get("code"))
