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
    TableFinished,
    TableSpec,
    TournamentConfig,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
    TournamentState,
    fold_tournament,
    standings,
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
from .player import RemotePlayer

STREAM = "SKATTOUR"
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
    """A one-line progress bar on a terminal (deals done, deals/s, ETA, the leader); plain
    lines every 10 % otherwise, so logs and CI output stay readable."""

    def __init__(self, total: int, out: TextIO = sys.stdout) -> None:
        self.total, self.out = total, out
        self.done = 0
        self.started = time.monotonic()
        self.tty = out.isatty()
        self._last_tenth = -1
        self.leader = ""

    def update(self, done: int, leader: str = "") -> None:
        self.done, self.leader = done, leader or self.leader
        elapsed = time.monotonic() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        if self.tty:
            width = 30
            filled = int(width * done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            self.out.write(
                f"\r[{bar}] {done}/{self.total} deals  {rate:5.1f} deals/s  ETA {eta:4.0f} s  SF/deal: {self.leader}   "
            )
            self.out.flush()
        else:
            tenth = 10 * done // max(self.total, 1)
            if tenth != self._last_tenth:
                self._last_tenth = tenth
                print(
                    f"{done}/{self.total} deals, {rate:.1f} deals/s, ETA {eta:.0f} s  SF/deal so far: {self.leader}",
                    file=self.out,
                    flush=True,
                )

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
) -> dict[str, Any]:
    """Run (or resume) a tournament to its end; returns the results (also written to disk)."""
    log = logs.get(command="tournament")
    tlog = TournamentLog(nc)
    await tlog.ensure_stream()
    store = EventStore(nc)
    await store.ensure_stream()
    if resume:
        state = fold_tournament(await tlog.read(resume))
        if state.config is None:
            raise ValueError(f"no tournament {resume!r} to resume")
        config = state.config
    else:
        assert config is not None
        if await tlog.read(config.id):
            raise ValueError(f"tournament {config.id} exists already: resume it with --resume {config.id}")
        from protocol.tournament import schedule

        state = TournamentState()
        created = TournamentCreated(config=config, tables=schedule(config))
        await tlog.append(config.id, created)
        state.apply(created)
    tid = config.id
    per_table = config.rules.deals
    total = per_table * len(state.tables)
    deals_done: dict[str, int] = {}
    closed: set[str] = set()
    all_closed = asyncio.Event()
    pending = {t.table for t in state.pending}

    async def on_public(msg: Msg) -> None:
        table = msg.subject.rpartition(".")[2]
        if table not in pending:
            return
        event = MSGPACK.decode(msg.data)
        if isinstance(event, DealScored):
            if event.deal > deals_done.get(table, 0):
                for seat, points in enumerate(event.result.seeger_fabian):
                    name = seating[table][seat]
                    running[name] = running.get(name, 0) + points
                    dealt[name] = dealt.get(name, 0) + 1
            deals_done[table] = max(deals_done.get(table, 0), event.deal)
        elif isinstance(event, TableClosed):
            closed.add(table)
            if closed >= pending:
                all_closed.set()

    seating = {t.table: t.players for t in state.tables}
    running: dict[str, int] = {}
    dealt: dict[str, int] = {}

    def leaders() -> str:
        """The standings so far, from the deals scored while we watched."""
        order = sorted(running, key=lambda n: -running[n] / max(dealt[n], 1))
        return "  ".join(f"{n} {running[n] / max(dealt[n], 1):+.1f}" for n in order[:4])

    subs = [await nc.subscribe(f"skat.public.{t}", cb=on_public) for t in pending]
    players = [
        RemotePlayer(nc, entrant, make_bot(bot, f"{config.seed}/{entrant}"), request_timeout=request_timeout)
        for entrant, bot in config.bots.items()
    ]
    for p in players:
        await p.start()
    await nc.flush()
    # Tables that finished while nobody watched (a resumed tournament), and the deals done so far.
    for spec in state.pending:
        stored = await store.read(spec.table)
        deals_done[spec.table] = sum(isinstance(s.event, DealScored) for s in stored)
        if stored and isinstance(stored[-1].event, TableClosed):
            closed.add(spec.table)
    if closed >= pending:
        all_closed.set()
    progress = Progress(total, out)  # the clock starts as the tables open
    for spec in state.pending:
        if spec.table in closed:
            continue
        request = OpenTable(
            table=spec.table, players=spec.players, rules=config.rules, seed=spec.seed, formats=config.formats
        )
        reply: Reply = await _open(nc, request)
        if not reply.ok and reply.code != "exists":
            raise RuntimeError(f"cannot open {spec.table}: {reply.reason}")
        if on_table_open is not None:
            on_table_open(spec)
    for p in players:  # a resumed tournament's bots: ask for the prompts they missed
        await p.hello()
    finished_before = sum(f.deals for f in state.finished.values())
    ticks = 0
    while not all_closed.is_set():
        progress.update(finished_before + sum(deals_done.values()), leaders())
        try:
            await asyncio.wait_for(all_closed.wait(), 0.25)
        except TimeoutError:
            pass
        ticks += 1
        if ticks % 20 == 0:  # the public feed is best effort: every 5 s, ask the store too
            for table in pending - closed:
                if await store.has_event(table, "table_closed"):
                    closed.add(table)
            if closed >= pending:
                all_closed.set()
    progress.update(total, leaders())
    progress.finish()
    for sub in subs:
        await sub.unsubscribe()
    for p in players:
        await p.stop()
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
    results = write_results(config, state, table_logs, Path(out_dir) / tid)
    log.info("tournament_finished", tournament=tid, tables=len(state.tables))
    return results


