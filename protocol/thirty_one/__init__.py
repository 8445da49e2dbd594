"""Thirty-one (Scat, Blitz) for skatbus: 2 to 9 players, 52 cards, coins and a kitty.

Rules T1-T45 of the project's rules page; records as RECORDS.md describes them. Read it
top-down: ``cards`` (codes, values, hand values) -> ``rules`` (options) -> ``events`` ->
``commands`` -> ``deal`` (one deal as a state machine) -> ``state`` (fold a log; what the table
owes) -> ``decide`` (commands to events; time-outs) -> ``views`` (what each seat may see) ->
``knowledge`` (what a seat knows) -> ``game`` (the ``protocol.game.Game``)::

    from protocol.thirty_one import GAME, ThirtyOneRules, fold, due, decide, parse_action
    state = fold([GAME.open_event("t1", ["ann", "bob"], ThirtyOneRules(), "seed", {})])
    state.apply(due(state))                       # the first deal
    events = decide(state, 0, parse_action("take stock"))
"""

from .cards import PACK, CardCode, hand_value, points, value
from .commands import AnyCommand, Command, Discard, Knock, Look, Take, Throw, decode_command, parse_action
from .deal import Deal
from .decide import Rejection, decide, default_action, timeout
from .events import (
    AnyEvent,
    T31DealEnded,
    T31DealScored,
    T31Dealt,
    T31Discarded,
    T31Knocked,
    T31Looked,
    T31Restocked,
    T31Threw,
    T31Took,
)
from .game import GAME, ThirtyOne
from .rules import ThirtyOneRules, rules_from_record
from .state import GameResult, LogError, SheetRow, ThirtyOneState, due, fold
from .views import ThirtyOneView, redact, view

__all__ = [
    "AnyCommand", "AnyEvent", "CardCode", "Command", "Deal", "Discard", "GAME", "GameResult", "Knock",
    "LogError", "Look", "PACK", "Rejection", "SheetRow", "T31DealEnded", "T31DealScored", "T31Dealt",
    "T31Discarded", "T31Knocked", "T31Looked", "T31Restocked", "T31Threw", "T31Took", "Take", "ThirtyOne",
    "ThirtyOneRules", "ThirtyOneState", "ThirtyOneView", "Throw", "decide", "decode_command", "default_action",
    "due", "fold", "hand_value", "parse_action", "points", "redact", "rules_from_record", "timeout", "value",
    "view",
]  # fmt: skip
