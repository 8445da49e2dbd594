"""The ``flood`` section: what one player flooding the services does to everyone else.

A flooder in its own process publishes commands at ten times the per-player rate limit
(``SKAT_PLAYER_RATE``, default 1000/s): half to its own table, half to made-up tables, plus a
hello and a 60 KB message every 10 ms. Meanwhile other tables play, and we time each
command -> next prompt. Calm and flooded runs alternate (calm, flood, calm, flood, ...), so the
spread between the calm runs is the noise the flooded figures are compared against.

Figures: the p50/p99 latency of the flooded runs as a multiple of the calm runs' (1.00x = no
change), the calm runs' own spread, the services' memory growth, and the share of the flood
the services dropped unread.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import nats

from protocol.skat.rules import Rules
from protocol.wire import OpenTable, encode
from services.main import SERVICES, stop_processes, wait_ready
from services.natsserver import EmbeddedServer

from . import Options, Row, times
from .pipeline import _cpu_seconds, _percentile, _run, run_stack

RATE = 1000
FACTOR = 10

_FLOODER = """
import signal, socket, sys, time
# A raw NATS client: the protocol bytes are built once and written in bulk, so that the
# flooder itself costs almost no CPU (a remote attacker's CPU is not ours to spend).
from protocol.skat.commands import Bid
from protocol.wire import encode
host, port = sys.argv[1].rpartition("/")[2].split(":")
per_second, seconds = int(sys.argv[2]), float(sys.argv[3])
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
sock = socket.create_connection((host, int(port)))
sock.recv(4096)  # INFO
sock.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\\r\\n')
command, big = encode(Bid(value=18)), b"{" + b" " * 60_000 + b"}"
def pub(subject, reply, data):
    return b"PUB %s %s %d\\r\\n%s\\r\\n" % (subject.encode(), reply.encode(), len(data), data)
sent, start = 0, time.monotonic()
while not stop and (now := time.monotonic()) - start < seconds:
    due = int((now - start) * per_second)
    chunk = []
    while sent < due:
        table = "flood" if sent % 2 else f"nosuch{sent % 5000}"
        chunk.append(pub(f"skat.cmd.mallory.{table}", f"_INBOX.mallory.f.{sent}", command))
        sent += 1
    chunk.append(pub("skat.hello.mallory", "_INBOX.mallory.h", b""))
    chunk.append(pub("skat.cmd.mallory.flood", "_INBOX.mallory.b", big))
    sock.sendall(b"".join(chunk))
    try:  # answer the server's PINGs, drop everything else it sends
        sock.setblocking(False)
        if b"PING" in sock.recv(1 << 20):
            sock.sendall(b"PONG\\r\\n")
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)
    time.sleep(0.01)
