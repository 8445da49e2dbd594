"""Trick play: cards, tricks, showing cards, resigning, and the end of the deal."""

from __future__ import annotations

from .runtime import Service


class Play(Service):
    name = "play"
    triggers = ("game_declared", "pass", "re", "all_passed", "table_paused", "table_resumed")
    """What bidding writes that can start the play (the declaration, the last pass or Re of the
    doubling round, a passed-in Ramsch): its deadline (bidding sends its first prompt). Cards,
    tricks and the deal's end are play's own."""
    prompts = True
    enforces_turns = True
    """Its commands and the turns it enforces are the ones each game gives the play role
    (``protocol.game``): Skat's cards, showing and resigning; every move of Thirty-one."""
