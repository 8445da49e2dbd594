"""Golden tests from the worked examples 3-11 and 13 of the Thirty-one rules page (example 12,
the whole game, is in test_whole_game.py). Each test quotes the example it reproduces; the
decks are explicit (helpers.Table.deal), so the example's hands are dealt exactly."""

from __future__ import annotations

import pytest

from protocol.lifecycle import LogError
from protocol.shuffle import shuffle
from protocol.thirty_one import (
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Restocked,
    Take,
    due,
    fold,
    parse_action,
)
from protocol.thirty_one.state import restock_seed

from .helpers import Table


def test_example_3_the_discard_rule() -> None:
    """Example 3: "B takes SK from the discard pile. He may not discard SK in this turn; he may
    discard it in a later turn." (T14)"""
    t = Table(3)
    t.deal({"A": ["C2", "C3", "SK"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6", stock=["C7"])
    t.play("A take stock", "A discard SK")
    t.act("B", "take discard")
    answer = t.refuse("B", "discard SK")
    assert answer.code == "illegal" and "T14" in answer.reason
    assert "discard SK" not in [str(a) for a in t.state.legal_actions(1)]
    t.act("B", "discard D4")
    t.churn("C", "A")
    t.act("B", "take stock")  # a later turn: SK may go now
    assert "discard SK" in [str(a) for a in t.state.legal_actions(1)]
    t.act("B", "discard SK")
    assert t.state.deal is not None and t.state.deal.pile[-1] == "SK"


def test_a_card_taken_from_the_stock_may_be_discarded_at_once() -> None:
    """T14: "A card taken from the stock may be discarded at once." """
    t = Table(2)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"]}, pile="D6", stock=["HA"])
    t.act("A", "take stock")
    t.act("A", "discard HA")
    assert t.state.deal is not None and t.state.deal.pile == ["D6", "HA"]


def knock_and_show(n: int, hands: dict[str, list[str]], knocker: str = "A") -> Table:
    """The knocker knocks on his first turn (he is on the dealer's left); everyone else takes
    the stock's top card and discards it, so the hands shown are the hands dealt."""
    t = Table(n)
    others = [c for c in "ABCDEFGHI"[:n] if c != knocker]
    fillers = ["C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"]
    used = {c for h in hands.values() for c in h}
    stock = [c for c in fillers if c not in used][: len(others)]
    t.deal(hands, pile="D2" if "D2" not in used else "S2", stock=stock)
    t.act(knocker, "knock")
    for who, card in zip(others, stock):
        t.act(who, "take stock")
        t.act(who, f"discard {card}")
    return t


def test_example_4_a_showdown() -> None:
    """Example 4: "A knocks. B, C and D each have one more turn, D (on A's right) last. The hands
    shown: A HA HK H3 = 24, B SK S9 D5 = 19, C CK CT C7 = 27, D DQ D9 H8 = 19. L = 19 and the
    knocker is above it (T23c): B and D lose one life each." """
    hands = {"A": ["HA", "HK", "H3"], "B": ["SK", "S9", "D5"], "C": ["CK", "CT", "C7"], "D": ["DQ", "D9", "H8"]}
    t = Table(4)
    t.deal(hands, pile="S2", stock=["C2", "C3", "C4"])
    t.act("A", "knock")
    assert t.view().last_turns == [1, 2, 3]  # B, C, D: D (on A's right) last
    assert t.refuse("C", "take stock").code == "out_of_turn"
    t.play("B take stock", "B discard C2", "C take stock", "C discard C3")
    assert t.view().last_turns == [3]
    assert [t.value(s) for s in "ABCD"] == [24, 19, 27, 19]
    t.play("D take stock", "D discard C4")
    ended = t.last(T31DealEnded)
    assert ended.end == "showdown"
    assert ended.shown == [hands[s] for s in "ABCD"]
    scored = t.last(T31DealScored)
    assert scored.lives == [0, 1, 0, 1]
    assert scored.coins == [3, 2, 3, 2] and scored.kitty == 2 and scored.eliminated == []


def test_example_5_the_knocker_tied() -> None:
    """Example 5: "Three players. A knocks; shown: A ST S8 C2 = 18, B HQ H8 D4 = 18, C DA DK C9 =
    21. A has L together with B (T23b): B loses one life, A none." """
    t = knock_and_show(3, {"A": ["ST", "S8", "C2"], "B": ["HQ", "H8", "D4"], "C": ["DA", "DK", "C9"]})
    assert t.last(T31DealScored).lives == [0, 1, 0]


def test_example_6_the_knocker_alone_lowest() -> None:
    """Example 6: "A knocks; shown: A CJ C9 H2 = 19, B SA S9 D3 = 20, C HK HQ H5 = 25. A loses
    two lives (T23a)." """
    t = knock_and_show(3, {"A": ["CJ", "C9", "H2"], "B": ["SA", "S9", "D3"], "C": ["HK", "HQ", "H5"]})
    scored = t.last(T31DealScored)
    assert scored.lives == [2, 0, 0] and scored.coins == [1, 3, 3] and scored.kitty == 2


def test_t23c_several_players_lowest_all_lose() -> None:
    """T23c: "every player with L loses one life"."""
    t = knock_and_show(3, {"A": ["HA", "HK", "H3"], "B": ["SK", "S9", "D5"], "C": ["DQ", "D9", "H8"]})
    assert t.last(T31DealScored).lives == [0, 1, 1]


def test_example_7_thirty_one_after_a_knock() -> None:
    """Example 7: "Four players; A knocks. The top discard is DA. B holds DK DQ S3, takes DA and
    discards S3: DA DK DQ = 31. The deal ends at once; C and D get no turn. A, C and D lose one
    life each (T17), A only one." """
    t = Table(4)
    t.deal(
        {"A": ["C2", "C3", "C4"], "B": ["DK", "DQ", "S3"], "C": ["H2", "H3", "H4"], "D": ["S4", "S5", "S6"]},
        pile="DA",
    )
    t.act("A", "knock")
    t.play("B take discard", "B discard S3")
    ended = t.last(T31DealEnded)
    assert ended.end == "thirty_one"
    assert ended.shown == [[], ["DK", "DQ", "DA"], [], []]  # only the holder of 31 shows
    assert t.last(T31DealScored).lives == [1, 0, 1, 1]
    assert t.refuse("C", "take stock").code == "no_deal"


def test_example_8_two_dealt_thirty_ones() -> None:
    """Example 8: "B is dealt HA HK HT, D SA SQ SJ, both 31. The deal ends before the first turn;
    A and C lose one life each (T18)." """
    t = Table(4)
    hands = {"A": ["C2", "C3", "C4"], "B": ["HA", "HK", "HT"], "C": ["H2", "H3", "H4"], "D": ["SA", "SQ", "SJ"]}
    owed = due(t.state)
    assert isinstance(owed, T31Dealt)
    from .helpers import build_deck

    dealt = T31Dealt(
        deal=1,
        dealer=3,
        order=[0, 1, 2, 3],
        deck=build_deck([0, 1, 2, 3], {i: hands[s] for i, s in enumerate("ABCD")}, "D2"),
        seed="",
    )
    t.add(dealt)
    assert t.state.to_move is None  # nobody has a turn
    assert t.refuse("A", "take stock").code == "busy"
    assert t.state.legal_actions(0) == []
    t.settle()
    ended = t.last(T31DealEnded)
    assert ended.end == "thirty_one" and ended.shown == [[], hands["B"], [], hands["D"]]
    assert t.last(T31DealScored).lives == [1, 0, 1, 0]
    assert sum(1 for e in t.log if not isinstance(e, (T31Dealt, T31DealEnded, T31DealScored))) == 1  # no turn


def test_a_single_dealt_thirty_one_beats_a_throw_down() -> None:
    """T16, T32: "a dealt 31 ends the deal before anyone can throw down"."""
    t = Table(3, throw_down=True)
    t.deal({"A": ["C2", "C3", "C4"], "B": ["H2", "H3", "H4"], "C": ["SA", "SK", "SQ"]}, pile="D2")
    assert t.refuse("A", "throw").code == "no_deal"
    assert t.last(T31DealEnded).end == "thirty_one"
    assert t.last(T31DealScored).lives == [1, 1, 0]


def test_example_9_the_county_knocker_with_one_coin() -> None:
    """Example 9: "B has 1 coin, knocks, and is alone lowest: he owes two coins, pays his last one
    into the kitty, still owes one and has none: B is eliminated." (T39: lives 2, one coin paid.)"""
    t = Table(3, coins=1)
    t.deal({"A": ["HA", "HK", "C2"], "B": ["S2", "S3", "D4"], "C": ["DA", "DK", "C3"]}, pile="H2")
    t.churn("A")
    t.act("B", "knock")
    t.churn("C", "A")
    scored = t.last(T31DealScored)
    assert scored.lives == [0, 2, 0]
    assert scored.coins == [1, 0, 1] and scored.kitty == 1 and scored.eliminated == [1]


def county_table(county: bool) -> Table:
    """Four players, 1 coin each. Deal 1: A and D are dealt 31, so B and C each lose a life and
    pay their only coin (T18)."""
    t = Table(4, coins=1, county=county)
    t.deal(
        {"A": ["HA", "HK", "HQ"], "B": ["C2", "C3", "D4"], "C": ["S2", "S3", "D5"], "D": ["SA", "SK", "ST"]},
        pile="H2",
    )
    return t


def test_example_9_the_county_on_the_county_players_play_on_and_share_their_place() -> None:
    """Example 9: "C, with no coins left (on the county), would lose one life: C is eliminated
    too. B and C share their place (T26)." B and C have no coins after deal 1 and still play
    (T25); in deal 2 both have the lowest hand, both lose a life and both are eliminated."""
    t = county_table(county=True)
    first = t.last(T31DealScored)
    assert first.lives == [0, 1, 1, 0] and first.coins == [1, 0, 0, 1] and first.eliminated == []
    assert t.state.active == [0, 1, 2, 3]  # on the county: still active (T4)
    # Deal 2: dealer A (next after D), order B C D A; D knocks, B and C are lowest.
    t.deal(
        {"A": ["HA", "HK", "C4"], "B": ["C2", "C3", "D4"], "C": ["S2", "S3", "D5"], "D": ["SA", "SK", "C5"]},
        pile="H2",
        stock=["H3", "H4", "H5", "H6", "H7"],
    )
    assert t.state.dealer == 0 and t.state.deal is not None and t.state.deal.order == [1, 2, 3, 0]
    t.churn("B", "C")
    t.act("D", "knock")
    t.churn("A", "B", "C")
    scored = t.last(T31DealScored)
    assert scored.lives == [0, 1, 1, 0]
    assert scored.coins == [1, 0, 0, 1] and scored.kitty == 2 and scored.eliminated == [1, 2]
    assert t.state.places() == [1, 3, 3, 1]  # cut short: the active share 1; B and C share 3


def test_example_9_county_off_out_with_the_last_coin() -> None:
    """T25, option county false: "a player is eliminated as soon as he pays his last coin"."""
    t = county_table(county=False)
    scored = t.last(T31DealScored)
    assert scored.lives == [0, 1, 1, 0] and scored.coins == [1, 0, 0, 1] and scored.eliminated == [1, 2]
    assert t.state.active == [0, 3]


def test_example_10_taking_back_ones_own_discard() -> None:
    """Example 10: "Only A and B are left. A breaks up his hearts and discards HQ. B knocks. In his
    last turn A may take HQ back from the discard pile (he discarded it in an earlier turn, not in
    this one, T14); he must then discard another card." """
    t = Table(2)
    t.deal({"A": ["HQ", "HJ", "S3"], "B": ["CK", "CQ", "D4"]}, pile="D2", stock=["SA"])
    t.play("A take stock", "A discard HQ", "B knock")
    assert t.view("A").last_turns == [0]
    t.act("A", "take discard")
    assert t.view("A").hand == ["HJ", "S3", "SA", "HQ"]
    assert t.refuse("A", "discard HQ").code == "illegal"
    t.act("A", "discard S3")
    ended = t.last(T31DealEnded)
    assert ended.end == "showdown" and ended.shown == [["HJ", "SA", "HQ"], ["CK", "CQ", "D4"]]
    assert t.last(T31DealScored).lives == [1, 0]  # A 20 ties the knocker B 20: A loses one (T23b)


def test_example_11_minimum_knock() -> None:
    """Example 11: "With min_knock 21, A holding HK HT C4 (20) may not knock; after taking H2 and
    discarding C4 (22) he may knock at the start of his next turn." """
    t = Table(2, min_knock=21)
    t.deal({"A": ["HK", "HT", "C4"], "B": ["S2", "S3", "D4"]}, pile="D2", stock=["H2"])
    answer = t.refuse("A", "knock")
    assert answer.code == "illegal" and "21" in answer.reason and "20" in answer.reason
    assert "knock" not in [str(a) for a in t.state.legal_actions(0)]
    t.play("A take stock", "A discard C4")
    assert t.value("A") == 22
    t.churn("B")
    assert "knock" in [str(a) for a in t.state.legal_actions(0)]
    t.act("A", "knock")


@pytest.mark.parametrize(("n", "size"), [(2, 45), (3, 42), (4, 39), (9, 24)])
def test_example_13_stock_size(n: int, size: int) -> None:
    """Example 13: "With n active players the first stock holds 52 - 3n - 1 cards: 42 for 3
    players, 24 for 9." """
    t = Table(n, seed="stock size")
    t.seeded_deal()
    assert t.view().stock == size == 52 - 3 * n - 1
    assert len(t.view().pile) == 1


def first_seed_without_dealt_31(n: int, prefix: str) -> str:
    """A table seed whose first deal has no dealt 31 (found, not assumed)."""
    for k in range(100):
        t = Table(n, seed=f"{prefix}{k}")
        t.seeded_deal()
        deal = t.state.deal
        assert deal is not None
        if not deal.ended:
            return f"{prefix}{k}"
    raise AssertionError("no seed without a dealt 31")


def test_example_13_the_empty_stock_reshuffle() -> None:
    """Example 13: "When a turn ends with the stock empty and stock_out is reshuffle, the discard
    pile but its top card (at least 24 cards ...) becomes the new stock." (T28: drawn from a
    recorded seed; the top card stays as the discard pile.)"""
    seed = first_seed_without_dealt_31(3, "reshuffle ")
    t = Table(3, seed=seed)
    dealt = t.seeded_deal()
    deal = t.state.deal
    assert deal is not None
    seats = deal.order
    for turns in range(1, 43):  # everyone takes the stock's top card and discards it: hands never change
        assert deal.stock and not t.state.wants_restock
        t.churn(seats[(turns - 1) % 3])
    restock = t.last(T31Restocked)
    assert t.log.index(restock) == len(t.log) - 1  # derived at the end of the turn that emptied the stock
    old_pile = [dealt.deck[9]] + [e for e in dealt.deck[10:]]  # the first card, then every discard
    assert len(old_pile) - 1 >= 24
    assert restock.stock == shuffle(restock_seed(dealt.seed, 1), old_pile[:-1])
    assert deal.pile == [old_pile[-1]] and deal.stock == restock.stock
    assert t.view().stock == 42 and t.view().pile == [old_pile[-1]]
    # The next turn takes the new stock's top card.
    events = t.act(seats[turns % 3], "take stock")
    assert events[0].card == restock.stock[0]  # type: ignore[attr-defined]


def test_example_13_an_imported_deal_takes_its_restock_from_the_record() -> None:
    """T28, T42: a deal with seed "" (a record) gives its own new stock; due() derives none."""
    t = Table(9)
    cards = iter(["C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "CT", "CJ", "CQ", "CK", "CA", "S2", "S3", "S4",
                  "S5", "S6", "S7", "S8", "S9", "ST", "SJ", "SQ", "SK", "SA", "H2"])  # fmt: skip
    hands = {s: [next(cards), next(cards), next(cards)] for s in "ABCDEFGHI"}
    t.deal(hands, pile="H3")
    deal = t.state.deal
    assert deal is not None
    for k in range(24):
        t.churn(deal.order[k % 9])
    assert t.state.wants_restock and due(t.state) is None and t.state.to_move is None
    assert t.refuse("F", "take stock").code == "busy"
    new = list(reversed(deal.pile[:-1]))
    t.restock(new)
    assert deal.stock == new and not t.state.wants_restock and t.state.to_move == deal.order[24 % 9]


def test_the_last_turns_may_not_stand_and_the_knocker_gets_no_further_turn() -> None:
    """T15, T19, T21: after a knock every other player has exactly one more normal turn (he must
    take a card); nobody may knock again; the knocker keeps his hand and plays no more."""
    t = Table(3)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t.churn("A")
    t.act("B", "knock")
    assert t.state.deal is not None and t.state.deal.hands[1] == ["S9", "S8", "D4"]
    assert [str(a) for a in t.state.legal_actions(2)] == ["take stock", "take discard"]
    assert t.refuse("C", "knock").code == "illegal"
    t.churn("C", "A")
    assert t.last(T31DealEnded).end == "showdown"
    assert t.state.to_move is None


def test_the_fold_refuses_what_decide_refuses() -> None:
    """A log is checked as commands are: a discard of the card just taken from the pile, a
    second knock, a card taken that is not the top card, an action out of turn."""
    t = Table(3)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    base = list(t.log)
    from protocol.thirty_one import T31Discarded, T31Knocked, T31Took

    for bad in (
        [T31Took(seat=0, source="discard", card="D6"), T31Discarded(seat=0, card="D6")],
        [T31Knocked(seat=0), T31Knocked(seat=1)],
        [T31Took(seat=0, source="stock", card="C7")],  # the top card is C4
        [T31Took(seat=0, source="stock", card="")],
        [T31Took(seat=1, source="stock", card="C4")],
    ):
        with pytest.raises(LogError):
            fold(base + bad)  # type: ignore[operator]
    assert isinstance(parse_action("take stock"), Take)