print(sent, time.monotonic() - start, flush=True)
"""


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def _round(
    url: str, tables: int, rounds: int, prefix: str, flood_seconds: float | None
) -> tuple[list[float], int, float]:
    """One run of the calm tables, with a flooder alongside if ``flood_seconds`` is given;
    returns the command -> next prompt samples, and how many messages the flooder sent in
    how many seconds."""
    flooder = None
    if flood_seconds is not None:
        flooder = subprocess.Popen(
            [sys.executable, "-c", _FLOODER, url, str(RATE * FACTOR), str(flood_seconds)], stdout=subprocess.PIPE
        )
        await asyncio.sleep(0.3)  # the flood is on before the tables start
    try:
        _, _, _, watch = await run_stack(url, tables, rounds, prefix=prefix)
    finally:
        sent, seconds = 0, 0.0
        if flooder is not None:
            flooder.terminate()
            out, _ = flooder.communicate(timeout=10)
            sent, seconds = int(out.split()[0]), float(out.split()[1])
    return watch.samples, sent, seconds


async def _measure(opts: Options) -> list[Row]:
    tables, rounds, pairs = (4, 1, 2) if opts.quick else (8, 2, 3)
    with EmbeddedServer() as server:
        env = {
            **os.environ,
            "SKAT_LOG_LEVEL": os.environ.get("SKAT_BENCH_LOG", "warning"),
            "SKAT_PLAYER_RATE": str(RATE),
        }
        procs = [
            subprocess.Popen([sys.executable, "-m", "skatbus.cli", "service", name, "--nats", server.url], env=env)
            for name in SERVICES
        ]
        try:
            await wait_ready(server.url)
            nc = await nats.connect(server.url)
            flood_table = OpenTable(table="flood", players=["mallory", "x1", "x2"], rules=Rules(turn_seconds=3600))
            await nc.request("skat.admin.open", encode(flood_table), timeout=10)
            await nc.close()
            await _round(server.url, tables, 1, "warm", None)
            rss_before = {name: _rss_mb(p.pid) for name, p in zip(SERVICES, procs)}
            calm: list[list[float]] = []
            flooded: list[list[float]] = []
            cpu = {"calm": 0.0, "flooded": 0.0}
            sent_total, flood_time = 0, 0.0

            def services_cpu() -> float:
                return sum(_cpu_seconds(p.pid) for p in procs)

            for i in range(pairs):
                before = services_cpu()
                calm.append((await _round(server.url, tables, rounds, f"calm{i}-", None))[0])
                middle = services_cpu()
                samples, sent, seconds = await _round(server.url, tables, rounds, f"flood{i}-", 60.0)
                cpu["calm"] += middle - before
                cpu["flooded"] += services_cpu() - middle
                flooded.append(samples)
                sent_total, flood_time = sent_total + sent, flood_time + seconds
            rss_growth = {name: _rss_mb(p.pid) - rss_before[name] for name, p in zip(SERVICES, procs)}
        finally:
            stop_processes(procs)

    def pct(runs: list[list[float]], q: float) -> list[float]:
        return [_percentile(r, q) for r in runs]

    calm50, calm99 = pct(calm, 0.5), pct(calm, 0.99)
    flood50, flood99 = pct(flooded, 0.5), pct(flooded, 0.99)
    base50, base99 = sorted(calm50)[len(calm50) // 2], sorted(calm99)[len(calm99) // 2]
    noise50 = (max(calm50) - min(calm50)) / base50
    noise99 = (max(calm99) - min(calm99)) / base99
    worst_growth = max(rss_growth.values())
    deals = pairs * tables * rounds * 3  # the calm tables' deals, in either kind of run
    return [
        Row(
            "flooder's send rate",
            sent_total / flood_time,
            "msgs/s",
            note=f"{FACTOR}x the per-player limit of {RATE}/s, plus a hello and a 60 KB message per 10 ms",
        ),
        Row(
            "calm: command -> next prompt p50",
            base50 * 1e6,
            "us",
            note=f"median of {pairs} calm runs, {tables} tables; spread between calm runs {100 * noise50:.0f} % of it",
        ),
        Row(
            "flooded: command -> next prompt p50",
            sorted(flood50)[len(flood50) // 2] * 1e6,
            "us",
            relative=sorted(flood50)[len(flood50) // 2] / base50,
            vs=times(sorted(flood50)[len(flood50) // 2] / base50, "calm p50"),
            note="1.00x = unchanged",
        ),
        Row(
            "calm: command -> next prompt p99",
            base99 * 1e6,
            "us",
            note=f"spread between calm runs {100 * noise99:.0f} % of it",
        ),
        Row(
            "flooded: command -> next prompt p99",
            sorted(flood99)[len(flood99) // 2] * 1e6,
            "us",
            relative=sorted(flood99)[len(flood99) // 2] / base99,
            vs=times(sorted(flood99)[len(flood99) // 2] / base99, "calm p99"),
            note="1.00x = unchanged",
        ),
        Row(
            "services' CPU per calm-table deal, flooded",
            1e3 * cpu["flooded"] / deals,
            "ms",
            relative=cpu["flooded"] / cpu["calm"],
            vs=times(cpu["flooded"] / cpu["calm"], f"the calm runs' {1e3 * cpu['calm'] / deals:.1f} ms"),
            note="all five services",
        ),
        Row(
            "largest service memory growth",
            worst_growth,
            "MB",
            note=", ".join(f"{n} {g:+.1f}" for n, g in rss_growth.items()) + " (RSS after all runs - after warm-up)",
        ),
    ]


def run(opts: Options) -> list[Row]:
    return _run(_measure(opts))  # type: ignore[no-any-return]
