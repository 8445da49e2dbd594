"""The engine's Board-style API: readable reprs, is_legal, pop, actions as text, enums whose
wire values are the old strings, None for nobody, IllegalAction; and ``Knowledge``, what a
seat knows, checked against the truth of random deals."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import IllegalAction
from protocol.events import DealEnded, GameDeclared
from protocol.skat import cards as C
from protocol.skat.commands import PLAY, Bid, Declare, PlayCard, parse_action
from protocol.skat.deal import ENDED, Deal, Phase
from protocol.skat.dealing import deal_from_seed
from protocol.skat.ends import EndReason
from protocol.skat.games import Declaration, GameKind
from protocol.skat.knowledge import Knowledge
from protocol.skat.rules import Rules
from protocol.skat.views import view
from tests.protocol.test_views import _walk


def _deal(seed: str, rules: Rules | None = None) -> Deal:
    hands, skat = deal_from_seed(seed)
    return Deal(hands, skat, rules)


def _random_line(deal: Deal, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        legal = deal.legal_actions()
        if not legal:
            return
        deal.push(rng.choice(legal))


def test_a_fresh_deal_reads_well_and_nobody_is_none() -> None:
    deal = _deal("repr")
    assert repr(deal) == "<Deal bidding; middlehand to bid or pass>"
    assert deal.declarer is None and deal.to_move == 1 and deal.phase is Phase.BIDDING
    text = str(deal)
    assert "forehand" in text and "skat" in text and text.count("\n") >= 4
    assert repr(PLAY[C.card("CJ")]) == "PlayCard(card='CJ')"  # no at=-1 noise
    assert repr(Declaration(game=GameKind.GRAND, hand=True)) == "Declaration(game=GameKind.GRAND, hand=True)"


def test_enums_keep_the_wire_values() -> None:
    assert msgspec.json.encode(Declaration(game=GameKind.NULL, ouvert=True)) == b'{"game":"N","ouvert":true}'
    decoded = msgspec.json.decode(b'{"type":"declare","game":"G"}', type=Declare)
    assert decoded.game is GameKind.GRAND and decoded.game == "G"
    assert msgspec.json.encode(DealEnded(deal=1, reason=EndReason.PLAYED_OUT)) == (
        b'{"type":"deal_ended/1","deal":1,"reason":"played_out"}'
    )
    assert Phase.PLAYING == "playing" and EndReason.NULL_TRICK == "declarer_took_trick"
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"declare","game":"X"}', type=Declare)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), steps=st.integers(0, 45))
def test_pop_takes_back_exactly_the_last_action(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    deal = _deal(f"pop{seed}", Rules(kontra=True, ramsch=seed % 2 == 0))
    _random_line(deal, rng, steps)
    if not deal.history:
        with pytest.raises(IndexError):
            deal.pop()
        return
    before = repr(deal), str(deal), deal.legal_actions(), list(deal.history)
    pos, action = deal.history[-1]
    shorter = _deal(f"pop{seed}", deal.rules)
    for p, a in deal.history[:-1]:
        shorter.push(a, p)
    assert deal.pop() == (pos, action)
    assert (repr(deal), str(deal), deal.legal_actions()) == (repr(shorter), str(shorter), shorter.legal_actions())
    deal.push(action, pos)
    assert (repr(deal), str(deal), deal.legal_actions(), list(deal.history)) == before


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_every_legal_action_reads_back_from_its_text(seed: int) -> None:
    rng = random.Random(seed)
    deal = _deal(f"text{seed}", Rules(kontra=True))
    while not deal.is_over:
        legal = deal.legal_actions()
        for action in legal:
            assert parse_action(str(action)) == action
            assert deal.is_legal(action)
        choice = rng.choice(legal)
        assert deal.push_text(str(choice).lower()) == choice
    assert deal.phase is ENDED and deal.to_move is None
    assert deal.end_reason in set(EndReason)


def test_illegal_actions_raise_with_the_reason_and_change_nothing() -> None:
    deal = _deal("illegal")
    before = repr(deal)
    with pytest.raises(IllegalAction, match="not your turn"):
        deal.push_checked(Bid(value=18), pos=0)
    with pytest.raises(IllegalAction, match="is not a legal bid"):
        deal.push_text("bid 19")
    with pytest.raises(IllegalAction) as caught:
        deal.parse("CJ")
    assert isinstance(caught.value.action, PlayCard) and "expected a bid or pass" in caught.value.reason
    assert not deal.is_legal(Bid(value=19)) and deal.is_legal(Bid(value=18))
    with pytest.raises(ValueError, match="not an action"):
        deal.parse("bid eighteen")
    assert repr(deal) == before and deal.history == []


def test_a_hand_game_cannot_be_named_after_the_pickup() -> None:
    deal = _deal("hand")
    for text in ("bid 18", "hold", "pass", "pass", "pickup"):
        deal.push_text(text)
    held = C.codes(deal.hands[deal.to_move or 0])
    deal.push_text(f"discard {held[0]} {held[1]}")
    with pytest.raises(IllegalAction, match="before picking up"):
        deal.parse("declare grand hand")
    deal.push_text("declare grand")
    assert deal.declaration == Declaration(game=GameKind.GRAND)
    assert "declares grand at 18" in repr(deal)


@pytest.mark.parametrize("seed", range(8))
def test_knowledge_is_sound_and_never_beyond_the_view(seed: int) -> None:
    """For every seat after every event of random tables: the cards another seat really holds
    are always among those ``possible`` for it (voids and open cards never exclude a real
    card), unseen cards are exactly those the seat has not seen, and points and tricks agree
    with the engine."""
    rules = Rules(rounds=1, kontra=True, ramsch=seed % 2 == 1)
    checked = 0
    for state in _walk(100 + seed, rules):
        deal = state.deal
        if deal is None or state.scored or deal.phase != Phase.PLAYING:
            continue
        for pos, seat in enumerate(state.seats):
            k = Knowledge.of(view(state, seat))
            assert k.hand == deal.hands[pos]
            for other_pos, other in enumerate(state.seats):
                if other != seat:
                    assert deal.hands[other_pos] & ~k.possible(other) == 0, (seat, other, k)
            hidden = deal.hands[(pos + 1) % 3] | deal.hands[(pos + 2) % 3] | deal.skat | deal.discard
            assert k.unseen & ~hidden == 0
            assert k.unseen & k.hand == 0 and k.unseen & k.played == 0
            assert [t.cards for t in k.tricks] == [t.cards for t in deal.tricks]
            assert k.trick == deal.trick
            winners = {state.seats[t.winner] for t in deal.tricks}
            assert {t.winner for t in k.tricks} == winners
            assert sum(k.points.values()) == sum(t.points for t in deal.tricks)
            if deal.declarer is not None:
                d_seat = state.seats[deal.declarer]
                assert k.declarer == d_seat
                assert k.partner == (
                    None if seat == d_seat else next(s for s in state.seats if s not in (seat, d_seat))
                )
            checked += 1
    assert checked > 0


def test_knowledge_learns_a_void_from_a_card_that_does_not_follow() -> None:
    for state in _walk(7, Rules(rounds=2)):
        deal = state.deal
        if deal is None or deal.phase != Phase.PLAYING or not deal.tricks:
            continue
        last = deal.tricks[-1]
        led = deal.order.klass[last.cards[0]]
        for i, c in enumerate(last.cards[1:], start=1):
            if deal.order.klass[c] != led:
                renegade = state.seats[(last.leader + i) % 3]
                watcher = next(s for s in state.seats if s != renegade)
                k = Knowledge.of(view(state, watcher))
                assert k.is_void(renegade, led)
                assert k.possible(renegade) & deal.order.class_masks[led] == 0
                return
    pytest.fail("no trick in these deals where a player could not follow")


def test_game_declared_events_carry_a_game_kind() -> None:
    event = msgspec.json.decode(
        b'{"type":"game_declared/1","seat":0,"game":{"game":"H","hand":true}}', type=GameDeclared
    )
    assert event.game.game is GameKind.HEARTS
