"""Sequential matches: paired duplicate deals until an SPRT decides (``skat match A B``).

A *pair* plays the same cards twice over: once with the baseline in every seat, and once with
the candidate in each seat in turn (the baseline in the others); its difference is the
candidate's result in its seat minus the baseline's in that seat with the same cards, averaged
over the seats. The luck of the cards cancels out of it, as in ``skatbus.duplicate``:

- Skat: one table of one round (3 deals, every seat holding every position once), played
  four times; the difference is in Seeger-Fabian points per deal
  (``duplicate.play_duplicate_table``). A pair counts as 3 duplicate deals (12 deals played).
- Thirty-one: one game to the last survivor at a table of ``players``, played ``players + 1``
  times; the difference is in place points per game (``protocol.tournament.place_points``:
  players minus place). A pair counts as ``players + 1`` games.

Pairs are independent (each from its own seed), so their differences feed the test of
``skatbus.sprt`` one by one, in pair order, and the match stops at the first pair where the
LLR reaches a bound. Played on several processes (``jobs``), pairs are computed ahead but
consumed in that order, so the verdict, the pair it came at and every figure are the same
whatever the number of processes.

Either bot may be a class of one's own, named by its spec (``my_bot.py:MyBot``,
``package.module:MyBot``: ``skatbus.bot_loader``); the spec is what a worker process is given,
and it loads the class itself. A turn such a bot fails (``act`` raises, or answers illegally)
is played by the default move and counted (``Pair.candidate_faults``, ``baseline_faults``).

Where the pairs come from is apart from the test: ``run_match`` takes any iterable of
``Pair`` (``engine_pairs`` plays them through the pure engine; pairs played through the
services would be another source).
"""

from __future__ import annotations

import enum
import functools
import math
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .sprt import Decision, Sprt, SprtSpec

SKAT = "skat"
THIRTY_ONE = "thirty-one"
GAMES = (SKAT, THIRTY_ONE)

DEFAULT_SEED = "match"
DEFAULT_MAX_PAIRS = 1000
DEFAULT_EVERY = 10
"""Pairs between two progress lines."""

SKAT_DEFAULT_H1 = 5.0
"""Seeger-Fabian points per deal: see docs/match.md for why (measured spreads, test lengths)."""
THIRTY_ONE_H1_PER_PLACE = 0.1
"""Thirty-one's default H1 is this much per place there is to gain (0.2 at a table of 3)."""


def default_h1(game: str, players: int = 3) -> float:
    """The smallest improvement a match looks for by default (docs/match.md says why)."""
    if game == SKAT:
        return SKAT_DEFAULT_H1
    return round(THIRTY_ONE_H1_PER_PLACE * (players - 1), 6)


def unit_of(game: str) -> str:
    """What a difference is measured in."""
    return "SF/deal" if game == SKAT else "place points/game"


@dataclass(frozen=True)
class Pair:
    """One pair's outcome: the difference the test takes, and what it cost to play."""

    diff: float
    """Candidate minus baseline on the same cards, per deal (Skat) or per game (Thirty-one)."""
    games: int
    """Tables (Skat) or games (Thirty-one) played for the pair, every seating counted."""
    deals: int
    """Deals played for the pair, every seating counted."""
    candidate_faults: int = 0
    baseline_faults: int = 0
    """Turns the candidate's (the baseline's) bots failed in the pair, each played by the
    default move (``skatbus.bot_guard``: counted for bots named by a spec)."""


