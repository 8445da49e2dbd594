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
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from nats.js.errors import APIError, NotFoundError

from protocol.archive import encode_line
from protocol.events import MSGPACK, DealScored, Event, TableClosed
from protocol.subjects import ADMIN_OPEN
from protocol.tournament import (
    Standing,
    TableFinished,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    fold_tournament,
    standings,
    turn_of,
)
from protocol.wire import OpenTable, Reply, decode, encode
from services import logs
from services.store import (
    WRONG_LAST_SEQUENCE,
    EventStore,
    ensure_stream,
    patiently,
    replicas_setting,
)

from .bots import make_bot
from .errors import UsageError
from .player import RemotePlayer
from .ratings import write_ratings

STREAM = "SKATTOUR"


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

    async def ensure_stream(self) -> None:
        config = StreamConfig(
            name=STREAM,
            subjects=["skat.tournament.>"],
            storage=StorageType.FILE,
            discard=DiscardPolicy.NEW,
            max_bytes=1 << 28,
            allow_direct=True,
            num_replicas=replicas_setting(),
            duplicate_window=120.0,
        )
        await ensure_stream(self.js, config, self.patience)

    async def read(self, tid: str) -> list[TournamentEvent]:
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
        message id (``<tid>:<position>``) makes a retry of an append that landed a no-op."""
        headers = {
            "Nats-Expected-Last-Subject-Sequence": str(self.last_seq),
            "Nats-Msg-Id": f"{tid}:{self.count}",
        }

        async def attempt() -> int:
            try:
                ack = await self.js.publish(f"skat.tournament.{tid}", _ENCODER.encode(event), headers=dict(headers))
            except APIError as exc:
                if exc.err_code in WRONG_LAST_SEQUENCE:
                    landed = await self._landed(tid, headers["Nats-Msg-Id"])
                    if landed is not None:  # an earlier attempt of ours was stored after all
                        return landed
                    raise RuntimeError(f"tournament {tid} was changed by someone else: is it running twice?") from exc
                raise
            return int(ack.seq)

        self.last_seq = await patiently(attempt, self.patience, "the tournament log")
        self.count += 1

    async def _landed(self, tid: str, my_id: str) -> int | None:
        """The sequence of the tournament's last event if it is the one with ``my_id``."""
        with contextlib.suppress(Exception):
            last = await self.js.get_last_msg(STREAM, f"skat.tournament.{tid}")
            if (last.headers or {}).get("Nats-Msg-Id") == my_id:
                return int(last.seq or 0)
        return None


class Progress:
    """A one-line progress bar on a terminal (deals done, deals/s, ETA, time-outs, the
    leaders), cut to the terminal's width; plain lines every 10 % otherwise, so logs and CI
    output stay readable.

    The rate counts only deals played since this process started watching (``already`` were
    done before: a resumed tournament), so it and the ETA mean what they say."""

    def __init__(self, total: int, out: TextIO = sys.stdout, already: int = 0) -> None:
        self.total, self.out = total, out
        self.done = already
        self.already = already
        self.started = time.monotonic()
        self.tty = out.isatty()
        self._last_tenth = -1
        self.leader = ""
        self.timeouts = ""

    def update(self, done: int, leader: str = "", timeouts: str = "") -> None:
        self.done, self.leader, self.timeouts = done, leader or self.leader, timeouts or self.timeouts
        if self.tty:
            width = shutil.get_terminal_size((80, 24)).columns - 1  # the last column would wrap
            self.out.write("\r" + self.line(width).ljust(width))
            self.out.flush()
            return
        tenth = 10 * done // max(self.total, 1)
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            print(self.line(), file=self.out, flush=True)

    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return (self.done - self.already) / elapsed if elapsed > 0 else 0.0

    def line(self, width: int | None = None) -> str:
        """The progress as one line of at most ``width`` characters: deals done first, then
        the ETA, the rate, time-outs and the leaders as far as they fit, the bar last."""
        rate = self.rate()
        eta = f"ETA {(self.total - self.done) / rate:.0f} s" if rate > 0 else "ETA ?"
        fields = [f"{self.done}/{self.total} deals", eta, f"{rate:.1f} deals/s"]
        if self.timeouts:
            fields.append(f"time-outs: {self.timeouts}")
        if self.leader:
            fields.append(f"SF/deal: {self.leader}")
        if width is None:
            return "  ".join(fields)
        line = fields[0][:width]
        for field in fields[1:]:
            if len(line) + 2 + len(field) <= width:
                line += "  " + field
            elif field.startswith("SF/deal") and width - len(line) > 20:
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


