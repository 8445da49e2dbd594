"""Game declarations, their base values and the bid ladders of both profiles."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import msgspec


class GameKind(StrEnum):
    """The six games, by their ISS letters (the wire values). A ``GameKind`` is a ``str``, so
    ``decl.game == "G"`` and ``ORDERS[decl.game]`` work as they always did."""

    CLUBS = "C"
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    GRAND = "G"
    NULL = "N"

    def __repr__(self) -> str:
        return f"GameKind.{self.name}"


GameType = GameKind
"""The old name of ``GameKind``, kept for code written against it."""

GAME_NAMES: Final[dict[str, str]] = {
    "C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "G": "grand", "N": "null",
}  # fmt: skip

SKAT_ORDER: Final[tuple[str, ...]] = (
    "grand", "clubs", "spades", "hearts", "diamonds",
    "null", "null hand", "null ouvert", "null ouvert hand",
    "ramsch",
)  # fmt: skip
"""Game types in the order a Skat player lists them (the score sheet's, the bid values'):
grand, the suits from clubs down, the nulls from the cheapest, then Ramsch."""


def skat_order(name: str) -> tuple[int, str]:
    """Sort key of a game type's name (``GAME_NAMES``' words, a null variant, ``"ramsch"``,
    case and the words' order in a null ignored: ``"null hand ouvert"`` is ``"null ouvert
    hand"``) in ``SKAT_ORDER``; a name it does not know (``"defending"``, a passed-in deal)
    after all of them, alphabetically. Every standings and breakdown by game type sorts with
    this, so they all read alike."""
    words = name.lower().split()
    if words[:1] == ["null"]:
        words = ["null", *(w for w in ("ouvert", "hand") if w in words[1:])]
    key = " ".join(words)
    return (SKAT_ORDER.index(key), key) if key in SKAT_ORDER else (len(SKAT_ORDER), key)


SUIT_BASE: Final[dict[str, int]] = {"D": 9, "H": 10, "S": 11, "C": 12, "G": 24}
CLASSIC_GRAND_OUVERT_BASE: Final = 36

NULL_VALUES: Final[dict[tuple[bool, bool], int]] = {
    # (hand, ouvert) -> value
    (False, False): 23,
    (True, False): 35,
    (False, True): 46,
    (True, True): 59,
}


class Declaration(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, repr_omit_defaults=True):
    """What the declarer announces. ``hand`` is true when the skat was not picked up."""

    game: GameKind
    hand: bool = False
    schneider: bool = False
    """Schneider announced (hand only)."""
    schwarz: bool = False
    """Schwarz announced (hand only; implies schneider announced)."""
    ouvert: bool = False

    def __str__(self) -> str:
        words = [GAME_NAMES[self.game]]
        for word, on in (
            ("hand", self.hand),
            ("schneider", self.schneider),
            ("schwarz", self.schwarz),
            ("ouvert", self.ouvert),
        ):
            if on:
                words.append(word)
        return " ".join(words)

    @property
    def is_null(self) -> bool:
        return self.game == "N"

    @property
    def trump_kind(self) -> str:
        return self.game


def base_value(decl: Declaration, profile: str) -> int:
    """The per-multiplier base of a suit or grand game."""
    if profile == "classic" and decl.game == "G" and decl.ouvert:
        return CLASSIC_GRAND_OUVERT_BASE
    return SUIT_BASE[decl.game]


def null_value(decl: Declaration) -> int:
    return NULL_VALUES[(decl.hand, decl.ouvert)]


def declaration_error(decl: Declaration) -> str | None:
    """Why a declaration is inconsistent in itself, or None. (The bid is checked elsewhere.)"""
    if decl.game == "N":
        if decl.schneider or decl.schwarz:
            return "null cannot announce schneider or schwarz"
        return None
    if (decl.schneider or decl.schwarz) and not decl.hand:
        return "schneider and schwarz can only be announced in a hand game"
    if decl.ouvert and not decl.hand:
        return "suit and grand ouvert must be played hand"
    if decl.schwarz and not decl.schneider:
        return "schwarz announced implies schneider announced: set both"
    if decl.ouvert and not decl.schwarz:
        return "suit and grand ouvert imply schwarz announced: set schneider and schwarz"
    return None


def all_declarations(hand: bool) -> tuple[Declaration, ...]:
    """Every consistent declaration for a hand game or for one after the pickup."""
    out: list[Declaration] = []
    for g in (GameKind.CLUBS, GameKind.SPADES, GameKind.HEARTS, GameKind.DIAMONDS, GameKind.GRAND):
        out.append(Declaration(game=g, hand=hand))
        if hand:
            out.append(Declaration(game=g, hand=True, schneider=True))
            out.append(Declaration(game=g, hand=True, schneider=True, schwarz=True))
            out.append(Declaration(game=g, hand=True, schneider=True, schwarz=True, ouvert=True))
    out.append(Declaration(game=GameKind.NULL, hand=hand))
    out.append(Declaration(game=GameKind.NULL, hand=hand, ouvert=True))
    return tuple(out)


HAND_DECLARATIONS: Final = all_declarations(True)
PICKUP_DECLARATIONS: Final = all_declarations(False)


def _ladder(profile: str) -> tuple[int, ...]:
    values: set[int] = {23, 35, 46, 59}
    for base in (9, 10, 11, 12, 24):
        for k in range(2, 19):
            values.add(base * k)
    bids = {v for v in values if 18 <= v <= 264}
    if profile == "classic":
        bids |= {36 * k for k in range(1, 11)}
    return tuple(sorted(bids))


BID_LADDERS: Final[dict[str, tuple[int, ...]]] = {p: _ladder(p) for p in ("isko", "classic")}
