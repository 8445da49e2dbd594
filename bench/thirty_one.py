"""The ``thirty-one`` section: the Thirty-one engine on one core, next to Skat's random deals.

What it measures (one process, one thread, no I/O), and why:

* **Skat random deals (reference)**: ``bench.engine.play_random_deals``, the very workload of
  the ``engine`` section's "random deals" row, timed again here so that the Thirty-one rows
  can be given as multiples of it under the same machine conditions (sections run one after
  the other; a figure from another section would mix two moments of a noisy machine).
* **Thirty-one random games** (2, 3, 6 and 9 players, default options): a whole game as the
  services play it, ``protocol.thirty_one``: ``fold`` of ``table_opened/2``, then until
  ``table_closed`` every event ``due`` owes (deals, restocks, ends, scores) and, when a seat
  is to move, a uniformly random legal action (``random.Random.choice`` over
  ``ThirtyOneState.legal_actions``) through ``decide``. A game is many deals (to the last
  seat with coins, T27), so games/s is not comparable with deals/s as such: each row's note
  gives its deals and actions per game, and its multiple of the Skat row.
* **Thirty-one random deals, Deal only** (3 players): one deal through the bare
  ``protocol.thirty_one.deal.Deal`` (deck ``shuffle(seed, PACK)``, seeded restocks, random
  legal actions, ``lives()`` at the end): the like-for-like sibling of the Skat row, which
  also drives the bare ``protocol.deal.Deal``.
* **Thirty-one AEC env, masked random policy** (3 players): ``skatbus.rl.ThirtyOneAECEnv``'s
  loop as a user writes it (``agent_iter``, ``last()`` with the observation and the mask, a
  uniform pick among the mask's ones, ``step``), whole games; given as a multiple of the
  3-player games row's actions/s.

Uniform random play knocks often (a knock is one of about three choices at the start of a
turn), so its deals are short: these are engine figures, not a model of human games.

"x baseline" is, as in every section, the median per-repeat multiple of the interpreter
baseline (``bench.engine.baseline``) timed right before each repeat. The notes compare
figures of this run with each other and say which two (best repeat over best repeat).
Every workload is deterministic (fixed seeds, a fresh ``random.Random(opts.seed)`` per call).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import random
from collections.abc import Callable, Sequence

import numpy as np

from protocol.shuffle import shuffle
from protocol.thirty_one import GAME, PACK, ThirtyOneRules, decide, due, fold
from protocol.thirty_one.deal import Deal
from protocol.thirty_one.state import restock_seed

from . import BASELINE_RATE, Options, Rate, Row, measure, times
from .engine import baseline, play_random_deals

RULES = ThirtyOneRules()
"""The table defaults (3 coins, on the county, reshuffle an empty stock)."""
PLAYERS = (2, 3, 6, 9)


# --- workloads ---------------------------------------------------------------------------


def play_random_games(seeds: Sequence[str], seed: int, players: int, rules: ThirtyOneRules = RULES) -> tuple[int, int]:
    """One whole random game per table seed; returns (actions, deals)."""
    choice = random.Random(seed).choice
    names = [f"p{s}" for s in range(players)]
    actions = deals = 0
    for s in seeds:
        state = fold([GAME.open_event(s, names, rules, s, {})])
        while not state.closed:
            owed = due(state)
            if owed is not None:
                state.apply(owed)
                continue
            seat = state.to_move
            assert seat is not None, "nothing is due, the table is open, yet no one is to move"
            events = decide(state, seat, choice(state.legal_actions(seat)))
            assert isinstance(events, list), events
            for e in events:
                state.apply(e)
            actions += 1
        state.result()
        deals += state.deal_no
    return actions, deals


def play_random_deals_t31(seeds: Sequence[str], seed: int, players: int = 3, rules: ThirtyOneRules = RULES) -> int:
    """One random deal per seed through the bare ``Deal``; returns the actions pushed."""
    choice = random.Random(seed).choice
    order = list(range(players))
    actions = 0
    for s in seeds:
        deal = Deal(rules, players, order, shuffle(s, PACK), s)
        while not deal.ended:
            if deal.wants_restock:
                deal.restock(shuffle(restock_seed(s, deal.restocks + 1), deal.restock_cards()))
                continue
            seat = deal.seat
            deal.push(seat, choice(deal.legal_actions(seat)))
            actions += 1
        deal.lives()
    return actions


def aec_steps(games: int, seed: int, players: int = 3) -> int:
    """The PettingZoo loop with a uniform masked policy over ``games`` games; returns the steps."""
    from skatbus.rl.thirty_one_aec import ThirtyOneAECEnv

    choice = random.Random(seed).choice
    env = ThirtyOneAECEnv(players=players)
    env.game.keep_log = False
    steps = 0
    for g in range(games):
        env.reset(seed=seed if g == 0 else None)
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            assert obs is not None
            env.step(choice(np.flatnonzero(obs["action_mask"]).tolist()))
            steps += 1
    return steps


# --- the section -------------------------------------------------------------------------


def _sizes(opts: Options) -> dict[str, int]:
    """Work per repeat: a few tenths of a second each in the full run."""
    if opts.quick:
        return {"base": 2_000, "skat": 500, "2p": 100, "3p": 60, "6p": 20, "9p": 10, "deals": 1_000, "aec": 15}
    return {"base": 10_000, "skat": 4_000, "2p": 500, "3p": 300, "6p": 80, "9p": 40, "deals": 5_000, "aec": 60}


def _games_work(seeds: list[str], seed: int, players: int) -> Callable[[], int]:
    """A workload of random games that returns the games played (its units)."""

    def work() -> int:
        play_random_games(seeds, seed, players)
        return len(seeds)

    return work


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
    skat_seeds = [f"bench/{i}" for i in range(n["skat"])]

    def skat_work() -> int:
        play_random_deals(skat_seeds, seed)
        return len(skat_seeds)

    skat = timed(skat_work)

    def vs_skat(rate: Rate) -> str:
        return f"{rate.best / skat.best:.3g}x the Skat random deals/s row"

    rows = [
        row("interpreter baseline", base, "units/s", "32 random() + list ops per unit"),
        row(
            "Skat random deals (reference)",
            skat,
            "deals/s",
            f"the [engine] section's random deals workload, re-timed here; {n['skat']:,} deals",
        ),
    ]
    actions_per_s: dict[int, float] = {}
    for players in PLAYERS:
        seeds = [f"bench-t31/{players}/{i}" for i in range(n[f"{players}p"])]
        actions, dealt = play_random_games(seeds, seed, players)
        rate = timed(_games_work(seeds, seed, players))
        actions_per_s[players] = rate.best * actions / len(seeds)
        rows.append(
            row(
                f"Thirty-one random games, {players} players",
                rate,
                "games/s",
                f"{vs_skat(rate)}; {dealt / len(seeds):.1f} deals and {actions / len(seeds):.0f} actions per game, "
                f"{actions_per_s[players]:,.0f} actions/s",
            )
        )
    deal_seeds = [f"bench-t31/deal/{i}" for i in range(n["deals"])]
    deal_actions = play_random_deals_t31(deal_seeds, seed)

    def deals_work() -> int:
        play_random_deals_t31(deal_seeds, seed)
        return len(deal_seeds)

    one_deal = timed(deals_work)
    rows.append(
        row(
            "Thirty-one random deals, Deal only, 3 players",
            one_deal,
            "deals/s",
            f"{vs_skat(one_deal)}; {deal_actions / len(deal_seeds):.1f} actions per deal",
        )
    )
    aec = timed(lambda: aec_steps(n["aec"], seed))
    rows.append(
        row(
            "Thirty-one AEC env, masked random policy, 3 players",
            aec,
            "steps/s",
            f"whole games; {aec.best / actions_per_s[3]:.3g}x the 3-player games row's actions/s",
        )
    )
    return rows


def profile(opts: Options, top: int = 25) -> str:
    """cProfile of the 3-player random games and of the AEC loop, sorted by own time: where a
    game goes (fold, due, decide, hand values; observations and masks in the env)."""
    n = _sizes(opts)
    seeds = [f"bench-t31/3/{i}" for i in range(n["3p"])]
    out = io.StringIO()
    for title, work in (
        (f"Thirty-one random games, 3 players ({len(seeds):,})", lambda: play_random_games(seeds, opts.seed, 3)),
        (f"Thirty-one AEC env ({n['aec']:,} games)", lambda: aec_steps(n["aec"], opts.seed)),
    ):
        prof = cProfile.Profile()
        prof.runcall(work)
        out.write(f"\n--- profile: {title}, top {top} by tottime ---\n")
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()
