"""Tournaments as pure data: the schedule, the tournament's own events, and the standings.

A tournament is event-sourced like a table: ``TournamentCreated`` fixes the entrants, the rules
and the whole schedule (every table with its seating and seed); ``TableFinished`` records each
finished table; ``TournamentFinished`` closes it. A killed tournament is resumed by folding its
log: tables without ``TableFinished`` are continued or opened, none is played twice.

Duplicate mode plays every set of deals once per seat rotation: the rotated tables share one
table seed, so they get the same deals (``dealing.deal_seed``) and every entrant holds every
hand once. Luck in the cards then cancels out, as in duplicate bridge.

Forfeits: a seat withdrawn for missing ``Rules.max_timeouts`` turns in a row (``seat_withdrawn``)
forfeits the tournament. Its entrant keeps the points its seats scored, but ranks below every
entrant that finished: a dead bot's Seeger-Fabian points (the non-declarers' share when
declarers lose) say nothing about it, and must not carry it up the standings.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from .events import (
    BidHeld,
    BidMade,
    CardPlayed,
    DealDealt,
    DealScored,
    Discarded,
    Event,
    GameDeclared,
    KontraSaid,
    Passed,
    PlayerTimedOut,
    ReSaid,
    Resigned,
    SeatWithdrawn,
    SkatTaken,
    TableOpened,
)
from .rules import Rules
from .subjects import check_token


class TableSpec(msgspec.Struct, frozen=True):
    table: str
    players: list[str]
    """Entrants by seat."""
    seed: str
    group: int = 0
    """Tables of one group play the same deals (duplicate mode)."""


class TournamentConfig(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    entrants: list[str]
    """Player ids, one per seat of a table (3, or 4 with ``rules.players == 4``)."""
    bots: dict[str, str] = {}
    """Entrant -> built-in bot name; entrants not listed are remote players that connect themselves."""
    formats: dict[str, Literal["msgpack", "json"]] = {}
    rules: Rules = Rules(rounds=4, seeger_fabian=True)
    groups: int = 2
    """Sets of deals: one table each, or one table per seat rotation in duplicate mode."""
    duplicate: bool = True
    seed: str = "skatbus"


class TournamentCreated(msgspec.Struct, frozen=True, tag="tournament_created/1", tag_field="type"):
    config: TournamentConfig
    tables: list[TableSpec]


class TableFinished(msgspec.Struct, frozen=True, tag="table_finished/1", tag_field="type"):
    table: str
    deals: int
    totals: list[int]
    seeger_fabian: list[int]


class TournamentFinished(msgspec.Struct, frozen=True, tag="tournament_finished/1", tag_field="type"):
    tables: int


TournamentEvent = TournamentCreated | TableFinished | TournamentFinished


def schedule(config: TournamentConfig) -> list[TableSpec]:
    """Every table of the tournament, in the order they are opened."""
    check_token("tournament", config.id)
    seats = config.rules.players
    if len(config.entrants) != seats:
        raise ValueError(f"{len(config.entrants)} entrants for {seats}-player tables: give exactly {seats}")
    if len(set(config.entrants)) != seats:
        raise ValueError("entrants must be distinct")
    if config.rules.rounds < 1:
        raise ValueError("a tournament needs a fixed number of rounds per table")
    tables = []
    for group in range(config.groups):
        seed = f"{config.seed}/{group}"
        rotations = range(seats) if config.duplicate else [group % seats]
        for r in rotations:
            players = [config.entrants[(seat + r) % seats] for seat in range(seats)]
            name = f"{config.id}-g{group}" + (f"r{r}" if config.duplicate else "")
            tables.append(TableSpec(table=name, players=players, seed=seed, group=group))
    return tables


class TournamentState:
    """What a tournament's log says: its config, its tables, which are finished."""

    def __init__(self) -> None:
        self.config: TournamentConfig | None = None
        self.tables: list[TableSpec] = []
        self.finished: dict[str, TableFinished] = {}
        self.done = False

    def apply(self, event: TournamentEvent) -> None:
        if isinstance(event, TournamentCreated):
            if self.config is not None:
                raise ValueError("tournament created twice")
            self.config, self.tables = event.config, list(event.tables)
        elif isinstance(event, TableFinished):
            if event.table not in {t.table for t in self.tables}:
                raise ValueError(f"{event.table} is not a table of this tournament")
            if event.table in self.finished:
                raise ValueError(f"{event.table} finished twice")
            self.finished[event.table] = event
        elif isinstance(event, TournamentFinished):
            self.done = True

    @property
    def pending(self) -> list[TableSpec]:
        return [t for t in self.tables if t.table not in self.finished]


def fold_tournament(events: Iterable[TournamentEvent]) -> TournamentState:
    state = TournamentState()
    for e in events:
        state.apply(e)
    return state


# --- standings ------------------------------------------------------------------------------


class GameStats(msgspec.Struct):
    played: int = 0
    won: int = 0


_ANSWERS = (BidMade, BidHeld, Passed, SkatTaken, Discarded, GameDeclared, KontraSaid, ReSaid, CardPlayed, Resigned)
"""Events that record a player's own move (the first event of what its command caused)."""


def turn_of(previous: Event | None, event: Event) -> tuple[int, bool] | None:
    """Whose turn ``event`` settled and how: ``(seat, True)`` for a move the player sent,
    ``(seat, False)`` for a missed deadline; None for events that are no one's move.

    A time-out is logged as ``PlayerTimedOut`` followed by the default move's events, so a
    move right after its own seat's time-out is the default, not an answer. A withdrawal
    (``SeatWithdrawn``) comes between the time-out and that default move and is no one's
    turn (logs written while it came after the default move read the same); every later turn
    of the withdrawn seat is again a ``PlayerTimedOut`` and its default move, so it counts as
    a time-out too."""
    if isinstance(event, PlayerTimedOut):
        return event.seat, False
    if isinstance(event, _ANSWERS):
        if isinstance(previous, (PlayerTimedOut, SeatWithdrawn)) and previous.seat == event.seat:
            return None  # the default move after the seat's time-out (and withdrawal)
        return event.seat, True
    return None


