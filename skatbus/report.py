"""``skat report RUN``: a finished tournament as one page a person would rather look at.

The runner leaves ``runs/<id>/results.json`` (config, standings) and ``archive.jsonl`` (every
table's events). The report takes the standings from results.json, the record of the run, and
everything else from the archive, folded and checked like ``skat replay --verify`` does: the
running score, the games by type, the time-outs and where they happened. Each table also gets
its step-by-step replay page (``replay_html``) next to the report, and the report links into
them by deal, so a number on the page is one click from the cards that made it.

This module reads and computes (``Report`` is plain data); ``report_html`` draws it and
``report_cli`` writes the pages (``skat report``).

A run or an archive may hold tables of another game than Skat: each table is read with its
game (``replay.log_game``). The Skat part of the report is computed here from the Skat tables
only, so it is what it would be without the others; the Thirty-one tables get their own part
(``report_thirty_one``: places instead of a score list). An archive can be reported on without
a results.json (the standings are then computed from it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from protocol.events import DealDealt, DealScored, PlayerTimedOut, UnknownEvent
from protocol.skat.games import skat_order
from protocol.skat.scoring import DealResult
from protocol.skat.table import LogError
from protocol.tournament import standings as compute_standings

from .replay import TableLog, breaks, doublings, game_title, log_game, read_archive, replay
from .think_times import archive_think_times

if TYPE_CHECKING:
    from .report_thirty_one import T31Report

GAME_NAMES = {"G": "grand", "C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "N": "null"}
CATEGORIES = (*sorted(GAME_NAMES.values(), key=skat_order), "ramsch", "defending")
"""The columns of the by-game table: the games a player declared, the Ramsch deals it sat
through (won = not a loser) and the games it defended (won = the declarer lost)."""


class ReportError(ValueError):
    """A run directory the report cannot be made from: one line, exit 2."""


@dataclass
class DealLine:
    deal: int
    declarer: str
    game: str
    outcome: str
    doubled: str
    scores: list[int]
    seeger_fabian: list[int]


@dataclass
class TimeOut:
    table: str
    deal: int
    step: int
    """The event's step in its deal on the replay page (``#deal=D&step=S``)."""
    player: str


@dataclass
class TableReport:
    table: str
    players: list[str]
    deals: list[DealLine] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    seeger_fabian: list[int] = field(default_factory=list)
    time_outs: list[TimeOut] = field(default_factory=list)
    error: str | None = None
    replay: str | None = None
    """The replay page, relative to the report."""


@dataclass
class Tally:
    played: int = 0
    won: int = 0
    points: int = 0
    """List points from these deals."""


@dataclass
class Report:
    tournament: str
    config: dict[str, Any]
    standings: list[dict[str, Any]]
    tables: list[TableReport]
    players: list[str]
    running: dict[str, list[int]]
    """Per player, its Seeger-Fabian total after each deal of the run (tables in order)."""
    starts: list[tuple[int, str]]
    """(deal index in ``running``, table) where each table starts."""
    by_game: dict[str, dict[str, Tally]]
    time_outs: dict[str, int]
    time_outs_recorded: bool
    """Whether the counts come from results.json (else from the archive's time-out events)."""
    answered: dict[str, int] = field(default_factory=dict)
    """Turns each player answered in time, where results.json says."""
    refused: dict[str, int] = field(default_factory=dict)
    """Commands the services refused, per player, where results.json says."""
    warnings: list[str] = field(default_factory=list)
    thirty_one: T31Report | None = None
    """The run's Thirty-one tables, if it has any."""
    think_times: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per player, its moves' think times from the archive's stored times, as results.json's
    ``think_times`` (``skatbus.think_times``): empty for an archive without them."""
    disagreements: list[str] = field(default_factory=list)
    """Where results.json disagrees with the archive (``verify.check_results``), one line per
    field: the page then says so at the top and shows the archive's standings."""
    damaged: list[str] = field(default_factory=list)
    """The archive's damaged lines (one warning each, also among ``warnings``) and whether that
    kept results.json from being checked: ``skat report`` prints them."""


# --- reading -------------------------------------------------------------------------------


def run_files(run: Path) -> tuple[Path | None, Path]:
    """results.json and archive.jsonl of a run directory (or of the results.json given); an
    archive file given by itself has no results.json (None)."""
    if run.is_file() and run.name != "results.json":
        return None, run
    directory = run.parent if run.name == "results.json" else run
    results, archive = directory / "results.json", directory / "archive.jsonl"
    if not directory.is_dir():
        raise ReportError(f"{run}: no such run directory (give runs/<id>/)")
    for needed in (results, archive):
        if not needed.is_file():
            raise ReportError(f"{run}: no {needed.name} (a tournament run writes runs/<id>/ with both)")
    return results, archive


