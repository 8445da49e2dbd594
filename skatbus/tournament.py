"""``skat tournament``: many tables in parallel through the services, with live progress,
standings with confidence intervals, and the results on disk.

The tournament's own log lives in the ``SKATTOUR`` stream (``skat.tournament.<id>``); the
tables' logs are ordinary table logs. ``--resume ID`` folds the tournament log, continues the
tables that are open and opens the ones that are not: nothing is lost or played twice, because
every table is itself a deterministic, event-sourced log.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import dataclasses
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from nats.js.errors import APIError, NotFoundError

from protocol import fairness, seating
from protocol.archive import encode_line
from protocol.clocks import stamps_of
from protocol.events import Event, TableClosed, TablePaused, TableResumed
from protocol.series import crosstable, draw_series, series_standings
from protocol.subjects import (
    ADMIN_OPEN,
    ADMIN_PAUSE,
    feed_subject,
    hello_subject,
    is_inbox,
    parse_command_subject,
    player_inbox,
)
from protocol.tournament import (
    PLACE_POINTS,
    FaultsCounted,
    Forfeit,
    PlaceStanding,
    Standing,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    fold_tournament,
    forfeits,
    ranked_by_places,
    standings_of,
    table_feed,
    table_finished,
)
from protocol.wire import OpenTable, PauseTable, Reply, decode, encode
from services import logs
from services.store import (
    WRONG_LAST_SEQUENCE,
    EventStore,
    cluster_replicas,
    ensure_stream,
    patiently,
)

from .bots import make_bot
from .errors import UsageError
from .nonces import NonceDesk
from .player import RemotePlayer
from .progress import Watch as _Watch
from .progress import game_progress as game_progress  # where callers import it
from .ratings import write_ratings
from .signing import public_key_of, sign_run
from .standings_text import format_place_standings as format_place_standings  # where callers import them
from .standings_text import format_standings as format_standings
from .think_times import think_times_json
from .tournament_end import announce_finished
from .tournament_file import write_tournament_log

STREAM = "SKATTOUR"


def runner_subject(tid: str) -> str:
    """Answered by a tournament's running runner: the one process that plays its built-in bots."""
    return f"skat.runner.{tid}"


class TournamentRefused(UsageError, ValueError):
    """A tournament that must not start: its id is taken, its results exist, nothing by that
    id can be resumed. One line for the user (``skat`` exits 2 with it)."""


_DECODER = msgspec.msgpack.Decoder(TournamentEvent)
_ENCODER = msgspec.msgpack.Encoder()


class TournamentLog:
    """Append and read one tournament's events (single writer: the runner)."""

    def __init__(self, nc: Client, patience: float = 30.0) -> None:
        self.nc = nc
        self.js = nc.jetstream(timeout=2.0)
        self.last_seq = 0
        self.count = 0
        """Events in the tournament's log (the next one's position, in its message id)."""
        self.patience = patience
        self._appending = asyncio.Lock()
        """One append at a time: the runner's tasks share the log (``FaultLedger`` appends
        beside the main task), and each append counts on the position the last one left."""

    async def ensure_stream(self) -> None:
        """Create the tournament stream if it is missing, with as many replicas as the event
        store's on this cluster (``cluster_replicas``: learned from the server, so a runner
        started without ``SKAT_REPLICAS`` does not keep the results on one node only)."""
        config = StreamConfig(
            name=STREAM,
            subjects=["skat.tournament.>"],
            storage=StorageType.FILE,
            discard=DiscardPolicy.NEW,
            max_bytes=1 << 28,
            allow_direct=True,
            num_replicas=cluster_replicas(self.nc),
            duplicate_window=120.0,
        )
        await ensure_stream(self.js, config, self.patience)

    async def read(self, tid: str) -> list[TournamentEvent]:
        """The tournament's events, read again while the stream is briefly away (a leader
        election after a node was lost: ``--resume`` must not fail on it)."""
        return await patiently(lambda: self._read(tid), self.patience, "reading the tournament log")

    async def _read(self, tid: str) -> list[TournamentEvent]:
        out: list[TournamentEvent] = []
        try:
            info = await self.js.stream_info(STREAM, subjects_filter=f"skat.tournament.{tid}")
        except NotFoundError:
            return out
        expected = (info.state.subjects or {}).get(f"skat.tournament.{tid}", 0)
        if not expected:
            return out
        sub = await self.js.subscribe(f"skat.tournament.{tid}", ordered_consumer=True)
        try:
            while len(out) < expected:
                msg = await sub.next_msg(timeout=5.0)
                out.append(_DECODER.decode(msg.data))
                self.last_seq = msg.metadata.sequence.stream
                self.count = len(out)
        finally:
            await sub.unsubscribe()
        return out

    async def append(self, tid: str, event: TournamentEvent) -> None:
        """Append after the last event we know, retrying through elections and restarts: the
        message id (``<tid>:<position>``) makes a retry of an append that landed a no-op.

        A duplicate answer for another event means our position is stale (an earlier append
        landed although every answer to it was lost, and it raised): the position is read again
        from the log and the event appended after it, so it is never silently dropped."""
        async with self._appending:
            await self._append(tid, event)

    async def _append(self, tid: str, event: TournamentEvent) -> None:
        data = _ENCODER.encode(event)
        for _ in range(3):
            headers = {
                "Nats-Expected-Last-Subject-Sequence": str(self.last_seq),
                "Nats-Msg-Id": f"{tid}:{self.count}",
            }

            async def attempt(headers: dict[str, str] = headers) -> tuple[int, bool]:
                try:
                    ack = await self.js.publish(f"skat.tournament.{tid}", data, headers=dict(headers))
                except APIError as exc:
                    if exc.err_code in WRONG_LAST_SEQUENCE:
                        landed = await self._landed(tid, headers["Nats-Msg-Id"])
                        if landed is not None:  # an earlier attempt of ours was stored after all
                            return landed, True
                        raise RuntimeError(
                            f"tournament {tid} was changed by someone else: is it running twice?"
                        ) from exc
                    raise
                return int(ack.seq), bool(ack.duplicate)

            seq, duplicate = await patiently(attempt, self.patience, "the tournament log")
            if duplicate and not await self._holds(seq, data):
                await self.read(tid)  # our position was stale: where the log really ends
                continue
            self.last_seq = seq
            self.count += 1
            return
        raise RuntimeError(f"tournament {tid}: cannot find where its log ends")

    async def _holds(self, seq: int, data: bytes) -> bool:
        """Whether the stream's message ``seq`` is ``data`` (our own event, stored before)."""
        stored = await patiently(lambda: self.js.get_msg(STREAM, seq), self.patience, "the tournament log")
        return bytes(stored.data or b"") == data

    async def _landed(self, tid: str, my_id: str) -> int | None:
        """The sequence of the tournament's last event if it is the one with ``my_id``."""
        with contextlib.suppress(Exception):
            last = await patiently(
                lambda: self.js.get_last_msg(STREAM, f"skat.tournament.{tid}"), self.patience, "the tournament log"
            )
            if (last.headers or {}).get("Nats-Msg-Id") == my_id:
                return int(last.seq or 0)
        return None


