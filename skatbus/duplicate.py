"""Duplicate comparison of two bots: the same cards, the candidate in one seat at a time.

``duplicate("pimc", "heuristic", deals=2000)`` plays tables of one round (three deals, so every
seat holds every position once) through the pure engine. Each table is played four times with
the same cards: once with the baseline in all three seats, and once with the candidate in each
seat in turn (the baseline in the other two). A table's figure is the candidate's Seeger-Fabian
points in its seat minus the baseline's in that same seat with the same cards, averaged over
the three seats, per deal. The luck of the cards cancels out of that difference, which is why
a few thousand deals separate bots that a plain comparison could not; tables are independent
(their cards come from distinct seeds), so the mean difference comes with a 95 % confidence
interval (mean +- 1.96 sd / sqrt(tables)).

The candidate's decision times are measured too (mean and the longest), on one core per worker.

    python -m skatbus.duplicate pimc heuristic --deals 2000 --jobs 2

Either bot may be a class of one's own, ``my_bot.py:MyBot`` or ``package.module:MyBot``
(``skatbus.bot_loader``, docs/in-process-bots.md): each worker loads it from the spec. A turn
the candidate fails (``act`` raises, or answers illegally) is played by the default move and
counted in the summary.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from protocol.skat.commands import Command
from protocol.skat.rules import Rules
from protocol.tournament import half_width_95
from protocol.wire import Update

from .bots import Bot, make_bot
from .local import play_table

RULES = Rules(seeger_fabian=True, rounds=1)


class _Timed:
    """A bot whose decisions are timed: wall-clock, and the CPU time of this thread (what the
    decision cost on one core, whatever else the machine was doing)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.times: list[float] = []
        self.cpu_times: list[float] = []

    def act(self, obs: Update) -> Command:
        started, cpu = time.perf_counter(), time.thread_time()
        action = self.bot.act(obs)
        self.times.append(time.perf_counter() - started)
        self.cpu_times.append(time.thread_time() - cpu)
        return action  # type: ignore[return-value]


@dataclass
class TableResult:
    diff_per_deal: float
    """Candidate minus baseline, Seeger-Fabian points per deal, averaged over the three seats."""
    decision_seconds: list[float] = field(default_factory=list)
    decision_cpu_seconds: list[float] = field(default_factory=list)
    faults: int = 0
    """Turns the candidate failed, each played by the default move (``skatbus.bot_guard``)."""


def play_duplicate_table(candidate: str, baseline: str, seed: str, index: int) -> TableResult:
    """One table's four plays (see the module docstring)."""
    cards = f"{seed}/table-{index}"
    players = ["s0", "s1", "s2"]

    def bots(at: int | None) -> list[Bot]:
        return [make_bot(candidate if s == at else baseline, f"{seed}/{index}/{s}") for s in range(3)]

    base = play_table(f"dup-{index}", players, bots(None), RULES, cards).state
    base_sf = [sum(row.result.seeger_fabian[s] for row in base.sheet) for s in range(3)]
    diffs = []
    faults = 0
    times: list[float] = []
    cpu_times: list[float] = []
    for seat in range(3):
        table_bots = bots(seat)
        timed = _Timed(table_bots[seat])
        table_bots[seat] = timed
        state = play_table(f"dup-{index}", players, table_bots, RULES, cards).state
        sf = sum(row.result.seeger_fabian[seat] for row in state.sheet)
        diffs.append(sf - base_sf[seat])
        times.extend(timed.times)
        cpu_times.extend(timed.cpu_times)
        faults += getattr(timed.bot, "faults", 0)
    return TableResult(sum(diffs) / 3 / RULES.deals, times, cpu_times, faults)


def _play(job: tuple[str, str, str, int]) -> TableResult:
    return play_duplicate_table(*job)


@dataclass
class Duel:
    candidate: str
    baseline: str
    tables: list[TableResult]
    seconds: float

    @property
    def deals(self) -> int:
        return len(self.tables) * RULES.deals

    @property
    def mean(self) -> float:
        return sum(t.diff_per_deal for t in self.tables) / len(self.tables)

    @property
    def half_width(self) -> float:
        return half_width_95([t.diff_per_deal for t in self.tables])

    def summary(self) -> str:
        times = [s for t in self.tables for s in t.decision_seconds]
        cpu = [s for t in self.tables for s in t.decision_cpu_seconds]
        faults = sum(t.faults for t in self.tables)
        lo, hi = self.mean - self.half_width, self.mean + self.half_width
        verdict = "stronger" if lo > 0 else "weaker" if hi < 0 else "not separated (the interval contains 0)"
        return (
            f"{self.candidate} vs {self.baseline}: {self.mean:+.1f} Seeger-Fabian points per deal, "
            f"95 % interval [{lo:+.1f}, {hi:+.1f}] over {self.deals} duplicate deals "
            f"({len(self.tables)} tables x 3 seats): {self.candidate} is {verdict}.\n"
            f"{self.candidate}'s decisions: {len(times)}, mean {1000 * sum(times) / max(len(times), 1):.0f} ms, "
            f"longest {1000 * max(times, default=0):.0f} ms wall-clock, {1000 * max(cpu, default=0):.0f} ms of CPU "
            f"(one core); {self.seconds:.0f} s in all."
            + (
                f"\n{self.candidate} failed {faults} turns (act raised or answered illegally): played by default."
                if faults
                else ""
            )
        )


def duplicate(candidate: str, baseline: str, deals: int, seed: str = "duplicate", jobs: int = 1) -> Duel:
    """Compare ``candidate`` with ``baseline`` over about ``deals`` deals (whole tables)."""
    tables = max(2, math.ceil(deals / RULES.deals))
    work = [(candidate, baseline, seed, i) for i in range(tables)]
    started = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_play, work, chunksize=4))
    else:
        results = [_play(w) for w in work]
    return Duel(candidate, baseline, results, time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> int:
    """The command; its log lines (a bot's ``bot_fault``) on stderr, not among the results."""
    from services import logs

    with logs.for_a_command():
        return _main(argv)


def _main(argv: Sequence[str] | None = None) -> int:
    from .cli_parser import SkatParser, seed_text

    parser = SkatParser(prog="python -m skatbus.duplicate", description=__doc__.split("\n\n")[0])
    parser.add_argument("candidate", help="the bot under test (e.g. pimc)")
    parser.add_argument("baseline", help="the bot it is compared with (e.g. heuristic)")
    parser.add_argument("--deals", type=int, default=2000, help="deals (rounded up to whole tables of 3)")
    parser.add_argument("--seed", type=seed_text, default="duplicate", help="seed of the cards")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one core each)")
    args = parser.parse_args(argv)
    for name in (args.candidate, args.baseline):
        try:
            make_bot(name)
        except ValueError as exc:
            parser.error(str(exc))
    if args.deals < 1 or args.jobs < 1:
        parser.error("--deals and --jobs must be at least 1")
    try:
        print(duplicate(args.candidate, args.baseline, args.deals, args.seed, args.jobs).summary())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
