"""What each seat may see, and what spectators may see.

A seat sees its own cards, the skat only once it took it as declarer, an ouvert (or shown)
declarer's cards, and the public history. Spectators see the public history only. Hidden
cards are removed here, in one place, so the views service cannot leak them by accident.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ..events import AnyEvent, DealDealt, Discarded, Event, SkatTaken, TableOpened
from . import cards as C
from .cards import CardCode
from .commands import AnyCommand
from .deal import DOUBLING
from .games import Declaration
from .rules import Rules
from .table import TableState

SPECTATOR = -1
NAME: Final = "skat"
"""The name of this game (``protocol.registry``), which every Skat view carries in ``table_game``."""


class PlayerView(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """One seat's picture of the table (or a spectator's, with ``seat`` = -1).

    Cards are card codes (``"CJ"``, ``"HT"``: suit then rank) everywhere here, and seats are
    table seats (indexes into ``players``). The table's game and rules are in every view, so
    a bot that connects mid-table, or reads JSON, never needs the ``table_opened`` event."""

    table: str
    seat: int
    players: list[str]
    deal: int
    phase: str
    to_move: int | None
    table_game: str = ""
    """The game the table plays: always ``"skat"`` in a view the services send (empty only in
    updates from services older than this field). Not the declared game: that is ``game``."""
    rules: Rules | None = None
    """The table's rules as it was opened (``table_opened.rules``): ``profile``, ``kontra``,
    ``ramsch``, ``bock``, ``rounds``, ``players``, ``turn_seconds``, ``max_timeouts``, ...
    (None only in updates from services older than this field)."""
    ramsch: bool = False
    """This deal is a Ramsch: all passed at a table with ``rules.ramsch``, so there is no
    declarer (``declarer`` is None) and no declared game (``game`` is None); jacks are trump,
    every seat plays for itself and the most card points lose."""
    hand: list[CardCode] = []
    skat: list[CardCode] = []
    """The skat, for the declarer who picked it up (and, after the deal, to everyone)."""
    discarded: list[CardCode] = []
    declarer: int | None = None
    bid: int = 0
    game: Declaration | None = None
    kontra: bool = False
    re: bool = False
    open_cards: dict[int, list[CardCode]] = {}
    """Cards laid open: an ouvert declarer's hand, or a declarer who showed its cards."""
    trick: list[CardCode] = []
    """Cards on the table in play order; the leader is ``trick_leader``."""
    trick_leader: int | None = None
    history: list[AnyEvent] = []
    """This deal's events so far, with hidden cards removed."""
    legal: list[AnyCommand] = []
    paused: bool = False
    """The operator paused the table: nobody is to move until it resumes (``table_resumed``)."""
    withdrawn: list[int] = []
    """Seats withdrawn after ``Rules.max_timeouts`` turns in a row timed out: played by the
    default action at once."""
    totals: list[int] = []
    seeger_fabian: list[int] = []


def redact(event: Event, seat: int) -> Event:
    """``event`` as ``seat`` may see it (``SPECTATOR`` sees only what is public)."""
    kind = type(event)
    if kind is TableOpened:
        # The table seed gives every deal's cards (dealing.deal_seed): never shown to anyone.
        return msgspec.structs.replace(event, seed="")
    if kind is DealDealt:
        e: DealDealt = event  # type: ignore[assignment]
        hands = tuple(h if seat >= 0 and e.seats[i] == seat else [] for i, h in enumerate(e.hands))
        return msgspec.structs.replace(e, hands=hands, skat=[], seed="")
    if kind is SkatTaken or kind is Discarded:
        if event.seat != seat:  # type: ignore[attr-defined]
            return msgspec.structs.replace(event, cards=[])
    return event


def view(state: TableState, seat: int = SPECTATOR) -> PlayerView:
    """The view of ``seat`` (or of a spectator)."""
    deal = state.deal
    out = PlayerView(
        table=state.table,
        seat=seat,
        players=list(state.players),
        deal=state.deal_no,
        phase="closed" if state.closed else ("between_deals" if deal is None or state.scored else deal.phase),
        to_move=state.to_move,
        table_game=NAME,
        rules=state.rules,
        totals=list(state.totals),
        seeger_fabian=list(state.sf_totals),
        paused=state.paused,
        withdrawn=[s for s in range(state.n) if state.withdrawn(s)],
    )
    if deal is None:
        return out
    seats = state.seats
    pos = state.pos_of.get(seat) if seat >= 0 else None
    if pos is not None:
        out.hand = C.codes(deal.hands[pos])  # type: ignore[assignment]
        if pos == deal.declarer and deal.picked_up:
            out.skat = C.codes(deal.skat)  # type: ignore[assignment]
            out.discarded = C.codes(deal.discard)  # type: ignore[assignment]
    if deal.declarer is not None:
        out.declarer = seats[deal.declarer]
        decl = deal.declaration
        if decl is not None and (decl.ouvert and deal.phase != DOUBLING or deal.shown):
            out.open_cards = {seats[deal.declarer]: C.codes(deal.hands[deal.declarer])}  # type: ignore[dict-item]
    out.bid = deal.bid
    out.game = deal.declaration
    out.ramsch = deal.ramsch
    out.kontra, out.re = deal.kontra, deal.re
    out.trick = [C.CODES[c] for c in deal.trick]  # type: ignore[misc]
    out.trick_leader = seats[deal.leader] if deal.phase == "playing" else None
    out.history = [redact(e, seat) for e in state.deal_events]  # type: ignore[misc]  # redact keeps each event's type
    if seat >= 0 and state.to_move == seat:
        out.legal = state.legal_actions(seat)  # type: ignore[assignment]
    return out
