"""Ratings: each player's skill, with its uncertainty, across every tournament in a store.

A tournament's standings say who did best in that tournament; a rating says how strong a player
is across all of them, and how sure we are. Every table of every finished tournament is one
match: its players ranked by the Seeger-Fabian points they scored at that table. The matches
go through OpenSkill's Plackett-Luce model (``openskill``, a maintained implementation of the
Weng-Lin Bayesian rating; we do not write our own maths), in a fixed order: tournaments by the
time they were created (the id says it), tables in archive order. So the ratings are rebuilt
from the logs alone and come out the same every time.

Tables are read from each run's ``archive.jsonl`` and folded like ``skat replay --verify``
does; a table that does not verify, or did not finish, is left out and said so. A rating is
shown as ``mu`` with its 95 % interval ``mu +- 1.96 sigma``, and players are ordered by the
conservative estimate ``mu - 3 sigma`` (OpenSkill's ordinal), so a player who played little
does not top the list on luck.

A rating belongs to an identity, not to a name alone: a built-in bot (``kind`` "bot", an
entrant the run's ``results.json`` lists in ``config.bots``) and a remote player (``kind``
"remote", any other entrant) are rated apart even if they share a name, so a remote entrant
called ``heuristic`` (older runs allowed it) never borrows or spoils the built-in bot's rating.
A run whose results.json does not say which entrants were built-in rates them all as remote:
never merged into a bot's rating by mistake. A seat withdrawn at a table (``seat_withdrawn``,
a forfeit) places below every seat that was not, whatever its points, as in the standings.

A rating belongs to a game too: the identity is (game, kind, name), so a ``heuristic`` that
plays Thirty-one and the ``heuristic`` that plays Skat are two players, never one rating. A
Thirty-one table (its log's ``table_opened/2`` names the game) is one match ranked by its
places (T27, T37, T38: the last survivor first, shared places tie), from the pure engine's
fold of its log (``protocol.registry.fold``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from openskill.models import PlackettLuce

from protocol import registry
from protocol.events import SeatWithdrawn, TableOpenedV2
from protocol.skat.table import LogError, TableState
from protocol.tournament import SKAT, Z95, ranked_by_places, table_outcome

from .replay import TableLog, read_archive, replay

BOT: Final = "bot"
REMOTE: Final = "remote"
Identity = tuple[str, str, str]
"""(game, kind, player): what a rating belongs to."""


@dataclass
class Rating:
    player: str
    mu: float
    sigma: float
    tables: int = 0
    kind: str = BOT
    """``bot`` (built-in, played by the runner) or ``remote`` (connected by itself)."""
    game: str = SKAT
    """The game it was rated at (``protocol.registry`` name)."""

    @property
    def label(self) -> str:
        """The name as shown: a remote player's is marked, so two identities of one name differ."""
        return self.player if self.kind == BOT else f"{self.player} (remote)"

    @property
    def ordinal(self) -> float:
        """The conservative estimate the list is ordered by (mu - 3 sigma)."""
        return self.mu - 3 * self.sigma

    @property
    def interval(self) -> tuple[float, float]:
        return self.mu - Z95 * self.sigma, self.mu + Z95 * self.sigma


@dataclass
class Ratings:
    players: list[Rating]
    tournaments: list[str]
    tables: int
    skipped: list[str] = field(default_factory=list)
    """Tables or runs left out, with the reason."""
    tables_by_game: dict[str, int] = field(default_factory=dict)
    """Matches per game."""

    def games(self) -> list[str]:
        """The games rated, Skat first."""
        found = {r.game for r in self.players}
        return [g for g in [SKAT, *sorted(found - {SKAT})] if g in found]

    def of(self, game: str) -> Ratings:
        """Only ``game``'s ratings (the same matches counted: ``tables`` are that game's)."""
        players = [r for r in self.players if r.game == game]
        tables = self.tables_by_game.get(game, 0)
        return Ratings(players, self.tournaments, tables, self.skipped, {game: tables})

    def to_json(self) -> dict[str, object]:
        return {
            "model": "openskill PlackettLuce, one match per table, ranked by Seeger-Fabian points (Skat) or by "
            "places (Thirty-one); a rating is one game's: (game, kind, player)",
            "tournaments": self.tournaments,
            "tables": self.tables,
            "tables_by_game": dict(self.tables_by_game),
            "players": [
                {
                    "player": r.player,
                    "game": r.game,
                    "kind": r.kind,
                    "mu": round(r.mu, 6),
                    "sigma": round(r.sigma, 6),
                    "ordinal": round(r.ordinal, 6),
                    "tables": r.tables,
                }
                for r in self.players
            ],
            "skipped": self.skipped,
        }


