"""The ``pipeline`` section: whole deals through the whole stack over a real nats-server.

What it measures, all in the same run on the same machine:

* **raw JetStream ceiling**: acknowledged publishes per second to the file-backed stream from a
  pool of concurrent publishers (no logic at all), divided by the events a deal writes: the
  deals per second a log-writing design could reach at best here.
* **raw request/reply**: the round trip of a core NATS request to a responder in another process
  (p50, p99), the floor under any command's latency.
* **stack deals/s**: many tables in flight, each played by scripted players connected over NATS
  (in this process), through the five service processes (dealer, bidding, play, scoring, views).
* **command -> next prompt** (p50, p99): from a player sending a command to the next turn prompt
  of that table arriving, whoever it is for.

Targets: the stack reaches 35 % of the raw ceiling; p50 latency is at most 3x the raw
request/reply p50. ``--profile`` runs the services under cProfile and prints where their time goes.
"""

from __future__ import annotations

import asyncio
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import MSGPACK, TableClosed
from protocol.rules import Rules
from protocol.subjects import ADMIN_OPEN
from protocol.wire import OpenTable, Reply, decode, encode
from services.main import SERVICES, stop_processes, wait_ready
from services.natsserver import EmbeddedServer
from services.store import EventStore, stream_config
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer

from . import Options, Row

CEILING_SHARE_TARGET = 0.35
LATENCY_FACTOR_TARGET = 3.0