def time_outs_recorded(results: dict[str, Any]) -> dict[str, int] | None:
    """Per-player time-out counts if results.json holds them: a top-level mapping or list, or
    a field of each standings row, under any name with "timeout", "time_out" or "timed_out"."""

    def timing(key: str) -> bool:
        k = key.lower().replace("_", "").replace("-", "")
        return "timeout" in k or "timedout" in k

    def count(value: Any) -> int | None:
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, dict):
            for k in ("count", "total", "n"):
                if isinstance(value.get(k), int):
                    return int(value[k])
        if isinstance(value, list):
            return len(value)
        return None

    for key, value in results.items():
        if not timing(key):
            continue
        if isinstance(value, dict):
            found = {str(p): c for p, v in value.items() if (c := count(v)) is not None}
            if found:
                return found
        if isinstance(value, list):
            found = {
                str(row["player"]): c
                for row in value
                if isinstance(row, dict) and "player" in row and (c := count(row)) is not None
            }
            if found:
                return found
    rows = [r for r in results.get("standings", []) if isinstance(r, dict)]
    found = {}
    for row in rows:
        for key, value in row.items():
            if timing(key) and (c := count(value)) is not None:
                found[str(row.get("player"))] = c
    return found or None


# --- computing -----------------------------------------------------------------------------


def _deal_line(r: DealResult, players: list[str], deal: int) -> DealLine:
    if r.kind == "game" and r.declarer is not None:
        declarer, game = players[r.declarer], str(r.game)
        outcome = "won" if r.won else ("lost (overbid)" if r.overbid else "lost")
    elif r.kind == "ramsch" and r.ramsch is not None:
        declarer, game = "", "Ramsch"
        outcome = (
            f"Durchmarsch by {players[r.ramsch.durchmarsch]}"
            if r.ramsch.durchmarsch is not None
            else "lost by " + ", ".join(players[s] for s in r.ramsch.losers)
        )
    else:
        declarer, game, outcome = "", "passed in", ""
    return DealLine(deal, declarer, game, outcome, doublings(r), list(r.scores), list(r.seeger_fabian))


def _tally(by_game: dict[str, dict[str, Tally]], r: DealResult, players: list[str], active: list[int]) -> None:
    """Count one deal for the players who took part in it (``active``: at a four-player
    table the dealer sits the deal out)."""

    def add(player: str, category: str, won: bool, points: int) -> None:
        t = by_game.setdefault(player, {}).setdefault(category, Tally())
        t.played += 1
        t.won += won
        t.points += points

    if r.kind == "game" and r.declarer is not None and r.game is not None:
        for seat in active:
            if seat == r.declarer:
                add(players[seat], GAME_NAMES.get(r.game.game, r.game.game), r.won, r.scores[seat])
            else:
                add(players[seat], "defending", not r.won, r.scores[seat])
    elif r.kind == "ramsch" and r.ramsch is not None:
        for seat in active:
            add(players[seat], "ramsch", seat not in r.ramsch.losers, r.scores[seat])


def table_report(log: TableLog) -> tuple[TableReport, list[tuple[DealResult, list[int]]]]:
    """One table folded: its deals, totals and time-outs (up to a bad event, if any), and
    each deal's result with the seats that played it."""
    players = list(getattr(log.events[0], "players", [])) if log.events else []
    report = TableReport(log.table, players)
    results: list[tuple[DealResult, list[int]]] = []
    deal_start = 0
    try:
        for step in replay(log):
            event, state = step.event, step.state
            if isinstance(event, DealDealt):
                deal_start = step.position
            elif isinstance(event, PlayerTimedOut):
                player = state.players[event.seat] if 0 <= event.seat < len(state.players) else f"seat {event.seat}"
                report.time_outs.append(TimeOut(log.table, state.deal_no, step.position - deal_start, player))
            elif isinstance(event, DealScored):
                results.append((event.result, list(state.seats)))
                report.deals.append(_deal_line(event.result, state.players, event.deal))
            report.totals, report.seeger_fabian = list(state.totals), list(state.sf_totals)
    except LogError as exc:
        report.error = breaks(exc)
    return report, results


def _games(logs: dict[str, TableLog]) -> dict[str, dict[str, TableLog]]:
    """The logs by game, each game's tables in the archive's order."""
    out: dict[str, dict[str, TableLog]] = {}
    for table, log in logs.items():
        out.setdefault(log_game(log), {})[table] = log
    return out


