"""The clocks fold: a time control's budget and increment, charged from hand-made stored times."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from protocol.clocks import (
    GRACE,
    SeatClocks,
    TimeControl,
    parse_stamp,
    parse_time_control,
    stamp_text,
    summarize,
)
from protocol.events import Event, TableOpened, TablePaused, TableResumed
from protocol.registry import get as get_game
from protocol.skat import decide as skat_decide
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due
from protocol.thirty_one.decide import decide as t31_decide
from protocol.thirty_one.decide import timeout as t31_timeout
from protocol.thirty_one.rules import ThirtyOneRules, rules_from_record

CONTROL = TimeControl(budget=10.0, increment=1.0)
TURN = 5.0


class Table:
    """A Skat table folded with stored times the test chooses: ``at`` is the clock."""

    def __init__(self, control: TimeControl | None = CONTROL, turn: float = TURN) -> None:
        self.state = TableState()
        self.at = 1_000.0
        rules = Rules(rounds=1, turn_seconds=turn, time_control=control)
        self.apply(TableOpened(table="t", players=["a", "b", "c"], rules=rules, seed="clocks"))
        self.settle()

    def apply(self, event: Event, after: float = 0.0) -> None:
        self.at += after
        self.state.apply(event, self.at)

    def settle(self) -> None:
        while (owed := due(self.state)) is not None:
            self.apply(owed)

    @property
    def mover(self) -> int:
        seat = self.state.to_move
        assert seat is not None
        return seat

    def move(self, after: float) -> int:
        """The seat to move makes its first legal move ``after`` seconds into its turn."""
        seat = self.mover
        events = skat_decide.decide(self.state, seat, self.state.legal_actions(seat)[0])
        assert isinstance(events, list)
        self.apply(events[0], after)
        for event in events[1:]:
            self.apply(event)
        self.settle()
        return seat

    def time_out(self, after: float) -> int:
        seat = self.mover
        events = skat_decide.timeout(self.state)
        assert events
        self.apply(events[0], after)
        for event in events[1:]:
            self.apply(event)
        self.settle()
        return seat

    @property
    def clock(self) -> SeatClocks:
        assert self.state.clock is not None
        return self.state.clock


def test_the_notation_reads_budget_plus_increment() -> None:
    assert parse_time_control("120+2") == TimeControl(budget=120, increment=2)
    assert parse_time_control(" 300 ") == TimeControl(budget=300, increment=0)
    assert parse_time_control("1.5 + 0.25") == TimeControl(budget=1.5, increment=0.25)
    assert str(parse_time_control("120+2.0")) == "120+2"
    for bad in ("", "+2", "a+b", "-1+2", "0+1", "1+-2", "inf", "120+2+1", "1e9999"):
        with pytest.raises(ValueError):
            parse_time_control(bad)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"budget": 0}, TimeControl)


def test_rules_carry_the_time_control_and_older_rules_read_without_one() -> None:
    rules = Rules(time_control=CONTROL)
    again = msgspec.json.decode(msgspec.json.encode(rules), type=Rules)
    assert again == rules and again.time_control == CONTROL
    older = msgspec.json.encode(Rules()).replace(b',"time_control":null', b"")
    assert b"time_control" not in older and msgspec.json.decode(older, type=Rules).time_control is None
    t31 = ThirtyOneRules(time_control=CONTROL)
    assert msgspec.convert(msgspec.to_builtins(t31), ThirtyOneRules) == t31
    # A record's time control changes no result: an unusable one is none, as with turn_seconds.
    assert rules_from_record({"time_control": "60+1"}).time_control == TimeControl(budget=60, increment=1)
    assert rules_from_record({"time_control": {"budget": 60}}).time_control == TimeControl(budget=60)
    assert rules_from_record({"time_control": "soon"}).time_control is None
    assert rules_from_record({"time_control": {"budget": -1}}).time_control is None


def test_a_move_costs_its_think_time_and_earns_the_increment() -> None:
    t = Table()
    assert t.state.turn_seconds(t.mover) == TURN  # the per-move deadline binds first: 5 < 10
    seat = t.move(after=2.0)
    assert t.clock.left[seat] == pytest.approx(10 - 2 + 1)
    assert t.clock.sample == (seat, pytest.approx(2.0))
    seat = t.move(after=0.5)
    assert t.clock.left[seat] == pytest.approx(10 - 0.5 + 1)


def test_a_move_stored_just_after_its_deadline_costs_the_deadline_and_a_later_one_nothing() -> None:
    t = Table()
    seat = t.move(after=TURN + GRACE / 2)  # in time; stamped a moment after the deadline
    assert t.clock.left[seat] == pytest.approx(10 - TURN + 1)
    assert t.clock.sample == (seat, pytest.approx(TURN + GRACE / 2))
    seat = t.move(after=TURN + GRACE + 30)  # only after the services were away: not the seat's time
    assert t.clock.left[seat] == pytest.approx(10 + 1)
    assert t.clock.sample is None and t.clock.unmeasured[seat] == 1


def test_the_budget_runs_out_the_seat_is_timed_out_and_plays_on_with_the_increment() -> None:
    t = Table(control=TimeControl(budget=3.0, increment=0.5), turn=TURN)
    seat = t.mover
    assert t.state.turn_seconds(seat) == 3.0  # the budget binds: 3 < 5
    assert t.time_out(after=3.0) == seat
    assert t.clock.flagged[seat] == 1
    # Charged what it was allowed (3), then its default move earned the increment.
    assert t.clock.left[seat] == pytest.approx(0.5)
    # Every seat has its own clock; when the slow seat's turn comes again it has the increment.
    while t.state.to_move != seat and not t.state.closed:
        t.move(after=0.1)
    if not t.state.closed:
        assert t.state.turn_seconds(seat) == pytest.approx(0.5)
    assert [t.clock.flagged[s] for s in range(3) if s != seat] == [0, 0]


def test_a_per_move_time_out_costs_the_turn_and_is_no_budget_time_out() -> None:
    t = Table(control=TimeControl(budget=60.0), turn=TURN)
    seat = t.time_out(after=TURN + 0.01)
    assert t.clock.left[seat] == pytest.approx(60 - TURN) and t.clock.flagged[seat] == 0


def test_a_time_out_costs_its_allowance_whenever_it_is_stored() -> None:
    """The services give a whole turn after being away: the time-out's stamp may be much later,
    and still costs exactly what the seat was allowed."""
    t = Table(control=TimeControl(budget=60.0), turn=TURN)
    seat = t.time_out(after=600.0)
    assert t.clock.left[seat] == pytest.approx(60 - TURN)


def test_time_while_paused_is_not_charged() -> None:
    t = Table()
    seat = t.mover
    t.apply(TablePaused(reason="lunch"), 1.0)
    t.apply(TableResumed(), 3600.0)
    assert t.move(after=2.0) == seat
    assert t.clock.left[seat] == pytest.approx(10 - 2 + 1)


def test_without_stored_times_nothing_is_charged_or_measured() -> None:
    state = TableState()
    rules = Rules(rounds=1, turn_seconds=TURN, time_control=CONTROL)
    state.apply(TableOpened(table="t", players=["a", "b", "c"], rules=rules, seed="clocks"))
    while (owed := due(state)) is not None:
        state.apply(owed)
    seat = state.to_move
    assert seat is not None
    events = skat_decide.decide(state, seat, state.legal_actions(seat)[0])
    assert isinstance(events, list)
    for event in events:
        state.apply(event)
    assert state.clock is not None and state.clock.sample is None
    assert state.clock.left[seat] == 10 + 1 and state.clock.unmeasured[seat] == 1


def test_a_table_without_a_time_control_measures_think_times_and_has_its_turn_time() -> None:
    t = Table(control=None)
    assert t.state.turn_seconds(t.mover) == TURN
    seat = t.move(after=1.25)
    assert t.clock.sample == (seat, pytest.approx(1.25))
    assert math.isinf(t.clock.left[seat])


def test_a_copy_has_its_own_clock() -> None:
    t = Table()
    copy = t.state.copy()
    seat = t.move(after=2.0)
    assert copy.clock is not None and copy.clock.left[seat] == 10.0 != t.clock.left[seat]


def test_a_thirty_one_table_keeps_the_same_clocks() -> None:
    game = get_game("thirty-one")
    rules = ThirtyOneRules(coins=1, turn_seconds=TURN, time_control=TimeControl(budget=4.0, increment=1.0))
    state: Any = game.new_state()
    at = [500.0]

    def apply(event: Event, after: float = 0.0) -> None:
        at[0] += after
        state.apply(event, at[0])

    def settle() -> None:
        while (owed := game.due(state)) is not None:
            apply(owed)

    apply(game.open_event("t31", ["a", "b", "c"], rules, "clocks", {}))
    settle()
    seat = state.to_move
    events = t31_decide(state, seat, state.legal_actions(seat)[0])
    assert isinstance(events, list)
    apply(events[0], 1.5)
    for event in events[1:]:
        apply(event)
    settle()
    assert state.clock.left[seat] == pytest.approx(4 - 1.5 + 1)
    mover = state.to_move
    assert mover is not None and state.turn_seconds(mover) == min(TURN, state.clock.left[mover]) < TURN
    timed_out = t31_timeout(state)
    assert timed_out
    apply(timed_out[0], 4.0)
    for event in timed_out[1:]:
        apply(event)
    assert state.clock.flagged[mover] == 1 and state.clock.left[mover] == pytest.approx(1.0)


def test_stamps_read_and_write_to_the_millisecond() -> None:
    assert stamp_text(0.0) == "1970-01-01T00:00:00.000Z"
    assert stamp_text(1764662462.1236) == "2025-12-02T08:01:02.124Z"
    assert parse_stamp("2025-12-02T08:01:02.124Z") == pytest.approx(1764662462.124)
    assert parse_stamp("2026-11-30T12:41:23.62129412Z") == pytest.approx(1796042483.62129412)
    assert parse_stamp("2025-12-02T09:01:02+01:00") == pytest.approx(1764662462.0)
    assert parse_stamp("2025-12-02T08:01:02Z") == pytest.approx(1764662462.0)
    for bad in ("", "yesterday", "2025-12-02T08:01:02"):
        with pytest.raises(ValueError):
            parse_stamp(bad)


@pytest.mark.parametrize(
    ("samples", "median", "p95", "longest"),
    [
        ([1.0], 1.0, 1.0, 1.0),
        ([3.0, 1.0, 2.0], 2.0, 3.0, 3.0),
        ([float(i) for i in range(1, 21)], 10.5, 19.0, 20.0),
        ([0.0004, 0.0016], 0.001, 0.002, 0.002),
    ],
)
def test_summaries_are_median_nearest_rank_p95_and_longest(
    samples: list[float], median: float, p95: float, longest: float
) -> None:
    s = summarize(samples)
    assert (s.moves, s.median, s.p95, s.longest) == (len(samples), median, p95, longest)


def test_no_samples_summarize_to_nothing() -> None:
    s = summarize([], unmeasured=2)
    assert (s.moves, s.median, s.p95, s.longest, s.unmeasured) == (0, None, None, None, 2)


@pytest.mark.parametrize("text", ["1000000+0", "99999999999999+0", "5+1000000", "0.1234567+0"])
def test_a_time_control_its_notation_cannot_write_is_refused(text: str) -> None:
    """Once parsed, a time control is recorded as ``str(control)`` and parsed again: a budget
    ``%g`` writes as ``1e+06`` (or rounds) must be refused here, in words, not crash later."""
    with pytest.raises(ValueError, match="at most"):
        parse_time_control(text)


@pytest.mark.parametrize("text", ["999999+0", "120+2", " 5+1", "0.5+0.25"])
def test_a_time_control_reads_back_as_it_was_given(text: str) -> None:
    control = parse_time_control(text)
    assert parse_time_control(str(control)) == control