class Turns(msgspec.Struct):
    """How a player's turns went: answered in time, or timed out."""

    answered: int = 0
    timed_out: int = 0

    def count(self, answered: bool) -> None:
        if answered:
            self.answered += 1
        else:
            self.timed_out += 1


def count_turns(logs: Iterable[Sequence[Event]]) -> dict[str, Turns]:
    """Every player's answered and timed-out turns over these tables' logs."""
    out: dict[str, Turns] = {}
    for log in logs:
        opened = next((e for e in log if isinstance(e, TableOpened)), None)
        if opened is None:
            continue
        previous: Event | None = None
        for event in log:
            turn = turn_of(previous, event)
            if turn is not None:
                out.setdefault(opened.players[turn[0]], Turns()).count(turn[1])
            previous = event
    return out


class Standing(msgspec.Struct, kw_only=True):
    player: str
    seeger_fabian: int
    deals: int
    per_deal: float
    ci95: float | None
    """Half-width of the 95 % confidence interval of ``per_deal`` (None below two deals)."""
    list_points: int
    declared: int
    won: int
    by_game: dict[str, GameStats]
    timeouts: int = 0
    """Turns the player missed (the default move was played for it)."""
    answered: int = 0
    """Turns the player answered in time: 0 with time-outs means it never took part."""
    forfeit: bool = False
    """Withdrawn at some table (``seat_withdrawn``): ranked below every entrant that finished."""


class Forfeit(msgspec.Struct, frozen=True, kw_only=True):
    """One ``seat_withdrawn``: who, at which table, in which deal, after how many missed turns."""

    player: str
    table: str
    deal: int
    """The deal (1-based, at that table) in which the seat was withdrawn."""
    missed: int
    """Turns it missed in a row (the table's ``Rules.max_timeouts``)."""


def forfeits(logs: Iterable[Sequence[Event]]) -> list[Forfeit]:
    """Every withdrawal in these tables' logs, in log order (tables in the order given)."""
    out: list[Forfeit] = []
    for log in logs:
        opened: TableOpened | None = None
        deal = 0
        for event in log:
            if isinstance(event, TableOpened):
                opened = event
            elif isinstance(event, DealDealt):
                deal = event.deal
            elif isinstance(event, SeatWithdrawn) and opened is not None and 0 <= event.seat < len(opened.players):
                out.append(
                    Forfeit(player=opened.players[event.seat], table=opened.table, deal=deal, missed=event.missed)
                )
    return out


_GAME_NAMES = {"C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "G": "grand", "N": "null"}


Z95: float = 1.96
"""The normal quantile of a two-sided 95 % interval."""


def half_width_95(values: Sequence[float]) -> float:
    """Half the 95 % confidence interval of the mean of ``values`` (normal approximation,
    mean +- 1.96 sd / sqrt(n)); infinite with fewer than two values. Standings, evaluations
    and duplicate comparisons all state their intervals with it."""
    n = len(values)
    if n < 2:
        return math.inf
    return Z95 * statistics.stdev(values) / math.sqrt(n)


def standings(logs: Sequence[Sequence[Event]]) -> list[Standing]:
    """Standings over finished (or running) tables' logs, best first: by Seeger-Fabian points,
    except that an entrant that forfeited (withdrawn at any table) ranks below every entrant
    that did not, however many points it has (among themselves, forfeited entrants are ordered
    by their points too).

    The interval is mean +- 1.96 sd / sqrt(n) over each player's Seeger-Fabian points per deal
    it took part in: deals are the independent trials (in duplicate mode, paired ones).
    """
    points: dict[str, list[int]] = {}
    totals: dict[str, int] = {}
    declared: dict[str, dict[str, GameStats]] = {}
    for log in logs:
        opened = next((e for e in log if isinstance(e, TableOpened)), None)
        if opened is None:
            continue
        players = opened.players
        for e in log:
            if not isinstance(e, DealScored):
                continue
            r = e.result
            for seat, name in enumerate(players):
                points.setdefault(name, []).append(r.seeger_fabian[seat])
                totals[name] = totals.get(name, 0) + r.scores[seat]
            if r.kind == "game" and r.declarer is not None and r.game is not None:
                stats = declared.setdefault(players[r.declarer], {}).setdefault(_GAME_NAMES[r.game.game], GameStats())
                stats.played += 1
                stats.won += r.won
    turns = count_turns(logs)
    forfeited = {f.player for f in forfeits(logs)}
    out = []
    for name, pts in points.items():
        n = len(pts)
        mean = sum(pts) / n
        games = declared.get(name, {})
        out.append(
            Standing(
                player=name,
                seeger_fabian=sum(pts),
                deals=n,
                per_deal=mean,
                ci95=half_width_95(pts) if n > 1 else None,
                list_points=totals.get(name, 0),
                declared=sum(g.played for g in games.values()),
                won=sum(g.won for g in games.values()),
                by_game=dict(sorted(games.items())),
                timeouts=turns.get(name, Turns()).timed_out,
                answered=turns.get(name, Turns()).answered,
                forfeit=name in forfeited,
            )
        )
    out.sort(key=lambda s: (s.forfeit, -s.seeger_fabian))
    return out