def _answered(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Turns answered in time per player, where standings rows say (of every game)."""
    out: dict[str, int] = {}
    for r in rows:
        if isinstance(r.get("answered"), int):
            out[str(r["player"])] = out.get(str(r["player"]), 0) + r["answered"]
    return out


def _name_of(results_path: Path | None, archive_path: Path) -> str:
    """The run's name when results.json does not give one: its directory's."""
    if results_path is not None or archive_path.name == "archive.jsonl":
        return (results_path or archive_path).parent.name
    return archive_path.stem


def _disagreements(
    results_path: Path | None, results: dict[str, Any], logs: dict[str, TableLog], damaged: list[str]
) -> list[str]:
    """Where results.json disagrees with the archive (and the tournament's log beside it), one
    line per field; a warning instead when the archive cannot be read whole (then it is no
    truth to check against either). A table with an event of a newer skatbus (a newer
    ``table_opened`` above all) is not read whole either: its standings would be missing."""
    if results_path is None or not results:
        return []
    unread = [
        t for t, log in logs.items() if log.problem is not None or any(isinstance(e, UnknownEvent) for e in log.events)
    ]
    if unread or damaged:
        damaged.append(
            f"results.json is not checked against the archive: {len(unread) or 'some'} table(s) cannot be read whole"
        )
        return []
    from .verify import check_results, tournament_of

    tournament = tournament_of(results_path.parent / "tournament.jsonl")
    return check_results(results, {t: log.events for t, log in logs.items()}, tournament)


def build_report(results_path: Path | None, archive_path: Path) -> tuple[Report, dict[str, TableLog]]:
    """The report's data, and the tables' logs (for their replay pages); ``results_path`` None:
    the archive alone."""
    results: dict[str, Any] = {}
    if results_path is not None:
        try:
            results = json.loads(results_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReportError(f"{results_path}: not JSON: {exc}") from None
    damaged: list[str] = []
    every = read_archive(archive_path, warnings=damaged)
    if not every:
        raise ReportError(f"{archive_path}: no events")
    disagreements = _disagreements(results_path, results, every, damaged)
    if disagreements:  # the archive is the truth: its standings are shown, not the edited ones
        results = {k: v for k, v in results.items() if k != "standings"}
    games = _games(every)
    logs = games.pop("skat", {})
    t31_logs = games.pop("thirty-one", {})
    config = results.get("config") or {}
    players: list[str] = list(config.get("entrants") or [])
    tables: list[TableReport] = []
    running: dict[str, list[int]] = {}
    starts: list[tuple[int, str]] = []
    by_game: dict[str, dict[str, Tally]] = {}
    deals_so_far = 0
    for log in logs.values():
        table, sheet = table_report(log)
        tables.append(table)
        for p in table.players:
            if p not in players:
                players.append(p)
        starts.append((deals_so_far, table.table))
        for r, active in sheet:
            for p in players:
                history = running.setdefault(p, [0] * (deals_so_far + 1))
                gained = r.seeger_fabian[table.players.index(p)] if p in table.players else 0
                history.append(history[-1] + gained)
            deals_so_far += 1
            _tally(by_game, r, table.players, active)
    for p in players:  # a player first seen at a later table: zeros before it
        running[p] = ([0] * (deals_so_far + 1 - len(running.get(p, [])))) + running.get(p, [])
    recorded_game = str(results.get("game") or "skat")
    standings = results.get("standings") if recorded_game == "skat" else None
    if not logs:
        standings = []
    elif not isinstance(standings, list) or not standings:
        events = [log.events for log in logs.values()]
        standings = msgspec.to_builtins(compute_standings(events))  # type: ignore[arg-type]
    thirty_one = None
    if t31_logs:  # imported here: report_thirty_one builds on this module's TimeOut
        from .report_thirty_one import build as build_thirty_one

        recorded = results.get("standings") if recorded_game == "thirty-one" else None
        thirty_one = build_thirty_one(
            list(t31_logs.values()),
            recorded if isinstance(recorded, list) else None,
            str(results.get("scoring") or ""),
        )
    everyone = players + [p for p in (thirty_one.players if thirty_one else []) if p not in players]
    recorded = time_outs_recorded(results)
    counted: dict[str, int] = {p: 0 for p in everyone}
    for found in [t.time_outs for t in tables] + [t.time_outs for t in (thirty_one.tables if thirty_one else [])]:
        for out in found:
            counted[out.player] = counted.get(out.player, 0) + 1
    warnings = [*damaged, *(str(w) for w in results.get("warnings") or [])]
    for game, others in games.items():  # the games the report cannot show
        warnings.append(f"{len(others)} table(s) of {game_title(game)!r} left out: the report cannot show that game")
    report = Report(
        tournament=str(results.get("tournament") or _name_of(results_path, archive_path)),
        config=config,
        standings=standings,
        tables=tables,
        players=players,
        running=running,
        starts=starts,
        by_game=by_game,
        time_outs=counted if recorded is None else {p: recorded.get(p, counted.get(p, 0)) for p in everyone},
        time_outs_recorded=recorded is not None,
        answered=_answered([*standings, *(thirty_one.standings if thirty_one else [])]),
        refused={str(p): n for p, n in (results.get("refused") or {}).items() if isinstance(n, int) and n},
        warnings=warnings,
        thirty_one=thirty_one,
        think_times=archive_think_times(archive_path),
        disagreements=disagreements,
        damaged=damaged,
    )
    return report, {**logs, **t31_logs}