class Progress:
    """A one-line progress bar on a terminal (deals done, deals/s, ETA, time-outs, the
    leaders), cut to the terminal's width; plain lines every 10 % otherwise, so logs and CI
    output stay readable.

    The rate counts only deals played since this process started watching (``already`` were
    done before: a resumed tournament), so it and the ETA mean what they say."""

    leader_label = "SF"
    """What the leaders' figures are (Seeger-Fabian points so far, ranked as the standings)."""
    leader_legend = "SF: the leaders so far, by Seeger-Fabian points"
    """The label spelled out, once, before the first line that shows it."""

    def __init__(self, total: int, out: TextIO = sys.stdout, already: float = 0) -> None:
        self.total, self.out = total, out
        self.done: float = already
        self.already = already
        self.started = time.monotonic()
        self.tty = out.isatty()
        self._last_tenth = -1
        self.leader = ""
        self.timeouts = ""
        self.paused = ""
        """Which tables are paused (``PAUSED ...``), empty when none is."""
        self._printed_paused = ""
        self._legend_said = False

    def update(self, done: float, leader: str = "", timeouts: str = "", paused: str | None = None) -> None:
        """Show the progress; ``paused`` (None: as before) says which tables are paused."""
        self.done, self.leader, self.timeouts = done, leader or self.leader, timeouts or self.timeouts
        if paused is not None:
            self.paused = paused
        if self.leader and not self._legend_said:
            self._legend_said = True
            legend = f"({self.leader_legend})"
            if self.tty:  # over the bar drawn so far, which is drawn again below it
                legend = "\r" + legend.ljust(shutil.get_terminal_size((80, 24)).columns - 1)
            print(legend, file=self.out)
        if self.tty:
            width = shutil.get_terminal_size((80, 24)).columns - 1  # the last column would wrap
            self.out.write("\r" + self.line(width).ljust(width))
            self.out.flush()
            return
        tenth = int(10 * done // max(self.total, 1))
        # A pause (or its end) is news even when no deal moves: a log shows it at once.
        if tenth != self._last_tenth or self.paused != self._printed_paused:
            self._last_tenth, self._printed_paused = tenth, self.paused
            print(self.line(), file=self.out, flush=True)

    def rate(self) -> float:
        """Units of ``done`` per second since this process started watching."""
        elapsed = time.monotonic() - self.started
        return (self.done - self.already) / elapsed if elapsed > 0 else 0.0

    def counted(self) -> str:
        """How far it is, the first field of the line."""
        return f"{self.done:.0f}/{self.total} deals"

    def speed(self) -> str:
        return f"{self.rate():.1f} deals/s"

    def line(self, width: int | None = None) -> str:
        """The progress as one line of at most ``width`` characters: deals done first, then
        which tables are paused, the ETA, the rate, time-outs and the leaders as far as they
        fit, the bar last."""
        rate = self.rate()
        eta = f"ETA {(self.total - self.done) / rate:.0f} s" if rate > 0 and not self.paused else "ETA ?"
        fields = [self.counted(), *([self.paused] if self.paused else []), eta, self.speed()]
        if self.timeouts:
            fields.append(f"time-outs: {self.timeouts}")
        if self.leader:
            fields.append(f"{self.leader_label}: {self.leader}")
        if width is None:
            return "  ".join(fields)
        line = fields[0][:width]
        for field in fields[1:]:
            if len(line) + 2 + len(field) <= width:
                line += "  " + field
            elif field.startswith(self.leader_label) and width - len(line) > 20:
                line += "  " + field[: width - len(line) - 3].rsplit("  ", 1)[0]  # whole names only
        room = width - len(line) - 3
        if room >= 10:
            bar = min(30, room)
            filled = int(bar * self.done / max(self.total, 1))
            line = f"[{'#' * filled}{'.' * (bar - filled)}] {line}"
        return line

    def finish(self) -> None:
        if self.tty:
            self.out.write("\n")


class TableProgress(Progress):
    """The progress of tables whose length nobody knows in advance (Thirty-one: played to the
    last survivor): ``done`` counts tables, a running one by how far its game has come
    (``game_progress``), so the bar and the ETA move with every deal; the deals played and
    their rate are shown beside it. The leaders are by place points per table so far (every
    table's places as they would be if it ended now: T38's ranking by coins)."""

    leader_label = "place pts/table"
    leader_legend = "place pts/table: the leaders so far, by place points per table (finished and running ones)"

    def __init__(self, tables: int, out: TextIO = sys.stdout, already: float = 0, deals: int = 0) -> None:
        super().__init__(tables, out, already)
        self.deals = deals
        self.deals_before = deals

    def counted(self) -> str:
        return f"{self.done:.1f}/{self.total} tables ({self.deals} deals)"

    def speed(self) -> str:
        elapsed = time.monotonic() - self.started
        return f"{(self.deals - self.deals_before) / elapsed if elapsed > 0 else 0.0:.1f} deals/s"


class FaultLedger:
    """Keeps the faults of the runner's bots (``RemotePlayer.faults``) in the tournament's log
    (``FaultsCounted``: what was counted since the last one), so that a resumed tournament's
    results count the faults of every run, not only the last one's: its results are rebuilt
    from the log, and a fault counted in a runner's memory dies with it. Written every
    ``EVERY`` seconds while the tables play, once more when the bots stop (also on Ctrl-C),
    and before the results are written: a runner killed outright loses the faults of its last
    seconds at most."""

    EVERY = 5.0

    def __init__(self, tlog: TournamentLog, state: TournamentState, players: Sequence[RemotePlayer]) -> None:
        assert state.config is not None
        self.tlog, self.state, self.tid = tlog, state, state.config.id
        self.players = list(players)
        self.recorded = {p.player: p.faults for p in self.players}
        """What of each bot's count (this run's) the log holds already."""
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._recording = asyncio.Lock()

    async def record(self) -> None:
        """Append what was counted since the last time, if anything (one at a time: each
        counts on what the last one recorded)."""
        async with self._recording:
            counts = {p.player: p.faults for p in self.players}
            new = {player: n - self.recorded.get(player, 0) for player, n in counts.items()}
            new = {player: n for player, n in new.items() if n > 0}
            if not new:
                return
            event = FaultsCounted(faults=new)
            await self.tlog.append(self.tid, event)
            self.state.apply(event)
            self.recorded.update({player: counts[player] for player in new})

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._every())

    async def _every(self) -> None:
        """Every ``EVERY`` seconds until ``stop``. Never cancelled: an append cut off after it
        landed would be appended again by the next ``record``."""
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.EVERY)
            if self._stop.is_set():
                return
            try:
                await self.record()
            except Exception as exc:  # the log briefly away: counted still, written next time
                logs.get(command="tournament").warning("faults_not_recorded", error=repr(exc)[:200])

    async def stop(self) -> None:
        """Stop writing every few seconds (an append under way finishes), and write what is
        left (best effort: the results write it again, ``record``, if this fails)."""
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with contextlib.suppress(Exception):
            await self.record()

    def faults(self) -> dict[str, int]:
        """Per bot the runner plays, the turns it failed over every run (from the log)."""
        return {p.player: self.state.faults.get(p.player, 0) for p in self.players}


