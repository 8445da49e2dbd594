"""``decide(state, seat, command)``: the event a player's command causes, or why it cannot; and
what a missed deadline records.

``decide`` never mutates the state (the engine's deal is immutable: it is asked what the action
would give). The checks come in the order every game uses (``protocol.rejection``): the
table's refusals first, then a command of another game (``malformed``), ``no_deal``, ``busy``
while a derived event is due, ``stale``, ``out_of_turn`` and ``illegal`` with the engine's
reason.
"""

from __future__ import annotations

from ..errors import IllegalAction
from ..events import Event
from ..rejection import BUSY, Rejection, refuse_first, stale
from .cards import points
from .commands import Claim, Command, Discard, LayOff, Meld, Swap, Take, command_of
from .events import RummyClaimed, RummyDiscarded, RummyLaidOff, RummyMelded, RummySwapped, RummyTook
from .state import Deal, apply, legal
from .table import RummyState, due

__all__ = ["Rejection", "decide", "default_action", "timeout"]


def decide(state: RummyState, seat: int, command: object) -> list[Event] | Rejection:
    """The events that ``seat`` doing ``command`` adds to the log, or a ``Rejection``."""
    if (refused := refuse_first(state, seat)) is not None:
        return refused
    if not isinstance(command, Command):
        return Rejection(code="malformed", reason=f"not a command of the rummy: {type(command).__name__}")
    deal = state.deal
    if deal is None or state.scored:
        return Rejection(code="no_deal", reason="no deal is in progress")
    if deal.ended or state.defaulting >= 0 or due(state) is not None:
        return BUSY
    if (late := stale(state, command)) is not None:
        return late
    if seat != deal.seat:
        mover = deal.seat
        return Rejection(code="out_of_turn", reason=f"not your turn: waiting for seat {mover} ({state.players[mover]})")
    try:
        event = _event_for(deal, seat, command)
    except IllegalAction as exc:
        return Rejection(code="illegal", reason=exc.reason)
    except (ValueError, KeyError, IndexError, TypeError) as exc:  # junk the engine could not read
        return Rejection(code="illegal", reason=f"{command}: {exc}")
    return [event]


def _event_for(deal: Deal, seat: int, command: Command) -> Event:
    """The event recording ``command``; raises ``IllegalAction`` if the engine refuses it."""
    new = apply(deal, command.action())
    if isinstance(command, Take):
        return RummyTook(seat=seat, n=command.n, cards=list(deal.row[command.n - 1 :]))
    if isinstance(command, Meld):
        return RummyMelded(seat=seat, cards=list(command.cards))
    if isinstance(command, Swap):
        return RummySwapped(seat=seat, meld=command.meld, card=command.card, joker=new.pending)
    if isinstance(command, Claim):
        return RummyClaimed(seat=seat, cards=list(command.cards))
    if isinstance(command, Discard):
        return RummyDiscarded(seat=seat, card=command.card)
    if isinstance(command, LayOff):
        return RummyLaidOff(seat=seat, meld=command.meld, card=command.card)
    raise TypeError(f"not a command of the rummy: {command!r}")


def default_action(state: RummyState, seat: int) -> Command:
    """What a seat that misses its deadline does, always one of its listed actions: with a card
    to use now (after a take or a swap, M27) the first listed meld or lay-off of it; else the
    discard of the legal card with the most points (the first in hand order on a tie: a joker,
    worth nothing until laid, is kept); when every card is barred (c, M23), the first listed
    claim. It never takes from the row or swaps. Raises ``ValueError`` when it is not
    ``seat``'s turn."""
    deal = state.deal
    if deal is None or state.to_move != seat:
        raise ValueError(f"seat {seat} has no turn to default")
    listed = state.legal_actions(seat) if state.defaulting < 0 and not state.withdrawn(seat) else []
    if not listed:  # a barred seat (its time-out recorded, or withdrawn) is offered nothing
        listed = [command_of(a) for a in legal(deal)]
    if deal.pending:
        return listed[0]
    discards = [c for c in listed if isinstance(c, Discard)]
    if discards:
        best = discards[0]
        for c in discards[1:]:
            if points(c.card) > points(best.card):
                best = c
        return best
    claims = [c for c in listed if isinstance(c, Claim)]
    return claims[0] if claims else listed[0]


def timeout(state: RummyState) -> list[Event] | None:
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
    events.append(_event_for(deal, seat, default_action(state, seat)))
    return events
