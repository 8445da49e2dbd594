"""A game over deals (M8, M25, M26, M35) and the engine's refusals (one line each)."""

from __future__ import annotations

import pytest

from protocol.errors import IllegalAction
from protocol.rummy import (
    Discard,
    Match,
    RummyRules,
    Take,
    apply,
    deal,
    legal,
    new_match,
    parse_action,
    play,
    score,
    start_deal,
    turn_order,
    why_not,
)


def quick_deal(match: Match, rules: RummyRules) -> Match:
    """Play a deal by discarding the drawn card until the stock runs out (a: no bar)."""
    match = start_deal(match, rules.pack)
    while match.deal is not None:
        match = play(match, Discard(card=match.deal.drawn))
    return match


def test_dealer_rotation_and_max_deals() -> None:
    """M8: the last seat deals first, then one seat clockwise; M26: max_deals ends the game."""
    rules = RummyRules(variant="a", players=3, max_deals=4, target=10_000)
    match = new_match(rules)
    dealers = []
    while not match.complete:
        dealers.append(match.next_dealer())
        match = quick_deal(match, rules)
    assert dealers == [2, 0, 1, 2] and len(match.results) == 4
    assert [r.dealer for r in match.results] == dealers
    assert match.totals == tuple(sum(r.score[s] for r in match.results) for s in range(3))
    assert match.result().complete and match.result().places == tuple(
        1 + sum(t > mine for t in match.totals) for mine in match.totals
    )
    with pytest.raises(ValueError, match="over"):
        start_deal(match, rules.pack)
    assert turn_order(2, 3) == [0, 1, 2] and turn_order(0, 4) == [1, 2, 3, 0]


def test_a_deal_begins_left_of_the_dealer() -> None:
    rules = RummyRules(variant="c", players=4)
    state = deal(rules, 1, rules.pack)
    assert state.seat == 2 and len(state.hands[2]) == 6 and state.hands[1] == rules.pack[3:20:4]


def test_refusals_are_one_line_and_leave_the_state_alone() -> None:
    rules = RummyRules(variant="a")
    state = deal(rules, 2, rules.pack)
    before = state
    for text in ("take 1", "discard HA", "meld C6 C7", "layoff 1 C6", "swap 1 C6", "claim C6 C7 C8"):
        with pytest.raises(IllegalAction) as info:
            apply(state, parse_action(text))
        assert info.value.reason and "\n" not in info.value.reason
        assert why_not(state, parse_action(text)) == info.value.reason
    assert state == before and why_not(state, legal(state)[0]) == ""
    with pytest.raises(ValueError, match="deck"):
        deal(rules, 2, rules.pack[:-1])
    with pytest.raises(ValueError, match="not ended"):
        score(state)
    assert Take(n=1) not in legal(state)
