"""Targeted tests of the rules page's points M1-M7 and M27-M49 (the details that decide records
and results), one test or a few per point."""

from __future__ import annotations

import msgspec
import pytest

from protocol.errors import IllegalAction
from protocol.rummy import (
    Claim,
    Deal,
    Discard,
    Lay,
    LayOff,
    Meld,
    Refused,
    RummyRules,
    Swap,
    Take,
    apply,
    barred,
    credited,
    cycle,
    deal,
    lay_off,
    legal,
    make_meld,
    pack,
    parse_action,
    parse_token,
    places,
    points,
    rules_from_record,
    score,
    swap_joker,
)

from .helpers import cards, meld, table

A = RummyRules(variant="a")
B = RummyRules(variant="b")
B2 = RummyRules(variant="b", packs=2)
C = RummyRules(variant="c")
D = RummyRules(variant="d")


def mk(text: str, rules: RummyRules, owner: int = 0) -> Meld:
    return make_meld([parse_token(t) for t in text.split()], rules, owner)


def act(state: Deal, text: str) -> Deal:
    return apply(state, parse_action(text))


# --- M1-M3, M44-M46: cards and options --------------------------------------------------------


def test_packs_and_points() -> None:
    """M1, M2."""
    assert len(pack("a")) == 36 and pack("a")[0] == "C6" and "C2" not in pack("a")
    assert len(pack("b")) == len(pack("c")) == len(pack("d")) == 54 and pack("c")[-2:] == ("X1", "X2")
    assert len(pack("b", 2)) == 108 and "HA'" in pack("b", 2) and pack("b", 2)[-4:] == ("X1", "X2", "X3", "X4")
    assert len(set(pack("b", 2))) == 108
    assert [points(c) for c in cards("C2 C9 CT CJ CQ CK CA")] == [2, 9, 10, 10, 10, 10, 11]
    assert points("HA'") == 11 and points("X1", "HQ") == 10 and points("X1", "A") == 11 and points("X1") == 0
    assert sum(points(c) for c in pack("a")) == 4 * (6 + 7 + 8 + 9 + 40 + 11)


def test_rank_cycle_and_ace_joins_low() -> None:
    """M3, M44: a closed cycle; false makes a line, in every variant."""
    a, line = cycle("a", True), cycle("a", False)
    assert a.nxt(a.pos["A"]) == a.pos["6"] and line.nxt(line.pos["A"]) is None and line.prv(0) is None
    flat_a = RummyRules(variant="a", ace_joins_low=False)
    flat_b = RummyRules(variant="b", ace_joins_low=False)
    for text, rules in (("HK HA H6", flat_a), ("SA S2 S3", flat_b), ("SK SA S2", flat_b)):
        with pytest.raises(Refused, match="ace_joins_low"):
            mk(text, rules)
    assert mk("HQ HK HA", flat_a).kind == "run" and mk("H6 H7 H8", flat_a).kind == "run"
    # a whole-suit run is a line from the lowest rank then
    assert mk("H6 H7 H8 H9 HT HJ HQ HK HA", flat_a).kind == "run"
    with pytest.raises(Refused):
        mk("H7 H8 H9 HT HJ HQ HK HA H6", flat_a)


