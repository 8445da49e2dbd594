"""The HTTP side of ``skat web``: the pages, and a Server-Sent Events stream per page.

Server-Sent Events rather than a WebSocket: the page only listens (its one action, a human's
move, is a plain POST), the browser reconnects an event stream by itself, and a stream is
text any test can read.

Who may do what:

- Every seat has an access token of its own (``/play/<player>?token=…``, printed at start for
  that person only). On the first visit the server turns it into a cookie named for that seat
  (``skat_seat_<player>``; HttpOnly, SameSite=Strict) whose path is that seat's alone
  (``/play/<player>`` and ``/events/play/<player>``), and drops it from the address bar.
  Every route under a seat (its page, its event stream, its moves, anything else there)
  checks that seat's own token, in constant time: another seat's token or cookie, the
  spectator's, or none is a 403. One seat's person cannot read another's hand or move for it.
- Spectators: on loopback (the default) anyone on this machine may watch, as the public feed
  allows. Beyond loopback it serves only over TLS, and every spectator page and feed needs the
  spectator token (``spectator_url``), which opens no seat. The script and stylesheet
  (``/static/``) are the package's own files, the same for everyone: they need no token.
- A table whose spectator feed is withheld from the players (a duplicate series of a tournament
  with remote entrants: its tables play the same deals) is not watched nor replayed here either
  (403, with the reason) until every table of its series has closed, and the lobby offers it to
  no one: the page is a spectator's, whoever opens it, and may show no more than the players may
  see (``Feeds.withheld``). A seat sees its own table as always.
- Every request's ``Host`` must name this server (a page on another site cannot reach it by
  DNS rebinding), a move must carry ``X-Skat: 1`` (which a cross-site form cannot send), and
  every id in a path is checked as a subject token before it is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import re
import secrets
import ssl
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any, Final

import msgspec
from aiohttp import web
from multidict import CIMultiDict

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
WATCH_COOKIE: Final = "skat_watch"
"""The spectator token's cookie (beyond loopback): it opens the spectator pages, no seat."""
SEAT_COOKIE: Final = "skat_seat_"
"""A seat's cookie is this and the player's id: seat A's cookie is never read as seat B's."""
SEAT_PREFIXES: Final = ("/play/", "/events/play/")
"""Everything under these belongs to the seat named next in the path."""
TOKEN_BYTES: Final = 32
"""256 random bits per token."""
HEARTBEAT: Final = 15.0
"""Seconds between keep-alive comments on an idle event stream (proxies close silent ones)."""
LOBBY_EVERY: Final = 1.0
TOURNAMENT_REFRESH: Final = 3.0
MAX_COMMAND_BYTES: Final = 4096
_PAGES = ("index.html", "table.html", "tournament.html", "web.js", "t31.js", "web.css")


