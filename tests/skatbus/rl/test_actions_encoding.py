"""The action index and the observation encoding against the engine, over random deals.

The masks must equal ``Deal.legal_actions()`` exactly, and no observation may show a card
its seat cannot know: both checked at every state of random deals under every rule variant.
"""

from __future__ import annotations

import numpy as np
import pytest

from protocol.errors import IllegalAction
from protocol.skat import cards as C
from protocol.skat.commands import Bid, Declare, Discard, Hold, Pass, PlayCard
from protocol.skat.deal import DOUBLING, Deal
from protocol.skat.dealing import deal_from_seed
from protocol.skat.knowledge import Knowledge
from protocol.skat.rules import Rules
from protocol.skat.views import view
from skatbus.rl import actions as A
from skatbus.rl.encoding import (
    CARD_PLANES,
    N_BINARY,
    OBS_SIZE,
    OFFSETS,
    SEGMENTS,
    cards_in,
    describe,
    encode,
    segment,
)

from .randomdeals import RULE_VARIANTS, random_states


def test_the_layout_is_as_documented() -> None:
    assert A.N_ACTIONS == 629 and len(A.ACTIONS) == 629
    assert (A.BID_OFFSET, A.HOLD_INDEX, A.PASS_INDEX, A.PICKUP_INDEX) == (32, 99, 100, 101)
    assert (A.DISCARD_OFFSET, A.HAND_DECLARE_OFFSET, A.PICKUP_DECLARE_OFFSET) == (102, 598, 620)
    assert (A.KONTRA_INDEX, A.RE_INDEX) == (627, 628)
    assert [str(A.ACTIONS[i]) for i in (0, 31, 32, 98, 99, 100, 101, 102, 597)] == [
        "C7", "DA", "bid 18", "bid 360", "hold", "pass", "pickup", "discard C7 C8", "discard DK DA",
    ]  # fmt: skip
    assert str(A.ACTIONS[619]) == "declare null ouvert" and str(A.ACTIONS[624]) == "declare grand"
    assert OBS_SIZE == 404 and N_BINARY == 397 and sum(size for _, size in SEGMENTS) == OBS_SIZE


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=repr)
def test_masks_equal_the_engines_legal_actions(rules: Rules) -> None:
    seen: set[str] = set()
    for game in random_states(rules, 150, seed=1):
        deal = game.deal
        legal = deal.legal_actions()
        indices = A.legal_indices(deal)
        assert indices == sorted({A.index_of(a, deal) for a in legal})
        assert len(indices) == len(legal)  # no two legal actions share an index
        assert [A.ACTIONS[i] for i in indices] == sorted(legal, key=lambda a: A.index_of(a, deal))
        mask = A.legal_mask(deal)
        assert mask.dtype == np.int8 and mask.shape == (A.N_ACTIONS,)
        assert np.flatnonzero(mask).tolist() == indices
        seen.add(deal.phase)
        seen.update(type(a).__name__ for a in legal)
    assert {"bidding", "skat", "discard", "declare", "playing", "ended"} <= seen
    assert {"Bid", "Hold", "Pass", "PickUpSkat", "Discard", "Declare", "PlayCard"} <= seen
    if rules.kontra:
        assert {"doubling", "Kontra", "Re"} <= seen


def test_an_index_outside_the_mask_is_refused_and_changes_nothing() -> None:
    game = next(iter(random_states(Rules(), 1, seed=2)))
    before = list(game.deal.history)
    with pytest.raises(IllegalAction, match="expected a bid or pass, got hold"):
        game.push(A.HOLD_INDEX)
    with pytest.raises(IllegalAction):
        game.push(A.N_ACTIONS)
    assert game.deal.history == before


def test_a_hand_declaration_is_not_offered_after_the_pickup() -> None:
    deal = Deal(*deal_from_seed("rl/declare"))
    for text in ("bid 18", "hold", "pass", "pass", "pickup", "discard C7 C8"):
        try:
            deal.push_text(text)
        except IllegalAction:
            deal.push_text("discard " + " ".join(C.codes(deal.hands[deal.to_move or 0])[:2]))
    assert deal.phase == "declare"
    clubs = Declare(game="C")  # type: ignore[arg-type]
    assert A.index_of(clubs, deal) == A.PICKUP_DECLARE_OFFSET
    assert A.HAND_DECLARE_OFFSET not in A.legal_indices(deal)


