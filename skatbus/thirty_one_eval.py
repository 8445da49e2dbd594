"""Compare Thirty-one bots over whole games, seats rotated, with 95 % intervals (no bus).

``evaluate(["heuristic", "random", "random"], games=2000)`` plays games to the last survivor
through the pure engine (``protocol.thirty_one``: ``due``, ``decide``, ``view``). Games come in
sets: one table seed per set, played once per seating, so every entry meets the same cards
in every seat (duplicate style). The seatings of a set are the rotations of the entries' order
and of the reversed order (2P seatings for P players, 2 for two), so every entry sits in every
seat equally often and has each other entry on its left as often as on its right: in
Thirty-one the left neighbour takes one's discards, so rotations alone would let a bot profit
from always sitting after the same opponent. ``games`` is rounded up to whole sets.

Per entry (a place in the ``bots`` list) it reports the share of games won (a game that
``max_deals`` ends with several seats sharing place 1 counts 1/k for each), the mean place
(T37) and the mean coins at the end (the winner of a game played out holds the kitty). Each comes with a 95 %
interval by the normal approximation, mean +- 1.96 sd / sqrt(sets), over the per-set means:
the games of one set share their cards and are not independent, the sets are. Near 0 % or
100 % that interval shrinks to nothing (every set alike), so the share won is given at least
the Wilson score interval over the games.

Run it as ``python -m skatbus.thirty_one_eval --games 2000 --bots heuristic,random,random``. A
bot class of one's own (``game = "thirty-one"``) plays in-process, named by its spec
(``--bots my_bot.py:MyThirtyOneBot,random,random``; docs/in-process-bots.md): a fresh one per
game, seeded as a built-in bot is; a turn it fails is played by the default move and counted
in its ``faults``.
"""

from __future__ import annotations

import json
import math
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from protocol.thirty_one import GAME, Rejection, ThirtyOneRules, ThirtyOneState, decide, due, fold, rules_from_record
from protocol.tournament import Z95, half_width_95

from . import bot_loader
from .cli_parser import SkatParser, seed_text
from .thirty_one_bots import BOTS, T31Bot, make_bot, observe

BotSpec = str | T31Bot


class BotFailed(RuntimeError):
    """A bot chose an action the table refused (a bug in the bot: the built-in ones never do)."""


def seatings(players: int) -> list[tuple[int, ...]]:
    """The seatings of one set: ``seating[seat]`` is the entry in that seat. The rotations of
    the order 0..P-1 and of its reverse; each entry sits in each seat twice (once for two
    players, whose reverse order is one of its rotations)."""
    forward = [tuple((s + r) % players for s in range(players)) for r in range(players)]
    backward = [tuple((r - s) % players for s in range(players)) for r in range(players)]
    return list(dict.fromkeys([*forward, *backward]))


def play_game(bots: Sequence[T31Bot], table: str, seed: str, rules: ThirtyOneRules) -> tuple[ThirtyOneState, int]:
    """One whole game, seat ``s`` played by ``bots[s]``; the final state and the number of
    decisions. Each bot sees only the update a remote bot gets (``observe``)."""
    state = fold([GAME.open_event(table, [f"p{s}" for s in range(len(bots))], rules, seed, {})])
    decisions = 0
    while not state.closed:
        owed = due(state)
        if owed is not None:
            state.apply(owed)
            continue
        seat = state.to_move
        if seat is None:
            raise RuntimeError(f"table {table}: nothing is due and nobody is to move")
        command = bots[seat].act(observe(state, seat))
        result = decide(state, seat, command)
        if isinstance(result, Rejection):
            raise BotFailed(f"table {table}, seat {seat} ({type(bots[seat]).__name__}): {command!r}: {result.reason}")
        for event in result:
            state.apply(event)
        decisions += 1
    return state, decisions


@dataclass(frozen=True)
class SetResult:
    """One set of games (one table seed, every seating), per entry."""

    won: list[float]
    place: list[float]
    coins: list[float]
    """Per entry, its mean over the set's games."""
    games: int
    deals: int
    decisions: int
    faults: list[int] = field(default_factory=list)
    """Per entry, the turns it failed over the set's games (each played by the default move)."""


