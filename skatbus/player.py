"""A remote player over NATS: receives its updates, answers its prompts with commands.

What it trusts: only what the broker guarantees. The table an update is for is taken from the
subject it arrived on (``skat.view.<player>.<table>``), and an update whose contents name
another table or another player is ignored. A player of one tournament (``tournament``) acts
only at that tournament's tables (``<id>-g0r1``, ``<id>-s1t2``): a player's name is all its
subject says, and built-in bots have the same names in every tournament, so the tables of an
older, interrupted tournament on the same server prompt them too. Replies come to the player's own inbox
(``_INBOX.<player>.<id>``), the only place the services answer it, whichever connection it
shares (the tournament runner puts all its bots on one).

What it survives: a command is idempotent by ``at`` (the prompt's log position), so it is sent
again after a short time-out until it is answered or the prompt's deadline has passed; a prompt
of the same index that comes again after it was given up on gets the same command again (the
services re-prompt with a later deadline once they are back); and after every reconnect the player asks for its pending prompts again (hello), so a prompt
published while it was away is not lost.

What its bot may get wrong: the bot is played through ``skatbus.bot_guard.Guarded``, so an
``act`` that raises, or answers with no command or one ``view.legal`` does not hold, costs that
turn and no more: one log line (``bot_fault``), the default move sent at once in its place (the
move the services would play when the seat's clock ran out, so nobody waits for the clock),
and one more in ``faults``. A command the services still refuse as illegal is one too: the
default move is sent after it. No exception of a bot's ever leaves a task unretrieved.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import secrets
import time
from typing import Any, Protocol

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.registry import decode_update
from protocol.subjects import (
    command_subject,
    hello_subject,
    parse_view_subject,
    player_inbox,
)
from protocol.wire import Reply, Update, decode, encode
from services import logs
from services.connection import each_reconnect
from services.requester import Requester

from .bot_guard import REJECTED, describe, guarded
from .bots import Bot
from .tournament_end import tournament_of_table

RETRY_CODES = frozenset({"busy", "unavailable", "rate_limited", "no_table"})
"""Worth sending again until the deadline. ``no_table`` too: the prompt proves the table
exists, so a service that does not know it yet is behind (a lagging replica, a restart)."""
GRACE = 5.0
"""Seconds past a prompt's deadline during which an unanswered command is still retried: the
deadline is the services' clock, and a move that made it is answered ``stale`` anyway."""


class Observer(Protocol):
    """Told when a prompt arrives and when a command goes out (the benchmark's stopwatch)."""

    def prompted(self, table: str) -> None: ...

    def sent(self, table: str) -> None: ...


