"""A replicated stream on a real 3-node cluster survives losing its leader (services/cluster.py).

nats-server's raft waits 4-9 s (a compile-time constant, server/raft.go) before followers of a
SIGKILLed leader campaign, so the kill test takes that long; the clean-stop test shows the
handover without that wait.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js.api import StreamConfig

from services.cluster import LocalCluster, stream_leader

T = TypeVar("T")

STREAM = "CLUSTERTEST"
SUBJECT = "clustertest.log"

# What nats-py raises while a stream has no leader: no responders at all, a 503 from the API or
# from the publish, or no answer in time.
NO_LEADER = (
    nats.errors.NoRespondersError,
    nats.errors.TimeoutError,
    asyncio.TimeoutError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
    LookupError,  # stream_leader: the stream exists but has no leader right now
)


async def retry(op: Callable[[], Awaitable[T]], bound: float) -> T:
    """``op()`` until it succeeds, retrying only the no-leader errors, for at most ``bound`` s."""
    end = time.monotonic() + bound
    while True:
        try:
            return await op()
        except NO_LEADER:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.05)


async def node_client(cluster: LocalCluster, name: str) -> Client:
    """A connection to node ``name`` only (no failover to the others)."""
    return await nats.connect(servers=[cluster.node_url(name)], allow_reconnect=False, connect_timeout=2)


async def wait_replica(cluster: LocalCluster, name: str, messages: int, bound: float = 30.0) -> dict[str, object]:
    """Until node ``name``'s own replica of the stream holds ``messages`` messages."""
    end = time.monotonic() + bound
    state = None
    while time.monotonic() < end:
        state = await asyncio.to_thread(cluster.stream_state, name, STREAM)
        if state and state["messages"] == messages:
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"{name}'s replica has {state} after {bound} s, expected {messages} messages")


async def create_replicated(nc: Client) -> None:
    await nc.jetstream().add_stream(StreamConfig(name=STREAM, subjects=[SUBJECT], num_replicas=3))


def test_cluster_api() -> None:
    with LocalCluster(size=3) as cluster:
        assert cluster.names == ["n1", "n2", "n3"]
        assert cluster.url == ",".join(cluster.urls)
        assert all(u.startswith("nats://127.0.0.1:") for u in cluster.urls)
        assert len(set(cluster.urls)) == 3
        pids = cluster.pids
        assert sorted(pids) == ["n1", "n2", "n3"] and len(set(pids.values())) == 3
        for name in cluster.names:
            conf = open(cluster.nodes[name].config_path).read()
            assert f"server_name: {name}" in conf
            others = [n for n in cluster.names if n != name]
            for other in others:  # routes to every other node
                assert cluster.nodes[other].route in conf
            assert cluster.nodes[name].route not in conf
        store_root, config_dir = cluster.store_root, cluster.config_dir
        meta = cluster.meta_leader()
        assert meta in cluster.names
        # A node that does not lead the meta group: it rejoins without any election.
        victim = next(n for n in cluster.names if n != meta)
        cluster.kill(victim)
        assert not cluster.running(victim) and victim not in cluster.pids
        cluster.restart(victim)
        assert cluster.running(victim) and cluster.pids[victim] != pids[victim]
        all_pids = list(cluster.pids.values())
    assert cluster.pids == {}
    for pid in all_pids:  # gone: stopped by PID, reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not os.path.exists(store_root) and not os.path.exists(config_dir)