def test_index_of_reads_any_spelling_of_an_action() -> None:
    deal = Deal(*deal_from_seed("rl/spelling"))
    assert A.index_of(Bid(value=18, at=7), deal) == A.BID_OFFSET
    assert A.index_of(Hold(), deal) == A.HOLD_INDEX and A.index_of(Pass(at=3), deal) == A.PASS_INDEX
    assert A.index_of(PlayCard(card="DA"), deal) == 31
    assert A.index_of(Discard(cards=("DA", "C7")), deal) == A.index_of(Discard(cards=("C7", "DA")), deal) == 102 + 30


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=repr)
def test_no_observation_shows_a_card_its_seat_cannot_know(rules: Rules) -> None:
    checked = 0
    for game in random_states(rules, 60, seed=3, views=True):
        deal, table = game.deal, game.table
        assert table is not None
        for pos in range(3):
            obs = encode(deal, pos)
            assert obs.dtype == np.float32 and obs.shape == (OBS_SIZE,)
            assert set(np.unique(obs[:N_BINARY]).tolist()) <= {0.0, 1.0}
            assert 0.0 <= obs[N_BINARY:].min() and obs[N_BINARY:].max() <= 1.0
            shown = 0
            for plane in CARD_PLANES:
                shown |= cards_in(obs, plane)
            # Against the true cards: nothing of another hand but laid-open cards, no skat
            # card unless this seat declared and picked the skat up.
            decl = deal.declaration
            open_ = 0
            if decl is not None and decl.ouvert and deal.phase != DOUBLING and deal.declarer != pos:
                assert deal.declarer is not None
                open_ = deal.hands[deal.declarer]
            for other in range(3):
                if other != pos:
                    assert shown & deal.hands[other] & ~open_ == 0
            if not (deal.declarer == pos and deal.picked_up):
                assert shown & (deal.skat | deal.discard) & ~_played(deal) & ~deal.hands[pos] & ~open_ == 0
            # Against what the seat's own view lets it know (protocol.knowledge).
            if not game.over:
                k = Knowledge.of(view(table, pos))
                assert shown & k.unseen == 0
                assert cards_in(obs, "hand") == k.hand
                assert cards_in(obs, "skat") | cards_in(obs, "discarded") == k.skat
                assert cards_in(obs, "open") == sum(k.open_cards.values())
                played = [cards_in(obs, p) for p in ("played_me", "played_next", "played_prev")]
                assert played[0] | played[1] | played[2] == k.played
                trick = [c for c in (cards_in(obs, "trick_first"), cards_in(obs, "trick_second")) if c]
                assert trick == [1 << c for c in k.trick[:2]]
            checked += 1
    assert checked > 1000


def _played(deal: Deal) -> int:
    m = C.mask(deal.trick)
    for t in deal.tricks:
        m |= C.mask(t.cards)
    return m


@pytest.mark.parametrize("rules", RULE_VARIANTS[2:4], ids=repr)
def test_the_public_segments_follow_the_deal(rules: Rules) -> None:
    for game in random_states(rules, 80, seed=4):
        deal = game.deal
        for pos in range(3):
            d = describe(encode(deal, pos))
            rel = {"me": pos, "next": (pos + 1) % 3, "prev": (pos + 2) % 3}
            assert d["position"] == [("forehand", "middlehand", "rearhand")[pos]]
            assert d["phase"] == [deal.phase.value]
            assert d["to_move"] == [r for r, p in rel.items() if p == deal.to_move]
            assert d["bid_value"] == deal.bid and d["bid"] == ([str(deal.bid)] if deal.bid else [])
            assert d["declarer"] == [r for r, p in rel.items() if p == deal.declarer]
            assert sorted(d["passed"]) == sorted(r for r, p in rel.items() if p in _bidding_passes(deal))
            assert d["card_points"] == [deal.points[rel[r]] for r in ("me", "next", "prev")]
            assert d["tricks_won"] == [deal.trick_counts[rel[r]] for r in ("me", "next", "prev")]
            assert d["kontra"] == (["yes"] if deal.kontra else []) and d["re"] == (["yes"] if deal.re else [])
            game_name = [] if deal.declaration is None else [describe_game(deal.declaration.game)]
            assert d["game"] == (["ramsch"] if deal.ramsch else game_name)
        assert segment(encode(deal, 0), "hand").sum() == C.count(deal.hands[0])


def describe_game(letter: str) -> str:
    return {"C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "G": "grand", "N": "null"}[letter]


def _bidding_passes(deal: Deal) -> set[int]:
    """Positions that passed while bidding, read from the history (doubling passes come after
    a declaration, so the bidding is the history's opening run of bids, holds and passes)."""
    out = set()
    for pos, action in deal.history:
        if not isinstance(action, (Bid, Hold, Pass)):
            break
        if isinstance(action, Pass):
            out.add(pos)
    return out


def test_offsets_cover_the_vector_in_order() -> None:
    stops = [OFFSETS[name].stop for name, _ in SEGMENTS]
    assert stops == sorted(stops) and stops[-1] == OBS_SIZE
