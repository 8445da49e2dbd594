"""``skat report`` of Thirty-one tables: standings by places, and what each player did.

A Thirty-one table has no score list: it gives places (the last survivor first, then the others
in the reverse order of their elimination, T27, T37, T38), and on the way each deal costs lives.
So the standings are the tournament's own, by place points (``protocol.tournament.
place_standings``: players at the table minus place, per finished table), taken from results.json
when the run was a Thirty-one tournament and computed from the archive otherwise. The statistics
are the game's own: how often a player knocked and how often the knock cost him lives, his 31s
and throw-downs, the value of his hands at showdowns, the lives he lost per deal he was dealt
in, how often he was eliminated.

Everything but recorded standings comes from folding each table's log with the game's engine
(as ``skat replay --verify`` does), up to the first bad event if there is one.

This module computes (plain data); ``report_thirty_one_html`` draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from protocol.events import PlayerTimedOut, TableOpenedV2
from protocol.lifecycle import LogError
from protocol.thirty_one.cards import hand_value, points
from protocol.thirty_one.events import T31DealEnded, T31DealScored, T31Dealt, T31Knocked, T31Threw
from protocol.thirty_one.state import ThirtyOneState
from protocol.tournament import PLACE_POINTS, place_standings

from .replay import TableLog, breaks
from .replay_thirty_one import ENDS, rules_text, steps
from .report import TimeOut


@dataclass
class T31DealLine:
    """One deal of a table as the report's deal list shows it."""

    deal: int
    dealer: str
    seats: list[int]
    """The seats dealt in."""
    end: str
    """How it ended, in words (``showdown, bob knocked``)."""
    lives: list[int]
    coins: list[int]
    kitty: int
    eliminated: list[str]


@dataclass
class T31TableReport:
    table: str
    players: list[str]
    rules: str
    deals: list[T31DealLine] = field(default_factory=list)
    places: list[int] = field(default_factory=list)
    coins: list[int] = field(default_factory=list)
    """At the end (the winner's with the kitty, T36)."""
    kitty: int = 0
    closed: bool = False
    time_outs: list[TimeOut] = field(default_factory=list)
    error: str | None = None
    replay: str | None = None
    """The replay page, relative to the report."""


@dataclass
class T31Stats:
    """One player's counts over every Thirty-one table of the run."""

    tables: int = 0
    deals: int = 0
    """Deals the player was dealt in."""
    knocks: int = 0
    knocks_lost: int = 0
    """Knocks after which the knocker lost a life (alone lowest at the showdown, or a 31)."""
    thirty_ones: int = 0
    throw_downs: int = 0
    throw_downs_lost: int = 0
    showdowns: int = 0
    """Hands shown at showdowns and throw-downs."""
    showdown_points: float = 0.0
    lives: int = 0
    eliminated: int = 0

    @property
    def lives_per_deal(self) -> float | None:
        return self.lives / self.deals if self.deals else None

    @property
    def mean_showdown(self) -> float | None:
        return self.showdown_points / self.showdowns if self.showdowns else None


@dataclass
class T31Report:
    tables: list[T31TableReport]
    players: list[str]
    standings: list[dict[str, Any]]
    """``protocol.tournament.PlaceStanding`` rows, best first."""
    standings_recorded: bool
    """Whether the standings come from results.json (else computed from the archive)."""
    scoring: str
    """How place points are made, in words."""
    stats: dict[str, T31Stats]
    running: dict[str, list[int]]
    """Per player, the lives it lost so far after each deal of the run (tables in order)."""
    starts: list[tuple[int, str]]
    """(deal index in ``running``, table) where each table starts."""


def _end_words(e: T31DealEnded, state: ThirtyOneState) -> str:
    deal = state.deal
    players = state.players
    word = ENDS.get(e.end, e.end)
    if deal is None:
        return word
    if e.end == "thirty_one":
        holders = [players[s] for s, hand in enumerate(e.shown) if hand]
        return f"31 by {' and '.join(holders)}" + (", dealt" if deal.turns == 0 else "")
    if e.end == "showdown" and deal.knocker >= 0:
        return f"showdown, {players[deal.knocker]} knocked"
    if e.end == "throw_down" and deal.thrower >= 0:
        return f"throw-down by {players[deal.thrower]}"
    return word


