"""The fixed-size observation of one Thirty-one seat: what it may know, as a ``float32`` vector.

Seats are seen from the observer: slot 0 is "me", slot k the seat k places to my left (table
seat ``(me + k) % n``, the order turns go in), so one network serves every seat and table
size. Slots from ``n`` on are empty (``present`` 0). Card planes are 52 entries, one per card
in ``protocol.thirty_one.cards.PACK`` order (C2 C3 ... CA S2 ... SA H2 ... HA D2 ... DA).
The layout (``SEGMENTS``; ``OFFSETS[name]`` is the slice of a segment; ``OBS_SIZE`` = 836):

================  ======  ======================================================================
segment             size  content (0/1 unless said otherwise)
================  ======  ======================================================================
hand                  52  my cards now (4 mid-turn); none before I look, under ``throw_down``
pile                  52  the discard pile (T8: every discard is public)
pile_top              52  its top card, the one that may be taken
taken                 52  the card taken from the pile in this turn (not to be discarded, T14)
seen                  52  every card I have seen in this deal: the pile's first card, every
                          discard, my hand, hands shown at the deal's end
restocked             52  cards the last restock of this deal put in the stock that I have not
                          seen taken (another seat's stock draw is not seen)
held                8x52  slots 1-8: cards that seat took from the pile and has not discarded
                          since, and at a deal's end its shown hand
present                9  per slot: the seat exists at this table
active                 9  per slot: not eliminated (T4)
to_move                9  per slot: whose turn it is (all 0 between deals and at the end)
dealer                 9  per slot: the dealer of the deal
knocker                9  per slot: who knocked, or threw down (T31)
last_turn              9  per slot: after a knock, still owed a last turn (T21)
looked                 9  per slot: has looked at (or taken a card into) its hand, ``throw_down``
played                 9  per slot: has had a turn in this deal
phase                  4  take, discard, between_deals, closed
players                8  the table size, one-hot over 2..9
three_of_a_kind        3  option: off, 30, 30.5
stock_out              2  option: reshuffle, void
options                4  options: county, straight_flush, knock_in_first_round, throw_down
coins                  9  per slot: coins / the option ``coins`` (the winner's may exceed 1 once
                          the kitty is his: at most 9)
kitty                  1  kitty / all coins at the table
hand_value             1  my hand's value / 31 (its best three cards mid-turn; 0 unseen)
stock                  1  cards in the stock / 52
min_knock              1  option ``min_knock`` / 31
turns                  1  turns of this deal / ``max_turns``, at most 1
deal                   1  the deal's number / ``max_deals``
================  ======  ======================================================================

Only what the seat may know goes in: its own hand (once it may see it), the public record of
the deal (the pile, who took which card from it, knocks, looks, turns), the number of cards
in the stock, coins, kitty and eliminations. Another seat's hand and the stock's cards and
order never appear. ``encode_view(view)`` builds the same vector from a seat's
``ThirtyOneView`` alone (its redacted history); tests/skatbus/rl checks that the fast
``encode`` equals it for every seat at every step of random games, which is what proves the
vector holds nothing the view does not show, and cross-checks the card planes against
``protocol.thirty_one.knowledge.Knowledge``.

``DealKnowledge`` follows a deal's events (the table's, or a view's redacted ones) and keeps
what they make public: it is the part of the observation a state does not hold directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import numpy as np

from protocol.events import Event, UnknownEvent
from protocol.thirty_one.cards import HIDDEN, INDEX, PACK
from protocol.thirty_one.events import (
    T31DealEnded,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Took,
)
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.thirty_one.state import ThirtyOneState
from protocol.thirty_one.views import ThirtyOneView

SLOTS: Final = 9
"""Seat slots: the largest table (T1: 2 to 9 players)."""

SEGMENTS: Final[tuple[tuple[str, int], ...]] = (
    ("hand", 52),
    ("pile", 52),
    ("pile_top", 52),
    ("taken", 52),
    ("seen", 52),
    ("restocked", 52),
    ("held", (SLOTS - 1) * 52),
    ("present", SLOTS),
    ("active", SLOTS),
    ("to_move", SLOTS),
    ("dealer", SLOTS),
    ("knocker", SLOTS),
    ("last_turn", SLOTS),
    ("looked", SLOTS),
    ("played", SLOTS),
    ("phase", 4),
    ("players", 8),
    ("three_of_a_kind", 3),
    ("stock_out", 2),
    ("options", 4),
    # scalars from here on
    ("coins", SLOTS),
    ("kitty", 1),
    ("hand_value", 1),
    ("stock", 1),
    ("min_knock", 1),
    ("turns", 1),
    ("deal", 1),
)
"""(name, size) of every segment, in order."""

CARD_PLANES: Final = ("hand", "pile", "pile_top", "taken", "seen", "restocked")
"""The segments that are one set of cards (``held`` is 8 of them, one per other slot)."""
SLOT_FLAGS: Final = ("present", "active", "to_move", "dealer", "knocker", "last_turn", "looked", "played")
PHASES: Final = ("take", "discard", "between_deals", "closed")
THREE_OF_A_KIND: Final = ("off", "30", "30.5")
STOCK_OUT: Final = ("reshuffle", "void")
OPTION_FLAGS: Final = ("county", "straight_flush", "knock_in_first_round", "throw_down")


def _offsets() -> dict[str, slice]:
    out: dict[str, slice] = {}
    at = 0
    for name, size in SEGMENTS:
        out[name] = slice(at, at + size)
        at += size
    return out


OFFSETS: Final[dict[str, slice]] = _offsets()
OBS_SIZE: Final = OFFSETS["deal"].stop
N_BINARY: Final = OFFSETS["coins"].start
"""Entries 0..N_BINARY-1 are 0/1; the rest are scalars (see ``HIGH``)."""

HIGH: Final = np.ones(OBS_SIZE, np.float32)
"""The largest value of each entry: 1, but 9 for the coins (the winner takes the kitty)."""
HIGH[OFFSETS["coins"]] = SLOTS
HIGH.setflags(write=False)

CARD_BIT: Final[dict[str, int]] = {code: 1 << i for code, i in INDEX.items()}
_O: Final[dict[str, int]] = {name: s.start for name, s in OFFSETS.items()}
_N_BYTES: Final = (N_BINARY + 7) // 8
_PHASE_BIT: Final = {p: 1 << (_O["phase"] + i) for i, p in enumerate(PHASES)}


def card_set(cards: Iterable[str]) -> int:
    """Cards as a bit set over ``PACK`` (bit i = ``PACK[i]``); hidden cards (``""``) are skipped."""
    bits = 0
    for code in cards:
        if code:
            bits |= CARD_BIT[code]
    return bits


def cards_of(bits: int) -> list[str]:
    """A bit set over ``PACK`` as card codes, in pack order."""
    return [PACK[i] for i in range(len(PACK)) if bits >> i & 1]


class DealKnowledge:
    """What the events of the deal in progress have made public, and each seat's own stock
    draws since the last restock. Feed it every event of the table (``apply``): a table's own
    events serve every seat at once, a view's redacted history serves its seat (the draws of
    other seats are hidden there and simply not counted)."""

    __slots__ = (
        "n", "throw_down", "first", "pile", "discarded", "held", "restock", "pile_taken", "drawn",
        "shown", "looked", "played", "turns", "taken",
    )  # fmt: skip

    def __init__(self, n: int, rules: ThirtyOneRules) -> None:
        self.n = n
        self.throw_down = rules.throw_down
        self.reset()

    def reset(self) -> None:
        n = self.n
        self.first = 0
        """The pile's first card (T8)."""
        self.pile: list[str] = []
        self.discarded = 0
        self.held = [0] * n
        """Per seat: cards it took from the pile and still holds; its shown hand at the end."""
        self.restock = 0
        """The cards the last restock put in the stock."""
        self.pile_taken = 0
        """Cards taken from the pile since the last restock."""
        self.drawn = [0] * n
        """Per seat: the cards it drew from the stock since the last restock (as far as seen)."""
        self.shown = 0
        self.looked = [False] * n
        self.played = [False] * n
        self.turns = 0
        self.taken = ""

    def apply(self, event: Event | UnknownEvent) -> None:
        kind = type(event)
        if kind is T31Took:
            took: T31Took = event  # type: ignore[assignment]
            seat, card = took.seat, took.card
            if self.throw_down:
                self.looked[seat] = True
            if took.source == "discard":
                self.pile.pop()
                bit = CARD_BIT[card]
                self.held[seat] |= bit
                self.pile_taken |= bit
                self.taken = card
            else:
                if card != HIDDEN:
                    self.drawn[seat] |= CARD_BIT[card]
                self.taken = ""
        elif kind is T31Discarded:
            d: T31Discarded = event  # type: ignore[assignment]
            bit = CARD_BIT[d.card]
            self.held[d.seat] &= ~bit
            self.discarded |= bit
            self.pile.append(d.card)
            self.taken = ""
            self.played[d.seat] = True
            self.turns += 1
        elif kind is T31Knocked:
            self.played[event.seat] = True  # type: ignore[union-attr]
            self.turns += 1
        elif kind is T31Looked:
            self.looked[event.seat] = True  # type: ignore[union-attr]
        elif kind is T31Dealt:
            dealt: T31Dealt = event  # type: ignore[assignment]
            self.reset()
            top = dealt.deck[3 * len(dealt.order)]
            self.first = CARD_BIT[top]
            self.pile = [top]
        elif kind is T31Restocked:
            self.restock = card_set(self.pile[:-1])
            self.pile = self.pile[-1:]
            self.pile_taken = 0
            self.drawn = [0] * self.n
        elif kind is T31DealEnded:
            ended: T31DealEnded = event  # type: ignore[assignment]
            for s, hand in enumerate(ended.shown):
                if hand:
                    bits = card_set(hand)
                    self.held[s] = bits
                    self.shown |= bits

    def seen(self, hand: int) -> int:
        """The cards a seat has seen in this deal, given the hand it sees (0 if unseen): its own
        cards, and every card that was face up (the pile's first card, discards, shown hands).
        A card it took is in its hand or was discarded since."""
        return self.first | self.discarded | self.shown | hand

    def restocked(self, seat: int) -> int:
        """The last restock's cards that ``seat`` has not seen taken from the stock."""
        return self.restock & ~self.pile_taken & ~self.drawn[seat]


