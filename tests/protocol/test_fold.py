"""fold checks every event against the rules: a tampered log fails at the tampered event."""

from __future__ import annotations

import random

import msgspec
import pytest

from protocol.decide import decide, timeout
from protocol.events import CardPlayed, DealScored, Event, PlayerTimedOut, TableOpened, UnknownEvent
from protocol.rules import Rules
from protocol.table import LogError, TableState, due, fold


def random_log(seed: int, rules: Rules) -> list[Event]:
    rng = random.Random(seed)
    state = TableState()
    log: list[Event] = []

    def add(e: Event) -> None:
        state.apply(e)
        log.append(e)

    add(TableOpened(table="f", players=["a", "b", "c"], rules=rules, seed=f"f{seed}"))
    while not state.closed:
        owed = due(state)
        if owed is not None:
            add(owed)
            continue
        seat = state.to_move
        assert seat is not None
        events = decide(state, seat, rng.choice(state.legal_actions(seat)))
        assert isinstance(events, list)
        for e in events:
            add(e)
    return log


LOG = random_log(7, Rules(rounds=2))


def test_untouched_log_folds() -> None:
    state = fold(LOG)
    assert state.closed and len(state.sheet) == 6


def test_changed_card_is_caught_at_its_position() -> None:
    i = next(i for i, e in enumerate(LOG) if isinstance(e, CardPlayed))
    e = LOG[i]
    other = next(c for c in ("C7", "DA", "HT", "S9") if c != e.card)
    tampered = [*LOG[:i], msgspec.structs.replace(e, card=other), *LOG[i + 1 :]]
    with pytest.raises(LogError) as err:
        fold(tampered)
    assert err.value.position == i


def test_removed_event_is_caught() -> None:
    i = next(i for i, e in enumerate(LOG) if isinstance(e, CardPlayed))
    with pytest.raises(LogError) as err:
        fold([*LOG[:i], *LOG[i + 1 :]])
    assert err.value.position <= i + 3


def test_wrong_score_is_caught() -> None:
    i = next(i for i, e in enumerate(LOG) if isinstance(e, DealScored))
    e = LOG[i]
    result = msgspec.structs.replace(e.result, scores=[s + 1 for s in e.result.scores])
    with pytest.raises(LogError) as err:
        fold([*LOG[:i], msgspec.structs.replace(e, result=result), *LOG[i + 1 :]])
    assert err.value.position == i


def test_unknown_events_are_skipped() -> None:
    state = fold([LOG[0], UnknownEvent("from_the_future", 9), *LOG[1:]])
    assert state.unknown == 1 and state.closed


def test_timeout_records_the_default_action_and_the_table_goes_on() -> None:
    state = TableState()
    state.apply(TableOpened(table="t", players=["a", "b", "c"], rules=Rules(rounds=1), seed="t"))
    timeouts = 0
    while not state.closed:
        owed = due(state)
        if owed is not None:
            state.apply(owed)
            continue
        events = timeout(state)  # nobody ever answers
        assert events is not None and isinstance(events[0], PlayerTimedOut)
        timeouts += 1
        for e in events:
            state.apply(e)
    # Everyone passes by default: three passed-in deals, each with three time-outs.
    assert timeouts == 9 and sum(state.timeouts) == 9
    assert [row.result.kind for row in state.sheet] == ["passed"] * 3
