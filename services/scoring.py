"""Scoring: turns every ended deal into its scored result (the score sheet, Bock state)."""

from __future__ import annotations

from .runtime import Service


class Scoring(Service):
    name = "scoring"
    triggers = ("deal_ended",)
