"""The PettingZoo and Gymnasium environments: their APIs' own checkers, rewards, seats."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test.api_test import api_test
from pettingzoo.test.seed_test import check_environment_deterministic

from protocol.errors import IllegalAction
from protocol.skat.commands import PASS
from protocol.skat.rules import Rules
from skatbus.bots import RandomBot
from skatbus.rl import SkatAECEnv, SkatGymEnv
from skatbus.rl.actions import PASS_INDEX, legal_indices
from skatbus.rl.encoding import cards_in

from .randomdeals import pick


@pytest.mark.parametrize(
    "rules", [Rules(), Rules(kontra=True, ramsch=True), Rules(players=4, profile="classic")], ids=repr
)
def test_the_aec_env_passes_pettingzoos_api_test(rules: Rules) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no legal actions" for agents not to move: by design
        api_test(SkatAECEnv(rules), num_cycles=200)  # type: ignore[no-untyped-call]


def test_the_aec_env_is_deterministic_under_a_seed() -> None:
    two = SkatAECEnv(Rules(kontra=True)), SkatAECEnv(Rules(kontra=True))
    check_environment_deterministic(*two, 100)  # type: ignore[no-untyped-call]


def _play_aec(env: SkatAECEnv, rng: random.Random) -> dict[str, float]:
    """Play one deal with random legal actions; the rewards ``last()`` reports at the end."""
    final: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
        else:
            assert obs is not None
            env.step(pick(rng, np.flatnonzero(obs["action_mask"]).tolist()))
    return final


@pytest.mark.parametrize("sf", [False, True], ids=["list", "seeger-fabian"])
def test_rewards_are_the_engines_result(sf: bool) -> None:
    env = SkatAECEnv(Rules(kontra=True, ramsch=True), seeger_fabian=sf)
    rng = random.Random(5)
    env.reset(seed=5)
    kinds = set()
    for _ in range(150):
        env.reset()
        deal, seats = env.game.deal, env.game.seats
        final = _play_aec(env, rng)
        result = deal.result()  # deal positions
        by_pos = result.seeger_fabian if sf else result.scores
        assert final == {f"player_{seats[p]}": float(by_pos[p]) for p in range(3)}
        kinds.add(result.kind)
    assert kinds == {"game", "ramsch"}


def test_four_players_the_dealer_sits_out_and_gets_its_bonus() -> None:
    env = SkatAECEnv(Rules(players=4), seeger_fabian=True)
    rng = random.Random(6)
    env.reset(seed=6)
    dealers = set()
    for _ in range(80):
        env.reset()
        game = env.game
        dealer = f"player_{game.dealer}"
        dealers.add(game.dealer)
        assert dealer not in env.agents and len(env.agents) == 3 and env.possible_agents[3] == "player_3"
        deal = game.deal
        final = _play_aec(env, rng)
        three = deal.result()  # three-player Seeger-Fabian: defenders +40 on a loss
        lost = three.kind == "game" and not three.won
        for p, seat in enumerate(game.seats):
            want = three.seeger_fabian[p] - (10 if lost and p != deal.declarer else 0)
            assert final[f"player_{seat}"] == want
        assert game.result().seeger_fabian[game.dealer] == (30 if lost else 0)
    assert dealers == {0, 1, 2, 3}


def test_the_dealer_rotates_and_can_be_chosen() -> None:
    env = SkatAECEnv()
    env.reset(seed=1)
    assert env.game.seats == (0, 1, 2) and env.agent_selection == "player_1"  # middlehand bids first
    env.reset()
    assert env.game.seats == (1, 2, 0)
    env.reset(options={"dealer": 0, "deal": "demo"})
    assert env.game.seats == (1, 2, 0) and env.game.dealer == 0
    from protocol.skat.dealing import deal_from_seed

    assert tuple(env.game.deal.initial_hands) == deal_from_seed("demo")[0]


def test_an_illegal_aec_action_raises_and_changes_nothing() -> None:
    env = SkatAECEnv()
    env.reset(seed=2)
    with pytest.raises(IllegalAction):
        env.step(0)  # playing a card while bidding
    assert env.game.deal.history == [] and env.agent_selection == "player_1"
    env.step(PASS_INDEX)
    assert env.game.deal.history == [(1, PASS)]


def test_observations_are_the_acting_seats_own() -> None:
    env = SkatAECEnv()
    env.reset(seed=3)
    for agent in env.possible_agents:
        obs = env.observe(agent)
        pos = env.game.pos_of[int(agent[-1])]
        assert cards_in(obs["observation"], "hand") == env.game.deal.hands[pos]
        assert obs["action_mask"].any() == (agent == env.agent_selection)


@pytest.mark.parametrize("opponents", ["random", "heuristic"])
def test_the_gym_env_passes_gymnasiums_check_env(opponents: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SkatGymEnv(opponents), skip_render_check=True)


@pytest.mark.parametrize("players", [3, 4])
def test_gym_episodes_against_bots_score_as_the_engine(players: int) -> None:
    env = SkatGymEnv("stepping-random", seat=1, players=players, rules=Rules(kontra=True, ramsch=True))
    rng = random.Random(7)
    positions = set()
    for episode in range(40):
        obs, info = env.reset(seed=7 if episode == 0 else None)
        assert env.game.dealer != 1 or players == 3
        pos = env.game.pos_of[1]
        positions.add(pos)
        done, total = False, 0.0
        while not done:
            assert env.game.to_move == 1 and obs["action_mask"].any()
            obs, reward, done, truncated, info = env.step(pick(rng, np.flatnonzero(obs["action_mask"]).tolist()))
            assert not info["illegal_action"] and not truncated
            total += reward
        assert not obs["action_mask"].any()
        assert total == info["result"].scores[1] == env.deal.result().scores[pos]
    assert positions == {0, 1, 2}


def test_an_illegal_gym_action_gets_the_timeout_default_or_raises() -> None:
    env = SkatGymEnv("random")
    obs, _ = env.reset(seed=4)
    before = len(env.deal.history)
    _, _, _, _, info = env.step(0 if not obs["action_mask"][0] else PASS_INDEX + 1)
    assert info["illegal_action"]
    assert env.deal.history[before][1] == PASS  # the time-out default while bidding
    strict = SkatGymEnv("random", illegal="raise")
    strict.reset(seed=4)
    with pytest.raises(IllegalAction):
        strict.step(31 if not legal_indices(strict.deal)[0] == 31 else 627)


def test_gym_opponents_can_be_bot_objects() -> None:
    env = SkatGymEnv([RandomBot("a"), "heuristic"], seat=2)
    obs, _ = env.reset(seed=0)
    assert env.game.to_move == 2
    with pytest.raises(ValueError, match="opponents"):
        SkatGymEnv(["random"])
