"""A seat's clock in its updates, through the real services: at a time-controlled table of each
game every prompt carries the budget left (``clock``), the ``increment`` and the per-move
``turn_seconds``, equal to the fold of the log's stored times (the services' own clock, not a
second one), and the budget goes down from one prompt of a seat to its next. One seat reads
JSON, the others msgpack (decoded into the Python update types bots get). An old client that
knows none of these fields still reads the updates, and the schema lists them."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any

import msgspec
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import registry
from protocol.clocks import SeatClocks, TimeControl, seat_clock
from protocol.events import Event
from protocol.schema import THIRTY_ONE, player_schema
from protocol.skat.rules import Rules
from protocol.subjects import parse_view_subject, view_subject
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.thirty_one.views import ThirtyOneUpdate
from protocol.wire import OpenTable, Update
from services.store import EventStore
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed

CONTROL = TimeControl(budget=30.0, increment=0.01)
THINK = 0.03
"""Seconds the first seat's bot thinks (the next seat's twice that, ...): more than the
increment, so each move lowers the budget, and by another amount at every seat."""
SLACK = 0.005
"""Seconds of rounding (the update's clock has 3 decimals) and clock reads, on top of the bound
measured per event (``drift_bounds``)."""
TABLES: dict[str, tuple[list[str], Any]] = {
    "skat": (["ann", "bob", "cyd"], Rules(rounds=1, turn_seconds=20.0, time_control=CONTROL)),
    "thirty-one": (["ann", "bob"], ThirtyOneRules(coins=1, turn_seconds=20.0, time_control=CONTROL)),
}
JSON_SEAT = "ann"


def drift_bounds(stamps: list[float], sent: dict[int, float]) -> list[float]:
    """How far, at most, the services' fold of each event may be from the fold of its stamp.

    The service that appends an event folds it at its own time just before the append
    (``services.runtime``: the deadline it enforces is never later than the stamp's), the
    server stamps it when stored. That moment is after what caused the event: the player's
    command (sent at ``sent[i]``, a little earlier still) or, for an event the services derive,
    the event before it (stored at ``stamps[i - 1]``). So the fold's time of event ``i`` lies
    within ``stamps[i] - cause`` before its stamp: a few ms on an idle machine, tens under load.
    Measured per event, so the test holds as tightly as the machine allows, loaded or not."""
    bounds = []
    for i, stamp in enumerate(stamps):
        cause = sent.get(i, stamps[i - 1] if i else stamp)
        bounds.append(max(0.0, stamp - cause))
    return bounds


class Thinker:
    """Thinks ``think`` seconds, then plays a hashed choice of ``view.legal`` (either game),
    noting when it answered each prompt (by the log position its move takes) in ``sent``."""

    def __init__(self, name: str, think: float, sent: dict[int, float]) -> None:
        self.name, self.think, self.sent = name, think, sent

    async def act(self, obs: Any) -> Any:
        await asyncio.sleep(self.think)
        self.sent[obs.index] = time.time()
        legal = list(obs.view.legal)
        digest = hashlib.sha256(f"{self.name}:{obs.index}".encode()).digest()
        return legal[int.from_bytes(digest[:8], "big") % len(legal)]


class OldUpdate(msgspec.Struct, kw_only=True):
    """An update as a client written before the clock fields reads it."""

    view: dict[str, Any]
    your_turn: bool = False
    deadline: float = 0.0
    index: int = 0


@pytest.mark.parametrize("game_name", sorted(TABLES))
async def test_prompts_carry_the_folded_clock(stack: Stack, nc: Client, game_name: str) -> None:
    players, rules = TABLES[game_name]
    table = f"clock-{game_name}"
    heard: list[tuple[str, bytes]] = []
    sent: dict[int, float] = {}
    movers: dict[int, int] = {}

    async def record(msg: Msg) -> None:
        heard.append((parse_view_subject(msg.subject)[0], msg.data))

    subs = [await nc.subscribe(view_subject(p, table), cb=record) for p in players]
    seated = [RemotePlayer(nc, p, Thinker(p, THINK * (i + 1), sent)) for i, p in enumerate(players)]
    for p in seated:
        await p.start()
    try:
        request = OpenTable(
            table=table, players=players, rules=rules, game=game_name, seed="clock", formats={JSON_SEAT: "json"}
        )
        assert (await open_table(nc, request)).ok
        await wait_closed(nc, table, timeout=60)
    finally:
        for p in seated:
            await p.stop()
        for sub in subs:
            await sub.unsubscribe()
    assert all(p.faults == 0 and not p.rejections for p in seated)

    # The services' clock, folded from the stored times: after each number of events, every seat's.
    game = registry.get(game_name)
    state: Any = game.new_state()  # either game's: both fold stored times into ``clock``
    after: list[list[tuple[float, float, float] | None]] = [[]]
    stamps: list[float] = []
    for s in await EventStore(nc).read(table):
        if isinstance(s.event, Event):
            if state.to_move is not None and len(stamps) in sent:
                movers[len(stamps)] = state.to_move  # the seat whose move this event is
            state.apply(s.event, s.time)
            stamps.append(s.time)
            after.append([seat_clock(state.clock, seat, state.per_move(seat)) for seat in range(len(players))])
    bounds = drift_bounds(stamps, sent)
    assert set(movers) == set(sent), "every move answered is stored at the position its prompt named"
    update_type = Update if game_name == "skat" else ThirtyOneUpdate
    prompts: dict[str, dict[int, tuple[float, float]]] = {p: {} for p in players}
    for player, data in heard:
        seat = players.index(player)
        if player == JSON_SEAT:
            raw = json.loads(data)
            fields = (raw.get("clock"), raw.get("increment"), raw.get("turn_seconds"))
            index, your_turn = raw.get("index", 0), raw.get("your_turn", False)
        else:
            update = registry.decode_update(data)
            assert type(update) is update_type
            fields = (update.clock, update.increment, update.turn_seconds)
            index, your_turn = update.index, update.your_turn
        # A client that knows none of the clock fields reads the same update.
        old = (msgspec.json if player == JSON_SEAT else msgspec.msgpack).decode(data, type=OldUpdate)
        assert old.index == index and old.your_turn == your_turn
        expected = after[index][seat]
        assert expected is not None and fields[0] is not None, (player, index, fields)
        # A move costs the time from the event before it to its own: each of the seat's moves
        # so far can be off by the bounds of both.
        drift = SLACK + sum(bounds[j] + bounds[j - 1] for j, mover in movers.items() if mover == seat and j < index)
        assert abs(fields[0] - expected[0]) <= drift, (player, index, fields, expected, drift)
        assert fields[1:] == (CONTROL.increment, rules.turn_seconds) == expected[1:], (player, index, fields)
        if your_turn:
            prompts[player][index] = (fields[0], drift)
    for player, by_index in prompts.items():
        budgets = [by_index[i] for i in sorted(by_index)]
        assert len(budgets) >= 3, (player, budgets)
        assert budgets[0][0] <= CONTROL.budget
        # Each move of its own cost at least THINK and earned the increment (THINK - increment
        # less budget), as far as the folds can tell (their drift): down every time.
        assert all(
            later - earlier <= -(THINK - CONTROL.increment) + earlier_drift + later_drift
            for (earlier, earlier_drift), (later, later_drift) in zip(budgets, budgets[1:])
        ), (player, budgets)


def test_clock_fields_are_absent_without_a_time_control_and_in_the_schema() -> None:
    assert seat_clock(SeatClocks(None, 3), 0, 30.0) is None
    assert seat_clock(None, 0, 30.0) is None
    clocks = SeatClocks(CONTROL, 3)
    assert seat_clock(clocks, 1, 20.0) == (CONTROL.budget, CONTROL.increment, 20.0)
    defs = json.loads(player_schema())["$defs"]
    for name in ("Update", f"{THIRTY_ONE}ThirtyOneUpdate"):
        assert {"clock", "increment", "turn_seconds"} <= set(defs[name]["properties"]), name
