"""A rummy table's state as a fold over its events, and the events the table owes next.

The deal itself is the engine's (``protocol.rummy.state.Deal``, immutable): this module folds
the log into it, one event at a time, and checks every event against what the rules allow at
that point; a log that does not follow them raises ``LogError`` naming the event's position.
Derived events must equal what ``due`` gives (a ``rummy_dealt`` whose ``seed`` is empty, an
imported deal, carries its own deck: any order of the pack).

The engine draws the stock's top card inside the transition that begins a turn (the deal, or
the discard that ends the previous turn). The log records that draw as an event of its own,
``rummy_drew``, so that only its taker is shown the card: until it is folded the table owes
it (``draw_owed``), nobody is to move, and the views leave the drawn card in the stock.

Between deals the table owes, in this order: ``rummy_game_over`` once a total has reached the
target or ``max_deals`` deals are played (M26), then ``table_closed``; else the next deal, dealt
by the next dealer (M8) from the deal's seed ``<table seed>/<deal number>``.

``RummyTableRules`` are the engine's ``RummyRules`` with what every table of skatbus has
besides (``max_timeouts``, ``time_control``); ``players`` is the number seated (M46), which
``game.open_event`` writes in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Final

import msgspec

from ..clocks import TimeControl
from ..errors import IllegalAction
from ..events import Event, TableClosed, UnknownEvent
from ..explain import differences
from ..lifecycle import LogError, TableBase
from ..shuffle import shuffle
from . import actions as engine
from .commands import Command, command_of
from .events import (
    SEAT_ACTIONS,
    RummyClaimed,
    RummyDealEnded,
    RummyDealScored,
    RummyDealt,
    RummyDiscarded,
    RummyDrew,
    RummyGameOver,
    RummyLaidOff,
    RummyMelded,
    RummySwapped,
    RummyTook,
)
from .rules import PLAYERS, RummyRules
from .scoring import places, score
from .state import Deal, apply, deal, legal, turn_order

GAME: Final = "rummy"
GAME_OVER: Final = "game over"


class RummyTableRules(RummyRules, frozen=True, kw_only=True):
    """A rummy table's options: the rules page's (``RummyRules``) and the table's own."""

    max_timeouts: int = 0
    """Withdraw a seat that misses this many turns in a row (0: never), as at Skat tables."""
    time_control: TimeControl | None = None
    """A budget per seat for the whole table with an increment per move, besides
    ``turn_seconds`` (``protocol.clocks``; docs/time-control.md)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.max_timeouts, bool) or not isinstance(self.max_timeouts, int) or self.max_timeouts < 0:
            raise ValueError(f"max_timeouts must be a whole number >= 0 (0: never withdraw), not {self.max_timeouts!r}")


def seated(rules: Any, players: int) -> RummyTableRules:
    """``rules`` for a table of ``players`` seats (M46: the seats decide ``players``), with the
    defaults that depend on it written out (``RummyRules.resolved``). Raises ``ValueError``."""
    fields = msgspec.to_builtins(rules) if isinstance(rules, msgspec.Struct) else dict(rules)
    fields["players"] = players
    resolved = msgspec.convert(fields, RummyTableRules).resolved()
    assert isinstance(resolved, RummyTableRules)  # ``resolved`` keeps the type (structs.replace)
    return resolved


def deal_seed(table_seed: str, number: int) -> str:
    """The seed of a table's deal ``number`` (1-based)."""
    return f"{table_seed}/{number}"


def next_dealer(deal_no: int, dealer: int, n: int) -> int:
    """M8: the last seat deals first; the deal passes one seat clockwise."""
    return n - 1 if deal_no == 0 else (dealer + 1) % n