class _Run:
    """The report being built: the tables one after another into the players' counts."""

    def __init__(self) -> None:
        self.players: list[str] = []
        self.stats: dict[str, T31Stats] = {}
        self.running: dict[str, list[int]] = {}
        self.starts: list[tuple[int, str]] = []
        self.deals = 0

    def player(self, name: str) -> T31Stats:
        if name not in self.stats:
            self.players.append(name)
            self.stats[name] = T31Stats()
            self.running[name] = [0] * (self.deals + 1)
        return self.stats[name]

    def table(self, log: TableLog) -> T31TableReport:
        first = log.events[0] if log.events else None
        players = list(first.players) if isinstance(first, TableOpenedV2) else []
        report = T31TableReport(log.table, players, "")
        self.starts.append((self.deals, log.table))
        state: ThirtyOneState | None = None
        deal_start = 0
        try:
            for step in steps(log):
                state, event = step.state, step.event
                self._event(report, state, event, step.position - deal_start)
                if isinstance(event, T31Dealt):
                    deal_start = step.position
        except LogError as exc:
            report.error = breaks(exc)
        if state is not None and state.opened:
            report.rules = rules_text(state.rules)
            report.places, report.coins, report.kitty = state.places(), list(state.coins), state.kitty
            report.closed = state.closed
            for name in state.players:
                self.player(name).tables += 1
        return report

    def _event(self, report: T31TableReport, state: ThirtyOneState, event: object, step: int) -> None:
        players = state.players
        if isinstance(event, TableOpenedV2):
            for name in players:
                self.player(name)
        elif isinstance(event, T31Dealt):
            for seat in event.order:
                self.player(players[seat]).deals += 1
        elif isinstance(event, T31Knocked):
            self.player(players[event.seat]).knocks += 1
        elif isinstance(event, T31Threw):
            self.player(players[event.seat]).throw_downs += 1
        elif isinstance(event, PlayerTimedOut):
            report.time_outs.append(TimeOut(report.table, state.deal_no, step, players[event.seat]))
        elif isinstance(event, T31DealEnded):
            if event.end == "thirty_one":
                for seat, hand in enumerate(event.shown):
                    if hand:
                        self.player(players[seat]).thirty_ones += 1
            elif event.end in ("showdown", "throw_down"):
                for seat, hand in enumerate(event.shown):
                    if hand:
                        s = self.player(players[seat])
                        s.showdowns += 1
                        s.showdown_points += points(hand_value(hand, state.rules))
            order = sorted(state.deal.order) if state.deal is not None else []
            report.deals.append(
                T31DealLine(event.deal, players[state.dealer], order, _end_words(event, state), [], [], 0, [])
            )
        elif isinstance(event, T31DealScored):
            deal = state.deal
            assert deal is not None
            for seat, lost in enumerate(event.lives):
                self.player(players[seat]).lives += lost
            if deal.knocker >= 0 and event.lives[deal.knocker]:
                self.player(players[deal.knocker]).knocks_lost += 1
            if deal.thrower >= 0 and event.lives[deal.thrower]:
                self.player(players[deal.thrower]).throw_downs_lost += 1
            for seat in event.eliminated:
                self.player(players[seat]).eliminated += 1
            line = report.deals[-1]
            line.lives, line.coins, line.kitty = list(event.lives), list(event.coins), event.kitty
            line.eliminated = [players[s] for s in event.eliminated]
            self.deals += 1
            for name, history in self.running.items():
                seat = players.index(name) if name in players else -1
                history.append(history[-1] + (event.lives[seat] if seat >= 0 else 0))


def build(logs: Sequence[TableLog], recorded: list[dict[str, Any]] | None = None, scoring: str = "") -> T31Report:
    """The Thirty-one part of a report, from the tables' logs in the order given; ``recorded``:
    the standings results.json holds (else they are computed from the logs), ``scoring`` its
    words for place points."""
    run = _Run()
    tables = [run.table(log) for log in logs]
    standings = recorded
    if not standings:  # a table whose log breaks the rules has no places to rank by: its block says why
        good: list[Any] = [log.events for log, t in zip(logs, tables, strict=True) if t.error is None]
        standings = msgspec.to_builtins(place_standings(good))
    return T31Report(
        tables=tables,
        players=run.players,
        standings=standings or [],
        standings_recorded=bool(recorded),
        scoring=scoring or PLACE_POINTS,
        stats=run.stats,
        running=run.running,
        starts=run.starts,
    )
