"""One deal of the rummy as a pure, immutable state machine (rules M8-M23, M27, M28, M36,
M40, M43, M47-M49).

``deal(rules, dealer, deck)`` deals from a deck order as RECORDS.md's ``deck`` gives it and
begins the first turn; ``legal(state)`` lists every action the seat to move may take;
``apply(state, action)`` returns the next state (the input is never changed: a ``Deal`` is a
frozen Struct of tuples) or raises ``IllegalAction`` with a one-line reason. One action is one
transition; the compulsory draw (M11) is part of the transition that begins a turn (the deal
itself, or the discard that ends the previous turn), never an action, and ``drawn`` says which
card it was (only its taker sees it). A deal ends ``went_out`` (M15, M40) or ``stock_out``
(M16).

What each seat may see is all here: its hand, the row in order, the melds with their owners,
who laid each card and what each joker stands for, the stock's size and the others' hand
sizes.

How long ``legal`` gets (M47). The list is complete up to the equivalences M47 allows (see
``melds``): sets once in suit order, one copy of a card, one rotation of a whole-suit run,
jokers lowest-numbered first and never where a held natural card the action does not use could
stand, except the joker the seat must use now (taken or swapped), which is listed at every place
it fits. So without a card to use a new meld is fixed by its natural cards and, in c/d sets, by
the suits of jokers the hand has no card for: at most 4 x (13 x 10 + 1) run windows and 13 x 11
sets of suits (times a few joker choices), whatever the hand's size; lay-offs are at most one
per distinct card and two joker places per meld; takes at most the row's length; swaps at most 4
jokers x 3 cards; claims a few per card; discards one per card. A joker to be used is the worst
case: one run per window and place, at most 4 x (13 x 75 + 13) = 3,952, plus about 200 sets, for
a hand holding every natural card; after a take of a natural card only the melds and lay-offs
through that card are listed. Measured over 4,000 random games of every variant (half of them by
a player who takes from the row whenever it can, so hands reach 44 cards): the longest list had
915 actions, right after a take that left 42 cards in hand (the named card a joker); 80 after a
take of a natural card that left 42 cards; 386 after a swap; 350 with no card to use (a hand of
41). ``tests/protocol/rummy/test_properties.py`` fails a list longer than 5,000.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..errors import IllegalAction
from .actions import Action, AnyAction, Claim, Discard, Lay, LayOff, Swap, Take
from .cards import is_joker, parse_token
from .melds import (
    Meld,
    Refused,
    barred,
    can_use,
    check_claim,
    claim_options,
    lay_off,
    layoff_options,
    make_meld,
    meld_options,
    swap_joker,
)
from .rules import RummyRules

WENT_OUT = "went_out"
STOCK_OUT = "stock_out"


class Deal(msgspec.Struct, frozen=True, kw_only=True):
    """A deal in progress or ended. ``hands`` per seat (dealt cards first, then as taken);
    ``stock`` top card first; ``row`` oldest (nearest the stock) first; ``melds`` in the order
    laid (numbered from 1 in actions); ``seat`` to move; ``pending`` the card the next action
    must use (after a take or a swap, M27), else ``""``; ``melded`` per seat whether it made a
    ``meld`` action in this deal (M22, M36); ``drawn`` the card the seat to move drew (M11);
    ``turns`` the turns begun; ``end`` ``""``, ``went_out`` or ``stock_out``; ``out`` the seat
    that went out or -1."""

    rules: RummyRules
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    row: tuple[str, ...] = ()
    melds: tuple[Meld, ...] = ()
    seat: int
    pending: str = ""
    melded: tuple[bool, ...]
    drawn: str = ""
    turns: int = 0
    end: str = ""
    out: int = -1

    @property
    def n(self) -> int:
        return len(self.hands)

    @property
    def ended(self) -> bool:
        return bool(self.end)

    @property
    def to_move(self) -> int | None:
        return None if self.end else self.seat

    def hand_sizes(self) -> list[int]:
        return [len(h) for h in self.hands]


def turn_order(dealer: int, n: int) -> list[int]:
    """The seats from the dealer's left to the dealer (M9, M10)."""
    return [(dealer + k) % n for k in range(1, n + 1)]


