"""Compare bots by Seeger-Fabian points per deal, with seats rotated and a confidence interval.

``evaluate(["heuristic", "random", "random"], deals=1200, seed="eval")`` plays tables of three
through the pure engine (``skatbus.local.play_table``). The seating changes from one table to
the next through all six orders of the three bots (the three rotations of one cyclic order,
then of the other), and every table has a whole number of rounds, so each bot sits in each seat
and holds each position (forehand, middlehand, rearhand) equally often, and also has each other
bot on its left as often as on its right: a bot can win neither by its chair nor by its
neighbour (with rotations alone, one of two equal opponents would always bid after the bot
under test, and the two would score differently). Each bot's per-deal Seeger-Fabian points are
collected deal by deal, and the mean comes with a 95 % confidence interval
(mean +- 1.96 sd / sqrt(n)); deals are independent, their cards come from distinct seeds.

Run it as ``python -m skatbus.evaluate heuristic random random --deals 1200``. A bot class of
one's own plays in-process, named by its spec (``my_bot.py:MyBot``, ``package.module:MyBot``;
``skatbus.bot_loader``, docs/in-process-bots.md): a fresh one per table, made with that table's
seed; a turn it fails is played by the default move and counted in its ``faults``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from protocol.skat.rules import Rules
from protocol.tournament import half_width_95

from . import bot_loader
from .bots import BOTS, Bot
from .heuristic import HeuristicBot
from .local import TableRun, play_table

BotSpec = str | Bot

SEATINGS: tuple[tuple[int, int, int], ...] = ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2))
"""Which entry sits in seats 0, 1, 2 at table t (t mod 6): every seat and neighbour balanced."""


def bot_names() -> list[str]:
    return list(dict.fromkeys(["heuristic", *BOTS]))


def make(name: str, seed: str) -> Bot:
    """A bot by name: ``heuristic`` or one of ``skatbus.bots.BOTS``, or a class by its spec
    (``skatbus.bot_loader``: guarded, its faults counted)."""
    if bot_loader.is_spec(name):
        guarded: Bot = bot_loader.make(name, seed)
        return guarded
    if name == "heuristic":
        return HeuristicBot(seed)
    if name in BOTS:
        return BOTS[name](seed)
    raise ValueError(f"unknown bot {name!r}; known: {', '.join(bot_names())}")


@dataclass
class BotStats:
    """One entry's results over all its deals (an entry is one place in the ``bots`` list)."""

    name: str
    sf: list[int] = field(default_factory=list)
    """Seeger-Fabian points of each deal it played, in order."""
    games: int = 0
    """Deals it played as declarer (passed-in and ramsch deals excluded)."""
    won: int = 0
    declarer_sf: int = 0
    overbid: int = 0
    faults: int = 0
    """Turns it failed (raised, or answered illegally), each played by the default move
    (``skatbus.bot_guard``; counted for bots named by a spec, which are guarded)."""

    @property
    def deals(self) -> int:
        return len(self.sf)

    @property
    def mean(self) -> float:
        return sum(self.sf) / len(self.sf) if self.sf else 0.0

    @property
    def half_width(self) -> float:
        """Half the 95 % confidence interval of the mean (normal approximation)."""
        return half_width_95(self.sf)

    @property
    def win_rate(self) -> float:
        return self.won / self.games if self.games else 0.0


@dataclass
class Evaluation:
    stats: list[BotStats]
    deals: int
    tables: int
    seconds: float
    passed_in: int = 0


def evaluate(
    bots: Sequence[BotSpec],
    deals: int,
    seed: str = "evaluate",
    rules: Rules | None = None,
) -> Evaluation:
    """Play about ``deals`` deals (rounded up to whole sets of six seatings) and score each entry.

    ``bots`` are names (``bot_names()``), specs of bot classes (``my_bot.py:MyBot``) or bot
    objects; three of them (a 3-player table). A name or a spec gets a fresh bot per table,
    seeded from ``seed``; an object is shared by every table. A spec that makes no bot is a
    ``bot_loader.BotLoadError`` (a ``ValueError``) before anything is played.
    """
    if len(bots) != 3:
        raise ValueError("evaluate plays 3-player tables: give three bots")
    for spec in bots:
        if isinstance(spec, str) and bot_loader.is_spec(spec):
            bot_loader.check(spec, bot_loader.SKAT, pure_engine=True)
    rules = rules or Rules(seeger_fabian=True, rounds=4)
    if rules.players != 3 or rules.rounds <= 0:
        raise ValueError("evaluate needs a 3-player table with a fixed number of rounds")
    per_table = rules.deals
    rotation = len(SEATINGS) * per_table
    tables = len(SEATINGS) * max(1, math.ceil(deals / rotation))
    labels = _labels(bots)
    stats = [BotStats(label) for label in labels]
    started = time.perf_counter()
    passed = 0
    for t in range(tables):
        entry_at = SEATINGS[t % len(SEATINGS)]
        players = [labels[entry_at[s]] + f"#{entry_at[s]}" for s in range(3)]
        table_bots = [_instance(bots[entry_at[s]], f"{seed}/{t}/{entry_at[s]}") for s in range(3)]
        run = play_table(f"eval-{t}", players, table_bots, rules, f"{seed}/table-{t}")
        passed += _collect(run, entry_at, stats)
        for s in range(3):
            if isinstance(bots[entry_at[s]], str):  # a bot of its own for this table: its faults are this table's
                stats[entry_at[s]].faults += getattr(table_bots[s], "faults", 0)
    return Evaluation(stats, tables * per_table, tables, time.perf_counter() - started, passed)


