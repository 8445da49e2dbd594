"""fold checks every event against the rules: a tampered log fails at the tampered event."""

from __future__ import annotations

import random

import msgspec
import pytest

from protocol.events import CardPlayed, DealDealt, DealScored, Event, PlayerTimedOut, TableOpened, UnknownEvent
from protocol.skat.decide import decide, timeout
from protocol.skat.rules import Rules
from protocol.skat.table import LogError, TableState, due, fold
from skatbus.bots import HashedBot
from skatbus.local import play_table


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


@pytest.mark.parametrize("seed", ["skip-a", "skip-b", "skip-c", "skip-d"])
def test_skipping_a_deal_to_its_score_agrees_with_folding_it(seed: str) -> None:
    """The dealer and bidding jump from a deal's start to its score without its cards; what
    they go on to decide (the next deal, Bock, totals) must equal the full fold's."""
    rules = Rules(rounds=2, kontra=True, bock=True)
    log = play_table("skip", ["a", "b", "c"], [HashedBot(seed)] * 3, rules, seed).log
    partial = fold(log[:2])  # opened and the first deal dealt
    position = 2
    while True:
        scored = next(i for i in range(position, len(log)) if isinstance(log[i], DealScored))
        partial.skip_to_scored(log[scored], scored)  # type: ignore[arg-type]
        full = fold(log[: scored + 1])
        assert (partial.events, partial.deal_no, partial.scored) == (full.events, full.deal_no, True)
        assert (partial.totals, partial.sf_totals, partial.bock_left) == (full.totals, full.sf_totals, full.bock_left)
        assert partial.sheet == full.sheet
        assert due(partial) == due(full)
        if scored + 1 == len(log) or not isinstance(log[scored + 1], DealDealt):
            break
        partial.apply(log[scored + 1])
        position = scored + 2
    assert partial.skipped == rules.deals


def test_a_score_that_does_not_end_the_deal_in_progress_is_not_skipped_to() -> None:
    log = play_table("skip", ["a", "b", "c"], [HashedBot("x")] * 3, Rules(rounds=1), "x").log
    scores = [(i, e) for i, e in enumerate(log) if isinstance(e, DealScored)]
    second_index, second = scores[1]
    with pytest.raises(LogError):
        fold(log[:2]).skip_to_scored(second, second_index)  # deal 2's score while deal 1 is on
    first_index, first = scores[0]
    with pytest.raises(LogError):
        fold(log[: first_index + 1]).skip_to_scored(first, first_index)  # already scored