def test_options_defaults_and_validation() -> None:
    """M45, M46 and the table of options; a bad option is one clear error."""
    assert RummyRules().variant == "a" and RummyRules().players == 3 and RummyRules().target == 500
    assert RummyRules(variant="a").credit == "layer" and RummyRules(variant="b").credit == "owner"
    assert RummyRules(variant="b", players=4).pack_count == 1 and RummyRules(variant="b", players=5).pack_count == 2
    assert RummyRules(variant="b", players=6, packs=1).pack_count == 1
    assert RummyRules(variant="a", packs=1).pack_count == 1 and RummyRules(variant="d", packs=1).pack_count == 1
    assert RummyRules(variant="a", joker_doubling="net").variant == "a"  # accepted, ignored (M45)
    assert RummyRules(variant="b", players=5).resolved().packs == 2
    for bad, match in (
        ({"variant": "e"}, "variant"),
        ({"variant": "a", "players": 5}, "2 to 4"),
        ({"variant": "b", "players": 7}, "2 to 6"),
        ({"variant": "c", "packs": 2}, "M45"),
        ({"packs": 3}, "packs"),
        ({"target": 0}, "target"),
        ({"layoff_credit": "both"}, "layoff_credit"),
        ({"joker_doubling": "all"}, "joker_doubling"),
        ({"max_deals": 0}, "max_deals"),
        ({"turn_seconds": -1}, "turn_seconds"),
    ):
        with pytest.raises(ValueError, match=match):
            RummyRules(**bad)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"variant": "c", "packs": 2}, RummyRules)


def test_rules_from_record_m46() -> None:
    assert rules_from_record({"variant": "b"}, ["a", "b", "c", "d", "e"]).players == 5
    assert rules_from_record({}, ["a", "b"]).players == 2  # not the default 3
    assert rules_from_record({"players": 2, "unknown": 1}, 2).players == 2
    with pytest.raises(ValueError, match="M46"):
        rules_from_record({"players": 3}, ["a", "b"])
    with pytest.raises(ValueError):
        rules_from_record({"variant": "a"}, ["a", "b", "c", "d", "e"])


# --- M4-M7, M37-M39: melds --------------------------------------------------------------------


def test_meld_kinds_and_jokers() -> None:
    """M4, M6, M7, M38."""
    assert mk("H7 S7 D7", A).kind == "set" and mk("H7 H8 H9", A).kind == "run"
    assert mk("H7 S7 X1=7", B).kind == "set" and mk("H7 H8 X1=H9", B).kind == "run"  # from the naturals
    assert mk("H7 S7 X1=C7", C).kind == "set" and mk("X1=H6 H7 H8", C).kind == "run"
    for text, rules, why in (
        ("H7 S7", A, "three or more"),
        ("H7 X1=H8 X2=H9", B, "two natural"),
        ("H7 H8 X1=H9 X2=HT X3=HJ", B2, "no more jokers"),
        ("H7 S8 D9", A, "neither"),
        ("H7 S7 X1=H7", B, "rank only"),
        ("H7 S7 X1=H7", C, "suit already"),
        ("H7 S7 X1=7", C, "must name"),
        ("H7 H8 X1=9", B, "names the card"),
        ("H9 H8 H7", A, "low end first"),
        ("H7 S7 D7 C7 X1=7", B, "at most four"),
    ):
        with pytest.raises(Refused, match=why):
            mk(text, rules)


def test_lay_off_at_either_end_and_the_missing_rank_m39() -> None:
    """M5, M39."""
    run = mk("H7 H8 H9", A)
    assert lay_off(run, "H6", "", A, 1).text == "H6 H7 H8 H9" and lay_off(run, "HT", "", A, 1).text == "H7 H8 H9 HT"
    with pytest.raises(Refused, match="fits neither"):
        lay_off(run, "HQ", "", A, 1)
    eight = mk("H7 H8 H9 HT HJ HQ HK HA", A)  # lacks only H6: both ends; the high end (M39)
    assert lay_off(eight, "H6", "", A, 1).text == "H7 H8 H9 HT HJ HQ HK HA H6"
    whole = mk("HT HJ HQ HK HA H6 H7 H8 H9", A)  # a whole-suit run in any rotation
    with pytest.raises(Refused):
        lay_off(whole, "H6", "", A, 1)
    joker = lay_off(mk("H7 H8 H9", B), "X1", "H6", B, 1)
    assert joker.text == "X1=H6 H7 H8 H9" and joker.rank == "6"
    two = lay_off(mk("H7 H8 X1=H9", B2), "X2", "HT", B2, 1)
    with pytest.raises(Refused, match="no more jokers"):
        lay_off(two, "X3", "HJ", B2, 1)
    s = mk("H7 S7 D7", A)
    assert lay_off(s, "C7", "", A, 1).text == "H7 S7 D7 C7"
    with pytest.raises(Refused):
        lay_off(s, "H7", "", A, 1)


