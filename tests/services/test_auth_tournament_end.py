"""The one JetStream request ``skat auth`` lets a player make: the kept last announcement of a
tournament (``protocol.subjects.tournament_end_request``). It opens nothing else: not the
stream's other requests, not the log's stream, not another subject, and no way to forge an end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.aio.client import Client

from protocol.subjects import tournament_end_request
from services.auth import SERVICE_USER, AuthDir, player_permissions, write_auth
from services.connection import open_connection
from services.natsserver import EmbeddedServer, free_port
from skatbus.tournament_end import announce_finished


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[tuple[EmbeddedServer, AuthDir]]:
    auth = write_auth(
        tmp_path / "auth", ["ann", "bob"], store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port())
    )
    server = EmbeddedServer(config=auth.config, host=auth.host, port=auth.port).start()
    try:
        yield server, auth
    finally:
        server.stop()


def test_the_permission_is_one_subject_of_one_stream() -> None:
    allowed = player_permissions("ann")["publish"]["allow"]  # type: ignore[index]
    assert allowed == ["skat.cmd.ann.>", "skat.hello.ann", "$JS.API.DIRECT.GET.SKATEND.skat.public.tournament.*"]


async def test_a_player_reads_a_kept_end_and_nothing_else(secured: tuple[EmbeddedServer, AuthDir]) -> None:
    server, auth = secured
    services = await open_connection(auth.settings(SERVICE_USER, server.url))
    await announce_finished(services, "t1", "skat", ["bob"])
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc).lower())

    ann: Client = await open_connection(auth.settings("ann", server.url), inbox_prefix="_INBOX.ann", error_cb=on_error)
    try:
        kept = await ann.request(tournament_end_request("t1"), b"", timeout=2)  # another's tournament: public
        assert kept.headers and kept.headers["Nats-Subject"] == "skat.public.tournament.t1"
        assert b'"finished": true' in kept.data
        missing = await ann.request(tournament_end_request("t2"), b"", timeout=2)
        assert missing.headers and missing.headers.get("Status") == "404" and not missing.data
        refused = [
            "$JS.API.DIRECT.GET.SKATEND",  # by sequence, in the body
            "$JS.API.DIRECT.GET.SKATEND.skat.public.t1",  # a table's feed is no tournament's
            "$JS.API.DIRECT.GET.SKATEND.skat.public.tournament.t1.x",
            "$JS.API.DIRECT.GET.SKAT.skat.log.t1.deal_dealt.1",  # the log: every hand
            "$JS.API.STREAM.INFO.SKATEND",
            "$JS.API.STREAM.MSG.GET.SKATEND",
            "$JS.API.CONSUMER.CREATE.SKATEND",
            "skat.public.tournament.t2",  # a forged end
        ]
        for subject in refused:
            await ann.publish(subject, b'{"seq": 1}', reply="_INBOX.ann.x")
        async with asyncio.timeout(10):
            while not all(any(f'publish to "{s.lower()}"' in e for e in errors) for s in refused):
                await asyncio.sleep(0.05)
    finally:
        await ann.close()
        await services.close()
