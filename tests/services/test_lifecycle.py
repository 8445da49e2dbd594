"""No run is lost or damaged by how it is started and stopped.

Two nats-servers on one JetStream store damage it (a second `skat run` in the same folder
hung half-way, and every later run there kept failing), so a store is used by one server at a
time: the second start is refused, in one line naming the first's PIDs, and the first plays on.
And whatever kills a parent (SIGKILL here: it runs no code of its own), its nats-server and
services go with it: a server left behind would hold the store (and the port) for ever.

Everything runs for real: `skat` commands as processes, their children found by PID (and start
time, so a reused PID is not mistaken for ours), and killed by PID if a test fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import nats
import pytest

from services.children import popen
from services.cluster import LocalCluster
from services.main import SERVICES, wait_ready
from services.natsserver import LOCK_FILE, EmbeddedServer, StoreInUse, StoreLock
from tests.services.test_up import Child, children

pytestmark = pytest.mark.timeout(90)

GONE_WITHIN = 15.0
"""Seconds from a parent's SIGKILL until every child of it has exited (measured: under 1 s)."""


class Skat:
    """One `skat` command as a process, with its output and its children."""

    def __init__(self, proc: asyncio.subprocess.Process, err: Path) -> None:
        self.proc = proc
        self.err = err
        self.children: list[Child] = []

    async def line_with(self, text: str, timeout: float = 60.0) -> str:
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while True:
            line = (await asyncio.wait_for(self.proc.stdout.readline(), max(0.1, end - time.monotonic()))).decode()
            assert line, f"skat exited ({await self.proc.wait()}) before {text!r}:\n{self.err.read_text()}"
            if text in line:
                return line

    def take_children(self) -> list[Child]:
        self.children = [Child(pid) for pid in children(self.proc.pid)]
        return self.children

    def services(self) -> list[Child]:
        return [c for c in self.children if c.argv[1:3] == ["-m", "services"]]

    def nats_servers(self) -> list[Child]:
        return [c for c in self.children if c.argv and os.path.basename(c.argv[0]) == "nats-server"]

    async def kill_and_wait_for_children(self) -> list[Child]:
        """SIGKILL the command; the children still running after ``GONE_WITHIN`` s. (Not
        ``proc.wait()``: children that inherited its stdout keep that pipe open.)"""
        parent = Child(self.proc.pid)
        self.proc.kill()
        end = time.monotonic() + GONE_WITHIN
        while (left := [c for c in self.children if c.running()]) or parent.running():
            if time.monotonic() > end:
                break
            await asyncio.sleep(0.05)
        return left


