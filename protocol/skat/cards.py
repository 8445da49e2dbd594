"""The 32 cards of Skat, card sets as bitmasks, and the card orders of every game kind.

A card is an ``int`` from 0 to 31: ``suit * 8 + rank`` with suits clubs, spades, hearts,
diamonds (0..3, the order of their game values) and ranks 7 8 9 T J Q K A (0..7). A set of
cards is an ``int`` bitmask with bit ``card`` set. Ints are what make the engine fast: legal
moves are one ``&``, a trick winner is three table lookups. The ``CJ HT D7`` notation (the
one ISS records use) exists only at the edges: parsing, formatting and the wire format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, Literal

SUITS: Final = "CSHD"
RANKS: Final = "789TJQKA"
SUIT_SYMBOLS: Final = "♣♠♥♦"

CLUBS, SPADES, HEARTS, DIAMONDS = 0, 1, 2, 3
SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = range(8)

CardCode = Literal[
    "C7", "C8", "C9", "CT", "CJ", "CQ", "CK", "CA",
    "S7", "S8", "S9", "ST", "SJ", "SQ", "SK", "SA",
    "H7", "H8", "H9", "HT", "HJ", "HQ", "HK", "HA",
    "D7", "D8", "D9", "DT", "DJ", "DQ", "DK", "DA",
]  # fmt: skip
"""A card in the wire notation; as a type it makes msgspec reject anything else on decode."""

CODES: Final[tuple[str, ...]] = tuple(s + r for s in SUITS for r in RANKS)
INDEX: Final[dict[str, int]] = {code: i for i, code in enumerate(CODES)}
ALL: Final = (1 << 32) - 1

_RANK_POINTS = (0, 0, 0, 10, 2, 3, 4, 11)
POINTS: Final[tuple[int, ...]] = tuple(_RANK_POINTS[c & 7] for c in range(32))


def card(code: str) -> int:
    """Parse one card such as ``"CJ"``; raises ``ValueError`` naming the bad input."""
    try:
        return INDEX[code.upper()]
    except (KeyError, AttributeError):
        raise ValueError(f"not a card: {code!r} (expected suit C/S/H/D + rank 7/8/9/T/J/Q/K/A)") from None


def suit_of(c: int) -> int:
    return c >> 3


def rank_of(c: int) -> int:
    return c & 7


def bit(c: int) -> int:
    return 1 << c


JACKS: Final = sum(1 << (s * 8 + JACK) for s in range(4))
SUIT_MASKS: Final[tuple[int, ...]] = tuple(0xFF << (8 * s) for s in range(4))


def mask(cards: Iterable[int]) -> int:
    """The set holding ``cards``."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def parse(text: str | Iterable[str]) -> int:
    """A card set from ``"CJ HT D7"``, ``"CJ.HT.D7"`` or an iterable of codes."""
    if isinstance(text, str):
        text = text.replace(".", " ").replace(",", " ").split()
    m = 0
    for code in text:
        b = 1 << card(code)
        if m & b:
            raise ValueError(f"card listed twice: {code}")
        m |= b
    return m


def cards_of(m: int) -> list[int]:
    """The cards of a set in ascending index order (clubs 7 first)."""
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def iter_cards(m: int) -> Iterator[int]:
    while m:
        low = m & -m
        yield low.bit_length() - 1
        m ^= low


def count(m: int) -> int:
    return m.bit_count()


def nth(m: int, k: int) -> int:
    """The ``k``-th card (0-based, ascending) of set ``m``: how a random choice picks a card."""
    for _ in range(k):
        m &= m - 1
    return (m & -m).bit_length() - 1


def points(m: int) -> int:
    """Card points of a set (A 11, T 10, K 4, Q 3, J 2)."""
    total = 0
    while m:
        low = m & -m
        total += POINTS[low.bit_length() - 1]
        m ^= low
    return total


def codes(m: int) -> list[str]:
    return [CODES[c] for c in cards_of(m)]


def fmt(m: int | Iterable[int], sep: str = " ") -> str:
    """Format a set (or a sequence, in its order) as ``"CJ HT D7"``."""
    seq = cards_of(m) if isinstance(m, int) else list(m)
    return sep.join(CODES[c] for c in seq)


# --- card orders -------------------------------------------------------------------------
#
# Every game kind has "follow classes": the four suits, plus class 4 = trump. A card's class
# decides what it must follow; its strength decides who wins. A card of neither the led class
# nor trump never wins, so strength only needs to order cards within a class; trumps get
# strengths above every non-trump.

TRUMP: Final = 4

GameKind = Literal["C", "S", "H", "D", "G", "N", "R"]
"""C/S/H/D suit games, G grand, N null, R ramsch (grand order, everyone alone)."""

_PLAIN_ORDER = (SEVEN, EIGHT, NINE, QUEEN, KING, TEN, ACE)  # ascending, jacks removed
_NULL_ORDER = (SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE)
_JACKS_ASC = (DIAMONDS, HEARTS, SPADES, CLUBS)


class CardOrder:
    """Follow classes, strengths and class masks of one game kind."""

    __slots__ = ("kind", "klass", "strength", "class_masks", "trumps", "trump_sequence")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        klass = [0] * 32
        strength = [0] * 32
        trump_suit = SUITS.index(kind) if kind in "CSHD" else None
        for c in range(32):
            s, r = c >> 3, c & 7
            if kind == "N":
                klass[c] = s
                strength[c] = _NULL_ORDER.index(r)
            elif r == JACK:
                klass[c] = TRUMP
                strength[c] = 20 + _JACKS_ASC.index(s)
            elif s == trump_suit:
                klass[c] = TRUMP
                strength[c] = 10 + _PLAIN_ORDER.index(r)
            else:
                klass[c] = s
                strength[c] = _PLAIN_ORDER.index(r)
        self.klass: tuple[int, ...] = tuple(klass)
        self.strength: tuple[int, ...] = tuple(strength)
        self.class_masks: tuple[int, ...] = tuple(mask(c for c in range(32) if klass[c] == k) for k in range(5))
        self.trumps: int = self.class_masks[TRUMP]
        # Trumps from the highest down: what matadors are counted along.
        self.trump_sequence: tuple[int, ...] = tuple(sorted(cards_of(self.trumps), key=lambda c: -strength[c]))

    def trick_winner(self, cards: tuple[int, int, int] | list[int]) -> int:
        """Index (0..2) within the trick of the card that wins it."""
        klass, strength = self.klass, self.strength
        best = 0
        best_card = cards[0]
        for i in (1, 2):
            c = cards[i]
            kc, kb = klass[c], klass[best_card]
            if kc == kb:
                if strength[c] > strength[best_card]:
                    best, best_card = i, c
            elif kc == TRUMP:
                best, best_card = i, c
        return best

    def legal(self, hand: int, led: int | None) -> int:
        """The cards of ``hand`` that may be played onto a trick led by ``led``."""
        if led is None:
            return hand
        follow = hand & self.class_masks[self.klass[led]]
        return follow or hand

    def sort_key(self, c: int) -> tuple[int, int]:
        """Display order: trumps first, then suits C S H D, each high to low."""
        k = self.klass[c]
        return (0 if k == TRUMP else 1 + k, -self.strength[c])


ORDERS: Final[dict[str, CardOrder]] = {k: CardOrder(k) for k in "CSHDGNR"}


def sorted_for(m: int, kind: str = "G") -> list[int]:
    """A hand in the order a player would hold it for game ``kind``."""
    order = ORDERS[kind]
    return sorted(cards_of(m), key=order.sort_key)
