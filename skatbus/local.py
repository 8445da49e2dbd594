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
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due

from .bots import Bot, SteppingRandomBot, observe


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
            print(
                f"[{deals_done:3}/{total_deals}] {run.table} deal {row.deal:2}  {describe(run, row.result)}", file=out
            )

        runs.append(play_table(f"table-{t + 1}", players, bots, rules, f"{seed}/table-{t + 1}", show))
    elapsed = time.perf_counter() - started
    print(file=out)
    print_standings(runs, out)
    print(f"\n{deals_done} deals at {tables} tables in {elapsed:.2f} s through the pure engine.", file=out)
    return runs


def describe(run: TableRun, r) -> str:  # type: ignore[no-untyped-def]
    if r.kind == "passed":
        return "passed in"
    if r.kind == "ramsch":
        return f"ramsch, scores {r.scores}"
    who = run.players[r.declarer]
    outcome = "won" if r.won else ("lost (overbid)" if r.overbid else "lost")
    return f"{who:>10} {str(r.game):<34} {outcome:<14} {r.declarer_points:3} pts  {r.scores[r.declarer]:+5}"


def print_standings(runs: list[TableRun], out: TextIO = sys.stdout) -> None:
    rows = []
    for run in runs:
        s = run.state
        for seat, name in enumerate(run.players):
            declared = [r.result for r in s.sheet if r.result.declarer == seat and r.result.kind == "game"]
            won = sum(1 for g in declared if g.won)
            rows.append((s.sf_totals[seat], name, run.table, s.totals[seat], len(declared), won, len(s.sheet)))
    rows.sort(reverse=True)
    print(
        f"{'#':>2}  {'player':<12} {'table':<8} {'Seeger-Fabian':>13} {'per deal':>9} {'list':>6} {'games':>5} {'won':>4}",
        file=out,
    )
    for i, (sf, name, table, total, games, won, deals) in enumerate(rows, 1):
        print(
            f"{i:>2}  {name:<12} {table:<8} {sf:>13} {sf / max(deals, 1):>9.1f} {total:>6} {games:>5} {won:>4}",
            file=out,
        )
