"""Fair clocks: a paused table runs no deadline and takes no command; a seat that keeps missing
its turns is withdrawn and defaulted at once; and time the services were away is not charged to
the seat to move (it gets a whole turn after the recovery)."""

from __future__ import annotations

import asyncio
import time

import msgspec
from nats.aio.client import Client

from protocol.events import Event, PlayerTimedOut, SeatWithdrawn, TablePaused, TableResumed
from protocol.skat.decide import timeout
from protocol.skat.rules import Rules
from protocol.skat.table import TableState, due
from protocol.subjects import ADMIN_PAUSE
from protocol.wire import OpenTable, PauseTable, Reply, decode, encode
from services.store import EventStore, Stored
from tests.bus import Stack, ask, open_table, wait_closed

PLAYERS = ["ann", "bob", "cyd"]


async def _pause(nc: Client, table: str, paused: bool, reason: str = "") -> Reply:
    msg = await nc.request(ADMIN_PAUSE, encode(PauseTable(table=table, paused=paused, reason=reason)), timeout=10)
    return decode(msg.data, Reply)  # type: ignore[no-any-return]


async def _wait_for(nc: Client, table: str, kind: type[Event], count: int = 1, within: float = 60.0) -> list[Stored]:
    """The table's log once it holds ``count`` events of ``kind``."""
    store = EventStore(nc)
    end = time.monotonic() + within
    while True:
        log = await store.read(table)
        if sum(isinstance(s.event, kind) for s in log) >= count:
            return log
        if time.monotonic() > end:
            raise TimeoutError(f"{table}: fewer than {count} {kind.__name__} after {within} s")
        await asyncio.sleep(0.05)


async def test_a_paused_table_runs_no_deadline_takes_no_command_and_gives_a_full_turn_on_resuming(
    stack: Stack, nc: Client
) -> None:
    turn = 1.0
    rules = Rules(rounds=1, turn_seconds=turn)
    assert (await open_table(nc, OpenTable(table="tp", players=PLAYERS, rules=rules, seed="p-1"))).ok
    reply = await _pause(nc, "tp", True, "lunch")
    assert reply.ok and reply.code == "", reply
    assert (await _pause(nc, "tp", True)).code == "unchanged"
    log = await _wait_for(nc, "tp", TablePaused)
    paused_at = next(i for i, s in enumerate(log) if isinstance(s.event, TablePaused))
    state = TableState()
    for s in log:
        assert s.event is not None
        state.apply(s.event)
    assert state.paused and state.to_move is None and due(state) is None
    # Nobody plays: an open table would time its seat out within a turn; wait three.
    mover = state.seats[state.deal.to_move] if state.deal and state.deal.to_move is not None else 0
    refused = await ask(nc, PLAYERS[mover], "tp", msgspec.json.encode({"type": "pass"}))
    assert refused.code == "paused" and "lunch" in refused.reason, refused
    await asyncio.sleep(3 * turn)
    log = await EventStore(nc).read("tp")
    assert len(log) == paused_at + 1, [type(s.event).__name__ for s in log[paused_at:]]

    resumed = await _pause(nc, "tp", False)
    assert resumed.ok and resumed.code == "", resumed
    log = await _wait_for(nc, "tp", PlayerTimedOut)
    kinds = [type(s.event) for s in log[paused_at:]]
    assert kinds[:3] == [TablePaused, TableResumed, PlayerTimedOut], kinds
    # The turn counts from the resumption, not from the deal: a whole turn after it.
    assert log[paused_at + 2].time - log[paused_at + 1].time >= turn - 0.05
    await _pause(nc, "tp", True)  # leave no table timing out behind the test


async def test_pause_requests_are_checked() -> None:
    """Bad requests are refused without touching any table (decoded like the dealer does)."""
    try:
        decode(b'{"table": "t", "paused": true, "extra": 1}', PauseTable, "json")
    except msgspec.ValidationError:
        pass
    else:
        raise AssertionError("unknown fields must be refused")


