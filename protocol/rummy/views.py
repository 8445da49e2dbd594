"""What each seat of a rummy table may see, and what spectators may see.

A seat sees its own hand (with the card it drew, once ``rummy_drew`` is folded), the row in
order (every discard is public, M13, M14), every meld with its owner, who laid each card and
what each joker stands for (tokens such as ``X1=HQ``), the stock's size, the other seats' hand
sizes, the totals and the target, and, when it is to move, ``legal``: the complete list of its
actions (M47), as commands and as texts (``legal_texts``). It never sees the stock's order, another seat's hand or the card
another seat drew, until the deal is over: then every hand is laid open (``shown``). Hidden
cards are removed here, in one place (``redact``), so a service cannot leak them by accident.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ..events import Event, TableOpenedV2
from .commands import AnyCommand
from .events import HIDDEN, AnyEvent, RummyDealt, RummyDrew
from .table import GAME, RummyState, RummyTableRules

SPECTATOR: Final = -1


class MeldView(msgspec.Struct, frozen=True, kw_only=True):
    """A meld on the table, numbered from 1 in the order laid (as actions name it)."""

    number: int
    owner: int
    kind: str
    """``set`` or ``run``."""
    cards: list[str]
    """Tokens in the meld's order (a run low end first): ``HQ``, ``X1=HQ`` (a joker and the card
    it stands for), ``X1=Q`` (a b set's joker: a rank only)."""
    by: list[int]
    """Per card, the seat that laid it (M24, M41, M42)."""


class RummyView(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """One seat's picture of the table (or a spectator's, with ``seat`` = -1)."""

    game: str
    """Always ``"rummy"`` (a field without default, so it is always encoded)."""
    rules: RummyTableRules
    """The table's options as it was opened (every one of them, the variant first)."""
    table_game: str = ""
    """The game the table plays, ``"rummy"``, the same as ``game`` (a field of every game's view)."""
    table: str
    seat: int
    players: list[str]
    deal: int = 0
    dealer: int = -1
    phase: str = "between_deals"
    """``turn``, ``deal_over``, ``between_deals`` or ``closed``."""
    to_move: int | None = None
    hand: list[str] = []
    """The seat's own hand: the cards dealt first, then as drawn and taken."""
    drawn: str = ""
    """The card this seat drew to begin its turn, while the turn lasts (M11)."""
    pending: str = ""
    """The card the seat to move must use in its next action (after a take or a swap, M27)."""
    row: list[str] = []
    """The row, oldest first (``take 1`` names its first card)."""
    melds: list[MeldView] = []
    stock: int = 0
    """How many cards the stock holds."""
    hand_sizes: list[int] = []
    """Per seat, the cards in its hand."""
    melded: list[bool] = []
    """Per seat, whether it laid a meld of its own in this deal (d: M22, M36)."""
    totals: list[int] = []
    target: int = 0
    scores: list[int] = []
    """The last scored deal's score per seat."""
    shown: list[list[str]] = []
    """Every hand, laid open at the end of the deal (until the next deal)."""
    history: list[AnyEvent] = []
    """This deal's events so far, as this seat may see them (``redact``)."""
    legal: list[AnyCommand] = []
    """The seat's legal actions, all of them (M47), as the commands to send back (every game's
    view lists them so: a bot answers with one of them)."""
    legal_texts: list[str] = []
    """The same actions as texts, in the same order (``take 2``, ``meld H7 H8 X1=H9``, ...)."""
    paused: bool = False
    withdrawn: list[int] = []
    places: list[int] = []
    """Once the table is closed: each seat's place."""


class RummyUpdate(msgspec.Struct, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """What a player at a rummy table receives on ``skat.view.<player>.<table>``: the same
    envelope as Skat's ``protocol.wire.Update``, with this game's view."""

    view: RummyView
    your_turn: bool = False
    deadline: float = 0.0
    """Unix time by which the action must arrive (0 when it is not your turn)."""
    index: int = 0
    """Log position this view reflects: the events 0..index-1 have happened."""
    clock: float | None = None
    """At a table with a time control, the seconds left of the seat's budget; None without one."""
    increment: float | None = None
    """At a table with a time control, the seconds added after each move; None without one."""
    turn_seconds: float | None = None
    """At a table with a time control, the seat's per-move deadline in seconds; None without one."""


def redact(event: Event, seat: int) -> Event:
    """``event`` as ``seat`` may see it (``SPECTATOR`` sees only what is public): no seed, a dealt
    deck with only the seat's own cards, another seat's draw without its card. Everything else
    a rummy table does is done face up."""
    kind = type(event)
    if kind is TableOpenedV2:
        return msgspec.structs.replace(event, seed="")  # the seed gives every deal's cards
    if kind is RummyDealt:
        e: RummyDealt = event  # type: ignore[assignment]
        m = len(e.order)
        deck = [HIDDEN] * len(e.deck)
        if seat in e.order:
            for k in range(e.order.index(seat), min(e.size * m, len(deck)), m):
                deck[k] = e.deck[k]
        return msgspec.structs.replace(e, deck=deck, seed="")
    if kind is RummyDrew:
        drew: RummyDrew = event  # type: ignore[assignment]
        return event if drew.seat == seat else msgspec.structs.replace(drew, card=HIDDEN)
    return event


def view(state: RummyState, seat: int = SPECTATOR) -> RummyView:
    """The view of ``seat`` (or of a spectator)."""
    n = state.n
    out = RummyView(
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
        totals=list(state.totals),
        target=state.rules.target,
        scores=list(state.sheet[-1].score) if state.sheet else [],
        shown=[list(h) for h in state.shown],
        paused=state.paused,
        withdrawn=[s for s in range(n) if state.withdrawn(s)],
    )
    if state.closed:
        out.places = state.places()
    deal = state.deal
    if deal is None:
        return out
    out.row = list(deal.row)
    out.melds = [
        MeldView(
            number=k,
            owner=m.owner,
            kind=m.kind,
            cards=[p.text for p in m.cards],
            by=[p.by for p in m.cards],
        )
        for k, m in enumerate(deal.melds, 1)
    ]
    sizes = deal.hand_sizes()
    stock = len(deal.stock)
    if state.draw_owed:  # the card is drawn in the engine, not yet in the log
        sizes[deal.seat] -= 1
        stock += 1
    out.hand_sizes = sizes
    out.stock = stock
    out.melded = list(deal.melded)
    if state.in_deal and not deal.ended:
        out.pending = deal.pending
    if 0 <= seat < n:
        out.hand = state.visible_hand(seat)
        if seat == deal.seat and state.in_deal and not deal.ended and not state.draw_owed:
            out.drawn = deal.drawn
        legal = state.legal_actions(seat)
        out.legal = legal  # type: ignore[assignment]
        out.legal_texts = [str(c) for c in legal]
    out.history = [redact(e, seat) for e in state.deal_events]  # type: ignore[misc]
    return out
