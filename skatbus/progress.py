"""The live standings of a running tournament, folded from the tables' logs.

Why. The progress line of ``skat tournament`` used to count what its process happened to
watch on the public feed: after ``--resume`` or a restart the leaders knew nothing of the
deals played before (and of the tables finished before), and an event the feed delivered twice
was counted twice (a time-out, a turn answered). So the line disagreed with the final table.

Here every table's events are kept in the log's own order, by their index (the store's, or the
feed's ``Skat-Index`` header): an event whose index was seen is a repeat and changes nothing, an
event after a gap waits until the gap is filled (by the feed, or by reading the table from the
store, which the runner does for ``gaps()``). What is counted is the same as what the final
standings count (``protocol.tournament.standings`` / ``place_standings``): Seeger-Fabian points
of every scored deal and the deals played, turns answered and timed out (``turn_of``),
withdrawals (a forfeit ranks last); for a game ranked by places, each table's places (a running
table's as if it ended now, T38) and coins. The runner feeds it the stored logs of every table
of the tournament, finished ones included, so the leaders at any moment are the standings of
the deals so far, and once every table is closed and read back, the final table exactly.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from protocol.events import (
    DealScored,
    Event,
    SeatWithdrawn,
    TableClosed,
    TableOpened,
    TableOpenedV2,
    TablePaused,
    TableResumed,
)
from protocol.thirty_one.events import T31DealScored, T31Dealt
from protocol.thirty_one.state import places as thirty_one_places
from protocol.tournament import (
    TableFinished,
    TableSpec,
    TournamentState,
    place_points,
    ranked_by_places,
    turn_of,
)

LEADERS: Final = 4
"""Players shown on the progress line."""


def game_progress(lost: Sequence[int], lives: int, deals: int, max_deals: int, closed: bool) -> float:
    """How far a game played to the last survivor has come, 0 to 1: the share of the lives
    the game needs lost so far (every seat but one must lose ``lives``, its coins and, on the
    county, one more: T25), or of ``max_deals`` deals played, whichever is further (T29); 1
    once the table is closed. It never goes back: lost lives only grow."""
    if closed:
        return 1.0
    need = (len(lost) - 1) * lives
    spent = sum(sorted((min(n, lives) for n in lost), reverse=True)[: len(lost) - 1])
    by_lives = spent / need if need > 0 else 0.0
    return min(0.99, max(by_lives, deals / max(max_deals, 1)))


@dataclasses.dataclass
class Game:
    """A table of a game played to the last survivor, as its scored deals tell it (Thirty-one's
    ``t31_deal_scored``): lives lost, coins, the deal each seat was eliminated in."""

    lost: list[int]
    coins: list[int]
    out_deal: list[int]
    deals: int = 0
    kitty: int = 0

    def scored(self, event: T31DealScored) -> None:
        self.deals = event.deal
        self.lost = [a + b for a, b in zip(self.lost, event.lives, strict=False)]
        self.coins = list(event.coins)
        self.kitty = event.kitty
        for seat in event.eliminated:
            if 0 <= seat < len(self.out_deal):
                self.out_deal[seat] = event.deal

    def closed(self) -> None:
        """The last survivor takes the kitty when the table closes (T36), as the fold gives it."""
        active = [s for s in range(len(self.coins)) if not self.out_deal[s]]
        if len(active) == 1:
            self.coins[active[0]] += self.kitty
            self.kitty = 0

    def places(self) -> list[int]:
        """The places if the game ended now: the active seats by coins (T38), the eliminated
        in the reverse order of their elimination."""
        n = len(self.coins)
        active = [s for s in range(n) if not self.out_deal[s]]
        return thirty_one_places(n, active, self.coins, self.out_deal, by_coins=True)


@dataclasses.dataclass
class TableTally:
    """One table's log as far as it is known without a gap, and what it adds up to."""

    players: list[str] = dataclasses.field(default_factory=list)
    next: int = 0
    """The index of the next event to count: every one before it is counted, once."""
    held: dict[int, Event] = dataclasses.field(default_factory=dict)
    """Events that came after a gap, waiting for it to be filled."""
    previous: Event | None = None
    deals: int = 0
    closed: bool = False
    game: Game | None = None
    dealt: list[int] = dataclasses.field(default_factory=list)
    """Per seat, the deals it was dealt in (a game ranked by places)."""