def _rules_bits(rules: ThirtyOneRules, n: int) -> int:
    """The bits of the table's size and options: the same at every step of a game."""
    bits = 1 << (_O["players"] + n - 2)
    bits |= 1 << (_O["three_of_a_kind"] + THREE_OF_A_KIND.index(rules.three_of_a_kind))
    bits |= 1 << (_O["stock_out"] + STOCK_OUT.index(rules.stock_out))
    for i, name in enumerate(OPTION_FLAGS):
        if getattr(rules, name):
            bits |= 1 << (_O["options"] + i)
    for k in range(n):
        bits |= 1 << (_O["present"] + k)
    return bits


_rules_cache: dict[tuple[ThirtyOneRules, int], int] = {}


def _encode(
    *,
    me: int,
    n: int,
    rules: ThirtyOneRules,
    know: DealKnowledge,
    hand: Sequence[str],
    value: int,
    pile: Sequence[str],
    stock: int,
    taken: str,
    phase: str,
    to_move: int | None,
    dealer: int,
    knocker: int | None,
    last_turns: Sequence[int],
    looked: Sequence[bool],
    played: Sequence[bool],
    turns: int,
    coins: Sequence[int],
    kitty: int,
    active: Iterable[int],
    deal_no: int,
) -> np.ndarray:
    """The observation from its facts: the one encoder both ``encode`` and ``encode_view`` use."""
    key = (rules, n)
    bits = _rules_cache.get(key)
    if bits is None:
        bits = _rules_cache[key] = _rules_bits(rules, n)
    mine = card_set(hand)
    bits |= mine << _O["hand"] | card_set(pile) << _O["pile"] | _PHASE_BIT[phase]
    if pile:
        bits |= CARD_BIT[pile[-1]] << _O["pile_top"]
    if taken:
        bits |= CARD_BIT[taken] << _O["taken"]
    bits |= know.seen(mine) << _O["seen"] | know.restocked(me) << _O["restocked"]
    held = _O["held"]
    for k in range(1, n):
        h = know.held[(me + k) % n]
        if h:
            bits |= h << (held + 52 * (k - 1))
    for seat in active:
        bits |= 1 << (_O["active"] + (seat - me) % n)
    if to_move is not None:
        bits |= 1 << (_O["to_move"] + (to_move - me) % n)
    if dealer >= 0:
        bits |= 1 << (_O["dealer"] + (dealer - me) % n)
    if knocker is not None:
        bits |= 1 << (_O["knocker"] + (knocker - me) % n)
    for seat in last_turns:
        bits |= 1 << (_O["last_turn"] + (seat - me) % n)
    for seat in range(n):
        if looked[seat]:
            bits |= 1 << (_O["looked"] + (seat - me) % n)
        if played[seat]:
            bits |= 1 << (_O["played"] + (seat - me) % n)
    out = np.zeros(OBS_SIZE, np.float32)
    raw = np.frombuffer(bits.to_bytes(_N_BYTES, "little"), np.uint8)
    out[:N_BINARY] = np.unpackbits(raw, count=N_BINARY, bitorder="little")
    per = rules.coins
    c = _O["coins"]
    for k in range(n):
        out[c + k] = coins[(me + k) % n] / per
    out[_O["kitty"]] = kitty / (per * n)
    out[_O["hand_value"]] = value / 62
    out[_O["stock"]] = stock / 52
    out[_O["min_knock"]] = rules.min_knock / 31
    out[_O["turns"]] = min(1.0, turns / rules.max_turns)
    out[_O["deal"]] = deal_no / rules.max_deals
    return out


