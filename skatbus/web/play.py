"""``skat play``: a table of one person and built-in bots, on a local stack, played in the browser.

``PlaySession`` is the whole of it, so that a test runs exactly what the command runs: a local
nats-server with users of its own (nobody else on this machine may connect to the stack, which
holds every hand), the services, the page (``WebServer``) with one seat for the person, the
bots as remote players of the table's game, and the table. The person plays through exactly
the protocol and permissions of a remote bot: the seat connects as the person's own user.

The game is kept: once the table closes (or when ``skat play`` stops before that), it is saved
as a run in the runs directory (``--out``, ``play_run``), listed and replayed like any
tournament's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import ssl
import sys
from pathlib import Path
from typing import Any

from protocol import registry
from protocol.subjects import log_subject
from protocol.wire import OpenTable
from services import logs
from services.connection import connect_patience

from .cli import _listen, _listen_arguments, _until_signal, people_auth
from .play_options import SKAT, PlaySpec, add_play_arguments, play_spec
from .play_run import run_id, save_run
from .server import WebServer


def register(sub: Any) -> None:
    play = sub.add_parser(
        "play",
        help="play Skat or Thirty-one in the browser against bots (starts a local stack, a table and the page)",
        description="Start a local nats-server and the services, open a table with you and the bots, and serve the "
        "page you play it on. You play through exactly the protocol and permissions of a remote bot. "
        "Example: skat play --game thirty-one --vs heuristic,heuristic --coins 2",
    )
    add_play_arguments(play)
    play.add_argument(
        "--auth",
        default=None,
        metavar="DIR",
        help="run the stack with the users `skat auth` wrote there (you play as DIR/<PLAYER>.nk)",
    )
    play.add_argument(
        "--out",
        default="runs",
        metavar="DIR",
        help="where the game is saved as a run, as skat tournament saves its runs (default: runs)",
    )
    _listen_arguments(play)
    play.set_defaults(handler=play_main)


def describe(spec: PlaySpec) -> str:
    """The table in a few words, for the person."""
    rules = spec.rules
    if spec.game == SKAT:
        return f"{rules.deals} deals, {rules.turn_seconds:g} s a move"
    return f"Thirty-one, {rules.coins} coins each, {rules.turn_seconds:g} s a move"


class PlaySession:
    """One ``skat play`` table: the stack, the page, the bots and the table, started and stopped
    together (``start``, ``stop``); ``closed`` is set once the table is closed."""

    def __init__(
        self,
        spec: PlaySpec,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
        auth_dir: str | None = None,
        table: str | None = None,
        seed: str | None = None,
        runs: Path | None = None,
    ) -> None:
        self.spec = spec
        self.host, self.port, self.tls = host, port, tls
        self.auth_dir = auth_dir
        """A ``skat auth`` directory holding the person's user; None: one of our own, removed at the end."""
        self.table = table or run_id(secrets.token_hex(4))
        self.seed = seed or secrets.token_hex(16)
        self.runs = runs
        """Where the table is saved as a run (``save``); None: not saved."""
        self.saved: Path | None = None
        self.closed = asyncio.Event()
        self.stack: Any = None
        self.web: WebServer | None = None
        self.nc: Any = None
        self.bots: list[Any] = []
        self._own_auth: str | None = None

    @property
    def request(self) -> OpenTable:
        spec = self.spec
        return OpenTable(table=self.table, players=spec.players, rules=spec.rules, game=spec.game, seed=self.seed)

    async def start(self, patience: float | None = None) -> str:
        """Start everything and open the table; the address of the person's seat (its token:
        for that person only)."""
        from services.connection import open_connection
        from services.main import LocalStack

        from ..bots import make_bot
        from ..player import RemotePlayer
        from ..tournament import open_table

        spec = self.spec
        if self.auth_dir is None:
            self._own_auth = await asyncio.to_thread(people_auth, [spec.player])
        self.stack = LocalStack(auth_dir=self.auth_dir or self._own_auth)
        await self.stack.__aenter__()
        assert self.stack.auth is not None
        seat = self.stack.auth.settings(spec.player, self.stack.server.url)
        self.web = WebServer(self.stack.settings, self.host, self.port, seats={spec.player: seat}, tls=self.tls)
        await self.web.start(patience)
        self.nc = await open_connection(self.stack.settings, patience=10.0, name="skat-play")
        for pid, bot in zip(spec.ids, spec.bots):
            player = RemotePlayer(self.nc, pid, make_bot(bot, f"{self.seed}/{pid}", spec.game))
            self.bots.append(player)
            await player.start()

        async def on_closed(msg: Any) -> None:
            self.closed.set()

        await self.nc.subscribe(log_subject(self.table, "table_closed"), cb=on_closed)
        reply = await open_table(self.nc, self.request)
        if not reply.ok:
            raise RuntimeError(f"cannot open {self.table}: {reply.reason}")
        return self.web.seat_url(spec.player)

    async def log(self) -> list[Any]:
        """The table's events so far."""
        from services.store import EventStore

        return [s.event for s in await EventStore(self.nc).read(self.table) if s.event is not None]

    async def save(self) -> Path | None:
        """Save the table as a run in ``runs`` (once; again only if it has moved on since),
        its directory; None when there is nothing to save or nowhere to save it."""
        if self.runs is None or self.nc is None:
            return None
        log = await self.log()
        if not log:
            return None
        self.saved = await asyncio.to_thread(save_run, self.spec, self.table, self.seed, log, self.runs)
        return self.saved

    async def stop(self) -> None:
        for p in self.bots:
            with contextlib.suppress(Exception):
                await p.stop()
        if self.nc is not None:
            with contextlib.suppress(Exception):
                await self.nc.close()
        if self.web is not None:
            await self.web.stop()
        if self.stack is not None:
            await self.stack.__aexit__(None, None, None)
        if self._own_auth is not None:
            shutil.rmtree(self._own_auth, ignore_errors=True)


