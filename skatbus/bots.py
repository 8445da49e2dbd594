"""Bots: a bot implements one method, ``act(observation) -> action``.

The observation is what the views service sends a seat when it is its turn (``protocol.wire.Update``):
the seat's view of the table (its own cards, the public history, the legal actions) and the
deadline. The same observation is built locally by ``observe`` when a table is played through
the pure engine, so a bot cannot tell (and cannot cheat) either way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from protocol.commands import Bid, Command
from protocol.table import TableState
from protocol.views import view
from protocol.wire import Update

from .seeding import decision_rng


class Bot(Protocol):
    """What a bot author writes. ``act`` may also be ``async def``."""

    def act(self, obs: Update) -> Command | Awaitable[Command]: ...


def observe(state: TableState, seat: int) -> Update:
    """The observation ``seat`` gets when it is its turn, built from a local table state."""
    return Update(view=view(state, seat), your_turn=True, index=state.events)


class RandomBot:
    """Uniform over the legal actions (bids included: it will often overbid)."""

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    def act(self, obs: Update) -> Command:
        return decision_rng(self.seed, obs).choice(obs.view.legal)


class SteppingRandomBot(RandomBot):
    """Uniform over the legal actions, except that a bid is always the next step up the ladder
    (a uniform pick among 60 bids would bid 200 on any hand): random, but readable games."""

    def act(self, obs: Update) -> Command:
        return decision_rng(self.seed, obs).choice(_one_bid_step(obs.view.legal))


HashedBot = SteppingRandomBot
"""The reproducible random player the tests and benchmarks use."""


def _one_bid_step(legal: Sequence[Command]) -> list[Command]:
    steps = [a for a in legal if not isinstance(a, Bid)]
    bids = [a for a in legal if isinstance(a, Bid)]
    if bids:
        steps.append(bids[0])
    return steps


BOTS: dict[str, Callable[[str], Bot]] = {
    "random": RandomBot,
    "stepping-random": SteppingRandomBot,
}


def _heuristic(seed: str) -> Bot:
    from .heuristic import HeuristicBot  # imported only when asked for: it carries its model

    return HeuristicBot(seed)


def _pimc(seed: str) -> Bot:
    from .pimc.bot import PimcBot  # imported only when asked for: it carries the solver

    return PimcBot(seed)


BOTS["heuristic"] = _heuristic
BOTS["pimc"] = _pimc


def make_bot(name: str, seed: str = "") -> Bot:
    """A built-in bot by name (see ``BOTS``)."""
    try:
        return BOTS[name](seed)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}") from None
