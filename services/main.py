"""Running services: one per process (``skat service NAME``) or all of them (``skat up``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Final

import nats.errors

from . import logs
from .bidding import Bidding
from .children import PARENT_PID_ENV, parent_gone, popen, watched_parent
from .cluster import LocalCluster
from .connection import ConnectionSettings, Unreachable, connect, connect_patience, open_connection
from .dealer import Dealer
from .natsserver import EmbeddedServer
from .play import Play
from .runtime import Service
from .scoring import Scoring
from .views import Views

SERVICES: Final[dict[str, type[Service]]] = {
    "dealer": Dealer,
    "bidding": Bidding,
    "play": Play,
    "scoring": Scoring,
    "views": Views,
}
DEFAULT_URL_ENV: Final = "SKAT_NATS_URL"


PARENT_CHECK_SECONDS: Final = 1.0
"""How often a service started by ``spawn_services`` checks that its parent still runs."""


async def run_service(name: str, url: str | ConnectionSettings, instance: str = "") -> None:
    """Run one service until SIGINT/SIGTERM, or until the process that started it (named in
    ``$SKAT_PARENT_PID`` by ``spawn_services``) is gone: the fallback to the parent-death
    signal (``services.children``), e.g. where there is none. Until it has started, a signal
    ends the process at once (the default action): there is nothing to hand over yet."""
    nc = await connect(url, f"skat-{name}")
    service = SERVICES[name](nc, instance=instance or str(os.getpid()))
    await service.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    watch = asyncio.ensure_future(_watch_parent(watched_parent(), stop))
    await stop.wait()
    watch.cancel()
    await service.stop()
    try:
        await nc.close()  # subscriptions are gone already; a drain would wait on the pull consumer
    except Exception as exc:  # the broker is away (nats-py then fails on its closed socket): nothing is left to send
        logs.get(service=name).info("closed_while_disconnected", error=repr(exc)[:200])


async def _watch_parent(parent: int | None, stop: asyncio.Event) -> None:
    """Set ``stop`` once this process was re-parented (its parent died)."""
    if parent is None:
        return
    while not stop.is_set():
        if parent_gone(parent):
            logs.get(command="service").warning("parent_gone", parent=parent)
            stop.set()
            return
        await asyncio.sleep(PARENT_CHECK_SECONDS)


def service_main(name: str, url: str | ConnectionSettings) -> int:
    """Run one service in this process. With ``SKAT_PROFILE_DIR`` set, the run is profiled
    and the stats are written there as ``<name>-<pid>.prof`` (what ``make bench`` reads)."""
    logs.configure()
    profile_dir = os.environ.get("SKAT_PROFILE_DIR")
    if not profile_dir:
        _run(run_service(name, url))
        return 0
    import cProfile

    profiler = cProfile.Profile(time.process_time)  # CPU time: waiting is not work
    profiler.enable()
    try:
        _run(run_service(name, url))
    finally:
        profiler.disable()
        profiler.dump_stats(os.path.join(profile_dir, f"{name}-{os.getpid()}.prof"))
    return 0


def _run(coro: object) -> None:
    """uvloop when it is installed (faster request/reply and acked publishes), else asyncio."""
    try:
        import uvloop

        uvloop.run(coro)  # type: ignore[arg-type]
    except ImportError:
        asyncio.run(coro)  # type: ignore[arg-type]


def service_env(target: str | ConnectionSettings, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a service process connects by: the server list, and the paths of the
    credentials and CA files (never a secret itself, and nothing on the command line, which
    every local user can read with ``ps``)."""
    settings = target if isinstance(target, ConnectionSettings) else ConnectionSettings.build(target, env={})
    return dict(settings.apply_to_env(dict(os.environ if env is None else env)))


def spawn_services(
    target: str | ConnectionSettings, names: tuple[str, ...] = tuple(SERVICES), env: dict[str, str] | None = None
) -> list[subprocess.Popen[bytes]]:
    """Start each service as its own process, connected as ``target`` says (see ``service_env``).
    Each dies with this process, however it dies: SIGTERM from the kernel (``children.popen``),
    and its own check of ``$SKAT_PARENT_PID`` where the kernel has no such signal."""
    child_env = {**service_env(target, env), PARENT_PID_ENV: str(os.getpid())}
    return [popen([sys.executable, "-m", "services", name], env=child_env) for name in names]


def stop_processes(procs: list[subprocess.Popen[bytes]], timeout: float = 10.0) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class ServiceDidNotStart(TimeoutError):
    """A service of the stack did not answer its health check in time (a machine too busy, or
    a service that died at start: its log says which): one line from the CLI, exit code 1."""


