"""What check-bot needs to know of each game it checks bots of: the tables it opens, the built-in
bots it seats beside the bot, and the words of the advice that differ between games.

The checks themselves are the same for every game (they judge the protocol: prompts, commands,
``at``, replies, hellos, reconnects); only this table says how a game's tables are set up.
Skat's entry reproduces what check-bot did before there were other games, to the letter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from protocol.events import DealScored, Event
from protocol.skat.rules import Rules
from protocol.thirty_one.events import T31DealScored
from protocol.thirty_one.rules import ThirtyOneRules

from .common import LEGAL_FIX, MALFORMED_FIX, T31_LEGAL_FIX, T31_MALFORMED_FIX, TABLE_LIMIT


def _skat_rules(turn_seconds: float, kontra: bool) -> Rules:
    return Rules(rounds=1, turn_seconds=turn_seconds, kontra=kontra)


def _thirty_one_rules(turn_seconds: float, kontra: bool) -> ThirtyOneRules:
    """One coin each: a whole game is about three deals (a few seconds), so every table check
    can play its game to the end (the end is where a bot meets the ``closed`` view and its
    ``places``, and between deals it meets every seat's shown hands). Nobody knocks in a deal's
    first round (T20, T35): every seat has a whole turn, two prompts, in every deal, so the
    checks that act between two prompts of the bot always find their moment (a knock in the
    bot's first turn would leave it no turn to come in that deal)."""
    return ThirtyOneRules(coins=1, knock_in_first_round=False, turn_seconds=turn_seconds)


def _skat_helper(seed: str) -> Any:
    from ..bots import HashedBot

    return HashedBot(seed)


def _thirty_one_helper(seed: str) -> Any:
    from ..thirty_one_bots import RandomBot

    return RandomBot(seed)


def _always(view: Any, seat: int) -> bool:
    return True


def _thirty_one_moves_again(view: Any, seat: int) -> bool:
    """Whether ``seat`` has a turn to come in this deal, as another seat's ``view`` shows it:
    it is active and nobody knocked, or it is owed a last turn. Cutting the bot's connection is
    only worth it then: its next prompt comes, unless a 31 ends the deal first, and then the
    next deal's does (a 31 costs the others one life, which eliminates nobody in the first
    deal, where the first such moment comes: see ``_thirty_one_rules``)."""
    active = seat in view.active
    owed = view.knocker is None or seat in view.last_turns
    return bool(active and owed and view.knocker != seat)


@dataclass(frozen=True)
class CheckedGame:
    """How check-bot sets up one game's tables (see the module docstring)."""

    name: str
    title: str
    rules: Callable[[float, bool], Any]
    """(seconds per move, Kontra on) -> the rules of a table check-bot opens."""
    deal_scored: type[Event]
    """The event that ends a deal's scoring: a table check of one deal waits for it."""
    helper: Callable[[str], Any]
    """A built-in bot for the other seats, from a seed."""
    whole_games: bool
    """Every table check plays its game to the table's close (not only its first deal)."""
    table_limit: float
    """Seconds a table check waits for its table."""
    legal_fix: str
    malformed_fix: str
    example_event: str
    """A versioned event type of this game, for the JSON advice."""
    moves_again: Callable[[Any, int], bool] = _always
    """Whether the bot's seat has another turn to come in the deal another seat's view shows."""

    @property
    def flag(self) -> str:
        """What to add to a command line for this game (nothing for Skat, the default)."""
        return "" if self.name == "skat" else f" --game {self.name}"


GAMES: Final[dict[str, CheckedGame]] = {
    "skat": CheckedGame(
        name="skat",
        title="Skat",
        rules=_skat_rules,
        deal_scored=DealScored,
        helper=_skat_helper,
        whole_games=False,
        table_limit=TABLE_LIMIT,
        legal_fix=LEGAL_FIX,
        malformed_fix=MALFORMED_FIX,
        example_event="card_played/1",
    ),
    "thirty-one": CheckedGame(
        name="thirty-one",
        title="Thirty-one",
        rules=_thirty_one_rules,
        deal_scored=T31DealScored,
        helper=_thirty_one_helper,
        whole_games=True,
        table_limit=2 * TABLE_LIMIT,
        legal_fix=T31_LEGAL_FIX,
        malformed_fix=T31_MALFORMED_FIX,
        example_event="t31_took/1",
        moves_again=_thirty_one_moves_again,
    ),
}
"""The games check-bot checks bots of, by the name ``--game`` takes (``protocol.registry``'s)."""
