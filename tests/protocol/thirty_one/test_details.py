"""Golden tests of the rules page's "details that decide records and results" (T33-T35,
T40-T43) and of the throw-down (T30-T32). Each test quotes the detail it checks."""

from __future__ import annotations

import msgspec
import pytest

from protocol.lifecycle import LogError
from protocol.shuffle import shuffle
from protocol.thirty_one import (
    PACK,
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Looked,
    T31Restocked,
    ThirtyOneRules,
    default_action,
    due,
    fold,
)
from protocol.thirty_one.state import restock_seed

from .helpers import LETTERS, Table

NINE = {
    s: cards
    for s, cards in zip(
        LETTERS,
        [["C2", "C3", "C4"], ["C5", "C6", "C7"], ["C8", "C9", "CT"], ["S2", "S3", "S4"], ["S5", "S6", "S7"],
         ["S8", "S9", "ST"], ["H2", "H3", "H4"], ["H5", "H6", "H7"], ["H8", "H9", "HT"]],
    )
}  # fmt: skip
"""Nine hands far from 31 (the stock then holds the 24 cards from D2 on, after the pile's H-J)."""


def nine(**options: object) -> Table:
    t = Table(9, **options)  # type: ignore[arg-type]
    t.deal(NINE, pile="HJ")
    return t


def test_t33_a_thirty_one_ends_the_deal_before_an_empty_stock_is_rebuilt() -> None:
    """T33: "a 31 ends the deal at the discard; ... So no reshuffle (and no restock in the
    record) happens in a turn that ends the deal." Seat F takes the stock's last card and
    makes 31 with it."""
    hands = dict(NINE)
    hands["F"] = ["SA", "SK", "S9"]
    hands["A"] = ["C2", "C3", "S8"]
    t = Table(9)
    stock = [c for c in ("D2 D3 D4 D5 D6 D7 D8 D9 DT DJ DQ DK DA HQ HK HA CJ CQ CK CA SJ C4 ST").split()]
    t.deal(hands, pile="HJ", stock=stock + ["SQ"])
    deal = t.state.deal
    assert deal is not None and len(deal.stock) == 24
    for k in range(23):
        t.churn(k % 9)
    assert deal.stock == ["SQ"] and deal.seat == 5
    t.play("F take stock", "F discard S9")
    assert not any(isinstance(e, T31Restocked) for e in t.log)
    assert t.last(T31DealEnded).end == "thirty_one"


def test_t33_the_showdown_comes_before_an_empty_stock() -> None:
    """T33: "then the showdown after the last of the last turns; ..." H knocks at turn 17, and
    the last of the last turns (G's) takes the stock's last card: a showdown, no restock."""
    t = nine()
    for k in range(16):
        t.churn(k % 9)
    t.act("H", "knock")
    t.churn("I", "A", "B", "C", "D", "E", "F", "G")
    assert not any(isinstance(e, T31Restocked) for e in t.log)
    assert t.last(T31DealEnded).end == "showdown"


@pytest.mark.parametrize("stock_out", ["reshuffle", "void"])
def test_t33_max_turns_comes_before_an_empty_stock(stock_out: str) -> None:
    """T33: "a deal whose max_turns-th turn empties the stock ends turn_limit, not void" (and is
    not restocked)."""
    t = nine(max_turns=24, stock_out=stock_out)
    for k in range(24):
        t.churn(k % 9)
    assert not any(isinstance(e, T31Restocked) for e in t.log)
    assert t.last(T31DealEnded).end == "turn_limit"
    assert t.last(T31DealScored).lives == [0] * 9


def test_t28_void_without_a_knock() -> None:
    """T28 void: "if nobody has knocked, the deal ends with no showdown and no lives lost"."""
    t = nine(stock_out="void")
    for k in range(24):
        t.churn(k % 9)
    ended = t.last(T31DealEnded)
    assert ended.end == "void" and ended.shown == [[]] * 9
    assert t.last(T31DealScored).lives == [0] * 9


def test_t43_void_with_a_knock_pending_takes_the_discard_pile() -> None:
    """T43: "stock_out void with a knock pending: the remaining players must take discard and
    may then discard any other card (T14 still applies)." B knocks at turn 20; five last turns
    empty the stock; G, H and I must take the discard pile's top card."""
    t = nine(stock_out="void")
    for k in range(19):
        t.churn(k % 9)
    t.act("B", "knock")
    t.churn("C", "D", "E", "F", "G")
    deal = t.state.deal
    assert deal is not None and deal.stock == [] and not deal.ended
    assert [str(a) for a in t.state.legal_actions(7)] == ["take discard"]
    assert t.refuse("H", "take stock").code == "illegal"
    assert str(default_action(t.state, 7)) == "take discard"
    top = deal.pile[-1]
    t.act("H", "take discard")
    assert t.refuse("H", f"discard {top}").code == "illegal"
    t.act("H", "discard H5")
    t.act("I", "take discard")
    t.act("I", "discard H8")
    t.act("A", "take discard")
    t.act("A", "discard C2")
    assert t.last(T31DealEnded).end == "showdown"


