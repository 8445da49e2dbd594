"""What spectators see, from NATS to the page: the lobby, a table as it is played, a
tournament's standings.

A table is folded here from its log (read with the operator's connection), with the game its
first event names (``protocol.registry``), and the page gets only that game's view for
``SPECTATOR``: the redaction the public feed uses, done by the game's views module and nowhere
else. Folding here, rather than in the page from the public feed, is what lets a spectator see
an ouvert declarer's cards: no public event carries them. A Skat table's message is
``spectator_message``'s, another game's its own module's (``thirty_one``).

Every message a page gets carries ``index``, the number of the table's events it reflects, so
a test can check it against the log position by position.

A tournament's view is its game's: Skat's by Seeger-Fabian points from the tables' scored
deals (``TournamentFeed``); a game ranked by places (Thirty-one) by place points, from the
finished tables' logs with the very functions ``skat tournament``'s results come from
(``PlaceTables``), so the page ends with the standings results.json holds.

A tournament of many entrants (``TournamentConfig.series``) is shown by series: which series is
playing, which are done, which a Swiss tournament has still to draw; each series' tables with
their players and progress; the standings overall and of each series, and the crosstable, all by
the functions results.json's come from (``standings_of``, ``series_standings``, ``crosstable``;
Skat's over the tables' whole logs, ``PointTables``). Under the fair scheme every page shows the
commitment and how many nonces were given; nothing sent to a page ever carries the server seed
(``config.seed``, secret until results.json reveals it) or a table seed: a page gets chosen
fields, never the config or a ``TableSpec`` (whose legacy seed is made from the server seed).

Withheld feeds. The tables of a duplicate series play the same deals at the same time, each at
its own pace, and a tournament that seats remote entrants at them withholds their spectator
feeds from the players (``protocol.tournament.table_feed``). This page is served to anyone on
the machine, a player of that tournament too (whose seat page the same server serves), so it
withholds them as well: such a table is not watched, not replayed and not offered in the lobby
(``Feeds.withheld``), and a tournament's page shows of such a series' tables only that they
play and how many deals they have done, ranking only the tables of series that have ended
(``withheld_tables``), until every table that plays the same deals has closed. A finished
sibling's scores tell a player still at the deal what it holds as surely as a running one's.
A seat's own table is the seat's to see, as always.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import Callable, Collection, Iterable
from typing import Any, Final

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.js.errors import NotFoundError

from protocol import registry
from protocol.events import (
    MSGPACK,
    DealEnded,
    DealScored,
    Event,
    TableClosed,
    TableOpened,
    TableOpenedV2,
)
from protocol.lifecycle import LogError
from protocol.series import crosstable, series_standings
from protocol.skat.table import TableState
from protocol.skat.views import SPECTATOR, view
from protocol.subjects import STREAM as TABLES_STREAM
from protocol.subjects import check_token, event_name, legacy_log_kind, log_kind, table_log
from protocol.thirty_one.events import TAGS as T31_TAGS
from protocol.thirty_one.events import T31DealEnded, T31DealScored
from protocol.tournament import (
    PLACE_POINTS,
    TableOutcome,
    TableSpec,
    TournamentConfig,
    TournamentEvent,
    TournamentState,
    ranked_by_places,
    standings_of,
    table_feed,
    table_outcome,
)
from services import logs
from services.store import EventStore, index_of

from ..tournament import STREAM as TOURNAMENT_STREAM
from ..tournament import game_progress
from .thirty_one import GAME as THIRTY_ONE
from .thirty_one import thirty_one_message

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
        self.ended = False
        """The page's stream ends once what is put so far is sent (``end``)."""

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

    def end(self, data: bytes) -> None:
        """One last message (never skipped), after which the page's stream ends."""
        self.put(data, keep=True)
        self.ended = True

    async def get(self, timeout: float) -> list[bytes]:
        """The newest messages not yet taken (none after ``timeout`` seconds)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), timeout)
        return self.drain()

    def drain(self) -> list[bytes]:
        """The messages not yet taken, now."""
        self.changed.clear()
        out, self.kept, self.data = [*self.kept, *self.data.values()], [], {}
        return out


FINAL_STATES: Final = (DealEnded, T31DealScored)
"""Events after which the table's state is a deal's last (its last trick, its showdown and
lives): a page never skips that state, even when the next deal follows within milliseconds."""


WITHHELD_UNKNOWN: Final = (
    "withheld until every table that plays its deals has closed: its feed is withheld from the players"
)
"""Why a withheld table of no tournament this store holds is refused (``Feeds.withheld``)."""
WITHHELD_NOTICE: Final = _ENCODER.encode(
    {"kind": "withheld", "reason": "withheld: this table plays the same deals as others of its series"}
)
"""The last message a spectator's page gets from a table that opened withheld while it watched."""
SERIES_TABLE: Final = re.compile(r"(?P<tid>[A-Za-z0-9_-]+)-s[0-9]+t[0-9]+")
"""A table of a tournament of many entrants, named as ``protocol.tournament.series_tables`` names
them: ``<tournament>-s<series>t<table>``."""


