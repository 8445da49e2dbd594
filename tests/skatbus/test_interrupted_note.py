"""What the interrupted line says when the open tables could not be paused: against a separate
server their clocks run on; on the built-in stack, which stops with the runner, no clock runs
until the next run on its store starts the services again."""

from __future__ import annotations

import asyncio

from protocol.skat.rules import Rules
from protocol.tournament import TournamentConfig
from services.connection import ConnectionSettings
from services.natsserver import free_port
from skatbus.tournament_cli import _pause_interrupted


async def test_the_note_says_whether_the_clocks_run_on() -> None:
    config = TournamentConfig(id="gone", entrants=["a", "b", "c"], rules=Rules(rounds=1, seeger_fabian=True))
    settings = ConnectionSettings((f"nats://127.0.0.1:{free_port()}",))  # nobody there: the pause fails
    separate, local = await asyncio.gather(
        _pause_interrupted(config, settings, asyncio.Event()),
        _pause_interrupted(config, settings, asyncio.Event(), local="runs/store"),
    )
    assert "their clocks run on until `skat pause gone`" in separate, separate
    assert local.startswith("; its tables could not be paused ("), local
    assert "run on" not in local and "no clock runs while the built-in stack is stopped" in local, local
    assert "the next `skat tournament` on runs/store starts them again" in local, local
