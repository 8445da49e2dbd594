"""Connections to the broker: the one place that turns *where* (a server list), *who* (a
credentials file) and *how* (TLS) into ``nats.connect`` options, so that every command and
service connects the same way and none of them ever puts a secret on a command line or a log
line.

Inputs, flag first, then environment (``add_arguments``/``from_args`` for the command line):

- ``--nats URL[,URL...]`` / ``SKAT_NATS_URL``: one or more servers, ``nats://host:port``,
  ``tls://host:port`` (TLS required) or ``host:port``. A ``user:password@`` in a URL still
  works (older setups), but it is never logged, and given on a command line it is visible to
  every local user, so ``--creds`` is the way.
- ``--creds FILE`` / ``SKAT_NATS_CREDS``: a credentials file, one of
  an NKey user seed (``SU...``, as ``skat auth`` writes: ``DIR/<player>.nk``), a NATS ``.creds``
  file (user JWT and seed), or JSON ``{"user": "...", "password": "..."}``.
- ``--tls-ca FILE`` / ``SKAT_NATS_CA``: the CA certificate(s) the server's certificate must chain
  to (``skat auth --tls`` writes ``DIR/ca.pem``). Giving one means TLS is required.

Every long-running process connects through ``connect``: connection problems are logged (never
silent), with servers shown as ``host:port`` only (``safe_servers``), and reconnects are
retried forever. With TLS asked for, a server that does not offer TLS is refused before any
credential is sent (nats-py alone would carry on in plaintext).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import socket
import ssl
import stat
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from nats import errors as nats_errors
from nats.aio.client import Client

from . import logs

ENV_URL: Final = "SKAT_NATS_URL"
ENV_CREDS: Final = "SKAT_NATS_CREDS"
ENV_CA: Final = "SKAT_NATS_CA"
DEFAULT_URL: Final = "nats://127.0.0.1:4222"
SCHEMES: Final = ("nats", "tls")
MAX_CREDS_BYTES: Final = 64 * 1024
"""A credentials file is a few hundred bytes; anything big is the wrong file."""


def _not_the_ssl_eof_notice(record: logging.LogRecord) -> bool:
    """nats-py's transport answers EOF with True, which asyncio (and uvloop) report on every
    TLS connection that closes: noise on stderr at each shutdown, not a problem."""
    return "eof_received()" not in str(record.msg)


logging.getLogger("asyncio").addFilter(_not_the_ssl_eof_notice)


class SettingsError(ValueError):
    """Connection settings that cannot work (a missing credentials file, a bad URL, ...).
    The message names files and servers but never holds a secret, so the command line prints
    it as its one line on stderr."""


# --- servers --------------------------------------------------------------------------------


def _split(url: str) -> tuple[str, str, int | None, bool]:
    """(scheme, host, port, has_userinfo) of one server URL; ``host:port`` means nats://."""
    text = url.strip()
    if "://" not in text:
        text = "nats://" + text
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    return parts.scheme.lower(), parts.hostname or "", port, parts.username is not None or parts.password is not None


def safe_server(url: str, scheme: bool = False) -> str:
    """One server URL as ``host:port`` (``tls://host:port`` with ``scheme``): no user, no
    password, no path. What cannot be parsed shows as ``?``: echoing it could print a secret."""
    try:
        sch, host, port, _ = _split(url)
    except ValueError:
        return "?"
    if not host:
        return "?"
    shown_host = f"[{host}]" if ":" in host else host
    shown = f"{shown_host}:{port if port and port > 0 else 4222}"
    return f"{sch}://{shown}" if scheme else shown


def safe_servers(urls: str | Iterable[str], scheme: bool = False) -> str:
    """A server list (``"a,b"`` or a sequence) as ``host:port,host:port`` for logs and output."""
    items = split_servers(urls, check=False) if isinstance(urls, str) else tuple(urls)
    return ",".join(safe_server(u, scheme) for u in items)