class Inbox:
    """Request/reply through ``_INBOX.<player>.<random>.<n>``: works on any connection
    (``nc.request`` would use the connection's own inbox prefix, which a connection shared by
    several players cannot set to each of them). One subscription and one time-out timer for
    all of the player's requests (``services.requester``); a time-out raises
    ``nats.errors.TimeoutError`` (an ``asyncio.TimeoutError``), nobody listening
    ``NoRespondersError``; ``stop`` cancels what is still waiting."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc = nc
        self.prefix = f"{player_inbox(player)}.{secrets.token_hex(6)}"
        self._requests = Requester(nc, self.prefix)

    async def start(self) -> None:
        await self._requests.start()

    async def stop(self) -> None:
        await self._requests.close(cancel=True)

    async def request(self, subject: str, data: bytes, timeout: float) -> Msg:
        # NoRespondersError is the broker's answer when nobody listens: no service runs, or
        # the services do not listen to this player (it sits at no open table, or it floods them).
        return await self._requests.request(subject, data, timeout)


class RemotePlayer:
    """Plays every table it is seated at: one prompt, one command, until stopped."""

    def __init__(
        self,
        nc: Client,
        player: str,
        bot: Bot,
        request_timeout: float = 1.5,
        observer: Observer | None = None,
        json: bool = False,
        hello_on_reconnect: bool = True,
        tournament: str | None = None,
    ) -> None:
        self.nc = nc
        self.observer = observer
        self.player = player
        self.bot = guarded(bot, player)
        """The bot, guarded: its failed turns fall to the default move (``bot_guard``)."""
        self.request_timeout = request_timeout
        self.json = json
        """Ask for JSON updates (in every hello)."""
        self.hello_on_reconnect = hello_on_reconnect
        """Say hello after every reconnect (off when the connection does it itself)."""
        self.tournament = tournament
        """Play only this tournament's tables (None: every table that prompts us)."""
        self.answered: dict[str, int] = {}
        self.rejections: list[Reply] = []
        self.ignored = 0
        """Updates that did not fit the subject they came on (or could not be read)."""
        self.elsewhere = 0
        """Updates of another tournament's tables, dropped unread."""
        self.retries = 0
        self.log = logs.get(player=player)
        self.inbox = Inbox(nc, player)
        self._sub: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._abandoned: dict[str, tuple[int, Any]] = {}
        """Per table, the prompt index and command given up on without an answer: a prompt of
        that index re-sent (the services back after an outage, with a later deadline) gets it again."""
        self._deadline: dict[str, tuple[int, float]] = {}
        """Per table, the prompt index and deadline of its latest repeat: the command is sent until then."""
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.inbox.start()
        self._sub = await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)
        if self.hello_on_reconnect:
            # Watched on the connection, which we may share and did not open.
            self._watch = asyncio.ensure_future(each_reconnect(self.nc, self._hello_after_reconnect))

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.inbox.stop()

    @property
    def faults(self) -> int:
        """Turns the bot failed (raised, no command, illegal), each played by the default move."""
        return self.bot.faults

    async def hello(self) -> int:
        """Ask the views service for our pending prompts again (and say which encoding we
        want); how many it sent, or -1 without an answer."""
        payload = b'{"format":"json"}' if self.json else b""
        try:
            msg = await self.inbox.request(hello_subject(self.player), payload, timeout=2.0)
            return int(msgspec.json.decode(msg.data).get("prompts", 0))
        except Exception:
            return -1

    async def _hello_after_reconnect(self) -> None:
        """Prompts published while we were away reached nobody: ask for them again."""
        self.log.info("hello_after_reconnect", prompts=await self.hello())

    def plays(self, table: str) -> bool:
        """Whether ``table`` is ours to play: any table, or only our tournament's."""
        return self.tournament is None or tournament_of_table(table) == self.tournament

    async def _on_update(self, msg: Msg) -> None:
        try:
            player, table = parse_view_subject(msg.subject)
            if not self.plays(table):  # another tournament's: not even decoded, not a fault
                self.elsewhere += 1
                return
            update: Update = decode_update(msg.data)  # any game's: its view names it
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.ignored += 1
            self.log.warning("update_unreadable", subject=msg.subject[:100], error=str(exc)[:200])
            return
        if player != self.player or update.view.table != table:
            self.ignored += 1
            self.log.warning("update_does_not_fit", subject=msg.subject[:100], table=update.view.table[:64])
            return
        if not update.your_turn or self.answered.get(table, -1) > update.index:
            return
        if self.answered.get(table) == update.index:  # a repeat: answered, still being sent, or given up
            self._deadline[table] = (update.index, update.deadline)  # a later one: sent on until then
            again = self._abandoned.pop(table, None)
            if again is None or again[0] != update.index:
                return
            work = self._send(table, update, again[1], resent=True)  # the same command, until the new deadline
        else:
            self.answered[table] = update.index
            self._abandoned.pop(table, None)
            if self.observer is not None:
                self.observer.prompted(table)
            work = self._act(table, update)
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _act(self, table: str, update: Update) -> None:
        try:
            chosen = self.bot.act(update)  # guarded: the bot's own exceptions are its faults
            if inspect.isawaitable(chosen):
                chosen = await chosen
        except Exception as exc:  # not even a default move (a view without legal actions)
            self.log.warning("bot_unanswered", table=table, index=update.index, error=describe(exc)[:300])
            return
        refused = await self._send(table, update, chosen)
        if refused is not None:  # refused as illegal: the turn is a fault, its default move goes instead
            try:
                default = self.bot.fault(update, REJECTED, f"{refused.code}: {refused.reason}"[:300])
            except ValueError:
                return
            await self._send(table, update, default)

    async def _send(self, table: str, update: Update, chosen: Any, resent: bool = False) -> Reply | None:
        """Send ``chosen`` as the answer to ``update`` until it is answered (or given up);
        the services' reply when they refused it as illegal, else None. ``resent``: it was
        sent before, so ``stale`` may mean that an earlier attempt landed."""
        action = msgspec.structs.replace(chosen, at=update.index)
        data = encode(action)
        subject = command_subject(self.player, table)
        give_up = (update.deadline or time.time() + 60.0) + GRACE
        pause, sent = 0.05, 0
        while True:
            sent += 1
            if self.observer is not None:
                self.observer.sent(table)
            try:
                msg = await self.inbox.request(subject, data, timeout=self.request_timeout)
                reply: Reply = decode(msg.data, Reply, "msgpack")
            except Exception as exc:  # no answer (a service or the broker restarting): same command again
                reply = Reply(ok=False, code="unavailable", reason=repr(exc))
            if reply.ok:
                return None
            if reply.code == "stale" and (sent > 1 or resent):
                return None  # an earlier attempt landed; its answer was lost on the way
            if reply.code == "paused":
                self.log.info("table_paused", table=table, reason=reply.reason)
                return None  # not the bot's mistake: the table prompts again when it resumes
            if reply.code not in RETRY_CODES:
                self.rejections.append(reply)
                self.log.warning("command_rejected", table=table, code=reply.code, reason=reply.reason)
                return reply if reply.code == "illegal" else None
            index, later = self._deadline.get(table, (-1, 0.0))
            if time.time() > (max(give_up, later + GRACE) if index == update.index else give_up):
                self.log.warning("command_abandoned", table=table, code=reply.code, reason=reply.reason)
                self._abandoned[table] = (update.index, chosen)
                return None
            self.retries += 1
            self.log.debug("command_retry", table=table, code=reply.code, reason=reply.reason[:80])
            await asyncio.sleep(max(pause, 0.25) if reply.code == "rate_limited" else pause)
            pause = min(1.0, pause * 2)
