"""Helpers for tests against a real nats-server and real service processes: the five services as
restartable processes, and small waits on a table's log. The fixtures live in tests/conftest.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from nats.aio.client import Client
from nats.errors import NoRespondersError

from protocol.events import Event, TableClosed
from protocol.subjects import ADMIN_OPEN, command_subject
from protocol.wire import OpenTable, Reply, decode, encode
from services.connection import ConnectionSettings
from services.main import SERVICES, service_env, stop_processes, wait_ready
from services.store import EventStore
from skatbus.player import Inbox

__all__ = ["Stack", "ask", "open_table", "wait_closed", "wait_events", "wait_ready"]


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


async def wait_events(nc: Client, table: str, count: int, timeout: float = 30.0) -> None:
    """Wait until the table's log holds at least ``count`` events."""
    store = EventStore(nc)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while len(await store.read(table)) < count:
        if loop.time() > end:
            raise TimeoutError(f"{table} has fewer than {count} events")
        await asyncio.sleep(0.005)
