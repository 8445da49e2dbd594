"""A person's seat: the page's backend plays as that player, exactly as a remote bot does.

It connects as the player (with its own credentials when the server runs ``skat auth``'s
configuration), subscribes only to ``skat.view.<player>.*``, sends commands on
``skat.cmd.<player>.<table>`` with ``at`` from the prompt, and replies come to
``_INBOX.<player>.…`` (``skatbus.player.Inbox``). So the broker holds the page to the
permissions of any remote bot: it cannot see another seat's cards because the player's user
cannot subscribe to anything that carries them.

The page only ever gets the player's own updates (as the views service redacted them for this
seat, of whichever game the table plays: ``protocol.registry.decode_update``) and sends back one of the legal
commands of the latest update; anything else it sends is refused here, before it reaches the
bus. A command listed while it is not the seat's turn (Thirty-one's ``look``, which a seat may
do at any time) goes out without the prompt's ``at``: the table moves on meanwhile, and the
rules, not the position, decide whether it still may. A reloaded page gets the latest update
at once and the seat says hello, so a prompt that went out while no page listened is sent
again, with its original deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import registry
from protocol.skat.commands import Discard, Resign, ShowCards
from protocol.subjects import check_token, command_subject, hello_subject, parse_view_subject
from protocol.wire import Reply, decode, encode
from services import logs
from services.connection import ConnectionSettings, connect, each_reconnect

from ..nonce_giver import NonceGiver
from ..player import GRACE, RETRY_CODES, Inbox
from .feed import Mailbox

_JSON = msgspec.json.Encoder()
SKAT = "skat"


def game_of(update: Any) -> str:
    """The game of an update: the name its view gives; Skat's view names none (its ``game``
    is the declared game, or nothing)."""
    named = getattr(update.view, "game", None)
    return named if isinstance(named, str) else SKAT


class SeatRefused(ValueError):
    """A command from the page that is not one of the prompt's legal actions (or not for
    the table it is prompted at): refused here, with a one-line reason for the page."""


class Seat:
    """One player's connection, its latest update per table, and the pages watching it."""

    def __init__(self, player: str, settings: ConnectionSettings, request_timeout: float = 1.5) -> None:
        self.player = check_token("player", player)
        self.settings = settings
        self.request_timeout = request_timeout
        self.nc: Client | None = None
        self.inbox: Inbox | None = None
        self.updates: dict[str, Any] = {}
        """Per table, the newest update (its game's ``update_type``: Skat's ``Update``, ...)."""
        self.table: str | None = None
        """The table of the newest update: the one the page shows."""
        self.watchers: set[Mailbox] = set()
        self.log = logs.get(player=player, connection="skat-web-seat")
        self._sub: Any = None
        self._watch: asyncio.Task[None] | None = None
        self._sending: set[tuple[str, int]] = set()
        self.answered: dict[str, int] = {}
        """Per table, the prompt (index) last answered: a reloaded page does not offer it again."""
        self.nonces: NonceGiver | None = None

    async def start(self, patience: float | None = None) -> None:
        self.nc = await connect(
            self.settings, f"skat-web-{self.player}", inbox_prefix=f"_INBOX.{self.player}", patience=patience
        )
        self.inbox = Inbox(self.nc, self.player)
        await self.inbox.start()
        self._sub = await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)
        self._watch = asyncio.ensure_future(each_reconnect(self.nc, self._hello_quietly))
        # A person's seat gives its nonce to a fair tournament that seats it, as every SDK bot does.
        self.nonces = NonceGiver(self.nc, self.player)
        await self.nonces.start()
        await self.hello()

    async def stop(self) -> None:
        if self.nonces is not None:
            await self.nonces.stop()
        if self._watch is not None:
            self._watch.cancel()
        if self.inbox is not None:
            await self.inbox.stop()
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.close()

    async def hello(self) -> int:
        """Ask for our pending prompts again, as every bot does after a (re)connect; how many
        came, or -1 without an answer."""
        if self.inbox is None:
            return -1
        try:
            msg = await self.inbox.request(hello_subject(self.player), b"", timeout=2.0)
            return int(msgspec.json.decode(msg.data).get("prompts", 0))
        except Exception:
            return -1

    async def _hello_quietly(self) -> None:
        self.log.info("hello_after_reconnect", prompts=await self.hello())

    def watch(self, mailbox: Mailbox) -> None:
        message = self.message()
        if message is not None:
            mailbox.put(message, "seat")
        self.watchers.add(mailbox)

    def message(self) -> bytes | None:
        """The page's message: the player's newest update as the views service sent it."""
        if self.table is None:
            return None
        update = self.updates[self.table]
        return _JSON.encode(
            {
                "kind": "seat",
                "game": game_of(update),
                "player": self.player,
                "table": self.table,
                "index": update.index,
                "answered": self.answered.get(self.table, -1),
                "update": update,
            }
        )

    async def _on_update(self, msg: Msg) -> None:
        try:
            player, table = parse_view_subject(msg.subject)
            update = registry.decode_update(msg.data)
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
            return
        if player != self.player or update.view.table != table:
            return  # as RemotePlayer: an update that does not fit its subject is ignored
        known = self.updates.get(table)
        if known is not None and known.index > update.index:
            return  # a repeat of an older prompt (hello, a services' reconnect)
        self.updates[table] = update
        if self.table is None or self.table == table or update.your_turn:
            self.table = table
        message = self.message()
        if message is not None:
            for mailbox in self.watchers:
                mailbox.put(message, "seat")

    async def command(self, table: str, body: bytes) -> Reply:
        """Send the page's choice for ``table``: it must be one of the latest update's legal
        actions (or, at Skat, ``show``/``resign``, which the rules allow in play without listing
        them). A turn's answer goes out with that prompt's ``at``, one made out of turn without
        it; either is retried like a bot's until answered."""
        check_token("table", table)
        update = self.updates.get(table)
        if update is None or not (update.your_turn or update.view.legal):  # out of turn: listed ones only
            raise SeatRefused("it is not your turn at this table")
        game = game_of(update)
        skat = game == SKAT
        try:
            chosen = registry.get(game).decode_command(body)[0]
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SeatRefused(f"not a command: {exc}") from None
        match = next((c for c in update.view.legal if _same(c, chosen)), None)
        if match is None and skat and isinstance(chosen, ShowCards | Resign) and update.view.phase == "playing":
            match = chosen
        if match is None:
            raise SeatRefused("not one of your legal actions now")
        key = (table, update.index)
        if key in self._sending:
            raise SeatRefused("your answer to this prompt is on its way")
        self._sending.add(key)
        try:
            at = update.index if update.your_turn else -1
            reply = await self._send(table, update, msgspec.structs.replace(match, at=at))
            if reply.ok:
                self.answered[table] = max(self.answered.get(table, -1), update.index)
            return reply
        finally:
            self._sending.discard(key)

    async def _send(self, table: str, update: Any, command: Any) -> Reply:
        assert self.inbox is not None
        data = encode(command)
        subject = command_subject(self.player, table)
        give_up = (update.deadline or time.time() + 60.0) + GRACE
        pause, sent = 0.05, 0
        while True:
            sent += 1
            try:
                msg = await self.inbox.request(subject, data, timeout=self.request_timeout)
                reply: Reply = decode(msg.data, Reply, "msgpack")
            except Exception as exc:  # no answer: the same command again (idempotent by ``at``)
                reply = Reply(ok=False, code="unavailable", reason=repr(exc)[:200])
            if reply.ok or (reply.code == "stale" and sent > 1):
                return Reply(ok=True, index=reply.index)
            if reply.code not in RETRY_CODES or time.time() > give_up:
                self.log.info("command_refused", table=table, code=reply.code)
                return reply
            await asyncio.sleep(max(pause, 0.25) if reply.code == "rate_limited" else pause)
            pause = min(1.0, pause * 2)


def _same(legal: Any, chosen: Any) -> bool:
    """Whether the page's command is this legal one (the two cards of Skat's discard in any
    order); commands of another game never equal Skat's."""
    if isinstance(legal, Discard) and isinstance(chosen, Discard):
        return sorted(legal.cards) == sorted(chosen.cards)
    return bool(msgspec.structs.replace(legal, at=-1) == msgspec.structs.replace(chosen, at=-1))
