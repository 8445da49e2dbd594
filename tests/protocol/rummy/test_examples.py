"""Golden tests: the twelve worked examples of the rummy rules page, with the numbers stated
there. Players P1, P2, P3 (P4) sit clockwise, P1 on the dealer's left: with the last seat
dealing (M8), P1 is seat 0, P2 seat 1, and so on."""

from __future__ import annotations

import msgspec
import pytest

from protocol.errors import IllegalAction
from protocol.rummy import (
    STOCK_OUT,
    WENT_OUT,
    Claim,
    Deal,
    Discard,
    Lay,
    Refused,
    RummyRules,
    Swap,
    Take,
    apply,
    credited,
    deal,
    finish_deal,
    hand_minus,
    legal,
    make_meld,
    new_match,
    parse_action,
    parse_token,
    points,
    score,
    swap_joker,
)

from .helpers import cards, meld, table

A = RummyRules(variant="a")
B = RummyRules(variant="b")
C = RummyRules(variant="c")
D = RummyRules(variant="d")
P1, P2, P3, P4 = 0, 1, 2, 3


def meld_points(text: str, rules: RummyRules) -> int:
    m = make_meld([parse_token(t) for t in text.split()], rules, 0)
    return sum(points(p.card, p.stands) for p in m.cards)


def act(state: Deal, text: str) -> Deal:
    return apply(state, parse_action(text))


# --- 1. Taking from the row (a) ------------------------------------------------------------


def test_example_1_taking_from_the_row() -> None:
    start = table(A, {P2: "SJ SK H7 D8 C9"}, row="SA SQ CK HJ", seat=P2)
    assert Take(n=2) in legal(start)
    took = act(start, "take 2")  # names SQ: takes SQ CK HJ
    assert took.row == ("SA",) and took.pending == "SQ"
    assert set(took.hands[P2]) >= {"SQ", "CK", "HJ"}
    laid = act(took, "meld SJ SQ SK")
    assert laid.melds[0].text == "SJ SQ SK" and credited(laid)[P2] == 30
    assert set(laid.hands[P2]) == {"CK", "HJ", "H7", "D8", "C9"} and laid.row == ("SA",)
    # naming HJ takes HJ alone (here usable: HQ HK in hand)
    other = table(A, {P2: "HQ HK"}, row="SA SQ CK HJ", seat=P2)
    alone = act(other, "take 4")
    assert alone.row == cards("SA SQ CK") and alone.hands[P2] == cards("HQ HK HJ")
    # naming SA takes all four; SA laid at once as SQ SK SA with the SQ just taken (31)
    everything = act(start, "take 1")
    assert everything.row == () and everything.pending == "SA"
    ace = act(everything, "meld SQ SK SA")
    assert credited(ace)[P2] == 31
    # naming SQ with no way to use it is refused
    stuck = table(A, {P2: "H7 D8 C9 S6 H6"}, row="SA SQ CK HJ", seat=P2)
    with pytest.raises(IllegalAction, match="cannot be used at once"):
        act(stuck, "take 2")
    assert Take(n=2) not in legal(stuck)


# --- 2. Runs round the corner --------------------------------------------------------------


@pytest.mark.parametrize("text", ["HK HA H6", "HQ HK HA H6 H7", "HA H6 H7", "H6 H7 H8"])
def test_example_2_runs_round_the_corner_in_a(text: str) -> None:
    assert make_meld([parse_token(t) for t in text.split()], A, 0).kind == "run"


def test_example_2_points_and_a_non_run() -> None:
    assert meld_points("HK HA H6", A) == 27
    with pytest.raises(Refused):
        make_meld([parse_token(t) for t in "H9 HA H6".split()], A, 0)
    for rules in (B, C, D):
        for text in ("SK SA S2", "SA S2 S3", "SQ SK SA S2 S3"):
            assert make_meld([parse_token(t) for t in text.split()], rules, 0).kind == "run"
        assert meld_points("SA S2 S3", rules) == 16  # the ace counts 11 at the low end too


# --- 3. A deal scored (a, 3 players) -------------------------------------------------------


def example_3(rules: RummyRules) -> Deal:
    """The deal of example 3, P1 about to go out by laying C6 C7 C8."""
    melds = [meld("HK SK DK", P1, rules, [("CK", P2)]), meld("DA D6 D7", P2, rules)]
    before = table(rules, {P1: "C6 C7 C8", P2: "HQ S9", P3: "SA HT C9 D8 S6"}, melds=melds, seat=P1)
    return act(before, "meld C6 C7 C8")


