"""``decide(state, seat, command)``: the events a player's command causes, or why it cannot.

``decide`` never mutates the state. Services call it for every command they receive and
append the events it returns; a ``Rejection`` goes back to the sender as it is.
"""

from __future__ import annotations

from typing import Final

from ..events import (
    BidHeld,
    BidMade,
    CardPlayed,
    CardsShown,
    Discarded,
    Event,
    GameDeclared,
    KontraSaid,
    Passed,
    PlayerTimedOut,
    ReSaid,
    Resigned,
    SeatWithdrawn,
    SkatTaken,
)
from ..rejection import BUSY, Rejection, RejectionCode, refuse_first, stale
from . import cards as C
from .cards import CODES, INDEX
from .commands import (
    Bid,
    Command,
    Declare,
    Discard,
    Hold,
    Kontra,
    Pass,
    PickUpSkat,
    PlayCard,
    Re,
    Resign,
    ShowCards,
)
from .deal import BIDDING, DECLARE, DISCARD, DOUBLING, PLAYING, SKAT, Deal
from .games import Declaration
from .table import TableState, due

__all__ = ["Rejection", "RejectionCode", "decide", "default_action", "stale", "timeout"]

_TURNLESS: Final = (Resign, ShowCards)


def decide(state: TableState, seat: int, command: Command) -> list[Event] | Rejection:
    """The events that ``seat`` doing ``command`` adds to the log, or a ``Rejection``."""
    if (refused := refuse_first(state, seat)) is not None:
        return refused
    deal = state.deal
    if deal is None or state.scored:
        return Rejection(code="no_deal", reason="no deal is in progress")
    if due(state) is not None:
        return BUSY
    pos = state.pos_of.get(seat)
    if pos is None:
        return Rejection(code="not_seated", reason="you sit this deal out (you are the dealer)")
    if (late := stale(state, command)) is not None:
        return late
    if not isinstance(command, _TURNLESS) and deal.to_move is not None and pos != deal.to_move:
        mover = state.seats[deal.to_move]
        return Rejection(
            code="out_of_turn",
            reason=f"not your turn: waiting for seat {mover} ({state.players[mover]}) to {deal.expected()}",
        )
    err = deal.check(pos, command)
    if err:
        return Rejection(code="illegal", reason=err)
    return [_event_for(deal, seat, pos, command)]


def _event_for(deal: Deal, seat: int, pos: int, command: Command) -> Event:
    kind = type(command)
    if kind is PlayCard:
        return CardPlayed(seat=seat, card=command.card)  # type: ignore[attr-defined]
    if kind is Bid:
        return BidMade(seat=seat, value=command.value)  # type: ignore[attr-defined]
    if kind is Hold:
        return BidHeld(seat=seat, value=deal.bid)
    if kind is Pass:
        return Passed(seat=seat)
    if kind is PickUpSkat:
        return SkatTaken(seat=seat, cards=C.codes(deal.skat))  # type: ignore[arg-type]
    if kind is Discard:
        cards = sorted(command.cards, key=INDEX.__getitem__)  # type: ignore[attr-defined]
        return Discarded(seat=seat, cards=cards)
    if kind is Declare:
        d: Declare = command  # type: ignore[assignment]
        game = Declaration(
            game=d.game, hand=not deal.picked_up, schneider=d.schneider, schwarz=d.schwarz, ouvert=d.ouvert
        )
        return GameDeclared(seat=seat, game=game)
    if kind is Kontra:
        return KontraSaid(seat=seat)
    if kind is Re:
        return ReSaid(seat=seat)
    if kind is ShowCards:
        return CardsShown(seat=seat, cards=C.codes(deal.hands[pos]))  # type: ignore[arg-type]
    if kind is Resign:
        return Resigned(seat=seat)
    raise TypeError(f"not a command: {command!r}")


def default_action(deal: Deal) -> Command:
    """What a player who misses its deadline does: pass while bidding or doubling, the weakest
    legal card while playing; pick up the skat, discard the two weakest cards and declare the
    first legal game (clubs) otherwise."""
    phase = deal.phase
    if deal.to_move is None:
        raise ValueError("the deal is over: nobody has an action to default")
    if phase in (BIDDING, DOUBLING):
        return Pass()
    if phase == PLAYING:
        order = deal.order
        legal = C.cards_of(deal.legal_cards())
        weakest = min(legal, key=lambda c: (order.klass[c] == C.TRUMP, order.strength[c], c))
        return PlayCard(card=CODES[weakest])  # type: ignore[arg-type]
    if phase == SKAT:
        return PickUpSkat()
    if phase == DISCARD:
        held = sorted(C.cards_of(deal.hands[deal.to_move]), key=lambda c: (C.POINTS[c], c))
        pair = sorted(held[:2])  # in card order, as legal_actions names every pair
        return Discard(cards=(CODES[pair[0]], CODES[pair[1]]))  # type: ignore[arg-type]
    if phase == DECLARE:
        return deal.legal_actions()[0]
    raise ValueError(f"no default action in phase {phase}")


def timeout(state: TableState) -> list[Event] | None:
    """The events recording that the seat to move missed its deadline, or None if no one is due:
    the time-out; when this made ``Rules.max_timeouts`` turns in a row, the seat's withdrawal;
    then the default action. Where the log already holds the time-out (its writer died halfway,
    or the events are appended one at a time and the rest is still to come), only what is still
    missing of it."""
    seat = state.to_move
    if seat is None:
        return None
    deal = state.deal
    assert deal is not None
    events: list[Event] = []
    missed = state.missed[seat]
    if state.defaulting != seat:
        events.append(PlayerTimedOut(seat=seat))
        missed += 1
    limit = state.rules.max_timeouts
    if limit and missed == limit and not state.announced[seat]:
        events.append(SeatWithdrawn(seat=seat, missed=limit))
    action = default_action(deal)
    pos = state.pos_of[seat]
    err = deal.check(pos, action)
    assert not err, err
    events.append(_event_for(deal, seat, pos, action))
    return events