def split_servers(text: str, check: bool = True) -> tuple[str, ...]:
    """``"nats://a:4222, tls://b:4222"`` -> the URLs; with ``check`` each must be usable."""
    urls = tuple(u.strip() for u in text.split(",") if u.strip())
    if not check:
        return urls
    if not urls:
        raise SettingsError("no NATS server given")
    for url in urls:
        try:
            sch, host, port, _ = _split(url)
        except ValueError:
            sch, host, port = "", "", -1
        if sch not in SCHEMES or not host or port == -1 or (port is not None and not 0 < port < 65536):
            raise SettingsError(
                f"not a NATS server URL: {safe_server(url, scheme=True)!r} (want nats://HOST:PORT or tls://HOST:PORT)"
            )
    return urls


# --- credentials ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CredentialsFile:
    """A checked credentials file and the ``nats.connect`` options that use it.

    ``kind`` is ``nkey`` (a user seed), ``creds`` (a JWT and its seed) or ``password``
    (JSON user and password). The seed itself is not kept: nats-py reads the file again
    whenever it signs a server's nonce (so a replaced key file takes effect on reconnect)."""

    path: str
    kind: str
    options: Mapping[str, Any] = field(repr=False)  # may hold a password: never in a repr
    public_key: str = ""

    def world_readable(self) -> bool:
        """Whether users other than the owner may read the file (worth a warning)."""
        try:
            return bool(os.stat(self.path).st_mode & (stat.S_IRWXG | stat.S_IRWXO))
        except OSError:
            return False