async def run_tournament(
    nc: Client,
    config: TournamentConfig | None = None,
    resume: str | None = None,
    out_dir: str | Path = "runs",
    out: TextIO = sys.stdout,
    request_timeout: float = 1.5,
    on_table_open: Callable[[TableSpec], None] | None = None,
    on_created: Callable[[TournamentConfig], None] | None = None,
    sign_key: bytes | None = None,
) -> dict[str, Any]:
    """Run (or resume) a tournament to its end; returns the results (also written to disk).

    A new tournament is refused (``TournamentRefused``) when its id is in the store already or
    its results are on disk: a result is never written over. ``on_created`` is called once
    the tournament is in the store, i.e. from when ``--resume`` can continue it. The bots are
    stopped and the subscriptions dropped however this ends (a Ctrl-C cancels it: the caller
    then pauses the open tables, ``set_paused``; a resume resumes them before the bots say
    hello). The remote entrants are listened to (``Listener``) so that the end can say why one
    never answered."""
    tlog = TournamentLog(nc)
    await tlog.ensure_stream()
    store = EventStore(nc)
    await store.ensure_stream()
    if resume:
        state = await _resumable(tlog, resume, Path(out_dir))
        assert state.config is not None
        config = state.config
    assert config is not None
    # The bots are made before a new tournament is stored: an in-process class whose
    # constructor raises (skatbus.bot_loader.BotLoadError) leaves no tournament half begun.
    players = [
        RemotePlayer(
            nc,
            entrant,
            make_bot(bot, bot_seed(config, entrant), config.game),
            request_timeout=request_timeout,
            tournament=config.id,  # the same names play in every tournament: only our tables
        )
        for entrant, bot in config.bots.items()
    ]
    if not resume:
        state = await _create(tlog, config, Path(out_dir))
    if on_created is not None:
        on_created(config)

    async def present(msg: Msg) -> None:  # ``skat resume`` asks whether the bots' runner is here
        if is_inbox(msg.reply):  # an inbox only: never a subject of the log's, whoever asks
            with contextlib.suppress(Exception):
                await nc.publish(msg.reply, b"{}")

    ledger = FaultLedger(tlog, state, players)
    subs = [await nc.subscribe(runner_subject(config.id), cb=present)]
    remote = [e for e in config.entrants if e not in config.bots]
    listener = Listener(nc, remote, [t.table for t in state.tables])
    desk = None
    if config.fair:

        async def append(event: TournamentEvent) -> None:
            await tlog.append(config.id, event)

        desk = NonceDesk(nc, state, remote, append, config.nonce_seconds)
    try:
        await listener.start()
        if desk is not None:
            await desk.start()
            if desk.open:
                await desk.collect(_nonce_ticker(out) if remote else None)
        for p in players:
            await p.start()
        ledger.start()
        await nc.flush()
        if config.many:
            await _play_series(nc, store, tlog, config, state, players, listener, out, on_table_open)
        else:
            await _play_tables(nc, store, config, state, state.pending, players, out, on_table_open)
    finally:
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        if desk is not None:
            await desk.stop()
        await listener.stop()
        for p in players:
            await p.stop()
        await ledger.stop()  # after the bots: nothing is counted any more
    results = await _finish(
        tlog,
        store,
        config,
        state,
        players,
        Path(out_dir),
        listener.heard,
        resumed=bool(resume),
        sign_key=sign_key,
        ledger=ledger,
    )
    await announce_finished(nc, config.id, config.game, remote)  # the remote bots may stop now
    return results


