"""``skat web`` (watch, and play at the seats it is given), and what ``skat play`` (``play``: a
table against the bots, on a local stack, in the browser) shares with it.

Both run until Ctrl-C or SIGTERM and then close the page's streams, their connections and,
for ``skat play``, the local stack (by PID). Mistakes in what they are given are one line and
exit code 2 (``UsageError``), found before anything starts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from protocol.subjects import check_token
from services import logs
from services.connection import (
    ConnectionSettings,
    add_connect_timeout,
    check_connect_timeout,
    connect_patience,
    from_args,
    read_credentials,
)
from services.connection import add_arguments as add_connection_arguments

from ..errors import UsageError
from .server import DEFAULT_PORT, WebServer, is_loopback


def register(sub: Any) -> None:
    web = sub.add_parser(
        "web",
        help="a web page: the open tables and tournaments live, and seats for people (http://127.0.0.1:8470)",
        description="Serve a page that lists the open tables and running tournaments and shows any of them live "
        "(hands hidden as the public feed hides them). With --seat PLAYER a person plays as PLAYER in the browser, "
        "through that player's own subjects and credentials.",
    )
    add_connection_arguments(
        web, "the server the services run on (default: $SKAT_NATS_URL, else nats://127.0.0.1:4222)"
    )
    _listen_arguments(web)
    web.add_argument(
        "--auth",
        default=None,
        metavar="DIR",
        help="the users `skat auth --out DIR` wrote: watch as the services user, seat each --seat with DIR/<PLAYER>.nk",
    )
    web.add_argument(
        "--seat",
        action="append",
        default=[],
        metavar="PLAYER",
        help="let a person play as PLAYER (repeatable); the page to open is printed at start",
    )
    web.add_argument(
        "--seat-creds",
        default=None,
        metavar="FILE",
        help="the seat's credentials file (one --seat; not with --auth, which has them)",
    )
    web.set_defaults(handler=web_main)

    from .play import register as register_play

    register_play(sub)


def _listen_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--listen",
        default=f"127.0.0.1:{DEFAULT_PORT}",
        metavar="HOST:PORT",
        help=f"where the page is served (default 127.0.0.1:{DEFAULT_PORT}; port 0: a free one); beyond loopback "
        "it needs --tls-cert and --tls-key, and every page the access token",
    )
    p.add_argument(
        "--tls-cert", default=None, metavar="FILE", help="serve the page over HTTPS with this certificate (PEM)"
    )
    p.add_argument("--tls-key", default=None, metavar="FILE", help="... and its private key")
    add_connect_timeout(p)


def _listen(args: argparse.Namespace) -> tuple[str, int, ssl.SSLContext | None]:
    """(host, port, TLS) of ``--listen``/``--tls-*``; beyond loopback only with TLS."""
    host, sep, port_text = args.listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise UsageError(f"--listen {args.listen!r}: want HOST:PORT, e.g. 127.0.0.1:{DEFAULT_PORT}")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    tls = None
    if args.tls_cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            tls.load_cert_chain(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"--tls-cert/--tls-key: cannot use them ({exc.__class__.__name__})") from None
    if not is_loopback(host) and tls is None:
        raise UsageError(
            f"--listen {args.listen}: beyond loopback the page is served over HTTPS only (give --tls-cert and --tls-key)"
        )
    return host, int(port_text), tls


def _player(text: str, flag: str) -> str:
    try:
        return check_token("player", text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def web_main(args: argparse.Namespace) -> int:
    """``skat web``: connect, serve, print the address (and each seat's), until a signal."""
    logs.configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))  # before any logger is bound
    host, port, tls = _listen(args)
    seats_given = [_player(p, "--seat") for p in args.seat]
    if args.seat_creds and len(seats_given) != 1:
        raise UsageError("--seat-creds is for one --seat; with more, use --auth DIR")
    if args.auth and (args.creds or args.seat_creds):
        raise UsageError("--auth DIR has the credentials: give neither --creds nor --seat-creds")
    check_connect_timeout(args)
    seats: dict[str, ConnectionSettings] = {}
    if args.auth:
        from services.auth import load_auth

        auth = load_auth(args.auth)
        url = args.nats or None
        settings = auth.settings(url=url)
        for player in seats_given:
            seats[player] = auth.settings(player, url)
    else:
        given = from_args(args)
        assert given is not None
        settings = given
        for player in seats_given:
            creds = read_credentials(args.seat_creds) if args.seat_creds else None
            seats[player] = ConnectionSettings(settings.servers, creds, settings.tls_ca)
    server = WebServer(settings, host, port, seats=seats, tls=tls)
    patience = connect_patience(args.connect_timeout)

    async def work(stop: asyncio.Event) -> int:
        url = await server.start(patience)
        print(f"skat web: {url} (Ctrl-C stops it)", flush=True)
        print(f"  watch: {server.spectator_url}", flush=True)
        for player in seats:  # each address opens its own seat only: give each person theirs alone
            print(f"  play as {player} (for {player} only): {server.seat_url(player)}", flush=True)
        await stop.wait()
        return 0

    return _until_signal(work, server.stop)


def _until_signal(work: Callable[[asyncio.Event], Awaitable[int]], cleanup: Callable[[], Awaitable[None]]) -> int:
    """Run ``work`` until it ends or SIGINT/SIGTERM comes; ``cleanup`` runs either way."""

    async def main() -> int:
        stop = asyncio.Event()
        received: list[int] = []
        loop = asyncio.get_running_loop()

        def on_signal(signum: int) -> None:
            received.append(signum)
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal, sig)
        task = asyncio.ensure_future(work(stop))
        waiter = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            while not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=0.5)
        finally:
            waiter.cancel()
            await cleanup()
        if received:
            return 128 + received[0] if not task.done() or task.cancelled() else task.result()
        return task.result()

    try:
        import uvloop

        return uvloop.run(main())
    except ImportError:
        return asyncio.run(main())


# --- skat play -----------------------------------------------------------------------------------


def people_auth(players: list[str], store_dir: str | None = None) -> str:
    """A fresh ``skat auth`` directory for a built-in stack that seats people: an NKey user for
    each of ``players`` and the services user, seeds 0600 in a 0700 directory of its own, the
    server on a free loopback port. So no other local user can connect to the stack and read
    the hands; the caller removes the directory (``shutil.rmtree``) once the stack is stopped.
    ``store_dir``: where JetStream keeps its data (default: inside the directory)."""
    import tempfile

    from services.auth import write_auth
    from services.natsserver import free_port

    path = tempfile.mkdtemp(prefix="skat-people-")  # 0700, ours alone
    try:
        write_auth(path, players, store_dir=store_dir, listen=("127.0.0.1", free_port()))
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    return path
