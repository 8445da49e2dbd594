"""The options of a Thirty-one table (the rules page's table of options, T3, T10, T20, T25,
T28-T30), and how a game record spells them (T44, T45).

A ``ThirtyOneRules`` value is recorded in ``table_opened/2`` (as a dict of its fields), so a log
always carries the rules it was played under and replays the same way whatever the defaults
become later. Every option has the rules page's name and default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from ..clocks import TimeControl, parse_time_control

ThreeOfAKind = Literal["off", "30", "30.5"]
StockOut = Literal["reshuffle", "void"]


class ThirtyOneRules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False, repr_omit_defaults=True):
    """Rules of one table. Unknown fields are ignored (T44); impossible values raise
    ``ValueError`` (``msgspec.ValidationError`` when decoded or converted)."""

    coins: int = 3
    """Coins each player starts with (T3)."""
    county: bool = True
    """A player without coins plays on until he owes one (T25); false: out with his last coin."""
    three_of_a_kind: ThreeOfAKind = "off"
    """Three cards of one rank are worth 30 or 30 1/2 (T10)."""
    straight_flush: bool = False
    """Three consecutive ranks of one suit are worth 30, Q-K-A 31 (T10)."""
    min_knock: int = 0
    """The least hand value a player may knock with (T20); 0: any."""
    knock_in_first_round: bool = True
    """False: nobody knocks before the deal has had a turn per active player (T20, T35)."""
    throw_down: bool = False
    """Hands are dealt unseen; a player who has not looked may throw down (T30-T32)."""
    stock_out: StockOut = "reshuffle"
    """What an empty stock at the end of a turn does (T28)."""
    max_turns: int = 300
    """A deal that reaches this many turns without a knock is void (T29, T34)."""
    max_deals: int = 500
    """A game that reaches this many deals ends, ranked by coins (T29, T38)."""
    turn_seconds: float = 30.0
    """How long a player has for one action before it is timed out."""
    max_timeouts: int = 0
    """Withdraw a seat that misses this many turns in a row (0: never), as at Skat tables."""
    time_control: TimeControl | None = None
    """A budget per seat for the whole table with an increment per move, besides
    ``turn_seconds``, as at Skat tables (``protocol.clocks``; docs/time-control.md)."""

    def __post_init__(self) -> None:
        if self.coins < 1:
            raise ValueError("coins must be 1 or more")
        if not 0 <= self.min_knock <= 31:
            raise ValueError("min_knock must be 0 to 31")
        if self.max_turns < 1:
            raise ValueError("max_turns must be 1 or more")
        if self.max_deals < 1:
            raise ValueError("max_deals must be 1 or more")
        if not math.isfinite(self.turn_seconds) or self.turn_seconds <= 0:
            raise ValueError("turn_seconds must be a finite number > 0")
        if self.max_timeouts < 0:
            raise ValueError("max_timeouts must be >= 0 (0: never withdraw a seat)")


_THREE_OF_A_KIND: Final[dict[object, ThreeOfAKind]] = {"off": "off", "30": "30", "30.5": "30.5", 30.5: "30.5"}


def _three_of_a_kind(raw: object) -> ThreeOfAKind:
    """T45: ``"off"``/false/null, ``30``/``"30"``/true, ``30.5``/``"30.5"``."""
    if raw is None or raw is False:
        return "off"
    if raw is True:
        return "30"
    if isinstance(raw, int | float) and raw == 30:
        return "30"
    try:
        return _THREE_OF_A_KIND[raw]
    except (KeyError, TypeError):
        raise ValueError(f"three_of_a_kind must be off, 30 or 30.5, not {raw!r}") from None


def rules_from_record(d: Mapping[str, Any]) -> ThirtyOneRules:
    """The rules a game record's ``rules`` names (RECORDS.md): an option left out has its
    default, unknown keys are ignored, ``three_of_a_kind`` has the spellings of T45, and
    ``turn_seconds`` only has to be a number (T44: it changes no result, so a number that is no
    usable deadline gives the default; a ``time_control`` that is no usable one is none). A
    known option with an impossible value raises ``ValueError``."""
    if not isinstance(d, Mapping):
        raise ValueError(f"rules must be an object, not {type(d).__name__}")
    fields = dict(d)
    if "three_of_a_kind" in fields:
        fields["three_of_a_kind"] = _three_of_a_kind(fields["three_of_a_kind"])
    if "turn_seconds" in fields:
        seconds = fields["turn_seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ValueError(f"turn_seconds must be a number, not {seconds!r}")
        if not math.isfinite(seconds) or seconds <= 0:
            del fields["turn_seconds"]
    if "time_control" in fields:  # like turn_seconds, it changes no result: unusable means none
        fields["time_control"] = _time_control(fields["time_control"])
    return msgspec.convert(fields, ThirtyOneRules)


def _time_control(raw: object) -> TimeControl | None:
    """A record's time control: ``{"budget": 120, "increment": 2}``, ``"120+2"`` or null; one
    that is no usable time control is none."""
    try:
        if isinstance(raw, str):
            return parse_time_control(raw)
        return msgspec.convert(raw, TimeControl | None)
    except (ValueError, msgspec.ValidationError):
        return None