@dataclass(frozen=True)
class Match:
    """What a match compares and how long it may run."""

    game: str
    candidate: str
    baseline: str
    spec: SprtSpec
    max_pairs: int = DEFAULT_MAX_PAIRS
    seed: str = DEFAULT_SEED
    players: int = 3
    """Seats at the table: Skat's is 3; Thirty-one's 2 to 9."""
    reseed: bool = False
    """Seed the candidate apart from the baseline (``bot_seed``)."""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first thing that makes no match (bots, bounds)."""
        from .bot_loader import check, is_spec
        from .bots import bots_of, unknown_bot

        if self.game not in GAMES:
            raise ValueError(f"no match for the game {self.game!r}; games: {', '.join(GAMES)}")
        for name in (self.candidate, self.baseline):
            if is_spec(name):
                check(name, self.game, pure_engine=True, construct=True)  # a BotLoadError, a ValueError too
            elif name not in bots_of(self.game):
                raise ValueError(unknown_bot(name, self.game))
        if self.game == SKAT and self.players != 3:
            raise ValueError(f"a Skat match is played at tables of 3, not {self.players}")
        if not 2 <= self.players <= 9:
            raise ValueError(f"Thirty-one is played by 2 to 9 players, not {self.players}")
        self.spec.check()
        if self.max_pairs < self.spec.min_pairs:
            raise ValueError(f"--max-pairs must be at least {self.spec.min_pairs} (the pairs before the test may stop)")

    @property
    def unit(self) -> str:
        return unit_of(self.game)

    def counted(self, pairs: int, games: int) -> tuple[int, str]:
        """What the verdict counts the pairs as: Skat's duplicate deals (3 a pair, as
        ``skatbus.duplicate`` counts them), Thirty-one's games played."""
        if self.game == SKAT:
            return pairs * 3, "deals"
        return games, "games"


# --- playing pairs through the pure engine ------------------------------------------------


def bot_seed(seed: str, index: int, seat: int, candidate: bool, reseed: bool) -> str:
    """The seed of the bot in ``seat`` of pair ``index``: the same for the candidate and the
    baseline (as ``skatbus.duplicate`` seeds them, so that a bot against itself differs by
    exactly nothing), unless ``reseed``, which seeds the candidate apart: a bot against itself
    then shows the spread its own random choices make (an A/A test)."""
    return f"{seed}/{index}/{seat}" + ("/candidate" if candidate and reseed else "")


def skat_pair(candidate: str, baseline: str, seed: str, index: int, reseed: bool = False) -> Pair:
    """Pair ``index`` at Skat: the table of cards ``{seed}/table-{index}`` (one round, Seeger-Fabian
    scoring) played by the baseline alone, then with the candidate in each seat, as
    ``duplicate.play_duplicate_table`` plays it (the same figure with the same seeds); the
    difference is per deal, averaged over the seats."""
    from .bots import make_bot
    from .duplicate import RULES
    from .local import play_table

    cards, players = f"{seed}/table-{index}", ["s0", "s1", "s2"]
    faults = [0, 0]  # the candidate's, the baseline's

    def points(at: int | None) -> list[int]:
        bots = [
            make_bot(candidate if s == at else baseline, bot_seed(seed, index, s, s == at, reseed)) for s in range(3)
        ]
        state = play_table(f"dup-{index}", players, bots, RULES, cards).state
        _count_faults(bots, at, faults)
        return [sum(row.result.seeger_fabian[s] for row in state.sheet) for s in range(3)]

    base = points(None)
    diffs = [points(seat)[seat] - base[seat] for seat in range(3)]
    return Pair(sum(diffs) / 3 / RULES.deals, 4, 4 * RULES.deals, *faults)


def _count_faults(bots: list[Any], at: int | None, faults: list[int]) -> None:
    """Add the turns a play's bots failed to ``faults`` (the candidate's in seat ``at``, the
    baseline's elsewhere); only guarded bots (``bot_guard.Guarded``) count theirs."""
    for s, bot in enumerate(bots):
        faults[0 if s == at else 1] += getattr(bot, "faults", 0)


