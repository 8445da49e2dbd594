"""A local tournament through the pure engine, no bus: what ``make run`` shows until the
services carry tables over NATS. Every table is still a real event log folded by ``protocol``.

``play_game_table`` plays a table of any registered game the same way, through the game's
interface (``protocol.game.Game``: ``due``, ``decide``, ``view``): what a tournament over the
bus plays, without the bus, so its logs can be checked against the runner's."""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from protocol import registry
from protocol.events import Event, TableOpened
from protocol.skat.decide import Rejection, decide
from protocol.skat.games import GAME_NAMES, Declaration
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due

from .bots import Bot, SteppingRandomBot, observe
from .standings_text import Column, table, wrapped


@dataclass
class TableRun:
    table: str
    players: list[str]
    state: TableState = field(default_factory=TableState)
    log: list[Event] = field(default_factory=list)

    def append(self, event: Event) -> None:
        self.state.apply(event)
        self.log.append(event)


def play_table(
    table: str,
    players: list[str],
    bots: list[Bot],
    rules: Rules,
    seed: str,
    on_deal: Callable[[TableRun], None] | None = None,
) -> TableRun:
    """Play one table to its end: derived events from ``due``, player actions from the bots
    (synchronous bots only: this is the pure engine, with no event loop)."""
    run = TableRun(table, players)
    run.append(TableOpened(table=table, players=players, rules=rules, seed=seed))
    state = run.state
    while not state.closed:
        owed = due(state)
        if owed is not None:
            run.append(owed)
            if on_deal is not None and state.scored and owed.__class__.__name__ == "DealScored":
                on_deal(run)
            continue
        seat = state.to_move
        assert seat is not None
        action = bots[seat].act(observe(state, seat))
        if inspect.isawaitable(action):  # an async bot needs an event loop: play it over the bus
            raise TypeError(f"bot {players[seat]} is async; the pure-engine runner needs a plain act()")
        events = decide(state, seat, action)
        if isinstance(events, Rejection):
            raise RuntimeError(f"bot {players[seat]} chose an illegal action: {events.reason}")
        for event in events:
            run.append(event)
    return run


@dataclass
class GameRun:
    """A table of any game played through the pure engine: its log and its final state."""

    table: str
    players: list[str]
    state: Any
    log: list[Event] = field(default_factory=list)

    def append(self, event: Event) -> None:
        self.state.apply(event)
        self.log.append(event)


def play_game_table(
    game_name: str, table: str, players: list[str], bots: Sequence[Any], rules: Any, seed: str
) -> GameRun:
    """Play one table of ``game_name`` to its end: derived events from the game's ``due``,
    each seat's action from its bot (synchronous bots only). A bot is handed the update a
    remote bot gets over the bus (the game's ``update_type``: its view of the seat, with the
    log position as ``index``), so a deterministic bot plays the same table both ways."""
    game = registry.get(game_name)
    run = GameRun(table, list(players), game.new_state())
    run.append(game.open_event(table, list(players), rules, seed, {}))
    state = run.state
    while not state.closed:
        owed = game.due(state)
        if owed is not None:
            run.append(owed)
            continue
        seat = state.to_move
        if seat is None:
            raise RuntimeError(f"table {table}: nothing is due and nobody is to move")
        update = game.update_type(view=game.view(state, seat), your_turn=True, index=state.events)
        action = bots[seat].act(update)
        if inspect.isawaitable(action):
            raise TypeError(f"bot {players[seat]} is async; the pure-engine runner needs a plain act()")
        events = game.decide(state, seat, action)
        if not isinstance(events, list):
            raise RuntimeError(f"bot {players[seat]} chose an illegal action: {getattr(events, 'reason', events)}")
        for event in events:
            run.append(event)
    return run


