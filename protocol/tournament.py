"""Tournaments as pure data: the schedule, the tournament's own events, and the standings.

A tournament is event-sourced like a table: ``TournamentCreated`` fixes the entrants, the rules
and the whole schedule (every table with its seating and seed); ``TableFinished`` records each
finished table; ``TournamentFinished`` closes it; ``FaultsCounted`` keeps the turns the
runner's bots failed. A killed tournament is resumed by folding its log: tables without
``TableFinished`` are continued or opened, none is played twice.

Duplicate mode plays every set of deals once per seat rotation: the rotated tables share one
table seed, so they get the same deals (``dealing.deal_seed``) and every entrant holds every
hand once. Luck in the cards then cancels out, as in duplicate bridge.

Forfeits: a seat withdrawn for missing ``Rules.max_timeouts`` turns in a row (``seat_withdrawn``)
forfeits the tournament. Its entrant keeps the points its seats scored, but ranks below every
entrant that finished: a dead bot's Seeger-Fabian points (the non-declarers' share when
declarers lose) say nothing about it, and must not carry it up the standings.

Games. A tournament names its game (``TournamentConfig.game``; a log written before there were
other games names none, which means Skat). Skat ranks by Seeger-Fabian points per deal
(``standings``). A game played to the last survivor (Thirty-one) ranks by places instead
(``place_standings``): each finished table gives every seat ``players at the table - place``
place points (places by competition ranking, shared places skip the places they take: 1, 2, 2,
4, rules T37/T38), and an entrant's figure is its mean over its tables, with a 95 % interval
over the tables (the independent trials). In duplicate mode such tables share their deal seeds
but stay duplicates only until a table's first elimination: from then on its seats differ from
its siblings', and so do its deals (docs/operations.md).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Final, Literal

import msgspec

from . import fairness, registry, seating
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
    TableOpenedV2,
    UnknownEvent,
)
from .skat.games import skat_order
from .skat.rules import Rules
from .subjects import check_token
from .thirty_one.events import T31Dealt, T31Discarded, T31Knocked, T31Threw, T31Took

SKAT: Final = "skat"


class TableSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    table: str
    players: list[str]
    """Entrants by seat."""
    seed: str
    """The table seed (the legacy scheme, ``fair == 0``); empty under the fair scheme, whose
    table seeds exist only once the nonces are closed (``TournamentState.table_seed``)."""
    group: int = 0
    """Tables of one group play the same deals (duplicate mode)."""
    series: int = 0
    """The series (1, 2, ...) of a tournament of many entrants; 0 in a one-seat-set tournament."""


class TournamentConfig(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    entrants: list[str]
    """Player ids, one per seat of a table (Skat: 3, or 4 with ``rules.players == 4``; another
    game: as many as its tables seat, e.g. 2 to 9 for Thirty-one)."""
    bots: dict[str, str] = {}
    """Entrant -> built-in bot name; entrants not listed are remote players that connect themselves."""
    formats: dict[str, Literal["msgpack", "json"]] = {}
    rules: Rules = Rules(rounds=4, seeger_fabian=True)
    """Skat's rules. A tournament of another game leaves the default here: its rules are
    ``game_rules``."""
    groups: int = 2
    """Sets of deals: one table each, or one table per seat rotation in duplicate mode."""
    duplicate: bool = True
    seed: str = "skatbus"
    game: str = SKAT
    """The game its tables play (``protocol.registry``). A log written before there were other
    games has none: Skat."""
    game_rules: dict[str, Any] = {}
    """A game other than Skat: its rules by name, as its ``table_opened/2`` records them (an
    option left out has its default)."""
    series: Annotated[int, msgspec.Meta(ge=0, le=99)] = 0
    """0: the entrants are one table's seats, playing ``groups`` sets of deals (in rotation).
    1 or more: any number of entrants, seated anew in each of this many series at tables of the
    game's size (``protocol.seating``); every table of a series plays the same deals when
    ``duplicate``."""
    table_size: int = 0
    """Players per table preferred when seating many entrants (0: the game's usual size, Skat 3
    with tables of 4 taking the rest, Thirty-one 4)."""
    pairing: Literal["round-robin", "swiss"] = "round-robin"
    """How the series are seated: every pair at one table about equally often, all drawn before
    the first deal (``round-robin``), or each series by the standings so far (``swiss``)."""
    fair: int = 0
    """The deal scheme: 0 the legacy one (table seed ``seed/group``); 1 commit and reveal with the
    entrants' nonces (``protocol.fairness``)."""
    commitment: str = ""
    """Under the fair scheme, ``fairness.commitment(seed)``: published before the first deal."""
    nonce_seconds: float = 0.0
    """Under the fair scheme, how long the remote entrants have to give their nonces before the
    first deal (the nonces close sooner once every remote entrant has given one)."""

    @property
    def seats(self) -> int:
        """Players per table (a one-seat-set tournament)."""
        return self.rules.players if self.game == SKAT else len(self.entrants)

    @property
    def many(self) -> bool:
        """Whether its entrants are seated over series (any number of them) rather than being
        one table's seats."""
        return self.series > 0

    def table_rules(self, players: int | None = None) -> Any:
        """The rules its tables are opened with: ``rules`` for Skat (at a table of ``players``,
        when that differs: a Skat tournament of many entrants mixes tables of 3 and 4), else the
        game's rules struct made from ``game_rules``. Raises ``ValueError`` for an unknown game
        or options the game does not allow."""
        if self.game == SKAT:
            if players is not None and players != self.rules.players:
                return msgspec.structs.replace(self.rules, players=players)
            return self.rules
        kind = registry.get(self.game).rules_type
        try:
            return msgspec.convert(self.game_rules, kind)
        except msgspec.ValidationError as exc:
            raise ValueError(f"{self.game} rules: {exc}") from None


