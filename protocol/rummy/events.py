"""The rummy's events: what happened at a rummy table. Tags start with ``rummy_`` so that they
are unique across games (the log subject carries the tag's name).

A deal is ``rummy_dealt`` (the whole pack in the order dealt; every seat sees only its own
cards of it, ``views.redact``), then turns: each begins with ``rummy_drew``, the compulsory
draw of the stock's top card (M11; only its taker sees the card), then the seat's actions,
one event each (``rummy_took``, ``rummy_melded``, ``rummy_laid_off``, ``rummy_swapped``,
``rummy_claimed``, ``rummy_discarded``), which answer its commands. When the deal is over
(M15, M16) ``rummy_deal_ended`` lays every hand open, ``rummy_deal_scored`` adds the deal to
the totals (M24, M25), and after the last deal ``rummy_game_over`` gives the places (M26).
The draws, the deal's end, its score and the game's end are derived by the rules
(``table.due``); the table's lifecycle (opening, time-outs, pauses, closing) uses the generic
events of ``protocol.events``.

Cards are record codes (``HA``, ``HA'``, ``X1``); a card on the table that a joker stands for is
a token (``X1=HQ``, ``X1=Q``), as in the engine's actions. ``""`` (``HIDDEN``) stands for a
card the reader may not see; the fold refuses it in a log.
"""

from __future__ import annotations

from typing import Final

from ..events import (
    Event,
    PlayerTimedOut,
    SeatWithdrawn,
    TableClosed,
    TableOpenedV2,
    TablePaused,
    TableResumed,
)

HIDDEN: Final = ""


class RummyDealt(Event, frozen=True, tag="rummy_dealt/1"):
    """A deal (M8, M9). ``deck`` is the whole pack in the order dealt: one card at a time to
    each seat from the dealer's left until each holds its share, then the stock, top card
    first (RECORDS.md)."""

    deal: int
    """1-based number of the deal at this table."""
    dealer: int
    order: list[int]
    """The seats from the dealer's left to the dealer: who is dealt ``deck[i]`` (``order[i % n]``
    for the first ``size * n`` cards) and the turn order (M10)."""
    size: int
    """Cards dealt to each seat (M9)."""
    deck: list[str]
    seed: str = ""
    """The seed ``deck`` is shuffled from (``shuffle(seed, pack)``); empty for an imported deal."""


class RummyDrew(Event, frozen=True, tag="rummy_drew/1"):
    """The compulsory draw that begins ``seat``'s turn (M11): the stock's top card, which only
    ``seat`` sees (``HIDDEN`` for everyone else)."""

    seat: int
    card: str


class RummyTook(Event, frozen=True, tag="rummy_took/1"):
    """``seat`` named the ``n``-th card of the row (1 = the oldest) and took it and every card
    after it, ``cards`` (M14); its next action uses the named card, ``cards[0]`` (M27)."""

    seat: int
    n: int
    cards: list[str]


class RummyMelded(Event, frozen=True, tag="rummy_melded/1"):
    """``seat`` laid a new meld (tokens, a run low end first, M39)."""

    seat: int
    cards: list[str]


class RummyLaidOff(Event, frozen=True, tag="rummy_laid_off/1"):
    """``seat`` laid ``card`` (a token) off onto meld ``meld`` (numbered from 1, M5)."""

    seat: int
    meld: int
    card: str


class RummySwapped(Event, frozen=True, tag="rummy_swapped/1"):
    """``seat`` put the natural ``card`` in the place of meld ``meld``'s joker and took the
    joker, ``joker``, which its next action uses (M18, M27, M28)."""

    seat: int
    meld: int
    card: str
    joker: str


class RummyClaimed(Event, frozen=True, tag="rummy_claimed/1"):
    """c, d: ``seat`` laid a new meld of one card from its hand and cards out of the row (M21)."""

    seat: int
    cards: list[str]


class RummyDiscarded(Event, frozen=True, tag="rummy_discarded/1"):
    """``seat`` discarded ``card`` to the end of the row: its turn is over (M13)."""

    seat: int
    card: str


class RummyDealEnded(Event, frozen=True, tag="rummy_deal_ended/1"):
    """The deal is over (M15, M16, M40): ``end`` is ``went_out`` (``out`` the seat that did) or
    ``stock_out`` (``out`` -1); ``hands`` lays every seat's hand open, to be scored."""

    deal: int
    end: str
    out: int
    hands: list[list[str]]


class RummyDealScored(Event, frozen=True, tag="rummy_deal_scored/1"):
    """The deal's plus, minus and score per seat (M24, M34) and the totals after it (M25)."""

    deal: int
    plus: list[int]
    minus: list[int]
    score: list[int]
    totals: list[int]


class RummyGameOver(Event, frozen=True, tag="rummy_game_over/1"):
    """The game is over (M26): a total reached ``target`` or ``max_deals`` deals were played.
    ``places`` in competition ranking (M35)."""

    deals: int
    totals: list[int]
    places: list[int]


AnyRummyEvent = (
    RummyDealt | RummyDrew | RummyTook | RummyMelded | RummyLaidOff | RummySwapped | RummyClaimed | RummyDiscarded
    | RummyDealEnded | RummyDealScored | RummyGameOver
)  # fmt: skip

EVENT_TYPES: Final[tuple[type[Event], ...]] = AnyRummyEvent.__args__
"""The game's own events (the ``Game.event_types``)."""

AnyEvent = (
    TableOpenedV2 | RummyDealt | RummyDrew | RummyTook | RummyMelded | RummyLaidOff | RummySwapped | RummyClaimed
    | RummyDiscarded | RummyDealEnded | RummyDealScored | RummyGameOver | PlayerTimedOut | SeatWithdrawn
    | TablePaused | TableResumed | TableClosed
)  # fmt: skip
"""Every event a rummy table's log holds."""

SEAT_ACTIONS: Final[tuple[type[Event], ...]] = (
    RummyTook, RummyMelded, RummyLaidOff, RummySwapped, RummyClaimed, RummyDiscarded,
)  # fmt: skip
"""The events that are a seat's action (one per command)."""