def test_m37_named_suit_and_b_set_size() -> None:
    named = mk("H7 S7 X1=C7", C)
    with pytest.raises(Refused, match="M37"):
        lay_off(named, "C7", "", C, 1)
    assert lay_off(named, "D7", "", C, 1).text == "H7 S7 X1=C7 D7"
    new, joker = swap_joker(named, "C7", C, 1)  # only by a swap
    assert joker == "X1" and new.text == "H7 S7 C7"
    b = mk("H7 S7 X1=7 X2=7", B)
    with pytest.raises(Refused, match="at most four"):
        lay_off(b, "C7", "", B, 1)


# --- M27-M31: takes and swaps ----------------------------------------------------------------------


def test_m27_the_named_card_is_used_next() -> None:
    start = table(C, {0: "HQ HK C2 S9"}, row="D4 HJ S3", seat=0)
    took = act(start, "take 2")
    assert took.pending == "HJ" and all("HJ" in str(a) for a in legal(took))
    for text in ("discard C2", "take 1", "meld C2 S9 D4"):
        with pytest.raises(IllegalAction):
            act(took, text)
    assert act(took, "meld HJ HQ HK").pending == ""
    # a claim does not use it
    row = table(C, {0: "H8 S6 S7 C2"}, row="H7 H9 S8", seat=0, melded=[0])
    took = act(row, "take 3")
    with pytest.raises(IllegalAction, match="use S8 first"):
        act(took, "claim H7 H8 H9")


def test_m28_swap_refused_if_the_joker_cannot_be_used() -> None:
    m = meld("H8 S8 D8 X1=C8", 1, C)  # full after the swap, and no other meld
    lone = table(C, {0: "C8 C2"}, melds=[m], seat=0)
    with pytest.raises(IllegalAction, match="M28"):
        act(lone, "swap 1 C8")
    assert not any(isinstance(a, Swap) for a in legal(lone))
    # the joker may be laid off on the meld it came from
    back = table(B, {0: "D6 C9"}, melds=[meld("D4 D5 X1=D6 D7", 1, B)], seat=0)
    swapped = act(back, "swap 1 D6")
    assert LayOff(meld=1, card="X1=D8") in legal(swapped) and LayOff(meld=1, card="X1=D3") in legal(swapped)
    assert act(swapped, "layoff 1 X1=D8").melds[0].text == "D4 D5 D6 D7 X1=D8"


def test_m29_b_set_swap_takes_the_first_joker() -> None:
    m = mk("X2=7 H7 S7 X1=7", B2)
    new, joker = swap_joker(m, "C7'", B2, 1)
    assert joker == "X2" and new.text == "C7' H7 S7 X1=7"
    with pytest.raises(Refused):
        swap_joker(m, "H7'", B2, 1)  # hearts it has


def test_m30_copies_and_jokers() -> None:
    assert parse_token("X1=HQ'") == ("X1", "HQ") and str(parse_action("layoff 2 x1=hq'")) == "layoff 2 X1=HQ"
    run = mk("HJ X1=HQ HK", B2)
    for copy in ("HQ", "HQ'"):
        assert swap_joker(run, copy, B2, 1)[0].text == f"HJ {copy} HK"


def test_m31_jokers_may_name_any_fitting_card() -> None:
    state = table(C, {0: "H7 H8 X1 C2"}, melds=[meld("H9 HT HJ", 1, C)], seat=0)
    assert act(state, "meld H7 H8 X1=H9").melds[1].text == "H7 H8 X1=H9"  # H9 lies in another meld
    two = [meld("S2 S3 X1=S4", 0, B), meld("X2=S4 S5 S6", 1, B)]
    assert two[0].cards[2].stands == two[1].cards[0].stands == "S4"