def ranked_by_places(game: str) -> bool:
    """Whether a game's tournament ranks by the places at its tables (every game but Skat,
    whose deals are scored in points)."""
    return game != SKAT


class TournamentCreated(msgspec.Struct, frozen=True, tag="tournament_created/1", tag_field="type"):
    config: TournamentConfig
    tables: list[TableSpec]


class TableFinished(msgspec.Struct, frozen=True, omit_defaults=True, tag="table_finished/1", tag_field="type"):
    """A table's result. Skat fills ``totals`` and ``seeger_fabian``, a game ranked by places
    ``places`` and ``coins``; the fields of the other kind are left out of the log (so a Skat
    table's entry reads as it always did)."""

    table: str
    deals: int
    totals: list[int] = []
    seeger_fabian: list[int] = []
    places: list[int] = []
    """Per seat, its place (1 first; equal places share and skip, T37)."""
    coins: list[int] = []
    """Per seat, its coins at the end (the winner holds the kitty, T36)."""


class TournamentFinished(msgspec.Struct, frozen=True, tag="tournament_finished/1", tag_field="type"):
    tables: int


class NonceGiven(msgspec.Struct, frozen=True, tag="nonce_given/1", tag_field="type"):
    """An entrant's nonce, as the runner accepted it (before the nonces closed; the first counts)."""

    player: str
    nonce: str


class NoncesClosed(msgspec.Struct, frozen=True, tag="nonces_closed/1", tag_field="type"):
    """No more nonces: from here every table seed is fixed (``fairness.group_seed``)."""

    nonces: dict[str, str]
    digest: str


class SeriesDrawn(msgspec.Struct, frozen=True, tag="series_drawn/1", tag_field="type"):
    """The tables of one series, drawn when it is due: every series of a Swiss tournament after
    the first, or a series drawn anew without the entrants that forfeited (``reason``)."""

    series: int
    tables: list[TableSpec]
    reason: str = ""


class FaultsCounted(msgspec.Struct, frozen=True, tag="faults_counted/1", tag_field="type"):
    """Turns the runner's in-process bots failed since the last such event, per entrant (each
    played by the default move: ``skatbus.bot_guard``). In the log, not in the runner's
    memory, so that a resumed tournament's results count the faults of every run."""

    faults: dict[str, int]


TournamentEvent = (
    TournamentCreated | NonceGiven | NoncesClosed | SeriesDrawn | TableFinished | TournamentFinished | FaultsCounted
)