def places_text(state: Any) -> str:
    """``1. ann, 2. bob and cyd`` from a closed table's places (competition ranking)."""
    places = registry.state_game(state).standings(state)
    by_place: dict[int, list[str]] = {}
    for seat, place in enumerate(places):
        by_place.setdefault(place, []).append(state.players[seat])
    return ", ".join(f"{place}. {' and '.join(names)}" for place, names in sorted(by_place.items()))


def play_main(args: argparse.Namespace) -> int:
    """``skat play``: a local stack, a table of you and the bots, and the page to play it on."""
    host, port, tls = _listen(args)
    spec = play_spec(args)
    if args.auth:
        from services.auth import load_auth

        load_auth(args.auth).seed_file(spec.player)  # a player the server would refuse: one line, now
    logs.configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))
    session = PlaySession(spec, host, port, tls, auth_dir=args.auth, runs=Path(args.out))

    async def work(stop: asyncio.Event) -> int:
        url = await session.start(connect_patience(args.connect_timeout))
        assert session.web is not None
        others = ", ".join(spec.ids)
        print(f"Table {session.table}: {spec.player} (you, seat {spec.seat}) against {others}; {describe(spec)}.")
        print(f"Open this in your browser to play (it is yours alone):\n  {url}")
        print(f"(watch all tables: {session.web.spectator_url} ; Ctrl-C stops everything)", flush=True)
        closed_wait = asyncio.ensure_future(session.closed.wait())
        stop_wait = asyncio.ensure_future(stop.wait())
        await asyncio.wait({closed_wait, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        closed_wait.cancel()
        stop_wait.cancel()
        if session.closed.is_set():
            if spec.game != SKAT:
                with contextlib.suppress(Exception):
                    print(f"The game is over: {places_text(registry.fold(await session.log()))}.", flush=True)
            replay = f"{session.web.url}/replay/{session.table}"
            print(f"The table is closed. Replay it: {replay} (until you stop skat play)", flush=True)
            await saved()
            await stop.wait()
        return 0

    async def saved() -> None:
        try:
            where = await session.save()
        except Exception as exc:  # a full disk, a directory we may not write: said, not a traceback
            print(f"skat play: the game could not be saved in {args.out}: {exc}", file=sys.stderr, flush=True)
            return
        if where is not None:
            print(f"Saved as a run: {where} (skat replay {where / 'archive.jsonl'})", flush=True)

    async def cleanup() -> None:
        if session.saved is None:  # stopped before the table closed: what was played is kept
            await saved()
        await session.stop()

    code = _until_signal(work, cleanup)
    print("skat play: stopped", file=sys.stderr, flush=True)
    return code