# --- M21, M32, M33, M48, M49: the bar and claims -----------------------------------------------------


def test_m21_bar_is_judged_on_the_whole_row() -> None:
    row = cards("SA C6 SQ S6")
    assert barred("H6", row, C) and not barred("H5", row, C) and not barred("H6", row, B)
    assert barred("S5", cards("S3 D9 S4"), C)  # a run S3 S4 S5
    assert barred("S5", cards("S3 X1"), C)  # S3 X1=S4 S5
    assert barred("S5", cards("S7 X1"), C)  # S5 X1=S6 S7
    assert not barred("S5", cards("S8 X1"), C)  # two gaps, one joker
    assert barred("H6", cards("C6 X2"), C)  # C6 H6 X2=S6
    assert not barred("SA", cards("S2 S3"), RummyRules(variant="c", ace_joins_low=False))
    assert barred("SA", cards("S2 S3"), C)


def test_m32_jokers_are_barred_too() -> None:
    assert barred("X1", cards("C6 H6"), C)
    assert barred("X1", cards("H7 H8"), C) and barred("X1", cards("H7 H9"), C)
    assert barred("X1", cards("H7 H9 X2"), C)
    assert not barred("X1", cards("H7 HT"), C) and not barred("X1", cards("H7 S8 X2"), C)
    state = table(C, {0: "X1 C2"}, row="H7 H8", seat=0)
    with pytest.raises(IllegalAction, match="M21"):
        act(state, "discard X1")
    assert act(state, "claim H7 H8 X1=H9").melds[0].text == "H7 H8 X1=H9"


def test_m33_claims_take_every_fitting_card_and_jokers_fill_gaps() -> None:
    state = table(C, {0: "H8 C2 D9"}, row="H5 X1 H7 SQ HT", seat=0)
    assert Claim(cards=("H7", "H8", "X1=H9", "HT")) in legal(state)
    claimed = act(state, "claim H7 H8 X1=H9 HT")
    assert claimed.row == cards("H5 SQ")
    assert Claim(cards=("H7", "H8", "X1=H9")) not in legal(state)
    with pytest.raises(IllegalAction, match="HT"):
        act(state, "claim H7 H8 X1=H9")  # HT lies next to the end
    joker_place = table(C, {0: "H8 C2"}, row="H6 X1 H7", seat=0)
    with pytest.raises(IllegalAction, match="H6"):
        act(joker_place, "claim X1=H6 H7 H8")  # the natural of the joker's place lies in the row
    with pytest.raises(IllegalAction, match="exactly one"):
        act(table(C, {0: "H8 H9 C2"}, row="H7 S2", seat=0), "claim H7 H8 H9")


def test_m48_all_barred_and_no_claim_possible() -> None:
    rules = RummyRules(variant="d")
    state = table(rules, {0: "X1"}, row="C6 S6 H6 D6", seat=0, melded=[0])
    assert barred("X1", state.row, rules)
    assert not any(isinstance(a, Claim) for a in legal(state))  # five cards: a set holds four
    assert [a for a in legal(state) if isinstance(a, Discard)] == [Discard(card="X1")]
    assert act(state, "discard X1").end == "went_out"


def test_m23_m49_c_must_claim_but_not_at_once() -> None:
    state = table(C, {0: "H6 C7 S7 D7"}, row="C6 S6 SQ", seat=0, stock="HT S2 S3")
    # H6 is barred; C7 S7 D7 are not: discarding them is fine
    assert Discard(card="C7") in legal(state) and Discard(card="H6") not in legal(state)
    barred_all = table(C, {0: "H6 D6"}, row="C6 S6 SQ", seat=0, stock="HT S2 S3")
    assert not any(isinstance(a, Discard) for a in legal(barred_all))
    with pytest.raises(IllegalAction, match="claim first"):
        act(barred_all, "discard H6")
    # the claim need not be the very next action: a meld first is fine
    meld_first = table(C, {0: "H6 D6 C2 C3 C4"}, row="C6 S6 SQ", seat=0)
    assert not any(isinstance(a, Discard) for a in legal(act(meld_first, "meld C2 C3 C4")))
    after = act(meld_first, "meld C2 C3 C4")
    claimed = act(after, "claim C6 S6 H6")
    assert claimed.hands[0] == ("D6",) and claimed.row == ("SQ",) and Discard(card="D6") in legal(claimed)


