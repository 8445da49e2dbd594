"""``decide(state, seat, command)``: the events a player's command causes, or why it cannot.

``decide`` never mutates the state; services call it for every command they receive and append
the events it returns, and a ``Rejection`` goes back to the sender as it is. The checks come in
the order every game uses (``protocol.rejection``): the table's refusals first, then
``no_deal``, ``busy`` while a derived event is due, ``stale``, ``out_of_turn`` (not for
``look``, which an active seat may do at any time, T40) and ``illegal`` with the rule's reason.
"""

from __future__ import annotations

from ..events import Event
from ..rejection import BUSY, Rejection, refuse_first, stale
from .cards import hand_value
from .commands import DISCARDS, TAKE_DISCARD, TAKE_STOCK, Command, Discard, Knock, Look, Take, Throw
from .deal import TAKE, Deal
from .events import T31Discarded, T31Knocked, T31Looked, T31Threw, T31Took
from .state import ThirtyOneState, due

__all__ = ["Rejection", "decide", "default_action", "timeout"]


def decide(state: ThirtyOneState, seat: int, command: Command) -> list[Event] | Rejection:
    """The events that ``seat`` doing ``command`` adds to the log, or a ``Rejection``."""
    if (refused := refuse_first(state, seat)) is not None:
        return refused
    deal = state.deal
    if deal is None or state.scored:
        return Rejection(code="no_deal", reason="no deal is in progress")
    if deal.ended or deal.wants_restock or state.defaulting >= 0 or due(state) is not None:
        return BUSY
    if (late := stale(state, command)) is not None:
        return late
    if not deal.dealt_in(seat):
        return Rejection(code="not_seated", reason="you are out of this game: you are no longer dealt in")
    if type(command) is not Look and seat != deal.seat:
        mover = deal.seat
        return Rejection(
            code="out_of_turn",
            reason=f"not your turn: waiting for seat {mover} ({state.players[mover]}) to {_expected(deal)}",
        )
    err = deal.check(seat, command)
    if err:
        return Rejection(code="illegal", reason=err)
    return [_event_for(deal, seat, command)]


def _expected(deal: Deal) -> str:
    return "take a card or knock" if deal.step == TAKE else "discard a card"


def _event_for(deal: Deal, seat: int, command: Command) -> Event:
    kind = type(command)
    if kind is Take:
        source = command.source  # type: ignore[attr-defined]
        card = deal.stock[0] if source == "stock" else deal.pile[-1]
        return T31Took(seat=seat, source=source, card=card)  # type: ignore[arg-type]
    if kind is Discard:
        return T31Discarded(seat=seat, card=command.card)  # type: ignore[attr-defined]
    if kind is Knock:
        return T31Knocked(seat=seat)
    if kind is Look:
        return T31Looked(seat=seat)
    if kind is Throw:
        return T31Threw(seat=seat)
    raise TypeError(f"not a command of Thirty-one: {command!r}")


def default_action(state: ThirtyOneState, seat: int) -> Command:
    """What a seat that misses its deadline does: take the stock's top card (the discard pile's
    when only that is allowed, T43), then discard the card whose loss leaves the best hand,
    never the card just taken from the pile (T14), the first in hand order on a tie. It never
    knocks, looks or throws down. Raises ``ValueError`` when it is not ``seat``'s turn."""
    deal = state.deal
    if deal is None or state.to_move != seat:
        raise ValueError(f"seat {seat} has no turn to default")
    if deal.step == TAKE:
        return TAKE_STOCK if deal.stock else TAKE_DISCARD
    hand = deal.hands[seat]
    best, best_value = "", -1
    for card in hand:
        if card == deal.taken:
            continue
        v = hand_value([c for c in hand if c != card], deal.rules)
        if v > best_value:
            best, best_value = card, v
    return DISCARDS[best]


def timeout(state: ThirtyOneState) -> list[Event] | None:
    """The events recording that the seat to move missed its deadline, or None if no one is
    to move: the time-out; when this made ``max_timeouts`` turns in a row, the seat's
    withdrawal; then the default action. Where the log already holds the time-out, only what
    is still missing of it."""
    seat = state.to_move
    if seat is None:
        return None
    deal = state.deal
    assert deal is not None
    events = state.missed_turn(seat)
    action = default_action(state, seat)
    err = deal.check(seat, action)
    assert not err, err
    events.append(_event_for(deal, seat, action))
    return events
