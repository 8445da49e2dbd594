"""With the configuration from ``skat auth`` (an NKey user per player), the broker itself keeps
players to their own subjects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.aio.client import Client

from protocol.commands import Pass
from protocol.rules import Rules
from protocol.subjects import command_subject
from protocol.table import fold
from protocol.wire import OpenTable, encode
from services.auth import SERVICE_USER, AuthDir, write_auth
from services.connection import open_connection
from services.natsserver import EmbeddedServer, free_port
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from tests.bus import Stack, open_table, wait_closed, wait_ready

PLAYERS = ["ann", "bob", "cyd"]


Secured = tuple[EmbeddedServer, AuthDir, Stack]


def start_server(auth: AuthDir) -> EmbeddedServer:
    """The server of a ``skat auth`` directory, as ``skat up --auth`` runs it."""
    return EmbeddedServer(config=auth.config, host=auth.host, port=auth.port, tls=auth.tls).start()


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[Secured]:
    auth = write_auth(tmp_path / "auth", PLAYERS, store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port()))
    for name in ("nats-server.conf", "skat-services.nk", *(f"{p}.nk" for p in PLAYERS)):
        assert (tmp_path / "auth" / name).stat().st_mode & 0o777 == 0o600, name
    config = (tmp_path / "auth" / "nats-server.conf").read_text()
    for user in [SERVICE_USER, *PLAYERS]:
        assert Path(auth.seed_file(user)).read_text().strip() not in config  # public keys only
    server = start_server(auth)
    stack = Stack(auth.settings(SERVICE_USER, server.url))
    stack.start_all()
    try:
        await wait_ready(stack.settings)
        yield server, auth, stack
    finally:
        stack.stop()
        server.stop()


async def _connect_as(server: EmbeddedServer, auth: AuthDir, player: str, errors: list[str]) -> Client:
    async def error_cb(exc: Exception) -> None:
        errors.append(str(exc))

    return await open_connection(auth.settings(player, server.url), inbox_prefix=f"_INBOX.{player}", error_cb=error_cb)


async def _violation(errors: list[str], what: str) -> bool:
    for _ in range(40):
        if any("permissions violation" in e.lower() and what.lower() in e.lower() for e in errors):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_player_cannot_see_or_act_for_others(secured: Secured) -> None:
    server, auth, stack = secured
    admin = await open_connection(stack.settings)
    assert (await open_table(admin, OpenTable(table="sec", players=PLAYERS, seed="sec"))).ok
    errors: list[str] = []
    ann = await _connect_as(server, auth, "ann", errors)
    seen: list[str] = []

    async def spy(msg: object) -> None:
        seen.append(getattr(msg, "subject", ""))

    for subject in ("skat.view.bob.>", "skat.log.>", "$JS.API.>", "skat.cmd.>"):
        await ann.subscribe(subject, cb=spy)
        assert await _violation(errors, subject), (subject, errors)
    with pytest.raises(Exception):  # noqa: B017  (a time-out or a permissions error: either refuses)
        await ann.jetstream(timeout=1.0).stream_info("SKAT")
    await ann.publish(command_subject("bob", "sec"), encode(Pass()))
    assert await _violation(errors, "skat.cmd.bob.sec")
    await asyncio.sleep(0.3)
    assert seen == []  # nothing of anybody else's ever arrived
    await ann.close()
    await admin.close()


async def test_players_with_their_own_users_play_a_table(secured: Secured) -> None:
    server, auth, stack = secured
    clients = []
    players = []
    errors: list[str] = []
    for name in PLAYERS:
        nc = await _connect_as(server, auth, name, errors)
        clients.append(nc)
        player = RemotePlayer(nc, name, HashedBot("sec"))
        await player.start()
        players.append(player)
    admin = await open_connection(stack.settings)
    assert (await open_table(admin, OpenTable(table="own", players=PLAYERS, rules=Rules(rounds=1), seed="own"))).ok
    log = await wait_closed(admin, "own")
    fold(log)
    assert not errors, errors
    assert all(not p.rejections for p in players)
    for p, nc in zip(players, clients):
        await p.stop()
        await nc.close()
    await admin.close()


async def test_a_player_cannot_make_the_services_reply_into_the_log(secured: Secured) -> None:
    """The broker checks the subject a player publishes to, not the reply subject it names:
    the services must only ever answer into reply inboxes."""
    from services.store import EventStore

    server, auth, stack = secured
    admin = await open_connection(stack.settings)
    assert (await open_table(admin, OpenTable(table="inj", players=PLAYERS, rules=Rules(rounds=1), seed="inj"))).ok
    store = EventStore(admin)
    await asyncio.sleep(0.3)
    before = len(await store.read("inj"))
    ann = await _connect_as(server, auth, "ann", [])
    for subject in ("skat.cmd.ann.inj", "skat.hello.ann"):
        await ann.publish(subject, encode(Pass()), reply="skat.log.inj.card_played")
    await ann.flush()
    await asyncio.sleep(0.5)
    stored = await store.read("inj")
    assert len(stored) == before and all(s.event is not None for s in stored)
    await ann.close()
    await admin.close()


async def test_with_only_her_own_key_mallory_writes_nothing_but_her_moves(secured: Secured) -> None:
    """The wildcard-table attack, spoofed replies and a flood, with nothing but one player's
    credentials: the log holds exactly the table's own events, and she hears only what is hers."""
    server, auth, stack = secured
    admin = await open_connection(stack.settings)
    errors: list[str] = []
    bots = []
    for name in ("ann", "bob"):
        nc = await _connect_as(server, auth, name, errors)
        bot = RemotePlayer(nc, name, HashedBot("mal"))
        await bot.start()
        bots.append((nc, bot))
    mallory = await _connect_as(server, auth, "cyd", errors)
    heard: list[str] = []

    async def on_reply(msg: object) -> None:
        heard.append(getattr(msg, "data", b"").decode(errors="replace"))

    await mallory.subscribe("_INBOX.cyd.mine.>", cb=on_reply)
    own = RemotePlayer(mallory, "cyd", HashedBot("mal"))  # she plays her own seat honestly too
    await own.start()
    rules = Rules(rounds=1, turn_seconds=30)
    assert (await open_table(admin, OpenTable(table="mal", players=PLAYERS, rules=rules, seed="mal"))).ok
    for token in ("*", ">", "mal.*", "mal"):
        for reply in ("_INBOX.cyd.mine.x", "_INBOX.ann.stolen", "skat.log.mal.card_played"):
            await mallory.publish(f"skat.cmd.cyd.{token}", encode(Pass()), reply=reply)
    for _ in range(3000):  # a flood: beyond her rate, her door closes for a while
        await mallory.publish("skat.cmd.cyd.mal", encode(Pass()), reply="_INBOX.cyd.mine.f")
    log = await wait_closed(admin, "mal", timeout=60)
    for nc, bot in bots:
        await bot.stop()
        await nc.close()
    await own.stop()
    await mallory.close()
    assert all(not p.rejections for _, p in bots)
    from tests.services.test_adversarial import _pure

    assert log == _pure("mal", PLAYERS, rules, "mal", "mal")
    info = await admin.jetstream().stream_info("SKAT", subjects_filter="skat.log.>")
    assert {s.split(".")[2] for s in (info.state.subjects or {})} == {"mal"}
    assert any("bad_subject" in h for h in heard)
    await admin.close()
