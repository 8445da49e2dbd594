"""Golden tests of hand values and options: rules T1, T2, T9-T11, T44, T45 and the worked
examples 1 and 2 of the Thirty-one rules page."""

from __future__ import annotations

import msgspec
import pytest

from protocol.lifecycle import LogError
from protocol.thirty_one import GAME, PACK, ThirtyOneRules, fold, hand_value, points, rules_from_record, value
from protocol.thirty_one.cards import card

PLAIN = ThirtyOneRules()


def v(cards: str, rules: ThirtyOneRules = PLAIN) -> float:
    return points(hand_value(cards.split(), rules))


def test_pack_and_card_values() -> None:
    """T1: one 52-card pack, suits C S H D, ranks 2-9 T J Q K A. T2: ace 11, K Q J T 10, pips."""
    assert len(PACK) == len(set(PACK)) == 52
    assert PACK[0] == "C2" and PACK[12] == "CA" and PACK[13] == "S2" and PACK[-1] == "DA"
    assert [value(c) for c in PACK[:13]] == [2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11]
    assert sum(value(c) for c in PACK) == 4 * 95
    assert card("ha") == "HA"
    with pytest.raises(ValueError):
        card("H1")


@pytest.mark.parametrize(
    ("hand", "worth"),
    [
        ("SK ST H4", 20),  # "spades 20, hearts 4, value 20 (the seed's own example)"
        ("HK H8 H5", 23),
        ("SQ D9 D8", 17),  # "diamonds 17 beat the queen"
        ("CA S6 S4", 11),  # "the ace 11 beats spades 10"
        ("CJ H7 S4", 10),
        ("HA HK HQ", 31),
        ("HJ HQ HK", 30),
    ],
)
def test_example_1_hand_values(hand: str, worth: float) -> None:
    """Example 1 (T9): the best total of one suit; three suits: the highest card."""
    assert v(hand) == worth
    assert hand_value(hand.split(), PLAIN) == 2 * worth  # half points: every plain value doubled


@pytest.mark.parametrize(
    ("hand", "plain", "three", "straight"),
    [
        ("S7 H7 D7", 7, 30, 7),  # "S7 H7 D7: 7; with three_of_a_kind 30 (or 30 1/2)"
        ("H9 HT HJ", 29, 29, 30),  # "H9 HT HJ: 29; with straight_flush 30"
        ("H2 H3 H4", 9, 9, 30),  # "H2 H3 H4: 9; with straight_flush 30"
        ("DA D2 D3", 16, 16, 16),  # "DA D2 D3: 16 either way (no low ace)"
        ("CQ CK CA", 31, 31, 31),  # "CQ CK CA: 31 either way"
    ],
)
def test_example_2_options(hand: str, plain: float, three: float, straight: float) -> None:
    """Example 2 (T10): three_of_a_kind and straight_flush."""
    assert v(hand) == plain
    assert v(hand, ThirtyOneRules(three_of_a_kind="30")) == three
    half = ThirtyOneRules(three_of_a_kind="30.5")
    assert v(hand, half) == (30.5 if three == 30 and plain != 30 else three)
    assert v(hand, ThirtyOneRules(straight_flush=True)) == straight


def test_thirty_and_a_half_ranks_between_thirty_and_thirty_one() -> None:
    """T10: 30 1/2 is above any 30 flush and below 31 (half points: 61)."""
    half = ThirtyOneRules(three_of_a_kind="30.5")
    assert hand_value(["S7", "H7", "D7"], half) == 61
    assert hand_value(["HJ", "HQ", "HK"], half) == 60 < 61 < hand_value(["HA", "HK", "HQ"], half) == 62
    # Both options: a run and three of a kind never meet in one hand; the highest evaluation counts.
    both = ThirtyOneRules(three_of_a_kind="30.5", straight_flush=True)
    assert points(hand_value(["C4", "C5", "C6"], both)) == 30
    assert points(hand_value(["C4", "S4", "H4"], both)) == 30.5


