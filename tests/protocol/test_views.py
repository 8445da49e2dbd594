"""Views must never show a seat cards it may not see."""

from __future__ import annotations

import random

import msgspec
import pytest

from protocol.events import TableOpened
from protocol.skat import cards as C
from protocol.skat.decide import decide
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due
from protocol.skat.views import SPECTATOR, view


def _visible_cards(v: object) -> set[str]:
    """Every card string anywhere in a view, as JSON would carry it."""
    text = msgspec.json.encode(v).decode()
    return {code for code in C.CODES if f'"{code}"' in text}


def _walk(seed: int, rules: Rules):
    """Yield the table state after every event of a random table."""
    rng = random.Random(seed)
    state = TableState()
    state.apply(TableOpened(table="v", players=["a", "b", "c"], rules=rules, seed=f"v{seed}"))
    while not state.closed:
        owed = due(state)
        if owed is not None:
            state.apply(owed)
        else:
            seat = state.to_move
            assert seat is not None
            legal = state.legal_actions(seat)
            events = decide(state, seat, rng.choice(legal))
            assert isinstance(events, list)
            for e in events:
                state.apply(e)
        yield state


@pytest.mark.parametrize("seed", range(6))
def test_no_view_leaks_hidden_cards(seed: int) -> None:
    for state in _walk(seed, Rules(rounds=1, kontra=True)):
        deal = state.deal
        if deal is None or state.scored:
            continue
        played = C.mask(c for t in deal.tricks for c in t.cards) | C.mask(deal.trick)
        open_hand = 0
        if deal.declarer is not None and deal.declaration is not None:
            if (deal.declaration.ouvert and deal.phase != "doubling") or deal.shown:
                open_hand = deal.hands[deal.declarer]
        public = played | open_hand
        spectator = _visible_cards(view(state, SPECTATOR))
        assert spectator <= set(C.codes(public)), spectator - set(C.codes(public))
        for pos, seat in enumerate(state.seats):
            allowed = public | deal.hands[pos] | deal.initial_hands[pos]
            if pos == deal.declarer and deal.picked_up:
                allowed |= deal.skat
            seen = _visible_cards(view(state, seat))
            assert seen <= set(C.codes(allowed)), (seat, seen - set(C.codes(allowed)))


def test_view_offers_legal_actions_only_to_the_seat_to_move() -> None:
    state = next(s for s in _walk(1, Rules(rounds=1)) if s.to_move is not None)
    mover = state.to_move
    assert view(state, mover).legal
    assert all(not view(state, s).legal for s in range(3) if s != mover)
    assert msgspec.json.decode(msgspec.json.encode(view(state, mover)))["seat"] == mover


def test_the_table_seed_is_never_shown() -> None:
    """The seed gives every deal's cards: no view and no public event may carry it."""
    from protocol.events import TableOpened
    from protocol.skat.views import redact

    opened = TableOpened(table="s", players=["a", "b", "c"], rules=Rules(), seed="very-secret")
    for seat in (SPECTATOR, 0, 1, 2):
        assert redact(opened, seat).seed == ""
    for state in _walk(3, Rules(rounds=1)):
        for seat in (SPECTATOR, 0, 1, 2):
            assert "v3" not in msgspec.json.encode(view(state, seat)).decode().replace('"v"', "")
