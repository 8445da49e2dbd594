"""A Gymnasium single-agent environment of Thirty-one: one seat learns, a policy plays the others.

Each episode is one whole game, as in ``skatbus.rl.thirty_one_aec``: ``reset()`` opens a table
and lets the other seats act until it is the learner's turn, and every ``step(action)`` plays
the learner's action and then the others' until the learner is to move again, is eliminated
or the game is over. The observation and action layouts are the AEC environment's
(``skatbus.rl.thirty_one_encoding``, ``skatbus.rl.thirty_one_actions``): a Dict of
``"observation"`` and ``"action_mask"``. The reward is 0 until the episode ends, then the
learner's place as a reward (``reward="place"``: +1 first to -1 last; ``"win"``: 1 for the
winner; see ``skatbus.rl.thirty_one_game``). The episode ends (``terminated``) when the
learner is eliminated, its place being fixed then, or when the game ends; ``info["place"]``
says where it finished.

* ``opponents``: for every other seat, or one per other seat in seat order, either the name
  of a built-in bot (``skatbus.thirty_one_bots.BOTS``: "random", "heuristic"), a bot (anything
  with ``act(update) -> Command``, given exactly the ``T31Update`` a remote player gets: its
  seat's ``ThirtyOneView``), or a policy over this environment's own observations (a callable
  ``policy(obs) -> action index``, ``obs`` the Dict of its seat: for self-play).
* ``seat``: the learner's table seat (the last seat deals first, T6), or None for a seat
  drawn at every ``reset``.
* Every ``ThirtyOneRules`` option is a keyword argument (``ThirtyOneGymEnv(players=4,
  throw_down=True)``), as in the AEC environment.
* An illegal action is, by default, replaced by the one a seat that runs out of time gets
  (``protocol.thirty_one.default_action``: take the stock's top card, discard the card whose
  loss leaves the best hand) and flagged as ``info["illegal_action"]``: the protocol's own
  answer to a seat that fails to act, and what lets generic tools (``check_env`` samples
  actions without the mask) step the env. With ``illegal="raise"`` it raises
  ``protocol.IllegalAction`` instead.
* ``reset`` always returns a decision of the learner's: a game in which it is out before its
  first turn (only a 31 in the first deal with ``coins=1, county=False`` can do that) is
  skipped and another drawn.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal

import gymnasium
import numpy as np

from protocol.errors import IllegalAction
from protocol.thirty_one import ThirtyOneRules, default_action
from protocol.thirty_one.deal import Deal
from skatbus.thirty_one_bots import T31Bot, make_bot, observe

from .thirty_one_actions import N_ACTIONS, bits_to_mask, index_of
from .thirty_one_aec import Obs, observation_space, table_seed
from .thirty_one_encoding import encode
from .thirty_one_game import SKIPPED_GAMES, RewardMode, ThirtyOneGame, check_players, check_reward, make_rules

Policy = Callable[[Obs], int]
"""A policy over the environment's observations: the Dict of its seat -> an action index."""
Opponent = str | T31Bot | Policy


