"""Faults: killed services, competing instances, duplicate publishes, bad commands, silent players."""

from __future__ import annotations

import asyncio

import pytest
from nats.aio.client import Client

from protocol.events import MSGPACK, DealDealt, PlayerTimedOut, TableClosed, TableOpened
from protocol.skat.commands import Bid, Pass, PlayCard
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.wire import OpenTable, Reply, encode
from services.store import EventStore
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from tests.bus import Stack, ask, open_table, wait_closed, wait_events
from tests.services.test_table_over_bus import PLAYERS, pure_log

RULES = Rules(rounds=2, kontra=True, turn_seconds=60)


async def _players(nc: Client) -> list[RemotePlayer]:
    players = [RemotePlayer(nc, p, HashedBot("f"), request_timeout=1.0) for p in PLAYERS]
    for p in players:
        await p.start()
    return players


@pytest.mark.parametrize("victim", ["dealer", "bidding", "play", "scoring", "views"])
async def test_sigkill_mid_deal_loses_nothing(stack: Stack, nc: Client, victim: str) -> None:
    players = await _players(nc)
    assert (await open_table(nc, OpenTable(table="k", players=PLAYERS, rules=RULES, seed="kill"))).ok
    await wait_events(nc, "k", 12)  # inside the first deal
    stack.kill(victim)
    await asyncio.sleep(0.5)
    stack.start(victim)
    log = await wait_closed(nc, "k")
    for p in players:
        await p.stop()
    assert log == pure_log("k", RULES, "kill", "f")


async def test_two_instances_of_each_writer(stack: Stack, nc: Client) -> None:
    for name in ("dealer", "bidding", "play", "scoring"):
        stack.start(name)
    players = await _players(nc)
    for t in ("d1", "d2", "d3"):
        assert (await open_table(nc, OpenTable(table=t, players=PLAYERS, rules=RULES, seed=t))).ok
    for t in ("d1", "d2", "d3"):
        log = await wait_closed(nc, t)
        # Equal to the pure engine: nothing written twice, nothing out of order.
        assert log == pure_log(t, RULES, t, "f")
    for p in players:
        await p.stop()


async def test_a_cache_behind_the_prompt_never_refuses_a_good_move(nats_server: object, nc: Client) -> None:
    """Two instances of every writer share the triggers, so an instance often gets a command
    answering a prompt it has not seen yet. With almost no read budget, such a command must be
    answered "busy" (and retried), never refused: every move is taken, nobody times out."""
    from services.main import wait_ready

    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    stack.env["SKAT_PLAYER_READS"] = "1"
    stack.start_all()
    for name in ("bidding", "play"):
        stack.start(name)
    try:
        await wait_ready(stack.url)
        players = await _players(nc)
        for t in ("c1", "c2", "c3", "c4"):
            assert (await open_table(nc, OpenTable(table=t, players=PLAYERS, rules=RULES, seed=t))).ok
        for t in ("c1", "c2", "c3", "c4"):
            assert await wait_closed(nc, t) == pure_log(t, RULES, t, "f")
        for p in players:
            await p.stop()
        assert not [r for p in players for r in p.rejections], [r for p in players for r in p.rejections]
    finally:
        stack.stop()


async def test_duplicate_publish_is_stored_once(nc: Client) -> None:
    store = EventStore(nc)
    await store.ensure_stream()
    opened = TableOpened(table="dup", players=PLAYERS, rules=Rules(), seed="x")
    seq = await store.append("dup", 0, opened, 0)
    # The same append again (as after a lost acknowledgement): the same sequence, nothing new.
    assert await store.append("dup", 0, opened, 0) == seq
    # A raw publish with the same message id inside the duplicate window is dropped by the server.
    ack = await store.js.publish(
        store.subject("dup", opened), store.codec.encode(opened), headers={"Nats-Msg-Id": "dup:0"}
    )
    assert ack.duplicate and ack.seq == seq
    assert [s.seq for s in await store.read("dup")] == [seq]


