"""Faults survive ``--resume``: a tournament interrupted (its run cancelled, as Ctrl-C does) and
resumed reports in results.json every turn its in-process bot failed, before the interruption
too. The counts live in the tournament's log (``faults_counted``), which the results are rebuilt
from, not in the runner's memory."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from protocol import registry
from protocol.events import Event, PlayerTimedOut
from protocol.skat.rules import Rules
from protocol.tournament import FaultsCounted, TournamentConfig, fold_tournament
from services.store import EventStore
from skatbus import tournament
from skatbus.tournament import TournamentLog, run_tournament
from tests.bus import Stack

HERE = "tests.skatbus.test_resume_faults"
BOTS = {"random": "random", "stepping-random": "stepping-random", "SlowRaiser": f"{HERE}:SlowRaiser"}


class SlowRaiser:
    """Thinks a little (so that the tournament is still playing when it is interrupted), then
    raises: every turn of its is a fault, played by the default move."""

    async def act(self, obs: Any) -> Any:
        await asyncio.sleep(0.03)
        raise ZeroDivisionError("a bug in act")


def _counted(events: list[Any]) -> int:
    return sum(e.faults.get("SlowRaiser", 0) for e in events if isinstance(e, FaultsCounted))


def _own_moves(log: list[Event], seat: int) -> int:
    """How many of the log's events are ``seat``'s own moves (its turn, nothing due)."""
    game = registry.get("skat")
    state = game.new_state()
    moves = 0
    for event in log:
        if state.opened and state.to_move == seat and game.due(state) is None:
            moves += 1
        state.apply(event)
    return moves


@pytest.mark.timeout(120)
async def test_faults_counted_before_an_interruption_are_in_the_resumed_results(
    stack: Stack, nc: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tournament.FaultLedger, "EVERY", 0.2)
    config = TournamentConfig(
        id="faulty", entrants=list(BOTS), bots=BOTS, rules=Rules(rounds=2, turn_seconds=30), groups=1, seed="f"
    )
    tlog = TournamentLog(nc)
    first = asyncio.ensure_future(run_tournament(nc, config, out_dir=tmp_path, out=io.StringIO()))
    loop = asyncio.get_running_loop()
    end = loop.time() + 30
    while not _counted(await tlog.read("faulty")):  # the first run's faults are in the log
        assert not first.done() and loop.time() < end, "no faults recorded while the first run played"
        await asyncio.sleep(0.05)
    while not first.done():  # interrupted as Ctrl-C interrupts it (nats-py may swallow a cancel)
        first.cancel()
        await asyncio.wait({first}, timeout=2.0)
    before = await tlog.read("faulty")
    assert not fold_tournament(before).done, "interrupted too late to test a resume"
    counted_before = _counted(before)
    assert counted_before > 0

    results = await run_tournament(nc, resume="faulty", out_dir=tmp_path, out=io.StringIO())
    events = await tlog.read("faulty")
    total = results["faults"]["SlowRaiser"]
    assert total == _counted(events) > counted_before  # both runs', from the log
    assert json.loads((tmp_path / "faulty" / "results.json").read_text())["faults"]["SlowRaiser"] == total
    assert results["faults"]["random"] == results["faults"]["stepping-random"] == 0
    # Every move of the bot's was a failed turn; a turn prompted again after the resume (its
    # default move had not landed yet) is counted twice, at most once per table.
    store = EventStore(nc)
    moves = 0
    for spec in fold_tournament(events).tables:
        log = [s.event for s in await store.read(spec.table) if isinstance(s.event, Event)]
        assert not [e for e in log if isinstance(e, PlayerTimedOut)]
        moves += _own_moves(log, spec.players.index("SlowRaiser"))
    assert moves <= total <= moves + len(fold_tournament(events).tables), (moves, total)