def read_credentials(path: str | os.PathLike[str]) -> CredentialsFile:
    """Check a credentials file (see the module docstring for the formats)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read(MAX_CREDS_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"cannot read credentials file {name}: {exc.strerror or exc}") from None
    if len(data) > MAX_CREDS_BYTES:
        raise SettingsError(f"{name}: too big for a credentials file")
    if b"BEGIN NATS USER JWT" in data:
        if b"BEGIN USER NKEY SEED" not in data:
            raise SettingsError(f"{name}: a .creds file without its user seed")
        _check_seed(_decorated_seed(data, name), name)
        return CredentialsFile(name, "creds", {"user_credentials": name})
    stripped = data.strip()
    if stripped.startswith(b"{"):
        try:
            doc = json.loads(stripped)
        except ValueError:
            raise SettingsError(f"{name}: not valid JSON") from None
        if (
            not isinstance(doc, dict)
            or not isinstance(doc.get("user"), str)
            or not isinstance(doc.get("password"), str)
        ):
            raise SettingsError(f'{name}: want {{"user": "...", "password": "..."}}')
        return CredentialsFile(name, "password", {"user": doc["user"], "password": doc["password"]})
    if b"BEGIN USER NKEY SEED" in data:
        seed = _decorated_seed(data, name)
        public = _check_seed(seed, name)
        # nats-py reads a seed file as the bare seed, so a decorated one is passed as a string.
        return CredentialsFile(name, "nkey", {"nkeys_seed_str": seed.decode()}, public)
    if not stripped:
        raise SettingsError(f"{name}: empty credentials file")
    if len(stripped.split()) != 1:
        raise SettingsError(f"{name}: not an NKey seed, a .creds file or a JSON user/password")
    public = _check_seed(stripped, name)
    return CredentialsFile(name, "nkey", {"nkeys_seed": name}, public)


def _decorated_seed(data: bytes, name: str) -> bytes:
    lines = [line.strip() for line in data.splitlines()]
    for i, line in enumerate(lines):
        if b"BEGIN USER NKEY SEED" in line:
            for candidate in lines[i + 1 :]:
                if candidate:
                    return candidate
    raise SettingsError(f"{name}: no seed after BEGIN USER NKEY SEED")


def _check_seed(seed: bytes, name: str) -> str:
    """The public key of a user seed; a clear error for anything else."""
    try:
        import nkeys
    except ImportError:  # pragma: no cover - a dependency; only a broken install lacks it
        raise SettingsError("NKey credentials need the nkeys package: pip install nkeys") from None
    if not seed.startswith(b"SU"):
        kind = {b"SA": "an account", b"SO": "an operator", b"SN": "a server"}.get(seed[:2])
        raise SettingsError(f"{name}: {kind + ' seed, not a user seed' if kind else 'not an NKey user seed (SU...)'}")
    try:
        pair = nkeys.from_seed(bytearray(seed))
    except (nkeys.NkeysError, ValueError, TypeError):  # a bad checksum; a wrong length (nacl)
        raise SettingsError(f"{name}: not a valid NKey seed (damaged or truncated?)") from None
    public = bytes(pair.public_key).decode()
    pair.wipe()
    return public


def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """A client context that verifies the server against ``ca_file`` (else the system's CAs)."""
    try:
        return ssl.create_default_context(cafile=ca_file)
    except FileNotFoundError:
        raise SettingsError(f"cannot read CA file {ca_file}: no such file") from None
    except PermissionError:
        raise SettingsError(f"cannot read CA file {ca_file}: permission denied") from None
    except (ssl.SSLError, OSError) as exc:
        raise SettingsError(f"{ca_file}: not a PEM CA certificate ({exc.__class__.__name__})") from None


# --- the settings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect. Built once (files checked then, so a mistake is reported
    before anything starts), then used for every connection and handed to child processes
    through the environment (``apply_to_env``), never through their command line."""

    servers: tuple[str, ...]
    creds: CredentialsFile | None = None
    tls_ca: str | None = None

    @classmethod
    def build(
        cls,
        nats: str | None = None,
        creds: str | os.PathLike[str] | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        default: str = DEFAULT_URL,
    ) -> ConnectionSettings:
        """From explicit values, each falling back to its environment variable."""
        env = os.environ if env is None else env
        text = nats or env.get(ENV_URL) or default
        servers = split_servers(text)
        creds_path = os.fspath(creds) if creds else env.get(ENV_CREDS) or None
        ca_path = os.fspath(tls_ca) if tls_ca else env.get(ENV_CA) or None
        settings = cls(servers, read_credentials(creds_path) if creds_path else None, ca_path)
        if ca_path:
            tls_context(ca_path)  # fail now, not at the first connect
        return settings

    @classmethod
    def resolve(
        cls,
        target: str | ConnectionSettings | None,
        creds: str | os.PathLike[str] | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
    ) -> ConnectionSettings:
        """What a library function was given: settings as they are, or a URL (list) plus
        files (each defaulting to its environment variable)."""
        if isinstance(target, ConnectionSettings):
            if creds is None and tls_ca is None:
                return target
            given_creds = creds or (target.creds.path if target.creds else None)
            return cls.build(",".join(target.servers), given_creds, tls_ca or target.tls_ca, env={})
        return cls.build(target, creds, tls_ca)

    @property
    def wants_tls(self) -> bool:
        """TLS is required: a ``tls://`` server, or a CA file given."""
        return self.tls_ca is not None or any(_split(u)[0] == "tls" for u in self.servers)

    def __repr__(self) -> str:
        """Without secrets: a URL's user and password never show, even in a traceback."""
        creds = self.creds.path if self.creds else None
        return f"ConnectionSettings(servers={self.describe(scheme=True)!r}, creds={creds!r}, tls_ca={self.tls_ca!r})"

    def describe(self, scheme: bool = False) -> str:
        """The servers as ``host:port`` (comma-separated): what logs and output show."""
        return safe_servers(self.servers, scheme)

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ``nats.connect`` / ``Client.connect``."""
        opts: dict[str, Any] = {"servers": list(self.servers)}
        if self.wants_tls:
            opts["tls"] = tls_context(self.tls_ca)
        if self.creds is not None:
            opts.update(self.creds.options)
        return opts

    def apply_to_env(self, env: MutableMapping[str, str]) -> MutableMapping[str, str]:
        """Put these settings into a child process's environment (and remove stale ones)."""
        env[ENV_URL] = ",".join(self.servers)
        for key, value in ((ENV_CREDS, self.creds.path if self.creds else None), (ENV_CA, self.tls_ca)):
            if value:
                env[key] = os.path.abspath(value)
            else:
                env.pop(key, None)
        return env


