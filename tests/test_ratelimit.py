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


def test_a_drained_bucket_starts_again_at_the_rate() -> None:
    limits = PlayerLimits(rate=10)
    assert all(limits.allow("a") for _ in range(20))
    limits.drain("a")
    assert not limits.allow("a")
    assert limits.should_notice("a", now=100.0) and not limits.should_notice("a", now=100.5)
    assert limits.should_notice("a", now=101.0)


async def test_doors_close_for_a_flooder_and_reopen_with_a_doubling_penalty() -> None:
    from services.doors import Doors

    class FakeSub:
        def __init__(self, subject: str) -> None:
            self.subject, self.active = subject, True

        async def unsubscribe(self) -> None:
            self.active = False

    class FakeClient:
        def __init__(self) -> None:
            self.subs: list[FakeSub] = []

        async def subscribe(self, subject: str, queue: str, cb: object) -> FakeSub:
            self.subs.append(FakeSub(subject))
            return self.subs[-1]

    async def handler(msg: object) -> None: ...

    nc = FakeClient()
    doors = Doors(nc, "skat.cmd.{player}.*", "q", handler)  # type: ignore[arg-type]
    doors.seat("m")
    doors.seat("m")  # two tables
    await doors.flush()
    assert [s.subject for s in nc.subs] == ["skat.cmd.m.*"] and doors.is_open("m")
    assert doors.bench("m") == 1.0
    await doors.flush()
    assert not doors.is_open("m") and not nc.subs[0].active
    doors._unbench("m")
    await doors.flush()
    assert doors.is_open("m")
    assert doors.bench("m") == 2.0  # again within a minute: twice as long
    doors._unbench("m")
    doors.unseat("m")
    await doors.flush()
    assert doors.is_open("m")  # still seated at one table
    doors.unseat("m")
    await doors.flush()
    assert not doors.is_open("m")
    await doors.close()
