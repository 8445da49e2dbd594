"""The HTTP side of ``skat web``: the pages, and a Server-Sent Events stream per page.

Server-Sent Events rather than a WebSocket: the page only listens (its one action, a human's
move, is a plain POST), the browser reconnects an event stream by itself, and a stream is
text any test can read.

Who may do what:

- Listening on loopback (the default), anyone on this machine may watch; a seat needs the
  access token the URL printed at start carries once (``/play/<player>?token=…``), which the
  server turns into a cookie (HttpOnly, SameSite=Strict) and drops from the address bar.
- Beyond loopback it serves only over TLS, and every page needs the token.
- Every request's ``Host`` must name this server (a page on another site cannot reach it by
  DNS rebinding), a move must carry ``X-Skat: 1`` (which a cross-site form cannot send), and
  every id in a path is checked as a subject token before it is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import secrets
import ssl
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, Final

import msgspec
from aiohttp import web

from protocol.events import TableClosed
from protocol.subjects import check_token
from protocol.wire import encode
from services import logs
from services.connection import ConnectionSettings, connect

from ..errors import UsageError
from ..html_style import BASE_CSS, TABLE_CSS
from .feed import Feeds, Mailbox, TournamentFeed
from .seat import Seat, SeatRefused

DEFAULT_PORT: Final = 8470
COOKIE: Final = "skat_web"
HEARTBEAT: Final = 15.0
"""Seconds between keep-alive comments on an idle event stream (proxies close silent ones)."""
LOBBY_EVERY: Final = 1.0
TOURNAMENT_REFRESH: Final = 3.0
MAX_COMMAND_BYTES: Final = 4096
_PAGES = ("index.html", "table.html", "tournament.html", "web.js", "web.css")


def _page(name: str) -> bytes:
    return resources.files("skatbus.web").joinpath("pages", name).read_bytes()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebServer:
    """The pages, the event streams, and the seats, for one process's lifetime."""

    def __init__(
        self,
        settings: ConnectionSettings,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        seats: dict[str, ConnectionSettings] | None = None,
        tls: ssl.SSLContext | None = None,
        names: tuple[str, ...] = (),
    ) -> None:
        if not is_loopback(host) and tls is None:
            raise ValueError("beyond loopback the page is served over TLS only: give a certificate")
        self.settings = settings
        self.host, self.port = host, port
        self.tls = tls
        self.names = names
        self.private = not is_loopback(host)
        """Every page needs the token (not only the seats)."""
        self.token = secrets.token_urlsafe(24)
        self.seats = {check_token("player", p): Seat(p, s) for p, s in (seats or {}).items()}
        self.feeds: Feeds | None = None
        self.mailboxes: set[Mailbox] = set()
        self.log = logs.get(command="web")
        self._runner: web.AppRunner | None = None
        self._nc: Any = None
        self._pages = {name: _page(name) for name in _PAGES}
        self._css = (BASE_CSS + TABLE_CSS).encode() + self._pages["web.css"]

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self, patience: float | None = None) -> str:
        """Connect (the operator's connection, then each seat's), then listen; the base URL."""
        self._nc = await connect(self.settings, "skat-web", patience=patience)
        self.feeds = Feeds(self._nc)
        for seat in self.seats.values():
            await seat.start(patience)
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        app.add_routes(
            [
                web.get("/", self._static("index.html")),
                web.get("/table/{table}", self._static("table.html")),
                web.get("/tournament/{tid}", self._static("tournament.html")),
                web.get("/play/{player}", self._play_page),
                web.get("/static/web.js", self._static("web.js", "text/javascript")),
                web.get("/static/style.css", self._stylesheet),
                web.get("/events/lobby", self._lobby_events),
                web.get("/events/table/{table}", self._table_events),
                web.get("/events/tournament/{tid}", self._tournament_events),
                web.get("/events/play/{player}", self._play_events),
                web.post("/play/{player}/{table}", self._command),
                web.get("/replay/{table}", self._replay),
            ]
        )
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.tls)
        try:
            await site.start()
        except OSError as exc:  # a port in use is the user's to change, not a bug: one line
            raise UsageError(
                f"cannot serve the page on {self.host}:{self.port}: {(exc.strerror or str(exc)).lower()} "
                "(give --listen HOST:PORT; port 0 picks a free one)"
            ) from None
        if self.port == 0:
            server = getattr(site, "_server", None)
            sockets = getattr(server, "sockets", None) or []
            self.port = sockets[0].getsockname()[1] if sockets else self.port
        self.log.info("web_started", url=self.url)
        return self.url

    async def stop(self) -> None:
        for mailbox in list(self.mailboxes):
            mailbox.close()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.feeds is not None:
            await self.feeds.stop()
        for seat in self.seats.values():
            await seat.stop()
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def seat_url(self, player: str) -> str:
        """The address that opens a seat: it carries the access token once (keep it to yourself)."""
        return f"{self.url}/play/{player}?token={self.token}"

    # --- guards ---------------------------------------------------------------------------

    def _hosts(self) -> set[str]:
        names = {self.host, "localhost", "127.0.0.1", "[::1]", *self.names}
        return {f"{n}:{self.port}" for n in names} | ({f"{n}" for n in names} if self.port in (80, 443) else set())

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.host not in self._hosts():
            return web.Response(status=421, text="this server does not answer for that host name\n")
        needs_token = self.private or request.path.startswith(("/play/", "/events/play/"))
        if needs_token and not self._has_token(request):
            return web.Response(status=403, text="open the address skat printed (it carries the access token)\n")
        response = await handler(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault(
            "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
        )
        return response

    def _has_token(self, request: web.Request) -> bool:
        given = request.cookies.get(COOKIE, "") or request.query.get("token", "")
        return hmac.compare_digest(given.encode(), self.token.encode())

    @staticmethod
    def _id(request: web.Request, name: str, kind: str) -> str:
        try:
            return check_token(kind, request.match_info[name])
        except ValueError:
            raise web.HTTPNotFound(text=f"not a {kind} id\n") from None

    # --- pages ----------------------------------------------------------------------------

    def _static(self, name: str, kind: str = "text/html") -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            for key in ("table", "tid"):
                if key in request.match_info:
                    self._id(request, key, "table" if key == "table" else "tournament")
            return web.Response(body=self._pages[name], content_type=kind, charset="utf-8")

        return handler

    async def _stylesheet(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=self._css, content_type="text/css", charset="utf-8")

    async def _play_page(self, request: web.Request) -> web.StreamResponse:
        player = self._id(request, "player", "player")
        if player not in self.seats:
            raise web.HTTPNotFound(text=f"no seat for {player} here\n")
        if "token" in request.query:  # once: into a cookie, and out of the address bar
            response = web.HTTPSeeOther(f"/play/{player}")
            response.set_cookie(
                COOKIE, self.token, httponly=True, samesite="Strict", secure=self.tls is not None, path="/"
            )
            raise response
        return web.Response(body=self._pages["table.html"], content_type="text/html", charset="utf-8")

    async def _replay(self, request: web.Request) -> web.StreamResponse:
        """The HTML replay of a finished table (every card open: only once it is closed)."""
        from ..replay import TableLog
        from ..replay_html import render_html

        table = self._id(request, "table", "table")
        assert self.feeds is not None
        stored = await self.feeds.store.read(table)
        events = [s.event for s in stored if s.event is not None]
        if not events or not isinstance(events[-1], TableClosed):
            raise web.HTTPNotFound(text="no finished table by that id (a replay opens once the table is closed)\n")
        page, _ = render_html(TableLog(table, events))
        response = web.Response(text=page, content_type="text/html")
        # The replay page is self-contained: its script and style are inline, and it loads nothing.
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"
        )
        return response

    # --- event streams --------------------------------------------------------------------

    async def _stream(
        self,
        request: web.Request,
        mailbox: Mailbox,
        tick: Callable[[], Awaitable[None]] | None = None,
        every: float = HEARTBEAT,
    ) -> web.StreamResponse:
        """Send the mailbox's messages as they come, until the page goes or the server stops."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        self.mailboxes.add(mailbox)
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        try:
            while not mailbox.closed:
                messages = await mailbox.get(min(every, HEARTBEAT))
                if mailbox.closed:
                    break
                for data in messages:
                    await response.write(b"data: " + data + b"\n\n")
                if messages:
                    quiet_since = loop.time()
                elif loop.time() - quiet_since >= HEARTBEAT:
                    await response.write(b": keep-alive\n\n")
                    quiet_since = loop.time()
                if tick is not None:
                    await tick()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.mailboxes.discard(mailbox)
        return response

    async def _lobby_events(self, request: web.Request) -> web.StreamResponse:
        assert self.feeds is not None
        feeds = self.feeds
        mailbox = Mailbox()
        last = [b""]

        async def tick() -> None:
            try:
                lobby = await feeds.lobby()
            except Exception as exc:  # the store briefly away: the page keeps what it shows
                self.log.warning("web_lobby_failed", error=repr(exc)[:200])
                return
            lobby["seats"] = sorted(self.seats)
            data = msgspec.json.encode(lobby)
            if data != last[0]:
                last[0] = data
                mailbox.put(data)

        await tick()
        return await self._stream(request, mailbox, tick, every=LOBBY_EVERY)

    async def _table_events(self, request: web.Request) -> web.StreamResponse:
        table = self._id(request, "table", "table")
        assert self.feeds is not None
        mailbox = Mailbox()
        feed = await self.feeds.open(table)
        feed.watch(mailbox)
        try:
            return await self._stream(request, mailbox)
        finally:
            await self.feeds.close(table, mailbox)

    async def _tournament_events(self, request: web.Request) -> web.StreamResponse:
        tid = self._id(request, "tid", "tournament")
        assert self.feeds is not None
        feed = TournamentFeed(self.feeds, tid)
        await feed.start()
        loop = asyncio.get_running_loop()
        refreshed = [loop.time()]

        async def tick() -> None:
            if loop.time() - refreshed[0] >= TOURNAMENT_REFRESH:
                refreshed[0] = loop.time()
                with contextlib.suppress(Exception):
                    await feed.refresh()

        try:
            return await self._stream(request, feed.mailbox, tick, every=TOURNAMENT_REFRESH)
        finally:
            await feed.stop()

    async def _play_events(self, request: web.Request) -> web.StreamResponse:
        """The seat's own updates, and the spectator's view of the table it plays at (the
        other seats' moves between its prompts): nothing else."""
        player = self._id(request, "player", "player")
        seat = self.seats.get(player)
        if seat is None:
            raise web.HTTPNotFound(text=f"no seat for {player} here\n")
        assert self.feeds is not None
        feeds = self.feeds
        mailbox = Mailbox()
        watching: list[str] = []

        async def follow() -> None:
            if seat.table is not None and seat.table not in watching:
                for old in watching:
                    await feeds.close(old, mailbox)
                watching[:] = [seat.table]
                (await feeds.open(seat.table)).watch(mailbox)

        seat.watch(mailbox)
        await follow()
        asyncio.ensure_future(seat.hello())  # a reloaded page: our pending prompt again, as a bot's hello
        try:
            return await self._stream(request, mailbox, follow, every=0.5)
        finally:
            seat.watchers.discard(mailbox)
            for old in watching:
                await feeds.close(old, mailbox)

    async def _command(self, request: web.Request) -> web.StreamResponse:
        player = self._id(request, "player", "player")
        table = self._id(request, "table", "table")
        seat = self.seats.get(player)
        if seat is None:
            raise web.HTTPNotFound(text=f"no seat for {player} here\n")
        if request.headers.get("X-Skat") != "1":
            raise web.HTTPForbidden(text="a move comes from the page\n")
        body = await request.content.read(MAX_COMMAND_BYTES + 1)
        if len(body) > MAX_COMMAND_BYTES:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_COMMAND_BYTES, actual_size=len(body))
        try:
            reply = await seat.command(table, body)
        except SeatRefused as exc:
            return web.Response(body=b'{"ok":false,"code":"refused","reason":' + msgspec.json.encode(str(exc)) + b"}",
                                content_type="application/json")  # fmt: skip
        return web.Response(body=encode(reply, "json"), content_type="application/json")
