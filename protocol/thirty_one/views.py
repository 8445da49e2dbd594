"""What each seat of a Thirty-one table may see, and what spectators may see.

A seat sees its own hand (under ``throw_down`` only once it looked or took a card, T30), the
discard pile in order (every discard is public, T8), the card anyone takes from the pile, the
number of cards in the stock, and the hands shown at a deal's end. It never sees another
seat's hand, the stock's cards or order, or a card another seat took from the stock. Hidden
cards are removed here, in one place (``redact``), so a service cannot leak them by accident.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ..events import Event, TableOpenedV2
from .cards import HIDDEN, CardCode, points
from .commands import AnyCommand
from .events import AnyEvent, T31Dealt, T31Restocked, T31Took
from .rules import ThirtyOneRules
from .state import GAME, ThirtyOneState

SPECTATOR: Final = -1


class ThirtyOneView(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """One seat's picture of the table (or a spectator's, with ``seat`` = -1)."""

    game: str
    """Always ``"thirty-one"`` (a field without default, so it is always encoded)."""
    rules: ThirtyOneRules
    """The table's options as it was opened (``table_opened.rules``): every one of them."""
    table_game: str = ""
    """The game the table plays, ``"thirty-one"``, the same as ``game``: a field of every
    game's view (a Skat view's ``game`` is its declared game), so one check fits both."""
    table: str
    seat: int
    players: list[str]
    deal: int = 0
    dealer: int = -1
    phase: str = "between_deals"
    """``take``, ``discard``, ``between_deals`` or ``closed``."""
    to_move: int | None = None
    hand: list[CardCode] = []
    """The seat's own hand (empty until it looked, under ``throw_down``)."""
    looked: bool = False
    """Under ``throw_down``: whether the seat has looked at its hand (or taken a card)."""
    hand_value: float = 0.0
    """The own hand's value in points (mid-turn, with four cards: its best three)."""
    pile: list[CardCode] = []
    """The discard pile, bottom first: its top card is the last."""
    stock: int = 0
    """How many cards the stock holds."""
    knocker: int | None = None
    """The seat that counts as the knocker: who knocked, or who threw down (T31)."""
    last_turns: list[int] = []
    """After a knock, the seats still owed their last turn, the next first."""
    coins: list[int] = []
    kitty: int = 0
    active: list[int] = []
    eliminated: list[int] = []
    """The seats eliminated so far, in seat order."""
    lives: list[int] = []
    """The lives each seat lost in the last scored deal."""
    shown: list[list[CardCode]] = []
    """The hands shown at the deal's end, per seat."""
    history: list[AnyEvent] = []
    """This deal's events so far, with hidden cards removed."""
    legal: list[AnyCommand] = []
    paused: bool = False
    withdrawn: list[int] = []
    places: list[int] = []
    """Once the table is closed: each seat's place."""


class ThirtyOneUpdate(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """What a player at a Thirty-one table receives on ``skat.view.<player>.<table>``: the
    same envelope as Skat's ``protocol.wire.Update``, with this game's view."""

    view: ThirtyOneView
    your_turn: bool = False
    deadline: float = 0.0
    """Unix time by which the action must arrive (0 when it is not your turn)."""
    index: int = 0
    """Log position this view reflects: the events 0..index-1 have happened."""
    clock: float | None = None
    """At a table with a time control, the seconds left of the seat's budget (in a prompt, as
    its turn began; ``deadline`` already counts it); None (left out) without one."""
    increment: float | None = None
    """At a table with a time control, the seconds added to the seat's budget after each of its
    moves; None (left out) without one."""
    turn_seconds: float | None = None
    """At a table with a time control, the seat's per-move deadline in seconds, the budget
    aside (0 for a seat played by the default move); None (left out) without one."""


def redact(event: Event, seat: int, *, blind: bool = False) -> Event:
    """``event`` as ``seat`` may see it (``SPECTATOR`` sees only what is public). ``blind``:
    the seat has not looked at its dealt hand yet (``throw_down``), so its own dealt cards are
    hidden from it too."""
    kind = type(event)
    if kind is TableOpenedV2:
        # The table seed gives every deal's cards: never shown to anyone.
        return msgspec.structs.replace(event, seed="")
    if kind is T31Dealt:
        e: T31Dealt = event  # type: ignore[assignment]
        m = len(e.order)
        deck: list[str] = [HIDDEN] * len(e.deck)
        if not blind and seat in e.order:
            pos = e.order.index(seat)
            for k in range(pos, min(3 * m, len(deck)), m):
                deck[k] = e.deck[k]
        if 3 * m < len(deck):
            deck[3 * m] = e.deck[3 * m]  # the discard pile's first card is turned face up (T8)
        return msgspec.structs.replace(e, deck=deck, seed="")
    if kind is T31Took:
        took: T31Took = event  # type: ignore[assignment]
        if took.source == "stock" and took.seat != seat:
            return msgspec.structs.replace(took, card=HIDDEN)
        return event
    if kind is T31Restocked:
        r: T31Restocked = event  # type: ignore[assignment]
        return msgspec.structs.replace(r, stock=[HIDDEN] * len(r.stock))
    return event


def view(state: ThirtyOneState, seat: int = SPECTATOR) -> ThirtyOneView:
    """The view of ``seat`` (or of a spectator)."""
    out = ThirtyOneView(
        game=GAME,
        rules=state.rules,
        table_game=GAME,
        table=state.table,
        seat=seat,
        players=list(state.players),
        deal=state.deal_no,
        dealer=state.dealer,
        phase=state.phase,
        to_move=state.to_move,
        coins=list(state.coins),
        kitty=state.kitty,
        active=list(state.active),
        eliminated=[s for s in range(state.n) if state.out_deal[s]],
        lives=list(state.lives),
        shown=[list(h) for h in state.shown],
        paused=state.paused,
        withdrawn=[s for s in range(state.n) if state.withdrawn(s)],
    )
    if state.closed:
        out.places = state.places()
    deal = state.deal
    if deal is None:
        return out
    out.pile = list(deal.pile)  # type: ignore[arg-type]
    out.stock = len(deal.stock)
    knocker = deal.lives_knocker
    out.knocker = knocker if knocker >= 0 else None
    if state.in_deal and not deal.ended:
        out.last_turns = list(deal.owed)
    blind = True
    if deal.dealt_in(seat):
        out.looked = deal.looked[seat]
        if deal.sees_hand(seat):
            blind = False
            out.hand = list(deal.hands[seat])  # type: ignore[arg-type]
            out.hand_value = points(deal.value(seat))
    out.history = [redact(e, seat, blind=blind) for e in state.deal_events]  # type: ignore[misc]
    if seat >= 0:
        out.legal = state.legal_actions(seat)  # type: ignore[assignment]
    return out