def withheld_reason(tid: str, spec: TableSpec) -> str:
    """Why a spectator may not see a table of ``spec``'s duplicate group yet."""
    if spec.series:
        return f"withheld until series {spec.series} of tournament {tid} has ended: its tables play the same deals"
    return f"withheld until the tables of group {spec.group} of tournament {tid} have closed: they play the same deals"


def withheld_tables(config: TournamentConfig, state: TournamentState, closed: Iterable[str]) -> set[str]:
    """The tables whose results a tournament's page may not show yet: when its tables' feeds
    are withheld (``table_feed``), every table of a duplicate group (``TableSpec.group``: a
    series) of which a table has still to close (``closed``, or finished in the tournament's
    log). Even a finished table's scores tell a player still at the same deals what they hold;
    once all of the group's tables have closed, nothing is left to tell."""
    if table_feed(config) != "withheld":
        return set()
    done = set(closed) | set(state.finished)
    running = {spec.group for spec in state.tables if spec.table not in done}
    return {spec.table for spec in state.tables if spec.group in running}


def _visible(state: TournamentState, hidden: set[str]) -> TournamentState:
    """``state`` as the page may show it: without the finished tables that are ``hidden``."""
    out = TournamentState()
    out.config, out.tables, out.done = state.config, state.tables, state.done
    out.finished = {t: f for t, f in state.finished.items() if t not in hidden}
    return out


def _opening(stored: list[Any]) -> TableOpened | TableOpenedV2 | None:
    first = stored[0].event if stored else None
    return first if isinstance(first, TableOpened | TableOpenedV2) else None


def spectator_message(state: TableState) -> bytes:
    """What a spectator's page gets at a Skat table: the spectator's view, the score sheet,
    the position."""
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
        "game": "skat",
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
        self.state: Any = TableState()
        """The table's state, of the game its first event names (Skat's until it is read)."""
        self.ended: dict[int, T31DealEnded] = {}
        """A Thirty-one table's ended deals (the hands shown): the sheet shows them."""
        self.last_seq = 0
        self.watchers: set[Mailbox] = set()
        self.gated: set[Mailbox] = set()
        """Spectators' pages that were let in while the table was not known to be withheld:
        should it open withheld, they get ``WITHHELD_NOTICE`` instead, and no more."""
        self.broken = ""
        self.listeners: list[Callable[[Any], None]] = []
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

    @property
    def withheld(self) -> bool:
        """Whether the table was opened with its spectator feed withheld from the players."""
        return getattr(self.state, "feed", "public") == "withheld"

    def watch(self, mailbox: Mailbox, gated: bool = False) -> None:
        """Send ``mailbox`` the table's messages from now on. ``gated``: a spectator's, let in
        while the table was not known to be withheld; it is cut off as soon as it is."""
        if gated and self.withheld:
            mailbox.end(WITHHELD_NOTICE)
            return
        if self._message:
            mailbox.put(self._message, "table")
        self.watchers.add(mailbox)
        if gated:
            self.gated.add(mailbox)

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
            self._publish(keep=isinstance(event, FINAL_STATES))

    async def _catch_up(self) -> None:
        async with self._lock:
            await self._read_unlocked()

    async def _read_unlocked(self) -> None:
        for stored in await self.store.read(self.table, after_seq=self.last_seq):
            self.last_seq = stored.seq
            if stored.event is not None and stored.index == self.state.events:
                self._apply(stored.event)
                if isinstance(stored.event, FINAL_STATES):
                    self._publish(keep=True)  # a deal's last trick, even if the next deal is here too
        self._publish()

    def _apply(self, event: Any) -> None:
        if self.broken:
            return
        try:
            if not self.state.events:  # the first event names the game
                self.state = registry.new_state(event)
            self.state.apply(event)
            if isinstance(event, T31DealEnded):
                self.ended[event.deal] = event
        except (LogError, ValueError, KeyError) as exc:  # a log that does not fold: show up to there
            self.broken = str(exc)[:200]
            logs.get(table=self.table).warning("web_log_does_not_fold", error=self.broken)
        for listener in self.listeners:
            listener(self.state)

    def message(self) -> bytes:
        """The spectator's message for the table as it stands, by its game."""
        if registry.state_game(self.state).name == THIRTY_ONE:
            return thirty_one_message(self.state, self.ended)
        return spectator_message(self.state)

    def _publish(self, keep: bool = False) -> None:
        self._message = self.message()
        if self.gated and self.withheld:  # opened withheld under a spectator's eyes: not one event
            for mailbox in self.gated:
                mailbox.end(WITHHELD_NOTICE)
            self.watchers -= self.gated
            self.gated.clear()
        for mailbox in self.watchers:
            mailbox.put(self._message, "table", keep=keep)


