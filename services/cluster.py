"""A local nats-server cluster: N JetStream nodes on 127.0.0.1, for tests and ``skat up --cluster``.

One nats-server is a single point of failure: the log is on one disk and every table stops when
that process does. A cluster of three with the stream replicated three times keeps going when
any one node dies (two of three still form a majority, elect a new stream leader and acknowledge
appends) and the node that comes back catches up from the others. ``LocalCluster`` runs such a
cluster on one machine so that this can be exercised for real: kill a node by its PID, watch the
election, restart it on the same ports and store.

Each node gets a configuration file of its own (written into a temporary directory) rather than
command-line flags, because the cluster block (name, listen address, routes) and a fixed
``server_name`` are what JetStream clustering needs and are clearest as a file; the production
counterpart is ``deploy/cluster/``. Ports are chosen free on loopback; they stay fixed for the
cluster's lifetime so a restarted node is found again by its peers and by clients.

Processes are tracked and stopped by PID only (SIGTERM, then SIGKILL), never by name. Each node
locks its store directory for the cluster's lifetime (``services.natsserver.StoreLock``: a second
cluster, or a single server, on the same store is refused) and dies with the process that started
it, however that dies (``services.children.popen``).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .children import popen
from .natsserver import StoreLock, binary_path, free_port

T = TypeVar("T")

# Answered by JetStream only once the cluster's meta group has a leader: before that the API
# times out, has no responders, or answers 503 "JetStream system temporarily unavailable", and
# stream creation would fail the same way. So "ready" means this request succeeds.
JS_API_INFO = "$JS.API.INFO"


async def stream_leader(nc: Any, stream: str, timeout: float = 1.0) -> str:
    """The server name of ``stream``'s current leader (``n1``, ...), from its stream info.

    Raises ``LookupError`` while the stream has no leader (during an election), and whatever
    nats-py raises when the request fails (timeout, no responders, 503). While there is no
    leader the request often goes unanswered: the short ``timeout`` (nats-py's default is 5 s)
    keeps a caller that polls from measuring its own timeouts instead of the election.
    """
    info = await nc.jetstream(timeout=timeout).stream_info(stream)
    leader = info.cluster.leader if info.cluster else None
    if not leader:
        raise LookupError(f"stream {stream} has no leader right now")
    return str(leader)


@dataclass
class Node:
    """One nats-server of the cluster: its fixed ports, store and configuration file."""

    name: str
    port: int
    cluster_port: int
    monitor_port: int
    store_dir: str
    config_path: str
    log_path: str
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    lock: StoreLock | None = field(default=None, repr=False)
    """Held from the node's first start until the cluster's ``stop()``: across a ``kill`` and
    ``restart`` the store stays this cluster's."""

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def route(self) -> str:
        return f"nats-route://127.0.0.1:{self.cluster_port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.running and self.proc else None


class LocalCluster:
    """``size`` nats-servers with JetStream forming one cluster on loopback.

    ``store_root``: where the nodes keep their JetStream stores (``<store_root>/<name>``); kept on
    ``stop()``. Without it the stores go into a temporary directory that ``stop()`` removes. Either
    way a node's store survives ``kill``/``restart``: that is what lets it catch up instead of
    starting empty.

    Usable as a plain object (``start()`` ... ``stop()``, e.g. by ``skat up --cluster``) or as a
    context manager. ``url`` is the comma-joined form the command line's ``--nats`` accepts;
    ``urls`` the list nats-py's ``nats.connect(servers=...)`` takes.
    """

    def __init__(self, size: int = 3, store_root: str | None = None, cluster_name: str = "skatbus") -> None:
        if size < 2:
            # One node with a cluster block and no routes: nats-server refuses to start JetStream.
            raise ValueError("a JetStream cluster needs at least 2 nodes (one server: EmbeddedServer)")
        self.size = size
        self.cluster_name = cluster_name
        # Configuration files and logs: always ours, always removed on stop().
        self.config_dir = tempfile.mkdtemp(prefix="skatbus-cluster-")
        self._own_store = store_root is None
        self.store_root = store_root or os.path.join(self.config_dir, "stores")
        ports = _distinct_free_ports(3 * size)
        self.nodes: dict[str, Node] = {}
        for i in range(size):
            name = f"n{i + 1}"
            self.nodes[name] = Node(
                name=name,
                port=ports[3 * i],
                cluster_port=ports[3 * i + 1],
                monitor_port=ports[3 * i + 2],
                store_dir=os.path.join(self.store_root, name),
                config_path=os.path.join(self.config_dir, f"{name}.conf"),
                log_path=os.path.join(self.config_dir, f"{name}.log"),
            )
        for node in self.nodes.values():
            self._write_config(node)
        _LIVE.add(self)  # until stop(): removed at interpreter exit at the latest

    # --- addresses -----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return list(self.nodes)

    @property
    def urls(self) -> list[str]:
        """Every node's client URL, n1 first (pass this list to ``nats.connect``)."""
        return [n.url for n in self.nodes.values()]

    @property
    def url(self) -> str:
        """``nats://127.0.0.1:p1,nats://127.0.0.1:p2,...``: the form ``--nats`` takes."""
        return ",".join(self.urls)

    def node_url(self, name: str) -> str:
        """One node's URL, to talk to that node only (e.g. to read its copy of a stream)."""
        return self.nodes[name].url

    @property
    def pids(self) -> dict[str, int]:
        """PID of each running node, by name (a killed node is absent)."""
        return {name: n.pid for name, n in self.nodes.items() if n.pid is not None}

    def running(self, name: str) -> bool:
        return self.nodes[name].running

    # --- configuration -------------------------------------------------------------------------

    def render_config(self, name: str) -> str:
        """The configuration file of node ``name``.

        ``server_name`` is fixed (n1, n2, ...) because JetStream identifies peers by it: a node
        restarted under a new random name would be a stranger to its own raft groups. Each node
        routes to all the others (a full mesh from the start, so no node depends on one seed).
        """
        node = self.nodes[name]
        routes = "\n".join(f"    {_q(other.route)}" for other in self.nodes.values() if other.name != name)
        return (
            f"# node {name} of LocalCluster {self.cluster_name!r}, written by services/cluster.py\n"
            f"server_name: {name}\n"
            f"listen: 127.0.0.1:{node.port}\n"
            f"http: 127.0.0.1:{node.monitor_port}\n"
            f"log_file: {_q(node.log_path)}\n"
            "jetstream {\n"
            f"  store_dir: {_q(node.store_dir)}\n"
            "}\n"
            "cluster {\n"
            f"  name: {_q(self.cluster_name)}\n"
            f"  listen: 127.0.0.1:{node.cluster_port}\n"
            "  routes: [\n"
            f"{routes}\n"
            "  ]\n"
            "}\n"
        )

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> LocalCluster:
        """Start every node; return once each listens and JetStream answers through each.

        Listening is not enough: until the nodes have elected a meta leader, JetStream's API
        fails (and so would the services' stream creation). Waiting here means a caller can
        create a replicated stream right after ``start()``. On failure nothing is left running.
        Every node's store is locked before any node starts: a store in use (``StoreInUse``)
        or not a directory (``StoreUnusable``) starts nothing.
        """
        deadline = time.monotonic() + timeout
        try:
            for node in self.nodes.values():
                self._lock(node)
            for node in self.nodes.values():
                if not node.running:
                    self._spawn(node)
            for node in self.nodes.values():
                self._wait_listening(node, deadline)
            _run_in_thread(lambda: _wait_jetstream(self.urls, deadline))
            self._wait_meta_peers(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_meta_peers(self, deadline: float) -> None:
        """Until a stream replicated on every node can be placed.

        JetStream answers as soon as a meta leader exists, but the leader learns that its peers
        are online a moment later: a replicated stream created in between fails with "no
        suitable peers for placement, peer offline" (err 10005). The only sure test is to place
        one: a probe stream on every node, created (retrying 10005) and deleted again.
        """
        _run_in_thread(lambda: _probe_placement(self.urls, self.size, deadline))

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 10 s) and remove what we created:
        the configuration directory and, unless ``store_root`` was given, the stores."""
        for node in self.nodes.values():
            if node.running and node.proc:
                node.proc.send_signal(signal.SIGTERM)
        for node in self.nodes.values():
            self._reap(node, grace=10.0)
            if node.lock is not None:
                node.lock.release()
                node.lock = None
        _LIVE.discard(self)
        if self._own_store:
            shutil.rmtree(self.store_root, ignore_errors=True)
        shutil.rmtree(self.config_dir, ignore_errors=True)

    def kill(self, name: str) -> None:
        """SIGKILL node ``name``: a crash, no goodbye to its peers or clients. Its store stays."""
        node = self.nodes[name]
        if node.running and node.proc:
            node.proc.send_signal(signal.SIGKILL)
        self._reap(node, grace=10.0)

    def terminate(self, name: str, grace: float = 10.0) -> None:
        """Stop node ``name`` cleanly (SIGTERM; SIGKILL after ``grace`` s). Its store stays."""
        node = self.nodes[name]
        if node.running and node.proc:
            node.proc.send_signal(signal.SIGTERM)
        self._reap(node, grace=grace)

    def restart(self, name: str, timeout: float = 30.0) -> None:
        """Start node ``name`` again on the same ports and store (stopping it first if it runs).

        Returns once it listens and JetStream answers through it, i.e. it has rejoined the meta
        group. Its replicas of streams catch up afterwards, asynchronously.
        """
        node = self.nodes[name]
        if node.running:
            self.terminate(name)
        deadline = time.monotonic() + timeout
        self._lock(node)
        self._spawn(node)
        self._wait_listening(node, deadline)
        _run_in_thread(lambda: _wait_jetstream([node.url], deadline))

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # --- inspecting one node ------------------------------------------------------------------

    def jsz(self, name: str, **params: str | bool) -> dict[str, Any]:
        """Node ``name``'s own JetStream report (monitoring ``/jsz``), e.g. ``streams=True``.

        Every JetStream API request is answered by a stream's leader, so it cannot show what a
        follower holds; the monitoring port of that node does: its own replica's state.
        """
        import json
        import urllib.parse
        import urllib.request

        query = urllib.parse.urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()})
        url = f"http://127.0.0.1:{self.nodes[name].monitor_port}/jsz?{query}"
        # No proxy: an http_proxy in the environment must not get loopback requests.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=2.0) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    def stream_state(self, name: str, stream: str) -> dict[str, Any] | None:
        """The state (``messages``, ``last_seq``, ...) of node ``name``'s replica of ``stream``,
        or None if that node holds no replica of it (yet)."""
        report = self.jsz(name, streams=True)
        for account in report.get("account_details") or ():
            for detail in account.get("stream_detail") or ():
                if detail.get("name") == stream:
                    return detail.get("state")  # type: ignore[no-any-return]
        return None

    def meta_leader(self) -> str | None:
        """The server name of the JetStream meta leader (the node that places streams), as the
        first running node reports it; None while there is none. Killing it costs a second
        election (of the meta group) before streams can be created or changed."""
        for name, node in self.nodes.items():
            if node.running:
                try:
                    meta = self.jsz(name).get("meta_cluster") or {}
                except OSError:
                    continue
                return meta.get("leader") or None
        return None

    # --- helpers -------------------------------------------------------------------------------

    stream_leader = staticmethod(stream_leader)

    def log_tail(self, name: str, lines: int = 20) -> str:
        """The end of node ``name``'s log, for error messages."""
        try:
            return "\n".join(Path(self.nodes[name].log_path).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _write_config(self, node: Node) -> None:
        Path(self.config_dir).mkdir(parents=True, exist_ok=True)
        Path(node.config_path).write_text(self.render_config(node.name), encoding="utf-8")

    @staticmethod
    def _lock(node: Node) -> None:
        """Take the node's store lock (creating the store) unless this cluster holds it."""
        if node.lock is None:
            node.lock = StoreLock.acquire(node.store_dir)

    def _spawn(self, node: Node) -> None:
        _LIVE.add(self)
        if not os.path.exists(node.config_path):  # started again after stop()
            self._write_config(node)
        self._lock(node)
        assert node.lock is not None
        node.proc = popen(
            [binary_path(), "-c", node.config_path],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(node.lock.fd,),  # the lock lasts as long as this process or the node
        )
        node.lock.record(node.proc.pid)

    def _wait_listening(self, node: Node, deadline: float) -> None:
        while True:
            if node.proc is None or node.proc.poll() is not None:
                code = node.proc.returncode if node.proc else None
                raise RuntimeError(f"nats-server {node.name} exited with code {code}:\n{self.log_tail(node.name)}")
            try:
                with socket.create_connection(("127.0.0.1", node.port), timeout=0.2):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"nats-server {node.name} did not listen on port {node.port}") from None
                time.sleep(0.05)

    @staticmethod
    def _reap(node: Node, grace: float) -> None:
        if node.proc is None:
            return
        try:
            node.proc.wait(grace)
        except subprocess.TimeoutExpired:
            node.proc.kill()
            node.proc.wait(5)
        node.proc = None


# --- internals ---------------------------------------------------------------------------------


def _q(text: str) -> str:
    """A quoted string for nats-server's configuration format (JSON strings are accepted)."""
    import json

    return json.dumps(text)


def _distinct_free_ports(count: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


def _run_in_thread(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion on a private event loop in another thread.

    ``start()`` and ``restart()`` are synchronous (``skat up`` is), yet may be called from
    inside a running event loop (an async test); a private thread's loop works in both cases
    and never touches the caller's loop.
    """
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(make()))  # type: ignore[arg-type]
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=run, name="skatbus-cluster-wait", daemon=True)
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


async def _wait_jetstream(urls: list[str], deadline: float) -> None:
    """Until ``$JS.API.INFO`` succeeds through each of ``urls`` (each node on its own)."""
    import json

    import nats

    for url in urls:
        last: object = None
        while True:
            try:
                nc = await nats.connect(
                    servers=[url], allow_reconnect=False, connect_timeout=1, max_reconnect_attempts=0
                )
                try:
                    msg = await nc.request(JS_API_INFO, b"", timeout=1.0)
                    answer = json.loads(msg.data or b"{}")
                    if "error" not in answer:
                        break
                    last = answer["error"]
                finally:
                    await nc.close()
            except Exception as exc:  # no responders, timeout, connection refused
                last = exc
            if time.monotonic() > deadline:
                raise TimeoutError(f"JetStream not ready through {url}: {last!r}")
            await asyncio.sleep(0.1)


async def _probe_placement(urls: list[str], replicas: int, deadline: float) -> None:
    import json

    import nats

    config = {"name": "SKATBUS_READY_PROBE", "subjects": ["_skatbus.ready_probe"], "num_replicas": replicas}
    config["storage"] = "memory"
    nc = await nats.connect(servers=urls, connect_timeout=2)
    try:
        while True:
            try:
                reply = await nc.request("$JS.API.STREAM.CREATE.SKATBUS_READY_PROBE", json.dumps(config).encode(), 2.0)
                answer = json.loads(reply.data or b"{}")
            except Exception as exc:  # no responders or a time-out while the cluster settles
                answer = {"error": repr(exc)}
            if "error" not in answer:
                await nc.request("$JS.API.STREAM.DELETE.SKATBUS_READY_PROBE", b"", timeout=2.0)
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"a stream with {replicas} replicas cannot be placed: {answer['error']}")
            await asyncio.sleep(0.1)
    finally:
        await nc.close()


# Clusters not yet stopped (a strong reference: an unreferenced running cluster must still be
# found at exit).
_LIVE: set[LocalCluster] = set()


@atexit.register
def _stop_leftovers() -> None:
    """A cluster not stopped when the interpreter exits is stopped then, its processes and
    temporary directories not left behind (a SIGKILLed interpreter cannot do this)."""
    for cluster in list(_LIVE):
        cluster.stop()
