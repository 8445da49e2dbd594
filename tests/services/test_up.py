"""``skat up``: the whole stack from one command, and nothing of it left running after Ctrl-C.

``skat up`` is what a newcomer runs first and what CI-like scripts start and stop, so a leaked
nats-server or service process (holding a port, a temporary store, a durable consumer) is a
real failure. The children are identified by PID *and* start time, so a PID reused by an
unrelated process after ours exited is not mistaken for a leak.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from protocol.events import TableClosed
from protocol.skat.rules import Rules
from protocol.skat.table import fold
from protocol.wire import OpenTable
from services.main import SERVICES
from services.natsserver import EmbeddedServer
from services.store import EventStore
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer
from tests.bus import open_table, wait_closed
from tests.services.test_table_over_bus import PLAYERS, pure_log
from tests.terminal import as_a_terminal_job

pytestmark = pytest.mark.timeout(90)

UP_LINE = re.compile(
    r"^skatbus is up on ((?:nats|tls)://127\.0\.0\.1:(\d+)(?:,nats://127\.0\.0\.1:\d+)*) \(Ctrl-C stops it\)$"
)
RULES = Rules(rounds=1, turn_seconds=30)
STOP_WITHIN = 5.0
"""Seconds from SIGINT to ``skat up`` having exited, its children stopped cleanly."""


# --- processes by PID --------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (``/proc/<pid>/task/*/children``, else ``ps --ppid``)."""
    files = glob.glob(f"/proc/{pid}/task/*/children")
    if files:
        found: list[int] = []
        for name in files:
            try:
                found += [int(p) for p in Path(name).read_text().split()]
            except OSError:
                pass
        return found
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks) of a process, or None if there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[19])


def thread_states(pid: int) -> list[str]:
    """The state of every thread of a process (``/proc/<pid>/task/*/stat``); [] if none."""
    states = []
    for name in glob.glob(f"/proc/{pid}/task/*/stat"):
        try:
            states.append(Path(name).read_text().rsplit(")", 1)[1].split()[0])
        except (OSError, IndexError):
            pass
    return states


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


class Child:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        info = stat(pid)
        self.started = info[1] if info else -1
        self.argv = cmdline(pid)

    def running(self) -> bool:
        """Still the same process, and not a zombie. A process is gone only when its last
        thread is: the main thread of an exiting nats-server (Go) can be a zombie while its
        other threads still run and hold its files, the store's lock among them."""
        info = stat(self.pid)
        if info is None or info[1] != self.started:
            return False
        return info[0] != "Z" or any(state != "Z" for state in thread_states(self.pid))

    def __repr__(self) -> str:
        return f"{self.pid}:{' '.join(self.argv)[-80:]}"