def game_title(game: str) -> str:
    """A game's name for people (``Thirty-one``); a game this version does not know is named
    as its log names it."""
    try:
        return registry.get(game).title
    except ValueError:
        return game


class Feeds:
    """The tables being watched, each folded once however many pages watch it, and dropped
    a while after its last page left."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.store = EventStore(nc)
        self.tables: dict[str, TableFeed] = {}
        self._users: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._readers: dict[str, TournamentReader] = {}
        """The tournaments in the store, each log read on from where the last read ended."""
        self._tables_stored = False
        """Whether the store's stream of table logs has been seen (it is never taken away)."""

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
                feed.gated.discard(mailbox)
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
        """The open tables (with their game, players and deals scored so far, of how many at
        Skat) and the tournaments in the store. An open table whose feed is withheld is listed
        with the reason (``withheld``) instead of being offered to watch (and without its
        count): it is running, so its group has not ended."""
        states = {tid: await self.tournament(tid) for tid in await self.tournament_ids()}
        specs = {
            spec.table: (tid, spec, state.config)
            for tid, state in states.items()
            if state.config is not None
            for spec in state.tables
        }
        tables = []
        open_now = (await self.store.open_tables())[:500]
        scored = await self._deals_scored() if states or open_now else {}
        for table in open_now:
            first = _opening(await self.store.read(table, limit=1))
            players = list(first.players) if first is not None else []
            game = first.game if isinstance(first, TableOpenedV2) else "skat"
            entry: dict[str, Any] = {"table": table, "game": game, "title": game_title(game), "players": players}
            entry["deals"] = scored.get(table, 0)  # how far it is: the deals scored (of how many, at Skat)
            rules = getattr(first, "rules", None)
            if game == "skat" and rules is not None and hasattr(rules, "deals"):
                entry["of"] = rules.deals
            tid, spec, config = specs.get(table, ("", None, None))
            if spec is not None and config is not None and table_feed(config) == "withheld":
                entry["withheld"] = withheld_reason(tid, spec)
            elif first is not None and first.feed == "withheld":
                entry["withheld"] = withheld_reason(tid, spec) if spec is not None else WITHHELD_UNKNOWN
            if "withheld" in entry:
                entry.pop("deals")
                entry.pop("of", None)
            tables.append(entry)
        tournaments = []
        for tid, state in states.items():
            if state.config is None:
                continue
            config = state.config
            deals = sum(scored.get(t.table, 0) for t in state.tables)
            of = sum(config.table_rules(len(t.players)).deals for t in state.tables) if config.game == "skat" else 0
            tournaments.append(
                {
                    "id": tid,
                    "game": state.config.game,
                    "title": game_title(state.config.game),
                    "entrants": state.config.entrants,
                    "series": state.config.series,
                    "tables": len(state.tables),
                    "finished": len(state.finished),
                    "done": state.done,
                    "deals": deals,
                    "of": of,
                }
            )
        return {"kind": "lobby", "tables": tables, "tournaments": tournaments}

    async def _deals_scored(self) -> dict[str, int]:
        """Per table, how many deals its log has scored (of any game), from the stream's
        subject index: one request per kind however many tables, so the lobby counts a
        running tournament's progress live without reading a single log."""
        if not await self._has_tables():
            return {}
        counts: dict[str, int] = {}
        js = self.nc.jetstream(timeout=2.0)
        for kind in ("deal_scored", "t31_deal_scored"):
            for pattern in (log_kind(kind), legacy_log_kind(kind)):
                try:
                    info = await js.stream_info(TABLES_STREAM, subjects_filter=pattern)
                except NotFoundError:
                    return {}
                for subject, n in (info.state.subjects or {}).items():
                    table = subject.split(".")[2]
                    counts[table] = counts.get(table, 0) + int(n)
        return counts

    async def _has_tables(self) -> bool:
        """Whether the store holds a stream of table logs (a read of a store without one would
        wait out the store's patience for a stream that is not there)."""
        if not self._tables_stored:
            try:
                await self.nc.jetstream(timeout=2.0).stream_info(TABLES_STREAM)
            except NotFoundError:
                return False
            self._tables_stored = True
        return True

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

    async def tournament(self, tid: str) -> TournamentState:
        """A tournament's log, folded (``TournamentReader``; a tournament in the store is read
        on from where the last read of it ended). Its state is shared: do not change it."""
        reader = self._readers.get(tid) or TournamentReader(self.nc, tid)
        state = await reader.read()
        if state.config is not None:  # only tournaments that exist: an id in a path costs nothing kept
            self._readers[tid] = reader
        return state

    async def withheld(self, table: str) -> str:
        """Why a spectator may not watch or replay ``table`` yet; empty when it may.

        A table's feed is withheld when its ``table_opened`` says so, or when it is a table of a
        tournament whose tables' feeds are (``table_feed``: known before the table opens). It is
        refused until every table of its duplicate group (``TableSpec.group``, the series) has
        closed. A withheld table of no tournament in this store (whose siblings cannot be told)
        is refused while it is open, while the tournament its name gives has not finished, and
        while any open table plays from its seed (which is what makes deals the same)."""
        check_token("table", table)
        if not await self._has_tables():
            return ""  # no table was ever stored here: none is withheld (nor is there any to see)
        first = _opening(await self.store.read(table, limit=1))
        named = SERIES_TABLE.fullmatch(table)
        tid = named.group("tid") if named else ""
        state = await self.tournament(tid) if tid else TournamentState()
        spec = next((s for s in state.tables if s.table == table), None)
        if spec is not None and state.config is not None:
            if table_feed(state.config) != "withheld" and (first is None or first.feed != "withheld"):
                return ""
            for sibling in state.tables:
                if sibling.group != spec.group or sibling.table in state.finished:
                    continue
                if not await self.store.has_event(sibling.table, "table_closed"):
                    return withheld_reason(tid, spec)
            return ""
        if first is None or first.feed != "withheld":
            return ""
        if not await self.store.has_event(table, "table_closed"):
            return WITHHELD_UNKNOWN
        if state.config is not None and not state.done:
            return WITHHELD_UNKNOWN
        for other in await self.store.open_tables():
            opening = _opening(await self.store.read(other, limit=1))
            if opening is not None and opening.seed == first.seed:
                return WITHHELD_UNKNOWN
        return ""


