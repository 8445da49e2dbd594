"""Thirty-one's events: what happened at a Thirty-one table. Tags start with ``t31_`` so that
they are unique across games (the log subject carries the tag's name).

A seat's actions (``t31_took``, ``t31_discarded``, ``t31_knocked``, ``t31_looked``,
``t31_threw``) answer its commands; the others are derived by the rules (``state.due``):
the deal, a new stock, the deal's end, its score. The table's lifecycle (opening, time-outs,
pauses, closing) uses the generic events of ``protocol.events``.

Fields a view may hide (``views.redact``) are typed ``CardOrHidden``: ``""`` stands for a card
the seat may not see. The fold refuses a hidden card in a log.
"""

from __future__ import annotations

from typing import Final, Literal

from ..events import JSON as _JSON
from ..events import MSGPACK as _MSGPACK
from ..events import (
    Event,
    PlayerTimedOut,
    SeatWithdrawn,
    TableClosed,
    TableOpenedV2,
    TablePaused,
    TableResumed,
)
from .cards import CardCode, CardOrHidden

Source = Literal["stock", "discard"]
End = Literal["thirty_one", "showdown", "throw_down", "void", "turn_limit"]


class T31Dealt(Event, frozen=True, tag="t31_dealt/1"):
    """A deal (T7, T8). ``deck`` is the whole pack in the order it is dealt from (RECORDS.md):
    one card at a time to each seat of ``order`` until each holds three, then the discard
    pile's first card, then the stock, its top card first."""

    deal: int
    """1-based number of the deal at this table."""
    dealer: int
    order: list[int]
    """The active seats in turn order, starting at the dealer's left (the dealer last)."""
    deck: list[CardOrHidden]
    seed: str = ""
    """The seed ``deck`` is shuffled from (``shuffle(seed, PACK)``); empty for an imported deal."""


class T31Took(Event, frozen=True, tag="t31_took/1"):
    """A seat took the top card of the stock or of the discard pile (T13a)."""

    seat: int
    source: Source
    card: CardOrHidden


class T31Discarded(Event, frozen=True, tag="t31_discarded/1"):
    """A seat discarded a card face up (T13b)."""

    seat: int
    card: CardCode


class T31Knocked(Event, frozen=True, tag="t31_knocked/1"):
    """A seat knocked instead of taking a card (T19)."""

    seat: int


class T31Looked(Event, frozen=True, tag="t31_looked/1"):
    """A seat looked at its dealt hand (option ``throw_down``, T30, T40)."""

    seat: int


class T31Threw(Event, frozen=True, tag="t31_threw/1"):
    """A seat threw down unseen (option ``throw_down``, T31)."""

    seat: int


class T31Restocked(Event, frozen=True, tag="t31_restocked/1"):
    """The stock ran out: the discard pile but its top card is the new stock (T28)."""

    stock: list[CardOrHidden]
    """Top card first."""


class T31DealEnded(Event, frozen=True, tag="t31_deal_ended/1"):
    deal: int
    end: End
    shown: list[list[CardCode]]
    """Per seat: every active hand at a showdown or a throw-down, the 31 holders' hands at a
    31, empty lists otherwise (and for every seat that is not shown)."""


class T31DealScored(Event, frozen=True, tag="t31_deal_scored/1"):
    deal: int
    lives: list[int]
    """Lives lost per seat (T39: even beyond what could be paid; 0 for inactive seats)."""
    coins: list[int]
    """Each seat's coins after the deal (0 for eliminated seats)."""
    kitty: int
    eliminated: list[int]
    """The seats this deal eliminated, in seat order."""


AnyT31Event = (
    T31Dealt | T31Took | T31Discarded | T31Knocked | T31Looked | T31Threw | T31Restocked | T31DealEnded | T31DealScored
)

EVENT_TYPES: Final[tuple[type[Event], ...]] = AnyT31Event.__args__
"""The game's own events (the ``Game.event_types``)."""

LIFECYCLE_TYPES: Final[tuple[type[Event], ...]] = (
    TableOpenedV2, PlayerTimedOut, SeatWithdrawn, TablePaused, TableResumed, TableClosed,
)  # fmt: skip

AnyEvent = (
    TableOpenedV2 | T31Dealt | T31Took | T31Discarded | T31Knocked | T31Looked | T31Threw | T31Restocked
    | T31DealEnded | T31DealScored | PlayerTimedOut | SeatWithdrawn | TablePaused | TableResumed | TableClosed
)  # fmt: skip
"""Every event a Thirty-one table's log holds."""

TAGS: Final[dict[type[Event], str]] = {t: t.__struct_config__.tag for t in AnyEvent.__args__}
BY_TAG: Final[dict[str, type[Event]]] = {tag: t for t, tag in TAGS.items()}

SEAT_ACTIONS: Final[tuple[type[Event], ...]] = (T31Took, T31Discarded, T31Knocked, T31Looked, T31Threw)


# The codecs of every registered game's events (``protocol.events``), named here for this
# game's readers: a Thirty-one log holds the lifecycle's events too.
MSGPACK: Final = _MSGPACK
JSON: Final = _JSON