def encode(state: ThirtyOneState, know: DealKnowledge, seat: int) -> np.ndarray:
    """The observation of ``seat`` from the table's state and the knowledge its events gave
    (``know`` fed every event of ``state``): a ``float32`` array laid out as ``SEGMENTS``."""
    deal = state.deal
    n = state.n
    if deal is None:
        raise ValueError("no deal has been dealt yet: nothing to observe")
    hand: Sequence[str] = ()
    value = 0
    if deal.dealt_in(seat) and deal.sees_hand(seat):
        hand = deal.hands[seat]
        value = deal.value(seat)
    knocker = deal.lives_knocker
    return _encode(
        me=seat,
        n=n,
        rules=state.rules,
        know=know,
        hand=hand,
        value=value,
        pile=deal.pile,
        stock=len(deal.stock),
        taken=deal.taken,
        phase=state.phase,
        to_move=state.to_move,
        dealer=state.dealer,
        knocker=knocker if knocker >= 0 else None,
        last_turns=deal.owed if state.in_deal and not deal.ended else (),
        looked=deal.looked,
        played=deal.played,
        turns=deal.turns,
        coins=state.coins,
        kitty=state.kitty,
        active=state.active,
        deal_no=state.deal_no,
    )


def encode_view(view: ThirtyOneView) -> np.ndarray:
    """The observation of ``view.seat`` from its view alone (what a remote player receives):
    the same vector ``encode`` gives, so a policy trained here can play over the bus."""
    n = len(view.players)
    know = DealKnowledge(n, view.rules)
    for event in view.history:
        know.apply(event)
    if view.seat < 0:
        raise ValueError("a spectator's view has no seat to observe from")
    return _encode(
        me=view.seat,
        n=n,
        rules=view.rules,
        know=know,
        hand=view.hand,
        value=round(view.hand_value * 2),
        pile=view.pile,
        stock=view.stock,
        taken=know.taken,
        phase=view.phase,
        to_move=view.to_move,
        dealer=view.dealer,
        knocker=view.knocker,
        last_turns=view.last_turns,
        looked=know.looked,
        played=know.played,
        turns=know.turns,
        coins=view.coins,
        kitty=view.kitty,
        active=view.active,
        deal_no=view.deal,
    )