async def _has_tournament_stream(js: Any) -> bool:
    try:
        await js.stream_info(TOURNAMENT_STREAM)
    except NotFoundError:
        return False
    return True


class TournamentReader:
    """A tournament's log, folded as it grows: one direct get per event (no consumer created),
    each ``read`` going on after the last event it read, so that following a tournament of
    many tables costs one request per new event rather than one per event of the whole log. A
    store without tournaments (no stream: nobody answers a direct get) has an empty log for
    every id."""

    def __init__(self, nc: Client, tid: str) -> None:
        self.nc = nc
        self.subject = f"skat.tournament.{check_token('tournament', tid)}"
        self.state = TournamentState()
        self.next_seq = 1
        self._lock = asyncio.Lock()

    async def read(self) -> TournamentState:
        """The state with every event stored so far."""
        async with self._lock:
            js = self.nc.jetstream(timeout=2.0)
            while True:
                try:
                    msg = await js.get_msg(
                        TOURNAMENT_STREAM, seq=self.next_seq, subject=self.subject, next=True, direct=True
                    )
                except NotFoundError:
                    break
                except NoRespondersError:
                    if await _has_tournament_stream(js):
                        raise  # the stream is there, its servers did not answer: not "no tournament"
                    break
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError, ValueError):
                    self.state.apply(_TOURNAMENT.decode(msg.data or b""))
                self.next_seq = (msg.seq or self.next_seq) + 1
            return self.state