class RummyState(TableBase):
    """Everything about a rummy table that its log implies. Build it with ``fold``."""

    game: ClassVar[str] = GAME
    rules_type: ClassVar[type[msgspec.Struct]] = RummyTableRules
    seat_actions: ClassVar[tuple[type[Event], ...]] = SEAT_ACTIONS
    seats_range: ClassVar[tuple[int, int]] = (2, 6)

    rules: RummyTableRules

    def __init__(self) -> None:
        super().__init__()
        self.deal_no = 0
        self.dealer = -1
        self.deal: Deal | None = None
        """The deal in progress or, between deals, the last one (the engine's)."""
        self.draw_owed = False
        """The engine drew the card that begins the turn; ``rummy_drew`` is not folded yet."""
        self.end_logged = False
        self.scored = True
        self.over = False
        """``rummy_game_over`` is folded."""
        self.complete = False
        """Closed by the rules (M26), not cut short."""
        self.totals: list[int] = []
        self.sheet: list[RummyDealScored] = []
        self.shown: list[list[str]] = []
        """The hands laid open at the end of the deal in progress or, between deals, the last."""
        self.deal_events: list[Event] = []
        """This deal's events, from its ``rummy_dealt`` (views show them redacted)."""
        self._legal: tuple[Deal | None, list[Command]] = (None, [])

    def seats_for(self, rules: Any) -> tuple[int, int]:
        return (rules.players, rules.players)

    def opened_with(self, rules: Any) -> None:
        self.totals = [0] * self.n

    # --- questions -------------------------------------------------------------------------

    @property
    def in_deal(self) -> bool:
        return self.deal is not None and not self.scored

    @property
    def to_move(self) -> int | None:
        deal = self.deal
        if deal is None or self.scored or self.closed or self.paused or deal.ended or self.draw_owed:
            return None
        return deal.seat

    @property
    def phase(self) -> str:
        """``turn`` (a seat is to move or is drawing), ``deal_over``, ``between_deals`` or ``closed``."""
        if self.closed:
            return "closed"
        deal = self.deal
        if deal is None or self.scored:
            return "between_deals"
        return "deal_over" if deal.ended else "turn"

    @property
    def finished(self) -> bool:
        """M26: a total has reached the target, or ``max_deals`` deals are played."""
        return self.deal_no > 0 and (
            any(t >= self.rules.target for t in self.totals) or self.deal_no >= self.rules.max_deals
        )

    def legal_actions(self, seat: int) -> list[Command]:
        """The commands ``seat`` may send now: the engine's legal actions when it is to move
        (complete up to M47), nothing otherwise."""
        deal = self.deal
        if deal is None or seat != self.to_move or self.defaulting >= 0 or self.withdrawn(seat):
            return []
        cached, commands = self._legal
        if cached is not deal:
            commands = [command_of(a) for a in legal(deal)]
            self._legal = (deal, commands)
        return list(commands)

    def places(self) -> list[int]:
        return places(self.totals)

    def visible_hand(self, seat: int) -> list[str]:
        """``seat``'s hand as it may see it: without the card just drawn until ``rummy_drew``."""
        deal = self.deal
        if deal is None or not 0 <= seat < deal.n:
            return []
        hand = list(deal.hands[seat])
        if self.draw_owed and seat == deal.seat and hand and hand[-1] == deal.drawn:
            hand.pop()
        return hand

    # --- folding ---------------------------------------------------------------------------

    def folded(self, event: Event | UnknownEvent) -> None:
        if self.deal is not None and not self.scored:
            self.deal_events.append(event)  # type: ignore[arg-type]

    def _dealt(self, e: RummyDealt) -> None:
        self.check_can_act()
        if self.in_deal:
            raise LogError(self.events, "a deal is dealt only between deals")
        if self.finished:
            raise LogError(self.events, "the game is over (M26): expected rummy_game_over")
        number = self.deal_no + 1
        if e.deal != number:
            raise LogError(self.events, f"deal {e.deal} follows deal {self.deal_no}")
        dealer = next_dealer(self.deal_no, self.dealer, self.n)
        if e.dealer != dealer:
            raise LogError(self.events, f"deal {number} is dealt by seat {dealer}, not {e.dealer} (M8)")
        pack = self.rules.pack
        if len(e.deck) != len(pack) or sorted(e.deck) != sorted(pack):
            raise LogError(self.events, f"the deck must hold each of the {len(pack)} cards of this pack once")
        if e.order != turn_order(dealer, self.n) or e.size != self.rules.hand_size:
            raise LogError(self.events, f"deal {number}: order {e.order} and size {e.size} are not the rules' (M9)")
        if e.seed:
            seed = deal_seed(self.seed, number)
            if e.seed != seed:
                raise LogError(self.events, f"deal {number} of this table has seed {seed!r}, not {e.seed!r}")
            if e.deck != shuffle(seed, pack):
                raise LogError(self.events, f"the deck is not the one seed {seed!r} gives")
        self.deal = deal(self.rules, dealer, e.deck)
        self.deal_no = number
        self.dealer = dealer
        self.draw_owed = bool(self.deal.drawn) and not self.deal.ended
        self.end_logged = False
        self.scored = False
        self.shown = []
        self.deal_events = []

    def _drew(self, e: RummyDrew) -> None:
        self._expect(e)
        self.draw_owed = False

    def _action(self, e: Any) -> None:
        self.check_can_act()
        deal = self.deal
        if deal is None or self.scored:
            raise LogError(self.events, "no deal in progress")
        if deal.ended:
            raise LogError(self.events, "the deal is over: expected its end and score")
        if self.draw_owed:
            raise LogError(self.events, "expected rummy_drew first: a turn begins with the draw (M11)")
        if e.seat != deal.seat:
            raise LogError(self.events, f"seat {e.seat} acted, but it is seat {deal.seat}'s turn")
        action = action_of(e)
        try:
            new = apply(deal, action)
        except IllegalAction as exc:
            raise LogError(self.events, f"seat {e.seat}: {exc.reason}") from None
        if type(e) is RummyTook and e.cards != list(deal.row[e.n - 1 :]):
            raise LogError(
                self.events, f"taking card {e.n} of the row takes {list(deal.row[e.n - 1 :])}, not {e.cards}"
            )
        if type(e) is RummySwapped and e.joker != new.pending:
            raise LogError(self.events, f"the swap takes {new.pending}, not {e.joker}")
        self.deal = new
        self.draw_owed = type(e) is RummyDiscarded and not new.ended and bool(new.drawn)
        self.acted(e.seat)

    def _ended(self, e: RummyDealEnded) -> None:
        self._expect(e)
        self.end_logged = True
        self.shown = [list(h) for h in e.hands]

    def _scored(self, e: RummyDealScored) -> None:
        self._expect(e)
        self.totals = list(e.totals)
        self.scored = True
        self.sheet.append(e)

    def _game_over(self, e: RummyGameOver) -> None:
        self._expect(e)
        self.over = True

    def _table_closed(self, e: TableClosed) -> None:
        # Any close is accepted (an operator may end a table early); only the one the rules owe
        # completes the game.
        owed = due(self)
        TableBase._closed(self, e)
        self.complete = owed == e

    def _expect(self, e: Event) -> None:
        owed = due(self)
        if owed != e:
            want = f"nothing is due, found {type(e).__name__}" if owed is None else differences(owed, e)
            raise LogError(self.events, f"{type(e).__name__} does not follow: {want}")

    def copy(self) -> RummyState:
        new = RummyState.__new__(RummyState)
        new.__dict__.update(self.__dict__)
        self.copy_base(new)
        new.totals = list(self.totals)
        new.sheet = list(self.sheet)
        new.shown = [list(h) for h in self.shown]
        new.deal_events = list(self.deal_events)
        return new


