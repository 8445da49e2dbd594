"""The Thirty-one PettingZoo and Gymnasium environments: their APIs' own checkers, whole games,
rewards by place, eliminations, seeding, opponents."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test.api_test import api_test
from pettingzoo.test.seed_test import check_environment_deterministic

from protocol.errors import IllegalAction
from protocol.thirty_one import GAME, T31Dealt, ThirtyOneRules, due, fold, view
from protocol.thirty_one.commands import TAKE_STOCK
from skatbus.rl import ThirtyOneAECEnv, ThirtyOneGymEnv
from skatbus.rl.thirty_one_actions import DISCARD_OFFSET, KNOCK_INDEX, LOOK_INDEX, TAKE_STOCK_INDEX, indices
from skatbus.rl.thirty_one_encoding import encode_view
from skatbus.thirty_one_bots import RandomBot

from .thirty_one_games import OPTION_SETS, OptionSet, option_id, pick

API_SETS = [OPTION_SETS[0], OPTION_SETS[1], OPTION_SETS[3], ({"players": 9, "coins": 1}, 0.3, 1)]


@pytest.mark.parametrize("option_set", API_SETS, ids=option_id)
def test_the_aec_env_passes_pettingzoos_api_test(option_set: OptionSet) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no legal actions" for agents not to move: by design
        api_test(ThirtyOneAECEnv(**option_set[0]), num_cycles=300)  # type: ignore[no-untyped-call]


def test_the_aec_env_is_deterministic_under_a_seed() -> None:
    two = ThirtyOneAECEnv(players=4, throw_down=True), ThirtyOneAECEnv(players=4, throw_down=True)
    check_environment_deterministic(*two, 500)  # type: ignore[no-untyped-call]


def play_aec(env: ThirtyOneAECEnv, rng: random.Random, knock: float = 0.3) -> dict[str, tuple[float, dict[str, Any]]]:
    """One game with random legal actions; each agent's (reward, info) as ``last()`` gives them
    when it is done. Checks the mask against the engine at every step."""
    final: dict[str, tuple[float, dict[str, Any]]] = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert not truncated
        if terminated:
            final[agent] = (reward, info)
            env.step(None)
            continue
        assert reward == 0.0 and obs is not None
        seat = int(agent.rsplit("_", 1)[1])
        state = env.game.state
        assert state.to_move == seat
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert legal == sorted(indices(env.game.legal_bits(seat)))
        assert len(legal) == len(state.legal_actions(seat))
        np.testing.assert_array_equal(obs["observation"], encode_view(view(state, seat)))
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(pick(rng, legal, knock))
    return final


@pytest.mark.parametrize("option_set", OPTION_SETS, ids=option_id)
def test_random_games_end_and_reward_the_places(option_set: OptionSet) -> None:
    options, knock, games = option_set
    env = ThirtyOneAECEnv(**options)
    rng = random.Random(8)
    env.reset(seed=8)
    n = env.players
    for g in range(max(2, games // 3)):
        if g:
            env.reset()
        final = play_aec(env, rng, knock)
        assert env.agents == [] and env.game.over
        places = env.game.places()
        assert set(final) == set(env.possible_agents)
        for agent, (reward, info) in final.items():
            seat = int(agent.rsplit("_", 1)[1])
            assert info["place"] == places[seat]  # fixed at elimination: the same at the end
            assert reward == env.game.reward(seat)
        assert sum(r for r, _ in final.values()) == pytest.approx(0.0)
        winners = [a for a, (_, info) in final.items() if info["place"] == 1]
        if len(winners) == 1:
            assert final[winners[0]][0] == 1.0
        # The agents whose game ended with the table's (the survivors, and those the last deal
        # eliminated) have the result; those out earlier were done before it existed.
        state = env.game.state
        at_end = {f"player_{s}" for s in range(n) if state.out_deal[s] in (0, state.deal_no)}
        assert {a for a, (_, info) in final.items() if "result" in info} == at_end
        assert final[winners[0]][1]["result"].places == places
        assert max(places) <= n


def test_an_eliminated_agent_is_done_at_once_with_its_final_place() -> None:
    env = ThirtyOneAECEnv(players=5, coins=1, reward="win")
    rng = random.Random(9)
    env.reset(seed=9)
    out_early = 0
    for agent in env.agent_iter():
        _, reward, terminated, _, info = env.last()
        if terminated:
            seat = int(agent[7:])
            if not env.game.over:
                out_early += 1
                assert seat not in env.game.state.active and info["place"] > 1 and reward == 0.0
                assert "result" not in info
            env.step(None)
            continue
        env.step(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]).tolist()))
    assert out_early >= 1


def test_win_rewards_sum_to_one() -> None:
    env = ThirtyOneAECEnv(players=3, reward="win", max_deals=2)
    rng = random.Random(10)
    env.reset(seed=10)
    for _ in range(10):
        env.reset()
        final = play_aec(env, rng)
        assert sum(r for r, _ in final.values()) == pytest.approx(1.0)


def test_a_table_seed_plays_that_tables_deals_and_a_seed_replays() -> None:
    env = ThirtyOneAECEnv(players=4, coins=2)
    env.reset(options={"table_seed": "duplicate/1"})
    table = fold([GAME.open_event("x", ["a", "b", "c", "d"], env.rules, "duplicate/1", {})])
    first = due(table)
    assert isinstance(first, T31Dealt) and first == env.game.log[1]
    logs = []
    for _ in range(2):
        env.reset(seed=11)
        play_aec(env, random.Random(11))
        logs.append(env.game.log)
    assert logs[0] == logs[1]
    env.reset(seed=12)
    play_aec(env, random.Random(11))
    assert env.game.log != logs[0]


def test_an_illegal_aec_action_raises_and_changes_nothing() -> None:
    env = ThirtyOneAECEnv()
    env.reset(seed=2)
    first = env.agent_selection
    before = list(env.game.log)
    with pytest.raises(IllegalAction, match="take a card first"):
        env.step(DISCARD_OFFSET)
    with pytest.raises(IllegalAction):
        env.step(LOOK_INDEX)  # no throw_down
    assert env.game.log == before and env.agent_selection == first
    env.step(TAKE_STOCK_INDEX)
    assert env.agent_selection == first and env.observe(first)["action_mask"][DISCARD_OFFSET:].sum() == 4


def test_options_reach_the_rules() -> None:
    env = ThirtyOneAECEnv(players=6, coins=4, county=False, three_of_a_kind="30.5", straight_flush=True,
                          min_knock=21, knock_in_first_round=False, throw_down=True, stock_out="void",
                          max_turns=50, max_deals=20)  # fmt: skip
    assert env.rules == ThirtyOneRules(
        coins=4, county=False, three_of_a_kind="30.5", straight_flush=True, min_knock=21,
        knock_in_first_round=False, throw_down=True, stock_out="void", max_turns=50, max_deals=20,
    )  # fmt: skip
    assert env.possible_agents == [f"player_{s}" for s in range(6)]
    assert ThirtyOneAECEnv(ThirtyOneRules(coins=7), players=2).rules.coins == 7
    with pytest.raises(TypeError):
        ThirtyOneAECEnv(jokers=True)
    with pytest.raises(ValueError):
        ThirtyOneAECEnv(players=1)
    with pytest.raises(ValueError):
        ThirtyOneAECEnv(reward="points")  # type: ignore[arg-type]


@pytest.mark.parametrize("opponents", ["random", "heuristic"])
def test_the_gym_env_passes_gymnasiums_check_env(opponents: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(ThirtyOneGymEnv(opponents, players=4), skip_render_check=True)


@pytest.mark.parametrize("option_set", OPTION_SETS[:5], ids=option_id)
def test_gym_games_end_with_the_learners_place(option_set: OptionSet) -> None:
    options, knock, _ = option_set
    env = ThirtyOneGymEnv("random", seat=1, **options)
    rng = random.Random(13)
    for episode in range(6):
        obs, _ = env.reset(seed=13 if episode == 0 else None)
        done, total, steps = False, 0.0, 0
        while not done:
            state = env.game.state
            assert state.to_move == 1
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            assert legal == sorted(indices(env.game.legal_bits(1))) and legal
            np.testing.assert_array_equal(obs["observation"], encode_view(view(state, 1)))
            obs, reward, done, truncated, info = env.step(pick(rng, legal, knock))
            assert not truncated and not info["illegal_action"]
            total += reward
            steps += 1
        assert total == env.game.reward(1) and info["place"] == env.game.places()[1]
        assert env.game.over or 1 not in env.game.state.active
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


def test_gym_seeding_replays_an_episode() -> None:
    def episode(seed: int) -> list[Any]:
        env = ThirtyOneGymEnv("random", players=3, bot_seed="b")
        obs, _ = env.reset(seed=seed)
        rng = random.Random(0)
        done = False
        while not done:
            obs, _, done, _, _ = env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        return env.game.log

    assert episode(5) == episode(5)
    assert episode(5) != episode(6)


def test_an_illegal_gym_action_gets_the_timeout_default_or_raises() -> None:
    env = ThirtyOneGymEnv("random", players=3)
    obs, _ = env.reset(seed=4)
    assert not obs["action_mask"][DISCARD_OFFSET:].any()
    before = len(env.game.log)
    _, _, _, _, info = env.step(DISCARD_OFFSET)  # a discard before taking a card
    assert info["illegal_action"]
    took = env.game.log[before]
    assert took.seat == 0 and took.source == "stock"  # type: ignore[attr-defined]  # the default: take stock
    strict = ThirtyOneGymEnv("random", players=3, illegal="raise")
    strict.reset(seed=4)
    with pytest.raises(IllegalAction):
        strict.step(DISCARD_OFFSET)


def test_gym_opponents_can_be_bots_or_policies_and_the_seat_can_vary() -> None:
    calls: list[int] = []

    def knocker(obs: dict[str, Any]) -> int:
        mask = obs["action_mask"]
        calls.append(int(mask.sum()))
        return KNOCK_INDEX if mask[KNOCK_INDEX] else int(np.flatnonzero(mask)[0])

    env = ThirtyOneGymEnv([RandomBot("a"), knocker, "heuristic"], players=4, seat=None)
    seats = set()
    for episode in range(12):
        obs, _ = env.reset(seed=episode)
        seats.add(env.seat)
        assert env.game.to_move == env.seat and obs["action_mask"].any()
        assert sorted(env.others) == [s for s in range(4) if s != env.seat]
        obs, *_ = env.step(TAKE_STOCK_INDEX)
    assert len(seats) > 1 and calls and all(c > 0 for c in calls)
    with pytest.raises(ValueError, match="opponents"):
        ThirtyOneGymEnv(["random"], players=3)
    with pytest.raises(ValueError, match="seat"):
        ThirtyOneGymEnv(seat=3, players=3)


def test_a_bot_that_answers_wrongly_is_reported() -> None:
    class Stubborn:
        def act(self, obs: Any) -> Any:
            return TAKE_STOCK  # also when it has to discard

    env = ThirtyOneGymEnv(Stubborn(), players=2, seat=1)
    with pytest.raises(RuntimeError, match="illegal"):
        env.reset(seed=0)


DEALT_31 = "dealt31/103"
"""A table seed whose first deal gives a seat 31 (found by trying seeds ``dealt31/0`` on): with
3 players, ``coins=1`` and ``county=False``, the other two are out before anyone acts."""


def test_a_game_decided_before_anyone_acts_is_skipped_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from skatbus.rl import thirty_one_aec, thirty_one_gym

    options = {"players": 3, "coins": 1, "county": False}
    env = ThirtyOneAECEnv(**options)  # type: ignore[arg-type]
    env.reset(options={"table_seed": DEALT_31})
    assert env.game.over and all(env.terminations.values())
    final = play_aec(env, random.Random(0))
    assert sorted(final[a][1]["place"] for a in final) == [1, 2, 2]

    seeds = iter([DEALT_31, DEALT_31, "fine/1", "fine/2"])
    monkeypatch.setattr(thirty_one_aec, "table_seed", lambda rng: next(seeds))
    env.reset(seed=1)
    assert not any(env.terminations.values()) and env.game.state.seed == "fine/1"

    seeds = iter([DEALT_31, "fine/2"])
    monkeypatch.setattr(thirty_one_gym, "table_seed", lambda rng: next(seeds))
    gym_env = ThirtyOneGymEnv("random", **options)  # type: ignore[arg-type]
    obs, _ = gym_env.reset(seed=1)
    assert gym_env.game.state.seed == "fine/2" and obs["action_mask"].any()
    with pytest.raises(ValueError, match="out before its first turn"):
        gym_env.reset(options={"table_seed": DEALT_31})