class Up:
    """One ``skat up`` process: its announced URL, its children, its JSON log lines."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log_path = log
        self.url = ""
        self.argv: list[str] = []
        self.children: list[Child] = []

    async def ready(self, timeout: float = 20.0) -> str:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        match = UP_LINE.match(line.decode().strip())
        assert match, f"unexpected first line from skat up: {line!r}; its log:\n{self.log_path.read_text()}"
        self.url = match.group(1)
        # The line is printed after every child was spawned.
        self.argv = cmdline(self.proc.pid)
        self.children = [Child(pid) for pid in children(self.proc.pid)]
        return self.url

    def services(self) -> list[str]:
        """Service names of the children running ``python -m services NAME``."""
        names = []
        for child in self.children:
            argv = child.argv
            if "-m" in argv and argv[argv.index("-m") + 1 :][:1] == ["services"]:
                names.append(argv[argv.index("-m") + 2])
        return sorted(names)

    def nats_servers(self) -> list[Child]:
        return [c for c in self.children if c.argv and os.path.basename(c.argv[0]) == "nats-server"]

    async def all_started(self, timeout: float = 20.0) -> None:
        """Wait until every service logged ``service_started``. A service signalled before
        that (still importing or connecting) just dies, which is harmless but proves nothing
        about stopping cleanly."""
        end = time.monotonic() + timeout
        while sorted(r["service"] for r in self.log() if r.get("event") == "service_started") != sorted(SERVICES):
            assert time.monotonic() < end, "not every service started"
            await asyncio.sleep(0.05)

    async def interrupt(self) -> float:
        """Ctrl-C; the seconds until ``skat up`` exited."""
        started = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(self.proc.wait(), 20)
        return time.monotonic() - started

    def leftovers(self) -> list[Child]:
        return [c for c in self.children if c.running()]

    def log(self) -> list[dict[str, Any]]:
        """The JSON log records of skat up and its services. They share one stderr, and a
        record and its newline are two writes, so records can interleave: scan for objects
        instead of splitting lines."""
        text = self.log_path.read_text()
        decoder = json.JSONDecoder()
        records, at = [], text.find("{")
        while at >= 0:
            try:
                record, end = decoder.raw_decode(text, at)
            except ValueError:
                end = at + 1  # a traceback or a cut record
            else:
                records.append(record)
            at = text.find("{", end)
        return records

    async def shutdown(self) -> None:
        """Teardown after a failed test: Ctrl-C first (so the temporary store is removed),
        then SIGKILL for whatever of ours still runs, by PID."""
        if self.proc.returncode is None:
            known = {c.pid for c in self.children}
            self.children += [Child(pid) for pid in children(self.proc.pid) if pid not in known]
            self.proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        for child in self.leftovers():
            os.kill(child.pid, signal.SIGKILL)


@pytest.fixture
async def start_up(tmp_path: Path) -> AsyncIterator[Any]:
    started: list[Up] = []

    async def start(*args: str) -> Up:
        log = tmp_path / f"up-{len(started)}.log"
        with log.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "skatbus.cli", "up", *(args if "--web" in args else ("--no-web", *args)),
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env={**os.environ, "SKAT_LOG_LEVEL": "info"},
            )  # fmt: skip
        up = Up(proc, log)
        started.append(up)
        return up

    try:
        yield start
    finally:
        for up in started:
            await up.shutdown()


async def play_table(nc: Client, table: str) -> list[Any]:
    """Open a table with three bots on ``nc``'s server and return its closed log."""
    players = [RemotePlayer(nc, p, HashedBot("up")) for p in PLAYERS]
    for p in players:
        await p.start()
    try:
        reply = await open_table(nc, OpenTable(table=table, players=PLAYERS, rules=RULES, seed=table), timeout=20)
        assert reply.ok, reply
        log = await wait_closed(nc, table, timeout=20)
    finally:
        for p in players:
            await p.stop()
    assert all(not p.rejections for p in players)
    return log


def assert_played(log: list[Any], table: str) -> None:
    assert isinstance(log[-1], TableClosed)
    state = fold(log)
    assert state.closed and len(state.sheet) == RULES.deals
    assert log == pure_log(table, RULES, table, "up")


async def assert_stops_cleanly(up: Up) -> None:
    await up.all_started()
    took = await up.interrupt()
    assert up.proc.returncode == 0
    assert took < STOP_WITHIN, f"skat up took {took:.1f} s to stop (log: {up.log_path})"
    assert up.leftovers() == [], "children still running after skat up exited"
    stopped = [line["service"] for line in up.log() if line.get("event") == "service_stopped"]
    assert sorted(stopped) == sorted(SERVICES), f"every service should stop on its own (log: {up.log_path})"


# --- tests -------------------------------------------------------------------------------


async def test_up_runs_a_table_and_ctrl_c_leaves_nothing(start_up: Any) -> None:
    up: Up = await start_up()
    url = await up.ready()
    assert up.services() == sorted(SERVICES)
    [server] = up.nats_servers()
    assert len(up.children) == 6, up.children
    port = url.rpartition(":")[2]
    assert server.argv[server.argv.index("-p") + 1] == port

    nc = await nats.connect(url)
    try:
        assert_played(await play_table(nc, "up1"), "up1")
    finally:
        await nc.close()

    await assert_stops_cleanly(up)
    [started] = [line for line in up.log() if line.get("event") == "nats_started"]
    assert started["pid"] == server.pid
    assert not os.path.exists(started["store"]), "the temporary store should be removed"


async def test_up_serves_the_live_page_and_stops_it_too(start_up: Any) -> None:
    up: Up = await start_up("--web", "127.0.0.1:0")
    await up.ready()
    assert up.proc.stdout is not None
    line = (await asyncio.wait_for(up.proc.stdout.readline(), 20)).decode()
    assert line.startswith("skat web: http://127.0.0.1:"), line
    page_url = line.split()[2]
    with urllib.request.urlopen(page_url + "/", timeout=10) as page:
        assert page.status == 200
    web = [c for c in up.children + [Child(pid) for pid in children(up.proc.pid)] if "web" in c.argv]
    assert web, "no skat web child"
    await assert_stops_cleanly(up)
    assert not any(c.running() for c in web)


async def test_up_with_a_local_cluster_replicates_and_stops_every_node(start_up: Any) -> None:
    up: Up = await start_up("--cluster", "3")
    url = await up.ready(timeout=60)
    servers = url.split(",")
    assert len(servers) == 3 and len(up.nats_servers()) == 3
    assert up.services() == sorted(SERVICES)
    nc = await nats.connect(servers)
    try:
        assert_played(await play_table(nc, "upc"), "upc")
        info = await nc.jetstream().stream_info("SKAT")
        assert info.config.num_replicas == 3 and info.cluster is not None and len(info.cluster.replicas or []) == 2
    finally:
        await nc.close()
    await assert_stops_cleanly(up)


