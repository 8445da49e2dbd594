"""A table's state as a fold over its events, and the events the table owes next.

``fold(events)`` builds a ``TableState`` one event at a time with ``state.apply(event)``. Every
event is checked against what the rules allow at that point: a log that does not follow the
rules raises ``LogError`` naming the event's position. Derived events (bidding won, trick
taken, deal ended, deal scored, ...) must equal what the engine derives itself.

``due(state)`` is the one derived event the table is waiting for, if any: the services append
it (each owns some kinds, see ``OWNER``), and player commands wait until nothing is due.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Final

import msgspec

from ..clocks import SeatClocks, Step
from ..events import (
    AllPassed,
    BiddingWon,
    BidHeld,
    BidMade,
    CardPlayed,
    CardsShown,
    DealDealt,
    DealEnded,
    DealScored,
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
    TableClosed,
    TableOpened,
    TablePaused,
    TableResumed,
    TrickTaken,
    UnknownEvent,
)
from ..explain import differences
from ..lifecycle import LogError as LogError
from ..lifecycle import TableBase, blamed_on_newer
from . import cards as C
from .cards import CODES, INDEX
from .commands import (
    BIDS,
    HOLD,
    KONTRA,
    PASS,
    PICKUP,
    PLAY,
    RE,
    RESIGN,
    SHOW,
    Bid,
    Command,
    Declare,
    Discard,
    PlayCard,
)
from .deal import ENDED, Deal
from .dealing import deal_from_seed, deal_seats, deal_seed, dealer_seat
from .ends import EARLY_BY_RULE, PASSED_IN
from .rules import Rules
from .scoring import DealResult, score

# Which service writes which derived event.
OWNER: Final[dict[type[Event], str]] = {
    DealDealt: "dealer",
    TableClosed: "dealer",
    BiddingWon: "bidding",
    AllPassed: "bidding",
    TrickTaken: "play",
    DealEnded: "play",
    DealScored: "scoring",
}

# Which service writes each kind of event: the owners of the derived ones, the dealer the
# table's opening and its pauses, and the service answering the command each of the others
# records. (A ``timed_out`` and a ``seat_withdrawn`` are written by whichever service's phase
# timed out, so they have no entry.)
WRITER: Final[dict[type[Event], str]] = {
    **OWNER,
    TableOpened: "dealer",
    TablePaused: "dealer",
    TableResumed: "dealer",
    BidMade: "bidding",
    BidHeld: "bidding",
    Passed: "bidding",
    SkatTaken: "bidding",
    Discarded: "bidding",
    GameDeclared: "bidding",
    KontraSaid: "bidding",
    ReSaid: "bidding",
    CardPlayed: "play",
    CardsShown: "play",
    Resigned: "play",
}


class SheetRow(msgspec.Struct, frozen=True, kw_only=True):
    """One line of the score sheet."""

    deal: int
    dealer: int
    result: DealResult
    totals: list[int]
    seeger_fabian_totals: list[int]


class TableState:
    """Everything about a table that its log implies. Build it with ``fold``."""

    game: ClassVar[str] = "skat"

    __slots__ = (
        "table", "players", "rules", "seed", "n", "deal_no", "deal", "seats", "pos_of",
        "dealer", "bock_left", "bock_deal", "bidding_logged", "tricks_logged", "end_logged",
        "scored", "closed", "close_reason", "sheet", "totals", "sf_totals", "timeouts",
        "events", "deal_events", "unknown", "formats", "feed", "skipped", "missed", "defaulting",
        "announced", "paused", "pause_reason", "newer", "clock",
    )  # fmt: skip

    def __init__(self) -> None:
        self.table = ""
        self.players: list[str] = []
        self.rules = Rules()
        self.seed = ""
        self.n = 0
        self.deal_no = 0
        self.deal: Deal | None = None
        self.seats: tuple[int, int, int] = (0, 1, 2)
        self.pos_of: dict[int, int] = {}
        self.dealer = -1
        self.bock_left = 0
        self.bock_deal = False
        self.bidding_logged = False
        self.tricks_logged = 0
        self.end_logged = False
        self.scored = True
        self.closed = False
        self.close_reason = ""
        self.sheet: list[SheetRow] = []
        self.totals: list[int] = []
        self.sf_totals: list[int] = []
        self.timeouts: list[int] = []
        self.events = 0
        self.deal_events: list[Event] = []
        self.unknown = 0
        self.newer: tuple[int, UnknownEvent] | None = None
        """The first event skipped as unknown and its position: a later break is blamed on it."""
        self.formats: dict[str, str] = {}
        self.feed = "public"  # where its spectator feed goes (protocol.events.FEEDS)
        self.skipped = 0
        """Deals whose play this state jumped over (``skip_to_scored``): 0 for a full fold."""
        self.missed: list[int] = []
        """Per seat, the turns it has missed in a row (a time-out counts, its default action
        does not reset it, any action of its own does). Only a full fold of the deals knows
        it: a state that skips deals must not skip them at tables with ``max_timeouts``."""
        self.defaulting = -1
        """The seat whose time-out was just recorded: the next events are its withdrawal (if
        due) and its default action, which is not an action of its own. Until then it is that
        seat's turn with no time left (``turn_seconds``), so whoever enforces the turn records
        the rest even if the writer of the time-out died halfway (``decide.timeout``)."""
        self.announced: list[bool] = []
        """Per seat, whether its ``seat_withdrawn`` is in the log."""
        self.paused = False
        """Paused by the operator (``table_paused``): nobody is to move, nothing is due."""
        self.pause_reason = ""
        self.clock: SeatClocks | None = None
        """Every seat's clock, from the stored times ``apply`` was given (``protocol.clocks``):
        what is left of its budget under ``Rules.time_control``, and its think times."""

    # --- questions ---------------------------------------------------------------------

    @property
    def opened(self) -> bool:
        return self.n > 0

    @property
    def in_deal(self) -> bool:
        return self.deal is not None and not self.scored

    @property
    def to_move(self) -> int | None:
        """The table seat whose action the table waits for, or None (nothing due from a player,
        or the table is paused)."""
        deal = self.deal
        if deal is None or deal.to_move is None or self.closed or self.paused or due(self) is not None:
            return None
        return self.seats[deal.to_move]

    def withdrawn(self, seat: int) -> bool:
        """Whether ``seat`` missed ``Rules.max_timeouts`` turns in a row: it is played by the
        default action at once, and its own commands are refused."""
        limit = self.rules.max_timeouts
        return bool(limit) and 0 <= seat < len(self.missed) and self.missed[seat] >= limit

    def turn_seconds(self, seat: int | None) -> float:
        """How long ``seat`` has for its turn: the table's turn time, no more than is left of
        its budget under a time control; nothing if withdrawn or if its time-out is recorded
        but not yet its default action."""
        per_move = self.per_move(seat)
        return per_move if seat is None or self.clock is None else self.clock.allowance(seat, per_move)

    def per_move(self, seat: int | None) -> float:
        """The per-move deadline alone (``turn_seconds`` without the budget)."""
        if seat is not None and (self.defaulting == seat or self.withdrawn(seat)):
            return 0.0
        return self.rules.turn_seconds

    def clock_step(self, event: Event | UnknownEvent) -> tuple[Step, int, float]:
        """What ``event`` is to its seat's clock, asked before it is folded: the kind of step,
        the seat, and the per-move deadline the seat had (``protocol.clocks.SeatClocks.step``)."""
        kind = type(event)
        seat: int = getattr(event, "seat", -1)
        if kind is PlayerTimedOut:
            return "timeout", seat, self.per_move(seat)
        if kind in _SEAT_ACTIONS:
            return ("default" if self.defaulting == seat else "move"), seat, self.per_move(seat)
        return "other", -1, 0.0

    def legal_actions(self, seat: int) -> list[Command]:
        """The actions ``seat`` may take now: what ``decide`` accepts from it (empty if it is not
        its turn, while its time-out is being recorded, or once it is withdrawn)."""
        if self.to_move != seat or self.defaulting == seat or self.withdrawn(seat):
            return []
        assert self.deal is not None
        return self.deal.legal_actions()

    @property
    def score(self) -> list[int]:
        """The ranking totals: Seeger-Fabian when the table plays it, else the standard list."""
        return self.sf_totals if self.rules.seeger_fabian else self.totals

    # --- applying ----------------------------------------------------------------------

    def apply(self, event: Event | UnknownEvent, at: float | None = None) -> None:
        """Apply one event, stored at Unix time ``at`` if known (for the clocks); raises
        ``LogError`` (and leaves the state unusable) if it breaks the rules."""
        step = self.clock_step(event) if self.clock is not None else None
        position = self.events
        handler = _APPLY.get(type(event))
        try:
            if self.defaulting >= 0 and not _completes_time_out(event, self.defaulting):
                raise LogError(
                    position, f"{type(event).__name__} between seat {self.defaulting}'s time-out and its default action"
                )
            if handler is None:
                if isinstance(event, UnknownEvent):
                    self.unknown += 1
                    self.newer = self.newer or (position, event)
                    self.events += 1
                    return
                raise LogError(position, f"not an event: {type(event).__name__}")
            if not self.n and type(event) is not TableOpened:
                raise LogError(position, "the log must start with table_opened")
            handler(self, event)
        except LogError as exc:
            raise blamed_on_newer(self.newer, exc) from None
        except (KeyError, IndexError, ValueError, AssertionError) as exc:
            raise blamed_on_newer(self.newer, LogError(position, f"{type(event).__name__}: {exc}")) from exc
        self.events += 1
        if step is not None and self.clock is not None:
            self.clock.step(step[0], step[1], at, step[2])
        elif self.clock is not None:  # just opened: the clock starts at the opening's time
            self.clock.last = at
        if self.deal is not None and not self.scored:
            self.deal_events.append(event)  # type: ignore[arg-type]

    def _opened(self, e: TableOpened) -> None:
        if self.opened:
            raise LogError(self.events, "table already opened")
        if len(e.players) != e.rules.players:
            raise LogError(self.events, f"{len(e.players)} players for a {e.rules.players}-player table")
        self.table, self.players, self.rules, self.seed = e.table, list(e.players), e.rules, e.seed
        self.formats = dict(e.formats)
        self.feed = e.feed
        self.n = len(e.players)
        self.totals = [0] * self.n
        self.sf_totals = [0] * self.n
        self.timeouts = [0] * self.n
        self.missed = [0] * self.n
        self.announced = [False] * self.n
        self.clock = SeatClocks(e.rules.time_control, self.n)

    def _dealt(self, e: DealDealt) -> None:
        # Not compared with due(): imported deals (ISS records) carry their own cards, no seed.
        if self.in_deal or self.closed:
            raise LogError(self.events, "a deal is dealt only between deals of an open table")
        if e.deal != self.deal_no + 1:
            raise LogError(self.events, f"deal {e.deal} follows deal {self.deal_no}")
        if (e.dealer, tuple(e.seats)) != (dealer_seat(e.deal, self.n), deal_seats(e.deal, self.n)):
            raise LogError(self.events, "dealer or seats do not follow the dealer rotation")
        hands = tuple(_cards_mask(h) for h in e.hands)
        skat = _cards_mask(e.skat)
        if e.seed and deal_from_seed(e.seed) != (hands, skat):
            raise LogError(self.events, f"the cards do not match seed {e.seed!r}")
        self.deal_no = e.deal
        self.dealer = e.dealer
        self.seats = e.seats
        self.pos_of = {seat: pos for pos, seat in enumerate(e.seats)}
        self.deal = Deal(hands, skat, self.rules)  # type: ignore[arg-type]
        self.bock_deal = self.bock_left > 0
        self.bidding_logged = False
        self.tricks_logged = 0
        self.end_logged = False
        self.scored = False
        self.deal_events = []

    def _player_action(self, seat: int, command: Command) -> None:
        deal = self.deal
        if self.closed:
            raise LogError(self.events, "the table is closed")
        if self.paused:
            raise LogError(self.events, "the table is paused")
        if deal is None or self.scored:
            raise LogError(self.events, "no deal in progress")
        owed = due(self)
        if owed is not None:
            raise LogError(self.events, f"expected {type(owed).__name__} first")
        pos = self.pos_of.get(seat)
        if pos is None:
            raise LogError(self.events, f"seat {seat} does not play this deal")
        err = deal.check(pos, command)
        if err:
            raise LogError(self.events, f"seat {seat}: {err}")
        deal.push(command, pos)
        self._acted(seat)

    def _acted(self, seat: int) -> None:
        """A seat's action: its own (the count of turns missed in a row starts again) or the
        default one after its time-out (the count stands)."""
        if self.defaulting == seat:
            self.defaulting = -1
        elif self.missed:
            self.missed[seat] = 0

    def _bid(self, e: BidMade) -> None:
        bid = BIDS.get(e.value) or Bid(value=e.value)
        self._player_action(e.seat, bid)

    def _hold(self, e: BidHeld) -> None:
        if self.deal is not None and e.value != self.deal.bid:
            raise LogError(self.events, f"hold of {e.value} but the bid is {self.deal.bid}")
        self._player_action(e.seat, HOLD)

    def _passed(self, e: Passed) -> None:
        self._player_action(e.seat, PASS)

    def _skat_taken(self, e: SkatTaken) -> None:
        if self.deal is None or C.parse(e.cards) != self.deal.skat:
            raise LogError(self.events, "skat_taken shows cards that are not the skat")
        self._player_action(e.seat, PICKUP)

    def _discarded(self, e: Discarded) -> None:
        if len(e.cards) != 2:
            raise LogError(self.events, "discard exactly two cards")
        self._player_action(e.seat, Discard(cards=(e.cards[0], e.cards[1])))

    def _declared(self, e: GameDeclared) -> None:
        g = e.game
        if self.deal is not None and g.hand == self.deal.picked_up:
            raise LogError(self.events, "the declaration's hand flag contradicts the skat pickup")
        self._player_action(e.seat, Declare(game=g.game, schneider=g.schneider, schwarz=g.schwarz, ouvert=g.ouvert))

    def _kontra(self, e: KontraSaid) -> None:
        self._player_action(e.seat, KONTRA)

    def _re(self, e: ReSaid) -> None:
        self._player_action(e.seat, RE)

    def _card(self, e: CardPlayed) -> None:
        deal = self.deal
        # Fast path for the commonest event; the full check runs in _player_action otherwise.
        if (
            deal is not None
            and deal.phase == "playing"
            and not self.closed
            and not self.paused
            and self.defaulting < 0
            and self.bidding_logged
            and self.tricks_logged == len(deal.tricks)
        ):
            pos = self.pos_of.get(e.seat)
            if pos is not None and pos == deal.to_move:
                c = INDEX[e.card]
                if deal.legal_cards() >> c & 1:
                    deal._play(pos, c)
                    deal.history.append((pos, PLAY[c]))
                    if self.missed:
                        self.missed[e.seat] = 0
                    return
        self._player_action(e.seat, PlayCard(card=e.card))

    def _shown(self, e: CardsShown) -> None:
        deal = self.deal
        if deal is not None and deal.declarer is not None and C.parse(e.cards) != deal.hands[deal.declarer]:
            raise LogError(self.events, "cards_shown does not show the declarer's hand")
        self._player_action(e.seat, SHOW)

    def _resigned(self, e: Resigned) -> None:
        self._player_action(e.seat, RESIGN)

    def _derived(self, e: Event) -> None:
        self._expect(e)
        kind = type(e)
        if kind is TrickTaken:
            self.tricks_logged += 1
        elif kind is BiddingWon or kind is AllPassed:
            self.bidding_logged = True
        elif kind is DealEnded:
            self.end_logged = True

    def _deal_scored(self, e: DealScored) -> None:
        self._expect(e)
        self._record_score(e)

    def skip_to_scored(self, e: DealScored, position: int) -> None:
        """Jump over the rest of the deal in progress to its score, stored at ``position``.

        For a service that takes no part in a deal's play (the dealer, bidding): it need not
        read and fold the deal's cards to deal the next one or run its bidding. The score is
        taken as stored; the play and scoring services fold and check every event of the
        deal, and scoring derived this score from them. What only the skipped events tell
        (the cards played, time-outs during the play) is missing from this state afterwards:
        ``skipped`` counts such jumps. Raises ``LogError`` unless ``e`` ends the deal in progress.
        """
        if self.closed or self.deal is None or self.scored or e.deal != self.deal_no or position < self.events:
            raise LogError(position, f"deal_scored of deal {e.deal} does not end the deal in progress")
        self.events = position
        self._record_score(e)
        self.events = position + 1
        self.deal_events = []
        self.skipped += 1
        self.paused, self.pause_reason, self.defaulting = False, "", -1  # a score follows neither

    def _record_score(self, e: DealScored) -> None:
        for seat, (s, sf) in enumerate(zip(e.result.scores, e.result.seeger_fabian)):
            self.totals[seat] += s
            self.sf_totals[seat] += sf
        self.bock_left = e.bock_deals_left
        self.scored = True
        self.sheet.append(
            SheetRow(
                deal=e.deal,
                dealer=self.dealer,
                result=e.result,
                totals=list(self.totals),
                seeger_fabian_totals=list(self.sf_totals),
            )
        )

    def _expect(self, e: Event) -> None:
        owed = due(self)
        if owed != e:
            want = f"nothing is due, found {type(e).__name__}" if owed is None else differences(owed, e)
            raise LogError(self.events, f"{type(e).__name__} does not follow: {want}")

    def copy(self) -> TableState:
        new = TableState.__new__(TableState)
        for name in TableState.__slots__:
            setattr(new, name, getattr(self, name))
        new.deal = self.deal.copy() if self.deal is not None else None
        new.sheet = list(self.sheet)
        new.totals = list(self.totals)
        new.sf_totals = list(self.sf_totals)
        new.timeouts = list(self.timeouts)
        new.missed = list(self.missed)
        new.announced = list(self.announced)
        new.deal_events = list(self.deal_events)
        new.clock = self.clock.copy() if self.clock is not None else None
        return new


_APPLY: Final[dict[type, Callable[[Any, Any], None]]] = {
    TableOpened: TableState._opened,
    DealDealt: TableState._dealt,
    BidMade: TableState._bid,
    BidHeld: TableState._hold,
    Passed: TableState._passed,
    BiddingWon: TableState._derived,
    AllPassed: TableState._derived,
    SkatTaken: TableState._skat_taken,
    Discarded: TableState._discarded,
    GameDeclared: TableState._declared,
    KontraSaid: TableState._kontra,
    ReSaid: TableState._re,
    CardPlayed: TableState._card,
    TrickTaken: TableState._derived,
    CardsShown: TableState._shown,
    Resigned: TableState._resigned,
    DealEnded: TableState._derived,
    DealScored: TableState._deal_scored,
    # The table lifecycle's events: folded as at every game's table (protocol.lifecycle).
    PlayerTimedOut: TableBase._timed_out,
    TableClosed: TableBase._closed,
    SeatWithdrawn: TableBase._withdrawn,
    TablePaused: TableBase._paused,
    TableResumed: TableBase._resumed,
}


_SEAT_ACTIONS: Final = (
    BidMade, BidHeld, Passed, SkatTaken, Discarded, GameDeclared, KontraSaid, ReSaid, CardPlayed, CardsShown,
    Resigned,
)  # fmt: skip


def _completes_time_out(event: Event | UnknownEvent, seat: int) -> bool:
    """What may follow ``seat``'s time-out: its withdrawal, its default action (the fold checks
    that it is legal), or, in a log of a version that recorded a time-out twice after a crash
    halfway, another time-out of the same seat; and an event this version does not know."""
    kind = type(event)
    if kind is SeatWithdrawn or kind is PlayerTimedOut or kind in _SEAT_ACTIONS:
        return getattr(event, "seat", -1) == seat
    return kind is UnknownEvent  # skipped anywhere: a newer version's event says nothing here


def _cards_mask(codes: Sequence[str]) -> int:
    """A card set from codes msgspec already validated; a card listed twice is an error."""
    m = 0
    for code in codes:
        m |= 1 << INDEX[code]
    if m.bit_count() != len(codes):
        raise ValueError("a card is listed twice")
    return m


def fold(events: Iterable[Event | UnknownEvent], state: TableState | None = None) -> TableState:
    """The state a sequence of events leads to (continuing ``state`` if given)."""
    state = state if state is not None else TableState()
    for event in events:
        state.apply(event)
    return state


# --- what the table owes -----------------------------------------------------------------


def due(state: TableState) -> Event | None:
    """The next derived event the table waits for, or None when it waits for a player (or
    for the operator to resume it)."""
    if not state.n or state.closed or state.paused:
        return None
    deal = state.deal
    if deal is None or state.scored:
        return _next_deal_or_close(state)
    seats = state.seats
    if not state.bidding_logged:
        if deal.declarer is not None:
            return BiddingWon(seat=seats[deal.declarer], value=deal.bid)
        if deal.ramsch or deal.end_reason == PASSED_IN:
            return AllPassed(ramsch=deal.ramsch)
        return None
    if len(deal.tricks) > state.tricks_logged:
        t = deal.tricks[state.tricks_logged]
        return TrickTaken(
            seat=seats[t.winner],
            trick=state.tricks_logged + 1,
            cards=[CODES[c] for c in t.cards],  # type: ignore[misc]
            points=t.points,
        )
    if deal.phase != ENDED:
        return None
    if not state.end_logged:
        return DealEnded(deal=state.deal_no, reason=deal.end_reason or "")
    return _scored_event(state, deal)


def _scored_event(state: TableState, deal: Deal) -> DealScored:
    result = score(deal, state.seats, state.n, state.bock_deal)
    left = state.bock_left - 1 if state.bock_deal else state.bock_left
    added = _bock_rounds(state.rules, result) if state.rules.bock else 0
    return DealScored(
        deal=state.deal_no,
        result=result,
        bock_rounds_added=added,
        bock_deals_left=max(left, 0) + added * state.n,
    )


def _bock_rounds(rules: Rules, r: DealResult) -> int:
    """How many Bock rounds a scored deal triggers (each trigger adds one round)."""
    if r.kind != "game":
        return 0
    triggers = set(rules.bock_triggers)
    n = 0
    if "kontra_lost" in triggers and r.kontra and r.won:
        n += 1
    if "re" in triggers and r.re:
        n += 1
    # 60:60 only in a game played (or conceded) to its end; never after an early end by rule.
    sixty_all = r.game is not None and r.game.game != "N" and r.declarer_points == 60 and r.ended not in EARLY_BY_RULE
    if "sixty_all" in triggers and sixty_all:
        n += 1
    if "grand_hand_won" in triggers and r.game is not None and r.game.game == "G" and r.game.hand and r.won:
        n += 1
    if "schneider_lost" in triggers and not r.won and r.schneider and r.declarer_points <= 30:
        n += 1
    return n


def _next_deal_or_close(state: TableState) -> Event:
    rules = state.rules
    if rules.deals and state.deal_no >= rules.deals:
        return TableClosed(reason="all rounds played")
    number = state.deal_no + 1
    seed = deal_seed(state.seed, number)
    hands, skat = deal_from_seed(seed)
    return DealDealt(
        deal=number,
        dealer=dealer_seat(number, state.n),
        seats=deal_seats(number, state.n),
        hands=tuple(C.codes(h) for h in hands),  # type: ignore[arg-type]
        skat=C.codes(skat),  # type: ignore[arg-type]
        seed=seed,
    )
