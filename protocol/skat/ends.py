"""Why a deal ended: the reasons recorded in ``DealEnded`` and ``DealResult.ended``.

On their own so that scoring can read them without importing the deal it scores."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class EndReason(StrEnum):
    """Why a deal ended. The values are what the log carries (``DealEnded.reason``)."""

    PLAYED_OUT = "played_out"
    PASSED_IN = "passed_in"
    NULL_TRICK = "declarer_took_trick"
    """A null lost at the declarer's first trick."""
    SCHWARZ_MISSED = "defenders_took_trick"
    """Schwarz announced (or ouvert) lost at the defenders' first trick."""
    DEFENDERS_RESIGNED = "defenders_resigned"
    DECLARER_RESIGNED = "declarer_resigned"

    def __repr__(self) -> str:
        return f"EndReason.{self.name}"


PLAYED_OUT: Final = EndReason.PLAYED_OUT
PASSED_IN: Final = EndReason.PASSED_IN
NULL_TRICK: Final = EndReason.NULL_TRICK
SCHWARZ_MISSED: Final = EndReason.SCHWARZ_MISSED
DEFENDERS_RESIGNED: Final = EndReason.DEFENDERS_RESIGNED
DECLARER_RESIGNED: Final = EndReason.DECLARER_RESIGNED
EARLY_BY_RULE: Final = frozenset({NULL_TRICK, SCHWARZ_MISSED})
"""Deals that stop before the tenth trick because a rule says so (no level judged after)."""