def thirty_one_pair(
    candidate: str, baseline: str, seed: str, index: int, players: int = 3, reseed: bool = False
) -> Pair:
    """Pair ``index`` at Thirty-one: the game of cards ``{seed}/pair-{index}`` (the default
    rules) played by the baseline alone, then with the candidate in each seat (bots seeded by
    ``bot_seed``); the difference is in place points, averaged over the seats."""
    from protocol.thirty_one import ThirtyOneRules
    from protocol.tournament import place_points

    from .thirty_one_bots import make_bot
    from .thirty_one_eval import play_game

    rules = ThirtyOneRules()
    table, cards = f"match-{index}", f"{seed}/pair-{index}"

    faults = [0, 0]  # the candidate's, the baseline's

    def points(at: int | None) -> tuple[list[int], int]:
        bots = [
            make_bot(candidate if s == at else baseline, bot_seed(seed, index, s, s == at, reseed))
            for s in range(players)
        ]
        state, _ = play_game(bots, table, cards, rules)
        _count_faults(bots, at, faults)
        return [place_points(place, players) for place in state.places()], state.deal_no

    base, deals = points(None)
    diffs = []
    for seat in range(players):
        with_candidate, played = points(seat)
        diffs.append(with_candidate[seat] - base[seat])
        deals += played
    return Pair(sum(diffs) / players, players + 1, deals, *faults)


def play_pair(match: Match, index: int) -> Pair:
    """Pair ``index`` of ``match`` (what a worker process runs)."""
    if match.game == SKAT:
        return skat_pair(match.candidate, match.baseline, match.seed, index, match.reseed)
    return thirty_one_pair(match.candidate, match.baseline, match.seed, index, match.players, match.reseed)


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the match: the terminal sends it to the whole process group,
    and the match stops its workers itself (a worker interrupted on its own would print a
    traceback). Nor does it read the match's input or write to its output: those belong to the
    match (and may be a pipe to whatever runs it, which a stray byte would corrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    os.close(quiet)


def engine_pairs(match: Match, jobs: int = 1) -> Iterator[Pair]:
    """The match's pairs 0, 1, ... ``max_pairs - 1`` in order, played through the pure engine
    on ``jobs`` processes. With several, a few pairs per process are played ahead; closing the
    iterator (the test has decided, or was interrupted) stops the workers at once."""
    job = functools.partial(play_pair, match)
    if jobs <= 1:
        for index in range(match.max_pairs):
            yield job(index)
        return
    # Spawned, not forked: a fork of a process with threads (the caller's, a test runner's) can
    # hang in the child on a lock some thread held at the fork.
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start)
    ahead: deque[Future[Pair]] = deque()
    submitted = 0
    try:
        while submitted < match.max_pairs or ahead:
            while submitted < match.max_pairs and len(ahead) < 2 * jobs:
                ahead.append(pool.submit(job, submitted))
                submitted += 1
            yield ahead.popleft().result()
    finally:
        _stop(pool, ahead)


def _stop(pool: ProcessPoolExecutor, ahead: deque[Future[Pair]]) -> None:
    """Shut the pool down; pairs still being played are not wanted, so their workers (this
    match's own processes) are killed rather than waited for."""
    for future in ahead:
        future.cancel()
    if any(not f.done() for f in ahead):
        for process in list((pool._processes or {}).values()):
            process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


# --- the test -----------------------------------------------------------------------------


class Outcome(enum.Enum):
    H1 = "H1"
    H0 = "H0"
    INCONCLUSIVE = "inconclusive"
    """``max_pairs`` were played (or the source had no more) without a verdict."""
    INTERRUPTED = "interrupted"
    """Ctrl-C or SIGTERM: the figures are those of the pairs played."""


@dataclass(frozen=True)
class Progress:
    """The test after ``pairs`` pairs."""

    pairs: int
    games: int
    deals: int
    mean: float
    half_width: float
    llr: float


