"""The dealer: opens tables, deals every deal (from the table's seed) and closes finished tables."""

from __future__ import annotations

import secrets

import msgspec
from nats.aio.msg import Msg

from protocol.events import TableOpened
from protocol.subjects import ADMIN_OPEN, check_token
from protocol.wire import OpenTable, Reply, decode, sniff

from .runtime import Service
from .store import Conflict


class Dealer(Service):
    name = "dealer"
    triggers = ("deal_scored",)
    """What others write that the dealer must act on. Its own events (the table opened, a deal
    dealt) it applied when it wrote them; a table it opened deals its first deal at once."""
    skips_deals = True
    prompts = True
    """It prompts each deal's first bid, right after dealing it."""

    async def on_start(self) -> None:
        self._subs.append(await self.nc.subscribe(ADMIN_OPEN, queue=self.name, cb=self._on_open_msg))

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
            if len(request.players) != request.rules.players:
                raise ValueError(f"{len(request.players)} players for a {request.rules.players}-player table")
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            await self._reply(msg, Reply(ok=False, code="malformed", reason=str(exc)), fmt, None)
            return
        table = self._table(request.table)
        async with table.lock:
            await self.catch_up(table)
            if table.state.n:
                reply = Reply(ok=False, code="exists", reason=f"table {request.table} is already open")
            else:
                opened = TableOpened(
                    table=request.table,
                    players=request.players,
                    rules=request.rules,
                    # The seed decides every card: without one given, an unguessable one.
                    seed=request.seed or secrets.token_hex(16),
                    formats=request.formats,
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
