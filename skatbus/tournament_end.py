"""How a remote bot learns that its tournament is over, so that it can stop instead of waiting
(and, once the tournament's own server is gone, reconnecting) for ever.

The runner (``skatbus.tournament.run_tournament``) says so once the results are written, on the
tournament's public subject, where it announced the commitment before (``skatbus.nonces``)::

    skat.public.tournament.<id>
    {"type": "tournament", "tournament": "<id>", "game": "skat", "entrants": ["alice"],
     "open": false, "finished": true}

``entrants`` are the remote entrants, as in the nonce announcements; ``open`` is false, so a
nonce giver ignores it. Every player may read the public feed (``skat auth`` allows it), so a bot
in any language needs nothing else: subscribe to ``skat.public.tournament.*`` and stop when an
announcement with ``"finished": true`` lists your id (docs/bots.md, "How a bot ends").

The bot side (``TournamentEnd``) keeps the tournaments whose announcements listed its player, and
is over when a finished one lists it and none of the others it heard of is still running, or,
when it was started for one tournament (``skat bot --tournament ID``), when that one finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable
from typing import Any, Final

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.subjects import is_token

from .nonces import announce_subject

ANNOUNCEMENTS: Final = "skat.public.tournament.*"


def finished_announcement(tid: str, game: str, entrants: Iterable[str]) -> bytes:
    """The runner's last word on ``skat.public.tournament.<tid>``."""
    body = {
        "type": "tournament",
        "tournament": tid,
        "game": game,
        "entrants": sorted(set(entrants)),
        "open": False,
        "finished": True,
    }
    return json.dumps(body).encode()


async def announce_finished(nc: Client, tid: str, game: str, entrants: Iterable[str]) -> None:
    """Tell the remote entrants that tournament ``tid`` is over (flushed, so it has left before
    the caller stops the server it runs on). Best effort: a bot that misses it stops by hand."""
    with contextlib.suppress(Exception):
        await nc.publish(announce_subject(tid), finished_announcement(tid, game, entrants))
        await nc.flush(timeout=2)


class TournamentEnd:
    """Listens to the tournaments' announcements for ``player``; ``over`` is set once its
    tournament (``tournament``, or every one that named it) has finished, ``why`` says so."""

    def __init__(self, nc: Client, player: str, tournament: str | None = None) -> None:
        self.nc, self.player, self.tournament = nc, player, tournament
        self.running: set[str] = set()
        """Tournaments that listed this player and have not said they finished."""
        self.finished: set[str] = set()
        self.over = asyncio.Event()
        self.why = ""
        self._sub: Any = None

    async def start(self) -> None:
        subject = ANNOUNCEMENTS if self.tournament is None else announce_subject(self.tournament)
        self._sub = await self.nc.subscribe(subject, cb=self._on_announcement)

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
        tid, entrants = body.get("tournament"), body.get("entrants")
        if not isinstance(tid, str) or not is_token(tid) or msg.subject != announce_subject(tid):
            return  # an announcement is believed only on its own tournament's subject
        named = isinstance(entrants, list) and self.player in entrants
        if not named and tid != self.tournament:
            return
        if body.get("finished") is True:
            self.running.discard(tid)
            self.finished.add(tid)
        elif tid not in self.finished:
            self.running.add(tid)
        if self.over.is_set():
            return
        if self.tournament is not None:
            if tid == self.tournament and tid in self.finished:
                self._end(f"tournament {tid} is over")
        elif tid in self.finished and not self.running:
            self._end(f"tournament {tid} is over")

    def _end(self, why: str) -> None:
        self.why = why
        self.over.set()