async def test_up_with_nats_uses_that_server(start_up: Any, nats_server: EmbeddedServer, nc: Client) -> None:
    up: Up = await start_up("--nats", nats_server.url)
    assert await up.ready() == nats_server.url
    assert up.nats_servers() == []
    assert up.services() == sorted(SERVICES)
    assert len(up.children) == 5, up.children

    log = await play_table(nc, "up2")
    assert_played(log, "up2")

    await assert_stops_cleanly(up)
    # A server skat up did not start is not its to stop: it still runs and still has the log.
    assert nats_server.proc is not None and nats_server.proc.poll() is None
    assert [s.event for s in await EventStore(nc).read("up2")] == log


async def test_up_with_store_keeps_the_log_across_restarts(start_up: Any, tmp_path: Path) -> None:
    store = tmp_path / "store"
    first: Up = await start_up("--store", str(store))
    nc = await nats.connect(await first.ready())
    try:
        log = await play_table(nc, "up3")
    finally:
        await nc.close()
    await assert_stops_cleanly(first)
    assert any(store.iterdir()), "an explicit store is kept"

    second: Up = await start_up("--store", str(store))
    nc = await nats.connect(await second.ready())
    try:
        assert [s.event for s in await EventStore(nc).read("up3")] == log
        again = await open_table(nc, OpenTable(table="up3", players=PLAYERS, rules=RULES, seed="up3"))
        assert not again.ok and again.code == "exists"
    finally:
        await nc.close()
    await assert_stops_cleanly(second)


def _secrets(auth_dir: Path) -> list[str]:
    """Everything secret in a ``skat auth`` directory: each user's seed, and the private
    parts of the TLS keys (their base64 body lines)."""
    found = [f.read_text().strip() for f in auth_dir.glob("*.nk")]
    for key in auth_dir.glob("*key.pem"):
        found += [line for line in key.read_text().splitlines() if line and not line.startswith("-----")]
    assert found
    return found


def _assert_no_secret_shown(up: Up, secrets: list[str]) -> None:
    """No secret on the command line of ``skat up`` or any child (what ``ps`` shows every
    local user), and none in anything they logged or printed."""
    argvs = [up.argv] + [child.argv for child in up.children]
    assert len(argvs) == 7 and all(argvs), argvs
    text = up.log_path.read_text()
    for secret in secrets:
        for argv in argvs:
            assert not any(secret in arg for arg in argv), f"a secret on the command line: {argv}"
        assert secret not in text, "a secret in the log"
    assert "password" not in " ".join(" ".join(a) for a in argvs)


async def _play_with_own_keys(url: str, auth_dir: Path) -> None:
    """Players with their own keys play a table; a player may not read the log."""
    from services.auth import SERVICE_USER, load_auth
    from services.connection import open_connection

    auth = load_auth(auth_dir)
    admin = await open_connection(auth.settings(SERVICE_USER, url))
    clients = []
    players = []
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    for name in PLAYERS:
        nc = await open_connection(auth.settings(name, url), inbox_prefix=f"_INBOX.{name}", error_cb=on_error)
        clients.append(nc)
        player = RemotePlayer(nc, name, HashedBot("up"))
        await player.start()
        players.append(player)
    try:
        table = f"upauth-{url[:3]}"
        assert (await open_table(admin, OpenTable(table=table, players=PLAYERS, rules=RULES, seed=table))).ok
        fold(await wait_closed(admin, table, timeout=30))
        await clients[0].subscribe("skat.log.>")
        await clients[0].flush()
        await asyncio.sleep(0.3)
        assert any("permissions violation" in e.lower() for e in errors)
    finally:
        for p, nc in zip(players, clients):
            await p.stop()
            await nc.close()
        await admin.close()


async def test_up_with_auth_holds_players_to_their_subjects(start_up: Any, tmp_path: Path) -> None:
    """`skat auth` then `skat up --auth DIR`: players play with their own keys, and may not
    read the log; no key is on any command line or in the log."""
    from services.auth import write_auth
    from services.natsserver import free_port

    write_auth(tmp_path / "auth", PLAYERS, store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port()))
    up: Up = await start_up("--auth", str(tmp_path / "auth"))
    url = await up.ready()
    assert url.startswith("nats://")
    await _play_with_own_keys(url, tmp_path / "auth")
    await assert_stops_cleanly(up)
    _assert_no_secret_shown(up, _secrets(tmp_path / "auth"))
    assert any(Path(tmp_path / "js").iterdir()), "the configured store is kept"