@dataclass
class MatchResult:
    """Where a match stands (while it runs, ``outcome`` is None)."""

    match: Match
    diffs: list[float] = field(default_factory=list)
    games: int = 0
    deals: int = 0
    candidate_faults: int = 0
    baseline_faults: int = 0
    """Turns the candidate's (the baseline's) bots failed, each played by the default move."""
    mean: float = math.nan
    sd: float = math.nan
    half_width: float = math.inf
    llr: float = 0.0
    outcome: Outcome | None = None
    seconds: float = 0.0
    progress: list[Progress] = field(default_factory=list)
    """One entry per progress line printed (every ``every`` pairs, and the last)."""

    @property
    def pairs(self) -> int:
        return len(self.diffs)

    def counted(self) -> tuple[int, str]:
        return self.match.counted(self.pairs, self.games)

    def to_json(self) -> dict[str, Any]:
        """Everything about the match, as ``skat match --json`` writes it (NaN and infinity,
        which JSON lacks, as null)."""
        m, spec = self.match, self.match.spec
        count, what = self.counted()

        def num(value: float) -> float | None:
            return value if math.isfinite(value) else None

        return {
            "game": m.game,
            "candidate": m.candidate,
            "baseline": m.baseline,
            "unit": m.unit,
            "players": m.players,
            "seed": m.seed,
            "h0": spec.h0,
            "h1": spec.h1,
            "alpha": spec.alpha,
            "beta": spec.beta,
            "bounds": [spec.lower, spec.upper],
            "variance_floor": spec.floor,
            "min_pairs": spec.min_pairs,
            "max_pairs": m.max_pairs,
            "outcome": self.outcome.value if self.outcome else None,
            "llr": self.llr,
            "pairs": self.pairs,
            what: count,
            "games_played": self.games,
            "deals_played": self.deals,
            "candidate_faults": self.candidate_faults,
            "baseline_faults": self.baseline_faults,
            "mean": num(self.mean),
            "sd": num(self.sd),
            "half_width_95": num(self.half_width),
            "seconds": round(self.seconds, 3),
            "progress": [
                {"pairs": p.pairs, "mean": num(p.mean), "half_width_95": num(p.half_width), "llr": p.llr}
                for p in self.progress
            ],
            "differences": self.diffs,
        }


def run_match(
    match: Match,
    pairs: Iterable[Pair],
    every: int = DEFAULT_EVERY,
    on_progress: Callable[[MatchResult], None] | None = None,
) -> MatchResult:
    """Feed ``pairs`` to the SPRT of ``match.spec`` until it accepts a hypothesis, ``max_pairs``
    are in, or the source ends; Ctrl-C (``KeyboardInterrupt``, which ``skat match`` raises for
    SIGTERM too) ends it with outcome INTERRUPTED and the pairs so far. ``on_progress`` is
    called every ``every`` pairs and once at the end, after ``progress`` has grown."""
    test = Sprt(match.spec)
    result = MatchResult(match)
    started = time.perf_counter()
    source = iter(pairs)

    def note() -> None:
        result.mean, result.half_width, result.llr = test.mean, test.half_width, test.llr
        result.sd = math.sqrt(test.variance) if test.n >= 2 else math.nan
        result.seconds = time.perf_counter() - started
        if result.progress and result.progress[-1].pairs == result.pairs:
            return
        result.progress.append(
            Progress(result.pairs, result.games, result.deals, result.mean, result.half_width, result.llr)
        )
        if on_progress is not None:
            on_progress(result)

    decision = Decision.CONTINUE
    try:
        while decision is Decision.CONTINUE and result.pairs < match.max_pairs:
            pair = next(source, None)
            if pair is None:
                break
            decision = test.add(pair.diff)
            result.diffs.append(pair.diff)
            result.games += pair.games
            result.deals += pair.deals
            result.candidate_faults += pair.candidate_faults
            result.baseline_faults += pair.baseline_faults
            if decision is Decision.CONTINUE and result.pairs % every == 0:
                note()
        result.outcome = {Decision.H1: Outcome.H1, Decision.H0: Outcome.H0}.get(decision, Outcome.INCONCLUSIVE)
    except KeyboardInterrupt:
        result.outcome = Outcome.INTERRUPTED
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
    note()
    return result