class TournamentFeed:
    """A tournament as its page shows it, recomputed whenever one of its tables scores a deal,
    opens or closes, and whenever the tournament's own log grows (a series drawn, a table
    finished, the end): from the tournament's log (its tables and seats) and the tables' logs.

    Three views, by what the log says once ``start`` has read it: a one-seat-set Skat
    tournament by the tables' ``deal_scored`` events; a game ranked by places (Thirty-one) by
    ``PlaceTables``; a Skat tournament of many entrants by ``PointTables``. A tournament of many
    entrants adds its series (``series_view``) and the crosstable, and every fair tournament
    its commitment and nonces (``fairness_view``)."""

    def __init__(self, feeds: Feeds, tid: str) -> None:
        self.feeds = feeds
        self.tid = check_token("tournament", tid)
        self.reader = TournamentReader(feeds.nc, self.tid)
        self.state = self.reader.state
        self.scores: dict[str, dict[int, DealScored]] = {}
        self.closed: set[str] = set()
        self.places: PlaceTables | None = None
        """A tournament of a game ranked by places: its tables as that view needs them."""
        self.points: PointTables | None = None
        """A Skat tournament of many entrants: its tables' logs."""
        self.opened: set[str] = set()
        """Tables known to have opened (a series with one is playing)."""
        self.mailbox = Mailbox()
        self._subs: list[Any] = []

    @property
    def many(self) -> bool:
        return self.state.config is not None and self.state.config.many

    async def start(self) -> None:
        """Read the tournament's log (its game says which events to follow), subscribe to those
        events of every table and to the tournament's log, then read its tables: an event stored
        in between arrives on a subscription, none is lost."""
        nc = self.feeds.nc
        await self.reader.read()
        config = self.state.config
        scored = "deal_scored"
        if config is not None and ranked_by_places(config.game):
            self.places = PlaceTables(config, self.feeds.store)
            scored = PLACES_SCORED
        elif config is not None and config.many:
            self.points = PointTables(config, self.feeds.store)
        kinds = [scored, "table_closed", *(["table_opened"] if self.many else [])]
        for kind in kinds:
            self._subs.append(await nc.subscribe(log_kind(kind), cb=self._on_log))
        self._subs.append(await nc.subscribe(self.reader.subject, cb=self._on_tournament))
        await self._read_tables()
        self.publish()

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def refresh(self) -> None:
        """Read the tournament's log and every table again (on start, and every few seconds:
        the live subjects are best effort, the store is the truth)."""
        await self.reader.read()
        await self._read_tables()
        self.publish()

    async def _on_tournament(self, msg: Msg) -> None:
        """The tournament's log grew (a nonce, a series drawn, a table finished, the end)."""
        with contextlib.suppress(Exception):  # the store briefly away: the next refresh reads it
            await self.refresh()

    async def _read_tables(self) -> None:
        if self.places is not None:
            await self.places.read(self.state)
            if self.many:
                await self._read_opened()
            return
        if self.points is not None:
            await self.points.read(self.state)
            self.opened |= set(self.points.logs)
            return
        for spec in self.state.tables:
            if spec.table in self.closed:
                continue
            for stored in await self.feeds.store.read(spec.table, kind="deal_scored"):
                if isinstance(stored.event, DealScored):
                    self.scores.setdefault(spec.table, {})[stored.event.deal] = stored.event
            if spec.table in self.state.finished or await self.feeds.store.has_event(spec.table, "table_closed"):
                self.closed.add(spec.table)

    async def _read_opened(self) -> None:
        """Which tables of the drawn series have opened, for those not known to (one direct get
        each), up to the first series that has not: the series are played one after another."""
        config = self.state.config
        for series in range(1, (config.series if config is not None else 0) + 1):
            specs = self.state.series_of(series)
            for spec in specs:
                if spec.table not in self.opened and await self.feeds.store.has_event(spec.table, "table_opened"):
                    self.opened.add(spec.table)
            if not any(spec.table in self.opened for spec in specs):
                return

    async def _on_log(self, msg: Msg) -> None:
        table = msg.subject.split(".")[2]
        if table not in {t.table for t in self.state.tables}:
            if not table.startswith(f"{self.tid}-"):
                return
            with contextlib.suppress(Exception):
                await self.reader.read()  # perhaps a table of a series drawn since the last read
            if table not in {t.table for t in self.state.tables}:
                return
        try:
            event = MSGPACK.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if isinstance(event, TableOpened | TableOpenedV2):
            self.opened.add(table)
        if self.points is not None:
            await self.points.read(self.state, [table])
            self.opened |= set(self.points.logs)
            self.publish()
            return
        if self.places is not None:
            if await self.places.seen(table, event, self.state) or isinstance(event, TableOpened | TableOpenedV2):
                self.publish()
            return
        if isinstance(event, DealScored):
            self.scores.setdefault(table, {})[event.deal] = event
        elif isinstance(event, TableClosed):
            self.closed.add(table)
        self.publish()

    def message(self) -> dict[str, Any]:
        """The page's message, by its view, with the fair scheme's public part."""
        if self.many:
            message = self._many_message()
        elif self.places is not None:
            message = self.places.message(self.tid, self.state)
        else:
            message = self._skat_message()
        message["fairness"] = fairness_view(self.state)
        return message

    def _skat_message(self) -> dict[str, Any]:
        """A one-seat-set Skat tournament: its standings by Seeger-Fabian points per deal."""
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

    def _many_message(self) -> dict[str, Any]:
        """A tournament of many entrants: its game's view (standings overall, every table), the
        tables grouped by series with each series' state and standings, and the crosstable of
        the finished tables (results.json's once every table has finished)."""
        config = self.state.config
        assert config is not None
        if self.places is not None:
            hidden = withheld_tables(config, self.state, self.places.closed)
            message = self.places.message(self.tid, self.state, hidden)
            by_series = self.places.series
        else:
            assert self.points is not None
            hidden = withheld_tables(config, self.state, self.points.closed)
            message = self.points.message(self.tid, self.state)
            by_series = self.points.series
        rows = {t["table"]: t for t in message.pop("tables")}
        message.update(
            many=True,
            pairing=config.pairing,
            series_count=config.series,
            series=series_view(config, self.state, rows, by_series, self.opened, hidden),
            crosstable=crosstable(config, _visible(self.state, hidden)),
        )
        return message

    def publish(self) -> None:
        self.mailbox.put(_ENCODER.encode(self.message()))


def fairness_view(state: TournamentState) -> dict[str, Any] | None:
    """What a page shows of the fair scheme (None for a tournament of the legacy one): the
    commitment, published before the first deal, and the nonces as far as they are given (how
    many, of how many remote entrants, and the digest once closed). Never the server seed: it
    stays secret until the tournament ends, and a page has no need of it even then."""
    config = state.config
    if config is None or not config.fair:
        return None
    return {
        "scheme": config.fair,
        "commitment": config.commitment,
        "nonces": len(state.nonces),
        "remote": sum(e not in config.bots for e in config.entrants),
        "closed": state.digest is not None,
        "digest": state.digest or "",
    }


