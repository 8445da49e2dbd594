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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
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
from protocol.skat.table import TableState
from protocol.skat.views import SPECTATOR, view
from protocol.subjects import check_token, event_name, log_kind, table_log
from protocol.thirty_one.events import TAGS as T31_TAGS
from protocol.thirty_one.events import T31DealEnded, T31DealScored
from protocol.tournament import (
    PLACE_POINTS,
    TableOutcome,
    TournamentConfig,
    TournamentEvent,
    TournamentState,
    ranked_by_places,
    standings_of,
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


FINAL_STATES: Final = (DealEnded, T31DealScored)
"""Events after which the table's state is a deal's last (its last trick, its showdown and
lives): a page never skips that state, even when the next deal follows within milliseconds."""


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
        """The open tables (with their game and players) and the tournaments in the store."""
        tables = []
        for table in (await self.store.open_tables())[:500]:
            opened = await self.store.read(table, limit=1)
            first = opened[0].event if opened else None
            players = list(first.players) if isinstance(first, TableOpened | TableOpenedV2) else []
            game = first.game if isinstance(first, TableOpenedV2) else "skat"
            tables.append({"table": table, "game": game, "title": game_title(game), "players": players})
        tournaments = []
        for tid in await self.tournament_ids():
            state = await self.tournament(tid)
            if state.config is None:
                continue
            tournaments.append(
                {
                    "id": tid,
                    "game": state.config.game,
                    "title": game_title(state.config.game),
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
    tournament's log (its tables and seats) and the tables' ``deal_scored`` events. A game
    ranked by places (Thirty-one) is shown by ``PlaceTables`` instead: its game is known once
    the tournament's log is read, which is why ``start`` reads it before subscribing."""

    def __init__(self, feeds: Feeds, tid: str) -> None:
        self.feeds = feeds
        self.tid = check_token("tournament", tid)
        self.state = TournamentState()
        self.scores: dict[str, dict[int, DealScored]] = {}
        self.closed: set[str] = set()
        self.places: PlaceTables | None = None
        """A tournament of a game ranked by places: its tables as that view needs them."""
        self.mailbox = Mailbox()
        self._subs: list[Any] = []

    async def start(self) -> None:
        """Read the tournament's log (its game says which events to follow), subscribe to those
        events of every table, then read its tables: an event stored in between arrives on the
        subscription, none is lost."""
        nc = self.feeds.nc
        self.state = await self.feeds.tournament(self.tid)
        config = self.state.config
        scored = "deal_scored"
        if config is not None and ranked_by_places(config.game):
            self.places = PlaceTables(config, self.feeds.store)
            scored = PLACES_SCORED
        self._subs.append(await nc.subscribe(log_kind(scored), cb=self._on_log))
        self._subs.append(await nc.subscribe(log_kind("table_closed"), cb=self._on_log))
        await self._read_tables()
        self.publish()

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def refresh(self) -> None:
        """Read the tournament's log and every table's scores again (on start, and every few
        seconds: the live subjects are best effort, the store is the truth)."""
        self.state = await self.feeds.tournament(self.tid)
        await self._read_tables()
        self.publish()

    async def _read_tables(self) -> None:
        if self.places is not None:
            await self.places.read(self.state)
            return
        for spec in self.state.tables:
            if spec.table in self.closed:
                continue
            for stored in await self.feeds.store.read(spec.table, kind="deal_scored"):
                if isinstance(stored.event, DealScored):
                    self.scores.setdefault(spec.table, {})[stored.event.deal] = stored.event
            if spec.table in self.state.finished or await self.feeds.store.has_event(spec.table, "table_closed"):
                self.closed.add(spec.table)

    async def _on_log(self, msg: Msg) -> None:
        table = msg.subject.split(".")[2]
        if table not in {t.table for t in self.state.tables}:
            return
        try:
            event = MSGPACK.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if self.places is not None:
            if await self.places.seen(table, event, self.state):
                self.publish()
            return
        if isinstance(event, DealScored):
            self.scores.setdefault(table, {})[event.deal] = event
        elif isinstance(event, TableClosed):
            self.closed.add(table)
        self.publish()

    def message(self) -> dict[str, Any]:
        """The page's message: Skat's standings by Seeger-Fabian points per deal, or, for a
        game ranked by places, ``PlaceTables.message``'s."""
        if self.places is not None:
            return self.places.message(self.tid, self.state)
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
    thousands of events)."""

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
        self._lock = asyncio.Lock()

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
                return True
            if outcome is None:
                self.broken[table] = "the log opens no table"
                return True
            self.logs[table], self.outcomes[table] = log, outcome
            in_order = [self.logs[t.table] for t in state.tables if t.table in self.logs]
            self.standings = list(await asyncio.to_thread(standings_of, self.config.game, in_order))
            return True

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

    def message(self, tid: str, state: TournamentState) -> dict[str, Any]:
        """The page's message: tables done (each running one by how far its game has come, as
        the runner's progress line counts them), deals played, the standings as results.json
        gives them, and per table its progress, or once finished its places, coins and deals."""
        tables = []
        done = 0.0
        for spec in state.tables:
            progress, lost, deals = self.progress(spec.table, len(spec.players))
            done += progress
            outcome = self.outcomes.get(spec.table)
            tables.append(
                {
                    "table": spec.table,
                    "players": spec.players,
                    "deals": deals,
                    "progress": progress,
                    "lost": lost,
                    "closed": outcome is not None or spec.table in self.broken,
                    "places": outcome.places if outcome is not None else None,
                    "coins": outcome.coins if outcome is not None else None,
                    "broken": self.broken.get(spec.table, ""),
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
            "standings": msgspec.to_builtins(self.standings),
            "tables": tables,
            "at": time.time(),
        }
