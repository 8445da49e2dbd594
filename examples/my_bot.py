"""A bot class of one's own, played in-process: no process, no network seat of its own.

    .venv/bin/skat tournament --bots examples/my_bot.py:MyBot,random,random --rounds 1
    .venv/bin/python -m skatbus.evaluate examples/my_bot.py:MyBot random random --deals 120
    .venv/bin/skat match examples/my_bot.py:MyBot random --max-pairs 40
    .venv/bin/skat tournament --game thirty-one --bots examples/my_bot.py:MyThirtyOneBot,random,random

A bot is a class with ``act(observation) -> command``: the observation is what a remote bot
is sent (``obs.view``: the seat's hand, the public history, ``obs.view.legal``, the moves it may
make), and the answer is one of ``obs.view.legal``. The constructor gets the seat's seed when
it takes ``seed``. A class plays Skat unless it says ``game = "thirty-one"``.
docs/in-process-bots.md explains the rest (names, seeds, what happens when ``act`` raises).
"""

from __future__ import annotations

import random
from typing import Any

from protocol.skat.commands import Bid, Hold, Pass, PlayCard
from protocol.thirty_one.cards import VALUES
from protocol.thirty_one.commands import Discard, Knock, Take


class MyBot:
    """Skat: with two jacks or more it holds and bids up to 20, else it passes; after that, a
    random legal move (seeded, so a tournament with the same seed plays the same way)."""

    def __init__(self, seed: str = "") -> None:
        self.rng = random.Random(seed)

    def act(self, obs: Any) -> Any:
        view = obs.view
        legal = view.legal
        if view.phase == "bidding":
            strong = sum(card.endswith("J") for card in view.hand) >= 2
            for action in legal:
                if strong and (isinstance(action, Hold) or isinstance(action, Bid) and action.value <= 20):
                    return action
            return next(a for a in legal if isinstance(a, Pass))
        cards = [a for a in legal if isinstance(a, PlayCard)]
        return self.rng.choice(cards or legal)


class MyThirtyOneBot:
    """Thirty-one: knocks with 25 points or more, else takes from the stock and throws away its
    lowest card (chosen among ``view.legal``, which leaves out the one it may not discard)."""

    game = "thirty-one"

    def act(self, obs: Any) -> Any:
        view = obs.view
        legal = view.legal
        knock = next((a for a in legal if isinstance(a, Knock)), None)
        if knock is not None and view.hand_value >= 25:
            return knock
        takes = [a for a in legal if isinstance(a, Take)]
        if takes:
            return next((a for a in takes if a.source == "stock"), takes[0])
        discards = [a for a in legal if isinstance(a, Discard)]
        return min(discards, key=lambda a: VALUES[a.card]) if discards else legal[0]