def schedule(config: TournamentConfig) -> list[TableSpec]:
    """Every table known before the first deal, in the order they are opened: all of them,
    but for a Swiss tournament only its first series (the others are drawn by the standings,
    ``draw_series``)."""
    check_token("tournament", config.id)
    if config.many:
        return _many_schedule(config)
    seats = config.seats
    if config.game == SKAT:
        if len(config.entrants) != seats:
            raise ValueError(f"{len(config.entrants)} entrants for {seats}-player tables: give exactly {seats}")
        if config.rules.rounds < 1:
            raise ValueError("a tournament needs a fixed number of rounds per table")
    else:
        game = registry.get(config.game)
        low, high = game.players(config.table_rules())
        if not low <= seats <= high:
            raise ValueError(f"{game.title} tables seat {low} to {high} players, not {seats}")
    if len(set(config.entrants)) != seats:
        raise ValueError("entrants must be distinct")
    tables = []
    for group in range(config.groups):
        seed = "" if config.fair else f"{config.seed}/{group}"
        rotations = range(seats) if config.duplicate else [group % seats]
        for r in rotations:
            players = [config.entrants[(seat + r) % seats] for seat in range(seats)]
            name = f"{config.id}-g{group}" + (f"r{r}" if config.duplicate else "")
            tables.append(TableSpec(table=name, players=players, seed=seed, group=group))
    return tables


MAX_TABLES_PER_SERIES: Final = 99


def table_feed(config: TournamentConfig) -> str:
    """Where its tables' spectator feeds go (``protocol.events.FEEDS``). The tables of a duplicate
    series play the same deals at the same time, each at its own pace; every player may read every
    public feed, so a remote entrant could watch its own deal played at a sibling table first.
    Such tables' feeds are withheld from the players (only the operator's tools read them), so
    that duplicate series can seat remote entrants."""
    remote = any(e not in config.bots for e in config.entrants)
    return "withheld" if config.many and config.duplicate and remote else "public"


def table_bounds(config: TournamentConfig) -> tuple[int, int, int]:
    """(fewest, most, preferred) players at one table when seating many entrants. Skat seats 3,
    with tables of 4 (the dealer sits out) taking the entrants a count of threes leaves over,
    as ISkO tournaments do; another game its own range, 4 preferred."""
    if config.game == SKAT:
        preferred = config.table_size or 3
        if preferred not in (3, 4):
            raise ValueError(f"Skat tables seat 3 or 4 players, not {preferred}")
        return 3, 4, preferred
    game = registry.get(config.game)
    low, high = game.players(config.table_rules())
    preferred = config.table_size or min(max(4, low), high)
    if not low <= preferred <= high:
        raise ValueError(f"{game.title} tables seat {low} to {high} players, not {preferred}")
    return low, high, preferred


def series_sizes(config: TournamentConfig, entrants: int) -> list[int]:
    """The table sizes of one series of ``entrants`` (``seating.table_sizes``)."""
    low, high, preferred = table_bounds(config)
    title = "Skat" if config.game == SKAT else registry.get(config.game).title
    return seating.table_sizes(entrants, low, high, preferred, what=f"{title} tables")


def series_tables(config: TournamentConfig, series: int, seats: Sequence[Sequence[str]]) -> list[TableSpec]:
    """The ``TableSpec`` of series ``series`` seated as ``seats`` (one seat order per table).
    In duplicate mode every table of the series is in one group, the series' number, and so
    plays the same deals; otherwise each table is a group of its own."""
    if len(seats) > MAX_TABLES_PER_SERIES:
        raise ValueError(f"{len(seats)} tables in one series: at most {MAX_TABLES_PER_SERIES}")
    out = []
    for t, players in enumerate(seats, 1):
        group = series if config.duplicate else series * 100 + t
        seed = "" if config.fair else f"{config.seed}/{group}"
        out.append(
            TableSpec(table=f"{config.id}-s{series}t{t}", players=list(players), seed=seed, group=group, series=series)
        )
    return out


def _many_schedule(config: TournamentConfig) -> list[TableSpec]:
    if len(set(config.entrants)) != len(config.entrants):
        raise ValueError("entrants must be distinct")
    if config.game == SKAT and config.rules.rounds < 1:
        raise ValueError("a tournament needs a fixed number of rounds per table")
    sizes = series_sizes(config, len(config.entrants))
    count = 1 if config.pairing == "swiss" else config.series
    drawn = seating.round_robin(config.entrants, count, sizes, salt=config.id)
    return [spec for s, seats in enumerate(drawn, 1) for spec in series_tables(config, s, seats)]


