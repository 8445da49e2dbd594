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
  target next to each figure and the ratio reached.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    """What the command line asked for; every section gets the same options."""

    quick: bool = False
    """A short run (smaller batches, fewer repeats): for smoke tests, not for comparing."""
    repeats: int = 7
    seed: int = 20240601
    """Seed of every ``random.Random`` the workloads use, so that runs are comparable."""


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
    """``value`` relative to the same run's interpreter baseline: comparable across machines."""
    note: str = ""


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


def format_rows(title: str, rows: Sequence[Row]) -> str:
    """The rows of one section as an aligned plain-text table under ``title``."""
    header = ("metric", "best", "median", "unit", "target", "reached", "x baseline", "")
    lines = [header]
    for r in rows:
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
                _num(r.relative) if r.relative is not None else "",
                r.note,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {1, 2, 4, 6}  # numbers align right
    out = [title]
    for line in lines:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))]
        out.append("  " + "  ".join(cells).rstrip())
    return "\n".join(out)
