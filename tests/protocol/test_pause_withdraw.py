"""Pausing and withdrawing in the fold and in ``decide``: a paused table has nobody to move and
owes nothing; a seat is withdrawn exactly when it has missed ``max_timeouts`` turns in a row,
its own action resets the count, the default action after a time-out does not."""

from __future__ import annotations

import pytest

from protocol.events import Event, PlayerTimedOut, SeatWithdrawn, TableOpened, TablePaused, TableResumed
from protocol.skat.commands import Pass
from protocol.skat.decide import Rejection, decide, timeout
from protocol.skat.rules import Rules
from protocol.skat.table import LogError, TableState, due

PLAYERS = ["a", "b", "c"]


def _opened(rules: Rules) -> TableState:
    state = TableState()
    state.apply(TableOpened(table="pw", players=PLAYERS, rules=rules, seed="pw-1"))
    while (owed := due(state)) is not None:
        state.apply(owed)
    return state


def _time_out(state: TableState) -> list[Event]:
    events = timeout(state)
    assert events
    for event in events:
        state.apply(event)
    while (owed := due(state)) is not None:
        state.apply(owed)
    return events


def test_a_paused_table_has_nobody_to_move_and_refuses_commands() -> None:
    state = _opened(Rules(rounds=1))
    seat = state.to_move
    assert seat is not None
    state.apply(TablePaused(reason="lunch"))
    assert state.to_move is None and due(state) is None and timeout(state) is None
    refused = decide(state, seat, Pass())
    assert isinstance(refused, Rejection) and refused.code == "paused" and "lunch" in refused.reason
    with pytest.raises(LogError):
        state.copy().apply(TablePaused())  # paused twice
    with pytest.raises(LogError):
        state.copy().apply(PlayerTimedOut(seat=seat))
    state.apply(TableResumed())
    assert state.to_move == seat and isinstance(decide(state, seat, Pass()), list)
    with pytest.raises(LogError):
        state.copy().apply(TableResumed())  # not paused


def test_a_seat_is_withdrawn_after_max_timeouts_in_a_row_and_then_refused() -> None:
    state = _opened(Rules(rounds=1, max_timeouts=2))
    first = state.to_move
    assert first is not None
    assert not any(isinstance(e, SeatWithdrawn) for e in _time_out(state))
    assert state.missed[first] == 1 and not state.withdrawn(first)
    while state.to_move != first:  # the others miss their turns too, once each
        _time_out(state)
    events = _time_out(state)
    assert isinstance(events[0], PlayerTimedOut) and events[1] == SeatWithdrawn(seat=first, missed=2)
    assert len(events) == 3  # the default action last
    assert state.withdrawn(first) and state.turn_seconds(first) == 0.0
    assert state.turn_seconds(None) == state.rules.turn_seconds


def test_an_own_action_starts_the_count_again() -> None:
    state = _opened(Rules(rounds=1, max_timeouts=2))
    seat = state.to_move
    assert seat is not None
    _time_out(state)
    assert state.missed[seat] == 1
    while state.to_move is not None and state.to_move != seat:
        _time_out(state)
    if state.to_move == seat:
        events = decide(state, seat, state.legal_actions(seat)[0])
        assert isinstance(events, list)
        for event in events:
            state.apply(event)
        assert state.missed[seat] == 0


def test_a_withdrawal_that_the_count_does_not_justify_is_a_log_error() -> None:
    state = _opened(Rules(rounds=1, max_timeouts=2))
    seat = state.to_move
    assert seat is not None
    _time_out(state)
    with pytest.raises(LogError):
        state.copy().apply(SeatWithdrawn(seat=seat, missed=2))
    unlimited = _opened(Rules(rounds=1))
    with pytest.raises(LogError):
        unlimited.apply(SeatWithdrawn(seat=0, missed=0))


def test_old_rules_decode_without_the_new_field() -> None:
    import msgspec

    rules = msgspec.json.decode(b'{"rounds": 2}', type=Rules)
    assert rules.max_timeouts == 0
    with pytest.raises(ValueError):
        Rules(max_timeouts=-1)


def test_a_time_out_recorded_halfway_is_completed_by_whoever_enforces_the_turn() -> None:
    """Events are appended one at a time: a writer may die after the time-out. The seat then
    has no time left, its own commands are refused, nothing else may come in between, and
    ``timeout`` gives only what is missing (the withdrawal, the default action)."""
    state = _opened(Rules(rounds=1, max_timeouts=1))
    seat = state.to_move
    assert seat is not None
    full = timeout(state)
    assert full is not None and [type(e) for e in full][:2] == [PlayerTimedOut, SeatWithdrawn]
    move = state.legal_actions(seat)[0]
    state.apply(full[0])  # only the time-out landed
    assert state.turn_seconds(seat) == 0.0 and state.to_move == seat
    assert state.legal_actions(seat) == []  # nothing is offered that decide would refuse
    refused = decide(state, seat, move)
    assert isinstance(refused, Rejection) and refused.code == "stale"
    with pytest.raises(LogError):
        state.copy().apply(TablePaused())
    assert timeout(state) == full[1:]
    state.apply(full[1])  # and the withdrawal
    assert timeout(state) == full[2:]
    with pytest.raises(LogError):
        state.copy().apply(TablePaused())
    state.apply(full[2])
    assert state.defaulting == -1 and state.withdrawn(seat)
    refused = decide(state, seat, Pass())
    assert isinstance(refused, Rejection) and refused.code in ("withdrawn", "out_of_turn")
