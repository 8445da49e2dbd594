"""Why a deal ended: the reasons recorded in ``DealEnded`` and ``DealResult.ended``.

On their own so that scoring can read them without importing the deal it scores."""

from __future__ import annotations

from typing import Final

PLAYED_OUT: Final = "played_out"
PASSED_IN: Final = "passed_in"
NULL_TRICK: Final = "declarer_took_trick"
"""A null lost at the declarer's first trick."""
SCHWARZ_MISSED: Final = "defenders_took_trick"
"""Schwarz announced (or ouvert) lost at the defenders' first trick."""
DEFENDERS_RESIGNED: Final = "defenders_resigned"
DECLARER_RESIGNED: Final = "declarer_resigned"
EARLY_BY_RULE: Final = frozenset({NULL_TRICK, SCHWARZ_MISSED})
"""Deals that stop before the tenth trick because a rule says so (no level judged after)."""