async def test_up_with_a_tls_auth_config(start_up: Any, tmp_path: Path) -> None:
    """`skat auth --tls`, then `skat up --auth DIR`: the services connect over TLS with the CA
    and the services' seed file, both named in their environment; players too."""
    from services.auth import write_auth
    from services.natsserver import free_port

    write_auth(tmp_path / "auth", PLAYERS, store_dir=str(tmp_path / "js"), listen=("127.0.0.1", free_port()), tls=True)
    up: Up = await start_up("--auth", str(tmp_path / "auth"))
    url = await up.ready()
    assert url.startswith("tls://")
    for child in up.children:
        if "service" in child.argv:
            environ = Path(f"/proc/{child.pid}/environ").read_bytes().decode(errors="replace").split("\0")
            assert f"SKAT_NATS_CREDS={tmp_path / 'auth' / 'skat-services.nk'}" in environ
            assert f"SKAT_NATS_CA={tmp_path / 'auth' / 'ca.pem'}" in environ
            assert oct(os.stat(tmp_path / "auth" / "skat-services.nk").st_mode & 0o777) == "0o600"
    await _play_with_own_keys(url, tmp_path / "auth")
    await assert_stops_cleanly(up)
    _assert_no_secret_shown(up, _secrets(tmp_path / "auth"))


# --- starting and stopping: a port that stays, a closed terminal, mistakes ----------------


async def test_up_with_port_comes_back_on_the_same_port(start_up: Any) -> None:
    """`--port`: a restart is found at the same address (a client or a tournament going through
    it reconnects instead of losing its server)."""
    from services.natsserver import free_port

    port = free_port()
    for _ in range(2):
        up: Up = await start_up("--port", str(port))
        assert await up.ready() == f"nats://127.0.0.1:{port}"
        await assert_stops_cleanly(up)


async def test_a_closed_terminal_stops_everything(start_up: Any, tmp_path: Path) -> None:
    """Closing the terminal sends SIGHUP to its foreground process group. `skat up` stops the
    stack as on Ctrl-C; its children, in process groups of their own, must not get it (to
    nats-server SIGHUP means "reload the configuration": it would stay, on the store)."""
    log = tmp_path / "hup.log"
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "skatbus.cli", "up", "--no-web",
            stdout=asyncio.subprocess.PIPE, stderr=err, env={**os.environ, "SKAT_LOG_LEVEL": "info"},
            start_new_session=True,  # its own process group, as a shell's job on a terminal
            preexec_fn=as_a_terminal_job,  # SIGHUP not ignored, even when this suite's is
        )  # fmt: skip
    up = Up(proc, log)
    try:
        await up.ready()
        assert len(up.children) == 6 and len(up.nats_servers()) == 1
        assert all(os.getpgid(c.pid) != proc.pid for c in up.children), "a child in the terminal's group"
        await up.all_started()
        os.killpg(proc.pid, signal.SIGHUP)
        await asyncio.wait_for(proc.wait(), 20)
        assert proc.returncode == 0
        assert up.leftovers() == [], "children still running after SIGHUP"
        stopped = [line["service"] for line in up.log() if line.get("event") == "service_stopped"]
        assert sorted(stopped) == sorted(SERVICES), f"every service should stop on its own (log: {log})"
    finally:
        await up.shutdown()


def _one_line_exit_2(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "skatbus.cli", "up", "--no-web", *args], capture_output=True, text=True, timeout=60
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    return lines[0]


def test_up_on_a_taken_port_is_one_line() -> None:
    """Not "up" on somebody else's server, nor a retry for ever: one line, exit code 2."""
    import socket

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        line = _one_line_exit_2("--port", str(port))
    assert line == f"skat up: cannot listen on 127.0.0.1:{port}: the port is in use by another process"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--cluster", "1"), "--cluster takes 2 to 5 nodes, not 1"),
        (("--cluster", "9"), "--cluster takes 2 to 5 nodes, not 9"),
        (("--store", "{file}"), "--store {file}: not a directory"),
        (("--store", "{file}/js"), "--store {file}/js: not a directory"),
        (("--port", "70000"), "--port must be from 1 to 65535"),
        (("--port", "4222", "--cluster", "3"), "--port goes with one server"),
    ],
)
def test_up_mistakes_are_one_line(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    file = tmp_path / "a-file"
    file.write_text("not a store")
    line = _one_line_exit_2(*(a.format(file=file) for a in args))
    assert line.startswith(f"skat up: {says.format(file=file)}"), line