def add_arguments(parser: argparse.ArgumentParser, nats_help: str | None = None) -> None:
    """``--nats``, ``--creds`` and ``--tls-ca``, the same on every command that connects."""
    parser.add_argument(
        "--nats", default=None, metavar="URL[,URL...]",
        help=nats_help or f"server(s), comma-separated: nats://HOST:PORT or tls://HOST:PORT (default: ${ENV_URL} or {DEFAULT_URL})",
    )  # fmt: skip
    parser.add_argument(
        "--creds",
        default=None,
        metavar="FILE",
        help=f"credentials file: an NKey seed (skat auth's DIR/<player>.nk), a .creds file, "
        f'or JSON {{"user", "password"}} (default: ${ENV_CREDS})',
    )
    parser.add_argument(
        "--tls-ca",
        default=None,
        metavar="FILE",
        help=f"CA certificate the server's must chain to; requires TLS (default: ${ENV_CA})",
    )


def add_connect_timeout(parser: argparse.ArgumentParser) -> None:
    """``--connect-timeout``, the same on every command that connects (``connect_patience``)."""
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="give up on a server that does not answer after this long; 0: wait for ever "
        "(default: $SKAT_CONNECT_TIMEOUT, else 10)",
    )


def check_connect_timeout(args: argparse.Namespace) -> None:
    """Refuse a negative ``--connect-timeout`` (``SettingsError``: one line, exit code 2)."""
    value = getattr(args, "connect_timeout", None)
    if value is not None and value < 0:
        raise SettingsError("--connect-timeout must be 0 (wait for ever) or more")


def from_args(args: argparse.Namespace, default: str | None = DEFAULT_URL) -> ConnectionSettings | None:
    """The settings a command was given; None when no server was named and ``default`` is
    None (``skat up`` and ``skat tournament`` then start their own)."""
    nats = getattr(args, "nats", None)
    if nats and _has_userinfo(nats):
        print("skat: warning: a password in --nats is visible to every local user (ps); "
              "use --creds FILE or $SKAT_NATS_URL", file=sys.stderr)  # fmt: skip
    if not nats and not os.environ.get(ENV_URL) and default is None:
        if getattr(args, "creds", None) or getattr(args, "tls_ca", None):
            raise SettingsError("--creds and --tls-ca need a server: give --nats URL")
        return None
    return ConnectionSettings.build(
        nats, getattr(args, "creds", None), getattr(args, "tls_ca", None), default=default or DEFAULT_URL
    )


def _has_userinfo(text: str) -> bool:
    try:
        return any(_split(u)[3] for u in split_servers(text, check=False))
    except ValueError:
        return False


# --- connecting ------------------------------------------------------------------------------------


class _TLSOnlyClient(Client):
    """A client that will not talk to a server in plaintext when TLS was asked for.

    nats-py upgrades to TLS only when the server's INFO says ``tls_required``: a server (or a
    man in the middle) that does not would get the CONNECT, credentials included, in the
    clear. nats.go (``Secure``) and nats.js (``tls``) refuse such a server; so does this. It
    hooks nats-py's INFO handling (a private method, pinned by ``nats-py<3`` and covered by
    tests/services/test_tls.py), which runs before the TLS upgrade and the CONNECT, on the
    first connect and on every reconnect."""

    async def _process_info(self, info: dict[str, Any], initial_connection: bool = False) -> None:
        if initial_connection and not info.get("tls_required"):
            if not info.get("tls_available"):
                raise nats_errors.Error("nats: TLS was asked for, but the server does not offer it (nothing sent)")
            info["tls_required"] = True  # the server allows TLS: upgrade (the same dict nats-py reads next)
        await super()._process_info(info, initial_connection)


# --- the first connect, bounded ------------------------------------------------------------------

ENV_CONNECT_TIMEOUT: Final = "SKAT_CONNECT_TIMEOUT"
CONNECT_PATIENCE: Final = 10.0
"""Seconds a command waits for its server before it gives up (``--connect-timeout``)."""


