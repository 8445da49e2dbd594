"""Real, signed run folders for ``skat verify``, built without the bus.

A tournament is created and its nonces given and closed as the runner does it (the
tournament's own events, folded into a ``TournamentState``), every table is played through
the pure engine with the table seed the state gives (``TournamentState.table_seed``) and the
rules the tournament opens it with (``TournamentConfig.table_rules``), and the runner's own
``write_results`` writes the folder. So every file is the real format and nothing in it is
typed in by hand: a check that passes on these files passes on what the runner wrote
(tournament.jsonl and signature.json included: ``write_results`` is given the tournament's
events and the signing key, as the runner gives them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from protocol import fairness, registry
from protocol.events import DealScored, Event, TablePaused, TableResumed
from protocol.series import draw_series
from protocol.skat.rules import Rules
from protocol.thirty_one.events import T31DealScored
from protocol.tournament import (
    NonceGiven,
    NoncesClosed,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    schedule,
    table_finished,
)
from skatbus.bots import make_bot
from skatbus.local import play_game_table, play_table
from skatbus.tournament import write_results

SEED = hashlib.sha256(b"fair runs").hexdigest()
"""The server seed of the fair runs: 256 bits, as ``fairness.new_server_seed`` makes them
(fixed, so that a failing test fails the same way every time)."""


def skat_many() -> TournamentConfig:
    """Seven Skat bots over two series at a table of 4 and one of 3, every table of a series
    on the same deals, under the fair scheme."""
    entrants = [f"bot{i}" for i in range(1, 8)]
    bots = {e: ("heuristic" if i % 2 else "stepping-random") for i, e in enumerate(entrants)}
    return TournamentConfig(
        id="fair-skat",
        entrants=entrants,
        bots=bots,
        rules=Rules(rounds=1, seeger_fabian=True),
        series=2,
        seed=SEED,
        fair=1,
        commitment=fairness.commitment(SEED),
    )


def skat_swiss() -> TournamentConfig:
    """Six Skat bots over two series, the second seated by the standings after the first
    (``series_drawn``), under the fair scheme."""
    entrants = [f"sw{i}" for i in range(1, 7)]
    return TournamentConfig(
        id="fair-swiss",
        entrants=entrants,
        bots={e: ("heuristic" if i % 3 else "stepping-random") for i, e in enumerate(entrants)},
        rules=Rules(rounds=1, seeger_fabian=True),
        series=2,
        pairing="swiss",
        seed=SEED,
        fair=1,
        commitment=fairness.commitment(SEED),
    )


def skat_legacy() -> TournamentConfig:
    """Three Skat bots, one seat set in duplicate rotation, the legacy deals (no commitment);
    one of them misses turns and is withdrawn, and a table is paused once."""
    return TournamentConfig(
        id="legacy-skat",
        entrants=["ann", "bob", "cid"],
        bots={"ann": "heuristic", "bob": "stepping-random", "cid": "stepping-random"},
        rules=Rules(rounds=1, seeger_fabian=True, max_timeouts=3),
        groups=1,
        seed="legacy",
    )


def thirty_one_many() -> TournamentConfig:
    """Six Thirty-one bots at two tables of three in one series, under the fair scheme; the one
    that misses turns (``build``'s ``slow``) is withdrawn after three in a row."""
    entrants = [f"p{i}" for i in range(1, 7)]
    return TournamentConfig(
        id="fair-t31",
        entrants=entrants,
        bots={e: ("heuristic" if i % 2 else "random") for i, e in enumerate(entrants)},
        game="thirty-one",
        game_rules={"coins": 2, "max_deals": 30, "max_timeouts": 3},
        series=1,
        table_size=3,
        seed=SEED,
        fair=1,
        commitment=fairness.commitment(SEED),
    )


@dataclass
class Built:
    """A built run: its folder, the signing key and what went into it."""

    folder: Path
    key: bytes
    config: TournamentConfig
    events: list[TournamentEvent]


def nonce_of(player: str) -> str:
    return hashlib.sha256(f"nonce of {player}".encode()).hexdigest()[:32]


def build(out: Path, config: TournamentConfig, key: bytes, slow: str = "") -> Built:
    """Play ``config``'s tournament and write its signed run folder ``out/<id>``. Under the fair
    scheme every other entrant gives a nonce. ``slow``: an entrant whose every turn times out
    from its second one on (a Skat tournament: it is withdrawn after ``max_timeouts``)."""
    state = TournamentState()
    events: list[TournamentEvent] = []

    def add(event: TournamentEvent) -> None:
        state.apply(event)
        events.append(event)

    # Under the fair scheme every other entrant is "remote" (the configuration names no bot for
    # it, and only such entrants give nonces); the pure engine plays it with the bot it names.
    brains = dict(config.bots)
    if config.fair:
        remote = set(config.entrants[::2])
        config = msgspec.structs.replace(config, bots={p: b for p, b in config.bots.items() if p not in remote})
    add(TournamentCreated(config=config, tables=schedule(config)))
    if config.fair:
        for player in config.entrants[::2]:
            add(NonceGiven(player=player, nonce=nonce_of(player)))
        add(NoncesClosed(nonces=dict(state.nonces), digest=fairness.nonces_digest(state.nonces)))
    logs: dict[str, list[Event]] = {}

    def play_all(specs: Sequence[TableSpec]) -> None:
        for spec in specs:
            logs[spec.table] = play(config, spec, state.table_seed(spec), slow, brains)
        for spec in specs:
            add(table_finished(logs[spec.table]))

    if config.many:  # series after series, each drawn when it is due, as the runner plays them
        for number in range(1, config.series + 1):
            drawn = draw_series(config, state, number, {t: logs[t] for t in state.finished}, started=False)
            if drawn is not None:
                add(drawn)
            play_all(state.series_of(number))
    else:
        play_all(state.tables)
    add(TournamentFinished(tables=len(state.tables)))
    folder = out / config.id
    write_results(config, state, logs, folder, events=events, sign_key=key)
    return Built(folder, key, config, events)


def play(
    config: TournamentConfig, spec: TableSpec, seed: str, slow: str = "", brains: dict[str, str] | None = None
) -> list[Event]:
    """One table through the pure engine (``skatbus.local``), its bots seeded as the runner
    seeds them (``brains``: the bot of each entrant, remote ones included)."""
    rules = config.table_rules(len(spec.players))
    named = brains or config.bots
    bots = [make_bot(named[p], fairness.bot_seed(config.seed, p), config.game) for p in spec.players]
    if slow:
        return play_with_timeouts(config.game, spec.table, spec.players, bots, rules, seed, slow)
    if config.game != "skat":
        return play_game_table(config.game, spec.table, spec.players, bots, rules, seed).log
    return play_table(spec.table, spec.players, bots, rules, seed).log


def play_with_timeouts(
    game_name: str, table: str, players: list[str], bots: Sequence[Any], rules: Any, seed: str, slow: str
) -> list[Event]:
    """``skatbus.local.play_game_table``, except that every turn of ``slow`` but its first
    times out (the time-out, the withdrawal when due and the default action: ``Game.timeout``,
    as the services write them), and the table is paused and resumed after its first scored
    deal."""
    game = registry.get(game_name)
    state = game.new_state()
    log: list[Event] = []

    def append(event: Event) -> None:
        state.apply(event)
        log.append(event)

    append(game.open_event(table, list(players), rules, seed, {}))
    turns, paused = 0, False
    while not state.closed:
        owed = game.due(state)
        if owed is not None:
            append(owed)
            if isinstance(owed, (DealScored, T31DealScored)) and not paused:
                append(TablePaused(reason="the operator's coffee"))
                append(TableResumed())
                paused = True
            continue
        seat = state.to_move
        assert seat is not None, "nothing is due and nobody is to move"
        turns += players[seat] == slow
        if players[seat] == slow and turns > 1:
            events = game.timeout(state)
        else:
            update = game.update_type(view=game.view(state, seat), your_turn=True, index=state.events)
            chosen = game.decide(state, seat, bots[seat].act(update))
            assert isinstance(chosen, list), chosen
            events = chosen
        for event in events:
            append(event)
    return log