def _labels(bots: Sequence[BotSpec]) -> list[str]:
    """Each entry's name: a built-in bot's, a spec's entrant (``NAME=``, else its class), an
    object's class."""
    return [
        (bot_loader.entrant_name(b) if bot_loader.is_spec(b) else b) if isinstance(b, str) else type(b).__name__
        for b in bots
    ]


def _instance(spec: BotSpec, seed: str) -> Bot:
    return make(spec, seed) if isinstance(spec, str) else spec


def _collect(run: TableRun, entry_at: Sequence[int], stats: list[BotStats]) -> int:
    """Add one table's sheet to the entries' stats; returns the passed-in deals."""
    passed = 0
    for row in run.state.sheet:
        r = row.result
        for seat, points in enumerate(r.seeger_fabian):
            stats[entry_at[seat]].sf.append(points)
        if r.kind == "passed":
            passed += 1
        elif r.kind == "game" and r.declarer is not None:
            s = stats[entry_at[r.declarer]]
            s.games += 1
            s.won += r.won
            s.overbid += r.overbid
            s.declarer_sf += r.seeger_fabian[r.declarer]
    return passed


def report(ev: Evaluation, out: TextIO | None = None) -> None:
    """A small table: SF points per deal with their 95 % CI, declarer games and wins."""
    out = out or sys.stdout
    print(
        f"{'#':>2}  {'bot':<16} {'SF/deal':>8} {'95% CI':>17} {'games':>6} {'won':>5} {'win%':>6} "
        f"{'overbid':>7} {'SF/game':>8}",
        file=out,
    )
    for i, s in enumerate(ev.stats):
        lo, hi = s.mean - s.half_width, s.mean + s.half_width
        per_game = s.declarer_sf / s.games if s.games else 0.0
        print(
            f"{i:>2}  {s.name:<16} {s.mean:>8.1f} {f'[{lo:.1f}, {hi:.1f}]':>17} {s.games:>6} {s.won:>5} "
            f"{100 * s.win_rate:>5.1f}% {s.overbid:>7} {per_game:>8.1f}",
            file=out,
        )
    print(
        f"\n{ev.deals} deals at {ev.tables} tables (all six seatings), {ev.passed_in} passed in, {ev.seconds:.1f} s.",
        file=out,
    )
    faulty = [f"#{i} {s.name} {s.faults}" for i, s in enumerate(ev.stats) if s.faults]
    if faulty:
        print(f"Faults (turns a bot failed, played by the default move): {', '.join(faulty)}.", file=out)


def main(argv: Sequence[str] | None = None) -> int:

    from services import logs

    from .cli_parser import SkatParser, seed_text

    parser = SkatParser(prog="python -m skatbus.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "bots",
        nargs=3,
        help=f"three of: {', '.join(bot_names())}, or a class of your own, MODULE:CLASS or PATH.py:CLASS "
        "(docs/in-process-bots.md)",
    )
    parser.add_argument("--deals", type=int, default=1200, help="deals to play (rounded up to whole rotations)")
    parser.add_argument(
        "--seed",
        type=seed_text,
        default="evaluate",
        help="the deals' and the bots' seed: the same seed plays the same deals again (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=4, help="rounds per table (a round is 3 deals)")
    parser.add_argument("--kontra", action="store_true", help="play with Kontra and Re")
    args = parser.parse_args(argv)
    for name in args.bots:
        if bot_loader.is_spec(name):
            try:
                bot_loader.check(name, bot_loader.SKAT, pure_engine=True, construct=True)
            except bot_loader.BotLoadError as exc:
                parser.error(str(exc))
        elif name not in bot_names():
            parser.error(f"unknown bot {name!r}; known: {', '.join(bot_names())} (or MODULE:CLASS, PATH.py:CLASS)")
    if args.deals < 1 or args.rounds < 1:
        parser.error(f"--deals and --rounds must be at least 1, not {args.deals} and {args.rounds}")
    rules = Rules(seeger_fabian=True, rounds=args.rounds, kontra=args.kontra)
    with logs.for_a_command():  # a bot's ``bot_fault`` lines on stderr, not among the results
        try:
            report(evaluate(args.bots, args.deals, args.seed, rules))
        except bot_loader.BotLoadError as exc:  # a constructor that raised
            parser.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