@dataclass
class Match:
    tournament: str
    table: str
    players: list[str]
    points: list[int]
    """Seeger-Fabian points per player at this table (the order of ``players``)."""
    kinds: list[str] = field(default_factory=list)
    """``bot`` or ``remote`` per player (the order of ``players``; empty: all remote)."""
    withdrawn: list[bool] = field(default_factory=list)
    """Per player: withdrawn at this table (``seat_withdrawn``); empty: nobody was."""
    game: str = SKAT
    places: list[int] = field(default_factory=list)
    """A game ranked by places: each player's place at this table (1 first, shared places
    tie); ``points`` are then unused."""

    def ranks(self) -> list[int] | None:
        """The places at this table (1 best): a game ranked by places gives them, a withdrawn
        seat below every seat that was not; at Skat, when a seat was withdrawn, below every
        seat that was not, whatever the points (a dead seat gathers Seeger-Fabian points
        whenever a declarer loses); None when nobody was, and the points alone rank the table."""
        withdrawn = self.withdrawn or [False] * len(self.players)
        if self.places:
            keys = list(zip(withdrawn, self.places, strict=True))
        elif not any(withdrawn):
            return None
        else:
            keys = [(w, -p) for w, p in zip(withdrawn, self.points, strict=True)]
        order = sorted(set(keys))
        return [order.index(k) + 1 for k in keys]

    def identities(self) -> list[Identity]:
        """(game, kind, player) per seat: what a rating belongs to."""
        kinds = self.kinds or [REMOTE] * len(self.players)
        return [(self.game, kind, player) for kind, player in zip(kinds, self.players, strict=True)]


def built_in_entrants(results_path: Path) -> set[str] | None:
    """The entrants a run's results.json lists as built-in bots (``config.bots``), or None if
    it does not say (unreadable, or written by something else than the runner)."""
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    config = results.get("config") if isinstance(results, dict) else None
    bots = config.get("bots") if isinstance(config, dict) else None
    return {str(p) for p in bots} if isinstance(bots, dict) else None


_ID_TIME = re.compile(r"-(\d{6}-\d{6})-")


def run_order(run: Path) -> tuple[str, str]:
    """Tournaments in the order they were created: the time in the id (t-<seed>-<yymmdd-HHMMSS>-
    <random>); ids without a time (older runs) come first, by name."""
    found = _ID_TIME.search(run.name)
    return (found.group(1) if found else "", run.name)


def matches(runs_dir: Path, skipped: list[str] | None = None) -> list[Match]:
    """Every finished table of every run under ``runs_dir`` (``<id>/results.json`` and
    ``<id>/archive.jsonl``), in rating order."""
    skipped = skipped if skipped is not None else []
    out: list[Match] = []
    runs = sorted((p.parent for p in runs_dir.glob("*/results.json")), key=run_order)
    for run in runs:
        archive = run / "archive.jsonl"
        if not archive.exists():
            skipped.append(f"{run.name}: no archive.jsonl")
            continue
        bots = built_in_entrants(run / "results.json") or set()
        for table, log in read_archive(archive).items():
            first = log.events[0] if log.events else None
            if isinstance(first, TableOpenedV2) and ranked_by_places(first.game):
                found = _place_match(run.name, table, log, bots, skipped)
                if found is not None:
                    out.append(found)
                continue
            try:
                state: TableState | None = None
                for step in replay(log):
                    state = step.state
            except LogError as exc:
                skipped.append(f"{run.name}/{table}: does not verify ({exc})")
                continue
            if state is None or not state.closed:
                skipped.append(f"{run.name}/{table}: not finished")
                continue
            sf = [sum(row.result.seeger_fabian[s] for row in state.sheet) for s in range(len(state.players))]
            kinds = [BOT if p in bots else REMOTE for p in state.players]
            gone = {e.seat for e in log.events if isinstance(e, SeatWithdrawn)}
            withdrawn = [seat in gone for seat in range(len(state.players))]
            out.append(Match(run.name, table, list(state.players), sf, kinds, withdrawn))
    return out