def bot_seed(config: TournamentConfig, entrant: str) -> str:
    """The seed of a built-in bot's own random choices: under the fair scheme a hash of the server
    seed (a bot's moves, which every player sees, must say nothing about it)."""
    return fairness.bot_seed(config.seed, entrant) if config.fair else f"{config.seed}/{entrant}"


def _nonce_ticker(out: TextIO) -> Callable[[int, int, float], None]:
    """Says once a second how many remote entrants gave their nonces, while they may."""

    def tick(given: int, remote: int, left: float) -> None:
        print(f"\rNonces: {given}/{remote} remote entrants, {left:.0f} s left   ", end="", file=out, flush=True)
        if given >= remote or left <= 0:
            print(file=out, flush=True)

    return tick


async def _play_tables(
    nc: Client,
    store: EventStore,
    config: TournamentConfig,
    state: TournamentState,
    specs: Sequence[TableSpec],
    players: list[RemotePlayer],
    out: TextIO,
    on_table_open: Callable[[TableSpec], None] | None,
) -> None:
    """Open ``specs`` (the ones not yet finished) and watch them until every one is closed."""
    watch = _Watch(state, specs)
    feed = table_feed(config)
    subs = [await nc.subscribe(feed_subject(t, feed), cb=watch.on_public) for t in watch.pending]
    try:
        await _play(nc, store, config, state, watch, players, out, on_table_open)
    finally:
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()


async def _play_series(
    nc: Client,
    store: EventStore,
    tlog: TournamentLog,
    config: TournamentConfig,
    state: TournamentState,
    players: list[RemotePlayer],
    listener: Listener,
    out: TextIO,
    on_table_open: Callable[[TableSpec], None] | None,
) -> None:
    """A tournament of many entrants: the series one after another, each drawn when it is due
    (``protocol.series.draw_series``: Swiss, or anew without entrants that forfeited), and each
    series' results recorded before the next is drawn."""
    for number in range(1, config.series + 1):
        logs = await _finished_logs(store, state)
        tables = state.series_of(number)
        started = any(t.table in state.finished for t in tables) or any([await store.read(t.table) for t in tables])
        drawn = draw_series(config, state, number, logs, started)
        if drawn is not None:
            await tlog.append(config.id, drawn)
            state.apply(drawn)
            tables = state.series_of(number)
            listener.tables.update(t.table for t in tables)
            print(f"Series {number}: {drawn.reason}.", file=out, flush=True)
        pending = [t for t in tables if t.table not in state.finished]
        if not pending:
            continue
        sizes = "+".join(str(len(t.players)) for t in tables)
        print(f"Series {number}/{config.series}: {len(tables)} tables ({sizes} players).", file=out, flush=True)
        await _play_tables(nc, store, config, state, pending, players, out, on_table_open)
        await _record_finished(tlog, store, state, pending)


async def _finished_logs(store: EventStore, state: TournamentState) -> dict[str, list[Event]]:
    return {t: await _table_log(store, t) for t in state.finished}


async def _table_log(store: EventStore, table: str) -> list[Event]:
    return [s.event for s in await store.read(table) if isinstance(s.event, Event)]


async def _table_log_timed(store: EventStore, table: str) -> tuple[list[Event], list[str]]:
    """``_table_log`` and, for each event, the server's stamp of when it was stored."""
    stored = [s for s in await store.read(table) if isinstance(s.event, Event)]
    return [s.event for s in stored], [s.stamp for s in stored]  # type: ignore[misc]


async def _record_finished(
    tlog: TournamentLog, store: EventStore, state: TournamentState, specs: Sequence[TableSpec]
) -> None:
    """Each of ``specs`` that is not recorded yet gets its ``TableFinished`` in the log."""
    assert state.config is not None
    for spec in specs:
        if spec.table in state.finished:
            continue
        # Skat: the scores' sums; a game ranked by places: the pure engine's fold of the log.
        finished = await asyncio.to_thread(table_finished, await _table_log(store, spec.table))
        await tlog.append(state.config.id, finished)
        state.apply(finished)


async def _resumable(tlog: TournamentLog, tid: str, out_dir: Path) -> TournamentState:
    """The state of the tournament ``tid`` to resume; refused if there is none, or if it
    finished and its results are written."""
    state = fold_tournament(await tlog.read(tid))
    if state.config is None:
        raise TournamentRefused(f"no tournament {tid!r} in this store to resume")
    if state.done and results_written(out_dir / tid):
        raise TournamentRefused(f"tournament {tid} has finished: its results are in {out_dir / tid / 'results.json'}")
    return state


async def _create(tlog: TournamentLog, config: TournamentConfig, out_dir: Path) -> TournamentState:
    """Put a new tournament in the store; refused if its id is taken there or on disk."""
    from protocol.tournament import schedule

    if (out_dir / config.id / "results.json").exists():
        raise TournamentRefused(f"{out_dir / config.id / 'results.json'} exists: choose another --id")
    if await tlog.read(config.id):
        raise TournamentRefused(
            f"tournament {config.id} exists already in this store: choose another --id, or --resume {config.id}"
        )
    state = TournamentState()
    created = TournamentCreated(config=config, tables=schedule(config))
    await tlog.append(config.id, created)
    state.apply(created)
    return state