def test_m23_d_barred_from_claiming_discards_any() -> None:
    state = table(D, {0: "H6 D6"}, row="C6 S6 SQ", seat=0)
    assert {a for a in legal(state)} == {Discard(card="H6"), Discard(card="D6")}
    assert not act(state, "discard H6").ended


# --- M34-M36, M40-M43 ----------------------------------------------------------------------------------


def test_m35_competition_ranking() -> None:
    assert places([10, 5, 5, 1]) == [1, 2, 2, 4]
    assert places([3, 3, 3]) == [1, 1, 1] and places([1, 9, 9]) == [3, 1, 1]


def test_m36_m43_d_lay_off_before_first_meld_does_not_count() -> None:
    state = table(D, {0: "H9 C2 D5 S8"}, row="SK SQ", melds=[meld("H6 H7 H8", 1, D)], seat=0)
    assert LayOff(meld=1, card="H9") in legal(state)
    laid = act(state, "layoff 1 H9")
    assert not laid.melded[0]
    with pytest.raises(IllegalAction, match="M22"):
        act(laid, "take 1")


def test_m40_last_card_discarded_on_an_empty_stock_went_out() -> None:
    state = table(A, {0: "H6", 1: "S9 SA"}, seat=0, stock="")
    out = act(state, "discard H6")
    assert out.end == "went_out" and out.out == 0
    last = act(table(A, {0: "H6 H9", 1: "S9 SA"}, seat=0, stock=""), "discard H6")
    assert last.end == "stock_out" and last.out == -1


def test_m41_m42_credit_for_swaps_and_claims() -> None:
    layer = RummyRules(variant="c", layoff_credit="layer")
    state = table(layer, {0: "H6 C2 S9"}, row="C6 S6", melds=[meld("D2 D3 D4", 1, layer)], seat=0)
    claimed = act(state, "claim C6 S6 H6")
    assert credited(claimed)[0] == 18 and {p.by for p in claimed.melds[1].cards} == {0}


def test_m45_joker_doubling_ignored_in_b() -> None:
    b_net = RummyRules(variant="b", joker_doubling="net")
    state = table(b_net, {0: "X1 H7", 1: "C2"}, end="went_out", out=1)
    assert score(state).minus[0] == 57 and score(state).score[0] == -57


# --- M47: listing ---------------------------------------------------------------------------------


def test_m47_equivalent_actions_are_accepted_though_not_listed() -> None:
    state = table(B2, {0: "H7 S7 D7 H7' X1 X2 C9 CT"}, seat=0)
    listed = legal(state)
    assert Lay(cards=("S7", "H7", "D7")) in listed
    for text in ("meld D7 S7 H7", "meld S7 H7' D7", "meld S7 H7 X2=7"):
        assert parse_action(text) not in listed
        act(state, text)  # accepted all the same
    whole = table(A, {0: "H6 H7 H8 H9 HT HJ HQ HK HA S6"}, seat=0)
    assert Lay(cards=cards("H6 H7 H8 H9 HT HJ HQ HK HA")) in legal(whole)
    assert act(whole, "meld HT HJ HQ HK HA H6 H7 H8 H9").melds[0].rank == "T"


def test_legal_lists_only_what_apply_accepts_in_one_turn() -> None:
    state = deal(RummyRules(variant="d", players=2), 1, RummyRules(variant="d", players=2).pack)
    for action in legal(state):
        apply(state, action)
    assert isinstance(legal(state)[-1], Discard) and not any(isinstance(a, Take) for a in legal(state))
