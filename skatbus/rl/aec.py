"""A PettingZoo AEC environment of one whole deal of Skat over the pure engine (no bus).

One episode is one deal: bidding, the skat (pick up or play hand), the discard, the
declaration with its announcements, Kontra and Re when ``rules.kontra`` is on, and the tricks;
a Ramsch when ``rules.ramsch`` is on and all pass. Agents take turns as the rules say.

* **Agents** are table seats, ``"player_0"`` ... ``"player_{n-1}"``. The deal moves round the
  table as at a real one: every ``reset()`` deals the next deal, and the dealer rotates
  (``protocol.dealing.dealer_seat``: seat 0 is forehand in the first deal after a seeded reset),
  so every seat plays every position. ``reset(options={"dealer": seat})`` picks the dealer.
* **4 players** (``Rules(players=4)``): the dealer sits the deal out, as at the table. It is
  not among ``agents`` for that episode (``agents`` are the three active seats, a subset of
  ``possible_agents``); its share of the result (0, or the Seeger-Fabian defender bonus of 30
  when the declarer loses) is in every agent's final ``infos[agent]["result"].scores`` /
  ``.seeger_fabian``, indexed by table seat.
* **Observations**: ``{"observation": float32[404], "action_mask": int8[629]}`` (see
  ``skatbus.rl.encoding`` and ``skatbus.rl.actions`` for both layouts). The mask is all 0
  for an agent that is not to move.
* **Actions**: an index into ``skatbus.rl.actions.ACTIONS``. An illegal index raises
  ``protocol.IllegalAction`` (a ``ValueError``) and changes nothing: mask your policy.
* **Rewards**: 0 until the deal ends, then every agent's score for the deal in game points
  (``protocol.scoring``: the declarer wins or loses the game value, the defenders 0) or, with
  ``seeger_fabian=True``, in Seeger-Fabian points. For three players they equal
  ``Deal.result()`` by deal position. Single deals carry no Bock.
* ``reset(options={"deal": "some seed"})`` deals the cards of ``protocol.dealing.deal_from_seed``
  (the project's seeds, for duplicate comparisons); otherwise the env's random generator
  shuffles. Other option keys are ignored.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from protocol.skat.dealing import deal_from_seed, dealer_seat
from protocol.skat.rules import Rules
from protocol.skat.scoring import DealResult

from .actions import N_ACTIONS, bits_to_mask
from .encoding import OBS_SIZE, encode
from .game import DealGame

Obs = dict[str, Any]
"""``{"observation": float32 array, "action_mask": int8 array}``."""


def observation_space() -> spaces.Dict:
    """The observation space of every agent (and of the Gymnasium wrapper)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        }
    )


class SkatAECEnv(AECEnv[str, Obs, np.int64]):
    """One deal of Skat for 3 (or 4, the dealer sitting out) agents; see the module docstring."""

    metadata: dict[str, Any] = {"name": "skat_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        players: int | None = None,
        seeger_fabian: bool | None = None,
        render_mode: str | None = None,
    ) -> None:
        """``rules`` as a table would have them (``players``, if given, overrides theirs);
        rewards in Seeger-Fabian points if ``seeger_fabian`` (default: ``rules.seeger_fabian``)."""
        super().__init__()  # type: ignore[no-untyped-call]  # pettingzoo's __init__ has no annotations
        rules = rules or Rules()
        if players is not None and players != rules.players:
            rules = msgspec.structs.replace(rules, players=players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.rules = rules
        self.seeger_fabian = rules.seeger_fabian if seeger_fabian is None else seeger_fabian
        self.render_mode = render_mode
        self.game = DealGame(rules)
        self.possible_agents = [f"player_{s}" for s in range(rules.players)]
        self._obs_space = observation_space()
        self._act_space = spaces.Discrete(N_ACTIONS)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self._obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self._act_space)
        self._rng = np.random.default_rng()
        self._deal_no = 0
        self._agent_of: tuple[str, str, str] = ("player_0", "player_1", "player_2")
        self._zero_mask = np.zeros(N_ACTIONS, np.int8)
        self.agents: list[str] = []
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection = "player_0"

    def observation_space(self, agent: str) -> spaces.Space[Obs]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[np.int64]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal the next deal (see the module docstring for ``seed`` and ``options``)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._deal_no = 0
        self._deal_no += 1
        options = options or {}
        n = self.rules.players
        dealer = int(options.get("dealer", dealer_seat(self._deal_no, n)))
        cards = deal_from_seed(str(options["deal"])) if "deal" in options else None
        game = self.game
        game.new_deal(dealer, cards, self._rng)
        agent_of = tuple(self.possible_agents[s] for s in game.seats)
        self._agent_of = agent_of  # type: ignore[assignment]
        self.agents = [a for a in self.possible_agents if a in agent_of]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        to_move = game.deal.to_move
        assert to_move is not None
        self.agent_selection = agent_of[to_move]

    def observe(self, agent: str) -> Obs:
        deal = self.game.deal
        pos = self._agent_of.index(agent)
        mask = bits_to_mask(self.game.legal_bits()) if deal.to_move == pos else self._zero_mask.copy()
        return {"observation": encode(deal, pos), "action_mask": mask}

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # type: ignore[arg-type]  # None, as PettingZoo asks of a finished agent
            return
        if action is None:
            raise ValueError(f"{agent} is to move: None is only for agents whose deal is over")
        game = self.game
        game.push(int(action))
        self._cumulative_rewards[agent] = 0.0
        to_move = game.deal.to_move
        if to_move is not None:
            self.agent_selection = self._agent_of[to_move]
            return
        result = game.result()
        self._finish(result)
        if self.render_mode == "human":
            self.render()

    def _finish(self, result: DealResult) -> None:
        """The deal is over: everyone's reward, terminated, the result in the infos."""
        scores = result.seeger_fabian if self.seeger_fabian else result.scores
        for agent in self.agents:
            self.rewards[agent] = float(scores[int(agent.rsplit("_", 1)[1])])
            self.terminations[agent] = True
            self.infos[agent] = {"result": result}
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The deal as a person reads it (every hand shown: this is the referee's view)."""
        text = str(self.game.deal)
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> SkatAECEnv:
    """The PettingZoo-style constructor: ``env(rules=Rules(kontra=True), seeger_fabian=True)``."""
    return SkatAECEnv(**kwargs)


raw_env = env