async def _play(
    nc: Client,
    store: EventStore,
    config: TournamentConfig,
    state: TournamentState,
    watch: _Watch,
    players: list[RemotePlayer],
    out: TextIO,
    on_table_open: Callable[[TableSpec], None] | None,
) -> None:
    """Open the tables not yet closed and watch them until every one is."""
    # Tables that finished while nobody watched (a resumed tournament), the deals done so far,
    # and the tables left paused (by an interrupted run, or the operator).
    paused_before: list[str] = []
    pending = [t for t in watch.specs if t.table in watch.pending]
    for spec in pending:
        stored = await store.read(spec.table)
        watch.read_back(spec.table, stored)
        if stored and isinstance(stored[-1].event, TableClosed):
            watch.table_closed(spec.table)
        elif is_paused(s.event for s in stored):
            paused_before.append(spec.table)
    # The finished tables too (earlier series, or before a resume): the leaders are the
    # standings of every deal so far, as the final table's (``skatbus.progress``).
    for table in list(state.finished):
        watch.read_back(table, await store.read(table))
    if watch.closed >= watch.pending:
        watch.all_closed.set()
    # The clock starts as the tables open; deals played before (a resume) do not count in the rate.
    progress: Progress
    if watch.by_places:
        total = len(watch.specs)
        progress = TableProgress(total, out, already=watch.progress(), deals=watch.deals_done())
    else:
        total = sum(config.table_rules(len(t.players)).deals for t in watch.specs)
        progress = Progress(total, out, already=watch.deals_done())
    for spec in pending:
        if spec.table in watch.closed:
            continue
        request = OpenTable(
            table=spec.table,
            players=spec.players,
            rules=config.table_rules(len(spec.players)),
            game=config.game,
            seed=state.table_seed(spec),
            formats={p: f for p, f in config.formats.items() if p in spec.players},
            feed=table_feed(config),  # type: ignore[arg-type]
        )
        reply: Reply = await open_table(nc, request)
        if not reply.ok and reply.code != "exists":
            raise RuntimeError(f"cannot open {spec.table}: {reply.reason}")
        if on_table_open is not None:
            on_table_open(spec)
    if paused_before:  # before the bots say hello: a paused table takes no command
        replies = await set_paused(nc, paused_before, paused=False, patience=30.0)
        resumed = [t for t, r in replies.items() if r is not None and r.ok]
        watch.paused.update(t for t in paused_before if t not in resumed)
        left = len(paused_before) - len(resumed)
        print(
            f"Resumed {len(resumed)} paused table{'s' * (len(resumed) != 1)}"
            + (f"; {left} did not resume (skat resume TABLE)" if left else "")
            + ".",
            file=out,
            flush=True,
        )
    for p in players:  # a resumed tournament's bots: ask for the prompts they missed
        await p.hello()
    ticks = 0

    def done() -> float:
        if isinstance(progress, TableProgress):
            progress.deals = watch.deals_done()
            return watch.progress()
        return watch.deals_done()

    while not watch.all_closed.is_set():
        progress.update(done(), watch.leaders(), watch.timeouts_line(), watch.paused_line())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watch.all_closed.wait(), 0.25)
        ticks += 1
        if ticks % 20 == 0:  # the public feed is best effort: every 5 s, ask the store too
            for table in watch.pending - watch.closed:
                if await store.has_event(table, "table_closed"):
                    watch.table_closed(table)
            for table in watch.to_read():  # a gap the feed left: the store has what it dropped
                watch.read_back(table, await store.read(table))
    for table in sorted(watch.pending):  # read back whole: the last line is the final table's
        watch.read_back(table, await store.read(table))
    progress.update(done(), watch.leaders(), watch.timeouts_line(), "")
    progress.finish()


async def _finish(
    tlog: TournamentLog,
    store: EventStore,
    config: TournamentConfig,
    state: TournamentState,
    players: list[RemotePlayer],
    out_dir: Path,
    heard: dict[str, Heard] | None = None,
    resumed: bool = False,
    sign_key: bytes | None = None,
    ledger: FaultLedger | None = None,
) -> dict[str, Any]:
    """Record every table's result in the tournament's log and write the results (signed with
    ``sign_key``, an NKey seed, when given). The bots' faults are the log's (``ledger``: every
    run's, a resumed tournament's too)."""
    tid = config.id
    if ledger is not None:
        await ledger.record()
    timed = {spec.table: await _table_log_timed(store, spec.table) for spec in state.tables}
    table_logs = {table: log for table, (log, _) in timed.items()}
    times = {table: stamps for table, (_, stamps) in timed.items()}
    await _record_finished(tlog, store, state, state.pending)
    if not state.done:
        await tlog.append(tid, TournamentFinished(tables=len(state.tables)))
        state.apply(TournamentFinished(tables=len(state.tables)))
    events = await tlog.read(tid)
    refused = {p.player: len(p.rejections) for p in players}
    faults = ledger.faults() if ledger is not None else {p.player: p.faults for p in players}
    # Files are written off the event loop (an archive can be large); bots may still be running.
    results = await asyncio.to_thread(
        write_results,
        config,
        state,
        table_logs,
        out_dir / tid,
        refused,
        heard,
        resumed,
        events,
        sign_key,
        faults,
        times,
    )
    # Ratings across every tournament in out_dir, rebuilt from the archives with this one in.
    results["files"]["ratings"] = str(await asyncio.to_thread(write_ratings, out_dir))
    logs.get(command="tournament").info("tournament_finished", tournament=tid, tables=len(state.tables))
    return results


async def open_table(nc: Client, request: OpenTable, patience: float = 60.0) -> Reply:
    """Ask the dealer to open a table, asking again while nobody answers (a restarting dealer
    or broker): opening is idempotent, a second answer is "exists"."""

    async def attempt() -> Reply:
        return decode((await nc.request(ADMIN_OPEN, encode(request), timeout=2.0)).data, Reply)  # type: ignore[no-any-return]

    return await patiently(attempt, patience, "opening a table (the dealer)")


