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
    """One bucket per player id. ``SKAT_PLAYER_RATE`` (messages per second, default 1000: a
    fast bot at many tables at once stays well below it) sets the rate; the burst is twice it.

    The check is the first thing done with a message (before a task, a decode or a read), and
    a refused message is dropped: a flooder gets at most one ``rate_limited`` answer per
    ``notice_every`` seconds, so answering cannot become the flood's amplifier."""

    MAX_PLAYERS = 100_000

    def __init__(self, rate: float | None = None, notice_every: float = 1.0) -> None:
        self.rate = rate if rate is not None else float(os.environ.get("SKAT_PLAYER_RATE", "1000"))
        self.notice_every = notice_every
        self.buckets: dict[str, TokenBucket] = {}
        self._noticed: dict[str, float] = {}
        self.dropped = 0
        """Messages refused since start (for the logs and the benchmark)."""

    def allow(self, player: str) -> bool:
        bucket = self.buckets.get(player)
        if bucket is None:
            if len(self.buckets) >= self.MAX_PLAYERS:  # forget idle players rather than grow without bound
                self.buckets.clear()
                self._noticed.clear()
            bucket = self.buckets[player] = TokenBucket(self.rate, 2 * self.rate)
        if bucket.take():
            return True
        self.dropped += 1
        return False

    def drain(self, player: str) -> None:
        """Empty ``player``'s bucket (when its door reopens after a flood: it starts again at
        its rate, not with a full burst)."""
        bucket = self.buckets.get(player)
        if bucket is not None:
            bucket.tokens, bucket.stamp = 0.0, time.monotonic()

    def should_notice(self, player: str, now: float | None = None) -> bool:
        """For a refused message: whether to tell the sender (once per ``notice_every``)."""
        now = time.monotonic() if now is None else now
        if now - self._noticed.get(player, -1e9) < self.notice_every:
            return False
        self._noticed[player] = now
        return True
