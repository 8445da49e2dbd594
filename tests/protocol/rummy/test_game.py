"""The rummy behind ``protocol.game.Game``: what the contract suite (tests/games) does not pin
down for this game in particular. The draw is an event of its own that only its taker sees; the
seats decide ``players`` (M46); commands are refused with the right codes; a seat's
``Knowledge`` never claims more than is true."""

from __future__ import annotations

import msgspec
import pytest

from protocol import registry
from protocol.rejection import Rejection
from protocol.rummy.commands import Discard, Take, parse_action
from protocol.rummy.events import RummyDealt, RummyDrew
from protocol.rummy.game import GAME
from protocol.rummy.knowledge import Knowledge
from protocol.rummy.table import RummyState, RummyTableRules
from protocol.thirty_one.commands import TAKE_STOCK
from tests.games.engine import Table


def opened(rules: RummyTableRules, n: int = 3) -> RummyState:
    state = GAME.new_state()
    state.apply(GAME.open_event("t", [f"p{i}" for i in range(n)], rules, "seed", {}))
    return state


def test_the_seats_decide_players_and_the_defaults_that_hang_on_them() -> None:
    state = opened(RummyTableRules(variant="b"), 5)
    assert state.rules.players == 5 and state.rules.packs == 2 and state.rules.layoff_credit == "owner"
    with pytest.raises(ValueError):
        GAME.open_event("t", [f"p{i}" for i in range(5)], RummyTableRules(variant="a"), "", {})


def test_the_draw_is_owed_and_shown_to_its_taker_only() -> None:
    state = opened(RummyTableRules(variant="a"))
    dealt = GAME.due(state)
    assert isinstance(dealt, RummyDealt) and dealt.dealer == 2 and dealt.order == [0, 1, 2]
    state.apply(dealt)
    drew = GAME.due(state)
    assert isinstance(drew, RummyDrew) and drew.seat == 0 and drew.card == dealt.deck[15]
    assert state.to_move is None and len(GAME.view(state, 0).hand) == 5  # not drawn in the log yet
    state.apply(drew)
    assert state.to_move == 0 and GAME.view(state, 0).drawn == drew.card
    assert GAME.view(state, 0).hand[-1] == drew.card and GAME.view(state, 1).drawn == ""
    assert GAME.redact(drew, 1).card == "" and GAME.redact(drew, -1).card == "" and GAME.redact(drew, 0) == drew
    assert GAME.redact(dealt, -1).deck == [""] * 36
    mine = GAME.redact(dealt, 1).deck
    assert [c for c in mine if c] == [dealt.deck[i] for i in (1, 4, 7, 10, 13)]
    view = GAME.view(state, 0)
    assert view.legal_texts == [str(c) for c in view.legal] and len(view.legal) == len(view.legal_texts)
    assert GAME.view(state, 1).legal == [] and view.stock == 36 - 15 - 1


def test_commands_are_refused_with_their_codes() -> None:
    state = opened(RummyTableRules(variant="c"))
    state.apply(GAME.due(state))  # type: ignore[arg-type]
    assert isinstance(GAME.decide(state, 0, Discard(card="H7")), Rejection)  # busy: the draw is owed
    assert GAME.decide(state, 0, Discard(card="H7")).code == "busy"  # type: ignore[union-attr]
    state.apply(GAME.due(state))  # type: ignore[arg-type]
    hand = state.visible_hand(0)
    codes = {
        "out_of_turn": GAME.decide(state, 1, Discard(card=state.visible_hand(1)[0])),
        "stale": GAME.decide(state, 0, Discard(card=hand[0], at=state.events + 1)),
        "illegal": GAME.decide(state, 0, Take(n=1)),  # the row is empty
        "malformed": GAME.decide(state, 0, TAKE_STOCK),  # Thirty-one's
        "not_seated": GAME.decide(state, 3, Discard(card=hand[0])),
    }
    for code, answer in codes.items():
        assert isinstance(answer, Rejection) and answer.code == code, (code, answer)
    assert "row" in codes["illegal"].reason  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        parse_action("discard")
    assert parse_action("MELD h7 h8 x1=h9") == parse_action("meld H7 H8 X1=H9")


@pytest.mark.parametrize("seed", range(12))
def test_knowledge_never_claims_more_than_is_true(seed: int) -> None:
    """At every turn: what a seat's ``Knowledge`` says another holds, it holds; what it holds is
    among what ``possible`` allows."""
    checked = 0

    def check(t: Table) -> None:
        nonlocal checked
        state: RummyState = t.state  # type: ignore[assignment]
        assert state.deal is not None
        for seat in range(state.n):
            k = Knowledge.of(GAME.view(state, seat))  # type: ignore[arg-type]
            for other in range(state.n):
                hand = set(state.visible_hand(other))
                assert k.held[other] <= hand, (seat, other, k.held[other] - hand)
                assert hand <= k.possible(other), (seat, other, hand - k.possible(other))
                checked += 1

    Table(registry.get("rummy"), seed).play(check)
    assert checked


def test_views_and_updates_name_the_game() -> None:
    state = opened(RummyTableRules(variant="d"), 2)
    state.apply(GAME.due(state))  # type: ignore[arg-type]
    update = GAME.update_type(view=GAME.view(state, 0), index=state.events)  # type: ignore[call-arg]
    for data in (msgspec.json.encode(update), msgspec.msgpack.encode(update)):
        assert registry.decode_update(data) == update
