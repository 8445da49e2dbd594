"""Per-player command rate limits: a bot that floods the services costs them CPU even when
every command is refused, so each player gets a token bucket per service instance."""

from __future__ import annotations

import os
import time


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up; ``take`` spends one if there is one."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = time.monotonic()

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class PlayerLimits:
    """One bucket per player id. ``SKAT_PLAYER_RATE`` (commands per second, default 1000: a
    fast bot at many tables at once stays well below it) sets the rate; the burst is twice it."""

    def __init__(self, rate: float | None = None) -> None:
        self.rate = rate if rate is not None else float(os.environ.get("SKAT_PLAYER_RATE", "1000"))
        self.buckets: dict[str, TokenBucket] = {}

    def allow(self, player: str) -> bool:
        bucket = self.buckets.get(player)
        if bucket is None:
            if len(self.buckets) > 100_000:  # forget idle players rather than grow without bound
                self.buckets.clear()
            bucket = self.buckets[player] = TokenBucket(self.rate, 2 * self.rate)
        return bucket.take()