def deal(rules: RummyRules, dealer: int, deck: Sequence[str]) -> Deal:
    """Deal ``deck`` (the whole pack, in the order dealt: one card at a time to each player
    from the dealer's left until each holds his share, then the stock, top card first) and
    begin the first turn with its compulsory draw (M9-M11). Raises ``ValueError``."""
    n = rules.players
    if not 0 <= dealer < n:
        raise ValueError(f"the dealer must be a seat of 0..{n - 1}, not {dealer}")
    pack = rules.pack
    if len(deck) != len(pack) or sorted(deck) != sorted(pack):
        raise ValueError(f"the deck must hold each of the {len(pack)} cards of this pack once")
    k = rules.hand_size
    order = turn_order(dealer, n)
    hands: list[list[str]] = [[] for _ in range(n)]
    for i in range(k * n):
        hands[order[i % n]].append(deck[i])
    state = Deal(
        rules=rules,
        dealer=dealer,
        hands=tuple(tuple(h) for h in hands),
        stock=tuple(deck[k * n :]),
        seat=order[0],
        melded=(False,) * n,
    )
    return _begin_turn(state, order[0])


def _begin_turn(state: Deal, seat: int) -> Deal:
    """M11, M16: the turn of ``seat`` begins with the stock's top card, or the deal ends."""
    if not state.stock:
        return msgspec.structs.replace(state, seat=seat, pending="", drawn="", end=STOCK_OUT)
    card = state.stock[0]
    hands = _with(state.hands, seat, (*state.hands[seat], card))
    return msgspec.structs.replace(
        state, hands=hands, stock=state.stock[1:], seat=seat, pending="", drawn=card, turns=state.turns + 1
    )


