"""With the configuration from ``skat auth`` (an NKey user per player), the broker itself keeps
players to their own subjects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client

from protocol.events import PlayerTimedOut
from protocol.skat.commands import Pass
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.subjects import command_subject
from protocol.wire import OpenTable, encode
from services.auth import PLAYER_CONNECTIONS, SERVICE_USER, AuthDir, write_auth
from services.connection import open_connection
from services.natsserver import EmbeddedServer, free_port
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from skatbus.sdk import connect_player
from tests.bus import Stack, open_table, wait_closed, wait_events, wait_ready

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


class Relay:
    """A TCP relay in front of the server: ``cut()`` drops the connections through it as a
    network fault would, and the client reconnects (through the relay: its only server)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.links: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"nats://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def start(self) -> Relay:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        return self

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.links += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except OSError:
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        for writer in self.links:
            writer.transport.abort()
        self.links.clear()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        self.cut()


async def _hold_every_connection(server: EmbeddedServer, auth: AuthDir, player: str) -> list[Client]:
    """As many connections as the server lets ``player`` open: its whole allowance, and then
    one more, which must be refused (tried without reconnecting: nats-py would retry a refused
    first connect for as long as reconnects are allowed)."""
    held: list[Client] = []
    refused = ""
    for _ in range(PLAYER_CONNECTIONS * len(PLAYERS) + 1):  # beyond what a shared account would allow
        try:
            held.append(
                await open_connection(
                    auth.settings(player, server.url), inbox_prefix=f"_INBOX.{player}", allow_reconnect=False,
                    connect_timeout=5,
                )
            )  # fmt: skip
        except Exception as exc:
            refused = str(exc)
            break
    assert len(held) == PLAYER_CONNECTIONS, (len(held), refused)
    assert "maximum account active connections" in refused, refused
    return held


class Sent:
    """Counts the commands a player sent (``RemotePlayer``'s observer)."""

    def __init__(self) -> None:
        self.count = 0

    def prompted(self, table: str) -> None:
        pass

    def sent(self, table: str) -> None:
        self.count += 1


async def test_a_player_holding_all_her_connections_locks_nobody_else_out(secured: Secured) -> None:
    """Ann holds every connection she may have (a bot gone wild, or on purpose). Bob still
    connects, loses his connection mid-table and reconnects, and plays every move in time: the
    connection allowance is each player's own, not one shared by all."""
    server, auth, stack = secured
    admin = await open_connection(stack.settings)
    held = await _hold_every_connection(server, auth, "ann")
    relay = await Relay(server.port).start()
    ann = RemotePlayer(held[0], "ann", HashedBot("hog"))  # she plays her own seat on one of them
    await ann.start()
    bob_nc = await connect_player("bob", relay.url, auth.seed_file("bob"))  # says hello on each reconnect
    bob_sent = Sent()
    bob = RemotePlayer(bob_nc, "bob", HashedBot("hog"), observer=bob_sent, hello_on_reconnect=False)
    await bob.start()
    cyd_nc = await connect_player("cyd", server.url, auth.seed_file("cyd"))
    cyd = RemotePlayer(cyd_nc, "cyd", HashedBot("hog"), hello_on_reconnect=False)
    await cyd.start()
    try:
        for remote in (bob, cyd):
            await remote.hello()
        rules = Rules(rounds=1, turn_seconds=30)
        assert (await open_table(admin, OpenTable(table="hog", players=PLAYERS, rules=rules, seed="hog"))).ok
        await wait_events(admin, "hog", 8)  # dealt, and bidding under way
        relay.cut()  # bob's line drops; ann still holds all hers
        for _ in range(400):
            if bob_nc.stats["reconnects"] >= 1 and bob_nc.is_connected:
                break
            await asyncio.sleep(0.05)
        assert bob_nc.stats["reconnects"] >= 1 and bob_nc.is_connected
        before = bob_sent.count
        log = await wait_closed(admin, "hog", timeout=90)
        assert bob_sent.count > before  # he played on after coming back
        assert not [e for e in log if isinstance(e, PlayerTimedOut)], [e for e in log if isinstance(e, PlayerTimedOut)]
        assert fold(log).closed
        assert not bob.rejections and not cyd.rejections and not ann.rejections
        # ... and through all that, ann never got a connection beyond her own allowance.
        with pytest.raises(Exception, match="(?i)maximum account active connections"):
            await open_connection(auth.settings("ann", server.url), inbox_prefix="_INBOX.ann", allow_reconnect=False)
    finally:
        for remote in (ann, bob, cyd):
            await remote.stop()
        for nc in (*held, bob_nc, cyd_nc, admin):
            await nc.close()
        await relay.close()


async def test_a_withheld_feed_reaches_the_operator_and_no_player(secured: Secured) -> None:
    """A tournament withholds the feeds of duplicate tables with remote entrants (a sibling
    table's feed would show them their own deal ahead): the redacted events go to
    skat.watch.<table>, which the operator's tools read and no player may subscribe to."""
    server, auth, stack = secured
    admin = await open_connection(stack.settings)
    watched: list[bytes] = []
    published: list[bytes] = []

    async def on_watch(msg: Any) -> None:
        watched.append(msg.data)

    async def on_public(msg: Any) -> None:
        published.append(msg.data)

    await admin.subscribe("skat.watch.held", cb=on_watch)
    await admin.subscribe("skat.public.held", cb=on_public)
    errors: list[str] = []
    ann = await _connect_as(server, auth, "ann", errors)
    await ann.subscribe("skat.watch.>", cb=on_public)
    assert await _violation(errors, "skat.watch.>"), errors
    request = OpenTable(table="held", players=PLAYERS, seed="held", feed="withheld")
    assert (await open_table(admin, request)).ok
    for _ in range(100):  # the opening and the first deal, as spectators would see them
        if len(watched) >= 2:
            break
        await asyncio.sleep(0.05)
    assert len(watched) >= 2 and published == []
    assert [e.feed for e in fold_opened(await admin_log(admin, "held"))] == ["withheld"]
    await ann.close()
    await admin.close()


def fold_opened(log: list[Any]) -> list[Any]:
    return [e for e in log if type(e).__name__ == "TableOpened"]


async def admin_log(nc: Client, table: str) -> list[Any]:
    from services.store import EventStore

    return [s.event for s in await EventStore(nc).read(table)]