class Unreachable(ConnectionError):
    """The first connect failed for good: nobody listens, the credentials were refused, TLS
    failed. The message is one line for the user (servers as ``host:port``, no secret), saying
    which option fixes it."""


def connect_patience(given: float | None = None) -> float:
    """How long a command waits for its server: ``given``, else ``$SKAT_CONNECT_TIMEOUT``,
    else ``CONNECT_PATIENCE``; 0 or less means for ever (``math.inf``)."""
    if given is None:
        text = os.environ.get(ENV_CONNECT_TIMEOUT, "")
        try:
            given = float(text) if text else CONNECT_PATIENCE
        except ValueError:
            raise SettingsError(f"${ENV_CONNECT_TIMEOUT} must be a number of seconds, not {text[:20]!r}") from None
    return given if given > 0 else math.inf


def _fatal(exc: BaseException) -> bool:
    """Errors no retry can cure: refused credentials, TLS that cannot work."""
    text = str(exc).lower()
    return (
        "authorization violation" in text
        or "authentication" in text
        or "tls was asked for" in text
        or isinstance(exc, ssl.SSLError)
        or isinstance(exc, nats_errors.AuthorizationError)
    )


def _why(exc: BaseException | None, settings: ConnectionSettings, waited: float) -> str:
    """One line on why the first connect failed, and what to give instead."""
    where = settings.describe(scheme=True)
    if exc is None or isinstance(exc, nats_errors.NoServersError):
        return f"cannot reach NATS at {where}: no answer within {waited:.0f} s"
    text = str(exc).strip()
    if "authorization violation" in text.lower() or "authentication" in text.lower():
        given = f"the credentials in {settings.creds.path}" if settings.creds else "a connection without credentials"
        return (
            f"the NATS server at {where} refused {given} ({text.removeprefix('nats: ').strip(chr(39))}): "
            f"give a user's key file with --creds FILE (or ${ENV_CREDS})"
        )
    if isinstance(exc, ssl.SSLError) or "tls" in text.lower():
        reason = getattr(exc, "reason", None) or text.removeprefix("nats: ")
        return f"TLS with the NATS server at {where} failed ({reason}): give its CA with --tls-ca FILE (or ${ENV_CA})"
    if isinstance(exc, ConnectionRefusedError):
        reason = "connection refused"
    elif isinstance(exc, socket.gaierror):
        reason = "unknown host"
    elif isinstance(exc, TimeoutError | asyncio.TimeoutError):
        reason = "no answer"
    elif isinstance(exc, OSError):
        reason = (exc.strerror or exc.__class__.__name__).lower()
    else:
        reason = text or exc.__class__.__name__
    return (
        f"cannot reach NATS at {where}: {reason} (tried for {waited:.0f} s; --nats URL or ${ENV_URL} names the server)"
    )


