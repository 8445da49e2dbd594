"""Bots: a bot implements one method, ``act(observation) -> action``.

The observation is what the views service sends a seat when it is its turn (``protocol.wire.Update``):
the seat's view of the table (its own cards, the public history, the legal actions) and the
deadline. The same observation is built locally by ``observe`` when a table is played through
the pure engine, so a bot cannot tell (and cannot cheat) either way.

Built-in bots exist per game: ``BOTS`` are Skat's, ``bots_of(game)`` any game's (Thirty-one's
are in ``skatbus.thirty_one_bots``), and ``make_bot(name, seed, game)`` makes one. A bot gets
its own game's update (``protocol.registry.decode_update``), so a Skat bot is never seated at a
Thirty-one table: a name the game has no bot of is a ``ValueError`` naming the ones it has.
Wherever a name is taken, so is a class of one's own, ``module:Class`` or ``file.py:Class``
(``skatbus.bot_loader``, docs/in-process-bots.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from protocol.skat.commands import Bid, Command
from protocol.skat.table import TableState
from protocol.skat.views import view
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


SKAT = "skat"


def _thirty_one_bots() -> dict[str, Callable[[str], Any]]:
    from .thirty_one_bots import BOTS as T31_BOTS  # imported only when asked for

    return dict(T31_BOTS)


_GAME_BOTS: dict[str, Callable[[], dict[str, Callable[[str], Any]]]] = {
    SKAT: lambda: BOTS,
    "thirty-one": _thirty_one_bots,
}
"""Game -> its built-in bots by name (loaded when first asked for)."""


def _title(game: str) -> str:
    from protocol import registry

    try:
        return registry.get(game).title
    except ValueError:
        return game


def bots_of(game: str = SKAT) -> dict[str, Callable[[str], Any]]:
    """The built-in bots of ``game`` by name (each made from a seed string); raises
    ``ValueError`` for a game without built-in bots."""
    try:
        return _GAME_BOTS[game]()
    except KeyError:
        raise ValueError(f"no built-in bots for the game {game!r}; games with bots: {', '.join(_GAME_BOTS)}") from None


def bot_games(name: str) -> list[str]:
    """The games that have a built-in bot called ``name``."""
    return [game for game in _GAME_BOTS if name in bots_of(game)]


def unknown_bot(name: str, game: str = SKAT) -> str:
    """Why ``name`` is no built-in bot of ``game``, in one line: the ones it has, and the game
    a bot of that name plays if there is one."""
    elsewhere = [g for g in bot_games(name) if g != game]
    where = f" ({name} is a bot of {', '.join(_title(g) for g in elsewhere)})" if elsewhere else ""
    return f"unknown bot {name!r} for {_title(game)}{where}; its built-in bots: {', '.join(sorted(bots_of(game)))}"


def make_bot(name: str, seed: str = "", game: str = SKAT) -> Bot:
    """A built-in bot of ``game`` by name (``bots_of(game)``; Skat's are ``BOTS``), or an
    in-process one by its spec (``module:Class``, ``path/to/file.py:Class``:
    ``skatbus.bot_loader``, whose ``BotLoadError`` is a ``ValueError`` too). It plays the
    updates of that game; typed as ``Bot``, the protocol every runner takes."""
    if ":" in name:
        from .bot_loader import make  # a class of the operator's: imported only when asked for

        guarded: Bot = make(name, seed, game)
        return guarded
    made = bots_of(game).get(name)
    if made is None:
        if game == SKAT:
            raise ValueError(f"unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")
        raise ValueError(unknown_bot(name, game))
    bot: Bot = made(seed)
    return bot
