"""Scoring: turns every ended deal into its scored result (the score sheet, Bock state)."""

from __future__ import annotations

from .runtime import Service


class Scoring(Service):
    name = "scoring"
    triggers = ("*",)
    """Every event of its partitions, as it happens: scoring folds a deal while it is played, so
    that when the deal ends the score is appended at once instead of after reading the whole
    deal back (that read sat between the last card and the next deal's first prompt)."""
    acknowledges = False
    """Like views: after a restart or a takeover the recovery scan appends any score still owed,
    so a lost delivery costs nothing, and the server is spared an acknowledgement per event."""