async def _connect_within(nc: Client, settings: ConnectionSettings, patience: float, options: dict[str, Any]) -> None:
    """``nc.connect`` that gives up after ``patience`` seconds, or at once on refused
    credentials or failed TLS, with ``Unreachable``. Until connected, failures are only
    collected (nats-py would print a traceback per attempt); afterwards they go to the
    caller's ``error_cb``, else to the log as one ``nats_error`` line each."""
    seen: list[BaseException] = []
    fatal = asyncio.Event()
    connected = False
    callers_cb = options.get("error_cb")
    log = logs.get(connection=options.get("name") or "skat")

    async def error_cb(exc: Exception) -> None:
        if not connected:
            seen.append(exc)
            if _fatal(exc):
                fatal.set()
            elif len(seen) == 1 and math.isinf(patience):  # waiting for ever: say so, once
                log.warning("waiting_for_nats", servers=settings.describe(), error=repr(exc))
        elif callers_cb is not None:
            await callers_cb(exc)
        else:
            log.warning("nats_error", error=repr(exc))

    loop = asyncio.get_running_loop()
    started = loop.time()
    attempt = asyncio.ensure_future(nc.connect(**{**options, "error_cb": error_cb}))
    stopped = asyncio.ensure_future(fatal.wait())
    try:
        await asyncio.wait({attempt, stopped}, timeout=None if math.isinf(patience) else patience,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    finally:
        stopped.cancel()
        if not attempt.done():
            attempt.cancel()
            with contextlib.suppress(BaseException):
                await attempt
    failure = None if attempt.cancelled() else attempt.exception()
    if attempt.cancelled() or failure is not None:
        with contextlib.suppress(Exception):
            await nc.close()
        last = next((e for e in reversed(seen) if _fatal(e)), seen[-1] if seen else failure)
        raise Unreachable(_why(last, settings, loop.time() - started))
    connected = True


async def open_connection(target: str | ConnectionSettings, patience: float | None = None, **options: Any) -> Client:
    """A plain connection with these settings (for short-lived tools: no logging callbacks).

    With ``patience`` (seconds, ``math.inf`` for ever) the first connect is bounded and fails
    with one line (``Unreachable``) instead of nats-py's retries with a traceback each; without,
    nats-py's own defaults apply."""
    settings = ConnectionSettings.resolve(target)
    nc: Client = _TLSOnlyClient() if settings.wants_tls else Client()
    if patience is None:
        await nc.connect(**{**settings.options(), **options})
    else:
        await _connect_within(nc, settings, patience, {**settings.options(), **options})
    return nc


async def connect(
    target: str | ConnectionSettings,
    name: str,
    on_reconnected: Callable[[Client], Awaitable[object]] | None = None,
    log: Any = None,
    patience: float | None = None,
    **options: Any,
) -> Client:
    """A connection whose problems are logged, never silent (slow consumers are only reported
    through ``error_cb``), that reconnects forever. ``on_reconnected`` runs after every
    reconnect (the SDK says hello then). With ``patience`` the first connect is bounded as
    in ``open_connection`` (``math.inf``: wait for the server, but refused credentials or
    failed TLS end it at once); without, it retries for ever, logging each failure."""
    settings = ConnectionSettings.resolve(target)
    log = log or logs.get(connection=name)
    if settings.creds is not None and settings.creds.world_readable():
        log.warning("credentials_file_readable_by_others", path=settings.creds.path, hint="chmod 600")

    async def error_cb(exc: Exception) -> None:
        log.warning("nats_error", error=repr(exc))

    async def disconnected_cb() -> None:
        if nc.is_closed or nc.is_draining:
            log.debug("nats_disconnected")  # we are shutting down
        else:
            log.warning("nats_disconnected")

    async def reconnected_cb() -> None:
        url = nc.connected_url
        log.info("nats_reconnected", server=safe_server(url.geturl()) if url else "")
        if on_reconnected is not None:
            await on_reconnected(nc)

    nc = _TLSOnlyClient() if settings.wants_tls else Client()
    every = {
        **settings.options(),
        "name": name,
        "error_cb": error_cb,
        "disconnected_cb": disconnected_cb,
        "reconnected_cb": reconnected_cb,
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 0.5,
        **options,
    }
    if patience is None:
        await nc.connect(**every)
    else:
        await _connect_within(nc, settings, patience, every)
    return nc


async def each_reconnect(nc: Client, then: Callable[[], Awaitable[None]], every: float = 0.25) -> None:
    """Call ``then()`` after every reconnect of ``nc``, for as long as the task runs.

    It watches the connection's reconnect counter rather than hooking ``reconnected_cb``, so
    it works on a connection someone else opened (and shares with others); an error in
    ``then`` is logged and the watch goes on."""
    seen = nc.stats.get("reconnects", 0)
    while True:
        await asyncio.sleep(every)
        now = nc.stats.get("reconnects", 0)
        if now != seen and nc.is_connected:
            seen = now
            try:
                await then()
            except Exception as exc:  # the watcher must outlive any one failure
                logs.get().warning("after_reconnect_failed", error=repr(exc))
