"""A Gymnasium single-agent environment: one seat learns, built-in bots play the others.

Each episode is one deal (as in ``skatbus.rl.aec``): ``reset()`` deals, the bots act until it
is the learner's turn, and every ``step(action)`` plays the learner's action and then the
bots' until the learner is to move again or the deal is over. The observation and action
layouts are the AEC environment's (``skatbus.rl.encoding``, ``skatbus.rl.actions``): a Dict
of ``"observation"`` and ``"action_mask"``. The reward is 0 until the deal ends, then the
learner's score for it in game points (or Seeger-Fabian points).

* ``opponents``: a built-in bot's name (``skatbus.bots.BOTS``: "random", "stepping-random",
  "heuristic") for every other seat, or one bot or name per other seat in seat order. A bot
  is anything with ``act(obs: Update) -> Command``; it receives exactly the ``Update`` it
  would get over the bus (the deal is kept in a ``TableState`` for that), so bots written for
  tournaments play here unchanged.
* The dealer rotates every ``reset()`` as at a table, so the learner plays every position.
  At a 4-player table a deal the learner would deal is skipped: the learner always plays.
* An illegal action is, by default, replaced by the one a seat that runs out of time gets
  (``protocol.decide.default_action``: pass, the weakest card, ...) and flagged as
  ``info["illegal_action"]``: the protocol's own answer to a seat that fails to act, and what
  lets generic tools (``check_env`` samples actions without the mask) step the env. With
  ``illegal="raise"`` it raises ``protocol.IllegalAction`` instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Literal

import gymnasium
import msgspec
import numpy as np

from protocol.errors import IllegalAction
from protocol.skat.deal import Deal
from protocol.skat.dealing import deal_from_seed, dealer_seat
from protocol.skat.decide import default_action
from protocol.skat.rules import Rules
from skatbus.bots import Bot, make_bot

from .actions import N_ACTIONS, bits_to_mask, index_of
from .aec import Obs, observation_space
from .encoding import encode
from .game import DealGame


class SkatGymEnv(gymnasium.Env[Obs, np.int64]):
    """One seat of a deal against bots; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"]}

    def __init__(
        self,
        opponents: str | Bot | Sequence[str | Bot] = "heuristic",
        *,
        seat: int = 0,
        rules: Rules | None = None,
        players: int | None = None,
        seeger_fabian: bool | None = None,
        illegal: Literal["default", "raise"] = "default",
        bot_seed: str = "",
        render_mode: str | None = None,
    ) -> None:
        """The learner sits at table seat ``seat``; ``bot_seed`` seeds the named bots (their
        choices also depend on the deal, so a seeded ``reset`` replays the same episode)."""
        rules = rules or Rules()
        if players is not None and players != rules.players:
            rules = msgspec.structs.replace(rules, players=players)
        if not 0 <= seat < rules.players:
            raise ValueError(f"seat {seat} is not a seat of a {rules.players}-player table")
        if illegal not in ("default", "raise"):
            raise ValueError("illegal must be 'default' or 'raise'")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.rules = rules
        self.seat = seat
        self.seeger_fabian = rules.seeger_fabian if seeger_fabian is None else seeger_fabian
        self.illegal = illegal
        self.render_mode = render_mode
        others = [s for s in range(rules.players) if s != seat]
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            opponents = [opponents] * len(others)
        if len(opponents) != len(others):
            raise ValueError(f"{len(opponents)} opponents for the {len(others)} other seats")
        self.bots: dict[int, Bot] = {
            s: make_bot(o, f"{bot_seed}/{s}") if isinstance(o, str) else o for s, o in zip(others, opponents)
        }
        self.game = DealGame(rules, views=True)
        self.observation_space = observation_space()
        self.action_space = gymnasium.spaces.Discrete(N_ACTIONS)
        self._deal_no = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Obs, dict[str, Any]]:
        """Deal the next deal and let the bots act up to the learner's first turn. ``options``:
        ``"dealer"`` (a seat other than the learner's at 4 players), ``"deal"`` (a seed for
        ``protocol.dealing.deal_from_seed``)."""
        super().reset(seed=seed)
        if seed is not None:
            self._deal_no = 0
        options = options or {}
        n = self.rules.players
        self._deal_no += 1
        if n == 4 and dealer_seat(self._deal_no, n) == self.seat:
            self._deal_no += 1
        dealer = int(options.get("dealer", dealer_seat(self._deal_no, n)))
        if n == 4 and dealer == self.seat:
            raise ValueError("the learner's seat cannot deal: it would sit the deal out")
        cards = deal_from_seed(str(options["deal"])) if "deal" in options else None
        name = f"rl-{int(self.np_random.integers(2**62))}"
        self.game.new_deal(dealer, cards, self.np_random, name)
        self._play_bots()
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Obs, float, bool, bool, dict[str, Any]]:
        game = self.game
        if game.over:
            raise RuntimeError("the deal is over: call reset()")
        index = int(action)
        info: dict[str, Any] = {"illegal_action": False}
        if not (0 <= index < N_ACTIONS and game.legal_bits() >> index & 1):
            if self.illegal == "raise":
                game.push(index)  # raises IllegalAction with the reason
            index = index_of(default_action(game.deal), game.deal)
            info["illegal_action"] = True
        game.push(index)
        self._play_bots()
        reward = 0.0
        if game.over:
            result = game.result()
            reward = float((result.seeger_fabian if self.seeger_fabian else result.scores)[self.seat])
            info["result"] = result
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, game.over, False, info

    def _play_bots(self) -> None:
        """Let the bots act until the learner is to move or the deal is over."""
        game = self.game
        while (seat := game.to_move) is not None and seat != self.seat:
            pos = game.pos_of[seat]
            action = self.bots[seat].act(game.update(pos))
            if inspect.isawaitable(action):
                raise TypeError(f"the bot at seat {seat} is async; the environment needs a plain act()")
            try:
                game.push(index_of(action, game.deal))
            except (KeyError, IllegalAction) as exc:
                raise RuntimeError(f"the bot at seat {seat} chose an illegal action {action}: {exc}") from None

    def _obs(self) -> Obs:
        game = self.game
        pos = game.pos_of[self.seat]
        bits = game.legal_bits() if game.deal.to_move == pos else 0
        return {"observation": encode(game.deal, pos), "action_mask": bits_to_mask(bits)}

    @property
    def deal(self) -> Deal:
        """The deal in progress (every hand: for inspection, not for the learner)."""
        return self.game.deal

    def render(self) -> str | None:
        text = str(self.game.deal)
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None