def test_t34_max_turns_counts_the_knock_and_stops_with_it() -> None:
    """T34: "max_turns counts turns (normal turns and the knock; not looks) and applies only while
    nobody has knocked." With max_turns 3 the third turn is C's knock: no turn limit; the last
    turns (4 and 5) are played."""
    t = Table(3, max_turns=3)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t.churn("A", "B")
    t.act("C", "knock")
    assert t.state.deal is not None and t.state.deal.turns == 3 and not t.state.deal.ended
    t.churn("A", "B")
    assert t.last(T31DealEnded).end == "showdown"


def test_t34_looks_are_not_turns() -> None:
    """T34: looks do not count: with max_turns 2, two looks and two turns reach the limit."""
    t = Table(3, max_turns=2, throw_down=True)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t.act("A", "look")
    t.act("C", "look")
    t.churn("A")
    assert t.state.deal is not None and t.state.deal.turns == 1
    t.churn("B")
    assert t.last(T31DealEnded).end == "turn_limit"


def test_t35_no_knock_before_every_player_has_had_a_turn() -> None:
    """T35: "knock_in_first_round false: a knock is allowed once the deal has had as many turns as
    there are active players. It does not bar throw-downs.\""""
    t = Table(3, knock_in_first_round=False)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    for who in "ABC":
        answer = t.refuse(who, "knock")
        assert answer.code == "illegal" and "knock_in_first_round" in answer.reason
        t.churn(who)
    t.act("A", "knock")
    t2 = Table(3, knock_in_first_round=False, throw_down=True)
    t2.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t2.act("A", "throw")
    assert t2.last(T31DealEnded).end == "throw_down"


def test_t31_throw_down() -> None:
    """T31: "his hand is shown unseen, every other hand is shown too, and the deal ends at once in
    a showdown (T23) with no further turns. For lives the thrower counts as the knocker." B
    throws down at the start of his first turn and is alone lowest: two lives."""
    hands = {"A": ["HA", "HK", "C2"], "B": ["S2", "S3", "D4"], "C": ["DA", "DK", "C3"]}
    t = Table(3, throw_down=True)
    t.deal(hands, pile="D6")
    assert t.view("B").hand == [] and t.view("B").hand_value == 0
    assert t.refuse("B", "throw").code == "out_of_turn"
    t.churn("A")
    t.act("B", "throw")
    ended = t.last(T31DealEnded)
    assert ended.end == "throw_down" and ended.shown == [hands["A"], hands["B"], hands["C"]]
    assert t.last(T31DealScored).lives == [0, 2, 0]


def test_t31_throw_down_only_unseen_at_the_first_turn_and_never_after_a_knock() -> None:
    """T31: "A player who has not looked may, at the start of his first turn ... throw down ...
    Nobody may throw down after a knock." """
    t = Table(3, throw_down=True)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t.act("B", "look")  # out of turn, at any time
    t.act("A", "knock")
    assert t.refuse("B", "throw").code == "illegal"
    t.act("C", "look")  # out of turn, after the knock too
    t2 = Table(3, throw_down=True)
    t2.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    t2.act("B", "look")
    t2.churn("A")
    assert "looked" in t2.refuse("B", "throw").reason
    t2.churn("B", "C")
    assert "first turn" in t2.refuse("A", "throw").reason  # A took a card, so he looked too
    t3 = Table(3)
    t3.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    assert "throw_down" in t3.refuse("A", "throw").reason


def test_t40_look() -> None:
    """T40: "look exists only with throw_down; once per seat and deal; by any active seat at any
    time while the deal runs (refused after it ends); taking a card counts as looking,
    knocking does not." """
    plain = Table(2)
    plain.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"]}, pile="D6")
    assert plain.refuse("A", "look").code == "illegal"
    t = Table(3, throw_down=True)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    assert "look" in [str(a) for a in t.state.legal_actions(2)]  # out of turn too
    t.act("C", "look")
    assert t.view("C").hand == ["H2", "H3", "H5"] and t.view("C").looked
    assert t.refuse("C", "look").code == "illegal"
    t.act("A", "take stock")  # counts as looking
    assert t.view("A").looked and t.refuse("A", "look").code == "illegal"
    t.act("A", "discard C5")
    t.act("B", "knock")  # does not count as looking
    assert not t.view("B").looked and t.view("B").hand == []
    t.act("B", "look")
    assert t.view("B").hand == ["S9", "S8", "D4"]
    t2 = Table(2, throw_down=True)
    t2.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"]}, pile="D6")
    t2.act("A", "knock")
    t2.churn("B")
    assert t2.state.deal is not None and t2.state.deal.ended
    assert t2.refuse("A", "look").code == "no_deal"
    with pytest.raises(LogError):  # a look after the deal's end is not in a valid log
        fold(t2.log[:-2] + [T31Looked(seat=0)])


