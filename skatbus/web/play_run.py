"""A table played with ``skat play``, saved as a run like any tournament's.

A person's game is worth keeping: it goes into the runs directory (``runs/<table>/``) with the
files ``skat tournament`` writes (``tournament.write_results``: results.json, standings.csv,
archive.jsonl, tournament.jsonl), as a tournament of one table whose entrants are the person
(a remote entrant: not in ``bots``) and the built-in bots. So ``skat replay
runs/<table>/archive.jsonl`` replays it, ``skat report`` and ``skat ratings`` read it as they
read any run, and nothing new had to be learnt by any of them.

A table stopped before it closed is saved too (its archive holds the deals played so far);
results.json then lists no finished table, so the ratings skip it as not finished.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import msgspec

from protocol.events import Event, TableClosed
from protocol.tournament import (
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentFinished,
    fold_tournament,
    table_finished,
)

from .play_options import SKAT, PlaySpec


def run_id(token: str, now: float | None = None) -> str:
    """``play-<local time>-<token>``: the time sorts the runs directory (and the ratings, by
    ``ratings.run_order``) as it sorts tournaments' ``t-<time>-…`` ids."""
    return f"play-{time.strftime('%y%m%d-%H%M%S', time.localtime(now))}-{token}"


def save_run(spec: PlaySpec, table: str, seed: str, log: list[Event], runs: Path) -> Path:
    """Write ``log`` (the table's events) as the run ``runs/<table>``; its directory."""
    from ..tournament import write_results

    config = TournamentConfig(
        id=table,
        entrants=spec.players,
        bots=dict(zip(spec.ids, spec.bots, strict=True)),
        game=spec.game,
        groups=1,
        duplicate=False,
        seed=seed,
        **_rules(spec),
    )
    events: list[Any] = [
        TournamentCreated(config=config, tables=[TableSpec(table=table, players=spec.players, seed=seed)])
    ]
    if log and isinstance(log[-1], TableClosed):
        events += [table_finished(log), TournamentFinished(tables=1)]
    out = runs / table
    write_results(config, fold_tournament(events), {table: log}, out, events=events)
    return out


def _rules(spec: PlaySpec) -> dict[str, Any]:
    if spec.game == SKAT:
        return {"rules": spec.rules}
    return {"game_rules": msgspec.to_builtins(spec.rules)}
