"""Tests of the deal state machine used on its own (``Deal``), and of ``Knowledge``: what a seat
knows from its view alone."""

from __future__ import annotations

import pytest

from protocol.errors import IllegalAction
from protocol.thirty_one import Deal, Discard, Knock, Look, T31Took, Take, ThirtyOneRules
from protocol.thirty_one.knowledge import Knowledge

from .helpers import Table, build_deck

HANDS = {0: ["C2", "C3", "C5"], 1: ["S9", "S8", "D4"], 2: ["H2", "H3", "H5"]}


def fresh(**options: object) -> Deal:
    return Deal(ThirtyOneRules(**options), 3, [0, 1, 2], build_deck([0, 1, 2], HANDS, "D6", ["HA"]))  # type: ignore[arg-type]


def test_deal_deals_in_the_records_order() -> None:
    """RECORDS.md: one card at a time to each active player from the dealer's left, then the
    pile's first card, then the stock, top card first."""
    deal = fresh()
    assert deal.hands[:3] == [HANDS[0], HANDS[1], HANDS[2]]
    assert deal.pile == ["D6"] and deal.stock[0] == "HA" and len(deal.stock) == 42
    assert deal.to_move == 0 and deal.step == "take"


def test_push_checks_and_leaves_the_deal_unchanged_when_illegal() -> None:
    deal = fresh()
    before = repr(deal), [list(h) for h in deal.hands]
    with pytest.raises(IllegalAction, match="take a card first"):
        deal.push(0, Discard(card="C2"))
    with pytest.raises(IllegalAction, match="turn"):
        deal.push(1, Take(source="stock"))
    with pytest.raises(IllegalAction, match="top card"):
        deal.push(0, T31Took(seat=0, source="stock", card="C4"))
    with pytest.raises(IllegalAction, match="throw_down"):
        deal.push(0, Look())
    assert (repr(deal), [list(h) for h in deal.hands]) == before
    copy = deal.copy()
    deal.push(0, T31Took(seat=0, source="stock", card="HA"))
    deal.push(0, Discard(card="C2"))
    assert deal.pile == ["D6", "C2"] and copy.pile == ["D6"] and copy.hands[0] == HANDS[0]
    deal.push(1, Knock())
    assert deal.owed == [2, 0] and deal.to_move == 2


def test_deal_refuses_a_bad_deck_or_order() -> None:
    rules = ThirtyOneRules()
    deck = build_deck([0, 1, 2], HANDS, "D6")
    with pytest.raises(ValueError):
        Deal(rules, 3, [0, 1, 2], deck[:-1])
    with pytest.raises(ValueError):
        Deal(rules, 3, [0, 0, 2], deck)
    with pytest.raises(ValueError):
        Deal(rules, 3, [0], deck)


def test_knowledge_from_a_view() -> None:
    """A seat knows its hand, the pile, the cards others took from the pile and still hold, and
    which cards it has never seen."""
    t = Table(3)
    t.deal({"A": ["C2", "C3", "C5"], "B": ["S9", "S8", "D4"], "C": ["H2", "H3", "H5"]}, pile="D6", stock=["HA", "SK"])
    t.play("A take stock", "A discard C2", "B take discard", "B discard D4")
    k = Knowledge.of(t.view("C"))
    assert k.hand == ["H2", "H3", "H5"] and k.pile == ["D6", "D4"]
    assert k.held[1] == {"C2"} and k.held[0] == set()
    assert "HA" in k.unseen and "C2" not in k.unseen and "D6" not in k.unseen
    assert "HA" in k.possible(0) and "C2" not in k.possible(0) and "C2" in k.possible(1)
    mine = Knowledge.of(t.view("A"))
    assert mine.hand == ["C3", "C5", "HA"] and "HA" not in mine.unseen
    t.act("C", "take discard")  # D4
    t.act("C", "discard H2")
    k = Knowledge.of(t.view("A"))
    assert k.held[2] == {"D4"} and k.held[1] == {"C2"} and k.pile == ["D6", "H2"]
