"""What spectators see, from NATS to the page: the lobby, a table as it is played, a
tournament's standings.

A table is folded here from its log (read with the operator's connection) and the page gets
only ``view(state, SPECTATOR)``: the redaction the public feed uses, done by
``protocol.views`` and nowhere else. Folding here, rather than in the page from the public
feed, is what lets a spectator see an ouvert declarer's cards: no public event carries them.

Every message a page gets carries ``index``, the number of the table's events it reflects, so
a test can check it against the log position by position.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.js.errors import NotFoundError

from protocol.events import MSGPACK, DealEnded, DealScored, TableClosed, TableOpened
from protocol.subjects import check_token, log_kind, table_log
from protocol.table import LogError, TableState
from protocol.tournament import TournamentEvent, TournamentState
from protocol.views import SPECTATOR, view
from services import logs
from services.store import EventStore, index_of

from ..tournament import STREAM as TOURNAMENT_STREAM

_ENCODER = msgspec.json.Encoder()
_TOURNAMENT = msgspec.msgpack.Decoder(TournamentEvent)


MAX_KEPT = 16


class Mailbox:
    """One page's messages: only the newest of each kind (``key``) is kept, so a slow page
    skips states and never makes the server buffer; plus a wake-up for the page's writer.

    A message put with ``keep`` is never skipped (up to ``MAX_KEPT`` of them): a deal's final
    state, so that its last trick shows even when the next deal follows within milliseconds."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.kept: list[bytes] = []
        self.changed = asyncio.Event()
        self.closed = False

    def put(self, data: bytes, key: str = "", keep: bool = False) -> None:
        if keep:
            self.data.pop(key, None)  # older than this one: skipped
            self.kept = [*self.kept, data][-MAX_KEPT:]
        else:
            self.data[key] = data
        self.changed.set()

    def close(self) -> None:
        """The server is stopping: the page's writer ends."""
        self.closed = True
        self.changed.set()

    async def get(self, timeout: float) -> list[bytes]:
        """The newest messages not yet taken (none after ``timeout`` seconds)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), timeout)
        self.changed.clear()
        out, self.kept, self.data = [*self.kept, *self.data.values()], [], {}
        return out


def spectator_message(state: TableState) -> bytes:
    """What a spectator's page gets: the spectator's view, the score sheet, the position."""
    sheet = [
        {
            "deal": row.deal,
            "dealer": row.dealer,
            "result": row.result,
            "totals": row.totals,
            "seeger_fabian": row.seeger_fabian_totals,
        }
        for row in state.sheet
    ]
    message = {
        "kind": "table",
        "index": state.events,
        "closed": state.closed,
        "deals": state.rules.deals if state.opened else 0,
        "view": view(state, SPECTATOR) if state.opened else None,
        "sheet": sheet,
    }
    return _ENCODER.encode(message)


class TableFeed:
    """One table, folded from its log and kept current from the log's live subjects; every
    change goes to each watching page as a spectator's message."""

    def __init__(self, nc: Client, store: EventStore, table: str) -> None:
        self.nc = nc
        self.store = store
        self.table = check_token("table", table)
        self.state = TableState()
        self.last_seq = 0
        self.watchers: set[Mailbox] = set()
        self.broken = ""
        self.listeners: list[Callable[[TableState], None]] = []
        self._sub: Any = None
        self._lock = asyncio.Lock()
        self._message = b""

    async def start(self) -> None:
        # Subscribed before the first read: an event stored in between arrives on the subscription
        # and is applied in order (or triggers another read), never lost.
        self._sub = await self.nc.subscribe(table_log(self.table), cb=self._on_event)
        await self._catch_up()

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    def watch(self, mailbox: Mailbox) -> None:
        if self._message:
            mailbox.put(self._message, "table")
        self.watchers.add(mailbox)

    async def _on_event(self, msg: Msg) -> None:
        index = index_of((msg.headers or {}).get("Nats-Msg-Id", ""), self.table)
        async with self._lock:
            if index < 0 or index < self.state.events:
                return  # not ours, or applied already (read before it arrived here)
            if index > self.state.events:
                await self._read_unlocked()
                return
            try:
                event = MSGPACK.decode(msg.data)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return
            self._apply(event)
            self._publish(keep=isinstance(event, DealEnded))

    async def _catch_up(self) -> None:
        async with self._lock:
            await self._read_unlocked()

    async def _read_unlocked(self) -> None:
        for stored in await self.store.read(self.table, after_seq=self.last_seq):
            self.last_seq = stored.seq
            if stored.event is not None and stored.index == self.state.events:
                self._apply(stored.event)
                if isinstance(stored.event, DealEnded):
                    self._publish(keep=True)  # a deal's last trick, even if the next deal is here too
        self._publish()

    def _apply(self, event: Any) -> None:
        if self.broken:
            return
        try:
            self.state.apply(event)
        except (LogError, ValueError, KeyError) as exc:  # a log that does not fold: show up to there
            self.broken = str(exc)[:200]
            logs.get(table=self.table).warning("web_log_does_not_fold", error=self.broken)
        for listener in self.listeners:
            listener(self.state)

    def _publish(self, keep: bool = False) -> None:
        self._message = spectator_message(self.state)
        for mailbox in self.watchers:
            mailbox.put(self._message, "table", keep=keep)


