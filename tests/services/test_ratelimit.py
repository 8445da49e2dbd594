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


async def test_a_flood_switches_to_doors_and_a_flooder_is_shut_out_with_a_doubling_penalty() -> None:
    from services.doors import Doors

    class Sub:
        def __init__(self, subject: str) -> None:
            self.subject, self.active = subject, True

        async def unsubscribe(self) -> None:
            self.active = False

        async def drain(self) -> None:
            self.active = False

    class Client:
        """Records subscriptions: the broker's side of this is tested in test_adversarial."""

        def __init__(self) -> None:
            self.subs: list[Sub] = []

        async def subscribe(self, subject: str, queue: str, cb: object) -> Sub:
            self.subs.append(Sub(subject))
            return self.subs[-1]

        def active(self) -> list[str]:
            return sorted(s.subject for s in self.subs if s.active)

    async def handler(msg: object) -> None: ...

    nc = Client()
    doors = Doors(nc, "skat.cmd.{player}.*", "skat.cmd.*.*", "q", handler, calm_after=600.0)  # type: ignore[arg-type]
    await doors.open()
    for player in ("m", "m", "a"):  # m sits at two tables
        doors.seat(player)
    await doors.flush()
    assert nc.active() == ["skat.cmd.*.*"] and doors.is_open("m")
    assert doors.bench("m") == 1.0  # a flood: doors for the seated, none for m
    await doors.flush()
    assert nc.active() == ["skat.cmd.a.*"] and not doors.is_open("m") and doors.is_open("a")
    doors._unbench("m")
    await doors.flush()
    assert nc.active() == ["skat.cmd.a.*", "skat.cmd.m.*"]
    assert doors.bench("m") == 2.0  # again within a minute: twice as long
    doors._unbench("m")
    doors.calm_after = 0.0  # calm again (for as long as it takes): back to the wildcard
    doors._maybe_unguard()
    await doors.flush()
    assert nc.active() == ["skat.cmd.*.*"] and not doors.guarded
    await doors.close()
    assert nc.active() == []
