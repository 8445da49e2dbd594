"""One whole game of Thirty-one, stepped by action index: what both Thirty-one environments drive.

``ThirtyOneGame`` keeps a ``protocol.thirty_one.ThirtyOneState`` and moves it on exactly as the
services do: a seat's action becomes events through ``decide``, and everything the table then
owes (``due``: restocks, the deal's end and score, the next deal, the close) is appended at
once, so the game always rests where a seat has to decide, or at its end. Its ``log`` is the
table's log as a service would have written it (``protocol.thirty_one.fold(game.log)``
rebuilds the state). It knows nothing of PettingZoo or Gymnasium; both environments, and a
hand-written training loop, share it.

The episode is the whole game (T27: to the last active seat, or T29: ``max_deals`` deals),
and a seat's result is its place (T37, T38). A seat's place is fixed the moment it is
eliminated: those eliminated later, and the survivor, all rank above it. ``reward`` turns
places into rewards, in one of two ways:

* ``"place"`` (the default): ``(n + 1 - 2 * place) / (n - 1)``, from +1 for the winner to -1
  for the last, linear in between; seats sharing places get the mean of the places they
  share, so the rewards of a game always sum to 0.
* ``"win"``: 1 for the winner, 0 for everyone else; ``k`` seats sharing place 1 (a game ended
  by ``max_deals`` with equal coins) get ``1/k`` each, as ``skatbus.thirty_one_eval`` counts wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from protocol.errors import IllegalAction
from protocol.events import Event
from protocol.thirty_one import GAME, Rejection, T31DealScored, ThirtyOneRules, ThirtyOneState, decide, due, fold
from protocol.thirty_one.deal import Deal

from .thirty_one_actions import ACTIONS, N_ACTIONS, legal_bits
from .thirty_one_encoding import DealKnowledge

RewardMode = Literal["place", "win"]
REWARD_MODES: Final[tuple[str, ...]] = ("place", "win")
MIN_PLAYERS, MAX_PLAYERS = GAME.seats
SKIPPED_GAMES: Final = 100
"""How many games in a row an environment's ``reset`` skips at most because they were
decided before the learner could act (each is a rare event: a dealt 31 with ``coins=1,
county=False``), before it gives up."""


def make_rules(rules: ThirtyOneRules | None, options: Mapping[str, Any]) -> ThirtyOneRules:
    """``rules`` (default ``ThirtyOneRules()``) with ``options`` (any ``ThirtyOneRules`` field,
    by name) applied and checked as a table's rules are: a wrong name raises ``TypeError``, a
    wrong type or an impossible value ``ValueError``."""
    base = rules if rules is not None else ThirtyOneRules()
    unknown = sorted(set(options) - set(ThirtyOneRules.__struct_fields__))
    if unknown:
        raise TypeError(
            f"unknown Thirty-one option(s) {', '.join(unknown)}; options: {', '.join(ThirtyOneRules.__struct_fields__)}"
        )
    if not options:
        return base
    return msgspec.convert({**msgspec.to_builtins(base), **options}, ThirtyOneRules)


def check_players(players: int) -> int:
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")
    return players


def check_reward(mode: str) -> RewardMode:
    if mode not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, not {mode!r}")
    return mode  # type: ignore[return-value]


def reward(places: list[int], seat: int, mode: RewardMode = "place") -> float:
    """The reward of ``seat`` for the places ``places`` (competition ranking, T37); see the
    module docstring."""
    n = len(places)
    place = places[seat]
    shared = places.count(place)
    if mode == "win":
        return 1.0 / shared if place == 1 else 0.0
    mean = place + (shared - 1) / 2
    return (n + 1 - 2 * mean) / (n - 1)


class ThirtyOneGame:
    """One game of ``players`` seats under ``rules``; see the module docstring."""

    __slots__ = ("rules", "n", "state", "know", "log", "keep_log")

    def __init__(self, rules: ThirtyOneRules | None = None, players: int = 3, *, keep_log: bool = True) -> None:
        self.rules = rules if rules is not None else ThirtyOneRules()
        self.n = check_players(players)
        self.keep_log = keep_log
        """Keep every event in ``log`` (a list append per event; off for benchmarks)."""
        self.state = ThirtyOneState()
        self.know = DealKnowledge(self.n, self.rules)
        """What the deal's events made public, and each seat's own stock draws (for ``encode``)."""
        self.log: list[Event] = []

    def new_game(self, seed: str, table: str = "rl") -> list[int]:
        """Open a table whose deals are the ones ``seed`` gives (``protocol.thirty_one.state
        .deal_seed``: the same as a real table opened with that seed) and deal the first deal.
        Returns the seats eliminated before anyone acted (only a dealt 31 with ``coins`` 1 and
        ``county`` off can do it)."""
        self.state = ThirtyOneState()
        self.know = DealKnowledge(self.n, self.rules)
        self.log = []
        self._apply(GAME.open_event(table, [f"player_{s}" for s in range(self.n)], self.rules, seed, {}))
        return self._settle()

    @property
    def over(self) -> bool:
        return self.state.closed

    @property
    def to_move(self) -> int | None:
        """The seat to act, or None once the game is over."""
        return self.state.to_move

    @property
    def deal(self) -> Deal | None:
        """The deal in progress (every hand: for inspection, not for a learner)."""
        return self.state.deal

    def legal_bits(self, seat: int | None = None) -> int:
        """The legal action indices of ``seat`` (default: the seat to move) as a bit set; 0
        unless it is that seat's turn."""
        state = self.state
        mover = state.to_move
        if mover is None or (seat is not None and seat != mover):
            return 0
        return legal_bits(state.deal, mover)

    def push(self, index: int) -> list[int]:
        """Take the action of ``index`` for the seat to move, then append what the table owes.
        Returns the seats eliminated meanwhile, in the order the deals' scores eliminated them.
        Raises ``IllegalAction`` (a ``ValueError``) if it is not legal now, leaving the game as
        it was."""
        state = self.state
        seat = state.to_move
        if seat is None:
            raise IllegalAction(f"action {index}", "the game is over" if state.closed else "nobody is to move")
        if not (0 <= index < N_ACTIONS and legal_bits(state.deal, seat) >> index & 1):
            if not 0 <= index < N_ACTIONS:
                raise IllegalAction(f"action {index}", f"an action index is 0 to {N_ACTIONS - 1}")
            deal = state.deal
            reason = deal.check(seat, ACTIONS[index]) if deal is not None else ""
            raise IllegalAction(ACTIONS[index], reason or f"index {index} is not among the legal actions now")
        events = decide(state, seat, ACTIONS[index])
        if isinstance(events, Rejection):
            raise IllegalAction(ACTIONS[index], events.reason)
        for event in events:
            self._apply(event)
        return self._settle()

    def _settle(self) -> list[int]:
        """Append every derived event now due; the seats their scores eliminated."""
        state = self.state
        out: list[int] = []
        while (owed := due(state)) is not None:
            self._apply(owed)
            if type(owed) is T31DealScored:
                out.extend(owed.eliminated)
        return out

    def _apply(self, event: Event) -> None:
        self.state.apply(event)
        self.know.apply(event)
        if self.keep_log:
            self.log.append(event)

    def places(self) -> list[int]:
        """Each seat's place so far (final for the eliminated seats, and for all at the end)."""
        return self.state.places()

    def reward(self, seat: int, mode: RewardMode = "place") -> float:
        """``seat``'s reward for its place (final once it is eliminated or the game is over)."""
        return reward(self.state.places(), seat, mode)

    def replay(self) -> ThirtyOneState:
        """The state its log folds to (a check that the log is a table's log)."""
        return fold(self.log)
