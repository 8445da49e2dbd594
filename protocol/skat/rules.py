"""The table rules: which profile and which optional rules a table plays.

A ``Rules`` value is recorded in the table-opened event, so a log always carries the rules it
was played under and replays the same way whatever the defaults become later.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

from ..clocks import TimeControl

Profile = Literal["isko", "classic"]
BockTrigger = Literal["kontra_lost", "re", "sixty_all", "grand_hand_won", "schneider_lost"]

DEFAULT_BOCK_TRIGGERS: tuple[BockTrigger, ...] = ("kontra_lost", "re")


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=False, kw_only=True, repr_omit_defaults=True):
    """Rules of one table. Every optional rule is off by default (plain ISkO)."""

    profile: Profile = "isko"
    kontra: bool = False
    """Kontra and Re (seed 003)."""
    ramsch: bool = False
    """Play a Ramsch when all three pass, instead of passing the deal in."""
    bock: bool = False
    bock_triggers: tuple[BockTrigger, ...] = DEFAULT_BOCK_TRIGGERS
    seeger_fabian: bool = False
    """Rank the table by Seeger-Fabian points (both tallies are always recorded)."""
    rounds: int = 0
    """Rounds to play (a round is one deal per player); 0 = until the table is closed."""
    players: int = 3
    """Players at the table: 3, or 4 with the dealer sitting out."""
    turn_seconds: float = 30.0
    """How long a player has for one action before it is timed out."""
    max_timeouts: int = 0
    """Withdraw a seat that misses this many turns in a row (0: never). A withdrawn seat is
    played by the default action at once from then on, and its commands are refused: a dead or
    broken bot no longer holds its table up for a whole turn per move (``seat_withdrawn``)."""
    time_control: TimeControl | None = None
    """A budget per seat for the whole table with an increment per move (``120+2``), besides
    ``turn_seconds``: a seat must answer within the lesser of the two (``protocol.clocks``;
    docs/time-control.md). None: the per-move deadline alone."""

    def __post_init__(self) -> None:
        if self.players not in (3, 4):
            raise ValueError("a table has 3 or 4 players")
        if self.rounds < 0:
            raise ValueError("rounds must be >= 0")
        if not math.isfinite(self.turn_seconds) or self.turn_seconds <= 0:
            raise ValueError("turn_seconds must be a finite number > 0")
        if self.max_timeouts < 0:
            raise ValueError("max_timeouts must be >= 0 (0: never withdraw a seat)")

    @property
    def deals(self) -> int:
        """Deals in the list (0 = open-ended)."""
        return self.rounds * self.players
