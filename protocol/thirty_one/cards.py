"""The 52 cards of Thirty-one and the value of a hand (rules T1, T2, T9, T10).

A card is its code, suit letter + rank letter (``HA``, ``S7``, ``DT``), as in records and on the
wire: Thirty-one's hands are three cards, so codes are cheap enough and keep every layer
readable. Hand values are counted in HALF points (``hand_value``) because the option
``three_of_a_kind = "30.5"`` makes a value of 30 1/2: every other value is twice its points, so
31 is 62 and comparisons stay exact integers.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from .rules import ThirtyOneRules

SUITS: Final = "CSHD"
RANKS: Final = "23456789TJQKA"

CardCode = Literal[
    "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "CT", "CJ", "CQ", "CK", "CA",
    "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "ST", "SJ", "SQ", "SK", "SA",
    "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "HT", "HJ", "HQ", "HK", "HA",
    "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9", "DT", "DJ", "DQ", "DK", "DA",
]  # fmt: skip
"""A card in the wire notation; as a type it makes msgspec reject anything else on decode."""

CardOrHidden = Literal[
    "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "CT", "CJ", "CQ", "CK", "CA",
    "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "ST", "SJ", "SQ", "SK", "SA",
    "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "HT", "HJ", "HQ", "HK", "HA",
    "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9", "DT", "DJ", "DQ", "DK", "DA",
    "",
]  # fmt: skip
"""A card, or ``""`` where a view hides it (``views.redact``). Only the event fields that a
view may redact use it; the fold refuses a hidden card in a log."""

HIDDEN: Final = ""

PACK: Final[tuple[CardCode, ...]] = tuple(s + r for s in SUITS for r in RANKS)  # type: ignore[misc]
"""The unshuffled pack, ``C2`` first and ``DA`` last: what seeded deals shuffle."""

INDEX: Final[dict[str, int]] = {code: i for i, code in enumerate(PACK)}
PACK_SET: Final[frozenset[str]] = frozenset(PACK)

_RANK_VALUES: Final = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11)
VALUES: Final[dict[str, int]] = {code: _RANK_VALUES[RANKS.index(code[1])] for code in PACK}
RANK_INDEX: Final[dict[str, int]] = {code: RANKS.index(code[1]) for code in PACK}

THIRTY_ONE: Final = 62
"""31 points in half points: the best hand, which ends the deal at once (T16)."""

_ACE_KING_QUEEN: Final = frozenset({10, 11, 12})


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in PACK_SET


def card(code: str) -> CardCode:
    """The card ``code`` names (any case); raises ``ValueError`` naming the bad input."""
    up = code.upper() if isinstance(code, str) else ""
    if up not in PACK_SET:
        raise ValueError(f"not a card: {code!r} (expected suit C/S/H/D + rank 2-9/T/J/Q/K/A)")
    return up  # type: ignore[return-value]


def value(code: str) -> int:
    """A card's value (T2): ace 11; king, queen, jack and ten 10; 2 to 9 their pips."""
    return VALUES[code]


def points(half: int) -> float:
    """Half points as points: 61 is 30.5."""
    return half / 2


def hand_value(cards: Sequence[str], rules: ThirtyOneRules | None = None) -> int:
    """The value of ``cards`` in half points (T9, T10): the best total of one suit, or an
    option's value where it is higher. A hand is three cards; a longer one (mid-turn, four
    cards) is worth its best three, a shorter one its best suit."""
    if len(cards) == 3:
        return _three(cards[0], cards[1], cards[2], rules)
    if len(cards) > 3:
        return max(_three(a, b, c, rules) for a, b, c in combinations(cards, 3))
    totals = dict.fromkeys(SUITS, 0)
    for code in cards:
        totals[code[0]] += VALUES[code]
    return 2 * max(totals.values(), default=0)


def _three(a: str, b: str, c: str, rules: ThirtyOneRules | None) -> int:
    va, vb, vc = VALUES[a], VALUES[b], VALUES[c]
    sa, sb, sc = a[0], b[0], c[0]
    if sa == sb:
        if sb == sc:
            best = 2 * (va + vb + vc)
            if rules is not None and rules.straight_flush and best < THIRTY_ONE:
                ranks = sorted((RANK_INDEX[a], RANK_INDEX[b], RANK_INDEX[c]))
                if ranks[1] == ranks[0] + 1 and ranks[2] == ranks[1] + 1:
                    best = THIRTY_ONE if set(ranks) == _ACE_KING_QUEEN else 60
            return best
        best = 2 * max(va + vb, vc)
    elif sa == sc:
        best = 2 * max(va + vc, vb)
    elif sb == sc:
        best = 2 * max(vb + vc, va)
    else:
        best = 2 * max(va, vb, vc)
        if rules is not None and rules.three_of_a_kind != "off" and a[1] == b[1] == c[1]:
            best = 61 if rules.three_of_a_kind == "30.5" else 60
    return best