class TournamentState:
    """What a tournament's log says: its config, its tables, which are finished, and under the
    fair scheme the nonces and whether they are closed."""

    def __init__(self) -> None:
        self.config: TournamentConfig | None = None
        self.tables: list[TableSpec] = []
        self.finished: dict[str, TableFinished] = {}
        self.done = False
        self.nonces: dict[str, str] = {}
        self.digest: str | None = None
        """The nonces' digest once they are closed (``NoncesClosed``)."""
        self.redrawn: dict[int, str] = {}
        """Series drawn after the start, with the reason given (``SeriesDrawn``)."""
        self.faults: dict[str, int] = {}
        """Per entrant, the turns its bot failed over every run (the sum of ``FaultsCounted``)."""

    def apply(self, event: TournamentEvent) -> None:
        if isinstance(event, TournamentCreated):
            if self.config is not None:
                raise ValueError("tournament created twice")
            self.config, self.tables = event.config, list(event.tables)
        elif self.config is None:
            raise ValueError(f"{type(event).__name__} before tournament_created")
        elif isinstance(event, NonceGiven):
            if self.digest is not None:
                raise ValueError(f"a nonce of {event.player} after the nonces closed")
            if event.player not in self.config.entrants:
                raise ValueError(f"{event.player} is no entrant")
            self.nonces.setdefault(event.player, event.nonce)
        elif isinstance(event, NoncesClosed):
            if self.digest is not None:
                raise ValueError("nonces closed twice")
            self.nonces, self.digest = dict(event.nonces), event.digest
        elif isinstance(event, SeriesDrawn):
            if any(t.series == event.series and t.table in self.finished for t in self.tables):
                raise ValueError(f"series {event.series} drawn again after a table of it finished")
            self.tables = [t for t in self.tables if t.series != event.series] + list(event.tables)
            self.redrawn[event.series] = event.reason
        elif isinstance(event, TableFinished):
            if event.table not in {t.table for t in self.tables}:
                raise ValueError(f"{event.table} is not a table of this tournament")
            if event.table in self.finished:
                raise ValueError(f"{event.table} finished twice")
            self.finished[event.table] = event
        elif isinstance(event, TournamentFinished):
            self.done = True
        elif isinstance(event, FaultsCounted):
            for player, n in event.faults.items():
                if player not in self.config.entrants:
                    raise ValueError(f"faults of {player}, who is no entrant")
                if n < 0:
                    raise ValueError(f"a negative count of {player}'s faults")
                self.faults[player] = self.faults.get(player, 0) + n

    @property
    def pending(self) -> list[TableSpec]:
        return [t for t in self.tables if t.table not in self.finished]

    def series_of(self, series: int) -> list[TableSpec]:
        return [t for t in self.tables if t.series == series]

    def table_seed(self, spec: TableSpec) -> str:
        """The seed ``spec``'s table is opened with. Under the fair scheme it exists only once the
        nonces are closed (``ValueError`` before)."""
        assert self.config is not None
        if not self.config.fair:
            return spec.seed
        if self.digest is None:
            raise ValueError("the table seeds are fixed only when the nonces close")
        return fairness.group_seed(self.config.seed, self.config.id, spec.group, self.digest)


def fold_tournament(events: Iterable[TournamentEvent]) -> TournamentState:
    state = TournamentState()
    for e in events:
        state.apply(e)
    return state


# --- standings ------------------------------------------------------------------------------


class GameStats(msgspec.Struct):
    played: int = 0
    won: int = 0


_ANSWERS = (
    BidMade, BidHeld, Passed, SkatTaken, Discarded, GameDeclared, KontraSaid, ReSaid, CardPlayed, Resigned,
    T31Took, T31Discarded, T31Knocked, T31Threw,
)  # fmt: skip
"""Events that record a player's own move (the first event of what its command caused), of
every game. Thirty-one's ``t31_looked`` is none: a look is free and out of turn (T30, T40),
no answer to a turn, so a seat that only looks still "never answered"."""

_DEALT = (DealDealt, T31Dealt)
"""Events that start a deal, of every game (their ``deal`` is its number)."""


def opening(log: Sequence[Event | UnknownEvent]) -> TableOpened | TableOpenedV2 | None:
    """A table log's ``table_opened`` (of any game), or None."""
    return next((e for e in log if isinstance(e, TableOpened | TableOpenedV2)), None)


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
    """Every player's answered and timed-out turns over these tables' logs (of any game)."""
    out: dict[str, Turns] = {}
    for log in logs:
        opened = opening(log)
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
    ramsch: int = 0
    """Ramsch deals at the player's tables (everybody passed and a Ramsch was played)."""
    ramsch_lost: int = 0
    """Of those, the ones that cost it points (it was among the losers)."""
    ramsch_points: int = 0
    """List points from the Ramsch deals (Jungfrau and Durchmarsch included)."""
    passed_in: int = 0
    """Deals at the player's tables that everybody passed and nobody played."""