class ThirtyOneGymEnv(gymnasium.Env[Obs, np.int64]):
    """One seat of a game of Thirty-one against other players; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"]}

    def __init__(
        self,
        opponents: Opponent | Sequence[Opponent] = "random",
        *,
        seat: int | None = 0,
        rules: ThirtyOneRules | None = None,
        players: int = 3,
        reward: RewardMode = "place",
        illegal: Literal["default", "raise"] = "default",
        bot_seed: str = "",
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        """``bot_seed`` seeds the named bots (their choices also depend on the table and the
        position in its log, so a seeded ``reset`` replays the same episode)."""
        self.rules = make_rules(rules, options)
        self.players = check_players(players)
        self.reward_mode = check_reward(reward)
        if seat is not None and not 0 <= seat < self.players:
            raise ValueError(f"seat {seat} is not a seat of a {self.players}-player table")
        if illegal not in ("default", "raise"):
            raise ValueError("illegal must be 'default' or 'raise'")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.fixed_seat = seat
        self.seat = seat if seat is not None else 0
        """The learner's seat in the episode in progress."""
        self.illegal = illegal
        self.render_mode = render_mode
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            opponents = [opponents] * (self.players - 1)
        if len(opponents) != self.players - 1:
            raise ValueError(f"{len(opponents)} opponents for the {self.players - 1} other seats")
        self._opponents = list(opponents)
        self._bot_seed = bot_seed
        self.others: dict[int, T31Bot | Policy] = {}
        self._seat_others(self.seat)
        self.game = ThirtyOneGame(self.rules, self.players)
        self.observation_space = observation_space()
        self.action_space = gymnasium.spaces.Discrete(N_ACTIONS)

    def _seat_others(self, seat: int) -> None:
        """The opponents in the seats other than ``seat``, in seat order."""
        seats = [s for s in range(self.players) if s != seat]
        self.others = {}
        for s, o in zip(seats, self._opponents):
            if isinstance(o, str):
                self.others[s] = make_bot(o, f"{self._bot_seed}/{s}")
            elif hasattr(o, "act") or callable(o):
                self.others[s] = o
            else:
                raise TypeError(f"opponent {o!r} is neither a bot name, a bot (act) nor a policy (callable)")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Obs, dict[str, Any]]:
        """Start a new game and let the others act up to the learner's first turn. ``options``:
        ``"table_seed"`` (play that table seed's deals), ``"seat"`` (the learner's seat for this
        episode)."""
        super().reset(seed=seed)
        options = options or {}
        seat = options.get("seat", self.fixed_seat)
        if seat is None:
            seat = int(self.np_random.integers(self.players))
        if not 0 <= int(seat) < self.players:
            raise ValueError(f"seat {seat} is not a seat of a {self.players}-player table")
        if int(seat) != self.seat or not self.others:
            self.seat = int(seat)
            self._seat_others(self.seat)
        for _ in range(SKIPPED_GAMES):
            if "table_seed" in options:
                name = str(options["table_seed"])
            else:
                name = table_seed(self.np_random)
            out = self.game.new_game(name, table=name)
            if self.seat not in out:
                self._play_others()
            if self.game.to_move == self.seat:
                return self._obs(), {}
            if "table_seed" in options:
                raise ValueError(f"table seed {name!r}: seat {self.seat} is out before its first turn")
        raise RuntimeError(f"{SKIPPED_GAMES} games in a row ended seat {self.seat}'s game before its first turn")

    def step(self, action: Any) -> tuple[Obs, float, bool, bool, dict[str, Any]]:
        game = self.game
        if game.to_move != self.seat:
            raise RuntimeError("the episode is over: call reset()")
        index = int(action)
        info: dict[str, Any] = {"illegal_action": False}
        if not (0 <= index < N_ACTIONS and game.legal_bits() >> index & 1):
            if self.illegal == "raise":
                game.push(index)  # raises IllegalAction with the reason
            index = index_of(default_action(game.state, self.seat))
            info["illegal_action"] = True
        out = game.push(index)
        done = self.seat in out
        if not done:
            done = self._play_others()
        reward = 0.0
        if done:
            reward = game.reward(self.seat, self.reward_mode)
            info["place"] = game.places()[self.seat]
            if game.over:
                info["result"] = game.state.result()
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, done, False, info

    def _play_others(self) -> bool:
        """Let the others act until the learner is to move; whether the learner's game ended."""
        game = self.game
        while (seat := game.to_move) is not None and seat != self.seat:
            other = self.others[seat]
            if hasattr(other, "act"):
                command = other.act(observe(game.state, seat))
                if inspect.isawaitable(command):
                    raise TypeError(f"the bot at seat {seat} is async; the environment needs a plain act()")
                try:
                    index = index_of(command)
                except (KeyError, TypeError):
                    raise RuntimeError(f"the bot at seat {seat} chose {command!r}: not a Thirty-one action") from None
            else:
                bits = game.legal_bits()
                index = int(
                    other({"observation": encode(game.state, game.know, seat), "action_mask": bits_to_mask(bits)})
                )
            try:
                out = game.push(index)
            except IllegalAction as exc:
                raise RuntimeError(f"the player at seat {seat} chose an illegal action: {exc}") from None
            if self.seat in out:
                return True
        return game.over

    def _obs(self) -> Obs:
        game = self.game
        return {
            "observation": encode(game.state, game.know, self.seat),
            "action_mask": bits_to_mask(game.legal_bits(self.seat)),
        }

    @property
    def deal(self) -> Deal | None:
        """The deal in progress (every hand: for inspection, not for the learner)."""
        return self.game.deal

    def render(self) -> str | None:
        state = self.game.state
        text = f"deal {state.deal_no}, coins {state.coins}, kitty {state.kitty}, active {state.active}\n{state.deal!r}"
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None