async def test_an_atomic_batch_is_stored_whole_once_and_guarded_by_the_expected_sequence(nc: Client) -> None:
    """A card and the trick it completes go in one atomic batch: a retry of a batch that landed
    returns the same sequences and stores nothing twice; a batch behind the log is a conflict
    and stores nothing at all."""
    from protocol.skat.table import due
    from services.store import Conflict

    store = EventStore(nc)
    store.atomic = True  # off by default (SKAT_ATOMIC_BATCHES): measured slower on nats-server 2.15
    await store.ensure_stream()  # and so the stream is allowed batches
    assert store.atomic
    log = pure_log("bat", RULES, "bat", "f")
    first = await store.append_batch("bat", 0, log[:2], 0)  # opened and dealt
    assert len(first) == 2 and first[1] == first[0] + 1
    assert await store.append_batch("bat", 0, log[:2], 0) == first  # the retry: nothing new
    state = fold(log[:2])
    assert due(state) is None
    with pytest.raises(Conflict):
        await store.append_batch("bat", 2, log[2:4], 0)  # expects an empty table: too old
    assert [s.seq for s in await store.read("bat")] == first
    rest = await store.append_batch("bat", 2, log[2:5], first[-1])
    assert [s.event for s in await store.read("bat")] == log[:5]
    assert [s.index for s in await store.read("bat")] == [0, 1, 2, 3, 4] and len(rest) == 3


async def _ask(nc: Client, player: str, table: str, data: bytes) -> Reply:
    return await ask(nc, player, table, data)


async def test_bad_commands_are_answered_and_change_nothing(stack: Stack, nc: Client) -> None:
    assert (await open_table(nc, OpenTable(table="bad", players=PLAYERS, rules=RULES, seed="bad"))).ok
    store = EventStore(nc)
    await wait_events(nc, "bad", 2)  # opened and dealt: middlehand (bob) is to bid
    before = await store.read("bad")
    cases = [
        ("bob", b"\xc1\xff garbage", "malformed"),
        ("bob", b'{"type": "bid", "value": "lots"}', "malformed"),
        ("bob", b'{"type": "teleport"}', "malformed"),
        ("ann", encode(Bid(value=18)), "out_of_turn"),
        ("bob", encode(Bid(value=19)), "illegal"),
        ("bob", encode(PlayCard(card="CJ")), "illegal"),
        ("zed", encode(Pass()), "not_seated"),
        ("cyd", b'{"type": "pass"}', "out_of_turn"),
    ]
    for player, data, code in cases:
        reply = await _ask(nc, player, "bad", data)
        assert (reply.ok, reply.code) == (False, code), (player, data, reply)
        assert reply.reason
    json_reply = await _ask(nc, "ann", "bad", b'{"type": "pass"}')
    assert json_reply.code == "out_of_turn" and "bob" in json_reply.reason
    assert await store.read("bad") == before
    # The services are still up and a good command works.
    assert (await _ask(nc, "bob", "bad", encode(Bid(value=18)))).ok
    assert len(await store.read("bad")) == len(before) + 1
    assert all(stack.alive(n) for n in ("dealer", "bidding", "play", "scoring", "views"))


async def test_silent_players_are_timed_out_even_across_a_restart(stack: Stack, nc: Client) -> None:
    rules = Rules(rounds=1, turn_seconds=0.4)
    assert (await open_table(nc, OpenTable(table="quiet", players=PLAYERS, rules=rules, seed="q"))).ok
    await wait_events(nc, "quiet", 4)  # the first time-out happened
    stack.kill("bidding")
    await asyncio.sleep(0.6)  # a deadline passes while nobody owns it
    stack.start("bidding")
    log = await wait_closed(nc, "quiet", timeout=60)
    timeouts = [e for e in log if isinstance(e, PlayerTimedOut)]
    assert len(timeouts) == 9  # three deals, everyone passes by default
    assert sum(isinstance(e, DealDealt) for e in log) == 3
    assert [row.result.kind for row in fold(log).sheet] == ["passed"] * 3


