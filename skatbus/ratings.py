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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from openskill.models import PlackettLuce

from protocol.table import LogError, TableState
from protocol.tournament import Z95

from .replay import read_archive, replay


@dataclass
class Rating:
    player: str
    mu: float
    sigma: float
    tables: int = 0

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

    def to_json(self) -> dict[str, object]:
        return {
            "model": "openskill PlackettLuce, one match per table, ranked by Seeger-Fabian points",
            "tournaments": self.tournaments,
            "tables": self.tables,
            "players": [
                {
                    "player": r.player,
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
        for table, log in read_archive(archive).items():
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
            out.append(Match(run.name, table, list(state.players), sf))
    return out


def rate(found: list[Match], skipped: list[str] | None = None) -> Ratings:
    """Ratings after every match, in order."""
    model = PlackettLuce()
    current: dict[str, object] = {}
    tables: dict[str, int] = {}
    for m in found:
        teams = [[current.setdefault(p, model.rating(name=p))] for p in m.players]
        rated = model.rate(teams, scores=list(m.points))  # type: ignore[arg-type]
        for p, team in zip(m.players, rated, strict=True):
            current[p] = team[0]
            tables[p] = tables.get(p, 0) + 1
    players = [
        Rating(p, r.mu, r.sigma, tables[p])  # type: ignore[attr-defined]
        for p, r in current.items()
    ]
    players.sort(key=lambda r: (-r.ordinal, r.player))
    tournaments = list(dict.fromkeys(m.tournament for m in found))
    return Ratings(players, tournaments, len(found), skipped or [])


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
    """The ratings as a small table for a terminal."""
    lines = [f"{'#':>3}  {'player':<20} {'rating':>7} {'95 % interval':>17} {'mu-3σ':>7} {'tables':>6}"]
    for i, p in enumerate(r.players, 1):
        lo, hi = p.interval
        lines.append(
            f"{i:>3}  {p.player:<20} {p.mu:>7.2f} {f'[{lo:.1f}, {hi:.1f}]':>17} {p.ordinal:>7.2f} {p.tables:>6}"
        )
    lines.append(
        f"\n{r.tables} tables of {len(r.tournaments)} tournaments (OpenSkill Plackett-Luce, one match per table)"
        + (f"; {len(r.skipped)} left out" if r.skipped else "")
    )
    return "\n".join(lines)