async def wait_ready(
    url: str | ConnectionSettings, names: tuple[str, ...] = tuple(SERVICES), timeout: float = 30.0
) -> None:
    """Until every named service answers its health check (``skat.health.<name>``)."""
    from protocol.subjects import health_subject

    client = await open_connection(url, patience=timeout)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    try:
        for name in names:
            while True:
                try:
                    await client.request(health_subject(name), b"", timeout=0.5)
                    break
                except Exception:
                    if loop.time() > end:
                        raise ServiceDidNotStart(
                            f"service {name} did not come up within {timeout:g} s (is the machine very busy? its log says more)"
                        ) from None
                    await asyncio.sleep(0.05)
    finally:
        await client.close()


class LocalStack:
    """An embedded nats-server and the five services as processes, for one command's lifetime
    (``skat run``, ``skat tournament`` without ``--nats``).

    With ``auth_dir`` (written by ``skat auth``) the server runs that configuration, as
    ``skat up --auth`` does, and ``settings`` are the services user's. Starting and stopping
    wait on processes, so they run in a thread: a signal handler on the event loop still
    runs meanwhile, and a start interrupted half-way is still stopped completely. (The server
    is forked from the process-long spawner thread, not that worker thread, so that its
    parent-death signal fires only when this process dies: ``services.children``.) A store
    another server uses is refused (``StoreInUse``, one line) before anything starts."""

    def __init__(self, store_dir: str | None = None, auth_dir: str | None = None) -> None:
        self.auth = None
        if auth_dir:
            from .auth import load_auth

            self.auth = load_auth(auth_dir)
            for warning in self.auth.warnings:
                print(f"warning: {warning}", file=sys.stderr, flush=True)
            a = self.auth
            self.server = EmbeddedServer(store_dir=a.store_dir, config=a.config, host=a.host, port=a.port, tls=a.tls)
        else:
            self.server = EmbeddedServer(store_dir=store_dir)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.store_dir = self.auth.store_dir if self.auth is not None else store_dir
        self.settings = ConnectionSettings((self.server.url,))
        self._starting: asyncio.Future[EmbeddedServer] | None = None

    async def __aenter__(self) -> str:
        from .auth import SERVICE_USER

        self._starting = asyncio.get_running_loop().run_in_executor(None, self.server.start)
        await asyncio.shield(self._starting)
        if self.auth is not None:
            self.settings = self.auth.settings(SERVICE_USER, self.server.url)
        env = {**os.environ, "SKAT_LOG_LEVEL": os.environ.get("SKAT_LOG_LEVEL", "warning")}
        for name in SERVICES:
            self.procs.extend(spawn_services(self.settings, (name,), env=env))
        await wait_ready(self.settings)
        return self.server.url

    async def __aexit__(self, *exc: object) -> None:
        """Stop the services, then the server, by PID: all of it even if cancelled meanwhile
        (a second Ctrl-C must not leave a server running on the store)."""
        stopping = asyncio.ensure_future(self._stop())
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError:
            await stopping
            raise

    async def _stop(self) -> None:
        if self._starting is not None:
            with contextlib.suppress(BaseException):  # a start cut short: let it finish, then stop
                await self._starting
        await asyncio.to_thread(stop_processes, self.procs)
        await asyncio.to_thread(self.server.stop, self.store_dir is None)


