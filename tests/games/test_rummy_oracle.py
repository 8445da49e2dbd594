"""Tests of the rummy reference checker (``rummy_oracle``): the record fixtures and the rules one by one.

The fixtures (tests/data/rummy/*.jsonl, written by ``make_records.py`` with results by hand from the
worked examples) must give the verdicts they state; the unit tests pin the rules the fixtures do not
reach, each named by its rule number, on small hand-built positions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.games.rummy_oracle import (
    Config,
    DealState,
    Refused,
    act,
    barred,
    build_meld,
    check,
    legal_discards,
    parse_token,
    places,
    points,
    score_deal,
)

DATA = Path(__file__).parent.parent / "data" / "rummy"


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]


def notes(name: str) -> list[Any]:
    return [pytest.param(r, id=r["note"][:50]) for r in load(name)]


@pytest.mark.parametrize("record", notes("agree"))
def test_agreeing_records(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == record.get("expect", "agree"), (verdict.refusal, verdict.differences)


@pytest.mark.parametrize("record", notes("refused"))
def test_refused_records(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.refusal is not None, verdict.differences
    expect = record["expect"]
    assert (verdict.refusal.deal, verdict.refusal.position) == (expect["deal"], expect["position"]), verdict.refusal
    assert expect["reason"] in verdict.refusal.reason


@pytest.mark.parametrize("record", notes("differ"))
def test_differing_records(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == "differ", verdict.refusal
    assert [d.split(":")[0] for d in verdict.differences] == record["expect"]


def test_fixture_counts() -> None:
    """A guard against a fixture file losing its records unnoticed."""
    assert [len(load(n)) for n in ("agree", "refused", "differ")] == [17, 14, 3]


# --- positions built by hand ---------------------------------------------------------------


def table(
    variant: str,
    hands: list[list[str]],
    row: tuple[str, ...] | list[str] = (),
    melds: tuple[tuple[int, str], ...] | list[tuple[int, str]] = (),
    **options: Any,
) -> DealState:
    """A deal in the middle: seat 0 to move (having drawn), the given row and melds (owner, cards), one stock card left."""
    cfg = Config(variant=variant, players=len(hands), **options)
    state = DealState(cfg, len(hands) - 1, [list(h) for h in hands], ["DK"], list(row))
    for owner, cards in melds:
        pieces = [parse_token(cfg, c) for c in cards.split()]
        for p in pieces:
            p.credit = owner
        state.melds.append(build_meld(cfg, owner, pieces))
        state.melded.add(owner)
    return state


def refuse(state: DealState, action: str, text: str) -> None:
    verb, *args = action.split()
    with pytest.raises(Refused, match=text):
        act(state, state.turn, verb, args)


def play(state: DealState, *actions: str) -> None:
    for action in actions:
        verb, *args = action.split()
        act(state, state.turn, verb, args)


def meld(variant: str, cards: str, **options: Any) -> int:
    """Builds a meld and returns its points (M2, M24); raises Refused if the rules do not allow it."""
    cfg = Config(variant=variant, **options)
    m = build_meld(cfg, 0, [parse_token(cfg, c) for c in cards.split()])
    return sum(points(cfg.ranks[p.rank]) for p in m.pieces)


def test_example_2_runs_round_the_corner() -> None:
    """Example 2, M3, M4: runs pass the ace; the ace counts 11 at the low end too."""
    assert meld("a", "HK HA H6") == 27
    for cards in ("HQ HK HA H6 H7", "HA H6 H7", "H6 H7 H8"):
        meld("a", cards)
    with pytest.raises(Refused):
        meld("a", "H9 HA H6")
    assert meld("b", "SA S2 S3") == 16
    for variant in "bcd":
        meld(variant, "SK SA S2")
        meld(variant, "SQ SK SA S2 S3")


def test_ace_high_only_and_written_order() -> None:
    """M44 (ace_joins_low false makes a line, in a too), M39 (a run is written low to high)."""
    with pytest.raises(Refused):
        meld("b", "SK SA S2", ace_joins_low=False)
    with pytest.raises(Refused):
        meld("a", "HK HA H6", ace_joins_low=False)
    meld("a", "HQ HK HA", ace_joins_low=False)
    with pytest.raises(Refused, match="low to high"):
        meld("b", "S4 S3 S2")
    whole = " ".join("S" + r for r in "56789TJQKA234")  # a whole-suit run in any rotation
    meld("b", whole)
    with pytest.raises(Refused):
        meld("b", whole, ace_joins_low=False)


def test_example_11_two_packs_and_joker_naming() -> None:
    """Example 11 and M4 (a set of different suits), M7, M19 (c and d name jokers), b set jokers rank only."""
    meld("b", "H7 S7 D7", packs=2)
    with pytest.raises(Refused, match="different suits"):
        meld("b", "H7 H7' S7", packs=2)
    meld("b", "HT' HJ HQ HK HA", packs=2)
    assert meld("b", "H8 S8 X1=8") == 24
    with pytest.raises(Refused, match="rank only"):
        meld("b", "H8 S8 X1=C8")
    with pytest.raises(Refused, match="name"):
        meld("c", "H8 S8 X1=8")
    with pytest.raises(Refused, match="without"):
        meld("d", "H5 H6 X1")
    with pytest.raises(Refused, match="M7"):
        meld("c", "H5 X1=H6 X2=H7")
    meld("c", "H5 X1=H6 X2=H7 H8")
    with pytest.raises(Refused, match="different suits"):
        meld("c", "H8 S8 X1=S8")


def test_example_1_naming_the_oldest_card_takes_all_four() -> None:
    """Example 1, M14: naming SA takes SA SQ CK HJ, and SA is laid at once as SQ SK SA."""
    state = table("a", [["SK", "D6", "D7"], ["C9"], ["H9"]], row=["SA", "SQ", "CK", "HJ"])
    play(state, "take 1", "meld SQ SK SA")
    assert state.row == [] and sorted(state.hands[0]) == ["CK", "D6", "D7", "HJ"]
    assert score_deal(state)["plus"][0] == 31


def test_a_take_must_be_used_by_a_meld_or_lay_off_only() -> None:
    """M27: a claim does not use the card taken; M14: a take may be used by a lay-off."""
    state = table("c", [["H7", "H8", "C2"], ["C9"]], row=["SQ", "H9"], melds=[(1, "S9 ST SJ")])
    play(state, "take 1", "layoff 1 SQ")  # SQ laid off on another's run; H9 into the hand
    assert "H9" in state.hands[0]
    state = table("c", [["C6", "S6", "D2"], ["C9"]], row=["H6", "H2", "S2"])
    play(state, "take 1")
    refuse(state, "claim H2 S2 D2", "used at once")


def test_example_4_jokers_scored_in_b() -> None:
    """Example 4, M24: a joker on the table counts the rank it stands for, one in hand costs 50 in b."""
    for credit, want in (("owner", [54, -53, 9]), ("layer", [44, -43, 9])):
        state = table(
            "b",
            [["C3"], ["X2", "D9", "SQ"], ["CA", "CK"]],
            melds=[(0, "S9 ST X1=SJ"), (0, "H4 H5 H6"), (1, "C2 D2 H2"), (2, "DJ DQ DK")],
            layoff_credit=credit,
        )
        state.hands[0] = []
        state.turn = 1
        play(state, "layoff 1 SQ")
        assert score_deal(state)["score"] == want


def test_example_7_doubled_loss() -> None:
    """Example 7, M24, M34, B11: c's jokers in hand double the minus (hand) or a negative net (net)."""

    def scores(hand: list[str], plus: int, doubling: str) -> tuple[int, int]:
        state = table("c", [hand, ["C4"]], joker_doubling=doubling)
        if plus:
            state.melds.append(build_meld(state.cfg, 0, [parse_token(state.cfg, c) for c in ("C5", "S5", "H5", "D5")]))
            for p in state.melds[0].pieces:
                p.credit = 0
            state.melds[0].pieces = state.melds[0].pieces[
                : plus // 5
            ]  # 20, or cut to one five (no real meld is worth 5)
        result = score_deal(state)
        return result["minus"][0], result["score"][0]

    assert scores(["H7", "SK", "X1"], 0, "hand") == (34, -34)
    assert scores(["H7", "X1", "X2"], 0, "hand") == (28, -28)
    assert scores(["X1"], 0, "hand") == (0, 0)
    assert scores(["H7", "SK", "X1"], 20, "hand") == (34, -14)
    assert scores(["H7", "SK", "X1"], 20, "net") == (17, 3)
    assert scores(["H7", "SK", "X1"], 5, "hand") == (34, -29)
    assert scores(["H7", "SK", "X1"], 5, "net") == (17, -24)