def test_example_3_a_deal_scored() -> None:
    state = example_3(A)
    assert state.end == WENT_OUT and state.out == P1
    s = score(state)
    assert s.score == (51, 15, -44)
    assert s.plus == (51, 34, 0) and s.minus == (0, 19, 44)
    owner = score(example_3(RummyRules(variant="a", layoff_credit="owner")))
    assert owner.score == (61, 5, -44)


# --- 4. Jokers in a deal of b ----------------------------------------------------------------


def example_4(rules: RummyRules) -> Deal:
    melds = [
        meld("S9 ST X1=SJ", P1, rules, [("SQ", P2)]),
        meld("C2 D2 H2", P2, rules),
        meld("DJ DQ DK", P3, rules),
    ]
    before = table(rules, {P1: "H4 H5 H6", P2: "X2 D9", P3: "CA CK"}, melds=melds, seat=P1)
    return act(before, "meld H4 H5 H6")


def test_example_4_jokers_in_a_deal_of_b() -> None:
    state = example_4(B)
    assert state.melds[0].text == "S9 ST X1=SJ SQ"
    assert meld_points("S9 ST X1=SJ", B) == 29
    assert score(state).score == (54, -53, 9)
    assert score(state).minus == (0, 59, 21)
    assert score(example_4(RummyRules(variant="b", layoff_credit="layer"))).score == (44, -43, 9)


# --- 5. A joker swap (b) -----------------------------------------------------------------------


def example_5(rules: RummyRules) -> Deal:
    return table(rules, {P2: "D6 H8 S8 C3"}, melds=[meld("D4 D5 X1=D6", P1, rules)], seat=P2)


def test_example_5_a_joker_swap() -> None:
    before = example_5(B)
    assert credited(before)[P1] == 15
    swapped = act(before, "swap 1 D6")
    assert swapped.pending == "X1" and swapped.melds[0].text == "D4 D5 D6"
    with pytest.raises(IllegalAction, match="use X1 first"):
        act(swapped, "discard C3")
    after = act(swapped, "meld H8 S8 X1=8")
    assert after.melds[1].text == "H8 S8 X1=8"
    plus = credited(after)
    assert (plus[P1], plus[P2]) == (15, 24)
    # the set's joker stands for C8 or D8: either may replace it
    for card in ("C8", "D8"):
        new, joker = swap_joker(after.melds[1], card, B, P3)
        assert joker == "X1" and new.cards[2].card == card
    layer = apply(
        apply(example_5(RummyRules(variant="b", layoff_credit="layer")), Swap(meld=1, card="D6")),
        Lay(cards=("H8", "S8", "X1=8")),
    )
    plus = credited(layer)
    assert (plus[P1], plus[P2]) == (9, 6 + 24)  # under layer a swap moves points


# --- 6. No feeding the row (c) -------------------------------------------------------------------


def test_example_6_no_feeding_the_row() -> None:
    start = table(C, {P2: "H6 C2 D9 SK HT"}, row="SA C6 SQ S6", seat=P2)
    with pytest.raises(IllegalAction, match="would make a meld"):
        act(start, "discard H6")
    assert Discard(card="H6") not in legal(start)
    claim = Claim(cards=("C6", "S6", "H6"))
    assert claim in legal(start)
    claimed = apply(start, claim)
    assert claimed.row == cards("SA SQ") and claimed.melds[0].owner == P2
    assert credited(claimed)[P2] == 18
    assert not claimed.ended and claimed.seat == P2  # the turn goes on and ends with a discard
    done = act(claimed, "discard C2")
    assert done.row == cards("SA SQ C2") and done.seat != P2
    # with D6 also in the row the claim must take it: C6 D6 S6 H6, 24
    more = table(C, {P2: "H6 C2"}, row="SA C6 SQ S6 D6", seat=P2)
    with pytest.raises(IllegalAction, match="D6"):
        act(more, "claim C6 S6 H6")
    assert credited(act(more, "claim C6 S6 H6 D6"))[P2] == 24
    # H7 and H9 in the row: holding H8 claims the run H7 H8 H9 (24)
    run = table(C, {P2: "H8 C2"}, row="H7 SQ H9", seat=P2)
    assert Claim(cards=("H7", "H8", "H9")) in legal(run)
    assert credited(act(run, "claim H7 H8 H9"))[P2] == 24


# --- 7. Doubled loss (c) -----------------------------------------------------------------------------


