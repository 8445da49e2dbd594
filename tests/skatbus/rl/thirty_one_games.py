"""Shared helpers of the Thirty-one RL tests: random games under option sets that reach every
rule (restocks, a void stock, the turn limit, ``max_deals``, throw-downs, eliminations)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from skatbus.rl.thirty_one_actions import KNOCK_INDEX, THROW_INDEX, indices
from skatbus.rl.thirty_one_game import ThirtyOneGame, make_rules

OptionSet = tuple[dict[str, Any], float, int]
"""(constructor options, chance to knock when it is legal, games to play)."""

OPTION_SETS: list[OptionSet] = [
    ({"players": 3}, 0.3, 30),
    ({"players": 2, "coins": 1, "county": False}, 0.3, 40),
    ({"players": 4, "three_of_a_kind": "30", "straight_flush": True, "min_knock": 20}, 0.3, 6),
    ({"players": 5, "throw_down": True, "knock_in_first_round": False, "three_of_a_kind": "30.5"}, 0.3, 8),
    ({"players": 9, "stock_out": "void", "coins": 1}, 0.04, 2),
    ({"players": 6, "max_turns": 12, "max_deals": 4, "coins": 5, "throw_down": True}, 0.05, 10),
    ({"players": 7, "coins": 2, "max_deals": 3}, 0.01, 3),
]
"""Every ``ThirtyOneRules`` option that changes play is off its default in at least one set;
a low knock chance makes deals long enough to empty the stock and reach ``max_turns``."""


def option_id(option_set: OptionSet) -> str:
    return "+".join(f"{k}-{v}" for k, v in option_set[0].items())


def new_game(options: dict[str, Any]) -> ThirtyOneGame:
    opts = dict(options)
    players = opts.pop("players", 3)
    return ThirtyOneGame(make_rules(None, opts), players)


def pick(rng: random.Random, legal: list[int], knock: float) -> int:
    """A random legal index: knock with chance ``knock`` when it may, throw down with chance
    0.1 when it may, else a uniform one of the rest (takes, looks, discards)."""
    if KNOCK_INDEX in legal and rng.random() < knock:
        return KNOCK_INDEX
    if THROW_INDEX in legal and rng.random() < 0.1:
        return THROW_INDEX
    rest = [i for i in legal if i not in (KNOCK_INDEX, THROW_INDEX)] or legal
    return rng.choice(rest)


def random_games(option_set: OptionSet, seed: int) -> Iterator[ThirtyOneGame]:
    """Every resting state of the set's random games (before each action and once at each
    game's end); the same ``ThirtyOneGame`` object throughout."""
    options, knock, games = option_set
    rng = random.Random(seed)
    game = new_game(options)
    for g in range(games):
        game.new_game(f"t31-test/{seed}/{g}", table=f"t{g}")
        while not game.over:
            yield game
            game.push(pick(rng, indices(game.legal_bits()), knock))
        yield game