def test_m21_bar_counts_row_jokers_and_bars_jokers() -> None:
    """M21, M32: a joker in the row counts as a joker; a joker may not be discarded next to H5 H7."""
    cfg = Config(variant="c")
    assert barred(cfg, "H6", ["C9", "X1", "H7"])  # H6 H7 X1=H8
    assert not barred(cfg, "H6", ["X1", "X2", "C9"])  # one natural only (M7)
    assert barred(cfg, "X2", ["H5", "C9", "H7"])
    assert not barred(cfg, "X2", ["H5", "C9", "H8"])
    assert not barred(Config(variant="b"), "X2", ["H5", "H7"])  # b has no bar
    state = table("c", [["X1", "D2"], ["C9"]], row=["H5", "H7"])
    assert legal_discards(state) == ["D2"]


def test_m23_m49_c_must_claim_when_every_card_is_barred() -> None:
    """M23, M49: in c the discard waits for a claim (not necessarily the next action); claims go on."""
    state = table("c", [["H6", "H8", "DA"], ["C9"]], row=["C6", "S6", "H7", "H9"], melds=[(1, "DJ DQ DK")])
    assert legal_discards(state) == ["DA"]
    play(state, "layoff 1 DA")
    assert legal_discards(state) == []
    refuse(state, "discard H6", "claim is due")
    play(state, "claim H7 H8 H9")
    refuse(state, "discard H6", "claim is due")
    play(state, "claim C6 S6 H6")
    assert state.end == "went_out" and state.out == 0 and state.row == []
    assert score_deal(state)["plus"] == [42, 41]  # M42: the row cards count for the claimer