# --- pausing -----------------------------------------------------------------------------------


def is_paused(events: Iterable[Event | Any]) -> bool:
    """Whether a table's log (so far) leaves it paused: its last pause has not been resumed."""
    paused = False
    for event in events:
        if isinstance(event, TablePaused):
            paused = True
        elif isinstance(event, TableResumed | TableClosed):
            paused = False
    return paused


async def pause_table(
    nc: Client, table: str, paused: bool = True, reason: str = "", timeout: float = 2.0, patience: float = 0.0
) -> Reply | None:
    """Ask the dealer to pause (or resume) ``table`` (``skat.admin.pause``); its ``Reply``, or
    None if no dealer answered. Asked again while it answers "busy", not at all, or is not
    there (a dealer restarting), for up to ``patience`` seconds."""
    data = encode(PauseTable(table=table, paused=paused, reason=reason[:200]))
    loop = asyncio.get_running_loop()
    end = loop.time() + patience
    while True:
        reply: Reply | None = None
        try:
            reply = decode((await nc.request(ADMIN_PAUSE, data, timeout=timeout)).data, Reply)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return Reply(ok=False, code="malformed", reason=f"an answer that is not a Reply: {exc}"[:200])
        except (NatsError, TimeoutError, OSError):
            pass  # no dealer, no answer in time, the connection in trouble: asked again if there is time
        if reply is not None and reply.code != "busy":
            return reply
        if loop.time() + 0.2 >= end:
            return reply
        await asyncio.sleep(0.2)


async def set_paused(
    nc: Client,
    tables: Sequence[str],
    paused: bool = True,
    reason: str = "",
    timeout: float = 2.0,
    patience: float = 0.0,
) -> dict[str, Reply | None]:
    """Pause (or resume) every table at once; each table's answer (None: none came)."""
    replies = await asyncio.gather(*(pause_table(nc, t, paused, reason, timeout, patience) for t in tables))
    return dict(zip(tables, replies, strict=True))


def pause_outcome(reply: Reply | None, paused: bool = True) -> str:
    """A table's answer in words: ``paused``, ``already paused``, ``closed``, ..."""
    if reply is None:
        return "no answer (is the dealer running?)"
    if reply.ok:
        if reply.code == "unchanged":
            return "already paused" if paused else "not paused (nothing to resume)"
        return "paused" if paused else "resumed"
    if reply.code == "table_closed":
        return "closed (it has finished)"
    if reply.code == "no_table":
        return "not opened"
    return f"refused ({reply.code}: {reply.reason})"


# --- what the runner hears of the remote entrants ---------------------------------------------


