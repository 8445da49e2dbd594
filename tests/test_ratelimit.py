"""The token bucket behind per-player command limits."""

from services.ratelimit import PlayerLimits, TokenBucket


def test_bucket_allows_a_burst_then_the_rate() -> None:
    bucket = TokenBucket(rate=10, burst=20)
    t = bucket.stamp
    assert sum(bucket.take(t) for _ in range(50)) == 20  # the burst, then nothing
    assert sum(bucket.take(t + 0.5) for _ in range(50)) == 5  # half a second refills five
    assert not bucket.take(t + 0.5)


def test_limits_are_per_player() -> None:
    limits = PlayerLimits(rate=1)
    assert [limits.allow("a") for _ in range(3)] == [True, True, False]
    assert limits.allow("b")