SERIES_STATES: Final = ("to be drawn", "waiting", "playing", "done")
"""A series' state on the page, in the order a series goes through them: not drawn yet (a later
series of a Swiss tournament, drawn by the standings once the one before has finished), drawn
but no table open yet, a table of it open, every table of it finished."""


def series_view(
    config: TournamentConfig,
    state: TournamentState,
    rows: dict[str, dict[str, Any]],
    standings: dict[int, list[Any]],
    opened: set[str],
    hidden: Collection[str] = (),
) -> list[dict[str, Any]]:
    """Each series of a tournament of many entrants: its number, state (``SERIES_STATES``), why
    it was drawn when it was (``SeriesDrawn.reason``), its tables (``rows``, the game's view of
    each table) and its standings (``standings``, by series number); ``withheld`` when tables
    of it are ``hidden`` (``withheld_tables``: the rows say only how far they are)."""
    out = []
    for number in range(1, config.series + 1):
        specs: list[TableSpec] = state.series_of(number)
        tables = [
            {
                **rows.get(s.table, {"table": s.table, "players": s.players}),
                "series": number,
                "opened": s.table in opened,
                **({"withheld": True} if s.table in hidden else {}),
            }
            for s in specs
        ]
        if not specs:
            status = SERIES_STATES[0]
        elif all(s.table in state.finished or rows.get(s.table, {}).get("closed") for s in specs):
            status = SERIES_STATES[3]
        elif any(s.table in opened for s in specs):
            status = SERIES_STATES[2]
        else:
            status = SERIES_STATES[1]
        out.append(
            {
                "series": number,
                "status": status,
                "reason": state.redrawn.get(number, ""),
                "tables": tables,
                "standings": standings.get(number, []),
                "withheld": any(s.table in hidden for s in specs),
            }
        )
    return out


def _ranked(
    config: TournamentConfig, specs: list[TableSpec], logs: dict[str, list[Event]]
) -> tuple[list[Any], dict[int, list[Any]]]:
    """The standings over ``logs`` (tables in the tournament's order ``specs``, as results.json's
    are made) and each series' (``series_standings``), as JSON builtins: off the event loop."""
    state = TournamentState()
    state.config, state.tables = config, specs
    overall = msgspec.to_builtins(standings_of(config.game, [logs[s.table] for s in specs if s.table in logs]))
    per_series = {s["series"]: s["standings"] for s in series_standings(config, state, logs)} if config.many else {}
    return overall, per_series


class PointTables:
    """A Skat tournament of many entrants as its live page shows it.

    Every table's whole log is read from the store as it grows (each read only the events
    stored since the one before; a closed table's never again), and the standings, overall and
    of each series, are ``standings_of`` and ``series_standings`` over those logs: the functions
    results.json's come from, over the same logs, so once every table is closed the page shows
    what ``skat tournament`` prints and writes, time-outs and forfeits included (which is why the
    whole logs are read, not only the scored deals).

    Ranking a big tournament's logs takes a while, and its tables score many deals a second:
    it is done off the event loop, one ranking at a time, and the reads that came while one ran
    share the next one rather than each starting its own. A message shows one ranking's
    snapshot, its tables' deals included, so the tables and the standings always agree.

    A ranking leaves out the tables whose results are withheld (``withheld_tables``, by the
    tables closed when it was made), and ranks again once they are not."""

    def __init__(self, config: TournamentConfig, store: EventStore) -> None:
        self.config = config
        self.store = store
        self.logs: dict[str, list[Event]] = {}
        """Tables' logs so far (only tables with an event)."""
        self.seqs: dict[str, int] = {}
        self.scored: dict[str, int] = {}
        """Deals scored per table in ``logs``."""
        self.closed: set[str] = set()
        """Tables whose log in ``logs`` is closed."""
        self.ranked = _Ranking()
        """The last ranking: what messages show."""
        self._read_lock = asyncio.Lock()
        self._rank_lock = asyncio.Lock()
        self._dirty = False

    async def read(self, state: TournamentState, tables: Iterable[str] | None = None) -> bool:
        """Read the events stored since the last read of ``tables`` (every table of the
        tournament by default), and rank again if there were any (or a ranking is due); whether
        there were."""
        names = [t.table for t in state.tables] if tables is None else list(tables)
        changed = False
        async with self._read_lock:
            for table in names:
                if table in self.closed:
                    continue
                for stored in await self.store.read(table, after_seq=self.seqs.get(table, 0)):
                    self.seqs[table] = stored.seq
                    if not isinstance(stored.event, Event):
                        continue  # as the runner reads a log for the results (``_table_log``)
                    self.logs.setdefault(table, []).append(stored.event)
                    changed = True
                    if isinstance(stored.event, DealScored):
                        self.scored[table] = self.scored.get(table, 0) + 1
                    elif isinstance(stored.event, TableClosed):
                        self.closed.add(table)
            self._dirty = self._dirty or changed
        await self._rank(state)
        return changed

    async def _rank(self, state: TournamentState) -> None:
        async with self._rank_lock:
            scored, closed = dict(self.scored), set(self.closed)
            hidden = withheld_tables(self.config, state, closed)
            if not self._dirty and hidden == self.ranked.hidden:
                return  # ranked meanwhile, with what this read found
            self._dirty = False
            specs = list(state.tables)
            logs = {s.table: list(self.logs[s.table]) for s in specs if s.table in self.logs}
            shown = {t: log for t, log in logs.items() if t not in hidden}
            standings, series = await asyncio.to_thread(_ranked, self.config, specs, shown)
            self.ranked = _Ranking(standings, series, scored, closed, set(logs), hidden)

    @property
    def series(self) -> dict[int, list[Any]]:
        """Each series' standings, by series number (the last ranking's)."""
        return self.ranked.series

    def message(self, tid: str, state: TournamentState) -> dict[str, Any]:
        """The page's message: deals scored of the drawn tables' deals, the standings as
        results.json gives them, and per table its deals scored and whether it is open or closed
        (nothing else of any table: the standings leave out the withheld ones)."""
        ranked = self.ranked
        tables = []
        for spec in state.tables:
            tables.append(
                {
                    "table": spec.table,
                    "players": spec.players,
                    "deals": ranked.scored.get(spec.table, 0),
                    "of": self.config.table_rules(len(spec.players)).deals,
                    "opened": spec.table in ranked.opened,
                    "closed": spec.table in ranked.closed,
                }
            )
        return {
            "kind": "tournament",
            "id": tid,
            "game": self.config.game,
            "title": game_title(self.config.game),
            "ranking": "points",
            "entrants": self.config.entrants,
            "done": state.done,
            "deals": sum(t["deals"] for t in tables),
            "of": sum(t["of"] for t in tables),
            "standings": ranked.standings,
            "tables": tables,
            "at": time.time(),
        }


