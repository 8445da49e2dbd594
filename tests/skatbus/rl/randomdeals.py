"""Shared helpers of the RL environment tests: random deals under every rule variant."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

from protocol.skat.rules import Rules
from skatbus.rl.actions import ACTIONS, legal_indices
from skatbus.rl.game import DealGame

RULE_VARIANTS: list[Rules] = [
    Rules(),
    Rules(profile="classic"),
    Rules(kontra=True),
    Rules(kontra=True, ramsch=True, profile="classic"),
    Rules(players=4, kontra=True, ramsch=True),
]


def random_states(rules: Rules, deals: int, seed: int, views: bool = False) -> Iterator[DealGame]:
    """Every state of ``deals`` random deals, yielded before each action and once at the end;
    the same ``DealGame`` object throughout. Each action is a uniform kind of action (bid or
    pass, pick up or declare, ...), then a uniform one of that kind: so all-pass deals
    (ramsch), Kontra and Re come up often, which a uniform pick among 60 bids would never do."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    game = DealGame(rules, views=views)
    for d in range(deals):
        game.new_deal(d % rules.players, rng=nrng, name=f"t{d}")
        while not game.over:
            yield game
            game.push(pick(rng, legal_indices(game.deal)))
        yield game


def pick(rng: random.Random, legal: list[int]) -> int:
    """A uniform kind of action among ``legal``, then a uniform action of that kind."""
    kinds: dict[type, list[int]] = {}
    for i in legal:
        kinds.setdefault(type(ACTIONS[i]), []).append(i)
    return rng.choice(rng.choice(list(kinds.values())))