def test_a_cluster_left_running_is_stopped_at_exit() -> None:
    """A program that forgets stop(): its nodes and temporary directories go when it exits."""
    code = (
        "import json; from services.cluster import LocalCluster; c = LocalCluster(3).start(); "
        "print(json.dumps({'pids': list(c.pids.values()), 'dir': c.config_dir}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    left = json.loads(done.stdout)
    assert len(left["pids"]) == 3
    for pid in left["pids"]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not os.path.exists(left["dir"])


async def test_replicated_stream_survives_sigkill_of_its_leader(nats_cluster: LocalCluster) -> None:
    cluster = nats_cluster
    nc = await nats.connect(servers=cluster.urls)
    await create_replicated(nc)  # works right after start(): the meta leader is there
    js = nc.jetstream()
    for i in range(10):
        await js.publish(SUBJECT, b"m%d" % i)
    await nc.close()

    # Every node serves the stream to its own clients, and holds its own copy.
    for name in cluster.names:
        client = await node_client(cluster, name)
        try:
            got = [(await client.jetstream().get_msg(STREAM, seq)).data for seq in range(1, 11)]
        finally:
            await client.close()
        assert got == [b"m%d" % i for i in range(10)], name
        await wait_replica(cluster, name, 10, bound=10.0)

    # SIGKILL the stream's leader; talk to the survivors only.
    probe = await nats.connect(servers=cluster.urls)
    old = await stream_leader(probe, STREAM)
    await probe.close()
    also_meta = cluster.meta_leader() == old  # then the meta group needs an election too
    survivors = [n for n in cluster.names if n != old]
    nc = await nats.connect(servers=[cluster.node_url(n) for n in survivors])
    try:
        js = nc.jetstream()
        killed_at = time.monotonic()
        cluster.kill(old)

        async def new_leader() -> str:
            leader = await stream_leader(nc, STREAM, timeout=0.25)  # short: a finer measurement
            if leader == old:  # stale answer from before the kill was noticed
                raise LookupError(leader)
            return leader

        leader = await retry(new_leader, bound=30.0)
        elected = time.monotonic() - killed_at
        assert leader in survivors
        ack = await retry(lambda: js.publish(SUBJECT, b"after-kill", timeout=1.0), bound=30.0)
        writable = time.monotonic() - killed_at
        assert ack.seq == 11
        print(
            f"\nSIGKILL of stream leader {old}{' (also meta leader)' if also_meta else ''}: "
            f"{leader} elected after {elected:.2f} s, appends again after {writable:.2f} s"
        )

        # The killed node comes back on its ports and store, and catches up with what it missed.
        restarted_at = time.monotonic()
        await asyncio.to_thread(cluster.restart, old)
        state = await wait_replica(cluster, old, 11)
        print(
            f"{old} restarted and caught up (last_seq {state['last_seq']}) in {time.monotonic() - restarted_at:.2f} s"
        )
        back = await node_client(cluster, old)
        try:
            assert (await back.jetstream().get_msg(STREAM, 11)).data == b"after-kill"
            info = await back.jetstream().stream_info(STREAM)
            assert info.state.messages == 11
            assert {p.name for p in info.cluster.replicas or ()} | {info.cluster.leader} == set(cluster.names)
        finally:
            await back.close()
    finally:
        await nc.close()


async def test_clean_stop_of_the_leader_hands_over_at_once(nats_cluster: LocalCluster) -> None:
    """SIGTERM (a rolling restart) makes the leader hand over before it exits: no 4-9 s wait."""
    cluster = nats_cluster
    nc = await nats.connect(servers=cluster.urls)
    await create_replicated(nc)
    await nc.jetstream().publish(SUBJECT, b"before")
    old = await stream_leader(nc, STREAM)
    await nc.close()
    nc = await nats.connect(servers=[cluster.node_url(n) for n in cluster.names if n != old])
    try:
        stopped_at = time.monotonic()
        await asyncio.to_thread(cluster.terminate, old)
        ack = await retry(lambda: nc.jetstream().publish(SUBJECT, b"after", timeout=1.0), bound=30.0)
        handover = time.monotonic() - stopped_at
        assert ack.seq == 2 and await stream_leader(nc, STREAM) != old
        print(f"\nSIGTERM of stream leader {old}: appends again after {handover:.2f} s")
        assert handover < 4.0, "a clean stop should hand the leadership over without an election timeout"
    finally:
        await nc.close()