def test_m48_and_m23_d_any_card_may_go() -> None:
    """M48: every card barred and no claim possible; M23: in d a player barred from claiming by M22."""
    state = table("d", [["X1"], ["C9"]], row=["C6", "S6", "H6", "D6"])
    state.melded.add(0)
    assert legal_discards(state) == ["X1"]  # the claim would need all four sixes and the joker
    state = table("d", [["H6"], ["C9"]], row=["C6", "S6"])
    assert legal_discards(state) == ["H6"]
    state.melded.add(0)
    assert legal_discards(state) == []
    refuse(state, "claim C6 H6", "three")


def test_m22_m43_d_lay_off_before_the_first_meld() -> None:
    """M43: a lay-off is allowed before one's first meld in d; M22: a claim is not; M36: a meld opens both."""
    state = table("d", [["H6", "SQ", "C2", "C3", "C4"], ["C9"]], row=["C6", "S6"], melds=[(1, "S9 ST SJ")])
    play(state, "layoff 1 SQ")
    refuse(state, "claim C6 S6 H6", "M22")
    play(state, "meld C2 C3 C4", "claim C6 S6 H6")


def test_claims_take_every_fitting_natural_and_may_add_row_jokers() -> None:
    """M21, M33: jokers from the row may fill a claimed run's gap; a natural at a joker's place must be taken."""
    state = table("c", [["H8", "C2"], ["C9"]], row=["H6", "X1", "H9", "D4"])
    refuse(state, "claim H8 H9", "three")
    play(state, "claim H6 X1=H7 H8 H9")
    assert state.row == ["D4"]
    state = table("c", [["H8", "C2"], ["C9"]], row=["H7", "X1", "H9"])
    refuse(state, "claim X1=H7 H8 H9", "every natural")
    refuse(state, "claim H7 H8 X1=H9", "every natural")
    play(state, "claim H7 H8 H9 X1=HT")
    refuse(state, "claim H7 H8", "from the row")