_RESPONDER = """
import asyncio, sys, nats
async def main():
    nc = await nats.connect(sys.argv[1])
    async def echo(msg):
        await msg.respond(msg.data)
    await nc.subscribe("bench.echo", cb=echo)
    await nc.flush()
    print("ready", flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


class Stopwatch:
    """Command-to-next-prompt latencies per table."""

    def __init__(self) -> None:
        self.pending: dict[str, float] = {}
        self.samples: list[float] = []

    def sent(self, table: str) -> None:
        self.pending[table] = time.perf_counter()

    def prompted(self, table: str) -> None:
        start = self.pending.pop(table, None)
        if start is not None:
            self.samples.append(time.perf_counter() - start)


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def raw_publish_rate(nc: Client, messages: int, workers: int = 128) -> float:
    """Acked JetStream publishes per second from a pool of concurrent publishers, to a stream
    configured like the event store (its own, so the services never see these messages)."""
    js = nc.jetstream()
    config = stream_config()
    config.name, config.subjects = "RAW", ["raw.>"]
    await js.add_stream(config)
    payload = b"x" * 60  # about one event
    per_worker = messages // workers

    async def worker(w: int) -> None:
        subject = f"raw.t{w}.card_played"
        for _ in range(per_worker):
            await js.publish(subject, payload)

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(workers)))
    return per_worker * workers / (time.perf_counter() - start)


async def raw_request_reply(nc: Client, url: str, count: int) -> list[float]:
    """Round trips to an echo responder in another process."""
    proc = subprocess.Popen([sys.executable, "-c", _RESPONDER, url], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
        for _ in range(50):  # warm-up (and wait until the interest has propagated)
            try:
                await nc.request("bench.echo", b"ping", timeout=1.0)
            except Exception:
                await asyncio.sleep(0.05)
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            await nc.request("bench.echo", b"ping", timeout=2.0)
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        proc.terminate()
        proc.wait()


async def run_stack(url: str, tables: int, rounds: int, prefix: str = "bench") -> tuple[float, int, int, Stopwatch]:
    """Play ``tables`` tables at once; returns (seconds, deals, events, stopwatch)."""
    nc = await nats.connect(url)
    watch = Stopwatch()
    rules = Rules(rounds=rounds, turn_seconds=120)
    players: list[RemotePlayer] = []
    for t in range(tables):
        for seat in range(3):
            p = RemotePlayer(nc, f"{prefix}{t}s{seat}", HashedBot("bench"), request_timeout=10.0, observer=watch)
            await p.start()
            players.append(p)
    open_tables = {f"{prefix}{t}" for t in range(tables)}
    closed = asyncio.Event()

    async def on_public(msg: Msg) -> None:
        # The public feed tells when a table is closed, without polling the store.
        if msg.data and isinstance(MSGPACK.decode(msg.data), TableClosed):
            open_tables.discard(msg.subject.rpartition(".")[2])
            if not open_tables:
                closed.set()

    public = await nc.subscribe("skat.public.*", cb=on_public)
    await nc.flush()
    await wait_ready(url)  # every service, its recovery done: no first command to a service not yet listening
    start = time.perf_counter()
    for t in range(tables):
        request = OpenTable(
            table=f"{prefix}{t}", players=[f"{prefix}{t}s{s}" for s in range(3)], rules=rules, seed=f"bench{t}"
        )
        reply: Reply = decode((await nc.request(ADMIN_OPEN, encode(request), timeout=10)).data, Reply)
        assert reply.ok, reply
    await closed.wait()
    seconds = time.perf_counter() - start
    store = EventStore(nc)
    events = sum([len(await store.read(f"{prefix}{t}")) for t in range(tables)])
    for p in players:
        await p.stop()
    await public.unsubscribe()
    await nc.close()
    return seconds, tables * rules.deals, events, watch


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process used so far (Linux /proc), 0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _profile_report(profile_dir: str, top: int = 12) -> str:
    lines = []
    for path in sorted(Path(profile_dir).glob("*.prof")):
        stats = pstats.Stats(str(path))
        total = stats.total_tt  # type: ignore[attr-defined]
        lines.append(f"\n--- {path.stem}: {total:.2f} s of CPU in Python")
        entries = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
        for (file, line, func), (_, calls, tottime, cumtime, _) in entries:
            where = f"{Path(file).name}:{line}({func})"
            lines.append(f"  {tottime:7.3f}s own {cumtime:7.3f}s cum {calls:9d} calls  {where}")
    return "\n".join(lines)


async def _measure(opts: Options, profile_dir: str | None) -> tuple[list[Row], str]:
    tables, rounds = (12, 1) if opts.quick else (40, 4)
    with EmbeddedServer() as server:
        nc = await nats.connect(server.url)
        await EventStore(nc).ensure_stream()
        raw_rate = await raw_publish_rate(nc, 5_000 if opts.quick else 20_000)
        rr = await raw_request_reply(nc, server.url, 500 if opts.quick else 2_000)
        await nc.close()
        env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
        if profile_dir:
            env["SKAT_PROFILE_DIR"] = profile_dir
        procs = [
            subprocess.Popen([sys.executable, "-m", "skatbus.cli", "service", name, "--nats", server.url], env=env)
            for name in SERVICES
        ]
        pids = {"nats-server": server.pid or 0, "bench players": os.getpid()}
        pids.update({name: p.pid for name, p in zip(SERVICES, procs)})
        try:
            _, _, _, alone = await run_stack(server.url, 1, 2, prefix="solo")
            cpu_before = {name: _cpu_seconds(pid) for name, pid in pids.items()}
            seconds, deals, events, watch = await run_stack(server.url, tables, rounds)
            cpu = {name: _cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
        finally:
            stop_processes(procs)
    per_deal = events / deals
    ceiling = raw_rate / per_deal
    rate = deals / seconds
    rr50, rr99 = _percentile(rr, 0.5), _percentile(rr, 0.99)
    lat50, lat99 = _percentile(watch.samples, 0.5), _percentile(watch.samples, 0.99)
    solo50, solo99 = _percentile(alone.samples, 0.5), _percentile(alone.samples, 0.99)
    rows = [
        Row("raw acked JetStream publishes", raw_rate, "msgs/s", note="128 concurrent publishers, file storage"),
        Row("raw ceiling", ceiling, "deals/s", note=f"/ {per_deal:.1f} events per deal"),
        Row(
            "stack deals/s",
            rate,
            "deals/s",
            target=CEILING_SHARE_TARGET * ceiling,
            relative=rate / ceiling,
            note=f"{deals} deals at {tables} tables in {seconds:.1f} s; x baseline = share of the ceiling",
        ),
        Row("raw request/reply p50", rr50 * 1e6, "us", note=f"p99 {rr99 * 1e6:.0f} us, responder in another process"),
        Row(
            "command -> next prompt p50, one table alone",
            solo50 * 1e6,
            "us",
            relative=solo50 / rr50,
            note=f"p99 {solo99 * 1e6:.0f} us; x baseline = multiple of raw request/reply (target <= {LATENCY_FACTOR_TARGET:.0f})",
        ),
        Row(
            f"command -> next prompt p50, {tables} tables",
            lat50 * 1e6,
            "us",
            relative=lat50 / rr50,
            note=f"p99 {lat99 * 1e6:.0f} us; under full load: mostly queueing",
        ),
    ]
    total_cpu = sum(cpu.values())
    rows.append(Row("CPU used / wall time", total_cpu / seconds, "cores", note="2 cores on the reference machine"))
    for name, used in sorted(cpu.items(), key=lambda kv: -kv[1]):
        rows.append(
            Row(f"  {name}", 1e6 * used / events, "us/event", note=f"{100 * used / total_cpu:.0f} % of the CPU used")
        )
    report = _profile_report(profile_dir) if profile_dir else ""
    return rows, report


def _run(coro: Any) -> Any:
    """The services run on uvloop when it is there; so do the benchmark's players."""
    try:
        import uvloop

        return uvloop.run(coro)
    except ImportError:
        return asyncio.run(coro)


def run(opts: Options) -> list[Row]:
    rows: list[Row] = _run(_measure(opts, None))[0]
    return rows


def profile(opts: Options) -> str:
    with tempfile.TemporaryDirectory(prefix="skatbus-prof-") as d:
        rows, report = _run(_measure(opts, d))
    report = str(report)
    from . import format_rows

    return format_rows("[pipeline, profiled run]", rows) + "\n" + report