def run_local_tournament(
    tables: int = 3, rounds: int = 4, seed: str = "skatbus", out: TextIO = sys.stdout
) -> list[TableRun]:
    """Random bots at ``tables`` tables; print each deal as it is scored and the standings."""
    rules = Rules(rounds=rounds, seeger_fabian=True)
    runs = []
    started = time.perf_counter()
    deals_done = 0
    total_deals = tables * rules.deals
    for t in range(tables):
        players = [f"random-{t * 3 + i + 1}" for i in range(3)]
        bots: list[Bot] = [SteppingRandomBot(f"{seed}/{t}/{i}") for i in range(3)]

        def show(run: TableRun) -> None:
            nonlocal deals_done
            deals_done += 1
            row = run.state.sheet[-1]
            print(f"[{deals_done:3}/{total_deals}] {run.table} {row.deal:2}  {describe(run, row.result)}", file=out)

        runs.append(play_table(f"table-{t + 1}", players, bots, rules, f"{seed}/table-{t + 1}", show))
    elapsed = time.perf_counter() - started
    print(file=out)
    print_standings(runs, out)
    print(f"\n{deals_done} deals at {tables} tables in {elapsed:.2f} s through the pure engine.", file=out)
    return runs


def describe(run: TableRun, r) -> str:  # type: ignore[no-untyped-def]
    """One scored deal in at most the 80 columns' room left after its ``[n/N] table deal``:
    announcements the game implies are left out, the rest shortened, where the words would
    not fit (``diamonds hand schneider schwarz ouvert`` is ``diamonds ouvert``)."""
    if r.kind == "passed":
        return "passed in"
    if r.kind == "ramsch":
        return f"ramsch, scores {r.scores}"
    who = run.players[r.declarer]
    outcome = "won" if r.won else ("overbid" if r.overbid else "lost")
    return f"{who:>10} {short_game(r.game):<23} {outcome:<7} {r.declarer_points:3} pts {r.scores[r.declarer]:+5}"


def short_game(game: Declaration) -> str:
    """The declaration in at most 23 characters: in full where it fits; else an ouvert suit
    game or grand played hand with schwarz announced as ``X ouvert`` (what ouvert means), and
    schwarz announced without the schneider it implies."""
    full = str(game)
    if len(full) <= 23 or game.is_null:
        return full
    if game.ouvert and game.hand and game.schwarz:
        return f"{GAME_NAMES[game.game]} ouvert"
    return full.replace("schneider schwarz", "schwarz").replace("schneider", "schn.")


def print_standings(runs: list[TableRun], out: TextIO = sys.stdout) -> None:
    """The players of every table, best first by Seeger-Fabian points, in at most 80 columns
    (``standings_text``), and what the columns mean."""
    rows = []
    for run in runs:
        s = run.state
        for seat, name in enumerate(run.players):
            declared = [r.result for r in s.sheet if r.result.declarer == seat and r.result.kind == "game"]
            won = sum(1 for g in declared if g.won)
            passed = sum(1 for r in s.sheet if r.result.kind == "passed")
            ramsch = sum(1 for r in s.sheet if r.result.kind == "ramsch")
            rows.append(
                (s.sf_totals[seat], name, run.table, s.totals[seat], len(declared), won, len(s.sheet), passed, ramsch)
            )
    rows.sort(reverse=True)
    columns = [
        Column("table", [r[2] for r in rows], left=True),
        Column("SF", [f"{r[0]:+d}" for r in rows]),
        Column("SF/deal", [f"{r[0] / max(r[6], 1):+.1f}" for r in rows]),
        Column("list", [f"{r[3]:+d}" for r in rows]),
        Column("won/decl", [f"{r[5]}/{r[4]}" for r in rows]),
    ]
    legend = [
        "SF: Seeger-Fabian points",
        "SF/deal: per deal",
        "list: the score list's points",
        "won/decl: games won of those declared",
    ]
    if any(r[7] for r in rows):
        columns.append(Column("passed", [str(r[7]) for r in rows]))
        legend.append("passed: deals passed in at its table")
    if any(r[8] for r in rows):
        columns.append(Column("ramsch", [str(r[8]) for r in rows]))
        legend.append("ramsch: Ramsch deals at its table")
    lines, _ = table([r[1] for r in rows], columns)
    lines.extend(wrapped("(" + "; ".join(legend) + ".)", indent=" "))
    for line in lines:
        print(line, file=out)
