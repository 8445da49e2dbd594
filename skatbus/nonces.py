"""The tournament's nonce desk: where entrants get the commitment and give their nonces.

Under the fair deal scheme (``protocol.fairness``) a tournament publishes the commitment to its
secret seed before anything is dealt, and takes one nonce per remote entrant until the nonces
close. Two subjects, both inside what ``skat auth`` already allows a player:

- ``skat.public.tournament.<id>``: the announcement, JSON, repeated every second while nonces
  are open and once more when they close (``{"type": "tournament", "tournament": ..., "game":
  ..., "commitment": ..., "entrants": [...], "nonces_close": <unix time>, "open": true}``).
  Every player may read the public feed; a bot that sees its id among ``entrants`` sends its
  nonce.
- ``skat.cmd.<player>.tournament.<id>``: a player's request, answered on its own inbox only:
  ``{"type": "nonce", "nonce": "<16-128 hex digits>"}`` or ``{"type": "commitment"}``. The
  answer holds the commitment, the nonce that counts for the player and when nonces close. The
  first nonce counts; the same one again is accepted, another one refused (``nonce_taken``).

A message costs nothing before its sender's rate limit is checked, and anything odd is refused
in one line (a reason and a code, as the services refuse commands). Accepted nonces go into the
tournament's log (``NonceGiven``) before they are acknowledged, so an entrant holding an
acknowledgement knows its nonce is in the deals.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import fairness
from protocol.subjects import check_token, is_inbox, is_token
from protocol.tournament import NonceGiven, NoncesClosed, TournamentConfig, TournamentState
from services.ratelimit import PlayerLimits

MAX_REQUEST_BYTES: Final = 1024
RATE: Final = 10.0
"""Requests per second per player: a bot sends one or two in a tournament."""


def announce_subject(tid: str) -> str:
    return f"skat.public.tournament.{check_token('tournament', tid)}"


def request_subject(player: str, tid: str) -> str:
    """Where ``player`` sends its nonce for tournament ``tid``."""
    return f"skat.cmd.{check_token('player', player)}.tournament.{check_token('tournament', tid)}"


class Answer(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The desk's answer to a player's request."""

    ok: bool
    code: str = ""
    reason: str = ""
    tournament: str = ""
    commitment: str = ""
    nonce: str = ""
    """The nonce that counts for this player (empty: none given)."""
    nonces_close: float = 0.0
    """Unix time the nonces close (or closed)."""
    open: bool = False


class NonceDesk:
    """Answers the entrants' requests for one tournament and collects their nonces while open.

    ``append`` puts an event in the tournament's log (the runner's ``TournamentLog.append``):
    a nonce is accepted only once it is stored."""

    def __init__(
        self,
        nc: Client,
        state: TournamentState,
        remote: Iterable[str],
        append: Callable[[NonceGiven | NoncesClosed], Awaitable[None]],
        seconds: float,
    ) -> None:
        assert state.config is not None
        self.nc, self.state, self.append = nc, state, append
        self.config: TournamentConfig = state.config
        self.remote = sorted(set(remote))
        self.closes_at = time.time() + max(0.0, seconds)
        self.limits = PlayerLimits(rate=RATE)
        self._lock = asyncio.Lock()
        self._all_in = asyncio.Event()
        self._subs: list[Any] = []
        self._check_all_in()

    @property
    def open(self) -> bool:
        return self.state.digest is None

    async def start(self) -> None:
        tid = self.config.id
        self._subs.append(await self.nc.subscribe(f"skat.cmd.*.tournament.{tid}", cb=self._on_request))

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()

    async def collect(self, on_tick: Callable[[int, int, float], None] | None = None) -> None:
        """Announce until every remote entrant gave a nonce or the window ends, then close the
        nonces (``NoncesClosed`` in the log) and announce that once more."""
        while self.open:
            await self._announce()
            left = self.closes_at - time.time()
            if on_tick is not None:
                on_tick(len(self.state.nonces), len(self.remote), max(0.0, left))
            if left <= 0 or self._all_in.is_set():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_in.wait(), min(1.0, left))
        async with self._lock:
            if self.open:
                nonces = dict(self.state.nonces)
                closed = NoncesClosed(nonces=nonces, digest=fairness.nonces_digest(nonces))
                await self.append(closed)
                self.state.apply(closed)
        await self._announce()

    async def _announce(self) -> None:
        body = {
            "type": "tournament",
            "tournament": self.config.id,
            "game": self.config.game,
            "commitment": self.config.commitment,
            "entrants": self.remote,
            "nonces_close": round(self.closes_at, 3),
            "open": self.open,
        }
        with contextlib.suppress(Exception):
            await self.nc.publish(announce_subject(self.config.id), json.dumps(body).encode())

    def _check_all_in(self) -> None:
        if all(p in self.state.nonces for p in self.remote):
            self._all_in.set()

    async def _on_request(self, msg: Msg) -> None:
        tokens = msg.subject.split(".")
        player = tokens[2] if len(tokens) == 5 else ""
        if not is_token(player) or not self.limits.allow(player):
            return  # the rate limit first: a flood is dropped unread
        if not is_inbox(msg.reply, player):
            return  # an answer goes to the sender's own inbox or nowhere
        as_json = msg.data[:1] in (b"{", b" ", b"\n")
        answer = await self._answer(player, msg.data)
        data = msgspec.json.encode(answer) if as_json else msgspec.msgpack.encode(answer)
        with contextlib.suppress(Exception):
            await self.nc.publish(msg.reply, data)

    def _refuse(self, code: str, reason: str) -> Answer:
        return Answer(ok=False, code=code, reason=reason, tournament=self.config.id)

    async def _answer(self, player: str, data: bytes) -> Answer:
        if len(data) > MAX_REQUEST_BYTES:
            return self._refuse("malformed", f"a request is at most {MAX_REQUEST_BYTES} bytes")
        try:
            request = msgspec.json.decode(data) if data[:1] in (b"{", b" ", b"\n") else msgspec.msgpack.decode(data)
        except (msgspec.DecodeError, ValueError):
            return self._refuse("malformed", "not JSON or msgpack")
        kind = request.get("type") if isinstance(request, dict) else None
        if kind not in ("nonce", "commitment"):
            return self._refuse("malformed", 'type must be "nonce" or "commitment"')
        if player not in self.remote:
            return self._refuse("not_entrant", f"{player} is no remote entrant of tournament {self.config.id}")
        if kind == "nonce":
            try:
                nonce = fairness.check_nonce(request.get("nonce"))
            except ValueError as exc:
                return self._refuse("bad_nonce", str(exc))
            async with self._lock:
                taken = self.state.nonces.get(player)
                if taken is None and self.open:
                    given = NonceGiven(player=player, nonce=nonce)
                    await self.append(given)
                    self.state.apply(given)
                    self._check_all_in()
                elif taken is None:
                    return self._refuse("closed", "the nonces are closed: the deals are fixed")
                elif taken != nonce:
                    return self._refuse("nonce_taken", f"{player} gave another nonce already; the first counts")
        return Answer(
            ok=True,
            tournament=self.config.id,
            commitment=self.config.commitment,
            nonce=self.state.nonces.get(player, ""),
            nonces_close=round(self.closes_at, 3),
            open=self.open,
        )