def wilson(share: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share observed over ``n`` trials: unlike mean +- z sd it
    stays inside [0, 1] and does not shrink to a point when every game went one way."""
    if n <= 0:
        return (0.0, 1.0)
    z2 = z * z
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class EntryStats:
    """One entry's per-set means and their 95 % intervals."""

    name: str
    games_per_set: int = 1
    players: int = 0
    all_coins: int = 0
    """The coins of a game (players x ``coins``): no seat can end with more."""
    won: list[float] = field(default_factory=list)
    place: list[float] = field(default_factory=list)
    coins: list[float] = field(default_factory=list)
    faults: int = 0
    """Turns it failed (raised, or answered illegally), each played by the default move."""

    @staticmethod
    def _mean(values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else math.nan

    @staticmethod
    def _normal(values: Sequence[float]) -> tuple[float, float]:
        m = sum(values) / len(values) if values else math.nan
        h = half_width_95(values)
        return (m - h, m + h)

    @property
    def won_share(self) -> float:
        return self._mean(self.won)

    @property
    def won_interval(self) -> tuple[float, float]:
        """The normal interval over the sets, widened where needed to the Wilson interval
        over the games (which the normal one undercuts near 0 % and 100 %), within [0, 1]."""
        lo, hi = self._normal(self.won)
        wlo, whi = wilson(self.won_share, len(self.won) * self.games_per_set)
        return (max(0.0, min(lo, wlo)), min(1.0, max(hi, whi)))

    @property
    def mean_place(self) -> float:
        return self._mean(self.place)

    @property
    def place_interval(self) -> tuple[float, float]:
        """Within the places there are (1 to P)."""
        lo, hi = self._normal(self.place)
        return (max(1.0, lo), min(float(self.players), hi) if self.players else hi)

    @property
    def mean_coins(self) -> float:
        return self._mean(self.coins)

    @property
    def coins_interval(self) -> tuple[float, float]:
        """Within 0 and every coin of the game."""
        lo, hi = self._normal(self.coins)
        return (max(0.0, lo), min(float(self.all_coins), hi) if self.all_coins else hi)


@dataclass
class Evaluation:
    """What ``evaluate`` found. Intervals are normal approximations over ``sets``."""

    entries: list[EntryStats]
    players: int
    games: int
    sets: int
    seatings: int
    deals: int
    decisions: int
    seconds: float
    """Wall-clock time."""
    cpu_seconds: float = 0.0
    """Processor time of this process (steadier than ``seconds`` on a busy machine)."""
    planned_sets: int = 0
    """The sets asked for (more than ``sets`` when the run was stopped early)."""

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else math.inf

    @property
    def games_per_cpu_second(self) -> float:
        return self.games / self.cpu_seconds if self.cpu_seconds > 0 else math.inf


def _labels(bots: Sequence[BotSpec]) -> list[str]:
    """Each entry's name: a built-in bot's, a spec's entrant (``NAME=``, else its class), an
    object's class."""
    return [
        (bot_loader.entrant_name(b) if bot_loader.is_spec(b) else b) if isinstance(b, str) else type(b).__name__
        for b in bots
    ]


def _instance(spec: BotSpec, seed: str) -> T31Bot:
    return make_bot(spec, seed) if isinstance(spec, str) else spec


def sets_for(games: int, players: int) -> int:
    """Whole sets of seatings that hold at least ``games`` games."""
    return max(1, math.ceil(games / len(seatings(players))))


def play_sets(
    bots: Sequence[BotSpec], games: int, seed: str = "t31-eval", rules: ThirtyOneRules | None = None
) -> Iterator[SetResult]:
    """The sets of ``evaluate`` one by one (so a caller can stop between them). A name gets a
    fresh bot per game, seeded ``{seed}/{set}/{entry}`` (the same in every seating of a set); a
    bot object is shared by every game."""
    players = len(bots)
    if not 2 <= players <= 9:
        raise ValueError(f"Thirty-one is played by 2 to 9 players, not {players}")
    for spec in bots:
        if isinstance(spec, str) and bot_loader.is_spec(spec):
            bot_loader.check(spec, bot_loader.THIRTY_ONE, pure_engine=True)  # a BotLoadError, a ValueError too
        elif isinstance(spec, str) and spec not in BOTS:
            raise ValueError(f"unknown bot {spec!r}; built-in Thirty-one bots: {', '.join(sorted(BOTS))}")
    rules = rules if rules is not None else ThirtyOneRules()
    order = seatings(players)
    for k in range(sets_for(games, players)):
        won = [0.0] * players
        place = [0.0] * players
        coins = [0.0] * players
        faults = [0] * players
        deals = decisions = 0
        for r, entry_at in enumerate(order):
            table_bots = [_instance(bots[entry_at[s]], f"{seed}/{k}/{entry_at[s]}") for s in range(players)]
            state, made = play_game(table_bots, f"t31-eval-{k}-{r}", f"{seed}/set-{k}", rules)
            places = state.places()
            firsts = places.count(1)
            for s, entry in enumerate(entry_at):
                if isinstance(bots[entry], str):  # a bot of its own for this game
                    faults[entry] += getattr(table_bots[s], "faults", 0)
                won[entry] += (1.0 / firsts) if places[s] == 1 else 0.0
                place[entry] += places[s]
                coins[entry] += state.coins[s]
            deals += state.deal_no
            decisions += made
        g = len(order)
        yield SetResult(
            [x / g for x in won], [x / g for x in place], [x / g for x in coins], g, deals, decisions, faults
        )


def summarize(
    names: Sequence[str],
    results: Sequence[SetResult],
    seconds: float,
    cpu_seconds: float = 0.0,
    planned_sets: int = 0,
    coins: int = 0,
) -> Evaluation:
    """The evaluation of the sets played (``coins``: each player's at the start, to bound the
    intervals of the coins at the end)."""
    players = len(names)
    g = len(seatings(players))
    entries = [EntryStats(name, g, players, players * coins) for name in names]
    for res in results:
        for e, stats in enumerate(entries):
            stats.won.append(res.won[e])
            stats.place.append(res.place[e])
            stats.coins.append(res.coins[e])
            stats.faults += res.faults[e] if res.faults else 0
    return Evaluation(
        entries=entries,
        players=players,
        games=sum(r.games for r in results),
        sets=len(results),
        seatings=g,
        deals=sum(r.deals for r in results),
        decisions=sum(r.decisions for r in results),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        planned_sets=planned_sets or len(results),
    )


def evaluate(
    bots: Sequence[BotSpec], games: int, seed: str = "t31-eval", rules: ThirtyOneRules | None = None
) -> Evaluation:
    """Play about ``games`` games (rounded up to whole sets of seatings) of ``len(bots)``
    players and score each entry (see the module docstring). ``bots`` are names of
    ``skatbus.thirty_one_bots.BOTS`` or bot objects."""
    started, cpu = time.perf_counter(), time.process_time()
    results = list(play_sets(bots, games, seed, rules))
    coins = (rules or ThirtyOneRules()).coins
    return summarize(_labels(bots), results, time.perf_counter() - started, time.process_time() - cpu, coins=coins)


def report(ev: Evaluation, out: TextIO | None = None) -> None:
    """A small table: won share, mean place and mean coins per entry, with 95 % intervals."""
    out = out or sys.stdout

    def cell(mean: float, interval: tuple[float, float], scale: float = 1.0, digits: int = 2) -> str:
        lo, hi = interval
        if math.isinf(lo) or math.isinf(hi):
            return f"{scale * mean:.{digits}f} [n/a]"
        if lo == hi:
            return f"{scale * mean:.{digits}f} [no spread]"
        return f"{scale * mean:.{digits}f} [{scale * lo:.{digits}f}, {scale * hi:.{digits}f}]"

    print(f"{'#':>2}  {'bot':<12} {'won % [95% CI]':>22} {'place [95% CI]':>20} {'coins [95% CI]':>20}", file=out)
    for i, s in enumerate(ev.entries):
        print(
            f"{i:>2}  {s.name:<12} {cell(s.won_share, s.won_interval, 100, 1):>22} "
            f"{cell(s.mean_place, s.place_interval):>20} {cell(s.mean_coins, s.coins_interval):>20}",
            file=out,
        )
    per_game = ev.deals / ev.games if ev.games else 0.0
    print(
        f"\n{ev.games} games of {ev.players} players in {ev.sets} sets of {ev.seatings} seatings "
        f"(seats rotated, both directions; same cards per set), {per_game:.1f} deals per game; "
        f"{ev.seconds:.1f} s, {ev.games_per_second:.0f} games/s ({ev.games_per_cpu_second:.0f} per CPU second). Intervals: normal approximation over the sets (won: at least Wilson's over the games).",
        file=out,
    )
    faulty = [f"#{i} {s.name} {s.faults}" for i, s in enumerate(ev.entries) if s.faults]
    if faulty:
        print(f"Faults (turns a bot failed, played by the default move): {', '.join(faulty)}.", file=out)
    if ev.sets < ev.planned_sets:
        print(f"Stopped after {ev.sets} of {ev.planned_sets} sets.", file=out)


class _Parser(SkatParser):
    """Mistakes on the command line are one line on stderr and exit code 2 (``SkatParser``)."""


def _rules(pairs: Sequence[str]) -> ThirtyOneRules:
    """``--rule name=value`` options (values as JSON, else text) as the table's rules."""
    fields: dict[str, Any] = {}
    known = set(ThirtyOneRules.__struct_fields__)
    for pair in pairs:
        name, eq, raw = pair.partition("=")
        if not eq or not name:
            raise ValueError(f"--rule {pair!r}: want name=value, e.g. throw_down=true")
        if name not in known:
            raise ValueError(f"--rule {pair!r}: unknown option {name!r}; options: {', '.join(sorted(known))}")
        try:
            fields[name] = json.loads(raw)
        except ValueError:
            fields[name] = raw
    try:
        return rules_from_record(fields)
    except (ValueError, TypeError) as exc:  # msgspec.ValidationError is a ValueError
        raise ValueError(f"--rule: {exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """The command; its log lines (a bot's ``bot_fault``) on stderr, not among the results."""
    from services import logs

    with logs.for_a_command():
        return _main(argv)


def _main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="python -m skatbus.thirty_one_eval", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=600, help="games to play (rounded up to whole sets)")
    parser.add_argument("--players", type=int, default=None, help="players per game, 2-9 (default: as many as --bots)")
    parser.add_argument(
        "--bots",
        default="heuristic,random,random",
        help=f"one per seat, comma-separated: {', '.join(sorted(BOTS))}, or a class of your own, MODULE:CLASS or "
        "PATH.py:CLASS (docs/in-process-bots.md)",
    )
    parser.add_argument("--seed", type=seed_text, default="t31-eval")
    parser.add_argument(
        "--rule", action="append", default=[], metavar="NAME=VALUE", help="a table option, e.g. throw_down=true"
    )
    args = parser.parse_args(argv)
    names = [b.strip() for b in args.bots.split(",")]
    for name in names:
        if bot_loader.is_spec(name):
            try:
                bot_loader.check(name, bot_loader.THIRTY_ONE, pure_engine=True, construct=True)
            except bot_loader.BotLoadError as exc:
                parser.error(f"--bots {exc}")
        elif name not in BOTS:
            parser.error(f"unknown bot {name!r}; built-in Thirty-one bots: {', '.join(sorted(BOTS))}")
    players = args.players if args.players is not None else len(names)
    if not 2 <= players <= 9:
        parser.error(f"--players must be 2 to 9, not {players}")
    if len(names) != players:
        parser.error(f"--players {players} needs {players} bots in --bots, not {len(names)}")
    if args.games < 1:
        parser.error("--games must be at least 1")
    try:
        rules = _rules(args.rule)
    except ValueError as exc:
        parser.error(str(exc))
    planned = sets_for(args.games, players)
    labels = _labels(names)
    results: list[SetResult] = []
    started, cpu = time.perf_counter(), time.process_time()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        for res in play_sets(names, args.games, args.seed, rules):
            results.append(res)
    except bot_loader.BotLoadError as exc:  # a constructor that raised
        parser.error(f"--bots {exc}")
    except KeyboardInterrupt:
        if not results:
            print(f"{parser.prog}: stopped before a set was complete", file=sys.stderr)
            return 130
        report(
            summarize(labels, results, time.perf_counter() - started, time.process_time() - cpu, planned, rules.coins)
        )
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    report(summarize(labels, results, time.perf_counter() - started, time.process_time() - cpu, planned, rules.coins))
    return 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops a run as Ctrl-C does: the sets played so far are reported."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
