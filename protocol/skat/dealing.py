"""Seeded, deterministic dealing and the seats of a deal.

The seed-to-deal mapping is part of the protocol and must never change (old logs, duplicate
tournaments and published seeds rely on it), so it uses no library RNG:

1. ``n = int.from_bytes(sha256(seed.encode("utf-8")).digest(), "big") % 32!``
2. ``n`` is read as a Lehmer code: for ``i`` from 0 to 31, ``n, k = divmod(n, 32 - i)`` and the
   ``k``-th remaining card of the unshuffled deck (C7 C8 ... CA S7 ... DA) is dealt next.
3. The resulting deck is dealt 3-2-4-3: three cards each to forehand, middlehand, rearhand,
   two to the skat, four each, three each.

The 2^256 hash values fall on 32! (about 2^118) deals with a bias below 2^-138.
"""

from __future__ import annotations

import hashlib
import math
from typing import Final

_DECK_SIZE: Final = 32
_PERMUTATIONS: Final = math.factorial(_DECK_SIZE)

# Deck positions (in dealing order) -> receiver: 0 forehand, 1 middlehand, 2 rearhand, 3 skat.
_PATTERN: Final[tuple[int, ...]] = (
    (0,) * 3 + (1,) * 3 + (2,) * 3 + (3,) * 2 + (0,) * 4 + (1,) * 4 + (2,) * 4 + (0,) * 3 + (1,) * 3 + (2,) * 3
)


def _lehmer_number(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest(), "big") % _PERMUTATIONS


def shuffled_deck(seed: str) -> list[int]:
    """The deck order for ``seed``: a permutation of the 32 cards (see module docstring)."""
    n = _lehmer_number(seed)
    remaining = list(range(_DECK_SIZE))
    deck = []
    for i in range(_DECK_SIZE):
        n, k = divmod(n, _DECK_SIZE - i)
        deck.append(remaining.pop(k))
    return deck


def deal_deck(deck: list[int]) -> tuple[tuple[int, int, int], int]:
    """Deal a deck 3-2-4-3: the three hands (forehand first) and the skat, as card sets."""
    piles = [0, 0, 0, 0]
    for receiver, c in zip(_PATTERN, deck):
        piles[receiver] |= 1 << c
    return (piles[0], piles[1], piles[2]), piles[3]


def deal_from_seed(seed: str) -> tuple[tuple[int, int, int], int]:
    """Hands (forehand, middlehand, rearhand) and skat for ``seed``: ``deal_deck(shuffled_deck(seed))``
    fused into one loop, because every deal and every replayed deal-dealt event comes through here."""
    n = _lehmer_number(seed)
    remaining = list(range(_DECK_SIZE))
    piles = [0, 0, 0, 0]
    pattern = _PATTERN
    for i in range(_DECK_SIZE):
        n, k = divmod(n, _DECK_SIZE - i)
        piles[pattern[i]] |= 1 << remaining.pop(k)
    return (piles[0], piles[1], piles[2]), piles[3]


def deal_seed(table_seed: str, deal_number: int) -> str:
    """The seed of deal ``deal_number`` (1-based) at a table: stable, and shared by duplicate
    tables that use the same table seed."""
    return f"{table_seed}/{deal_number}"


def dealer_seat(deal_number: int, n_players: int) -> int:
    """The dealer of deal ``deal_number`` (1-based): the last seat deals first, so seat 0 is
    forehand in deal 1; the deal then moves one seat clockwise."""
    return (n_players - 1 + deal_number - 1) % n_players


def deal_seats(deal_number: int, n_players: int) -> tuple[int, int, int]:
    """Table seats of forehand, middlehand and rearhand. At a 4-player table the dealer sits out;
    at a 3-player table the dealer is rearhand."""
    dealer = dealer_seat(deal_number, n_players)
    return tuple((dealer + i) % n_players for i in (1, 2, 3))  # type: ignore[return-value]