@pytest.fixture
async def skat(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start `skat ARGS...`; afterwards stop what is still running: Ctrl-C first (so that a
    temporary store is removed), then SIGKILL, by PID, for the command and every child seen."""
    started: list[Skat] = []

    async def start(*args: str) -> Skat:
        err = tmp_path / f"skat-{len(started)}.err"
        with err.open("wb") as stderr:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "skatbus.cli", *args,
                stdout=asyncio.subprocess.PIPE, stderr=stderr, env={**os.environ, "SKAT_LOG_LEVEL": "info"},
            )  # fmt: skip
        started.append(Skat(proc, err))
        return started[-1]

    try:
        yield start
    finally:
        for one in started:
            known = {c.pid for c in one.children}
            one.children += [Child(pid) for pid in children(one.proc.pid) if pid not in known]
            if one.proc.returncode is None:  # (set on exit; wait() also waits for the pipes)
                one.proc.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(one.proc.wait(), 15)
                except TimeoutError:
                    one.proc.kill()
            for child in one.children:
                if child.running():
                    os.kill(child.pid, signal.SIGKILL)
            await asyncio.wait_for(one.proc.wait(), 15)


def assert_store_free(store: Path) -> None:
    """Nobody holds the store's lock any more (the lock file itself may stay: it does not block)."""
    StoreLock.acquire(str(store)).release()


# --- one server per store -------------------------------------------------------------------


async def test_a_second_server_on_a_store_is_refused_and_the_first_plays_on(tmp_path: Path) -> None:
    store = tmp_path / "n1"
    first = EmbeddedServer(store_dir=str(store)).start()
    try:
        second = EmbeddedServer(store_dir=str(store))
        try:
            with pytest.raises(StoreInUse) as refused:
                second.start()
        finally:
            second.stop(remove_store=False)
        assert re.fullmatch(
            rf"the store {re.escape(str(store))} is in use by \S+ \(PID {os.getpid()}, nats-server PID {first.pid}\): "
            "stop it first",
            str(refused.value),
        ), refused.value
        assert second.proc is None, "nothing may start on a store in use"
        # A cluster one of whose nodes would use that store starts no node at all.
        cluster = LocalCluster(2, store_root=str(tmp_path))
        with pytest.raises(StoreInUse, match=f"the store {re.escape(str(store))} is in use"):
            cluster.start()
        assert cluster.pids == {}
        # The first is unharmed: it serves JetStream on its store.
        nc = await nats.connect(first.url)
        try:
            await nc.jetstream().add_stream(name="LIFE", subjects=["life.>"])
            assert (await nc.jetstream().publish("life.x", b"1")).seq == 1
        finally:
            await nc.close()
        assert first.running
    finally:
        first.stop()
    assert_store_free(store)


async def test_skat_run_on_a_store_in_use_is_one_line_and_the_stack_plays_on(
    skat: Callable[..., Any], tmp_path: Path
) -> None:
    """`skat up --store OUT/store`, then `skat run --out OUT` (its built-in stack keeps its store
    in OUT/store): refused before anything starts, naming skat up's PIDs; skat up still serves."""
    out = tmp_path / "runs"
    up = await skat("up", "--no-web", "--store", str(out / "store"))
    url = (await up.line_with("skatbus is up on")).split()[4]
    up.take_children()
    [server] = up.nats_servers()

    run = await skat("run", "--no-web", "--out", str(out), "--groups", "1", "--rounds", "1")
    assert await asyncio.wait_for(run.proc.wait(), 60) == 2
    lines = run.err.read_text().strip().splitlines()
    assert lines == [
        f"skat run: the store {out / 'store'} is in use by skat up (PID {up.proc.pid}, nats-server PID {server.pid}): "
        "stop it first"
    ]
    assert run.take_children() == [] and not run.nats_servers()
    assert up.proc.returncode is None and all(c.running() for c in up.children)
    await wait_ready(url, timeout=10)
    assert json.loads((out / "store" / LOCK_FILE).read_text())["server_pid"] == server.pid


# --- children die with their parent ---------------------------------------------------------


async def test_sigkill_of_skat_up_leaves_no_server_and_no_service(skat: Callable[..., Any], tmp_path: Path) -> None:
    store = tmp_path / "store"
    up = await skat("up", "--no-web", "--store", str(store))
    await up.line_with("skatbus is up on")
    up.take_children()
    assert len(up.nats_servers()) == 1 and sorted(c.argv[3] for c in up.services()) == sorted(SERVICES)
    assert await up.kill_and_wait_for_children() == [], "children outlived skat up"
    assert_store_free(store)


async def test_sigkill_of_skat_run_leaves_no_server_and_no_service(skat: Callable[..., Any], tmp_path: Path) -> None:
    """The built-in stack of `skat run` (started from a worker thread of its event loop), and
    the store free again for the next run in that folder."""
    out = tmp_path / "runs"
    run = await skat("run", "--no-web", "--out", str(out), "--groups", "10", "--rounds", "12")
    await run.line_with("Started a local nats-server")
    run.take_children()
    assert len(run.nats_servers()) == 1 and len(run.services()) == len(SERVICES), run.children
    assert await run.kill_and_wait_for_children() == [], "children outlived skat run"
    assert json.loads((out / "store" / LOCK_FILE).read_text())["pid"] == run.proc.pid
    assert_store_free(out / "store")  # its lock file still names the dead: it does not block


def test_a_child_forked_for_a_thread_outlives_that_thread() -> None:
    """The parent-death signal fires when the *thread* that forked dies: a child asked for by a
    short-lived thread (an executor's) must still live on until this process dies."""
    made: list[Any] = []
    worker = threading.Thread(target=lambda: made.append(popen(["sleep", "30"])))
    worker.start()
    worker.join()
    [child] = made
    try:
        # Once the thread is gone from the kernel too, a parent-death signal would have been sent.
        end = time.monotonic() + 10
        while os.path.exists(f"/proc/self/task/{worker.native_id}") and time.monotonic() < end:
            time.sleep(0.01)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(0.5)  # an absence: it is given a moment to die, and must not
        assert os.getpgid(child.pid) == child.pid, "a child has its own process group"
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("name", ["play", "views"])
async def test_sigterm_stops_a_service_whose_broker_is_gone_cleanly(name: str) -> None:
    """A service asked to stop while its nats-server is gone (killed, a crashed node) exits 0
    with its log lines and no traceback: nats-py's close fails on the dead socket, and there is
    nothing left to send anyway."""
    server = EmbeddedServer()
    server.start()
    service = popen(
        [sys.executable, "-m", "services", name],
        env={**os.environ, "SKAT_NATS_URL": server.url, "SKAT_LOG_LEVEL": "info"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await wait_ready(server.url, (name,))
        assert server.proc is not None
        server.proc.kill()
        server.proc.wait()
        service.send_signal(signal.SIGTERM)
        _, stderr = service.communicate(timeout=30)
        log = stderr.decode()
        assert service.returncode == 0, log[-2000:]
        assert "Traceback" not in log, log[-2000:]
        assert '"service_stopped"' in log
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()
        server.stop()
