"""The Russian rummy "Скат" (variants a, b, c, d): the pure game engine.

Rules M1-M49 of the project's rummy rules page; action texts and results as RECORDS.md gives
them. Read it top-down: ``cards`` (codes, packs, points, the rank cycle) -> ``rules`` (options)
-> ``melds`` (what a meld is and what fits it; bars and claims; the lists of melds a hand can
make) -> ``actions`` (the actions and their texts) -> ``state`` (one deal as an immutable state
machine: ``deal``, ``legal``, ``apply``) -> ``scoring`` (a deal's score, a game over deals).
Not wired as a ``protocol.game.Game`` yet (no events, views or registry entry)::

    from protocol.rummy import RummyRules, deal, legal, apply, parse_action, score
    rules = RummyRules(variant="c", players=2)
    state = deal(rules, dealer=1, deck=rules.pack)      # seat 0 has drawn its first card
    state = apply(state, legal(state)[0])               # a new state; the old one is unchanged
"""

from .actions import (
    ACTION_TYPES,
    Action,
    AnyAction,
    Claim,
    Discard,
    Lay,
    LayOff,
    Swap,
    Take,
    format_line,
    parse_action,
    parse_line,
)
from .cards import JOKERS, SUITS, Cycle, base, cycle, is_joker, pack, parse_card, parse_token, points, token
from .melds import RUN, SET, Meld, Placed, Refused, barred, can_use, lay_off, make_meld, swap_joker
from .rules import RummyRules, rules_from_record
from .scoring import (
    DealResult,
    DealScore,
    GameResult,
    Match,
    credited,
    finish_deal,
    hand_minus,
    new_match,
    places,
    play,
    score,
    start_deal,
)
from .state import STOCK_OUT, WENT_OUT, Deal, apply, cards_in_play, deal, legal, turn_order, why_not

__all__ = [
    "ACTION_TYPES", "Action", "AnyAction", "Claim", "Cycle", "Deal", "DealResult", "DealScore", "Discard",
    "GameResult", "JOKERS", "Lay", "LayOff", "Match", "Meld", "Placed", "RUN", "Refused", "RummyRules", "SET",
    "STOCK_OUT", "SUITS", "Swap", "Take", "WENT_OUT", "apply", "barred", "base", "can_use", "cards_in_play",
    "credited", "cycle", "deal", "finish_deal", "format_line", "hand_minus", "is_joker", "lay_off", "legal",
    "make_meld", "new_match", "pack", "parse_action", "parse_card", "parse_line", "parse_token", "places", "play",
    "points", "rules_from_record", "score", "start_deal", "swap_joker", "token", "turn_order", "why_not",
]  # fmt: skip
