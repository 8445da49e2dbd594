"""The ``envs`` section: the RL environments of ``skatbus.rl`` against the engine they drive.

What it measures (one process, one thread), every workload a fixed number of deals with a
fresh ``random.Random(opts.seed)`` per call, so all repeats do identical work:

* **engine, random actions**: ``Deal.legal_actions()`` + ``push`` of a random one, over
  whole deals (dealing included). The floor the environments stand on.
* **DealGame, random indices**: the same through ``skatbus.rl.game.DealGame`` by action
  index (legal set as bits, index lookup, legality test), no observations.
* **AEC env, masked random policy**: PettingZoo's loop as a user writes it: ``agent_iter``,
  ``last()`` (the observation vector and the action mask of the seat to move), a uniform
  pick among the mask's ones, ``step``. A step is one action of a seat.
* **Gym env vs bots**: one learning seat with a masked random policy, the other seats played
  by built-in bots that get real ``Update`` views (a ``TableState`` is kept for them). A step
  is one learner action, the bots' actions in between included.
* **OpenSpiel skat** (``pyspiel.load_game("skat")``), if ``open_spiel`` is installed (the
  ``bench`` extra): random play, with the player's ``observation_tensor`` each step and
  without. Its game is smaller than ours (a choice of game instead of the bidding, no hand
  games, announcements or Kontra), and the chance nodes that deal the cards are timed but
  not counted as steps, as our dealing is timed inside ``reset``.

"x baseline" is, as in every section, the median per-repeat multiple of the interpreter
baseline (``bench.engine.baseline``) timed right before each repeat. The notes compare
figures of this run with each other and say which two (best repeat over best repeat).
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from protocol.skat.deal import Deal
from protocol.skat.dealing import deal_from_seed
from protocol.skat.rules import Rules

from . import BASELINE_RATE, Options, Rate, Row, measure, times
from .engine import baseline


def engine_actions(seeds: list[str], seed: int) -> int:
    """Random legal actions through ``Deal`` over one deal per seed; returns the actions."""
    choice = random.Random(seed).choice
    actions = 0
    for s in seeds:
        deal = Deal(*deal_from_seed(s))
        while not deal.is_over:
            deal.push(choice(deal.legal_actions()))
            actions += 1
        deal.result()
    return actions


def dealgame_steps(deals: int, seed: int) -> int:
    """Random legal indices through ``DealGame`` (no observations); returns the actions."""
    from skatbus.rl.actions import legal_indices
    from skatbus.rl.game import DealGame

    choice = random.Random(seed).choice
    rng = np.random.default_rng(seed)
    game = DealGame(Rules())
    steps = 0
    for d in range(deals):
        game.new_deal(d % 3, rng=rng)
        while not game.over:
            game.push(choice(legal_indices(game.deal)))
            steps += 1
        game.result()
    return steps


def aec_steps(deals: int, seed: int, rules: Rules | None = None) -> int:
    """The PettingZoo loop with a uniform masked policy over ``deals`` deals; returns the steps."""
    from skatbus.rl.aec import SkatAECEnv

    choice = random.Random(seed).choice
    env = SkatAECEnv(rules)
    env.reset(seed=seed)
    steps = 0
    for d in range(deals):
        if d:
            env.reset()
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            assert obs is not None
            env.step(choice(np.flatnonzero(obs["action_mask"]).tolist()))
            steps += 1
    return steps


def gym_steps(deals: int, seed: int, opponents: str) -> tuple[int, int]:
    """One learner seat (uniform masked policy) against ``opponents``; returns (learner steps,
    all actions of the deals)."""
    from skatbus.rl.gym import SkatGymEnv

    choice = random.Random(seed).choice
    env = SkatGymEnv(opponents, bot_seed="bench")
    steps = actions = 0
    for d in range(deals):
        obs, _ = env.reset(seed=seed if d == 0 else None)
        done = False
        while not done:
            obs, _reward, done, _truncated, _info = env.step(choice(np.flatnonzero(obs["action_mask"]).tolist()))
            steps += 1
        actions += len(env.deal.history)
    return steps, actions


def openspiel_steps(deals: int, seed: int, observe: bool) -> int:
    """Random play of OpenSpiel's skat over ``deals`` deals; returns the player actions."""
    import pyspiel

    game = pyspiel.load_game("skat")
    rng = random.Random(seed)
    choice = rng.choice
    steps = 0
    for _ in range(deals):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.chance_outcomes())[0])
                continue
            if observe:
                state.observation_tensor(state.current_player())
            state.apply_action(choice(state.legal_actions()))
            steps += 1
        state.returns()
    return steps


