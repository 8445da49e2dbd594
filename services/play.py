"""Trick play: cards, tricks, showing cards, resigning, and the end of the deal."""

from __future__ import annotations

from protocol.commands import PlayCard, Resign, ShowCards
from protocol.deal import Phase

from .runtime import Service


class Play(Service):
    name = "play"
    triggers = ("game_declared", "pass", "re", "all_passed", "table_paused", "table_resumed")
    """What bidding writes that can start the play (the declaration, the last pass or Re of the
    doubling round, a passed-in Ramsch): its deadline (bidding sends its first prompt). Cards,
    tricks and the deal's end are play's own."""
    prompts = True
    commands = (PlayCard, ShowCards, Resign)
    phases = frozenset({Phase.PLAYING})
