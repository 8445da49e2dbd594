"""skatbus benchmarks: ``python -m bench [section ...] [--quick]`` (``make bench`` runs all).

This module holds what every section shares, so that figures from different sections (the
pure engine now, the NATS pipeline later) are measured and printed the same way:

* ``measure`` times a workload that does *identical* work on every call (fixed seeds, a fresh
  RNG per call), so repeats differ only by machine noise; it runs warm-ups first, collects
  garbage between repeats and keeps every repeat's time, from which ``Rate`` gives the best
  (least disturbed) and the median throughput. Given a baseline workload, it times the
  baseline right before each repeat, so that each repeat yields a ratio taken under the same
  machine conditions: their median is the figure to compare across machines and runs.
* ``Row`` is one printed line; ``format_rows`` lays rows out as one compact table with the
  target next to each figure and the ratio reached, and each row's own comparison (``vs``),
  which says in words what the figure is compared with: "3.20x interpreter baseline",
  "6.3 % of the raw ceiling (goal >= 15 %)". No column holds ratios of different meanings.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BASELINE_RATE = "interpreter baseline's units/s"
"""What ``Rate.relative`` is relative to, in a row's ``vs``: the same run's interpreter baseline."""


@dataclass(frozen=True)
class Options:
    """What the command line asked for; every section gets the same options."""

    quick: bool = False
    """A short run (smaller batches, fewer repeats): for smoke tests, not for comparing."""
    repeats: int = 7
    seed: int = 20240601
    """Seed of every ``random.Random`` the workloads use, so that runs are comparable."""
    instances: int = 1
    """Processes per service where a section starts the services (``pipeline``)."""


@dataclass(frozen=True)
class Rate:
    """Throughput of one workload: ``units`` of work done in each of several timed repeats."""

    units: int
    seconds: tuple[float, ...]
    base_units: int = 0
    base_seconds: tuple[float, ...] = ()
    """The baseline's time next to each repeat (empty when measured without a baseline)."""

    @property
    def best(self) -> float:
        """Units per second of the fastest repeat: the least noisy estimate of what the code costs."""
        return self.units / min(self.seconds)

    @property
    def median(self) -> float:
        """Units per second of the median repeat: what a typical run sees."""
        return self.units / statistics.median(self.seconds)

    @property
    def relative(self) -> float | None:
        """Median over repeats of (this rate / the baseline's rate timed just before it)."""
        if not self.base_seconds:
            return None
        return statistics.median(
            (self.units / s) / (self.base_units / b) for s, b in zip(self.seconds, self.base_seconds)
        )


@dataclass(frozen=True)
class Row:
    """One line of the report. ``value`` is the headline figure (the best rate, or a plain number)."""

    name: str
    value: float
    unit: str
    median: float | None = None
    target: float | None = None
    """The figure the project wants to reach (higher is better); the ratio is printed next to it."""
    relative: float | None = None
    """``value`` relative to some reference of the same run (which one: ``vs`` says), as a number
    for callers; only ``vs`` is printed."""
    note: str = ""
    vs: str = ""
    """What the figure is compared with, in words, printed in the "compared with" column:
    "3.20x interpreter baseline", "6.3 % of the raw ceiling (goal >= 15 %): not reached".
    A row with a ``relative`` figure must say here what it is relative to."""


def measure(
    work: Callable[[], int], *, repeats: int, warmup: int = 1, baseline: Callable[[], int] | None = None
) -> Rate:
    """Time ``work`` (which returns how many units it did) ``repeats`` times after ``warmup`` runs,
    each repeat preceded by a timed run of ``baseline`` if given (see ``Rate.relative``).

    Warm-ups fill caches (msgspec decoders, interned strings, the adaptive interpreter's
    specialisations) that a long-running service would have warm. Garbage is collected
    before each repeat so one repeat does not pay for the previous one's garbage.
    """
    for _ in range(warmup):
        work()
    seconds: list[float] = []
    base_seconds: list[float] = []
    units = base_units = -1
    for _ in range(repeats):
        gc.collect()
        if baseline is not None:
            start = time.perf_counter()
            base_units = baseline()
            base_seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        done = work()
        seconds.append(time.perf_counter() - start)
        if units not in (-1, done):
            raise RuntimeError(f"a benchmark workload did {done} units after {units}: it must repeat identically")
        units = done
    return Rate(units, tuple(seconds), base_units, tuple(base_seconds))


def _num(x: float) -> str:
    """Big throughputs with thousands separators, small ratios with significant digits."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.4g}"


def times(ratio: float, reference: str) -> str:
    """A ratio in words for ``Row.vs``: ``times(3.2, "interpreter baseline")`` is
    "3.20x interpreter baseline"."""
    if ratio >= 100:
        return f"{ratio:,.0f}x {reference}"
    return f"{ratio:.2f}x {reference}" if ratio >= 1 else f"{ratio:#.3g}x {reference}"


def format_rows(title: str, rows: Sequence[Row]) -> str:
    """The rows of one section as an aligned plain-text table under ``title``."""
    header = ("metric", "best", "median", "unit", "target", "reached", "compared with", "")
    lines = [header]
    for r in rows:
        if r.relative is not None and not r.vs:
            raise ValueError(f"row {r.name!r} has a relative figure but no vs text saying what it is relative to")
        reached = ""
        if r.target:
            ratio = r.value / r.target
            reached = f"{ratio:.2f}x {'ok' if ratio >= 1 else 'BELOW'}"
        lines.append(
            (
                r.name,
                _num(r.value),
                _num(r.median) if r.median is not None else "",
                r.unit,
                _num(r.target) if r.target else "",
                reached,
                r.vs,
                r.note,
            )
        )
    # Columns no row of this section fills (no targets, no medians) are left out.
    shown = [i for i in range(len(header)) if i in (0, 1, 3) or any(line[i] for line in lines[1:])]
    widths = {i: max(len(line[i]) for line in lines) for i in shown}
    right = {1, 2, 4}  # numbers align right
    out = [title]
    for line in lines:
        cells = [line[i].rjust(widths[i]) if i in right else line[i].ljust(widths[i]) for i in shown]
        out.append("  " + "  ".join(cells).rstrip())
    return "\n".join(out)
