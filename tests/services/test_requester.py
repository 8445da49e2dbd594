"""services/requester.py against a real nats-server: answers reach the right caller, time-outs,
no responders, a server restart, a close with requests pending, foreign messages on the inbox."""

from __future__ import annotations

import asyncio
import random

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import TableClosed
from services.natsserver import EmbeddedServer
from services.requester import Requester, encode_headers, for_connection
from services.store import EventStore
from skatbus.player import Inbox


async def _until(condition: object, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (polling), or fail."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():  # type: ignore[operator]
        assert loop.time() < end, "condition not reached in time"
        await asyncio.sleep(0.02)


async def _responder(url: str, subject: str, delay: bool = False, **options: object) -> Client:
    """A second connection answering ``subject`` with the request's own data (after a random
    pause when ``delay``, so that answers come back out of order)."""
    other = await nats.connect(url, **options)  # type: ignore[arg-type]

    async def answer(msg: Msg) -> None:
        if delay:
            await asyncio.sleep(random.random() * 0.05)
        await msg.respond(msg.data)

    async def echo(msg: Msg) -> None:
        asyncio.ensure_future(answer(msg))  # answered concurrently, in any order

    await other.subscribe(subject, cb=echo)
    await other.flush()
    return other


async def _answered(nc: Client, subject: str, timeout: float = 10.0) -> None:
    """Wait until ``nc``'s requests to ``subject`` reach the responder. A nats-server just
    started now and then answers a connection's first request "no responders" although the
    responder's subscription was flushed (1 in 10 fresh servers here, with ``nc.request`` as
    with ``Requester``; the next request is answered): the tests start from an answered probe."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        try:
            await nc.request(subject, b"probe", timeout=1.0)
            return
        except nats.errors.NoRespondersError:
            assert loop.time() < end, f"nobody answers {subject}"
            await asyncio.sleep(0.05)


async def test_each_answer_reaches_its_own_caller(nats_server: EmbeddedServer, nc: Client) -> None:
    other = await _responder(nats_server.url, "t.echo", delay=True)
    await _answered(nc, "t.echo")
    try:
        requester = Requester(nc)
        payloads = [f"request {i}".encode() for i in range(300)]
        asked = asyncio.gather(*(requester.request("t.echo", p, timeout=5.0) for p in payloads))
        answers = await asyncio.wait_for(asked, 20.0)  # an answer routed nowhere must fail, not hang
        assert [a.data for a in answers] == payloads
        assert requester.pending == 0
        assert requester.prefix is not None and requester.prefix.startswith("_INBOX.")
    finally:
        await other.close()


async def test_time_outs_come_at_each_requests_own_deadline(nc: Client) -> None:
    await nc.subscribe("t.silent", cb=_ignore)
    requester = Requester(nc)
    loop = asyncio.get_running_loop()
    started = loop.time()
    long = asyncio.ensure_future(requester.request("t.silent", b"", timeout=0.5))
    await _until(lambda: requester.pending == 1)
    with pytest.raises(nats.errors.TimeoutError):  # shorter, asked later: the timer re-arms for it
        await requester.request("t.silent", b"", timeout=0.05)
    assert loop.time() - started < 0.45
    assert not long.done()
    with pytest.raises(asyncio.TimeoutError):  # what callers of nc.request / the old inbox catch
        await long
    assert loop.time() - started >= 0.5
    assert requester.pending == 0 and requester.timed_out == 2


async def test_nobody_listening_is_no_responders(nc: Client) -> None:
    with pytest.raises(nats.errors.NoRespondersError):
        await Requester(nc).request("t.nobody", b"", timeout=5.0)
    store = EventStore(nc)
    with pytest.raises(nats.js.errors.NoStreamResponseError):  # as js.publish says it
        await store._publish("skat.log.nostream", b"", encode_headers({"Nats-Msg-Id": "x"}))


async def test_a_cancelled_caller_leaves_nothing_behind(nc: Client) -> None:
    await nc.subscribe("t.silent", cb=_ignore)
    requester = Requester(nc)
    waiting = asyncio.ensure_future(requester.request("t.silent", b"", timeout=30.0))
    await _until(lambda: requester.pending == 1)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert requester.pending == 0


async def test_foreign_and_late_messages_on_the_inbox_are_ignored(nats_server: EmbeddedServer, nc: Client) -> None:
    other = await _responder(nats_server.url, "t.echo")
    await _answered(nc, "t.echo")
    try:
        requester = Requester(nc)
        first = await requester.request("t.echo", b"first", timeout=5.0)
        assert requester.prefix is not None
        # A second answer to the finished request, and one to a request never made.
        await other.publish(first.subject, b"late")
        await other.publish(f"{requester.prefix}.999999", b"foreign")
        await other.publish(f"{requester.prefix}.x", b"not even a number")
        await other.flush()
        answers = [await requester.request("t.echo", f"next {i}".encode(), timeout=5.0) for i in range(3)]
        assert [a.data for a in answers] == [b"next 0", b"next 1", b"next 2"]
        assert requester.pending == 0
    finally:
        await other.close()


async def test_pending_requests_fail_when_the_connection_closes(nats_server: EmbeddedServer) -> None:
    nc = await nats.connect(nats_server.url)
    await nc.subscribe("t.silent", cb=_ignore)
    requester = for_connection(nc)
    assert for_connection(nc) is requester  # one inbox per connection
    waiting = [asyncio.ensure_future(requester.request("t.silent", b"", timeout=30.0)) for _ in range(3)]
    await _until(lambda: requester.pending == 3)
    started = asyncio.get_running_loop().time()
    await nc.close()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(r, nats.errors.ConnectionClosedError) for r in results), results
    assert asyncio.get_running_loop().time() - started < 5.0  # at once, not after their 30 s
    with pytest.raises(nats.errors.ConnectionClosedError):
        await requester.request("t.silent", b"", timeout=1.0)


async def test_pending_requests_fail_when_the_connection_drains(nats_server: EmbeddedServer) -> None:
    nc = await nats.connect(nats_server.url)
    await nc.subscribe("t.silent", cb=_ignore)
    requester = for_connection(nc)
    waiting = asyncio.ensure_future(requester.request("t.silent", b"", timeout=1.0))
    await _until(lambda: requester.pending == 1)
    await nc.drain()  # our subscription is drained away first: the sweep says why at the deadline
    with pytest.raises(nats.errors.ConnectionClosedError):
        await waiting
    assert requester.pending == 0


async def test_closing_the_requester_or_stopping_an_inbox(nc: Client) -> None:
    await nc.subscribe("t.silent", cb=_ignore)
    requester = Requester(nc)
    waiting = asyncio.ensure_future(requester.request("t.silent", b"", timeout=30.0))
    await _until(lambda: requester.pending == 1)
    await requester.close()
    with pytest.raises(nats.errors.ConnectionClosedError):
        await waiting
    inbox = Inbox(nc, "ann")  # a player's: under _INBOX.<player>., cancelled on stop as before
    assert inbox.prefix.startswith("_INBOX.ann.")
    await inbox.start()
    asked = asyncio.ensure_future(inbox.request("t.silent", b"", 30.0))
    await _until(lambda: inbox._requests.pending == 1)
    await inbox.stop()
    with pytest.raises(asyncio.CancelledError):
        await asked


async def test_requests_work_again_after_a_server_restart(nats_server: EmbeddedServer) -> None:
    options = {"max_reconnect_attempts": -1, "reconnect_time_wait": 0.1}
    nc = await nats.connect(nats_server.url, **options)  # type: ignore[arg-type]
    other = await _responder(nats_server.url, "t.echo", **options)
    await _answered(nc, "t.echo")
    store = EventStore(nc, timeout=0.5, patience=20.0)
    try:
        await store.ensure_stream()
        requester = Requester(nc)
        assert (await requester.request("t.echo", b"before", timeout=5.0)).data == b"before"
        seq = await store.append("rq1", 0, TableClosed(reason="before"), 0)
        assert nats_server.proc is not None
        nats_server.proc.kill()
        nats_server.proc.wait()
        await _until(lambda: not nc.is_connected)
        with pytest.raises(asyncio.TimeoutError):  # in flight while the server is away
            await requester.request("t.echo", b"lost", timeout=0.3)
        nats_server.start()  # the same port and the same store
        await _until(lambda: nc.is_connected and other.is_connected)

        async def answered() -> bytes:
            while True:  # the inbox is subscribed again; the responder's interest may lag
                try:
                    return (await requester.request("t.echo", b"after", timeout=0.5)).data
                except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
                    await asyncio.sleep(0.05)

        assert await asyncio.wait_for(answered(), 10.0) == b"after"
        # The store's appends go on through the same kind of inbox (retried while the stream recovers).
        assert await store.append("rq1", 1, TableClosed(reason="after"), seq) > seq
        assert [s.index for s in await store.read("rq1")] == [0, 1]
        assert requester.pending == 0
    finally:
        await other.close()
        await nc.close()


def test_headers_are_encoded_as_nats_py_does_and_refused_when_they_would_smuggle() -> None:
    headers = {"Nats-Msg-Id": "t1:3", "Nats-Expected-Last-Subject-Sequence": "17"}
    assert (
        encode_headers(headers) == b"NATS/1.0\r\nNats-Msg-Id: t1:3\r\nNats-Expected-Last-Subject-Sequence: 17\r\n\r\n"
    )
    for bad in ({"A": "x\r\nB: y"}, {"A B": "x"}, {"A:": "x"}, {"": "x"}):
        with pytest.raises(ValueError):
            encode_headers(bad)


async def _ignore(msg: Msg) -> None:
    """A subscriber that never answers."""


def test_the_bench_section_measures_both_paths() -> None:
    """``python -m bench requests`` in its smallest form: every figure there, and the
    requester's next to nc.request's of the same run (the bench refuses a run with time-outs)."""
    from bench import Options
    from bench.requests import run

    rows = run(Options(quick=True, repeats=1))
    assert len(rows) == 8
    assert all(row.value > 0 for row in rows)
    assert [row.relative is not None for row in rows] == [False, True] * 4