async def run_tournament(
    nc: Client,
    config: TournamentConfig | None = None,
    resume: str | None = None,
    out_dir: str | Path = "runs",
    out: TextIO = sys.stdout,
    request_timeout: float = 1.5,
    on_table_open: Callable[[TableSpec], None] | None = None,
    on_created: Callable[[TournamentConfig], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a tournament to its end; returns the results (also written to disk).

    A new tournament is refused (``TournamentRefused``) when its id is in the store already or
    its results are on disk: a result is never written over. ``on_created`` is called once
    the tournament is in the store, i.e. from when ``--resume`` can continue it. The bots are
    stopped and the subscriptions dropped however this ends (a Ctrl-C cancels it)."""
    tlog = TournamentLog(nc)
    await tlog.ensure_stream()
    store = EventStore(nc)
    await store.ensure_stream()
    if resume:
        state = await _resumable(tlog, resume, Path(out_dir))
        assert state.config is not None
        config = state.config
    else:
        assert config is not None
        state = await _create(tlog, config, Path(out_dir))
    if on_created is not None:
        on_created(config)
    watch = _Watch(state)
    players = [
        RemotePlayer(nc, entrant, make_bot(bot, f"{config.seed}/{entrant}"), request_timeout=request_timeout)
        for entrant, bot in config.bots.items()
    ]
    subs = [await nc.subscribe(f"skat.public.{t}", cb=watch.on_public) for t in watch.pending]
    try:
        for p in players:
            await p.start()
        await nc.flush()
        await _play(nc, store, config, state, watch, players, out, on_table_open)
    finally:
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        for p in players:
            await p.stop()
    return await _finish(tlog, store, config, state, players, Path(out_dir))


async def _resumable(tlog: TournamentLog, tid: str, out_dir: Path) -> TournamentState:
    """The state of the tournament ``tid`` to resume; refused if there is none, or if it
    finished and its results are written."""
    state = fold_tournament(await tlog.read(tid))
    if state.config is None:
        raise TournamentRefused(f"no tournament {tid!r} in this store to resume")
    if state.done and (out_dir / tid / "results.json").exists():
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


class _Watch:
    """What the public feed says while the tables play: deals scored, Seeger-Fabian so far,
    time-outs per player, which tables closed. Best effort (the feed may repeat or drop an
    event); the results are computed from the stored logs."""

    def __init__(self, state: TournamentState) -> None:
        self.pending = {t.table for t in state.pending}
        self.seating = {t.table: t.players for t in state.tables}
        self.deals_done: dict[str, int] = {}
        self.closed: set[str] = set()
        self.all_closed = asyncio.Event()
        self.running: dict[str, int] = {}
        self.dealt: dict[str, int] = {}
        self.timeouts: dict[str, int] = {}
        self.answered: dict[str, int] = {}
        self._previous: dict[str, Event] = {}

    async def on_public(self, msg: Msg) -> None:
        table = msg.subject.rpartition(".")[2]
        if table not in self.pending:
            return
        event = MSGPACK.decode(msg.data)
        if not isinstance(event, Event):
            return
        turn = turn_of(self._previous.get(table), event)
        self._previous[table] = event
        if turn is not None:
            name = self.seating[table][turn[0]]
            counter = self.answered if turn[1] else self.timeouts
            counter[name] = counter.get(name, 0) + 1
        if isinstance(event, DealScored):
            if event.deal > self.deals_done.get(table, 0):
                for seat, points in enumerate(event.result.seeger_fabian):
                    name = self.seating[table][seat]
                    self.running[name] = self.running.get(name, 0) + points
                    self.dealt[name] = self.dealt.get(name, 0) + 1
            self.deals_done[table] = max(self.deals_done.get(table, 0), event.deal)
        elif isinstance(event, TableClosed):
            self.table_closed(table)

    def table_closed(self, table: str) -> None:
        self.closed.add(table)
        if self.closed >= self.pending:
            self.all_closed.set()

    def leaders(self) -> str:
        """The standings so far, from the deals scored while we watched."""
        order = sorted(self.running, key=lambda n: -self.running[n] / max(self.dealt[n], 1))
        return "  ".join(f"{n} {self.running[n] / max(self.dealt[n], 1):+.1f}" for n in order[:4])

    def timeouts_line(self) -> str:
        """Players with time-outs, most first; ``(none answered)`` marks one never heard from."""
        order = sorted(self.timeouts, key=lambda n: -self.timeouts[n])
        return "  ".join(
            f"{n} {self.timeouts[n]}{'' if self.answered.get(n) else ' (none answered)'}" for n in order[:4]
        )


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
    # Tables that finished while nobody watched (a resumed tournament), and the deals done so far.
    for spec in state.pending:
        stored = await store.read(spec.table)
        watch.deals_done[spec.table] = sum(isinstance(s.event, DealScored) for s in stored)
        if stored and isinstance(stored[-1].event, TableClosed):
            watch.table_closed(spec.table)
    if watch.closed >= watch.pending:
        watch.all_closed.set()
    finished_before = sum(f.deals for f in state.finished.values())
    total = config.rules.deals * len(state.tables)
    # The clock starts as the tables open; deals played before (a resume) do not count in the rate.
    progress = Progress(total, out, already=finished_before + sum(watch.deals_done.values()))
    for spec in state.pending:
        if spec.table in watch.closed:
            continue
        request = OpenTable(
            table=spec.table, players=spec.players, rules=config.rules, seed=spec.seed, formats=config.formats
        )
        reply: Reply = await open_table(nc, request)
        if not reply.ok and reply.code != "exists":
            raise RuntimeError(f"cannot open {spec.table}: {reply.reason}")
        if on_table_open is not None:
            on_table_open(spec)
    for p in players:  # a resumed tournament's bots: ask for the prompts they missed
        await p.hello()
    ticks = 0
    while not watch.all_closed.is_set():
        progress.update(finished_before + sum(watch.deals_done.values()), watch.leaders(), watch.timeouts_line())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(watch.all_closed.wait(), 0.25)
        ticks += 1
        if ticks % 20 == 0:  # the public feed is best effort: every 5 s, ask the store too
            for table in watch.pending - watch.closed:
                if await store.has_event(table, "table_closed"):
                    watch.table_closed(table)
    progress.update(total, watch.leaders(), watch.timeouts_line())
    progress.finish()


async def _finish(
    tlog: TournamentLog,
    store: EventStore,
    config: TournamentConfig,
    state: TournamentState,
    players: list[RemotePlayer],
    out_dir: Path,
) -> dict[str, Any]:
    """Record every table's result in the tournament's log and write the results."""
    tid = config.id
    table_logs: dict[str, list[Event]] = {}
    for spec in state.tables:
        table_logs[spec.table] = [s.event for s in await store.read(spec.table) if isinstance(s.event, Event)]
    for spec in state.pending:
        events = table_logs[spec.table]
        last = next(e for e in reversed(events) if isinstance(e, DealScored))
        sheet = [e for e in events if isinstance(e, DealScored)]
        totals = [sum(e.result.scores[i] for e in sheet) for i in range(len(spec.players))]
        sf = [sum(e.result.seeger_fabian[i] for e in sheet) for i in range(len(spec.players))]
        finished = TableFinished(table=spec.table, deals=last.deal, totals=totals, seeger_fabian=sf)
        await tlog.append(tid, finished)
        state.apply(finished)
    if not state.done:
        await tlog.append(tid, TournamentFinished(tables=len(state.tables)))
    refused = {p.player: len(p.rejections) for p in players}
    # Files are written off the event loop (an archive can be large); bots may still be running.
    results = await asyncio.to_thread(write_results, config, state, table_logs, out_dir / tid, refused)
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


def write_results(
    config: TournamentConfig,
    state: TournamentState,
    table_logs: dict[str, list[Event]],
    out: Path,
    refused: dict[str, int] | None = None,
) -> dict[str, Any]:
    """results.json, standings.csv and archive.jsonl (every table's events, one per line).

    Every standing carries the player's ``timeouts`` and ``answered`` turns; ``refused``
    (commands the services refused, per built-in bot: only the runner sees those) goes into
    results.json as it is; ``warnings`` says which players never answered."""
    out.mkdir(parents=True, exist_ok=True)
    table = standings(list(table_logs.values()))
    results = {
        "tournament": config.id,
        "config": msgspec.to_builtins(config),
        "standings": msgspec.to_builtins(table),
        "refused": dict(refused or {}),
        "warnings": silent_players(table),
        "tables": [msgspec.to_builtins(state.finished[t.table]) for t in state.tables if t.table in state.finished],
        "files": {
            "results": str(out / "results.json"),
            "standings_csv": str(out / "standings.csv"),
            "archive": str(out / "archive.jsonl"),
        },
    }
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    with open(out / "standings.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "rank",
                "player",
                "seeger_fabian",
                "deals",
                "per_deal",
                "ci95",
                "list_points",
                "declared",
                "won",
                "timeouts",
            ]
        )
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
                ]
            )
    with open(out / "archive.jsonl", "wb") as f:
        for name, events in table_logs.items():
            for index, event in enumerate(events):
                f.write(encode_line(name, index, event))
    return results


def silent_players(table: list[Standing]) -> list[str]:
    """A warning for each player that never answered a turn: every move of its was the default
    one, so its place in the standings says nothing about its bot (is it connected at all?)."""
    return [
        f"{s.player} never answered: all its {s.timeouts} turns timed out (did its bot connect?)"
        for s in table
        if s.timeouts and not s.answered
    ]


def format_standings(results: dict[str, Any]) -> str:
    """The standings as a readable table: Seeger-Fabian points per deal with the half-width
    of their 95 % confidence interval, time-outs, and a warning per player never heard from."""
    rows = results["standings"]
    lines = [
        f"{'#':>2}  {'player':<16} {'Seeger-Fabian':>13} {'per deal (95 %)':>17} {'deals':>6} {'declared':>9} "
        f"{'won':>5} {'time-outs':>9}  games (won/played)",
    ]
    for rank, s in enumerate(rows, 1):
        ci = "" if s["ci95"] is None else f" ± {s['ci95']:.1f}"
        games = ", ".join(f"{g} {v['won']}/{v['played']}" for g, v in s["by_game"].items())
        lines.append(
            f"{rank:>2}  {s['player']:<16} {s['seeger_fabian']:>13} {s['per_deal']:>8.1f}{ci:<9} {s['deals']:>6} "
            f"{s['declared']:>9} {s['won']:>5} {s.get('timeouts', 0):>9}  {games}"
        )
    for warning in results.get("warnings", []):
        lines.append(f"warning: {warning}")
    return "\n".join(lines)