RummyState.handlers = {
    RummyDealt: RummyState._dealt,
    RummyDrew: RummyState._drew,
    **dict.fromkeys(SEAT_ACTIONS, RummyState._action),
    RummyDealEnded: RummyState._ended,
    RummyDealScored: RummyState._scored,
    RummyGameOver: RummyState._game_over,
    TableClosed: RummyState._table_closed,
}


def action_of(e: Any) -> engine.AnyAction:
    """The engine's action a seat's action event records."""
    kind = type(e)
    if kind is RummyTook:
        return engine.Take(n=e.n)
    if kind is RummyMelded:
        return engine.Lay(cards=tuple(e.cards))
    if kind is RummyLaidOff:
        return engine.LayOff(meld=e.meld, card=e.card)
    if kind is RummySwapped:
        return engine.Swap(meld=e.meld, card=e.card)
    if kind is RummyClaimed:
        return engine.Claim(cards=tuple(e.cards))
    if kind is RummyDiscarded:
        return engine.Discard(card=e.card)
    raise TypeError(f"not an action event of the rummy: {kind.__name__}")


def fold(events: Iterable[Event | UnknownEvent], state: RummyState | None = None) -> RummyState:
    """The state a sequence of events leads to (continuing ``state`` if given)."""
    state = state if state is not None else RummyState()
    for event in events:
        state.apply(event)
    return state


# --- what the table owes -----------------------------------------------------------------


def due(state: RummyState) -> Event | None:
    """The next derived event the table waits for, or None when it waits for a player (or for
    the operator to resume it)."""
    if not state.n or state.closed or state.paused:
        return None
    d = state.deal
    if d is None or state.scored:
        if state.over:
            return TableClosed(reason=GAME_OVER)
        if state.finished:
            return RummyGameOver(deals=state.deal_no, totals=list(state.totals), places=state.places())
        return next_deal(state)
    if state.draw_owed:
        return RummyDrew(seat=d.seat, card=d.drawn)
    if not d.ended:
        return None
    if not state.end_logged:
        return RummyDealEnded(deal=state.deal_no, end=d.end, out=d.out, hands=[list(h) for h in d.hands])
    s = score(d)
    return RummyDealScored(
        deal=state.deal_no,
        plus=list(s.plus),
        minus=list(s.minus),
        score=list(s.score),
        totals=[t + x for t, x in zip(state.totals, s.score)],
    )


def next_deal(state: RummyState) -> RummyDealt:
    """The seeded next deal: seed ``<table seed>/<deal number>``, deck ``shuffle(seed, pack)``."""
    number = state.deal_no + 1
    dealer = next_dealer(state.deal_no, state.dealer, state.n)
    seed = deal_seed(state.seed, number)
    return RummyDealt(
        deal=number,
        dealer=dealer,
        order=turn_order(dealer, state.n),
        size=state.rules.hand_size,
        deck=shuffle(seed, state.rules.pack),
        seed=seed,
    )


__all__ = [
    "GAME", "GAME_OVER", "LogError", "PLAYERS", "RummyState", "RummyTableRules", "action_of", "deal_seed", "due",
    "fold", "next_deal", "next_dealer", "seated",
]  # fmt: skip