def _place_match(tournament: str, table: str, log: TableLog, bots: set[str], skipped: list[str]) -> Match | None:
    """A table of a game ranked by places as a match (None, and said in ``skipped``, if its
    log does not verify or the table did not finish)."""
    if log.problem is not None:
        skipped.append(f"{tournament}/{table}: does not verify ({log.problem})")
        return None
    try:  # an unknown game is a ValueError of the registry's
        outcome = table_outcome(log.events)
    except (LogError, ValueError) as exc:
        skipped.append(f"{tournament}/{table}: does not verify ({exc})")
        return None
    if outcome is None or not outcome.closed:
        skipped.append(f"{tournament}/{table}: not finished")
        return None
    gone = {e.seat for e in log.events if isinstance(e, SeatWithdrawn)}
    n = len(outcome.players)
    return Match(
        tournament,
        table,
        list(outcome.players),
        [0] * n,
        [BOT if p in bots else REMOTE for p in outcome.players],
        [seat in gone for seat in range(n)],
        game=registry.game_of(log.events[0]).name,
        places=list(outcome.places),
    )


def rate(found: list[Match], skipped: list[str] | None = None) -> Ratings:
    """Ratings after every match, in order; each game's apart (``Match.identities``)."""
    model = PlackettLuce()
    current: dict[Identity, object] = {}
    tables: dict[Identity, int] = {}
    for m in found:
        who = m.identities()
        teams = [[current.setdefault(i, model.rating(name=":".join(i)))] for i in who]
        ranks = m.ranks()
        if ranks is None:
            rated = model.rate(teams, scores=list(m.points))  # type: ignore[arg-type]
        else:
            rated = model.rate(teams, ranks=ranks)  # type: ignore[arg-type]
        for i, team in zip(who, rated, strict=True):
            current[i] = team[0]
            tables[i] = tables.get(i, 0) + 1
    players = [
        Rating(i[2], r.mu, r.sigma, tables[i], kind=i[1], game=i[0])  # type: ignore[attr-defined]
        for i, r in current.items()
    ]
    players.sort(key=lambda r: (r.game != SKAT, r.game, -r.ordinal, r.player, r.kind))
    tournaments = list(dict.fromkeys(m.tournament for m in found))
    by_game: dict[str, int] = {}
    for m in found:
        by_game[m.game] = by_game.get(m.game, 0) + 1
    return Ratings(players, tournaments, len(found), skipped or [], by_game)


def ratings_of(runs_dir: Path) -> Ratings:
    """The ratings of every player in the tournaments under ``runs_dir``."""
    skipped: list[str] = []
    return rate(matches(runs_dir, skipped), skipped)


def write_ratings(runs_dir: Path) -> Path:
    """Rebuild the ratings and write ``runs_dir/ratings.json``; returns its path."""
    path = runs_dir / "ratings.json"
    path.write_text(json.dumps(ratings_of(runs_dir).to_json(), indent=2) + "\n", encoding="utf-8")
    return path


def table_text(r: Ratings) -> str:
    """The ratings as a small table for a terminal, one block per game (Skat first)."""
    lines: list[str] = []
    games = r.games()
    for game in games:
        if len(games) > 1 or game != SKAT:
            lines.append(f"{'' if not lines else chr(10)}{_title(game)} ({r.tables_by_game.get(game, 0)} tables):")
        lines.append(f"{'#':>3}  {'player':<20} {'rating':>7} {'95 % interval':>17} {'mu-3σ':>7} {'tables':>6}")
        for i, p in enumerate((p for p in r.players if p.game == game), 1):
            lo, hi = p.interval
            lines.append(
                f"{i:>3}  {p.label:<20} {p.mu:>7.2f} {f'[{lo:.1f}, {hi:.1f}]':>17} {p.ordinal:>7.2f} {p.tables:>6}"
            )
    ranked = [f"{_title(g)} by {'Seeger-Fabian points' if g == SKAT else 'places'}" for g in games]
    lines.append(
        f"\n{r.tables} tables of {len(r.tournaments)} tournaments (OpenSkill Plackett-Luce, one match per table"
        + (f"; {', '.join(ranked)}, each game rated apart" if games != [SKAT] and games else "")
        + ")"
        + (f"; {len(r.skipped)} left out" if r.skipped else "")
    )
    return "\n".join(lines)


def _title(game: str) -> str:
    try:
        return registry.get(game).title
    except ValueError:
        return game