async def test_pausing_an_unknown_or_odd_table_is_refused(stack: Stack, nc: Client) -> None:
    for _ in range(100):  # the dealer may still be starting
        try:
            reply = await _pause(nc, "nowhere", True)
            break
        except Exception:
            await asyncio.sleep(0.1)
    assert reply.code == "no_table", reply
    odd = await nc.request(ADMIN_PAUSE, msgspec.json.encode({"table": "a.*", "paused": True}), timeout=10)
    assert decode(odd.data, Reply, "json").code == "malformed"


def _all_defaulted(rules: Rules, seed: str) -> list[Event]:
    """The table's log if nobody ever answers: the pure engine, every turn a time-out."""
    from protocol.events import TableOpened

    state = TableState()
    log: list[Event] = [TableOpened(table="tw", players=PLAYERS, rules=rules, seed=seed)]
    state.apply(log[0])
    while not state.closed:
        owed = due(state)
        events = [owed] if owed is not None else timeout(state)
        assert events
        for event in events:
            state.apply(event)
            log.append(event)
    return log


async def test_a_seat_missing_its_turns_is_withdrawn_and_defaulted_at_once(stack: Stack, nc: Client) -> None:
    rules = Rules(rounds=1, turn_seconds=0.5, max_timeouts=2)
    assert (await open_table(nc, OpenTable(table="tw", players=PLAYERS, rules=rules, seed="w-1"))).ok
    log = [s.event for s in await _wait_for(nc, "tw", SeatWithdrawn, count=3)]
    expected = _all_defaulted(rules, "w-1")
    assert log == expected[: len(log)]
    # Withdrawn seats do not wait out a turn: the rest of the table goes by at once.
    closed = await wait_closed(nc, "tw", timeout=60)
    assert closed == expected
    withdrawn = [e for e in closed if isinstance(e, SeatWithdrawn)]
    assert sorted(e.seat for e in withdrawn) == [0, 1, 2] and all(e.missed == 2 for e in withdrawn)


async def test_time_the_services_were_down_is_not_charged_to_the_seat(stack: Stack, nc: Client) -> None:
    """The bidding service (whose phase it is) is away for several turns: when it is back, the
    seat to move gets a whole turn from then, not a time-out at once."""
    turn = 2.0
    rules = Rules(rounds=1, turn_seconds=turn)
    stack.kill("bidding")
    assert (await open_table(nc, OpenTable(table="to", players=PLAYERS, rules=rules, seed="o-1"))).ok
    await asyncio.sleep(2 * turn)  # the first bid's deadline passes while nobody enforces it
    assert not any(isinstance(s.event, PlayerTimedOut) for s in await EventStore(nc).read("to"))
    restarted = time.time()
    stack.start("bidding")
    log = await _wait_for(nc, "to", PlayerTimedOut)
    timed_out = next(s for s in log if isinstance(s.event, PlayerTimedOut))
    assert timed_out.time - restarted >= turn - 0.05, timed_out.time - restarted


async def test_time_the_broker_was_down_is_not_charged_to_the_seat() -> None:
    """The nats-server dies while a seat is to move and comes back (same port, same store) after
    several turns: the services' deadline does not fire while they cannot hear the seat, and
    after their reconnect the seat gets a whole turn."""
    from services.main import wait_ready
    from services.natsserver import EmbeddedServer

    turn = 2.0
    server = EmbeddedServer().start()
    stack = Stack(server.url)
    stack.start_all()
    try:
        await wait_ready(server.url)
        nc = await nats_connect(server.url)
        rules = Rules(rounds=1, turn_seconds=turn)
        assert (await open_table(nc, OpenTable(table="tb", players=PLAYERS, rules=rules, seed="b-1"))).ok
        await nc.close()
        assert server.proc is not None
        server.proc.kill()
        server.proc.wait()
        await asyncio.sleep(2 * turn)  # the first bid's deadline passes while the broker is away
        server.start()
        back = time.time()
        nc = await nats_connect(server.url)
        try:
            log = await _wait_for(nc, "tb", PlayerTimedOut)
        finally:
            await nc.close()
        timed_out = next(s for s in log if isinstance(s.event, PlayerTimedOut))
        assert timed_out.time - back >= turn - 0.05, timed_out.time - back
    finally:
        stack.stop()
        server.stop()


async def nats_connect(url: str) -> Client:
    import nats

    return await nats.connect(url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
