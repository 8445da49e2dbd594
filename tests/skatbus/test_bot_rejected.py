"""The guard's last line, through the real services: a bot whose illegal answer gets past the
guard's own check (``bot_guard.judge`` trusts ``view.legal``, and this bot writes its answer
into the view it was handed) is refused by the services as illegal; the turn is then a fault
(``rejected``), one ``bot_fault`` line, and the default move goes at once, so the table never
waits for the seat's clock."""

from __future__ import annotations

from typing import Any

import pytest
import structlog
from nats.aio.client import Client

from protocol import registry
from protocol.events import PlayerTimedOut
from protocol.skat import commands as sc
from protocol.skat.rules import Rules
from protocol.wire import OpenTable
from skatbus.bot_guard import REJECTED
from skatbus.bots import make_bot
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed

PLAYERS = ["ann", "bob", "cyd"]


class SmugglingBot:
    """Answers every turn with a bid of 1 (on no ladder: never legal), after adding it to its
    view's ``legal``, so that the guard lets it through to the services."""

    def __init__(self) -> None:
        self.turns = 0

    def act(self, obs: Any) -> Any:
        self.turns += 1
        illegal = sc.Bid(value=1)
        obs.view.legal.append(illegal)
        return illegal


@pytest.mark.timeout(120)
async def test_a_command_the_services_refuse_is_a_fault_and_the_default_move_follows(stack: Stack, nc: Client) -> None:
    smuggler = SmugglingBot()
    players = [
        RemotePlayer(nc, "ann", make_bot("random", "a")),
        RemotePlayer(nc, "bob", smuggler),
        RemotePlayer(nc, "cyd", make_bot("random", "c")),
    ]
    with structlog.testing.capture_logs() as logged:
        for p in players:
            await p.start()
        try:
            # 60 s per move: a turn left to the clock would outlast the wait below.
            rules = Rules(rounds=1, turn_seconds=60)
            assert (await open_table(nc, OpenTable(table="smuggle", players=PLAYERS, rules=rules, seed="s"))).ok
            log = await wait_closed(nc, "smuggle", timeout=45)
        finally:
            for p in players:
                await p.stop()
    bob = players[1]
    assert smuggler.turns > 0
    assert bob.faults == smuggler.turns and bob.bot.by_fault == {REJECTED: smuggler.turns}
    assert len(bob.rejections) == smuggler.turns and {r.code for r in bob.rejections} == {"illegal"}
    lines = [e for e in logged if e["event"] == "bot_fault"]
    assert len(lines) == smuggler.turns and {(e["player"], e["fault"]) for e in lines} == {("bob", REJECTED)}
    assert all(e["error"].startswith("illegal: ") and e["index"] >= 0 for e in lines)
    assert not [e for e in log if isinstance(e, PlayerTimedOut)]
    # Every move of bob's in the log is the default move the services would have played.
    game = registry.get("skat")
    state = game.new_state()
    seat = PLAYERS.index("bob")
    moves = 0
    for i, event in enumerate(log):
        if state.to_move == seat and game.due(state) is None:
            expected = game.decide(state, seat, game.default_action(state, seat))
            assert isinstance(expected, list) and expected[0] == event, (i, event, expected)
            moves += 1
        state.apply(event)
    assert moves == smuggler.turns