def test_t41_an_unseen_hand_may_knock_min_knock_counts_the_real_hand() -> None:
    """T41: "A player who has not looked may knock; min_knock is checked against his real hand." """
    t = Table(2, throw_down=True, min_knock=21)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["SA", "SK", "D4"]}, pile="D6")
    assert "21" in t.refuse("A", "knock").reason
    t.churn("A")
    t.act("B", "knock")
    assert t.view("B").hand == []


def imported_nine_to_the_restock() -> Table:
    t = nine()
    for k in range(24):
        t.churn(k % 9)
    assert t.state.wants_restock
    return t


def test_t42_restocks_are_exactly_those_the_deal_uses() -> None:
    """T42: "A record must give exactly the restocks its deal uses: a missing or unused restock,
    or one that is not the discard pile without its top card, is an error." """
    t = imported_nine_to_the_restock()
    deal = t.state.deal
    assert deal is not None
    good = deal.pile[:-1]
    from protocol.thirty_one import T31Took

    with pytest.raises(LogError, match="restock"):  # missing: the next action comes first
        fold(t.log + [T31Took(seat=6, source="discard", card=deal.pile[-1])])  # type: ignore[arg-type]
    with pytest.raises(LogError):  # not the pile without its top card
        fold(t.log + [T31Restocked(stock=deal.pile[1:])])  # type: ignore[arg-type]
    with pytest.raises(LogError):
        fold(t.log + [T31Restocked(stock=good[:-1])])  # type: ignore[arg-type]
    state = fold(t.log + [T31Restocked(stock=good)])  # type: ignore[arg-type]
    with pytest.raises(LogError, match="no restock is due"):  # unused: a second one
        state.apply(T31Restocked(stock=[]))
    early = Table(3)
    early.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6")
    with pytest.raises(LogError, match="no restock is due"):
        fold(early.log + [T31Restocked(stock=[])])


def test_t42_a_seeded_deal_must_have_the_seeds_deck_and_restocks() -> None:
    """A seeded deal's deck and restocks must equal the seed's (LogError otherwise)."""
    t = Table(3, seed="table")
    owed = due(t.state)
    assert isinstance(owed, T31Dealt) and owed.seed == "table/1"
    assert owed.deck == shuffle("table/1", PACK)
    swapped = list(owed.deck)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(LogError, match="seed"):
        fold(t.log + [msgspec.structs.replace(owed, deck=swapped)])
    with pytest.raises(LogError, match="seed"):  # a seeded deal's seed is the table's
        fold(t.log + [msgspec.structs.replace(owed, seed="other/1", deck=shuffle("other/1", PACK))])
    # The same cards imported (seed "") are fine: a record carries its own deck.
    fold(t.log + [msgspec.structs.replace(owed, deck=swapped, seed="")])
    for bad in (
        msgspec.structs.replace(owed, dealer=0),
        msgspec.structs.replace(owed, order=[1, 2, 0]),
        msgspec.structs.replace(owed, deal=2),
        msgspec.structs.replace(owed, deck=owed.deck[:-1], seed=""),
        msgspec.structs.replace(owed, deck=owed.deck[:-1] + owed.deck[:1], seed=""),
    ):
        with pytest.raises(LogError):
            fold(t.log + [bad])


def test_t42_a_seeded_restock_is_the_seeds() -> None:
    seed = "restock check"
    t = Table(9, seed=seed)
    while True:  # the first seeded deal without a dealt 31
        t.seeded_deal()
        if t.state.deal is not None and not t.state.deal.ended:
            break
    deal = t.state.deal
    assert deal is not None
    for k in range(24):
        t.churn(deal.order[k % 9])
    restock = t.last(T31Restocked)
    log = t.log[: t.log.index(restock)]
    dealt = t.last(T31Dealt)
    assert restock.stock == shuffle(restock_seed(dealt.seed, 1), fold(log).deal.pile[:-1])  # type: ignore[union-attr]
    with pytest.raises(LogError):
        fold(log + [T31Restocked(stock=list(reversed(restock.stock)))])


def test_the_options_table_holds() -> None:
    """T29: the protocol limits are options; ``ThirtyOneRules()`` is the standard game."""
    assert ThirtyOneRules().max_turns == 300 and ThirtyOneRules().max_deals == 500