async def _open(nc: Client, request: OpenTable, patience: float = 60.0) -> Reply:
    """Ask the dealer to open a table, asking again while nobody answers (a restarting dealer
    or broker): opening is idempotent, a second answer is "exists"."""

    async def attempt() -> Reply:
        return decode((await nc.request(ADMIN_OPEN, encode(request), timeout=2.0)).data, Reply)  # type: ignore[no-any-return]

    return await patiently(attempt, patience, "opening a table (the dealer)")


def write_results(
    config: TournamentConfig, state: TournamentState, table_logs: dict[str, list[Event]], out: Path
) -> dict[str, Any]:
    """results.json, standings.csv and archive.jsonl (every table's events, one per line)."""
    out.mkdir(parents=True, exist_ok=True)
    table = standings(list(table_logs.values()))
    results = {
        "tournament": config.id,
        "config": msgspec.to_builtins(config),
        "standings": msgspec.to_builtins(table),
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
        w.writerow(["rank", "player", "seeger_fabian", "deals", "per_deal", "ci95", "list_points", "declared", "won"])
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
                ]
            )
    with open(out / "archive.jsonl", "wb") as f:
        for name, events in table_logs.items():
            for index, event in enumerate(events):
                f.write(encode_line(name, index, event))
    return results


def format_standings(results: dict[str, Any]) -> str:
    """The standings as a readable table."""
    rows = results["standings"]
    lines = [
        f"{'#':>2}  {'player':<16} {'Seeger-Fabian':>13} {'per deal':>17} {'deals':>6} {'declared':>9} {'won':>5}  games (won/played)",
    ]
    for rank, s in enumerate(rows, 1):
        ci = "" if s["ci95"] is None else f" ± {s['ci95']:.1f}"
        games = ", ".join(f"{g} {v['won']}/{v['played']}" for g, v in s["by_game"].items())
        lines.append(
            f"{rank:>2}  {s['player']:<16} {s['seeger_fabian']:>13} {s['per_deal']:>8.1f}{ci:<9} {s['deals']:>6} "
            f"{s['declared']:>9} {s['won']:>5}  {games}"
        )
    return "\n".join(lines)
