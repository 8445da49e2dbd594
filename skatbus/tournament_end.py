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

One message is easy to miss: the bot was disconnected at that moment, or started after the end.
So the end is also kept: the runner publishes it into stream ``SKATEND`` (subjects
``skat.public.tournament.*``, the last message of each tournament only), and the bot asks for
the last announcement of each tournament it knows of (``--tournament``, those it heard running,
those its tables' ids name: ``<id>-g0r1``, ``<id>-s1t2``) when it starts, after every reconnect
and whenever it heard nothing for ``IDLE`` seconds: one direct get per tournament
(``protocol.subjects.tournament_end_request``), the only JetStream request ``skat auth`` lets a
player make. A bot without ``--tournament`` that starts after the end knows no tournament to ask
about, and waits for the next one (that is how bots are started before a tournament).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import DiscardPolicy, StorageType, StreamConfig

from protocol.subjects import (
    ENDS_STREAM,
    TOURNAMENT_ANNOUNCEMENTS,
    is_token,
    parse_view_subject,
    tournament_end_request,
)
from services import logs
from services.connection import each_reconnect
from services.store import cluster_replicas, ensure_stream, patiently

from .nonces import announce_subject

ANNOUNCEMENTS: Final = TOURNAMENT_ANNOUNCEMENTS
IDLE: Final = 60.0
"""Seconds without a prompt or an announcement after which a bot asks again whether its
tournaments have ended (a message lost without a reconnect: a cluster route that was down)."""
KEEP_SECONDS: Final = 90 * 24 * 3600.0
"""How long ``SKATEND`` keeps a tournament's last announcement."""
_TABLE_OF_TOURNAMENT = re.compile(r"(.+)-(?:g\d+(?:r\d+)?|s\d+t\d+)")
"""A tournament's table ids (``protocol.tournament``): ``<id>-g<set>r<rotation>``, ``<id>-s<series>t<table>``."""


def ends_stream(nc: Client) -> StreamConfig:
    """``SKATEND``: the last announcement of each tournament, public data only (what every player
    may read on ``skat.public.>`` anyway), readable by a player's direct get."""
    return StreamConfig(
        name=ENDS_STREAM,
        subjects=[TOURNAMENT_ANNOUNCEMENTS],
        storage=StorageType.FILE,
        max_msgs_per_subject=1,
        discard=DiscardPolicy.OLD,
        max_bytes=1 << 26,
        max_age=KEEP_SECONDS,
        allow_direct=True,
        num_replicas=cluster_replicas(nc),
    )


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


async def announce_finished(nc: Client, tid: str, game: str, entrants: Iterable[str], patience: float = 10.0) -> None:
    """Tell the remote entrants that tournament ``tid`` is over, and keep it in ``SKATEND`` for
    those that miss the message (acknowledged by the stream, so it is stored before the caller
    stops the server it runs on). Best effort: without JetStream it is one plain message."""
    data = finished_announcement(tid, game, entrants)
    subject = announce_subject(tid)
    try:
        js = nc.jetstream(timeout=2.0)
        await ensure_stream(js, ends_stream(nc), patience)
        await patiently(lambda: js.publish(subject, data), patience, "keeping the tournament's end")
        return
    except Exception as exc:
        logs.get(tournament=tid).warning("tournament_end_not_kept", error=repr(exc)[:200])
    with contextlib.suppress(Exception):
        await nc.publish(subject, data)
        await nc.flush(timeout=2)


def tournament_of_table(table: str) -> str | None:
    """The tournament a table id names, if it is one of a tournament's (``t-1-g0r2`` -> ``t-1``)."""
    match = _TABLE_OF_TOURNAMENT.fullmatch(table)
    return match.group(1) if match else None


@dataclass
class _Kept:
    """A kept announcement as ``_on_announcement`` reads a message: the subject it was stored on."""

    subject: str
    data: bytes


class TournamentEnd:
    """Listens to the tournaments' announcements for ``player``; ``over`` is set once its
    tournament (``tournament``, or every one that named it) has finished, ``why`` says so."""

    def __init__(self, nc: Client, player: str, tournament: str | None = None, idle: float = IDLE) -> None:
        self.nc, self.player, self.tournament, self.idle = nc, player, tournament, idle
        self.running: set[str] = set()
        """Tournaments that listed this player and have not said they finished."""
        self.finished: set[str] = set()
        self.known: set[str] = {tournament} if tournament is not None else set()
        """Tournaments to ask about (``check``): ours, those heard running, those our tables name."""
        self.over = asyncio.Event()
        self.why = ""
        self.heard_at = time.monotonic()
        self._sub: Any = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Listen to the announcements, ask once whether the end was missed, and again after
        every reconnect and whenever nothing was heard for ``idle`` seconds."""
        subject = ANNOUNCEMENTS if self.tournament is None else announce_subject(self.tournament)
        self._sub = await self.nc.subscribe(subject, cb=self._on_announcement)
        await self.check()
        self._tasks = [
            asyncio.ensure_future(each_reconnect(self.nc, self.check)),
            asyncio.ensure_future(self._when_idle()),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    def heard(self, view_subject: str) -> None:
        """A prompt came (on ``skat.view.<player>.<table>``): not idle, and its table's
        tournament is one to ask about."""
        self.heard_at = time.monotonic()
        if self.tournament is not None:
            return
        with contextlib.suppress(ValueError):
            tid = tournament_of_table(parse_view_subject(view_subject)[1])
            if tid is not None and is_token(tid):
                self.known.add(tid)

    async def check(self) -> None:
        """Ask ``SKATEND`` for the last announcement of every tournament we know of that has
        not finished; one that finished counts as if its message had just arrived."""
        for tid in sorted(self.known - self.finished):
            if self.over.is_set():
                return
            try:
                reply = await self.nc.request(tournament_end_request(tid), b"", timeout=2.0)
            except Exception:  # no stream (no tournament ended here yet), no answer: ask later
                continue
            kept = (reply.headers or {}).get("Nats-Subject")
            if reply.data and kept == announce_subject(tid):
                await self._on_announcement(_Kept(kept, reply.data))

    async def _when_idle(self) -> None:
        while True:
            await asyncio.sleep(self.idle)
            if time.monotonic() - self.heard_at >= self.idle:
                self.heard_at = time.monotonic()
                await self.check()

    async def _on_announcement(self, msg: Msg | _Kept) -> None:
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
        self.known.add(tid)
        self.heard_at = time.monotonic()
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