class Tally:
    """The standings so far over every table fed to it (``add``), as the final table would
    compute them from the same logs. Pure: no I/O, no clock."""

    def __init__(self, game: str, coins: int = 0) -> None:
        self.by_places = ranked_by_places(game)
        self.coins = coins
        self.tables: dict[str, TableTally] = {}
        self.points: dict[str, int] = {}
        """Seeger-Fabian points per player (a game ranked by places: unused)."""
        self.played: dict[str, int] = {}
        """Deals per player (every deal of its tables, as ``standings`` counts them)."""
        self.timeouts: dict[str, int] = {}
        self.answered: dict[str, int] = {}
        self.withdrawn: dict[str, set[str]] = {}
        """Player -> the tables it was withdrawn from (``seat_withdrawn``): a forfeit."""
        self.finished: dict[str, TableFinished] = {}
        """Results the tournament's log records (places of a game ranked by places)."""

    # --- feeding ------------------------------------------------------------------------------

    def add(self, table: str, index: int, event: Event) -> bool:
        """Count event ``index`` of ``table`` once; False if it was counted before (a repeat)."""
        t = self.tables.setdefault(table, TableTally())
        if index < t.next or index in t.held:
            return False
        t.held[index] = event
        while t.next in t.held:
            self._count(table, t, t.held.pop(t.next))
            t.next += 1
        return True

    def add_all(self, table: str, events: Iterable[tuple[int, Event]]) -> None:
        """A table's events read from the store, ``(index, event)``; those counted already are
        repeats and change nothing."""
        for index, event in events:
            self.add(table, index, event)

    def record(self, finished: Mapping[str, TableFinished]) -> None:
        """The table results the tournament's log records so far."""
        self.finished.update(finished)

    def gaps(self) -> list[str]:
        """Tables with events waiting behind a missing one (the feed dropped it): read them from
        the store to fill the gap."""
        return [table for table, t in self.tables.items() if t.held]

    def _count(self, table: str, t: TableTally, event: Event) -> None:
        if isinstance(event, TableOpened | TableOpenedV2):
            t.players = list(event.players)
            t.dealt = [0] * len(t.players)
            if self.by_places:
                n = len(t.players)
                t.game = Game([0] * n, [self.coins] * n, [0] * n)
        players = t.players
        turn = turn_of(t.previous, event)
        t.previous = event
        if turn is not None and 0 <= turn[0] < len(players):
            counter = self.answered if turn[1] else self.timeouts
            counter[players[turn[0]]] = counter.get(players[turn[0]], 0) + 1
        if isinstance(event, DealScored) and len(event.result.seeger_fabian) >= len(players):
            t.deals += 1
            for seat, name in enumerate(players):
                self.points[name] = self.points.get(name, 0) + event.result.seeger_fabian[seat]
                self.played[name] = self.played.get(name, 0) + 1
        elif isinstance(event, T31Dealt):
            for seat in event.order:
                if 0 <= seat < len(t.dealt):
                    t.dealt[seat] += 1
        elif isinstance(event, T31DealScored) and t.game is not None:
            t.deals += 1
            t.game.scored(event)
        elif isinstance(event, SeatWithdrawn) and 0 <= event.seat < len(players):
            self.withdrawn.setdefault(players[event.seat], set()).add(table)
        elif isinstance(event, TableClosed):
            t.closed = True
            if t.game is not None:
                t.game.closed()

    # --- what it says ---------------------------------------------------------------------------

    def deals(self, tables: Iterable[str] | None = None) -> int:
        """Deals scored at ``tables`` (all of them if None)."""
        chosen = self.tables if tables is None else tables
        return sum(self.tables[t].deals for t in chosen if t in self.tables)

    def game_of(self, table: str, players: int) -> Game:
        """The running game at ``table`` (a game ranked by places), empty until it opens."""
        t = self.tables.get(table)
        if t is None or t.game is None:
            return Game([0] * players, [self.coins] * players, [0] * players)
        return t.game

    def table_progress(self, tables: Iterable[TableSpec], lives: int, max_deals: int) -> float:
        """Tables done, a running one by how far its game has come (``game_progress``)."""
        done = 0.0
        for spec in tables:
            t = self.tables.get(spec.table)
            if spec.table in self.finished or (t is not None and t.closed):
                done += 1.0
                continue
            g = self.game_of(spec.table, len(spec.players))
            done += game_progress(g.lost, lives, g.deals, max_deals, False)
        return done

    def leaders(self, n: int = LEADERS) -> str:
        """The first ``n`` of the standings so far, ranked as the final table ranks them."""
        return self.place_leaders(n) if self.by_places else self.skat_leaders(n)

    def skat_leaders(self, n: int = LEADERS) -> str:
        """Seeger-Fabian points so far, ranked like ``standings``: a forfeit below everyone,
        then by points."""
        order = sorted(self.points, key=lambda p: (p in self.withdrawn, -self.points[p]))
        return "  ".join(f"{p}{self._forfeit(p)} {self.points[p]:+d}" for p in order[:n])

    def place_points_so_far(self) -> dict[str, list[tuple[int, int, int]]]:
        """Per player, (place points, place, coins) of each table: a finished table's result as
        the tournament's log records it, a closed or running one's as its scored deals give it."""
        out: dict[str, list[tuple[int, int, int]]] = {}
        for table, t in self.tables.items():
            if not t.players:
                continue
            finished = self.finished.get(table)
            game = t.game or Game([0] * len(t.players), [self.coins] * len(t.players), [0] * len(t.players))
            places = list(finished.places) if finished is not None and finished.places else game.places()
            coins = list(finished.coins) if finished is not None and finished.coins else game.coins
            for seat, name in enumerate(t.players):
                out.setdefault(name, []).append((place_points(places[seat], len(t.players)), places[seat], coins[seat]))
        return out

    def place_leaders(self, n: int = LEADERS) -> str:
        """Place points per table so far, ranked like ``place_standings``: a forfeit below
        everyone, then by place points per table, wins, mean coins, name."""
        rows = self.place_points_so_far()

        def key(p: str) -> tuple[Any, ...]:
            got = rows[p]
            return (
                p in self.withdrawn,
                -sum(r[0] for r in got) / len(got),
                -sum(r[1] == 1 for r in got),
                -sum(r[2] for r in got) / len(got),
                p,
            )

        order = sorted(rows, key=key)
        return "  ".join(f"{p}{self._forfeit(p)} {sum(r[0] for r in rows[p]) / len(rows[p]):.2f}" for p in order[:n])

    def _forfeit(self, player: str) -> str:
        return " (forfeit)" if player in self.withdrawn else ""

    def timeouts_line(self, n: int = LEADERS) -> str:
        """Players with time-outs, most first; ``(none answered)`` marks one never heard from,
        ``withdrawn`` one withdrawn from a table (it forfeits)."""
        order = sorted(self.timeouts, key=lambda p: -self.timeouts[p])

        def notes(p: str) -> str:
            said = ([] if self.answered.get(p) else ["none answered"]) + (["withdrawn"] if p in self.withdrawn else [])
            return f" ({', '.join(said)})" if said else ""

        return "  ".join(f"{p} {self.timeouts[p]}{notes(p)}" for p in order[:n])