def up(
    url: str | ConnectionSettings | None,
    store_dir: str | None = None,
    auth_dir: str | None = None,
    cluster: int = 0,
    companions: Callable[[ConnectionSettings], list[subprocess.Popen[bytes]]] | None = None,
    port: int | None = None,
) -> int:
    """Start a nats-server (unless ``url`` names one) and the five services; stop all on Ctrl-C,
    SIGTERM or SIGHUP (a closed terminal). Returns non-zero if a service or the server died on
    its own.

    ``port``: where the server listens (default: a free port), so that a restart comes back on
    the same address and clients reconnect. A store in use by another server, a store that is
    not a directory, or a port that is taken raise ``StartRefused`` (one line) before anything
    runs. Every child dies with this process, however it dies (``services.children``).

    With ``auth_dir`` (written by ``skat auth``) the server runs its configuration, on its
    listen address and with its TLS, so every player is held to its own subjects, and the
    services connect as the services user: its seed file and the CA file are named in their
    environment, nothing secret is on any command line or in any log line.

    With ``cluster`` = N, a local N-node JetStream cluster on loopback instead of one server
    (``services.cluster``), and N replicas for every stream unless ``SKAT_REPLICAS`` says
    otherwise. "Up" is printed once every service answers its health check, which it does
    only after its recovery scan.

    ``companions`` starts processes that go with the stack once it is up (``skat up`` starts
    the live page this way, from the layer above): they are stopped with it, but one that
    exits does not stop the stack."""
    from .connection import safe_servers

    logs.configure()
    log = logs.get(command="up")
    server: EmbeddedServer | None = None
    nodes: LocalCluster | None = None
    procs: list[subprocess.Popen[bytes]] = []
    extras: list[subprocess.Popen[bytes]] = []
    # SIGINT too: a shell starts a background job with SIGINT ignored, and Python then leaves it so.
    # SIGHUP: a closed terminal stops the stack like Ctrl-C (the children, in process groups of
    # their own, do not get it: nats-server would take it for "reload the configuration").
    # Not where SIGHUP is ignored already (``nohup skat up``): the user asked to outlive the terminal.
    hangup = hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN
    stopping = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hangup else [])
    previous = {sig: signal.signal(sig, _interrupt) for sig in stopping}
    code = 0
    try:
        if cluster:
            os.environ.setdefault("SKAT_REPLICAS", str(min(cluster, 5)))
            nodes = LocalCluster(cluster, store_root=store_dir)
            nodes.start()
            settings = ConnectionSettings(tuple(nodes.urls))
            log.info(
                "cluster_started",
                servers=settings.describe(),
                pids=list(nodes.pids.values()),
                replicas=os.environ["SKAT_REPLICAS"],
            )
        elif url is None:
            auth = None
            if auth_dir:
                from .auth import SERVICE_USER, load_auth

                auth = load_auth(auth_dir)
                for warning in auth.warnings:  # e.g. a directory written by an older skat auth
                    print(f"skat up: warning: {warning}", file=sys.stderr, flush=True)
                # Assigned before start, so that Ctrl-C during the start still stops it.
                server = EmbeddedServer(
                    store_dir=auth.store_dir, config=auth.config, host=auth.host, port=auth.port, tls=auth.tls
                )
            else:
                server = EmbeddedServer(store_dir=store_dir, port=port)
            server.start()
            settings = auth.settings(SERVICE_USER, server.url) if auth else ConnectionSettings((server.url,))
            log.info(
                "nats_started",
                url=settings.describe(),
                pid=server.pid,
                store=server.store_dir,
                auth=bool(auth_dir),
                tls=server.tls,
            )
        else:
            settings = url if isinstance(url, ConnectionSettings) else ConnectionSettings.build(url, env={})
            try:  # a server nobody can reach: say so now, not "up" with every service refused
                asyncio.run(_reachable(settings))
            except Unreachable as exc:
                print(f"skat up: {exc}", file=sys.stderr, flush=True)
                return 1
        procs.extend(spawn_services(settings))
        log.info("services_started", pids=[p.pid for p in procs], url=settings.describe())
        if not _wait_until_ready(settings, procs):
            print("skat up: the services did not become ready (see the log above)", file=sys.stderr, flush=True)
            return 1
        print(f"skatbus is up on {safe_servers(settings.servers, scheme=True)} (Ctrl-C stops it)", flush=True)
        if companions is not None:
            extras.extend(companions(settings))

        def servers_running() -> bool:
            return (server is None or server.running) and (nodes is None or bool(nodes.pids))

        while all(p.poll() is None for p in procs) and servers_running():
            time.sleep(0.5)
        log.error("process_exited", services=[p.returncode for p in procs], server_running=servers_running())
        code = 1
    except KeyboardInterrupt:
        pass
    finally:
        # A second signal must not cut the stopping short (a server left on the store): each
        # step below is bounded (SIGKILL after a grace period) anyway.
        for sig in stopping:
            signal.signal(sig, signal.SIG_IGN)
        stop_processes(extras + procs)
        if server is not None:
            server.stop()  # removes the store only if it is a temporary one the server made
        if nodes is not None:
            nodes.stop()
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    return code


def _wait_until_ready(
    settings: ConnectionSettings, procs: list[subprocess.Popen[bytes]], timeout: float = 60.0
) -> bool:
    """Until every service answers its health check; False if one exits or time runs out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(p.poll() is not None for p in procs):
            return False
        try:
            asyncio.run(wait_ready(settings, timeout=2.0))
            return True
        except (TimeoutError, OSError, nats.errors.Error):
            continue
    return False


async def _reachable(settings: ConnectionSettings) -> None:
    """Connect once, bounded (``$SKAT_CONNECT_TIMEOUT``), or raise ``Unreachable``."""
    nc = await open_connection(settings, patience=connect_patience(), name="skat-up")
    await nc.close()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