def _page(name: str) -> bytes:
    return resources.files("skatbus.web").joinpath("pages", name).read_bytes()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _local(path: str) -> str:
    """``path`` as a redirect's target if it is one of ours (plain segments), else ``/``: never
    ``//host`` or ``/\\host``, which a browser would take for another site."""
    return path if re.fullmatch(r"(/[A-Za-z0-9_.-]+)*/?", path) and not path.startswith("//") else "/"


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
        private: bool = False,
    ) -> None:
        if not is_loopback(host) and tls is None:
            raise ValueError("beyond loopback the page is served over TLS only: give a certificate")
        self.settings = settings
        self.host, self.port = host, port
        self.tls = tls
        self.names = names
        self.private = private or not is_loopback(host)
        """Every spectator page needs the spectator token: always beyond loopback, on loopback
        with ``private`` (where other local users must not watch)."""
        self.spectator_token = secrets.token_urlsafe(TOKEN_BYTES)
        self.seats = {check_token("player", p): Seat(p, s) for p, s in (seats or {}).items()}
        self.seat_tokens = {p: secrets.token_urlsafe(TOKEN_BYTES) for p in self.seats}
        """Each seat's own token: it opens that seat and nothing else."""
        self._nobody = secrets.token_urlsafe(TOKEN_BYTES)  # compared with for a seat that is not here
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
                web.get("/table/{table}", self._table_page),
                web.get("/tournament/{tid}", self._static("tournament.html")),
                web.get("/play/{player}", self._play_page),
                web.get("/static/web.js", self._static("web.js", "text/javascript")),
                web.get("/static/t31.js", self._static("t31.js", "text/javascript")),
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
        """The address that opens ``player``'s seat, with that seat's own token: for that person
        only (it opens no other seat, and no other seat's address opens this one)."""
        return f"{self.url}/play/{player}?token={self.seat_tokens[player]}"

    @property
    def spectator_url(self) -> str:
        """The lobby's address; beyond loopback it carries the spectator token (which opens no seat)."""
        return f"{self.url}/" + (f"?token={self.spectator_token}" if self.private else "")

    # --- guards ---------------------------------------------------------------------------

    def _hosts(self) -> set[str]:
        names = {self.host, "localhost", "127.0.0.1", "[::1]", *self.names}
        return {f"{n}:{self.port}" for n in names} | ({f"{n}" for n in names} if self.port in (80, 443) else set())

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = self._refusal(request) or await handler(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault(
            "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
        )
        return response

    def _refusal(self, request: web.Request) -> web.StreamResponse | None:
        """What answers a request instead of its handler (a refusal, or the redirect that moves
        the spectator token into its cookie); None: the handler may."""
        if request.host not in self._hosts():
            return web.Response(status=421, text="this server does not answer for that host name\n")
        seats = self._seats_of(request)
        if seats:  # a seat's: its own token only, whatever the route (an unknown one too)
            if all(self._opens_seat(request, player) for player in seats):
                return None
            return web.Response(status=403, text="open the address skat printed for this seat (it carries its token)\n")
        if request.path.startswith("/static/"):
            return None
        if "token" in request.query and request.method == "GET" and not request.path.startswith("/events/"):
            if self._matches(request.query["token"], self.spectator_token):  # once: into a cookie
                return self._see_other(_local(request.path), [(WATCH_COOKIE, self.spectator_token, "/")])
        if self.private and not self._opens_spectator(request):
            return web.Response(status=403, text="open the address skat printed (it carries the access token)\n")
        return None

    @staticmethod
    def _seats_of(request: web.Request) -> set[str]:
        """The seats a request is for: the route's ``player``, and the path's next part after a
        seat prefix (so that no route under a seat, nor an odd spelling of one, escapes the check)."""
        seats = {request.match_info["player"]} if "player" in request.match_info else set()
        for prefix in SEAT_PREFIXES:
            if request.path.startswith(prefix):
                seats.add(request.path[len(prefix) :].partition("/")[0])
        return seats

    @staticmethod
    def _matches(given: str, token: str) -> bool:
        return hmac.compare_digest(given.encode(), token.encode())

    def _opens_seat(self, request: web.Request, player: str) -> bool:
        """Whether the request carries ``player``'s own token (its cookie, or ``?token=``)."""
        token = self.seat_tokens.get(player, self._nobody)
        cookie = self._matches(request.cookies.get(SEAT_COOKIE + player, ""), token)
        query = self._matches(request.query.get("token", ""), token)
        return player in self.seat_tokens and (cookie or query)

    def _opens_spectator(self, request: web.Request) -> bool:
        cookie = self._matches(request.cookies.get(WATCH_COOKIE, ""), self.spectator_token)
        query = self._matches(request.query.get("token", ""), self.spectator_token)
        return cookie or query

    def _see_other(self, location: str, cookies: list[tuple[str, str, str]]) -> web.Response:
        """A redirect to ``location`` that sets each (name, value, path) cookie: HttpOnly,
        SameSite=Strict, Secure over TLS. (One name may be set for two paths, which aiohttp's
        ``set_cookie`` cannot: it keeps one cookie per name.)"""
        headers = CIMultiDict({"Location": location})
        for name, value, path in cookies:
            jar: SimpleCookie = SimpleCookie()
            jar[name] = value
            morsel = jar[name]
            morsel["path"] = path
            morsel["httponly"] = True
            morsel["samesite"] = "Strict"
            if self.tls is not None:
                morsel["secure"] = True
            headers.add("Set-Cookie", morsel.OutputString())
        return web.Response(status=303, headers=headers)

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

    async def _refuse_withheld(self, table: str) -> None:
        """Raise the 403 that refuses a spectator a withheld table (``Feeds.withheld``); a 503
        when the store cannot tell now (refused too: nothing is shown that may be withheld)."""
        assert self.feeds is not None
        try:
            reason = await self.feeds.withheld(table)
        except Exception as exc:  # the store away or slow: one line for the page, one in the log
            self.log.warning("web_withheld_unknown", table=table, error=repr(exc)[:200])
            raise web.HTTPServiceUnavailable(text="cannot read the store now; try again\n") from None
        if reason:
            raise web.HTTPForbidden(text=reason + "\n")

    async def _table_page(self, request: web.Request) -> web.StreamResponse:
        table = self._id(request, "table", "table")
        await self._refuse_withheld(table)
        return web.Response(body=self._pages["table.html"], content_type="text/html", charset="utf-8")

    async def _play_page(self, request: web.Request) -> web.StreamResponse:
        player = self._id(request, "player", "player")
        if player not in self.seats:
            raise web.HTTPNotFound(text=f"no seat for {player} here\n")
        if "token" in request.query:  # once: into the seat's cookie, and out of the address bar
            token = self.seat_tokens[player]
            name = SEAT_COOKIE + player
            return self._see_other(
                f"/play/{player}", [(name, token, f"/play/{player}"), (name, token, f"/events/play/{player}")]
            )
        return web.Response(body=self._pages["table.html"], content_type="text/html", charset="utf-8")

    async def _replay(self, request: web.Request) -> web.StreamResponse:
        """The HTML replay of a finished table (every card open: only once it is closed)."""
        from ..replay import TableLog
        from ..replay_html import render_html

        table = self._id(request, "table", "table")
        assert self.feeds is not None
        await self._refuse_withheld(table)
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
                if mailbox.ended:  # its last message: taken now, if it came while these were written
                    for data in mailbox.drain():
                        await response.write(b"data: " + data + b"\n\n")
                    break
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
        """A spectator's view of a table. A withheld one is refused; one not known to be withheld
        yet (not opened) is watched gated: should it open withheld, the stream ends there. Once
        it has opened withheld and is let in, its series has ended: nothing is left to withhold."""
        table = self._id(request, "table", "table")
        assert self.feeds is not None
        await self._refuse_withheld(table)
        mailbox = Mailbox()
        feed = await self.feeds.open(table)
        try:
            if feed.withheld:  # opened withheld since the check: ask again, now by its own log
                await self._refuse_withheld(table)
            feed.watch(mailbox, gated=not feed.withheld)
            return await self._stream(request, mailbox)
        finally:
            await self.feeds.close(table, mailbox)

    async def _tournament_events(self, request: web.Request) -> web.StreamResponse:
        tid = self._id(request, "tid", "tournament")
        assert self.feeds is not None
        feed = TournamentFeed(self.feeds, tid)
        try:
            await feed.start()
        except Exception as exc:  # the store away or slow: one line for the page, one in the log
            await feed.stop()
            self.log.warning("web_tournament_failed", tournament=tid, error=repr(exc)[:200])
            raise web.HTTPServiceUnavailable(text="cannot read the tournaments now; try again\n") from None
        if feed.state.config is None:  # no such tournament (or no tournament at all) in this store
            await feed.stop()
            raise web.HTTPNotFound(text=f"no tournament {tid} here\n")
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
