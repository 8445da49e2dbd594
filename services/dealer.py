"""The dealer: opens tables, deals every deal (from the table's seed) and closes finished tables."""

from __future__ import annotations

import asyncio
import secrets

import msgspec
from nats.aio.msg import Msg

from protocol import registry
from protocol.events import Event, TablePaused, TableResumed
from protocol.subjects import ADMIN_OPEN, ADMIN_PAUSE, check_token
from protocol.wire import OpenTable, PauseTable, Reply, decode, sniff

from .runtime import Service, Table
from .store import Conflict


class Dealer(Service):
    name = "dealer"
    triggers = ("deal_scored", "table_paused", "table_resumed")
    """What others write that the dealer must act on. Its own events (the table opened, a deal
    dealt) it applied when it wrote them; a table it opened deals its first deal at once. A
    pause or resumption another dealer instance wrote keeps this one's cache right."""
    skips_deals = True
    prompts = True
    """It prompts each deal's first bid, right after dealing it."""

    async def on_start(self) -> None:
        self._subs.append(await self.nc.subscribe(ADMIN_OPEN, queue=self.name, cb=self._on_open_msg))
        self._subs.append(await self.nc.subscribe(ADMIN_PAUSE, queue=self.name, cb=self._on_pause_msg))

    async def _on_open_msg(self, msg: Msg) -> None:
        self._spawn(self._on_open(msg))

    async def _on_open(self, msg: Msg) -> None:
        fmt = sniff(msg.data)
        try:
            request: OpenTable = decode(msg.data, OpenTable, fmt)
            check_token("table", request.table)
            for player in request.players:
                check_token("player", player)
            if set(request.formats) - set(request.players):
                raise ValueError("formats name players who are not at the table")
            if len(set(request.players)) != len(request.players):
                raise ValueError("a player can hold only one seat")
            game = registry.get(request.game)
            rules = request.rules
            if not isinstance(rules, game.rules_type):
                rules = msgspec.convert(rules or {}, game.rules_type)
            low, high = game.players(rules)
            if not low <= len(request.players) <= high:
                table_of = f"{low}-player table" if low == high else f"{game.title} table of {low} to {high}"
                raise ValueError(f"{len(request.players)} players for a {table_of}")
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            await self._reply(msg, Reply(ok=False, code="malformed", reason=str(exc)), fmt, None)
            return
        table = self._table(request.table)
        async with table.lock:
            await self.catch_up(table)
            if table.state.n:
                reply = Reply(ok=False, code="exists", reason=f"table {request.table} is already open")
            else:
                opened = game.open_event(
                    request.table,
                    request.players,
                    rules,
                    # The seed decides every card: without one given, an unguessable one.
                    request.seed or secrets.token_hex(16),
                    dict(request.formats),
                    feed=request.feed,
                )
                try:
                    await self.append(table, [opened])
                    reply = Reply(ok=True, index=0)
                except Conflict:
                    reply = Reply(ok=False, code="exists", reason=f"table {request.table} is already open")
                if reply.ok:
                    try:
                        await self.settle(table)  # the first deal
                        await self._prompt(table)  # and its first bid
                    except Exception as exc:  # opened all the same: the deal follows when the store answers
                        self.log.warning("first_deal_failed", table=request.table, error=repr(exc))
                        self._spawn(self._refresh(request.table, retries=None))
        if not self.owns(request.table) and self.tables.get(request.table) is table and not table.users:
            self._drop(request.table)  # another instance deals its next deals: keep no stale copy
        self.log.info("table_opened" if reply.ok else "open_refused", table=request.table, reason=reply.reason)
        await self._reply(msg, reply, fmt, None)

    async def _on_pause_msg(self, msg: Msg) -> None:
        self._spawn(self._on_pause(msg))

    async def _on_pause(self, msg: Msg) -> None:
        """Pause or resume a table: append ``table_paused``/``table_resumed`` after the table's
        last event (read first: the dealer's cache jumps over a deal's play), then, on resuming,
        whatever the table owes the dealer and the prompt of the seat to move (its new turn
        counts from the resumption)."""
        fmt = sniff(msg.data)
        try:
            request: PauseTable = decode(msg.data, PauseTable, fmt)
            check_token("table", request.table)
            if len(request.reason) > 200:
                raise ValueError("a pause's reason is at most 200 characters")
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            await self._reply(msg, Reply(ok=False, code="malformed", reason=str(exc)), fmt, None)
            return
        table = self._table(request.table)
        async with table.lock:
            reply = await self._pause(table, request)
        if not self.owns(request.table) and self.tables.get(request.table) is table and not table.users:
            self._drop(request.table)
        self.log.info("table_paused" if request.paused else "table_resumed", table=request.table, code=reply.code)
        await self._reply(msg, reply, fmt, None)

    async def _pause(self, table: Table, request: PauseTable) -> Reply:
        await self.reread(table)  # a cache that jumped over deals may miss a pause or a resumption
        for _ in range(40):
            await self.catch_up(table)
            state = table.state
            if state.defaulting >= 0:  # a time-out half recorded: its enforcer completes it at once
                await asyncio.sleep(0.05)
                continue
            if not state.n:
                return Reply(ok=False, code="no_table", reason=f"there is no table {request.table}")
            if state.closed:
                return Reply(ok=False, code="table_closed", reason=f"table {request.table} is closed")
            if state.paused == request.paused:
                return Reply(ok=True, code="unchanged", index=state.events - 1)
            event: Event = TablePaused(reason=request.reason) if request.paused else TableResumed()
            try:
                await self.append(table, [event])
            except Conflict:
                continue  # somebody appended meanwhile: read again and decide again
            index = table.state.events - 1
            if not request.paused:
                try:
                    await self.settle(table)  # e.g. the next deal, if the pause came between deals
                    await self._prompt(table)
                except Exception as exc:  # resumed all the same: the owners catch up from the log
                    self.log.warning("resume_followup_failed", table=request.table, error=repr(exc))
            return Reply(ok=True, index=index)
        return Reply(ok=False, code="busy", reason="the table kept changing; try again")
