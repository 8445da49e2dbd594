"""A table under a time control, through the real services: a slow bot's budget runs out, it is
timed out (the default move is played) and plays on with the increment alone; the log, replayed
from its stored times or from an archive, gives the clocks the services enforced; and time a
service was away is not charged to the seat to move."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.archive import decode_event, decode_line, encode_line
from protocol.clocks import GRACE, TimeControl
from protocol.events import DealDealt, Event, PlayerTimedOut
from protocol.skat.rules import Rules
from protocol.skat.table import TableState
from protocol.subjects import view_subject
from protocol.wire import OpenTable, Update, decode
from services.store import EventStore, Stored
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from skatbus.think_times import think_times
from tests.bus import Stack, open_table, wait_closed, wait_ready

PLAYERS = ["ann", "bob", "cyd"]


class SlowBot:
    """Thinks ``think`` seconds over every move (the thinking is what is under test), then
    plays as the tests' reproducible bot."""

    def __init__(self, think: float) -> None:
        self.think = think
        self.bot = HashedBot("slow")

    async def act(self, obs: Any) -> Any:
        await asyncio.sleep(self.think)
        return self.bot.act(obs)


def _fold(pairs: list[tuple[Event, float | None]]) -> tuple[TableState, list[tuple[int | None, float]]]:
    """The table folded with its stored times, and after each event who is to move and how long
    it has (``turn_seconds``: the clock's allowance)."""
    state = TableState()
    turns: list[tuple[int | None, float]] = []
    for event, at in pairs:
        state.apply(event, at)
        turns.append((state.to_move, state.turn_seconds(state.to_move)))
    return state, turns


async def _log(nc: Client, table: str) -> list[Stored]:
    return [s for s in await EventStore(nc).read(table) if isinstance(s.event, Event)]


async def test_a_slow_bots_budget_runs_out_and_it_plays_on_with_the_increment(stack: Stack, nc: Client) -> None:
    control = TimeControl(budget=1.0, increment=0.1)
    rules = Rules(rounds=1, ramsch=True, turn_seconds=30.0, time_control=control)
    prompts: list[Update] = []

    async def heard(msg: Msg) -> None:
        update = decode(msg.data, Update)
        if update.your_turn:
            prompts.append(update)

    sub = await nc.subscribe(view_subject("cyd", "tc1"), cb=heard)
    bots = [HashedBot("a"), HashedBot("b"), SlowBot(0.4)]
    players = [RemotePlayer(nc, p, bot) for p, bot in zip(PLAYERS, bots)]
    for p in players:
        await p.start()
    try:
        assert (await open_table(nc, OpenTable(table="tc1", players=PLAYERS, rules=rules, seed="tc-1"))).ok
        await wait_closed(nc, "tc1", timeout=120)
    finally:
        for p in players:
            await p.stop()
        await sub.unsubscribe()
    stored = await _log(nc, "tc1")
    pairs: list[tuple[Event, float | None]] = [(s.event, s.time) for s in stored]  # type: ignore[misc]
    state, turns = _fold(pairs)
    assert state.closed and state.clock is not None
    cyd = PLAYERS.index("cyd")
    # The rule applied: the budget ran out (a time-out where the budget, not the 30 s per move,
    # was the limit), and the fast seats never ran short.
    assert state.clock.flagged[cyd] >= 1 and state.clock.flagged[:cyd] == [0, 0], state.clock.flagged
    timeouts = [i for i, (e, _) in enumerate(pairs) if isinstance(e, PlayerTimedOut)]
    assert timeouts
    first_out = None
    replay = TableState()
    for i, (event, at) in enumerate(pairs):
        before = replay.clock.flagged[cyd] if replay.clock is not None else 0
        replay.apply(event, at)
        if replay.clock is not None and replay.clock.flagged[cyd] > before and first_out is None:
            first_out = i
    assert first_out is not None
    # Every time-out is cyd's, none came early by the clock the log gives, and all came long
    # before the per-move deadline: the budget was enforced.
    for i in timeouts:
        event, at = pairs[i]
        seat, allowed = turns[i - 1]
        assert isinstance(event, PlayerTimedOut) and event.seat == cyd == seat
        assert at is not None and pairs[i - 1][1] is not None
        assert allowed - 0.05 <= at - pairs[i - 1][1] < rules.turn_seconds, (i, allowed, at - pairs[i - 1][1])
    # After its budget ran out cyd has the increment alone (0.1 s) and thinks 0.4 s: every later
    # turn of its is a time-out (each followed by its default move).
    later = [
        i
        for i in range(first_out + 1, len(pairs))
        if turns[i - 1][0] == cyd and not isinstance(pairs[i - 1][0], PlayerTimedOut)
    ]
    assert later and all(isinstance(pairs[i][0], PlayerTimedOut) for i in later)
    # The services' clock is the log's: each prompt's deadline is its turn's start plus the
    # allowance the replay computes (30 s if the budget were not counted).
    assert prompts
    for update in prompts:
        start = pairs[update.index - 1][1]
        seat, allowed = turns[update.index - 1]
        assert seat == cyd and start is not None
        assert abs(update.deadline - (start + allowed)) < 0.3, (update.index, update.deadline - start, allowed)
    # A replay of the archive (stored times to the millisecond) computes the same clocks.
    lines = [decode_line(encode_line("tc1", i, s.event, at=s.stamp)) for i, s in enumerate(stored)]  # type: ignore[arg-type]
    archived, _ = _fold([(decode_event(line.event), line.time) for line in lines])  # type: ignore[misc]
    assert archived.clock is not None
    assert archived.clock.flagged == state.clock.flagged
    assert archived.clock.unmeasured == state.clock.unmeasured == [0, 0, 0]
    assert all(abs(a - b) < 0.01 for a, b in zip(archived.clock.left, state.clock.left))
    # Think times: every player's own moves are measured.
    times = think_times([([e for e, _ in pairs], [at for _, at in pairs])])
    assert all(times[p].moves > 0 and times[p].unmeasured == 0 for p in PLAYERS), times
    assert times["cyd"].budget_out == state.clock.flagged[cyd]