class Feeds:
    """The tables being watched, each folded once however many pages watch it, and dropped
    a while after its last page left."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.store = EventStore(nc)
        self.tables: dict[str, TableFeed] = {}
        self._users: dict[str, int] = {}
        self._lock = asyncio.Lock()

    async def open(self, table: str) -> TableFeed:
        async with self._lock:
            feed = self.tables.get(table)
            if feed is None:
                feed = TableFeed(self.nc, self.store, table)
                await feed.start()
                self.tables[table] = feed
            self._users[table] = self._users.get(table, 0) + 1
            return feed

    async def close(self, table: str, mailbox: Mailbox | None = None) -> None:
        async with self._lock:
            feed = self.tables.get(table)
            if feed is None:
                return
            if mailbox is not None:
                feed.watchers.discard(mailbox)
            self._users[table] -= 1
            if self._users[table] <= 0:
                del self.tables[table], self._users[table]
                await feed.stop()

    async def stop(self) -> None:
        for feed in list(self.tables.values()):
            await feed.stop()
        self.tables.clear()

    # --- the lobby --------------------------------------------------------------------------

    async def lobby(self) -> dict[str, Any]:
        """The open tables (with their players) and the tournaments in the store."""
        tables = []
        for table in (await self.store.open_tables())[:500]:
            opened = await self.store.read(table, limit=1)
            players = list(opened[0].event.players) if opened and isinstance(opened[0].event, TableOpened) else []
            tables.append({"table": table, "players": players})
        tournaments = []
        for tid in await self.tournament_ids():
            state = await self.tournament(tid)
            if state.config is None:
                continue
            tournaments.append(
                {
                    "id": tid,
                    "entrants": state.config.entrants,
                    "tables": len(state.tables),
                    "finished": len(state.finished),
                    "done": state.done,
                }
            )
        return {"kind": "lobby", "tables": tables, "tournaments": tournaments}

    async def tournament_ids(self) -> list[str]:
        js = self.nc.jetstream(timeout=2.0)
        try:
            info = await js.stream_info(TOURNAMENT_STREAM, subjects_filter="skat.tournament.*")
        except NotFoundError:
            return []
        ids = []
        for subject in sorted(info.state.subjects or {}):
            tid = subject.rpartition(".")[2]
            with contextlib.suppress(ValueError):
                ids.append(check_token("tournament", tid))
        return ids

    @staticmethod
    async def _has_tournament_stream(js: Any) -> bool:
        try:
            await js.stream_info(TOURNAMENT_STREAM)
        except NotFoundError:
            return False
        return True

    async def tournament(self, tid: str) -> TournamentState:
        """A tournament's log, folded: one direct get per event (a tournament's log is short),
        no consumer created. A store without tournaments (no stream: nobody answers a direct
        get) has an empty log for every id."""
        js = self.nc.jetstream(timeout=2.0)
        subject = f"skat.tournament.{check_token('tournament', tid)}"
        state = TournamentState()
        seq = 1
        while True:
            try:
                msg = await js.get_msg(TOURNAMENT_STREAM, seq=seq, subject=subject, next=True, direct=True)
            except NotFoundError:
                break
            except NoRespondersError:
                if await self._has_tournament_stream(js):
                    raise  # the stream is there, its servers did not answer: not "no tournament"
                break
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError, ValueError):
                state.apply(_TOURNAMENT.decode(msg.data or b""))
            seq = (msg.seq or seq) + 1
        return state


class TournamentFeed:
    """A tournament's standings, recomputed whenever one of its tables scores a deal: from the
    tournament's log (its tables and seats) and the tables' ``deal_scored`` events."""

    def __init__(self, feeds: Feeds, tid: str) -> None:
        self.feeds = feeds
        self.tid = check_token("tournament", tid)
        self.state = TournamentState()
        self.scores: dict[str, dict[int, DealScored]] = {}
        self.closed: set[str] = set()
        self.mailbox = Mailbox()
        self._subs: list[Any] = []

    async def start(self) -> None:
        nc = self.feeds.nc
        self._subs.append(await nc.subscribe(log_kind("deal_scored"), cb=self._on_log))
        self._subs.append(await nc.subscribe(log_kind("table_closed"), cb=self._on_log))
        await self.refresh()

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def refresh(self) -> None:
        """Read the tournament's log and every table's scores again (on start, and every few
        seconds: the live subjects are best effort, the store is the truth)."""
        self.state = await self.feeds.tournament(self.tid)
        for spec in self.state.tables:
            if spec.table in self.closed:
                continue
            for stored in await self.feeds.store.read(spec.table, kind="deal_scored"):
                if isinstance(stored.event, DealScored):
                    self.scores.setdefault(spec.table, {})[stored.event.deal] = stored.event
            if spec.table in self.state.finished or await self.feeds.store.has_event(spec.table, "table_closed"):
                self.closed.add(spec.table)
        self.publish()

    async def _on_log(self, msg: Msg) -> None:
        table = msg.subject.split(".")[2]
        if table not in {t.table for t in self.state.tables}:
            return
        try:
            event = MSGPACK.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if isinstance(event, DealScored):
            self.scores.setdefault(table, {})[event.deal] = event
        elif isinstance(event, TableClosed):
            self.closed.add(table)
        self.publish()

    def message(self) -> dict[str, Any]:
        config = self.state.config
        seats = {t.table: t.players for t in self.state.tables}
        rows: dict[str, dict[str, Any]] = {}
        for table, deals in self.scores.items():
            for scored in deals.values():
                for seat, player in enumerate(seats.get(table, [])):
                    row = rows.setdefault(
                        player, {"player": player, "seeger_fabian": 0, "list": 0, "deals": 0, "won": 0}
                    )
                    row["seeger_fabian"] += scored.result.seeger_fabian[seat]
                    row["list"] += scored.result.scores[seat]
                    row["deals"] += 1
                    row["won"] += int(scored.result.declarer == seat and scored.result.won)
        for row in rows.values():
            row["per_deal"] = round(row["seeger_fabian"] / max(row["deals"], 1), 1)
        standings = sorted(rows.values(), key=lambda r: (-r["per_deal"], r["player"]))
        per_table = config.rules.deals if config is not None else 0
        tables = [
            {
                "table": t.table,
                "players": t.players,
                "deals": len(self.scores.get(t.table, {})),
                "of": per_table,
                "closed": t.table in self.closed,
            }
            for t in self.state.tables
        ]
        return {
            "kind": "tournament",
            "id": self.tid,
            "entrants": config.entrants if config is not None else [],
            "done": self.state.done,
            "deals": sum(len(d) for d in self.scores.values()),
            "of": per_table * len(self.state.tables),
            "standings": standings,
            "tables": tables,
            "at": time.time(),
        }

    def publish(self) -> None:
        self.mailbox.put(_ENCODER.encode(self.message()))
