"""A tournament run on disk, played through the pure engine in well under a second.

``skat report`` and the archive-wide replay read what the tournament runner writes
(runs/<id>/results.json and archive.jsonl). Playing the tables over the bus takes a broker and
the services; the pure engine plays the same schedule with the same seeds, and the runner's own
``write_results`` writes it, so the files are the real format, not an imitation of it.
"""

from __future__ import annotations

from pathlib import Path

from protocol.events import Event, TableOpened
from protocol.skat.decide import Rejection, decide, timeout
from protocol.skat.rules import Rules
from protocol.skat.table import due
from protocol.tournament import TableFinished, TournamentConfig, TournamentCreated, TournamentState, schedule
from skatbus.bots import Bot, make_bot, observe
from skatbus.local import TableRun
from skatbus.tournament import write_results

BOTS = {"heuristic": "heuristic", "stepping": "stepping-random", "random": "random"}
"""Entrant -> built-in bot, as ``skat run`` seats them by default."""


def play(table: str, players: list[str], bots: list[Bot], rules: Rules, seed: str, slow: str, every: int) -> TableRun:
    """``skatbus.local.play_table``, except that every ``every``-th turn of ``slow`` times out
    (``protocol.decide.timeout``: the time-out event and the default action, as the play
    service writes them), so a run has time-outs to report."""
    run = TableRun(table, players)
    run.append(TableOpened(table=table, players=players, rules=rules, seed=seed))
    state, turns = run.state, 0
    while not state.closed:
        owed = due(state)
        if owed is not None:
            run.append(owed)
            continue
        seat = state.to_move
        assert seat is not None
        if players[seat] == slow:
            turns += 1
        if players[seat] == slow and every and turns % every == 0:
            events = timeout(state)
            assert events is not None
        else:
            chosen = decide(state, seat, bots[seat].act(observe(state, seat)))  # type: ignore[arg-type]
            assert not isinstance(chosen, Rejection), chosen.reason
            events = chosen
        for event in events:
            run.append(event)
    return run


def make_run(
    out: Path, tid: str = "t-local", rounds: int = 3, groups: int = 2, slow: str = "random", every: int = 0
) -> Path:
    """Play a duplicate tournament with Kontra, Re, Bock and Ramsch on; returns runs/<tid>/.
    With ``every`` > 0, every ``every``-th turn of the entrant ``slow`` times out."""
    config = TournamentConfig(
        id=tid,
        entrants=list(BOTS),
        bots=BOTS,
        rules=Rules(rounds=rounds, seeger_fabian=True, kontra=True, bock=True, ramsch=True),
        groups=groups,
        seed="report",
    )
    state = TournamentState()
    tables = schedule(config)
    state.apply(TournamentCreated(config=config, tables=tables))
    logs: dict[str, list[Event]] = {}
    for spec in tables:
        bots = [make_bot(config.bots[p], f"{config.seed}/{p}") for p in spec.players]
        run = play(spec.table, spec.players, bots, config.rules, spec.seed, slow, every)
        logs[spec.table] = run.log
        s = run.state
        state.apply(TableFinished(table=spec.table, deals=len(s.sheet), totals=s.totals, seeger_fabian=s.sf_totals))
    write_results(config, state, logs, out / tid)
    return out / tid
