"""A sequential probability ratio test on the mean of paired differences (pure statistics).

``skat match`` asks "is the candidate better than the baseline by at least ``h1``, or no better
than by ``h0``?" with as few pairs as the data allow, as Stockfish's fishtest does: after every
pair the log-likelihood ratio (LLR) of the two hypotheses is compared with two bounds, and the
test stops as soon as it leaves the interval between them. Wald's bounds keep the error rates
near the ones asked for: accepting H1 when H0 holds happens with probability about ``alpha``,
accepting H0 when H1 holds about ``beta``, whatever the number of looks.

The model is the generalised SPRT under a normal approximation (fishtest's GSPRT for a mean):
the differences ``x_i`` are taken as independent draws of N(mu, var), the unknown ``var``
replaced by the sample variance of the pairs so far, so that

    LLR(n) = sum_i log N(x_i; h1, var) / N(x_i; h0, var)
           = (h1 - h0) / var * (sum(x) - n * (h0 + h1) / 2)

The sample variance is the unbiased one (``n - 1``), kept by Welford's update so that a long
run does not lose precision. It has a floor (``SprtSpec.variance_floor``, by default
``((h1 - h0) / 10) ** 2``): two identical bots have differences that are all exactly 0, a
variance of 0 and nothing to divide by; with the floor their LLR falls by 50 a pair and H0 is
accepted as soon as the test may stop. A spread that small (a tenth of the effect looked for)
would decide any test in a pair or two anyway, so the floor changes no real verdict.

The variance of the first few pairs is a poor estimate (a lucky start can look certain), so
the test does not stop before ``min_pairs`` pairs.

Nothing here knows of bots or games: ``skatbus.match`` feeds the differences.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

Z95 = 1.96
"""The normal quantile of a two-sided 95 % interval (as ``protocol.tournament.Z95``)."""

MIN_PAIRS = 20
"""Pairs before the test may stop (see the module docstring)."""


class Decision(enum.Enum):
    """Where the LLR stands: below the lower bound, above the upper, or in between."""

    H0 = "H0"
    H1 = "H1"
    CONTINUE = "continue"


def lower_bound(alpha: float, beta: float) -> float:
    """Wald's lower bound: at or below it H0 is accepted."""
    return math.log(beta / (1 - alpha))


def upper_bound(alpha: float, beta: float) -> float:
    """Wald's upper bound: at or above it H1 is accepted."""
    return math.log((1 - beta) / alpha)


def llr(n: int, total: float, variance: float, h0: float, h1: float) -> float:
    """The log-likelihood ratio of H1 (mean ``h1``) over H0 (mean ``h0``) after ``n``
    differences summing to ``total``, under a normal model with this ``variance``."""
    if variance <= 0:
        raise ValueError(f"the variance must be positive, not {variance}")
    return (h1 - h0) / variance * (total - n * (h0 + h1) / 2)


@dataclass(frozen=True)
class SprtSpec:
    """The hypotheses and error rates of one test. ``check`` says what is wrong with them."""

    h1: float
    """The mean difference H1 claims: the smallest improvement worth finding."""
    h0: float = 0.0
    """The mean difference H0 claims (0: no better)."""
    alpha: float = 0.05
    """The chance of accepting H1 when H0 holds."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 holds."""
    min_pairs: int = MIN_PAIRS
    variance_floor: float | None = None
    """The least variance the LLR uses (None: ``((h1 - h0) / 10) ** 2``)."""

    def check(self) -> None:
        """Raise ``ValueError`` naming the first thing that makes no test."""
        for name, value in (("h0", self.h0), ("h1", self.h1)):
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {value}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (both excluded), not {value}")
        if self.h1 <= self.h0:
            raise ValueError(f"h1 ({self.h1:g}) must be greater than h0 ({self.h0:g})")
        if self.min_pairs < 2:
            raise ValueError(
                f"the minimum number of pairs must be at least 2 (a variance needs two), not {self.min_pairs}"
            )
        if self.variance_floor is not None and not self.variance_floor > 0:
            raise ValueError(f"the variance floor must be positive, not {self.variance_floor}")

    @property
    def lower(self) -> float:
        return lower_bound(self.alpha, self.beta)

    @property
    def upper(self) -> float:
        return upper_bound(self.alpha, self.beta)

    @property
    def floor(self) -> float:
        if self.variance_floor is not None:
            return self.variance_floor
        return ((self.h1 - self.h0) / 10) ** 2


class Sprt:
    """The running test: ``add`` each pair's difference, read ``llr`` and ``decision``."""

    def __init__(self, spec: SprtSpec) -> None:
        spec.check()
        self.spec = spec
        self.n = 0
        self.total = 0.0
        self._mean = 0.0
        self._m2 = 0.0
        """Welford's sum of squared deviations from the running mean."""

    def add(self, x: float) -> Decision:
        """Take one pair's difference; the decision after it."""
        if not math.isfinite(x):
            raise ValueError(f"a difference must be a finite number, not {x}")
        self.n += 1
        self.total += x
        delta = x - self._mean
        self._mean += delta / self.n
        self._m2 += delta * (x - self._mean)
        return self.decision

    @property
    def mean(self) -> float:
        return self._mean if self.n else math.nan

    @property
    def variance(self) -> float:
        """The sample variance (``n - 1``); NaN with fewer than two differences."""
        return max(self._m2, 0.0) / (self.n - 1) if self.n >= 2 else math.nan

    @property
    def half_width(self) -> float:
        """Half the 95 % interval of the mean (``Z95 * sd / sqrt(n)``); infinite below two."""
        return Z95 * math.sqrt(self.variance / self.n) if self.n >= 2 else math.inf

    @property
    def llr(self) -> float:
        """The LLR so far with the floored sample variance; 0 before there is a variance."""
        if self.n < 2:
            return 0.0
        return llr(self.n, self.total, max(self.variance, self.spec.floor), self.spec.h0, self.spec.h1)

    @property
    def decision(self) -> Decision:
        """H0 or H1 once the LLR reaches a bound (and ``min_pairs`` are in), else CONTINUE."""
        if self.n < self.spec.min_pairs:
            return Decision.CONTINUE
        value = self.llr
        if value >= self.spec.upper:
            return Decision.H1
        if value <= self.spec.lower:
            return Decision.H0
        return Decision.CONTINUE