def play_match(
    match: Match,
    jobs: int = 1,
    every: int = DEFAULT_EVERY,
    on_progress: Callable[[MatchResult], None] | None = None,
) -> MatchResult:
    """A match of built-in bots through the pure engine (``engine_pairs``)."""
    match.check()
    return run_match(match, engine_pairs(match, jobs), every, on_progress)


# --- what is printed ----------------------------------------------------------------------


def _g(value: float) -> str:
    """A bound or hypothesis as typed (5, 0.2, -1.5), without trailing zeros."""
    return f"{value:g}"


def header_line(match: Match, how: str = "pure engine") -> str:
    """The match's first line: the test, its bounds, and ``how`` its pairs are played."""
    spec = match.spec
    table = (
        "one table of 3 deals played 4 times"
        if match.game == SKAT
        else (f"one game of {match.players} played {match.players + 1} times")
    )
    return (
        f"SPRT {match.candidate} vs {match.baseline} at {'Skat' if match.game == SKAT else 'Thirty-one'} "
        f"({how}): H0 mean {_g(spec.h0)}, H1 mean {_g(spec.h1)} {match.unit}; alpha {_g(spec.alpha)}, "
        f"beta {_g(spec.beta)}; LLR bounds ({spec.lower:.2f}, {spec.upper:.2f}); "
        f"{spec.min_pairs} to {match.max_pairs} pairs, a pair being {table}"
        + ("; the candidate seeded apart" if match.reseed else "")
    )


def progress_line(result: MatchResult) -> str:
    """``pairs 20, deals 60: +12.3 +- 4.5 SF/deal, LLR 1.83 (-2.94, 2.94)``."""
    spec = result.match.spec
    count, what = result.counted()
    played = f" ({result.deals} deals)" if what != "deals" else ""
    spread = f" +- {result.half_width:.{_digits(result.match)}f}" if math.isfinite(result.half_width) else ""
    mean = f"{result.mean:+.{_digits(result.match)}f}" if result.pairs else "n/a"
    floored = " [variance floor]" if result.pairs >= 2 and not result.sd**2 >= spec.floor else ""
    return (
        f"pairs {result.pairs}, {what} {count}{played}: {mean}{spread} {result.match.unit}, "
        f"LLR {result.llr:.2f} ({spec.lower:.2f}, {spec.upper:.2f}){floored}"
    )


def _digits(match: Match) -> int:
    return 1 if match.game == SKAT else 3


def verdict_line(result: MatchResult) -> str:
    """The last line: which hypothesis was accepted, or why none was."""
    m, spec = result.match, result.match.spec
    count, what = result.counted()
    after = f"after {result.pairs} pairs = {count} {what}"
    claim = f"{m.candidate} is better than {m.baseline} by >= {_g(spec.h1)} {m.unit}"
    if result.outcome is Outcome.H1:
        return f"H1 accepted: {claim} (LLR {result.llr:.2f} >= {spec.upper:.2f} {after})"
    if result.outcome is Outcome.H0:
        return (
            f"H0 accepted: {m.candidate} is not better than {m.baseline} by {_g(spec.h1)} {m.unit} "
            f"(LLR {result.llr:.2f} <= {spec.lower:.2f} {after})"
        )
    within = f"LLR {result.llr:.2f} within ({spec.lower:.2f}, {spec.upper:.2f}) {after}"
    if result.outcome is Outcome.INTERRUPTED:
        return f"interrupted: no verdict yet ({within})"
    why = "--max-pairs reached" if result.pairs >= m.max_pairs else "no more pairs"
    return f"inconclusive: {why} with neither hypothesis accepted ({within})"


def cost_line(result: MatchResult) -> str:
    what = "tables" if result.match.game == SKAT else "games"
    line = f"played {result.games} {what}, {result.deals} deals, in {result.seconds:.1f} s"
    for who, n in (("the candidate", result.candidate_faults), ("the baseline", result.baseline_faults)):
        if n:
            line += f"; {who} failed {n} turn{'s' * (n != 1)} (act raised or answered illegally: played by default)"
    return line
