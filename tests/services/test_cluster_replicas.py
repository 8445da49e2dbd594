"""Every stream and bucket follows its cluster (``services.store.cluster_replicas``): on a 3-node
cluster each gets 3 replicas, whoever creates it and whether or not ``SKAT_REPLICAS`` is in its
environment, so losing a node loses no result.

The tournament runner is what once went wrong: ``skat up --cluster 3`` gave its services
``SKAT_REPLICAS=3``, but a separate ``skat tournament --nats URL`` did not have it and created
``SKATTOUR`` with one replica. When that node died, every deal was played and the results were
lost (and ``--resume`` failed too). Here the runner is that separate process, given one node's
URL only, with no ``SKAT_REPLICAS`` anywhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import StreamConfig

from protocol.subjects import STREAM
from protocol.tournament import TournamentFinished
from services import logs
from services.cluster import LocalCluster, stream_leader
from services.main import wait_ready
from services.natsserver import EmbeddedServer
from services.prompts import PREFERENCES, Prompter
from services.store import EventStore, cluster_replicas
from skatbus.tournament import STREAM as TOURNAMENT_STREAM
from skatbus.tournament import TournamentLog
from tests.bus import Stack

pytestmark = pytest.mark.timeout(240)

BUCKET_STREAM = f"KV_{PREFERENCES}"
BOTS = "random,stepping-random,random"  # entrants random, stepping-random, random-2
TABLES = 3  # one group, duplicate: one table per seat rotation


@pytest.fixture(autouse=True)
def _no_replicas_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither this process nor anything it starts has ``SKAT_REPLICAS``: the cluster decides."""
    monkeypatch.delenv("SKAT_REPLICAS", raising=False)


async def _replicas(nc: Client, stream: str) -> int:
    return int((await nc.jetstream().stream_info(stream)).config.num_replicas or 1)


async def test_every_stream_and_bucket_gets_the_replicas_of_its_cluster(
    nats_cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given one node's URL only: the server tells the client about the others.
    nc = await nats.connect(servers=[nats_cluster.node_url("n2")])
    try:
        assert cluster_replicas(nc) == 3
        # A tournament stream left with one copy by an earlier version is raised to three.
        await nc.jetstream().add_stream(
            StreamConfig(name=TOURNAMENT_STREAM, subjects=["skat.tournament.>"], num_replicas=1)
        )
        store = EventStore(nc)
        await store.ensure_stream()
        await TournamentLog(nc).ensure_stream()
        await Prompter(nc, store, logs.get(test="replicas")).open()
        for stream in (STREAM, TOURNAMENT_STREAM, BUCKET_STREAM):
            assert await _replicas(nc, stream) == 3, stream
        # SKAT_REPLICAS still decides for what is created; nothing existing is lowered.
        monkeypatch.setenv("SKAT_REPLICAS", "1")
        assert cluster_replicas(nc) == 1
        await store.ensure_stream()
        await Prompter(nc, store, logs.get(test="replicas")).open()
        assert await _replicas(nc, STREAM) == 3 and await _replicas(nc, BUCKET_STREAM) == 3
    finally:
        await nc.close()


async def test_a_single_server_gets_one_replica(nats_server: EmbeddedServer) -> None:
    nc = await nats.connect(nats_server.url)
    try:
        assert cluster_replicas(nc) == 1
        store = EventStore(nc)
        await store.ensure_stream()
        await TournamentLog(nc).ensure_stream()
        await Prompter(nc, store, logs.get(test="replicas")).open()
        for stream in (STREAM, TOURNAMENT_STREAM, BUCKET_STREAM):
            assert await _replicas(nc, stream) == 1, stream
    finally:
        await nc.close()


def _runner(url: str, out: Path, *args: str) -> subprocess.Popen[bytes]:
    """``skat tournament --nats URL`` as its own process, without ``SKAT_REPLICAS``."""
    env = {k: v for k, v in os.environ.items() if k != "SKAT_REPLICAS"}
    env["SKAT_LOG_LEVEL"] = "warning"
    cmd = [sys.executable, "-m", "skatbus.cli", "tournament", "--nats", url, "--out", str(out), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)


def _new(tid: str, rounds: int) -> list[str]:
    return ["--id", tid, "--seed", tid, "--bots", BOTS, "--groups", "1", "--rounds", str(rounds)]


async def _until_scored(nc: Client, tid: str, deals: int, proc: subprocess.Popen[bytes], bound: float = 60.0) -> None:
    """Until ``deals`` deals of tournament ``tid`` are scored (the fault strikes mid-run)."""
    store = EventStore(nc)
    end = time.monotonic() + bound
    while True:
        done = 0
        for r in range(TABLES):
            done += len(await store.read(f"{tid}-g0r{r}", kind="deal_scored"))
        if done >= deals:
            return
        assert proc.poll() is None, f"the runner of {tid} exited with {proc.returncode} before {deals} deals"
        assert time.monotonic() < end, f"{tid}: {done} of {deals} deals scored after {bound} s"
        await asyncio.sleep(0.02)


async def _finished(proc: subprocess.Popen[bytes], out: Path, tid: str, deals_each: int) -> dict[str, Any]:
    """The runner's exit (0) and the results it wrote: every entrant played every deal."""
    code = await asyncio.to_thread(proc.wait, 150)
    assert code == 0, f"the runner of {tid} exited with {code}"
    results: dict[str, Any] = json.loads((out / tid / "results.json").read_text())
    assert [s["deals"] for s in results["standings"]] == [deals_each] * 3
    assert len(results["tables"]) == TABLES
    return results


async def test_a_tournament_keeps_its_results_through_the_loss_of_a_node(
    nats_cluster: LocalCluster, tmp_path: Path
) -> None:
    cluster = nats_cluster
    stack = Stack(cluster.url)
    assert "SKAT_REPLICAS" not in stack.env
    stack.start_all()
    monitor = await nats.connect(servers=cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    runners: list[subprocess.Popen[bytes]] = []
    try:
        await wait_ready(cluster.urls[0])
        out = tmp_path / "runs"

        # 1. A tournament whose stream leader dies mid-run ends with its results.
        runners.append(proc := _runner(cluster.node_url("n1"), out, *_new("ta", rounds=2)))
        await _until_scored(monitor, "ta", 2, proc)
        for stream in (STREAM, TOURNAMENT_STREAM, BUCKET_STREAM):
            assert await _replicas(monitor, stream) == 3, f"{stream} is not replicated on every node"
        victim = await stream_leader(monitor, TOURNAMENT_STREAM, timeout=2.0)
        killed_at = time.monotonic()
        await asyncio.to_thread(cluster.kill, victim)
        await _finished(proc, out, "ta", deals_each=TABLES * 2 * 3)
        print(f"\nSKATTOUR leader {victim} SIGKILLed: results written {time.monotonic() - killed_at:.1f} s later")

        # 2. With that node still down: a tournament interrupted (its runner killed) is resumed.
        url = cluster.node_url(next(n for n in cluster.names if n != victim))
        runners.append(proc := _runner(url, out, *_new("tb", rounds=4)))
        await _until_scored(monitor, "tb", 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = await TournamentLog(monitor).read("tb")
        assert before and not isinstance(before[-1], TournamentFinished), "interrupted too late to test a resume"
        runners.append(proc := _runner(url, out, "--resume", "tb"))
        await _finished(proc, out, "tb", deals_each=TABLES * 4 * 3)
        assert not cluster.running(victim)
    finally:
        for runner in runners:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
        await monitor.close()
        stack.stop()