def test_swaps() -> None:
    """M18, M28, M29, M30, M37: what may replace a joker, which joker goes, and when the swap is refused."""
    state = table("b", [["C8", "H2", "H3"], ["C9"]], melds=[(1, "H8 S8 X1=8 X2=8")])
    play(state, "swap 1 C8")
    assert state.pending == "X1"  # M29: the first joker in the meld's order
    refuse(state, "discard H2", "used at once")
    play(state, "meld H2 H3 X1=H4")
    state = table("b", [["C8", "S2"], ["C9"]], melds=[(1, "H8 S8 D8 X1=8")])
    refuse(state, "swap 1 C8", "M28")  # the set is full, nothing else takes the joker
    for card in ("H7", "H7'"):  # M30: either copy replaces X1=H7
        state = table("b", [[card, "S2", "S3"], ["C9"]], melds=[(1, "H5 H6 X1=H7'")], packs=2)
        play(state, f"swap 1 {card}", "meld S2 S3 X1=S4")
    state = table("c", [["H8", "D8", "C2", "C3"], ["C9"]], melds=[(1, "C8 S8 X1=H8")])
    refuse(state, "layoff 1 H8", "already holds")  # M37: only by a swap
    refuse(state, "swap 1 D8", "cannot replace")  # c: only the named card
    play(state, "layoff 1 D8", "swap 1 H8", "meld C2 C3 X1=C4")
    assert score_deal(state)["plus"] == [9, 32]


def test_lay_offs() -> None:
    """M5, M39: either end of a run; the one missing rank of a whole suit goes to the high end."""
    spades = " ".join("S" + r for r in "23456789TJQK")
    state = table("b", [["SA", "C2"], ["C9"]], melds=[(1, spades)])
    play(state, "layoff 1 SA")
    assert state.melds[0].pieces[-1].card == "SA"
    state = table("a", [["C6", "CJ"], ["S6"]], melds=[(1, "C7 C8 C9")])
    refuse(state, "layoff 1 CJ", "next card")
    play(state, "layoff 1 C6")
    assert state.melds[0].rank == 0


def test_m15_m40_going_out_by_the_last_discard_with_the_stock_empty() -> None:
    """M40: emptying the hand by a discard when the stock is empty is going out, not stock_out."""
    state = table("a", [["C6"], ["S6"]])
    state.stock = []
    play(state, "discard C6")
    assert (state.end, state.out) == ("went_out", 0)
    state = table("a", [["C6", "D9"], ["S6"]])
    state.stock = []
    play(state, "discard C6")
    assert (state.end, state.out) == ("stock_out", None)


def test_places_and_options() -> None:
    """M35 (competition ranking), M45 (packs), M46 (players), the options' values."""
    assert places([10, 5, 5, 1]) == [1, 2, 2, 4]
    base = load("agree")[0]
    for rules, text in (
        ({"variant": "c", "packs": 2}, "M45"),
        ({"variant": "a", "players": 3, "layoff_credit": "both"}, "layoff_credit"),
        ({"variant": "q"}, "variant"),
        ({"target": 0}, "target"),
    ):
        verdict = check({**base, "rules": rules})
        assert verdict.refusal is not None and text in verdict.refusal.reason, verdict.refusal
    assert check({**base, "rules": {"packs": 1, "joker_doubling": "net", "turn_seconds": 5}}).status == "agree"
    assert check({**base, "players": base["players"] + ["dan", "eve"]}).refusal is not None  # 5 players in a