async def test_time_a_service_was_away_is_not_charged_to_the_clock(stack: Stack, nc: Client) -> None:
    """Bidding (whose phase it is) is away when a deal starts and for longer than the seat to
    move has left: once back, the seat moves, and the move costs its budget nothing."""
    control = TimeControl(budget=2.0, increment=0.5)
    rules = Rules(rounds=1, turn_seconds=30.0, time_control=control)
    stack.kill("bidding")
    assert (await open_table(nc, OpenTable(table="tc2", players=PLAYERS, rules=rules, seed="tc-2"))).ok
    store = EventStore(nc)
    while not any(isinstance(s.event, DealDealt) for s in await store.read("tc2")):
        await asyncio.sleep(0.05)
    stored = await _log(nc, "tc2")
    state, _ = _fold([(s.event, s.time) for s in stored])  # type: ignore[misc]
    mover = state.to_move
    assert mover is not None
    dealt_at = stored[-1].time
    others = [RemotePlayer(nc, p, HashedBot(p)) for i, p in enumerate(PLAYERS) if i != mover]
    for p in others:
        await p.start()
    # The seat's whole budget (and the grace) passes while nobody can hear it.
    while time.time() < dealt_at + control.budget + GRACE + 0.5:
        await asyncio.sleep(0.05)
    late = RemotePlayer(nc, PLAYERS[mover], HashedBot("late"))
    await late.start()
    players = [*others, late]
    try:
        stack.start("bidding")
        await wait_ready(stack.url)
        await wait_closed(nc, "tc2", timeout=120)
    finally:
        for p in players:
            await p.stop()
    stored = await _log(nc, "tc2")
    events = [s.event for s in stored]
    first = state.events  # the first event after the deal
    move = stored[first]
    # The seat moved itself once the service was back (no time-out), later than its whole
    # budget after the deal: that time was the services' absence.
    assert not isinstance(move.event, PlayerTimedOut) and getattr(move.event, "seat", -1) == mover, move.event
    assert move.time - dealt_at > control.budget + GRACE
    after, _ = _fold([(s.event, s.time) for s in stored[: first + 1]])  # type: ignore[misc]
    assert after.clock is not None
    assert after.clock.left[mover] == control.budget + control.increment
    assert after.clock.unmeasured[mover] == 1
    assert not any(isinstance(e, PlayerTimedOut) for e in events)