class Watch:
    """What the runner knows of the tables it plays while they play: the ``Tally`` of every
    table's log (fed from the store and the public feed), which tables are closed and paused.
    The progress line is computed from it alone."""

    def __init__(self, state: TournamentState, specs: Sequence[TableSpec] | None = None) -> None:
        assert state.config is not None
        watched = list(state.pending if specs is None else specs)
        self.specs = watched
        self.pending = {t.table for t in watched if t.table not in state.finished}
        self.seating = {t.table: t.players for t in watched}
        self.by_places = ranked_by_places(state.config.game)
        self.rules = state.config.table_rules()
        self.tally = Tally(state.config.game, int(getattr(self.rules, "coins", 0)))
        self.tally.record(state.finished)
        self.closed: set[str] = set()
        self.all_closed = asyncio.Event()
        self.paused: set[str] = set()
        """Tables paused now (by the operator, ``skat pause``, or an interrupted runner)."""
        self.stale: set[str] = set()
        """Tables whose feed gave an event without its index: read from the store to count it."""

    async def on_public(self, msg: Any) -> None:
        from protocol.events import MSGPACK

        table = msg.subject.rpartition(".")[2]
        if table not in self.pending:
            return
        event = MSGPACK.decode(msg.data)
        if not isinstance(event, Event):
            return
        index = (msg.headers or {}).get("Skat-Index")
        self.seen(table, event, int(index) if isinstance(index, str) and index.isdigit() else None)

    def seen(self, table: str, event: Event, index: int | None) -> None:
        """One event of a pending table, from the feed or the store; ``index`` None: a feed that
        does not say it (the event is counted when the table is read from the store)."""
        if index is None:
            self.stale.add(table)
        else:
            self.tally.add(table, index, event)
        if isinstance(event, TableClosed):
            self.table_closed(table)
        elif isinstance(event, TablePaused):
            self.paused.add(table)
        elif isinstance(event, TableResumed):
            self.paused.discard(table)

    def read_back(self, table: str, stored: Iterable[Any]) -> None:
        """A table's events as the store holds them (``services.store.Stored``: ``index`` and
        ``event``); what the feed gave already is not counted again."""
        self.tally.add_all(table, ((s.index, s.event) for s in stored if isinstance(s.event, Event)))

    def to_read(self) -> list[str]:
        """Pending tables whose counts need the store: a gap in what the feed gave, or events
        without an index."""
        wanted = (set(self.tally.gaps()) | self.stale) & self.pending
        self.stale -= wanted
        return sorted(wanted)

    def progress(self) -> float:
        """Tables done (a game ranked by places): finished ones, each running one by how far
        its game has come (``game_progress``)."""
        lives = int(getattr(self.rules, "coins", 1)) + int(bool(getattr(self.rules, "county", False)))
        max_deals = int(getattr(self.rules, "max_deals", 1))
        return self.tally.table_progress(self.specs, lives, max_deals)

    def deals_done(self) -> int:
        """Deals scored at the watched tables: the finished ones' as the tournament's log
        records them unless their logs were read, the others' as far as their logs are known."""
        done = 0
        for spec in self.specs:
            t = self.tally.tables.get(spec.table)
            finished = self.tally.finished.get(spec.table)
            done += t.deals if t is not None and t.deals else (finished.deals if finished is not None else 0)
        return done

    def deals_total(self) -> int:
        """Deals scored at every table fed (of a game ranked by places: the line's deal count)."""
        return self.tally.deals()

    def table_closed(self, table: str) -> None:
        self.closed.add(table)
        self.paused.discard(table)
        if self.closed >= self.pending:
            self.all_closed.set()

    def leaders(self) -> str:
        return self.tally.leaders()

    def timeouts_line(self) -> str:
        return self.tally.timeouts_line()

    def paused_line(self) -> str:
        """``PAUSED ...`` while tables are paused, else empty."""
        if not self.paused:
            return ""
        if len(self.paused) == 1:
            return f"PAUSED {next(iter(self.paused))}"
        return f"PAUSED {len(self.paused)} tables"