def test_example_7_doubled_loss() -> None:
    assert hand_minus(cards("H7 SK X1"), C) == (34, 1)
    assert hand_minus(cards("H7 X1 X2"), C) == (28, 1)
    assert hand_minus(cards("X1"), C) == (0, 1)
    net = RummyRules(variant="c", joker_doubling="net")
    for rules, want in ((C, -14), (net, 3)):  # melds worth 20
        state = table(rules, {P3: "H7 SK X1", P1: "C8"}, melds=[meld("C2 C3 C4 C5 C6", P3, rules)], end=WENT_OUT)
        assert score(state).score[P3] == want
    assert score(table(net, {P3: "H7 SK X1"}, melds=[meld("C2 C3 C4 C5 C6", P3, net)], end=WENT_OUT)).minus[P3] == 17
    for rules, want in ((C, -29), (net, -24)):  # worth 5 to P3: a C5 laid off under layer
        layer = RummyRules(variant="c", joker_doubling=rules.joker_doubling, layoff_credit="layer")
        state = table(
            layer, {P3: "H7 SK X1", P1: "C8"}, melds=[meld("C2 C3 C4", P1, layer, [("C5", P3)])], end=WENT_OUT
        )
        assert score(state).plus[P3] == 5 and score(state).score[P3] == want


# --- 8. Melding first (d) -------------------------------------------------------------------------


def test_example_8_melding_first() -> None:
    start = table(D, {P2: "H7 H8 C3 C4 C5 SK"}, row="S2 D7 H9", seat=P2)
    with pytest.raises(IllegalAction, match="M22"):
        act(start, "take 3")
    assert not any(isinstance(a, Take) for a in legal(start))
    melded = act(start, "meld C3 C4 C5")
    assert credited(melded)[P2] == 12
    assert Take(n=3) in legal(melded)
    done = act(act(melded, "take 3"), "meld H7 H8 H9")
    assert credited(done)[P2] == 12 + 24


# --- 9. The stock runs out (a, 4 players) --------------------------------------------------------


def test_example_9_the_stock_runs_out() -> None:
    rules = RummyRules(variant="a", players=4)
    state = deal(rules, 3, rules.pack)
    assert len(state.stock) == 36 - 4 * 5 - 1  # 16, one already drawn by P1
    while not state.ended:
        state = apply(state, Discard(card=state.drawn))
    assert state.end == STOCK_OUT and state.turns == 16 and state.out == -1
    end = table(rules, {P1: "S7 C8", P2: "HA SA D9 C6 ST"}, melds=[meld("HJ HQ HK", P1, rules)], end=STOCK_OUT)
    s = score(end)
    assert (s.score[P1], s.score[P2]) == (15, -47) and s.end == "stock_out" and s.out is None


# --- 10. Going out without a discard (a) ---------------------------------------------------------


def test_example_10_going_out_without_a_discard() -> None:
    before = table(A, {P1: "C9 CT", P2: "D7 D8", P3: "H6 S9"}, seat=P3, stock="CJ S6")
    drew = act(before, "discard H6")
    assert drew.seat == P1 and drew.drawn == "CJ" and drew.hands[P1] == cards("C9 CT CJ")
    out = act(drew, "meld C9 CT CJ")
    assert out.end == WENT_OUT and out.out == P1 and out.hands[P1] == () and out.row == ("H6",)
    assert score(out).plus[P1] == 29


# --- 11. Two packs (b, 108 cards) -----------------------------------------------------------------


def test_example_11_two_packs() -> None:
    two = RummyRules(variant="b", packs=2)
    assert len(two.pack) == 108
    assert make_meld([parse_token(t) for t in "H7 S7 D7".split()], two, 0).kind == "set"
    with pytest.raises(Refused, match="different suits"):
        make_meld([parse_token(t) for t in "H7 H7' S7".split()], two, 0)
    run = meld("HJ HQ HK HA", P1, two, [("HT'", P2)])
    assert run.text == "HT' HJ HQ HK HA"


# --- 12. The end of the game -----------------------------------------------------------------------


def test_example_12_the_end_of_the_game() -> None:
    m = msgspec.structs.replace(new_match(A), totals=(470, 495, 430))
    done = finish_deal(m, example_3(A))
    assert done.totals == (521, 510, 386) and done.complete
    assert done.results[-1].score == (51, 15, -44) and done.results[-1].totals == (521, 510, 386)
    assert done.result().places == (1, 2, 3)