def segment(obs: np.ndarray, name: str) -> np.ndarray:
    """The entries of one segment of an observation."""
    return obs[OFFSETS[name]]


def cards_in(obs: np.ndarray, name: str, slot: int = 0) -> list[str]:
    """A card plane as card codes in pack order; for ``held``, the plane of ``slot`` (1-8)."""
    if name == "held":
        if not 1 <= slot < SLOTS:
            raise ValueError("held has one plane per other slot: 1 to 8")
        start = _O["held"] + 52 * (slot - 1)
        plane = obs[start : start + 52]
    else:
        plane = obs[OFFSETS[name]]
    return [PACK[i] for i in np.flatnonzero(plane).tolist()]


def describe(obs: np.ndarray) -> dict[str, Any]:
    """An observation in words, for people and debugging: card planes as card codes, slot
    flags as the slots set, one-hots as the names they stand for, scalars as numbers."""
    out: dict[str, Any] = {name: cards_in(obs, name) for name in CARD_PLANES}
    out["held"] = {k: cards_in(obs, "held", k) for k in range(1, SLOTS) if obs[OFFSETS["present"]][k]}
    for name in SLOT_FLAGS:
        out[name] = np.flatnonzero(obs[OFFSETS[name]]).tolist()
    labels: dict[str, tuple[str, ...]] = {
        "phase": PHASES,
        "players": tuple(str(p) for p in range(2, SLOTS + 1)),
        "three_of_a_kind": THREE_OF_A_KIND,
        "stock_out": STOCK_OUT,
        "options": OPTION_FLAGS,
    }
    for name, names in labels.items():
        out[name] = [names[i] for i in np.flatnonzero(obs[OFFSETS[name]]).tolist()]
    for name in ("coins", "kitty", "hand_value", "stock", "min_knock", "turns", "deal"):
        values = obs[OFFSETS[name]].tolist()
        out[name] = values if name == "coins" else values[0]
    return out
