"""The cards of the Russian rummy "Скат": packs, points and the rank cycle (rules M1-M3, M44).

A card is its record code (RECORDS.md): suit letter + rank letter (``HA``, ``S7``), the second
copy of a card in the 108-card pack with a trailing apostrophe (``HA'``), jokers ``X1`` to
``X4``. Codes, not objects, because hands, rows and records all speak them and a rummy hand is
small enough. A joker on the table also carries what it stands for: a card (``HQ``, never a
copy: M30) or, in a b set, a rank only (``Q``); a *token* is the written form, ``X1=HQ``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

SUITS: Final = "CSHD"
ALL_RANKS: Final = "23456789TJQKA"
SHORT_RANKS: Final = "6789TJQKA"
"""The 36-card pack of variant a: 6 to A."""
JOKERS: Final = ("X1", "X2", "X3", "X4")
COPY: Final = "'"

RANK_POINTS: Final[dict[str, int]] = {
    "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10, "J": 10, "Q": 10, "K": 10, "A": 11,
}  # fmt: skip
"""M2: ace 11 (wherever it lies in a run), K Q J T 10, the others their pips."""


def is_joker(card: str) -> bool:
    return card[:1] == "X"


def base(card: str) -> str:
    """The card without its copy mark: ``HA'`` -> ``HA`` (M30: a joker names a base card)."""
    return card[:2]


def ranks_of(variant: str) -> str:
    """The ranks of a variant's pack, low to high (M1)."""
    return SHORT_RANKS if variant == "a" else ALL_RANKS


@lru_cache(maxsize=16)
def pack(variant: str, packs: int = 1) -> tuple[str, ...]:
    """The unshuffled pack (M1): by suit C S H D, low to high, second copies after the first
    pack, jokers last. a: 36 cards; b, c, d: 54; b with ``packs=2``: 108."""
    ranks = ranks_of(variant)
    one = tuple(s + r for s in SUITS for r in ranks)
    if variant == "a":
        return one
    if packs == 2:
        return one + tuple(c + COPY for c in one) + JOKERS
    return one + JOKERS[:2]


def points(card: str, stands: str = "") -> int:
    """A card's points (M2); a joker on the table counts the rank it stands for (M24)."""
    if is_joker(card):
        return RANK_POINTS[stands[-1]] if stands else 0
    return RANK_POINTS[card[1]]


def parse_card(text: str) -> str:
    """A physical card from its code (any case): ``HA``, ``ha'``, ``X1``. Raises ``ValueError``."""
    up = text.strip().upper()
    if up in JOKERS:
        return up
    if (len(up) == 2 or (len(up) == 3 and up[2] == COPY)) and up[0] in SUITS and up[1] in ALL_RANKS:
        return up
    raise ValueError(f"not a card: {text!r} (suit C/S/H/D + rank 2-9/T/J/Q/K/A, ' for a second copy, or X1-X4)")


def parse_token(text: str) -> tuple[str, str]:
    """(card, stands) from a token: ``HQ'`` -> (``HQ'``, ``""``); ``X1=HQ'`` -> (``X1``, ``HQ``)
    (M30: a joker stands for a card, not a copy); ``X1=Q`` -> (``X1``, ``Q``). A joker without
    ``=`` gives stands ``""`` (the engine refuses it on the table). Raises ``ValueError``."""
    card, eq, stands = text.strip().partition("=")
    code = parse_card(card)
    if not eq:
        return code, ""
    if not is_joker(code):
        raise ValueError(f"only a joker stands for another card: {text!r}")
    s = stands.strip().upper()
    if len(s) == 1 and s in ALL_RANKS:
        return code, s
    if s[:1] == "X":
        raise ValueError(f"a joker stands for a natural card or a rank, not a joker: {text!r}")
    return code, base(parse_card(s))


def token(card: str, stands: str = "") -> str:
    """The canonical written form (RECORDS.md): ``HQ``, ``HQ'``, ``X1=HQ``, ``X1=Q``."""
    return f"{card}={stands}" if stands else card


class Cycle:
    """The order of ranks (M3): a closed cycle, the ace followed by the lowest rank again, or,
    with ``ace_joins_low = false`` (M44, B6), a line from the lowest rank to the ace.
    Positions are indices into ``ranks``."""

    __slots__ = ("ranks", "closed", "size", "pos")

    def __init__(self, ranks: str, closed: bool) -> None:
        self.ranks = ranks
        self.closed = closed
        self.size = len(ranks)
        self.pos = {r: i for i, r in enumerate(ranks)}

    def nxt(self, i: int) -> int | None:
        if i + 1 < self.size:
            return i + 1
        return 0 if self.closed else None

    def prv(self, i: int) -> int | None:
        if i > 0:
            return i - 1
        return self.size - 1 if self.closed else None

    def starts(self, length: int, every_rotation: bool = False) -> range:
        """The low ends a run of ``length`` may have: in a line those that fit; in a cycle
        every rank, but a whole-suit run only from the lowest rank unless ``every_rotation``
        (M47: its rotations are equivalent)."""
        if length > self.size:
            return range(0)
        if not self.closed:
            return range(self.size - length + 1)
        if length == self.size and not every_rotation:
            return range(1)
        return range(self.size)

    def window(self, start: int, length: int) -> list[int]:
        return [(start + k) % self.size for k in range(length)]


@lru_cache(maxsize=8)
def cycle(variant: str, ace_joins_low: bool) -> Cycle:
    return Cycle(ranks_of(variant), ace_joins_low)