@dataclasses.dataclass
class Heard:
    """What the runner heard of one remote entrant on the bus: its hellos, its commands for
    this tournament's tables and the services' answers to them (this process only: a resumed
    tournament hears from the resume on)."""

    hellos: int = 0
    commands: int = 0
    taken: int = 0
    """Commands the services accepted."""
    refused: dict[str, int] = dataclasses.field(default_factory=dict)
    """Refused commands by the code of the refusal (``Reply.code``)."""
    unanswerable: int = 0
    """Commands whose reply subject is not under ``_INBOX.<player>.``: no service answers those."""

    def codes(self) -> str:
        """The refusal codes, most frequent first: ``malformed x12, illegal x3``."""
        order = sorted(self.refused.items(), key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{code} x{n}" for code, n in order)

    def to_json(self) -> dict[str, Any]:
        return {
            "hellos": self.hellos,
            "commands": self.commands,
            "taken": self.taken,
            "refused": dict(sorted(self.refused.items())),
            "unanswerable": self.unanswerable,
        }


class Listener:
    """Listens to the remote entrants (never the built-in bots: the runner plays those) so the
    end can say why one never answered: not connected, connected but silent, or refused.

    Three plain subscriptions per remote entrant, not the services' queue group, so nothing is
    taken from the services: ``skat.hello.<p>`` (hellos), ``skat.cmd.<p>.*`` (its commands;
    counted for this tournament's tables only) and ``_INBOX.<p>.>`` (the services' answers,
    ``Reply`` in msgpack or JSON; counted only for a command seen here, so hello answers and
    other tournaments' replies are left out). The runner connects as the services' user, which
    may subscribe to these; a message costs a counter and a dict entry, nothing is decoded
    but the answers."""

    MAX_AWAITED = 4096
    """Reply subjects of commands not yet answered that are remembered (the oldest go first)."""

    def __init__(self, nc: Client, players: Iterable[str], tables: Iterable[str]) -> None:
        self.nc = nc
        self.heard: dict[str, Heard] = {p: Heard() for p in players}
        self.tables = set(tables)
        self._awaited: dict[str, str] = {}
        """Reply subject of a command heard -> its player."""
        self._subs: list[Any] = []

    async def start(self) -> None:
        for player in self.heard:
            self._subs.append(await self.nc.subscribe(hello_subject(player), cb=self._on_hello))
            self._subs.append(await self.nc.subscribe(f"skat.cmd.{player}.*", cb=self._on_command))
            self._subs.append(await self.nc.subscribe(f"{player_inbox(player)}.>", cb=self._on_reply))

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()

    async def _on_hello(self, msg: Msg) -> None:
        heard = self.heard.get(msg.subject.rpartition(".")[2])
        if heard is not None:
            heard.hellos += 1

    async def _on_command(self, msg: Msg) -> None:
        try:
            player, table = parse_command_subject(msg.subject)
        except ValueError:
            return
        heard = self.heard.get(player)
        if heard is None or table not in self.tables:
            return
        heard.commands += 1
        if not is_inbox(msg.reply, player):
            heard.unanswerable += 1
            return
        if len(self._awaited) >= self.MAX_AWAITED:
            self._awaited.pop(next(iter(self._awaited)))
        self._awaited[msg.reply] = player

    async def _on_reply(self, msg: Msg) -> None:
        player = self._awaited.pop(msg.subject, None)
        if player is None:
            return
        try:
            reply: Reply = decode(msg.data, Reply)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        heard = self.heard[player]
        if reply.ok:
            heard.taken += 1
        else:
            heard.refused[reply.code or "?"] = heard.refused.get(reply.code or "?", 0) + 1


def config_json(config: TournamentConfig) -> dict[str, Any]:
    """The configuration as results.json gives it: as stored, except that for a game other
    than Skat ``rules`` are that game's rules, every option spelled out (the Skat rules a
    Thirty-one tournament's log carries unused would only mislead a reader)."""
    out: dict[str, Any] = msgspec.to_builtins(config)
    if ranked_by_places(config.game):
        out["rules"] = msgspec.to_builtins(config.table_rules())
        del out["game_rules"]
    return out


def write_results(
    config: TournamentConfig,
    state: TournamentState,
    table_logs: dict[str, list[Event]],
    out: Path,
    refused: dict[str, int] | None = None,
    heard: dict[str, Heard] | None = None,
    resumed: bool = False,
    events: Sequence[TournamentEvent] | None = None,
    sign_key: bytes | None = None,
    faults: dict[str, int] | None = None,
    times: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """results.json, standings.csv, archive.jsonl (every table's events, one per line) and
    tournament.jsonl (the tournament's own log, ``events``), then signature.json over them all
    when there is a ``sign_key`` (``skatbus.signing``: what ``skat verify`` checks).

    Every standing carries the player's ``timeouts`` and ``answered`` turns and whether it
    ``forfeit`` (withdrawn at a table: ranked below every entrant that finished); ``forfeits``
    lists every withdrawal. ``refused`` (commands the services refused, per built-in bot: only
    the runner sees those) goes into results.json as it is, and ``heard`` (what the runner
    heard of each remote entrant, ``Listener``) too; ``warnings`` says who never answered, and
    why as far as the runner can tell, and who forfeited. ``game`` names the game; a game
    ranked by places has place standings (``place_standings``) and says in ``scoring`` how
    place points are made. A tournament of many entrants adds each series' standings, the
    crosstable and the schedule's balance; the fair scheme its commitment, nonces and seed.
    ``faults`` (per entrant the runner plays, the turns its bot failed, each played by the
    default move: ``skatbus.bot_guard``) goes in as it is, and a warning for each entrant with
    any.

    ``times`` (per table, when each event was stored: the server's stamps) goes into the
    archive (each line's ``at``) and gives ``think_times``: per player its moves' median, 95th
    percentile and longest think time (``skatbus.think_times``)."""
    out.mkdir(parents=True, exist_ok=True)
    stamps = times or {}
    logs_in_order = list(table_logs.values())
    table = standings_of(config.game, logs_in_order)
    withdrawals = forfeits(logs_in_order)
    results: dict[str, Any] = {
        "tournament": config.id,
        "game": config.game,
        "config": config_json(config),
        **({"scoring": PLACE_POINTS} if ranked_by_places(config.game) else {}),
        "standings": msgspec.to_builtins(table),
        "forfeits": msgspec.to_builtins(withdrawals),
        "refused": dict(refused or {}),
        "faults": dict(faults or {}),
        "heard": {p: h.to_json() for p, h in (heard or {}).items()},
        "think_times": think_times_json((log, stamps_of(stamps.get(name, []))) for name, log in table_logs.items()),
        "warnings": entrant_warnings(table, config.bots, heard, resumed)
        + forfeit_warnings(withdrawals)
        + fault_warnings(config.bots, faults or {}),
        "tables": [msgspec.to_builtins(state.finished[t.table]) for t in state.tables if t.table in state.finished],
        **many_entrants_results(config, state, table_logs),
        **fairness_results(config, state),
        "files": {
            "results": str(out / "results.json"),
            "standings_csv": str(out / "standings.csv"),
            "archive": str(out / "archive.jsonl"),
            "tournament_log": str(out / "tournament.jsonl"),
        },
    }
    if sign_key is not None:
        results["files"]["signature"] = str(out / "signature.json")
        results["signed_by"] = public_key_of(sign_key)
    with open(out / "standings.csv", "w", newline="") as f:
        w = csv.writer(f)
        if ranked_by_places(config.game):
            _place_rows(w, [s for s in table if isinstance(s, PlaceStanding)])
        else:
            _skat_rows(w, [s for s in table if isinstance(s, Standing)])
    with open(out / "archive.jsonl", "wb") as f:
        for name, log in table_logs.items():
            at = stamps.get(name, [])
            for index, event in enumerate(log):
                f.write(encode_line(name, index, event, at=at[index] if index < len(at) else None))
    write_tournament_log(out / "tournament.jsonl", list(events or []))
    # results.json after the files it sums up, in one step (a run whose results.json is there is
    # finished: --resume refuses it), and the signature over them all last (until it is there,
    # a signed run counts as unfinished, so --resume writes it all again).
    partial = out / "results.json.partial"
    partial.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(partial, out / "results.json")
    if sign_key is not None:
        sign_run(out, sign_key)
    return results


def results_written(run: Path) -> bool:
    """Whether a run folder holds its finished results: results.json, and the signature it
    announces (``signed_by``) if any."""
    try:
        results = json.loads((run / "results.json").read_text())
    except (OSError, ValueError):
        return False
    return not (isinstance(results, dict) and "signed_by" in results and not (run / "signature.json").exists())


def many_entrants_results(
    config: TournamentConfig, state: TournamentState, table_logs: dict[str, list[Event]]
) -> dict[str, Any]:
    """What a tournament of many entrants adds to results.json: the seating of every series and
    its balance, each series' standings and the crosstable (nothing for one seat set)."""
    if not config.many:
        return {}
    seats = [[t.players for t in state.series_of(s)] for s in range(1, config.series + 1)]
    drawn = [s for s in seats if s]
    return {
        "schedule": {
            "pairing": config.pairing,
            "series": seats,
            "balance": msgspec.to_builtins(seating.balance(drawn, config.entrants)),
            "redrawn": {str(k): v for k, v in sorted(state.redrawn.items())},
        },
        "series": series_standings(config, state, table_logs),
        "crosstable": crosstable(config, state),
    }


def fairness_results(config: TournamentConfig, state: TournamentState) -> dict[str, Any]:
    """The fair scheme's reveal: the commitment published before the first deal, the nonces that
    went into the deals and the seed, now that every card has been played."""
    if not config.fair:
        return {}
    return {
        "fairness": {
            "scheme": config.fair,
            "commitment": config.commitment,
            "seed": config.seed,
            "nonces": dict(sorted(state.nonces.items())),
            "nonces_digest": state.digest,
        }
    }


def _skat_rows(w: Any, table: Sequence[Standing]) -> None:
    w.writerow(
        ["rank", "player", "seeger_fabian", "deals", "per_deal", "ci95", "list_points", "declared", "won",
         "timeouts", "forfeit", "ramsch", "ramsch_lost", "ramsch_points", "passed_in"]
    )  # fmt: skip
    for rank, s in enumerate(table, 1):
        w.writerow(
            [
                rank,
                s.player,
                s.seeger_fabian,
                s.deals,
                f"{s.per_deal:.2f}",
                "" if s.ci95 is None else f"{s.ci95:.2f}",
                s.list_points,
                s.declared,
                s.won,
                s.timeouts,
                "true" if s.forfeit else "false",
                s.ramsch,
                s.ramsch_lost,
                s.ramsch_points,
                s.passed_in,
            ]
        )


def _place_rows(w: Any, table: Sequence[PlaceStanding]) -> None:
    """standings.csv of a game ranked by places; ``places`` is ``place:tables`` pairs
    (``1:3 2:1``: first at three tables, second at one)."""
    w.writerow(
        ["rank", "player", "place_points", "tables", "per_table", "ci95", "wins", "mean_place", "mean_coins",
         "deals", "places", "timeouts", "forfeit"]
    )  # fmt: skip
    for rank, s in enumerate(table, 1):
        w.writerow(
            [
                rank,
                s.player,
                s.place_points,
                s.tables,
                f"{s.per_table:.2f}",
                "" if s.ci95 is None else f"{s.ci95:.2f}",
                s.wins,
                f"{s.mean_place:.2f}",
                f"{s.mean_coins:.2f}",
                s.deals,
                " ".join(f"{p}:{n}" for p, n in s.places.items()),
                s.timeouts,
                "true" if s.forfeit else "false",
            ]
        )


def entrant_warnings(
    table: Sequence[Standing | PlaceStanding],
    bots: dict[str, str],
    heard: dict[str, Heard] | None = None,
    resumed: bool = False,
) -> list[str]:
    """A warning for each player that never answered a turn (every move of its was the
    default one, so its place says nothing about its bot), saying what the runner heard of a
    remote one: nothing at all, hellos only, or only commands the services refused (with their
    codes). Built-in bots are the runner's own: for them only the count."""
    since = " since the tournament was resumed" if resumed else ""
    out = []
    for s in table:
        if not s.timeouts or s.answered:
            continue
        tail = f": all its {s.timeouts} turns timed out"
        h = (heard or {}).get(s.player)
        if s.player in bots:
            kind = "in-process class" if ":" in bots[s.player] else "built-in bot"  # a spec: bot_loader.is_spec
            out.append(f"{s.player} ({kind} {bots[s.player]}) never answered{tail}")
        elif h is None:  # not listened to
            out.append(f"{s.player} never answered{tail}")
        elif not h.hellos and not h.commands:
            out.append(f"{s.player} never connected (no hello and no command heard{since}){tail}")
        elif not h.commands:
            hellos = f"{h.hellos} hello{'s' * (h.hellos != 1)}"
            out.append(f"{s.player} connected but never answered ({hellos}, no command{since}){tail}")
        elif h.refused:
            out.append(f"{s.player} answered only with refused commands: codes {h.codes()}{tail}")
        else:
            wrong = f"; {h.unanswerable} had a reply subject outside _INBOX.{s.player}." if h.unanswerable else ""
            out.append(f"{s.player} sent {h.commands} commands, none taken and no answer heard{wrong}{tail}")
    return out


def fault_warnings(bots: dict[str, str], faults: dict[str, int]) -> list[str]:
    """One line per entrant whose bot failed turns (``act`` raised, or answered with something
    illegal): each was played by the default move (``skatbus.bot_guard``; the log has a
    ``bot_fault`` line per turn)."""
    out = []
    for player, n in faults.items():
        if n:
            what = f" ({bots[player]})" if player in bots else ""
            out.append(
                f"{player}{what}: {n} fault{'s' * (n != 1)} (act raised or answered illegally), "
                f"{'each' if n != 1 else 'its'} move played by default"
            )
    return out


def forfeit_warnings(found: Sequence[Forfeit]) -> list[str]:
    """One line per entrant withdrawn anywhere: where first, and how many tables in all."""
    by_player: dict[str, list[Forfeit]] = {}
    for f in found:
        by_player.setdefault(f.player, []).append(f)
    out = []
    for player, fs in by_player.items():
        first, more = fs[0], len({f.table for f in fs}) - 1
        out.append(
            f"{player} forfeited: withdrawn at {first.table} in deal {first.deal} after {first.missed} turns in a row "
            f"timed out{f' (and at {more} more table' + 's' * (more != 1) + ')' if more else ''}; "
            "it ranks below every entrant that finished"
        )
    return out
