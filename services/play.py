"""Trick play: cards, tricks, showing cards, resigning, and the end of the deal."""

from __future__ import annotations

from protocol.commands import PlayCard, Resign, ShowCards
from protocol.deal import Phase

from .runtime import Service


class Play(Service):
    name = "play"
    triggers = (
        "table_opened", "game_declared", "pass", "re", "all_passed", "card_played", "trick_taken", "cards_shown",
        "resigned", "timed_out",
    )  # fmt: skip
    commands = (PlayCard, ShowCards, Resign)
    phases = frozenset({Phase.PLAYING})