@dataclasses.dataclass(frozen=True)
class _Ranking:
    """One ranking of ``PointTables``: the standings (JSON builtins), each series', and the
    tables as the logs ranked stood (deals scored, closed, opened)."""

    standings: list[Any] = dataclasses.field(default_factory=list)
    series: dict[int, list[Any]] = dataclasses.field(default_factory=dict)
    scored: dict[str, int] = dataclasses.field(default_factory=dict)
    closed: set[str] = dataclasses.field(default_factory=set)
    opened: set[str] = dataclasses.field(default_factory=set)
    hidden: set[str] = dataclasses.field(default_factory=set)
    """The tables left out of these standings (``withheld_tables``)."""


PLACES_SCORED: Final = event_name(T31_TAGS[T31DealScored])
"""The scored deal of a game ranked by places (Thirty-one's, the one such game there is): the
live subject the progress of its running tables follows."""


class PlaceTables:
    """A tournament of a game ranked by places (Thirty-one) as its live page shows it.

    The standings are ``standings_of`` over the finished tables' logs, read whole from the store
    once a table is closed (a closed log never changes, so each is read once): the function
    results.json's standings come from, over the same logs, so once every table is closed the
    page shows what ``skat tournament`` prints and writes, and nothing here computes a standing
    a second way. A finished table's places are ``table_outcome``'s (what its
    ``table_finished`` records). A running table's progress is measured as the runner's
    progress line measures it (``game_progress``): by the lives lost in its scored deals, or
    its deals against ``max_deals``. Folding is done off the event loop (a long game's log is
    thousands of events).

    Of a table whose results are withheld (``withheld_tables``) it shows only its deals and
    whether it has closed: no lives, no places, no coins, progress by its deals alone, and the
    standings leave it out until they are not withheld."""

    def __init__(self, config: TournamentConfig, store: EventStore) -> None:
        self.config = config
        self.store = store
        self.title = game_title(config.game)
        try:
            rules: Any = config.table_rules()
        except ValueError:  # a game this version does not know: no progress by lives
            rules = None
        self.lives = int(getattr(rules, "coins", 1)) + int(bool(getattr(rules, "county", False)))
        """Lives a seat has to lose to be out: its coins, and one more on the county (T25)."""
        self.max_deals = int(getattr(rules, "max_deals", 1))
        self.scored: dict[str, dict[int, T31DealScored]] = {}
        """Running tables' scored deals by deal number (the feed may repeat one)."""
        self.logs: dict[str, list[Event]] = {}
        """Finished tables' whole logs."""
        self.outcomes: dict[str, TableOutcome] = {}
        self.broken: dict[str, str] = {}
        """Closed tables whose log does not fold: why (they are left out of the standings)."""
        self.standings: list[Any] = []
        """As JSON builtins (``_ranked``)."""
        self.series: dict[int, list[Any]] = {}
        """A tournament of many entrants: each series' standings over its finished tables."""
        self.ranked: set[str] = set()
        """The tables ``standings`` and ``series`` are made from."""
        self._lock = asyncio.Lock()

    @property
    def closed(self) -> set[str]:
        """The tables known to have closed."""
        return set(self.logs) | set(self.broken)

    async def read(self, state: TournamentState) -> None:
        """Every running table's scored deals from the store, and the logs of those that closed."""
        for spec in state.tables:
            if spec.table in self.logs or spec.table in self.broken:
                continue
            for stored in await self.store.read(spec.table, kind=PLACES_SCORED):
                if isinstance(stored.event, T31DealScored):
                    self.scored.setdefault(spec.table, {})[stored.event.deal] = stored.event
            if spec.table in state.finished or await self.store.has_event(spec.table, "table_closed"):
                await self.finished(spec.table, state)
        async with self._lock:
            await self._rank(state)  # a series drawn, or finished in the log: withheld or not

    async def seen(self, table: str, event: Any, state: TournamentState) -> bool:
        """An event from a table's live subject; whether it changed anything."""
        if isinstance(event, T31DealScored):
            self.scored.setdefault(table, {})[event.deal] = event
            return True
        if isinstance(event, TableClosed):
            return await self.finished(table, state)
        return False

    async def finished(self, table: str, state: TournamentState) -> bool:
        """Read a closed table's whole log, its outcome, and the standings again; whether it
        was new (a log not closed yet in the store is left for the next read)."""
        async with self._lock:
            if table in self.logs or table in self.broken:
                return False
            log = [s.event for s in await self.store.read(table) if isinstance(s.event, Event)]
            if not any(isinstance(e, TableClosed) for e in log):
                return False
            try:
                outcome = await asyncio.to_thread(table_outcome, log)
            except (LogError, ValueError, KeyError) as exc:
                self.broken[table] = str(exc)[:200]
                logs.get(table=table).warning("web_log_does_not_fold", error=self.broken[table])
                outcome = None
            if outcome is not None:
                self.logs[table], self.outcomes[table] = log, outcome
            elif table not in self.broken:
                self.broken[table] = "the log opens no table"
            await self._rank(state)
            return True

    async def _rank(self, state: TournamentState) -> None:
        """The standings over the finished tables not withheld, if those are not the ones they
        are made from (under the lock)."""
        hidden = withheld_tables(self.config, state, self.closed)
        shown = {t: log for t, log in self.logs.items() if t not in hidden}
        if set(shown) == self.ranked:
            return
        self.standings, self.series = await asyncio.to_thread(_ranked, self.config, list(state.tables), shown)
        self.ranked = set(shown)

    def progress(self, table: str, players: int) -> tuple[float, list[int], int]:
        """A table's progress (0 to 1, ``game_progress``), lives lost per seat, deals played."""
        outcome = self.outcomes.get(table)
        if outcome is not None:
            return 1.0, [], outcome.deals
        deals = self.scored.get(table, {})
        lost = [0] * players
        for event in deals.values():
            lost = [a + b for a, b in zip(lost, event.lives, strict=False)]
        played = max(deals, default=0)
        closed = table in self.broken
        return game_progress(lost, self.lives, played, self.max_deals, closed), lost, played

    def message(self, tid: str, state: TournamentState, hidden: Collection[str] = ()) -> dict[str, Any]:
        """The page's message: tables done (each running one by how far its game has come, as
        the runner's progress line counts them), deals played, the standings as results.json
        gives them, and per table its progress, or once finished its places, coins and deals;
        of a ``hidden`` table (``withheld_tables``) only its deals and whether it has closed."""
        tables = []
        done = 0.0
        for spec in state.tables:
            progress, lost, deals = self.progress(spec.table, len(spec.players))
            outcome = self.outcomes.get(spec.table)
            closed = outcome is not None or spec.table in self.broken
            if spec.table in hidden:  # by its deals alone: lost lives tell how the deals went
                progress = game_progress([0] * len(spec.players), self.lives, deals, self.max_deals, closed)
                lost, outcome = [], None
            done += progress
            tables.append(
                {
                    "table": spec.table,
                    "players": spec.players,
                    "deals": deals,
                    "progress": progress,
                    "lost": lost,
                    "closed": closed,
                    "places": outcome.places if outcome is not None else None,
                    "coins": outcome.coins if outcome is not None else None,
                    "broken": "" if spec.table in hidden else self.broken.get(spec.table, ""),
                }
            )
        return {
            "kind": "tournament",
            "id": tid,
            "game": self.config.game,
            "title": self.title,
            "ranking": "places",
            "entrants": self.config.entrants,
            "done": state.done,
            "progress": done,
            "of": len(state.tables),
            "finished": len(self.outcomes),
            "deals": sum(t["deals"] for t in tables),
            "scoring": PLACE_POINTS,
            "standings": self.standings,
            "tables": tables,
            "at": time.time(),
        }