def _with(hands: tuple[tuple[str, ...], ...], seat: int, hand: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return (*hands[:seat], hand, *hands[seat + 1 :])


def _without(hand: tuple[str, ...], cards: Sequence[str]) -> tuple[str, ...]:
    gone = set(cards)
    return tuple(c for c in hand if c not in gone)


# --- legal actions -----------------------------------------------------------------------


def legal(state: Deal) -> list[AnyAction]:
    """Every action the seat to move may take now (empty once the deal has ended); complete up
    to M47's equivalences, which ``apply`` accepts all the same."""
    if state.end:
        return []
    rules, seat = state.rules, state.seat
    hand = state.hands[seat]
    must = state.pending
    out: list[AnyAction] = [Lay(cards=t) for t in meld_options(hand, rules, must)]
    out.extend(LayOff(meld=m, card=c) for m, c in layoff_options(hand, state.melds, rules, must))
    if must:
        return out
    may_row = not (rules.variant == "d" and not state.melded[seat])  # M22
    if may_row:
        row = state.row
        for i in range(len(row)):
            if can_use(row[i], (*hand, *row[i:]), state.melds, rules):
                out.append(Take(n=i + 1))
        if rules.jokers:
            out.extend(_swaps(state))
    claims: list[AnyAction] = []
    if rules.no_feeding and may_row:
        claims = [Claim(cards=t) for t in claim_options(hand, state.row, rules)]
    out.extend(claims)
    out.extend(Discard(card=c) for c in _discards(state, bool(claims)))
    return out


def _swaps(state: Deal) -> list[AnyAction]:
    rules, seat = state.rules, state.seat
    hand = state.hands[seat]
    naturals = sorted({c for c in hand if not is_joker(c)})
    seen: set[tuple[int, str]] = set()
    out: list[AnyAction] = []
    for number, meld in enumerate(state.melds, 1):
        if not meld.jokers:
            continue
        for c in naturals:
            if (number, c[:2]) in seen:  # M47: one copy
                continue
            try:
                new, joker = swap_joker(meld, c, rules, seat)
            except Refused:
                continue
            melds = (*state.melds[: number - 1], new, *state.melds[number:])
            if can_use(joker, (*_without(hand, [c]), joker), melds, rules):
                seen.add((number, c[:2]))
                out.append(Swap(meld=number, card=c))
    return out


def _discards(state: Deal, can_claim: bool) -> list[str]:
    """M21, M23, M48, M49: the cards the seat may discard. In c and d a barred card only when
    every card is barred and no claim is possible (in d also when M22 bars claiming)."""
    hand = state.hands[state.seat]
    if not state.rules.no_feeding:
        return list(hand)
    free = [c for c in hand if not barred(c, state.row, state.rules)]
    if free:
        return free
    return [] if can_claim else list(hand)


# --- applying an action ------------------------------------------------------------------


def apply(state: Deal, action: Action) -> Deal:
    """The state after the seat to move does ``action``; raises ``IllegalAction`` (a
    ``ValueError``) with the reason if the rules do not allow it. ``state`` is unchanged."""
    try:
        return _apply(state, action)
    except Refused as exc:
        raise IllegalAction(action, exc.reason) from None


def why_not(state: Deal, action: Action) -> str:
    """Why ``action`` is not allowed now, or ``""`` if it is."""
    try:
        _apply(state, action)
    except (Refused, IllegalAction) as exc:
        return exc.reason
    return ""


def _apply(state: Deal, action: Action) -> Deal:
    if state.end:
        raise Refused("the deal is over")
    if isinstance(action, Lay):
        return _lay(state, action)
    if isinstance(action, LayOff):
        return _layoff(state, action)
    if state.pending:
        raise Refused(f"use {state.pending} first, in a new meld or a lay-off (M14, M18, M27)")
    if isinstance(action, Take):
        return _take(state, action)
    if isinstance(action, Swap):
        return _swap(state, action)
    if isinstance(action, Claim):
        return _claim(state, action)
    if isinstance(action, Discard):
        return _discard(state, action)
    raise Refused(f"not an action of the rummy: {action!r}")


def _tokens(cards: Sequence[str]) -> list[tuple[str, str]]:
    try:
        return [parse_token(t) for t in cards]
    except ValueError as exc:
        raise Refused(str(exc)) from None


def _check_cards(state: Deal, cards: Sequence[str]) -> None:
    pack = state.rules.pack
    for c in cards:
        if c not in pack:
            raise Refused(f"there is no {c} in this pack")


def _hold(state: Deal, cards: Sequence[str]) -> None:
    _check_cards(state, cards)
    hand = state.hands[state.seat]
    for c in cards:
        if c not in hand:
            raise Refused(f"you do not hold {c}")


def _m22(state: Deal, what: str) -> None:
    if state.rules.variant == "d" and not state.melded[state.seat]:
        raise Refused(f"in d you may {what} only after laying a meld of your own in this deal (M22, M36)")


def _after_play(state: Deal, hands: tuple[tuple[str, ...], ...], **changes: object) -> Deal:
    """A meld, lay-off or claim is done: the deal ends if the hand is empty (M15)."""
    new = msgspec.structs.replace(state, hands=hands, pending="", **changes)
    if not hands[state.seat]:
        return msgspec.structs.replace(new, end=WENT_OUT, out=state.seat)
    return new


def _lay(state: Deal, action: Lay) -> Deal:
    tokens = _tokens(action.cards)
    cards = [c for c, _ in tokens]
    _hold(state, cards)
    if state.pending and state.pending not in cards:
        raise Refused(f"the meld must use {state.pending} (M14, M18, M27)")
    meld = make_meld(tokens, state.rules, state.seat)
    seat = state.seat
    hands = _with(state.hands, seat, _without(state.hands[seat], cards))
    melded = _with_flag(state.melded, seat)
    return _after_play(state, hands, melds=(*state.melds, meld), melded=melded)


def _with_flag(flags: tuple[bool, ...], seat: int) -> tuple[bool, ...]:
    return (*flags[:seat], True, *flags[seat + 1 :])


def _meld_at(state: Deal, number: int) -> Meld:
    if not 1 <= number <= len(state.melds):
        raise Refused(f"there is no meld {number} (melds on the table: {len(state.melds)})")
    return state.melds[number - 1]


def _replace_meld(state: Deal, number: int, meld: Meld) -> tuple[Meld, ...]:
    return (*state.melds[: number - 1], meld, *state.melds[number:])


def _layoff(state: Deal, action: LayOff) -> Deal:
    card, stands = _tokens([action.card])[0]
    _hold(state, [card])
    if state.pending and card != state.pending:
        raise Refused(f"lay off {state.pending} first (M14, M18, M27)")
    meld = lay_off(_meld_at(state, action.meld), card, stands, state.rules, state.seat)
    seat = state.seat
    hands = _with(state.hands, seat, _without(state.hands[seat], [card]))
    return _after_play(state, hands, melds=_replace_meld(state, action.meld, meld))


def _take(state: Deal, action: Take) -> Deal:
    _m22(state, "take from the row")
    row = state.row
    if not 1 <= action.n <= len(row):
        raise Refused(f"the row has {len(row)} card{'s' if len(row) != 1 else ''}, no card {action.n}")
    i = action.n - 1
    named = row[i]
    hand = (*state.hands[state.seat], *row[i:])
    if not can_use(named, hand, state.melds, state.rules):
        raise Refused(f"{named} cannot be used at once in a new meld or a lay-off (M14)")
    return msgspec.structs.replace(state, hands=_with(state.hands, state.seat, hand), row=row[:i], pending=named)


def _swap(state: Deal, action: Swap) -> Deal:
    if not state.rules.jokers:
        raise Refused("there are no jokers in variant a")
    _m22(state, "swap a joker")
    _hold(state, [action.card])
    meld, joker = swap_joker(_meld_at(state, action.meld), action.card, state.rules, state.seat)
    melds = _replace_meld(state, action.meld, meld)
    hand = (*_without(state.hands[state.seat], [action.card]), joker)
    if not can_use(joker, hand, melds, state.rules):
        raise Refused(f"{joker} could not be used at once in a new meld or a lay-off (M18, M28)")
    return msgspec.structs.replace(state, hands=_with(state.hands, state.seat, hand), melds=melds, pending=joker)


def _claim(state: Deal, action: Claim) -> Deal:
    rules = state.rules
    if not rules.no_feeding:
        raise Refused(f"claims are played in variants c and d only, not {rules.variant}")
    _m22(state, "claim")
    tokens = _tokens(action.cards)
    cards = [c for c, _ in tokens]
    _check_cards(state, cards)
    hand, row = state.hands[state.seat], state.row
    mine = [c for c in cards if c in hand]
    if len(mine) != 1:
        raise Refused(f"a claim uses exactly one card from your hand, not {len(mine)} (M21)")
    for c in cards:
        if c not in hand and c not in row:
            raise Refused(f"{c} is neither in your hand nor in the row")
    meld = make_meld(tokens, rules, state.seat)
    row_after = _without(row, cards)
    check_claim(meld, row_after, rules)
    hands = _with(state.hands, state.seat, _without(hand, mine))
    return _after_play(state, hands, melds=(*state.melds, meld), row=row_after)


def _discard(state: Deal, action: Discard) -> Deal:
    card = action.card
    _hold(state, [card])
    rules, seat = state.rules, state.seat
    hand = state.hands[seat]
    if rules.no_feeding and barred(card, state.row, rules):
        if any(not barred(c, state.row, rules) for c in hand):
            raise Refused(f"{card} would make a meld with cards of the row: claim it or discard another card (M21)")
        if not (rules.variant == "d" and not state.melded[seat]):
            claim = next(claim_options(hand, state.row, rules), None)
            if claim is not None:
                raise Refused(f"every card you hold is barred: claim first, e.g. claim {' '.join(claim)} (M23, M49)")
    rest = _without(hand, [card])
    new = msgspec.structs.replace(state, hands=_with(state.hands, seat, rest), row=(*state.row, card), pending="")
    if not rest:
        return msgspec.structs.replace(new, end=WENT_OUT, out=seat)  # M15, M40
    return _begin_turn(new, (seat + 1) % state.n)


def cards_in_play(state: Deal) -> list[str]:
    """Every card of the deal wherever it lies (hands, stock, row, melds): the pack, once."""
    out = [c for h in state.hands for c in h]
    out.extend(state.stock)
    out.extend(state.row)
    out.extend(p.card for m in state.melds for p in m.cards)
    return out
