"""Tournaments of many entrants, as pure data: what the next series seats, and what the series say.

A tournament of many entrants (``TournamentConfig.series``) is played series after series. A
round robin draws every series before the first deal (``tournament.schedule``); a Swiss
tournament draws each series after the one before has finished, by the standings so far. Both
follow one rule for entrants that failed: an entrant that forfeited (withdrawn at a table for
missing ``Rules.max_timeouts`` turns in a row) is seated in no later series. A series not yet
begun whose tables seat one is drawn anew among the others (a ``SeriesDrawn`` with the reason,
in the log and the results) by the same exchanges a Swiss draw makes to avoid repeated
meetings, unless too few remain to fill the game's tables, in which case the
series is played as drawn and the forfeited entrant's seats are played by the default action.

The results of such a tournament add, to the overall standings, the standings of each series
and a crosstable: for every pair of entrants, how they fared at the tables they shared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from . import seating
from .events import Event
from .tournament import (
    SeriesDrawn,
    TableFinished,
    TableSpec,
    TournamentConfig,
    TournamentState,
    forfeits,
    place_points,
    ranked_by_places,
    series_sizes,
    series_tables,
    standings_of,
)


def forfeited(logs: Mapping[str, Sequence[Event]]) -> set[str]:
    """Entrants withdrawn at any of these tables."""
    return {f.player for f in forfeits(logs.values())}


def ranking(config: TournamentConfig, logs: Mapping[str, Sequence[Event]], among: Sequence[str]) -> list[str]:
    """``among`` by the standings over ``logs`` (best first); entrants without a finished table
    follow in the order given."""
    order = [s.player for s in standings_of(config.game, list(logs.values()))]
    ranked = [p for p in order if p in among]
    return ranked + [p for p in among if p not in ranked]


def draw_series(
    config: TournamentConfig,
    state: TournamentState,
    series: int,
    logs: Mapping[str, Sequence[Event]],
    started: bool,
) -> SeriesDrawn | None:
    """The ``SeriesDrawn`` due before series ``series`` begins, or None if it is to be played as
    it stands. ``logs`` are the finished tables' logs (the series before); ``started``: a table
    of this series is open already (a resumed run), so it is never drawn again."""
    if started:
        return None
    drawn = state.series_of(series)
    out = forfeited(logs)
    active = [e for e in config.entrants if e not in out]
    seated = {p for t in drawn for p in t.players}
    if drawn and not seated & out:
        return None
    met = seating.pair_counts(t.players for t in state.tables if t.series < series)
    try:
        sizes = series_sizes(config, len(active))
    except ValueError:
        if drawn:
            return None  # too few left for the game's tables: play the series as drawn
        # A Swiss series not drawn yet: everyone, the forfeited seats played by the default action.
        sizes = series_sizes(config, len(config.entrants))
        seats = seating.swiss(ranking(config, logs, config.entrants), sizes, met, rotate=series - 1)
        reason = f"Swiss: by the standings after series {series - 1}; " + ", ".join(sorted(out))
        reason += " (forfeited) seated all the same: too few others to fill the tables"
        return SeriesDrawn(series=series, tables=series_tables(config, series, seats), reason=reason)
    if config.pairing == "swiss" and not drawn:
        seats = seating.swiss(ranking(config, logs, active), sizes, met, rotate=series - 1)
        reason = f"Swiss: by the standings after series {series - 1}"
        if out:
            reason += "; without " + ", ".join(sorted(out)) + " (forfeited)"
    else:
        # Drawn anew: the rest in the order of the entrants, then changed round so that the
        # fewest pairs meet again (seating.swiss's exchanges, with no standings to keep).
        seats = seating.swiss(active, sizes, met, rotate=series - 1)
        reason = "drawn anew without " + ", ".join(sorted(seated & out)) + " (forfeited)"
    return SeriesDrawn(series=series, tables=series_tables(config, series, seats), reason=reason)


def table_scores(config: TournamentConfig, spec: TableSpec, finished: TableFinished) -> list[float]:
    """Each seat's figure at one finished table, to compare the seats of that table: Skat's
    Seeger-Fabian points there (the seats of one table played the same deals; at a table of four
    the dealer sits out and still scores, as ISkO counts), a game with places its place points."""
    if ranked_by_places(config.game):
        return [float(place_points(p, len(spec.players))) for p in finished.places]
    return [float(sf) for sf in finished.seeger_fabian]


def crosstable(config: TournamentConfig, state: TournamentState) -> dict[str, dict[str, Any]]:
    """For every pair that shared a table: tables shared, how often each finished ahead, and the
    margin (the sum over those tables of the difference of ``table_scores``), as JSON builtins."""
    tables = [
        (spec.players, table_scores(config, spec, state.finished[spec.table]))
        for spec in state.tables
        if spec.table in state.finished
    ]
    cross = seating.crosstable(tables)
    return {a: {b: msgspec.to_builtins(r) for b, r in sorted(row.items())} for a, row in sorted(cross.items())}


def series_standings(
    config: TournamentConfig, state: TournamentState, logs: Mapping[str, Sequence[Event]]
) -> list[dict[str, Any]]:
    """Each series' standings (the tables of that series alone), as JSON builtins."""
    out = []
    for series in range(1, config.series + 1):
        tables = [t.table for t in state.series_of(series) if t.table in logs]
        if not tables:
            continue
        table = standings_of(config.game, [logs[t] for t in tables])
        out.append({"series": series, "tables": tables, "standings": msgspec.to_builtins(table)})
    return out
