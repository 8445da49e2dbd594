"""The Thirty-one action index and observation against the engine, over random games.

The mask must equal ``Deal.legal_actions`` of the seat to move exactly; every observation must
be what the seat's own view gives (``encode_view``), agree with ``Knowledge`` and the state,
and stay the same whatever the hidden cards are. Checked at every step of random games under
option sets that together reach every rule.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from protocol.errors import IllegalAction
from protocol.events import TableClosed
from protocol.thirty_one import T31DealEnded, T31Restocked, ThirtyOneState, view
from protocol.thirty_one.cards import PACK
from protocol.thirty_one.commands import Discard, Knock, Take, parse_action
from protocol.thirty_one.knowledge import Knowledge
from skatbus.rl import thirty_one_actions as A
from skatbus.rl.thirty_one_encoding import (
    HIGH,
    N_BINARY,
    OBS_SIZE,
    OFFSETS,
    SEGMENTS,
    cards_in,
    describe,
    encode,
    encode_view,
)
from skatbus.rl.thirty_one_game import ThirtyOneGame, make_rules, reward

from .thirty_one_games import OPTION_SETS, OptionSet, new_game, option_id, random_games


def test_the_layouts_are_as_documented() -> None:
    assert A.N_ACTIONS == len(A.ACTIONS) == 57
    assert [str(A.ACTIONS[i]) for i in (0, 1, 2, 3, 4, 5, 17, 18, 56)] == [
        "take stock", "take discard", "knock", "look", "throw", "discard C2", "discard CA", "discard S2",
        "discard DA",
    ]  # fmt: skip
    assert all(A.index_of(parse_action(str(a))) == i for i, a in enumerate(A.ACTIONS))
    assert A.index_of(Take(source="discard", at=12)) == A.TAKE_DISCARD_INDEX and A.index_of(Knock(at=3)) == 2
    assert A.index_of(Discard(card="HT")) == 5 + PACK.index("HT")
    assert OBS_SIZE == 836 and N_BINARY == 836 - 15 and sum(size for _, size in SEGMENTS) == OBS_SIZE
    stops = [OFFSETS[name].stop for name, _ in SEGMENTS]
    assert stops == sorted(stops) and stops[-1] == OBS_SIZE


@pytest.mark.parametrize("option_set", OPTION_SETS, ids=option_id)
def test_masks_are_exactly_the_legal_actions(option_set: OptionSet) -> None:
    seen: Counter[str] = Counter()
    for game in random_games(option_set, seed=1):
        state, deal = game.state, game.deal
        assert deal is not None
        mover = state.to_move
        for seat in range(game.n):
            bits = game.legal_bits(seat)
            if seat != mover:
                assert bits == 0  # only the seat to move has actions (look out of turn: see actions)
                continue
            legal = deal.legal_actions(seat)
            assert legal == state.legal_actions(seat)
            assert A.indices(bits) == sorted(A.index_of(a) for a in legal)
            assert len(legal) == len(A.indices(bits))  # no two legal actions share an index
            mask = A.bits_to_mask(bits)
            assert mask.dtype == np.int8 and mask.shape == (A.N_ACTIONS,)
            assert np.flatnonzero(mask).tolist() == A.indices(bits)
            seen.update(type(a).__name__ for a in legal)
        if game.over:
            seen["closed: " + state.close_reason] += 1
        for event in game.log[-40:]:
            if isinstance(event, T31DealEnded):
                seen["end: " + event.end] += 1
            elif isinstance(event, T31Restocked):
                seen["restock"] += 1
    assert {"Take", "Discard", "Knock"} <= set(seen)
    options = option_set[0]
    if options.get("throw_down"):
        assert {"Look", "Throw", "end: throw_down"} <= set(seen)
    if options.get("max_turns"):
        assert {"end: turn_limit", "closed: max_deals reached"} <= set(seen)
    if options.get("stock_out") == "void":
        assert "end: void" in seen
    if options.get("players") == 7:
        assert "restock" in seen
    assert "end: showdown" in seen


def test_every_end_of_a_deal_and_of_a_game_comes_up() -> None:
    ends: set[str] = set()
    closes: set[str] = set()
    for option_set in OPTION_SETS:
        for game in random_games(option_set, seed=1):
            if game.over:
                closes.add(game.state.close_reason)
                ends.update(e.end for e in game.log if isinstance(e, T31DealEnded))
    assert ends == {"thirty_one", "showdown", "throw_down", "void", "turn_limit"}
    assert closes == {"one player left", "max_deals reached"}


def test_an_index_outside_the_mask_is_refused_and_changes_nothing() -> None:
    game = new_game({"players": 3})
    game.new_game("refuse")
    before = list(game.log)
    with pytest.raises(IllegalAction, match="take a card first"):
        game.push(A.DISCARD_OFFSET)
    with pytest.raises(IllegalAction):
        game.push(A.N_ACTIONS)
    with pytest.raises(IllegalAction, match="no throw_down"):
        game.push(A.THROW_INDEX)
    assert game.log == before


@pytest.mark.parametrize("option_set", OPTION_SETS, ids=option_id)
def test_every_observation_is_the_seats_view(option_set: OptionSet) -> None:
    """``encode`` (from the state) equals ``encode_view`` (from the seat's view alone), for every
    seat at every step: the observation holds nothing the view does not show."""
    checked = 0
    for game in random_games(option_set, seed=2):
        state = game.state
        for seat in range(game.n):
            obs = encode(state, game.know, seat)
            assert obs.dtype == np.float32 and obs.shape == (OBS_SIZE,)
            assert set(np.unique(obs[:N_BINARY]).tolist()) <= {0.0, 1.0}
            assert 0.0 <= obs.min() and (obs <= HIGH).all()
            np.testing.assert_array_equal(obs, encode_view(view(state, seat)))
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("option_set", OPTION_SETS, ids=option_id)
def test_the_card_planes_agree_with_knowledge_and_the_view(option_set: OptionSet) -> None:
    restocked = held = 0
    for game in random_games(option_set, seed=3):
        state = game.state
        deal = state.deal
        assert deal is not None
        n = game.n
        for seat in range(n):
            v = view(state, seat)
            k = Knowledge.of(v)
            obs = encode(state, game.know, seat)
            assert cards_in(obs, "hand") == sorted(v.hand, key=PACK.index)
            assert cards_in(obs, "pile") == sorted(v.pile, key=PACK.index)
            assert cards_in(obs, "pile_top") == v.pile[-1:]
            assert set(cards_in(obs, "seen")) == k.seen
            assert set(cards_in(obs, "restocked")) == k.restocked
            restocked += bool(k.restocked)
            for slot in range(1, n):
                assert set(cards_in(obs, "held", slot)) == k.held[(seat + slot) % n]
                held += bool(k.held[(seat + slot) % n])
            taken = cards_in(obs, "taken")
            assert taken == ([deal.taken] if deal.taken else [])
    assert held > 0
    if option_set[0].get("players") == 7:
        assert restocked > 0


@pytest.mark.parametrize("option_set", OPTION_SETS[:5], ids=option_id)
def test_the_public_segments_follow_the_state(option_set: OptionSet) -> None:
    for game in random_games(option_set, seed=4):
        state, deal = game.state, game.deal
        assert deal is not None
        n = game.n
        for seat in range(n):
            d = describe(encode(state, game.know, seat))

            def slots(seats: list[int], seat: int = seat, n: int = n) -> list[int]:
                return sorted((s - seat) % n for s in seats)

            assert d["present"] == list(range(n))
            assert d["active"] == slots(state.active)
            assert d["to_move"] == slots([] if state.to_move is None else [state.to_move])
            assert d["dealer"] == slots([state.dealer])
            assert d["knocker"] == slots([deal.lives_knocker] if deal.lives_knocker >= 0 else [])
            assert d["last_turn"] == slots(deal.owed if not deal.ended else [])
            assert d["looked"] == slots([s for s in range(n) if deal.looked[s]])
            assert d["played"] == slots([s for s in range(n) if deal.played[s]])
            assert d["phase"] == [state.phase]
            assert d["players"] == [str(n)]
            assert d["coins"][:n] == pytest.approx([state.coins[(seat + k) % n] / state.rules.coins for k in range(n)])
            assert d["coins"][n:] == [0.0] * (9 - n)
            assert d["kitty"] == pytest.approx(state.kitty / (n * state.rules.coins))
            assert d["stock"] == pytest.approx(len(deal.stock) / 52)
            assert d["deal"] == pytest.approx(state.deal_no / state.rules.max_deals)
            sees = deal.dealt_in(seat) and deal.sees_hand(seat)
            assert d["hand_value"] == pytest.approx(deal.value(seat) / 62 if sees else 0.0)
            assert set(d["hand"]) == (set(deal.hands[seat]) if sees else set())


@pytest.mark.parametrize("option_set", OPTION_SETS, ids=option_id)
def test_an_observation_does_not_change_with_the_hidden_cards(option_set: OptionSet) -> None:
    """Shuffle what the seat cannot know (the stock's cards and order, the others' cards not
    known from the pile, its own unseen hand) into another state: the observation stays."""
    rng = random.Random(5)
    changed = 0
    for game in random_games(option_set, seed=5):
        if game.over:
            continue
        for seat in range(game.n):
            state = game.state.copy()
            deal = state.deal
            assert deal is not None
            places: list[tuple[list[str], int]] = [(deal.stock, i) for i in range(len(deal.stock))]
            for other in deal.order:
                if other == seat and deal.sees_hand(seat):
                    continue
                known = set(cards_in_bits(game.know.held[other])) if other != seat else set()
                places += [(deal.hands[other], i) for i, c in enumerate(deal.hands[other]) if c not in known]
            cards = [where[i] for where, i in places]
            shuffled = cards[:]
            rng.shuffle(shuffled)
            for (where, i), card in zip(places, shuffled):
                where[i] = card
            changed += shuffled != cards
            np.testing.assert_array_equal(encode(state, game.know, seat), encode(game.state, game.know, seat))
    assert changed > 100


def cards_in_bits(bits: int) -> list[str]:
    return [PACK[i] for i in range(52) if bits >> i & 1]


def test_the_log_is_a_tables_log_and_places_become_rewards() -> None:
    game = new_game({"players": 4})
    rng = random.Random(6)
    for g in range(20):
        game.new_game(f"log/{g}")
        while not game.over:
            game.push(rng.choice(A.indices(game.legal_bits())))
        replay = game.replay()
        assert isinstance(replay, ThirtyOneState) and replay.closed and isinstance(game.log[-1], TableClosed)
        assert replay.places() == game.places() and replay.coins == game.state.coins
        places = game.places()
        assert sum(game.reward(s) for s in range(4)) == pytest.approx(0.0)
        assert sum(game.reward(s, "win") for s in range(4)) == pytest.approx(1.0)
        assert game.reward(places.index(1)) == 1.0


def test_rewards_of_shared_places() -> None:
    # Two seats out in the same deal share places 3 and 4 of 4: each gets the reward of the mean
    # place 3.5, (5 - 7) / 3 = -2/3, which the winner's +1 and the second's +1/3 balance.
    places = [1, 3, 2, 3]
    assert [reward(places, s) for s in range(4)] == pytest.approx([1.0, -2 / 3, 1 / 3, -2 / 3])
    assert [reward([1, 1, 3], s, "win") for s in range(3)] == [0.5, 0.5, 0.0]
    assert [reward([1, 2], s) for s in range(2)] == [1.0, -1.0]


def test_options_are_checked_as_a_tables_are() -> None:
    assert make_rules(None, {"coins": 2, "throw_down": True}).coins == 2
    with pytest.raises(TypeError, match="unknown Thirty-one option"):
        make_rules(None, {"coinz": 2})
    with pytest.raises(ValueError):
        make_rules(None, {"coins": 0})
    with pytest.raises(ValueError):
        make_rules(None, {"three_of_a_kind": "31"})
    with pytest.raises(ValueError, match="players must be 2 to 9"):
        ThirtyOneGame(players=10)