async def test_a_silent_player_among_bots_is_timed_out_and_the_table_finishes(stack: Stack, nc: Client) -> None:
    rules = Rules(rounds=1, turn_seconds=0.3)
    bots = [RemotePlayer(nc, p, HashedBot("s"), request_timeout=1.0) for p in PLAYERS[:2]]
    for b in bots:
        await b.start()
    assert (await open_table(nc, OpenTable(table="mixed", players=PLAYERS, rules=rules, seed="m"))).ok
    log = await wait_closed(nc, "mixed", timeout=90)
    for b in bots:
        await b.stop()
    silent = PLAYERS.index("cyd")
    timeouts = [e for e in log if isinstance(e, PlayerTimedOut)]
    assert timeouts and all(e.seat == silent for e in timeouts)
    fold(log)  # a sound log


async def test_a_foreign_message_in_the_log_does_not_stall_the_table(stack: Stack, nc: Client) -> None:
    """Someone with write access publishes junk into a table's log: the services skip it."""
    players = await _players(nc)
    assert (await open_table(nc, OpenTable(table="junk", players=PLAYERS, rules=RULES, seed="junk"))).ok
    await wait_events(nc, "junk", 10)
    await nc.publish("skat.log.junk.bid", b"not an event")
    await nc.publish("skat.log.junk.card_played", encode(PlayCard(card="CJ")), headers={"Nats-Msg-Id": "junk:999"})
    forged = MSGPACK.encode(TableClosed(reason="forged"))
    await nc.publish("skat.log.junk.table_closed", forged, headers={"Nats-Msg-Id": "junk:998"})
    store = EventStore(nc)
    loop = asyncio.get_running_loop()
    end = loop.time() + 60
    while True:
        stored = await store.read("junk")
        ours = [s.event for s in stored if s.event is not None and s.index >= 0 and s.index < 900]
        if ours and type(ours[-1]).__name__ == "TableClosed":
            break
        assert loop.time() < end, "the table stalled"
        await asyncio.sleep(0.1)
    for p in players:
        await p.stop()
    assert ours == pure_log("junk", RULES, "junk", "f")


async def test_a_repeated_or_late_command_is_refused_as_stale(stack: Stack, nc: Client) -> None:
    assert (await open_table(nc, OpenTable(table="stale", players=PLAYERS, rules=RULES, seed="stale"))).ok
    await wait_events(nc, "stale", 2)
    first = await _ask(nc, "bob", "stale", encode(Bid(value=18, at=2)))
    assert first.ok
    again = await _ask(nc, "bob", "stale", encode(Bid(value=18, at=2)))
    assert (again.ok, again.code) == (False, "stale")
    hold_late = await _ask(nc, "ann", "stale", encode(Pass(at=2)))
    assert hold_late.code == "stale"
    assert (await _ask(nc, "ann", "stale", encode(Pass(at=3)))).ok


async def test_a_table_played_with_atomic_batches_equals_the_pure_engine(nats_server: object, nc: Client) -> None:
    """``SKAT_ATOMIC_BATCHES=1`` (off by default): every card and its trick, the last trick and
    the deal's end, a table opened and its first deal, each stored as one batch."""
    from services.main import wait_ready

    stack = Stack(nats_server.url)  # type: ignore[attr-defined]
    stack.env["SKAT_ATOMIC_BATCHES"] = "1"
    stack.start_all()
    try:
        await wait_ready(stack.url)
        players = await _players(nc)
        assert (await open_table(nc, OpenTable(table="ab", players=PLAYERS, rules=RULES, seed="ab"))).ok
        assert await wait_closed(nc, "ab") == pure_log("ab", RULES, "ab", "f")
        for p in players:
            await p.stop()
        info = await nc.jetstream().stream_info("SKAT")
        assert info.config.allow_atomic
    finally:
        stack.stop()