def _sizes(opts: Options) -> dict[str, int]:
    """Deals per repeat of each workload: a few tenths of a second each in the full run."""
    if opts.quick:
        return {"base": 2_000, "engine": 300, "game": 300, "aec": 150, "random": 60, "heuristic": 10, "spiel": 150}
    return {
        "base": 10_000,
        "engine": 2_000,
        "game": 2_000,
        "aec": 1_000,
        "random": 300,
        "heuristic": 40,
        "spiel": 1_000,
    }


def have_openspiel() -> bool:
    return importlib.util.find_spec("pyspiel") is not None


def run(opts: Options) -> list[Row]:
    """Measure every figure; see the module docstring."""
    n = _sizes(opts)
    reps, seed = opts.repeats, opts.seed

    def base_work() -> int:
        return baseline(n["base"], seed)

    def timed(work: Callable[[], int]) -> Rate:
        return measure(work, repeats=reps, baseline=base_work)

    def row(name: str, rate: Rate, unit: str, note: str = "") -> Row:
        relative = rate.relative or 1.0
        return Row(name, rate.best, unit, rate.median, None, relative, note, times(relative, BASELINE_RATE))

    base = measure(base_work, repeats=reps)
    seeds = [f"bench/{i}" for i in range(n["engine"])]
    engine = timed(lambda: engine_actions(seeds, seed))
    game = timed(lambda: dealgame_steps(n["game"], seed))
    aec = timed(lambda: aec_steps(n["aec"], seed))
    aec_kontra = timed(lambda: aec_steps(n["aec"], seed, Rules(kontra=True, ramsch=True)))
    per_learner: dict[str, float] = {}
    gyms: dict[str, Rate] = {}
    for bots in ("stepping-random", "heuristic"):
        steps, actions = gym_steps(n["random" if bots != "heuristic" else "heuristic"], seed, bots)
        per_learner[bots] = actions / steps
        deals = n["random" if bots != "heuristic" else "heuristic"]
        gyms[bots] = timed(lambda deals=deals, bots=bots: gym_steps(deals, seed, bots)[0])  # type: ignore[misc]

    def vs_engine(rate: Rate) -> str:
        return f"{rate.best / engine.best:.2f}x the engine row's actions/s"

    rows = [
        row("interpreter baseline", base, "units/s", "32 random() + list ops per unit"),
        row("engine, random actions", engine, "actions/s", f"Deal.legal_actions() + push; {n['engine']:,} deals"),
        row("DealGame, random indices", game, "actions/s", f"no observations; {vs_engine(game)}"),
        row("AEC env, masked random policy", aec, "steps/s", f"last() observes + masks; {vs_engine(aec)}"),
        row("  with Kontra/Re and Ramsch", aec_kontra, "steps/s", vs_engine(aec_kontra)),
    ]
    for bots, rate in gyms.items():
        rows.append(
            row(
                f"Gym env vs {bots} bots",
                rate,
                "learner steps/s",
                f"{per_learner[bots]:.1f} actions per learner step (bots' included); "
                f"{rate.best * per_learner[bots]:,.0f} actions/s",
            )
        )
    rows.extend(_openspiel_rows(opts, n["spiel"], aec, timed, row))
    return rows


def _openspiel_rows(opts: Options, deals: int, aec: Rate, timed: Any, row: Any) -> list[Row]:
    if not have_openspiel():
        return [
            Row(
                "OpenSpiel skat",
                0.0,
                "steps/s",
                note="not measured: open_spiel is not installed (pip install -e '.[bench]')",
            )
        ]
    spiel_obs: Rate = timed(lambda: openspiel_steps(deals, opts.seed, observe=True))
    spiel_bare: Rate = timed(lambda: openspiel_steps(deals, opts.seed, observe=False))
    steps = openspiel_steps(deals, opts.seed, observe=False) / deals
    return [
        row(
            "OpenSpiel skat, observation_tensor",
            spiel_obs,
            "steps/s",
            f"{steps:.1f} steps/deal; the AEC env row's steps/s are {aec.best / spiel_obs.best:.2f}x this",
        ),
        row("OpenSpiel skat, no observations", spiel_bare, "steps/s", "legal_actions() + apply_action (C++)"),
    ]


def profile(opts: Options, top: int = 25) -> str:
    """cProfile of the AEC loop and of the Gymnasium env against stepping-random bots, sorted by
    own time: where a step goes (observation, mask, engine, PettingZoo, the bots' views)."""
    import cProfile
    import io
    import pstats

    n = _sizes(opts)
    out = io.StringIO()
    for title, work in (
        (f"AEC env, {n['aec']:,} deals", lambda: aec_steps(n["aec"], opts.seed)),
        (
            f"Gym env vs stepping-random, {n['random']:,} deals",
            lambda: gym_steps(n["random"], opts.seed, "stepping-random"),
        ),
    ):
        prof = cProfile.Profile()
        prof.runcall(work)
        out.write(f"\n--- profile: {title}, top {top} by tottime ---\n")
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()