ADDED_STANDING_FIELDS: Final = frozenset({"ramsch", "ramsch_lost", "ramsch_points", "passed_in"})
"""``Standing`` fields a results.json written before them does not have (``skat verify``
reads such a run as it was written, not as a difference)."""


class Forfeit(msgspec.Struct, frozen=True, kw_only=True):
    """One ``seat_withdrawn``: who, at which table, in which deal, after how many missed turns."""

    player: str
    table: str
    deal: int
    """The deal (1-based, at that table) in which the seat was withdrawn."""
    missed: int
    """Turns it missed in a row (the table's ``Rules.max_timeouts``)."""


def forfeits(logs: Iterable[Sequence[Event]]) -> list[Forfeit]:
    """Every withdrawal in these tables' logs (of any game), in log order (tables in the order
    given)."""
    out: list[Forfeit] = []
    for log in logs:
        opened: TableOpened | TableOpenedV2 | None = None
        deal = 0
        for event in log:
            if isinstance(event, TableOpened | TableOpenedV2):
                opened = event
            elif isinstance(event, _DEALT):
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
    unplayed: dict[str, list[int]] = {}
    """Per player: Ramsch deals, those lost, their list points, passed-in deals."""
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
                counts = unplayed.setdefault(name, [0, 0, 0, 0])
                if r.kind == "ramsch":
                    counts[0] += 1
                    counts[1] += r.scores[seat] < 0
                    counts[2] += r.scores[seat]
                elif r.kind == "passed":
                    counts[3] += 1
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
                by_game=dict(sorted(games.items(), key=lambda g: skat_order(g[0]))),
                timeouts=turns.get(name, Turns()).timed_out,
                answered=turns.get(name, Turns()).answered,
                forfeit=name in forfeited,
                ramsch=unplayed[name][0],
                ramsch_lost=unplayed[name][1],
                ramsch_points=unplayed[name][2],
                passed_in=unplayed[name][3],
            )
        )
    out.sort(key=lambda s: (s.forfeit, -s.seeger_fabian))
    return out


# --- games ranked by places (Thirty-one) -------------------------------------------------------


def place_points(place: int, players: int) -> int:
    """What a place is worth at a table of ``players``: ``players - place``, so the winner of
    a four-player table scores 3 and the last 0. Shared places (competition ranking, T37:
    1, 2, 2, 4) score alike: two seats sharing 2nd both score 2."""
    return players - place


PLACE_POINTS: Final = (
    "place points: players at the table minus place (the winner of 4 scores 3, the last 0; "
    "shared places score alike), averaged over the entrant's finished tables"
)
"""How place points are made, in words (results.json ``scoring``, the printed standings)."""


class TableOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one table of a game ranked by places gave, from its folded log."""

    table: str
    players: list[str]
    closed: bool
    deals: int
    places: list[int]
    """Per seat: its place (the table's so far while it runs)."""
    coins: list[int]
    dealt: list[int]
    """Per seat: the deals it was dealt in."""


def table_outcome(log: Sequence[Event | UnknownEvent]) -> TableOutcome | None:
    """A table's outcome, by the pure engine's fold of its log (``protocol.registry.fold``:
    every event checked against the rules; a log that breaks them raises
    ``protocol.lifecycle.LogError``); None for a log that opens no table."""
    if not log:
        return None
    state = registry.fold(log)
    if not state.n:
        return None
    game = registry.state_game(state)
    dealt = [0] * state.n
    for event in log:
        if isinstance(event, T31Dealt):
            for seat in event.order:
                dealt[seat] += 1
    return TableOutcome(
        table=state.table,
        players=list(state.players),
        closed=state.closed,
        deals=int(getattr(state, "deal_no", 0)),
        places=list(game.standings(state)),
        coins=list(getattr(state, "coins", [0] * state.n)),
        dealt=dealt,
    )


def table_finished(log: Sequence[Event | UnknownEvent]) -> TableFinished:
    """The ``table_finished`` a closed table's log gives, of any game."""
    opened = opening(log)
    if opened is None:
        raise ValueError("the log opens no table")
    if not isinstance(opened, TableOpenedV2) or not ranked_by_places(opened.game):
        sheet = [e for e in log if isinstance(e, DealScored)]
        n = len(opened.players)
        return TableFinished(
            table=opened.table,
            deals=sheet[-1].deal if sheet else 0,
            totals=[sum(e.result.scores[i] for e in sheet) for i in range(n)],
            seeger_fabian=[sum(e.result.seeger_fabian[i] for e in sheet) for i in range(n)],
        )
    outcome = table_outcome(log)
    assert outcome is not None
    return TableFinished(table=outcome.table, deals=outcome.deals, places=outcome.places, coins=outcome.coins)


class PlaceStanding(msgspec.Struct, kw_only=True):
    """An entrant's standing in a tournament ranked by places."""

    player: str
    place_points: int
    """Its place points (``place_points``) over its finished tables."""
    tables: int
    """Finished tables it sat at."""
    per_table: float
    """Mean place points per finished table: what it is ranked by."""
    ci95: float | None
    """Half-width of the 95 % confidence interval of ``per_table`` (None below two tables)."""
    wins: int
    """Tables it finished first (a place 1 shared at ``max_deals`` counts for each, T38)."""
    places: dict[str, int]
    """Place -> how many tables it finished in that place."""
    mean_place: float
    coins: int
    """Coins it held at the end of its finished tables, in all."""
    mean_coins: float
    deals: int
    """Deals it was dealt in (at every table, finished or not)."""
    timeouts: int = 0
    answered: int = 0
    forfeit: bool = False
    """Withdrawn at some table (``seat_withdrawn``): ranked below every entrant that finished."""


def place_standings(logs: Sequence[Sequence[Event]]) -> list[PlaceStanding]:
    """Standings of a game ranked by places, best first: by mean place points per finished
    table (``place_points``), then wins, then mean coins; an entrant that forfeited (withdrawn
    at any table) ranks below every entrant that did not, as in Skat.

    Each table is the pure engine's fold of its log (``table_outcome``). The interval is mean
    +- 1.96 sd / sqrt(n) over an entrant's place points per finished table: the tables are the
    independent trials (in duplicate mode, paired ones for as long as their deals stay alike).
    """
    points: dict[str, list[int]] = {}
    placed: dict[str, list[int]] = {}
    coins: dict[str, list[int]] = {}
    dealt: dict[str, int] = {}
    for log in logs:
        outcome = table_outcome(log)
        if outcome is None:
            continue
        n = len(outcome.players)
        for seat, name in enumerate(outcome.players):
            dealt[name] = dealt.get(name, 0) + outcome.dealt[seat]
            points.setdefault(name, [])
            placed.setdefault(name, [])
            coins.setdefault(name, [])
            if outcome.closed:
                points[name].append(place_points(outcome.places[seat], n))
                placed[name].append(outcome.places[seat])
                coins[name].append(outcome.coins[seat])
    turns = count_turns(logs)
    forfeited = {f.player for f in forfeits(logs)}
    out = []
    for name, pts in points.items():
        n = len(pts)
        by_place: dict[str, int] = {}
        for place in sorted(placed[name]):
            by_place[str(place)] = by_place.get(str(place), 0) + 1
        out.append(
            PlaceStanding(
                player=name,
                place_points=sum(pts),
                tables=n,
                per_table=sum(pts) / n if n else 0.0,
                ci95=half_width_95(pts) if n > 1 else None,
                wins=sum(p == 1 for p in placed[name]),
                places=by_place,
                mean_place=sum(placed[name]) / n if n else 0.0,
                coins=sum(coins[name]),
                mean_coins=sum(coins[name]) / n if n else 0.0,
                deals=dealt.get(name, 0),
                timeouts=turns.get(name, Turns()).timed_out,
                answered=turns.get(name, Turns()).answered,
                forfeit=name in forfeited,
            )
        )
    out.sort(key=lambda s: (s.forfeit, -s.per_table, -s.wins, -s.mean_coins, s.player))
    return out


def standings_of(game: str, logs: Sequence[Sequence[Event]]) -> list[Standing] | list[PlaceStanding]:
    """The standings of a tournament of ``game``: Seeger-Fabian (``standings``) for Skat, by
    places (``place_standings``) for the others."""
    return place_standings(logs) if ranked_by_places(game) else standings(logs)
