"""A Thirty-one table's state as a fold over its events, and the events the table owes next.

``fold(events)`` builds a ``ThirtyOneState`` one event at a time. Every event is checked
against what the rules allow at that point; a log that does not follow them raises
``LogError`` naming the event's position. Derived events must equal what ``due`` gives, with
two exceptions for imported deals (records, RECORDS.md): a ``t31_dealt`` whose ``seed`` is
empty carries its own deck, and such a deal's restocks come from the record too (``due`` gives
None and ``wants_restock`` is True; the fold checks the new stock is the discard pile but its
top card, T42). A seeded deal must be the table seed's deal and its restocks the seed's.

Between deals the table owes, in this order: ``table_closed`` when one active player is left
(T27) or ``max_deals`` deals are played (T29), else the next deal (T6, T7). Within a deal: a
restock when a turn ended on an empty stock (T28), the deal's end, its score (T17, T18, T23-T26).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final

import msgspec

from ..events import Event, TableClosed, UnknownEvent
from ..explain import differences
from ..lifecycle import LogError, TableBase
from ..shuffle import shuffle
from .cards import PACK, PACK_SET, CardCode
from .commands import Command
from .deal import Deal
from .events import (
    SEAT_ACTIONS,
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Threw,
    T31Took,
)
from .rules import ThirtyOneRules

__all__ = [
    "LogError", "GameResult", "SheetRow", "ThirtyOneState", "deal_order", "deal_seed", "due", "fold",
    "next_deal", "next_dealer", "places", "restock_seed", "score_event",
]  # fmt: skip

GAME: Final = "thirty-one"
ONE_LEFT: Final = "one player left"
MAX_DEALS: Final = "max_deals reached"


class SheetRow(msgspec.Struct, frozen=True, kw_only=True):
    """One deal on the score sheet (a record's ``deals[].result`` and its dealer)."""

    deal: int
    dealer: int
    end: str
    lives: list[int]
    coins: list[int]
    kitty: int
    eliminated: list[int]


class GameResult(msgspec.Struct, frozen=True, kw_only=True):
    """What the game gave so far (a record's ``result``)."""

    places: list[int]
    coins: list[int]
    kitty: int
    complete: bool


def deal_order(dealer: int, active: Iterable[int], n: int) -> list[int]:
    """The active seats in turn order, from the dealer's left to the dealer (T7, T12)."""
    live = set(active)
    return [s for s in ((dealer + k) % n for k in range(1, n + 1)) if s in live]


def next_dealer(deal_no: int, dealer: int, active: Iterable[int], n: int) -> int:
    """The dealer of deal ``deal_no + 1`` (T6): the last seat first, then the next active seat
    clockwise from the last dealer's seat (also when he was just eliminated)."""
    if deal_no == 0:
        return n - 1
    return deal_order(dealer, active, n)[0]


def deal_seed(table_seed: str, number: int) -> str:
    """The seed of a table's deal ``number`` (1-based)."""
    return f"{table_seed}/{number}"


def restock_seed(seed: str, k: int) -> str:
    """The seed of a seeded deal's ``k``-th restock (1-based)."""
    return f"{seed}/restock/{k}"


def places(n: int, active: list[int], coins: list[int], out_deal: list[int], by_coins: bool) -> list[int]:
    """Places per seat, competition ranking (T27, T37, T38): the active seats first (all
    sharing place 1, or ranked by coins when ``by_coins``), then the eliminated in the
    reverse order of their elimination, those of one deal sharing a place."""

    def key(seat: int) -> tuple[int, int]:
        if out_deal[seat]:
            return (1, -out_deal[seat])
        return (0, -coins[seat] if by_coins else 0)

    keys = [key(s) for s in range(n)]
    return [1 + sum(1 for other in keys if other < mine) for mine in keys]


class ThirtyOneState(TableBase):
    """Everything about a Thirty-one table that its log implies. Build it with ``fold``."""

    game: ClassVar[str] = GAME
    rules_type: ClassVar[type[msgspec.Struct]] = ThirtyOneRules
    seat_actions: ClassVar[tuple[type[Event], ...]] = SEAT_ACTIONS
    seats_range: ClassVar[tuple[int, int]] = (2, 9)

    rules: ThirtyOneRules

    def __init__(self) -> None:
        super().__init__()
        self.coins: list[int] = []
        self.kitty = 0
        self.active: list[int] = []
        """The active seats (T4), in seat order."""
        self.out_deal: list[int] = []
        """Per seat, the deal that eliminated it (0: active)."""
        self.elimination: list[list[int]] = []
        """The seats eliminated by each deal that eliminated someone, in order (T26)."""
        self.deal_no = 0
        self.dealer = -1
        self.deal: Deal | None = None
        self.deal_events: list[Event] = []
        """This deal's events, from its ``t31_dealt`` (views show them redacted)."""
        self.sheet: list[SheetRow] = []
        self.end_logged = False
        self.scored = True
        self.complete = False
        """Closed by the rules (T27, T29), not cut short."""
        self.lives: list[int] = []
        """The last scored deal's lives lost per seat."""
        self.shown: list[list[CardCode]] = []
        """The hands shown at the end of the deal in progress or, between deals, the last."""

    def opened_with(self, rules: Any) -> None:
        self.coins = [rules.coins] * self.n
        self.active = list(range(self.n))
        self.out_deal = [0] * self.n

    # --- questions -------------------------------------------------------------------------

    @property
    def in_deal(self) -> bool:
        return self.deal is not None and not self.scored

    @property
    def to_move(self) -> int | None:
        """The seat the table waits for, or None (something is due, paused, closed)."""
        deal = self.deal
        if deal is None or self.scored or self.closed or self.paused or deal.ended or deal.wants_restock:
            return None
        return deal.seat

    @property
    def wants_restock(self) -> bool:
        """Whether the deal in progress waits for a new stock (derived by ``due`` for a seeded
        deal; supplied by the record for an imported one)."""
        return self.deal is not None and not self.scored and not self.closed and self.deal.wants_restock

    @property
    def phase(self) -> str:
        """``take``, ``discard``, ``between_deals`` or ``closed``."""
        if self.closed:
            return "closed"
        deal = self.deal
        if deal is None or self.scored or deal.ended:
            return "between_deals"
        return deal.step

    def legal_actions(self, seat: int) -> list[Command]:
        """The actions ``seat`` may take now: its turn's, or ``look`` (throw_down) out of turn."""
        deal = self.deal
        if (
            deal is None
            or self.scored
            or self.closed
            or self.paused
            or self.defaulting >= 0
            or not 0 <= seat < self.n
            or self.withdrawn(seat)
        ):
            return []
        return deal.legal_actions(seat)

    def places(self) -> list[int]:
        """Places so far (T27, T37, T38)."""
        by_coins = self.complete and self.close_reason == MAX_DEALS
        return places(self.n, self.active, self.coins, self.out_deal, by_coins)

    def result(self) -> GameResult:
        return GameResult(places=self.places(), coins=list(self.coins), kitty=self.kitty, complete=self.complete)

    # --- folding ---------------------------------------------------------------------------

    def folded(self, event: Event | UnknownEvent) -> None:
        if self.deal is not None and not self.scored:
            self.deal_events.append(event)  # type: ignore[arg-type]

    def _dealt(self, e: T31Dealt) -> None:
        self.check_can_act()
        if self.in_deal:
            raise LogError(self.events, "a deal is dealt only between deals")
        owed = _close_due(self)
        if owed is not None:
            raise LogError(self.events, f"expected table_closed ({owed.reason}) instead of another deal")
        number = self.deal_no + 1
        if e.deal != number:
            raise LogError(self.events, f"deal {e.deal} follows deal {self.deal_no}")
        dealer = next_dealer(self.deal_no, self.dealer, self.active, self.n)
        if e.dealer != dealer:
            raise LogError(self.events, f"deal {number} is dealt by seat {dealer}, not {e.dealer} (T6)")
        order = deal_order(dealer, self.active, self.n)
        if e.order != order:
            raise LogError(self.events, f"the turn order is {order}, not {e.order} (T7, T12)")
        if len(e.deck) != len(PACK) or set(e.deck) != PACK_SET:
            raise LogError(self.events, "the deck must hold each of the 52 cards once")
        if e.seed:  # a seeded deal is derived: its seed is the table's, its deck the seed's
            seed = deal_seed(self.seed, number)
            if e.seed != seed:
                raise LogError(self.events, f"deal {number} of this table has seed {seed!r}, not {e.seed!r}")
            if e.deck != shuffle(seed, PACK):
                raise LogError(self.events, f"the deck is not the one seed {seed!r} gives")
        self.deal_no = number
        self.dealer = dealer
        self.deal = Deal(self.rules, self.n, order, e.deck, e.seed)
        self.deal_events = []
        self.end_logged = False
        self.scored = False
        self.shown = []

    def _action(self, e: T31Took | T31Discarded | T31Knocked | T31Looked | T31Threw) -> None:
        self.check_can_act()
        deal = self.deal
        if deal is None or self.scored:
            raise LogError(self.events, "no deal in progress")
        if deal.ended:
            raise LogError(self.events, "the deal is over: expected its end and score")
        if deal.wants_restock:
            raise LogError(self.events, "expected t31_restocked first: the stock ran out (T28, T42)")
        try:
            deal.push(e.seat, e)
        except ValueError as exc:
            raise LogError(self.events, f"seat {e.seat}: {getattr(exc, 'reason', exc)}") from exc
        self.acted(e.seat)

    def _restocked(self, e: T31Restocked) -> None:
        deal = self.deal
        if deal is None or self.scored or self.closed or self.paused or not deal.wants_restock:
            raise LogError(self.events, "no restock is due: the stock has not run out at the end of a turn (T42)")
        if deal.seed:
            self._expect(e)
        deal.restock(e.stock)

    def _ended(self, e: T31DealEnded) -> None:
        self._expect(e)
        self.end_logged = True
        self.shown = [list(h) for h in e.shown]

    def _scored(self, e: T31DealScored) -> None:
        self._expect(e)
        assert self.deal is not None
        self.coins = list(e.coins)
        self.kitty = e.kitty
        if e.eliminated:
            self.elimination.append(list(e.eliminated))
            for s in e.eliminated:
                self.out_deal[s] = e.deal
            self.active = [s for s in self.active if s not in e.eliminated]
        self.lives = list(e.lives)
        self.scored = True
        self.sheet.append(
            SheetRow(
                deal=e.deal,
                dealer=self.dealer,
                end=self.deal.end,
                lives=list(e.lives),
                coins=list(e.coins),
                kitty=e.kitty,
                eliminated=list(e.eliminated),
            )
        )

    def _table_closed(self, e: TableClosed) -> None:
        # Any close is accepted (an operator may end a table early); only the one the rules owe
        # completes the game, and only T27's gives the winner the kitty (T36).
        owed = due(self)
        TableBase._closed(self, e)
        self.complete = owed == e
        if self.complete and len(self.active) == 1:
            self.coins[self.active[0]] += self.kitty
            self.kitty = 0

    def _expect(self, e: Event) -> None:
        owed = due(self)
        if owed != e:
            want = f"nothing is due, found {type(e).__name__}" if owed is None else differences(owed, e)
            raise LogError(self.events, f"{type(e).__name__} does not follow: {want}")

    def copy(self) -> ThirtyOneState:
        new = ThirtyOneState.__new__(ThirtyOneState)
        new.__dict__.update(self.__dict__)
        self.copy_base(new)
        new.coins = list(self.coins)
        new.active = list(self.active)
        new.out_deal = list(self.out_deal)
        new.elimination = [list(g) for g in self.elimination]
        new.deal = self.deal.copy() if self.deal is not None else None
        new.deal_events = list(self.deal_events)
        new.sheet = list(self.sheet)
        new.lives = list(self.lives)
        new.shown = [list(h) for h in self.shown]
        return new


ThirtyOneState.handlers = {
    T31Dealt: ThirtyOneState._dealt,
    T31Took: ThirtyOneState._action,
    T31Discarded: ThirtyOneState._action,
    T31Knocked: ThirtyOneState._action,
    T31Looked: ThirtyOneState._action,
    T31Threw: ThirtyOneState._action,
    T31Restocked: ThirtyOneState._restocked,
    T31DealEnded: ThirtyOneState._ended,
    T31DealScored: ThirtyOneState._scored,
    TableClosed: ThirtyOneState._table_closed,
}


def fold(events: Iterable[Event | UnknownEvent], state: ThirtyOneState | None = None) -> ThirtyOneState:
    """The state a sequence of events leads to (continuing ``state`` if given)."""
    state = state if state is not None else ThirtyOneState()
    for event in events:
        state.apply(event)
    return state


# --- what the table owes -----------------------------------------------------------------


def due(state: ThirtyOneState) -> Event | None:
    """The next derived event the table waits for, or None when it waits for a player (or for
    an imported deal's restock, or for the operator to resume it)."""
    if not state.n or state.closed or state.paused:
        return None
    deal = state.deal
    if deal is None or state.scored:
        return _close_due(state) or next_deal(state)
    if not deal.ended:
        if deal.wants_restock and deal.seed:
            cards = deal.restock_cards()
            return T31Restocked(stock=shuffle(restock_seed(deal.seed, deal.restocks + 1), cards))  # type: ignore[arg-type]
        return None
    if not state.end_logged:
        return T31DealEnded(deal=state.deal_no, end=deal.end, shown=deal.shown())  # type: ignore[arg-type]
    return score_event(state, deal)


def _close_due(state: ThirtyOneState) -> TableClosed | None:
    if len(state.active) == 1:
        return TableClosed(reason=ONE_LEFT)
    if state.deal_no >= state.rules.max_deals:
        return TableClosed(reason=MAX_DEALS)
    return None


def next_deal(state: ThirtyOneState) -> T31Dealt:
    """The seeded next deal: ``deal_seed = f"{table seed}/{deal number}"``, deck
    ``shuffle(deal_seed, PACK)``."""
    number = state.deal_no + 1
    dealer = next_dealer(state.deal_no, state.dealer, state.active, state.n)
    seed = deal_seed(state.seed, number)
    return T31Dealt(
        deal=number,
        dealer=dealer,
        order=deal_order(dealer, state.active, state.n),
        deck=shuffle(seed, PACK),
        seed=seed,
    )


def score_event(state: ThirtyOneState, deal: Deal) -> T31DealScored:
    """The ended deal's score: lives (T17, T18, T23), one coin per life into the kitty (T24),
    eliminations (T25: on the county a player is out when he owes a coin and has none;
    ``county`` false: as soon as he pays his last)."""
    lives = deal.lives()
    coins = list(state.coins)
    kitty = state.kitty
    county = state.rules.county
    out: list[int] = []
    for seat, lost in enumerate(lives):
        for _ in range(lost):
            if coins[seat] == 0:
                out.append(seat)
                break
            coins[seat] -= 1
            kitty += 1
            if not county and coins[seat] == 0:
                out.append(seat)
                break
    return T31DealScored(deal=state.deal_no, lives=lives, coins=coins, kitty=kitty, eliminated=out)
