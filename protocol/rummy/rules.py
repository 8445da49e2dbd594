"""The options of a rummy table (the rules page's table of options; M44-M46).

A ``RummyRules`` value is what a table is played under; every option has the rules page's
name. Three defaults depend on other options (``packs`` on ``players``, ``layoff_credit`` on
``variant``), so those fields default to ``None`` and the properties ``pack_count`` and
``credit`` give the value in force; ``resolved()`` writes them out, which is what a log should
carry so that it replays the same way whatever the defaults become.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from .cards import Cycle, cycle, pack

Variant = Literal["a", "b", "c", "d"]
LayoffCredit = Literal["layer", "owner"]
JokerDoubling = Literal["hand", "net"]

PLAYERS: dict[str, tuple[int, int]] = {"a": (2, 4), "b": (2, 6), "c": (2, 4), "d": (2, 4)}
HAND_SIZE: dict[str, int] = {"a": 5, "b": 6, "c": 5, "d": 6}
"""M9: cards dealt to each player."""


class RummyRules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False, repr_omit_defaults=True):
    """Rules of one table. Unknown fields are ignored; impossible values raise ``ValueError``
    (``msgspec.ValidationError``, also a ``ValueError``, when decoded or converted)."""

    variant: Variant = "a"
    players: int = 3
    packs: int | None = None
    """b: 1 (54 cards) or 2 (108); None: 1 for up to 4 players, 2 for 5 or 6. M45: 1 is
    accepted in every variant, 2 only in b."""
    target: int = 500
    """The total that ends the game (M26)."""
    layoff_credit: LayoffCredit | None = None
    """Whom a card laid off on another's meld counts for (M24, B8); None: layer in a, owner
    in b, c and d."""
    ace_joins_low: bool = True
    """False: the ace is high only, runs do not go round the corner (M44, B6)."""
    joker_doubling: JokerDoubling = "hand"
    """c, d: jokers left in hand double the minus (``hand``) or the negative net (``net``,
    M34); accepted and ignored in a and b (M45)."""
    max_deals: int = 200
    turn_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.variant not in PLAYERS:
            raise ValueError(f"variant must be a, b, c or d, not {self.variant!r}")
        low, high = PLAYERS[self.variant]
        if isinstance(self.players, bool) or not isinstance(self.players, int) or not low <= self.players <= high:
            raise ValueError(f"variant {self.variant} seats {low} to {high} players, not {self.players!r}")
        if self.packs is not None and (isinstance(self.packs, bool) or self.packs not in (1, 2)):
            raise ValueError(f"packs must be 1 or 2, not {self.packs!r}")
        if self.packs == 2 and self.variant != "b":
            raise ValueError(f"packs 2 (108 cards) is played in variant b only, not {self.variant} (M45)")
        if isinstance(self.target, bool) or not isinstance(self.target, int) or self.target < 1:
            raise ValueError(f"target must be a whole number of points >= 1, not {self.target!r}")
        if self.layoff_credit not in (None, "layer", "owner"):
            raise ValueError(f"layoff_credit must be layer or owner, not {self.layoff_credit!r}")
        if not isinstance(self.ace_joins_low, bool):
            raise ValueError(f"ace_joins_low must be true or false, not {self.ace_joins_low!r}")
        if self.joker_doubling not in ("hand", "net"):
            raise ValueError(f"joker_doubling must be hand or net, not {self.joker_doubling!r}")
        if isinstance(self.max_deals, bool) or not isinstance(self.max_deals, int) or self.max_deals < 1:
            raise ValueError(f"max_deals must be a whole number >= 1, not {self.max_deals!r}")
        seconds = self.turn_seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise ValueError(f"turn_seconds must be a finite number > 0, not {seconds!r}")

    # --- values in force ------------------------------------------------------------------

    @property
    def pack_count(self) -> int:
        if self.packs is not None:
            return self.packs
        return 2 if self.variant == "b" and self.players >= 5 else 1

    @property
    def credit(self) -> LayoffCredit:
        if self.layoff_credit is not None:
            return self.layoff_credit
        return "layer" if self.variant == "a" else "owner"

    @property
    def hand_size(self) -> int:
        return HAND_SIZE[self.variant]

    @property
    def jokers(self) -> bool:
        return self.variant != "a"

    @property
    def named_set_jokers(self) -> bool:
        """c, d: a set's joker names its suit (M6, M19); b: it stands for a rank only."""
        return self.variant in ("c", "d")

    @property
    def no_feeding(self) -> bool:
        """c, d: the row may not be fed, and claims (M21)."""
        return self.variant in ("c", "d")

    @property
    def doubling(self) -> bool:
        """c, d: jokers in hand double (M24); b: they cost 50."""
        return self.variant in ("c", "d")

    @property
    def cycle(self) -> Cycle:
        return cycle(self.variant, self.ace_joins_low)

    @property
    def pack(self) -> tuple[str, ...]:
        return pack(self.variant, self.pack_count)

    def resolved(self) -> RummyRules:
        """The same rules with every variant-dependent default written out."""
        return msgspec.structs.replace(self, packs=self.pack_count, layoff_credit=self.credit)


def rules_from_record(d: Mapping[str, Any], players: Sequence[str] | int) -> RummyRules:
    """The rules a record's ``rules`` names, for a record whose ``players`` list is
    ``players`` (or its length). M46: that list decides the number of players; a ``players``
    option that differs is an error, a missing one is the list's length (not the default 3).
    Unknown keys are ignored; a known option with an impossible value raises ``ValueError``."""
    if not isinstance(d, Mapping):
        raise ValueError(f"rules must be an object, not {type(d).__name__}")
    n = players if isinstance(players, int) else len(players)
    fields = dict(d)
    if "players" in fields and fields["players"] != n:
        raise ValueError(f"rules name {fields['players']!r} players, but the record seats {n} (M46)")
    fields["players"] = n
    return msgspec.convert(fields, RummyRules)