def test_equal_values_tie() -> None:
    """T11: no tie-break by high card or suit."""
    assert hand_value(["SA", "S9", "D3"], PLAIN) == hand_value(["HK", "HQ", "C2"], PLAIN)


def test_four_cards_are_worth_their_best_three() -> None:
    """Mid-turn a hand holds four cards: its value (views) is its best three's."""
    assert v("HA HK C2 HQ") == 31
    assert v("S2") == 2 and v("") == 0


def test_rules_defaults_are_the_rules_page_table() -> None:
    r = ThirtyOneRules()
    assert (r.coins, r.county, r.three_of_a_kind, r.straight_flush, r.min_knock) == (3, True, "off", False, 0)
    assert (r.knock_in_first_round, r.throw_down, r.stock_out) == (True, False, "reshuffle")
    assert (r.max_turns, r.max_deals, r.turn_seconds, r.max_timeouts) == (300, 500, 30.0, 0)


@pytest.mark.parametrize(
    "bad",
    [
        {"coins": 0},
        {"min_knock": 32},
        {"min_knock": -1},
        {"max_turns": 0},
        {"max_deals": 0},
        {"turn_seconds": 0.0},
        {"turn_seconds": float("inf")},
        {"max_timeouts": -1},
    ],
)
def test_impossible_values_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ThirtyOneRules(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "setting"),
    [("off", "off"), (False, "off"), (None, "off"), (30, "30"), ("30", "30"), (True, "30"), (30.0, "30"),
     (30.5, "30.5"), ("30.5", "30.5")],
)  # fmt: skip
def test_t45_three_of_a_kind_spellings(raw: object, setting: str) -> None:
    """T45: "off", false or null for off; 30/"30" and true; 30.5/"30.5"."""
    assert rules_from_record({"three_of_a_kind": raw}).three_of_a_kind == setting


@pytest.mark.parametrize("raw", [29, "31", "on", 1, [30]])
def test_t45_other_three_of_a_kind_values_are_errors(raw: object) -> None:
    with pytest.raises(ValueError):
        rules_from_record({"three_of_a_kind": raw})


def test_t44_unknown_keys_ignored_impossible_values_errors() -> None:
    """T44: unknown keys are ignored (turn_seconds only has to be a number); a known option with
    an impossible value makes the record an error."""
    r = rules_from_record({"coins": 5, "variant": "x", "house_rule": [1, 2], "turn_seconds": 0})
    assert r == ThirtyOneRules(coins=5)
    assert rules_from_record({"turn_seconds": 12}).turn_seconds == 12.0
    assert rules_from_record({}) == ThirtyOneRules()
    for bad in ({"coins": 0}, {"min_knock": 40}, {"stock_out": "burn"}, {"county": "yes"}, {"turn_seconds": "x"}):
        with pytest.raises(ValueError):
            rules_from_record(bad)
    with pytest.raises(ValueError):
        rules_from_record([])  # type: ignore[arg-type]


def test_rules_in_table_opened() -> None:
    """The rules travel as a dict in table_opened/2; unknown keys there are ignored too, an
    impossible value makes the log an error."""
    opened = GAME.open_event("t", ["a", "b"], ThirtyOneRules(min_knock=21), "s", {})
    assert fold([opened]).rules == ThirtyOneRules(min_knock=21)
    extra = msgspec.structs.replace(opened, rules={**opened.rules, "later_option": 1})  # type: ignore[attr-defined]
    assert fold([extra]).rules == ThirtyOneRules(min_knock=21)
    bad = msgspec.structs.replace(opened, rules={"coins": 0})
    with pytest.raises(LogError):
        fold([bad])
    for players in (["a"], [str(i) for i in range(10)], ["a", "a"]):
        with pytest.raises(LogError):
            fold([GAME.open_event("t", players, ThirtyOneRules(), "s", {})])
