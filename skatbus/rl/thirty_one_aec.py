"""A PettingZoo AEC environment of one whole game of Thirty-one over the pure engine (no bus).

One episode is one game (``protocol.thirty_one``, rules T1-T45): deal after deal, coins paid
into the kitty, seats eliminated, until one seat is left (T27) or ``max_deals`` deals are
played (T29). Agents take turns as the rules say; every option of ``ThirtyOneRules`` is a
constructor argument (``ThirtyOneAECEnv(players=5, coins=2, throw_down=True)``).

* **Agents** are table seats, ``"player_0"`` ... ``"player_{n-1}"``, 2 to 9 of them. The
  dealer rotates as at a table (T6: the last seat deals first); every seat plays every part.
* **Observations**: ``{"observation": float32[836], "action_mask": int8[57]}``: the seat's
  view (``skatbus.rl.thirty_one_encoding``: its own hand, the discard pile, the stock's size,
  coins, kitty, eliminations, the knocker, who took which card from the pile ...; never
  another hand or the stock's cards) and the legal actions (``skatbus.rl.thirty_one_actions``:
  0 take stock, 1 take discard, 2 knock, 3 look, 4 throw, 5 + i discard ``PACK[i]``). The mask
  is all 0 for an agent that is not to move (``look`` out of turn is left out: see there).
* **Actions**: an index. An illegal one raises ``protocol.IllegalAction`` (a ``ValueError``)
  and changes nothing: mask your policy.
* **Rewards**: 0 until an agent's game ends, then its place as a reward
  (``skatbus.rl.thirty_one_game``: ``reward="place"``, +1 first to -1 last, ties sharing the
  mean, the sum 0; or ``reward="win"``, 1 for the winner). An agent's game ends when it is
  eliminated (its place is fixed then) or when the game does: it is terminated at that step
  with its reward, its ``infos`` hold ``{"place": p}`` (and at the end, ``"result"``, the
  ``GameResult``), and it leaves ``agents`` after its last ``step(None)``, as PettingZoo
  expects. Nothing is truncated: the rules bound every game (``max_turns``, ``max_deals``).
* **Seeding**: ``reset(seed=s)`` seeds the generator that draws each game's table seed; the
  deals are the ones a real table with that table seed would deal. ``reset(options=
  {"table_seed": "abc"})`` plays table seed ``"abc"`` itself (for duplicate comparisons
  with tournaments and bots). A game that eliminates seats before anyone acts (only a dealt
  31 with ``coins=1, county=False`` can) is skipped and another drawn, so no agent is done
  after ``reset``; a ``table_seed`` is played as it is, its eliminated agents terminated
  (with their rewards) right after ``reset``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from protocol.thirty_one import ThirtyOneRules

from .thirty_one_actions import N_ACTIONS, bits_to_mask
from .thirty_one_encoding import HIGH, OBS_SIZE, encode
from .thirty_one_game import SKIPPED_GAMES, RewardMode, ThirtyOneGame, check_players, check_reward, make_rules

Obs = dict[str, Any]
"""``{"observation": float32 array, "action_mask": int8 array}``."""


def observation_space() -> spaces.Dict:
    """The observation space of every agent (and of the Gymnasium wrapper)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(np.zeros(OBS_SIZE, np.float32), HIGH.copy(), (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        }
    )


def table_seed(rng: np.random.Generator) -> str:
    """A table seed drawn from ``rng``."""
    return f"rl-{int(rng.integers(2**62))}"


class ThirtyOneAECEnv(AECEnv[str, Obs, np.int64]):
    """One game of Thirty-one for 2 to 9 agents; see the module docstring."""

    metadata: dict[str, Any] = {"name": "thirty_one_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}

    def __init__(
        self,
        rules: ThirtyOneRules | None = None,
        *,
        players: int = 3,
        reward: RewardMode = "place",
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        """``rules`` as a table would have them, with ``options`` (any ``ThirtyOneRules``
        field: ``coins``, ``county``, ``three_of_a_kind``, ``straight_flush``, ``min_knock``,
        ``knock_in_first_round``, ``throw_down``, ``stock_out``, ``max_turns``, ``max_deals``,
        ...) applied; ``players`` seats (2-9); ``reward`` "place" or "win"."""
        super().__init__()  # type: ignore[no-untyped-call]  # pettingzoo's __init__ has no annotations
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.rules = make_rules(rules, options)
        self.players = check_players(players)
        self.reward_mode = check_reward(reward)
        self.render_mode = render_mode
        self.game = ThirtyOneGame(self.rules, self.players)
        self.possible_agents = [f"player_{s}" for s in range(self.players)]
        self._obs_space = observation_space()
        self._act_space = spaces.Discrete(N_ACTIONS)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self._obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self._act_space)
        self._rng = np.random.default_rng()
        self._zero_mask = np.zeros(N_ACTIONS, np.int8)
        self.agents: list[str] = []
        self.rewards: dict[str, float] = {}
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection = "player_0"
        self._skip_agent_selection = None  # type: ignore[assignment]  # PettingZoo: None when no dead agent steps first

    def observation_space(self, agent: str) -> spaces.Space[Obs]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[np.int64]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (see the module docstring for ``seed`` and ``options``)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = options or {}
        given = "table_seed" in options
        for _ in range(SKIPPED_GAMES):
            name = str(options["table_seed"]) if given else table_seed(self._rng)
            out = self.game.new_game(name, table=name)
            if not out or given:
                break
        else:
            raise RuntimeError(f"{SKIPPED_GAMES} games in a row eliminated a seat before anyone acted")
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None  # type: ignore[assignment]
        self._select(out)

    def observe(self, agent: str) -> Obs:
        game = self.game
        seat = int(agent.rsplit("_", 1)[1])
        bits = game.legal_bits(seat)
        mask = bits_to_mask(bits) if bits else self._zero_mask.copy()
        return {"observation": encode(game.state, game.know, seat), "action_mask": mask}

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # type: ignore[arg-type]  # None, as PettingZoo asks of a finished agent
            return
        if action is None:
            raise ValueError(f"{agent} is to move: None is only for agents whose game is over")
        out = self.game.push(int(action))
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0.0
        self._select(out)
        if self.render_mode == "human":
            self.render()

    def _select(self, eliminated: list[int]) -> None:
        """Terminate the agents whose game just ended, with their rewards, and pick who is
        next: a terminated agent first (for its ``step(None)``), then the seat to move."""
        game = self.game
        ended = [f"player_{s}" for s in eliminated]
        if game.over:
            ended = [a for a in self.agents if not self.terminations[a]]
        places = game.places() if ended else []
        for agent in ended:
            seat = int(agent.rsplit("_", 1)[1])
            self.rewards[agent] = game.reward(seat, self.reward_mode)
            self.terminations[agent] = True
            self.infos[agent] = {"place": places[seat]}
            if game.over:
                self.infos[agent]["result"] = game.state.result()
        self._accumulate_rewards()
        mover = game.to_move
        if mover is not None:
            self.agent_selection = self.possible_agents[mover]
        self._deads_step_first()

    def render(self) -> str | None:
        """The table as a referee sees it (every hand shown: not an agent's view)."""
        state = self.game.state
        text = f"deal {state.deal_no}, coins {state.coins}, kitty {state.kitty}, active {state.active}\n{state.deal!r}"
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> ThirtyOneAECEnv:
    """The PettingZoo-style constructor: ``env(players=4, throw_down=True, reward="win")``."""
    return ThirtyOneAECEnv(**kwargs)


raw_env = env
