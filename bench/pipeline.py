"""The ``pipeline`` section: whole deals through the whole stack over a real nats-server.

What it measures, all in the same run on the same machine, and what each figure is compared with:

* **the skeleton floor** (``bench.skeleton``): the protocol's minimal message pattern (command
  request, one guarded append, reply, prompt) with no game logic, at the stack's table count, on
  the same server. The skeleton and the stack run A/B/A/B (skeleton, stack, skeleton, stack) and
  the drift of the skeleton between its two runs is printed: it says how much the machine moved
  under the comparison (other work on these cores). The headline figure is **the stack's stored
  events/s as a percentage of the skeleton's**, both runs summed (issue 22: goal >= 70 %).
* **raw acked JetStream publishes**: one nats-py connection in the bench's own event loop with
  128 ``js.publish`` calls awaited concurrently, to a stream configured like the event store;
  once without headers, once with the guard headers every append of the stack carries. Divided
  by the events a deal stores (the unguarded figure, as in issue 13) it is the **raw ceiling** in
  deals/s: what a log-writing design with no request/reply and no prompts could reach here.
* **raw request/reply** (p50, p99): the round trip of a core NATS request to a responder in
  another process, the floor under any command's latency; its p50 is the unit of the latency goals.
* **stack stored events/s, deals/s**: many tables in flight, each played by scripted players
  connected over NATS (in this process), through the service processes (dealer, bidding, play,
  scoring, views; with ``--instances N``, N processes of each).
* **command -> next prompt** (p50, p99): from a player sending a command to the next turn prompt
  of that table arriving, whoever it is for; with one table alone over at least 2,000 samples
  (the latency goals: p50 <= 3x and p99 <= 10x the raw request/reply p50), split into the deal
  boundary (the prompt after a deal's last card: its trick, end, score and the next deal, five
  appends through play, scoring and the dealer) and the steps within a deal; and under the full
  load (mostly queueing, no goal).
* **messages into / out of the server per stored event**: nats-server's own counters (``/varz``
  ``in_msgs``, ``out_msgs`` on its monitoring port) over the stack runs, per event the stack's
  tables stored. Before issue 13: 6.6 in, 11 out; the goal is half of each.
* **conflicts and redeliveries per 1,000 stored events**: appends beaten by another instance
  (the services' health answers count them) and JetStream redeliveries (``num_redelivered``
  summed over every consumer of the stream), over the stack runs. Goal: at most 1 together.
* **CPU us per stored event**, per process (the N processes of a service summed) and in total
  (every process: nats-server, the bench's players, the services), and services + server without
  the players. Goal: <= 400 us in total. The same for the skeleton.

``--profile`` runs the services under cProfile and prints where their time goes.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.events import TAGS, DealDealt, TableClosed
from protocol.skat.rules import Rules
from protocol.subjects import ADMIN_OPEN, STREAM, event_name, health_subject, log_subject
from protocol.wire import OpenTable, Reply, decode, encode
from services.main import SERVICES, stop_processes, wait_ready
from services.natsserver import EmbeddedServer
from services.store import EventStore, Stored, stream_config
from skatbus.bots import HashedBot
from skatbus.player import RemotePlayer

from . import Options, Row, skeleton, times
from .skeleton import Window

_cpu_seconds = skeleton.cpu_seconds
"""CPU seconds of a process so far (``bench.flood`` uses it too)."""

CEILING_SHARE_GOAL = 0.15
"""Issue 13: the stack's deals/s reach at least 15 % of the raw JetStream ceiling."""
FLOOR_SHARE_GOAL = 0.70
"""Issue 22: the stack's stored events/s reach at least 70 % of the skeleton's, same run."""
SHARE_LABEL = "stack stored events/s as % of the skeleton floor, same run, same table count"
RAW_WORKERS = 128
LATENCY_P50_GOAL = 3.0
LATENCY_P99_GOAL = 10.0
"""Command -> next prompt with one table alone, p50 and p99, as multiples of the raw request/reply p50."""
IDLE_BEFORE = 0.02
"""Quiet before each paced round trip: longer than a one-table step, about as long as a service
that acts once a deal (the dealer) sleeps between its turns."""
CPU_PER_EVENT_GOAL_US = 400.0
"""CPU of every process together (nats-server, players, services) per stored event."""
MESSAGES_BEFORE = {"into": 6.6, "out of": 11.0}
"""Messages per stored event into and out of nats-server before issue 13; the goal halves them."""
FAULTS_PER_1000_GOAL = 1.0
"""Conflicts + redeliveries per 1,000 stored events."""
HEALTH_WAIT = 0.5
"""How long to collect health answers: every instance of a service answers the same request."""

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
        self.at: list[float] = []
        """Unix time each sample's prompt arrived (to place it in the table's log)."""
        self.commands = 0
        """Commands sent (a retry counts again)."""

    def sent(self, table: str) -> None:
        self.commands += 1
        self.pending[table] = time.perf_counter()

    def prompted(self, table: str) -> None:
        start = self.pending.pop(table, None)
        if start is not None:
            self.samples.append(time.perf_counter() - start)
            self.at.append(time.time())


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _sizes(opts: Options) -> dict[str, int]:
    """Workload sizes. The one-table-alone run plays ``solo_rounds`` rounds (three deals each,
    about 23 samples a deal) per table, and more tables until it has ``solo_samples`` samples;
    the stack runs have many tables in flight; each skeleton table takes ``skeleton_steps`` steps
    (about 2 s a run at the rates seen here)."""
    if opts.quick:
        return {
            "publishes": 5_000,
            "round_trips": 500,
            "paced": 50,
            "solo_rounds": 2,
            "solo_samples": 100,
            "tables": 12,
            "rounds": 1,
            "skeleton_steps": 200,
        }
    return {
        "publishes": 20_000,
        "round_trips": 2_000,
        "paced": 200,
        "solo_rounds": 32,
        "solo_samples": 2_000,
        "tables": 40,
        "rounds": 4,
        "skeleton_steps": 1_000,
    }


async def raw_publish_rate(nc: Client, messages: int, workers: int = RAW_WORKERS, *, guarded: bool = False) -> float:
    """Acked JetStream publishes per second from ``workers`` concurrent ``js.publish`` calls on
    the one connection ``nc`` (so on this event loop), to a stream configured like the event store
    (its own, so the services never see these messages). ``guarded``: each worker writes its own
    "table" with the headers ``services.store`` puts on every append (its message id, the
    expected last sequence of its subject family)."""
    js = nc.jetstream()
    config = stream_config()
    name = "RAWG" if guarded else "RAW"
    config.name, config.subjects = name, [f"{name.lower()}.>"]
    await js.add_stream(config)
    payload = b"x" * 60  # about one event
    workers = max(1, min(workers, messages))
    per_worker = messages // workers

    async def worker(w: int) -> None:
        subject = f"{name.lower()}.t{w}.card_played"
        last = 0
        for i in range(per_worker):
            headers = None
            if guarded:
                headers = {
                    "Nats-Msg-Id": f"t{w}:{i}",
                    "Nats-Expected-Last-Subject-Sequence": str(last),
                    "Nats-Expected-Last-Subject-Sequence-Subject": f"{name.lower()}.t{w}.>",
                }
            last = (await js.publish(subject, payload, headers=headers)).seq

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(workers)))
    return per_worker * workers / (time.perf_counter() - start)


async def raw_request_reply(nc: Client, url: str, count: int, paced: int = 0) -> tuple[list[float], list[float]]:
    """Round trips to an echo responder in another process: ``count`` back to back, then
    ``paced`` ones each after ``IDLE_BEFORE`` seconds of quiet (both sides asleep)."""
    proc = subprocess.Popen([sys.executable, "-c", _RESPONDER, url], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
        for _ in range(50):  # warm-up (and wait until the interest has propagated)
            try:
                await nc.request("bench.echo", b"ping", timeout=1.0)
            except Exception:
                await asyncio.sleep(0.05)
        samples, after_idle = [], []
        for _ in range(count):
            start = time.perf_counter()
            await nc.request("bench.echo", b"ping", timeout=2.0)
            samples.append(time.perf_counter() - start)
        for _ in range(paced):
            await asyncio.sleep(IDLE_BEFORE)
            start = time.perf_counter()
            await nc.request("bench.echo", b"ping", timeout=2.0)
            after_idle.append(time.perf_counter() - start)
        return samples, after_idle
    finally:
        proc.terminate()
        proc.wait()


Hook = Callable[[], Awaitable[None]]


async def run_stack(
    url: str, tables: int, rounds: int, prefix: str = "bench", *, begin: Hook | None = None, end: Hook | None = None
) -> tuple[float, int, int, Stopwatch]:
    """Play ``tables`` tables at once; returns (seconds, deals, events, stopwatch).

    ``begin`` runs once the players are connected and every service is ready, right before the
    first table opens; ``end`` right after the last table closed (before the bench reads the
    store): the window in which counters are read is the play itself."""
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

    def on_closed(table: str) -> Callable[[Msg], Awaitable[None]]:
        async def cb(msg: Msg) -> None:
            open_tables.discard(table)
            if not open_tables:
                closed.set()

        return cb

    # The log's TableClosed subject tells when a table is closed, one message per table (a
    # subscription to the public feed would add one delivery per public event to the counts).
    closing = event_name(TAGS[TableClosed])
    subs = [await nc.subscribe(log_subject(table, closing), cb=on_closed(table)) for table in sorted(open_tables)]
    await nc.flush()
    await wait_ready(url)  # every service, its recovery done: no first command to a service not yet listening
    if begin is not None:
        await begin()
    start = time.perf_counter()
    for t in range(tables):
        request = OpenTable(
            table=f"{prefix}{t}", players=[f"{prefix}{t}s{s}" for s in range(3)], rules=rules, seed=f"bench{t}"
        )
        reply: Reply = decode((await nc.request(ADMIN_OPEN, encode(request), timeout=10)).data, Reply)
        assert reply.ok, reply
    await closed.wait()
    seconds = time.perf_counter() - start
    if end is not None:
        await end()
    store = EventStore(nc)
    events = sum([len(await store.read(f"{prefix}{t}")) for t in range(tables)])
    for p in players:
        await p.stop()
    for sub in subs:
        await sub.unsubscribe()
    await nc.close()
    return seconds, tables * rules.deals, events, watch


async def collect_health(
    nc: Client, names: Iterable[str], expect: int | None = None, wait: float = HEALTH_WAIT
) -> dict[str, list[dict[str, Any]]]:
    """Every ready instance's answer to one health request per service (``nc.request`` would
    take the first answer only): collected for ``wait`` seconds or, told to ``expect`` that many
    instances of each service, until they all answered (at most ``4 * wait`` seconds)."""
    names = list(names)
    inbox = nc.new_inbox()
    answers: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    complete = asyncio.Event()

    async def on_answer(msg: Msg) -> None:
        name = msg.subject[len(inbox) + 1 :]
        try:
            answer = json.loads(msg.data)
        except ValueError:
            return
        if name in answers and isinstance(answer, dict):
            answers[name].append(answer)
            if expect is not None and all(len(got) >= expect for got in answers.values()):
                complete.set()

    sub = await nc.subscribe(f"{inbox}.*", cb=on_answer)
    try:
        for name in names:
            await nc.publish(health_subject(name), b"", reply=f"{inbox}.{name}")
        await nc.flush()
        if expect is None:
            await asyncio.sleep(wait)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(complete.wait(), 4 * wait)
    finally:
        await sub.unsubscribe()
    return answers


async def wait_instances(nc: Client, names: Iterable[str], n: int, timeout: float = 60.0) -> None:
    """Until ``n`` instances of every named service answer their health check (``wait_ready``
    returns when one of each does): the measured runs start with every process ready."""
    names = list(names)
    deadline = time.monotonic() + timeout
    while True:
        answers = await collect_health(nc, names, expect=n)
        missing = {name: n - len(got) for name, got in answers.items() if len(got) < n}
        if not missing:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"not every instance is ready after {timeout:.0f} s; missing {missing}")


async def consumer_states(nc: Client, stream: str = STREAM) -> dict[str, dict[str, int]]:
    """Every consumer of ``stream``: its redelivered, pending and unacknowledged counts."""
    js = nc.jetstream()
    states: dict[str, dict[str, int]] = {}
    while True:
        batch = await js.consumers_info(stream, offset=len(states) or None)
        for info in batch:
            states[info.name or f"#{len(states)}"] = {
                "redelivered": info.num_redelivered or 0,
                "pending": info.num_pending or 0,
                "ack_pending": info.num_ack_pending or 0,
            }
        if len(batch) < 256:  # the server's page size
            return states


@dataclass
class Counters:
    """What the bench reads right before and right after the stack run."""

    cpu: dict[str, float] = field(default_factory=dict)
    varz: dict[str, Any] = field(default_factory=dict)
    health: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    consumers: dict[str, dict[str, int]] = field(default_factory=dict)
    polls: int = 0
    """Consumer-info requests made inside the window (waiting for the consumers to go idle)."""
    idle: bool = True


async def _settle(nc: Client, counters: Counters, timeout: float = 3.0) -> None:
    """Until every consumer has delivered and seen acknowledged all it has (the last events'
    acks belong to the run), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        counters.polls += 1
        states = await consumer_states(nc)
        if all(s["pending"] == 0 and s["ack_pending"] == 0 for s in states.values()):
            return
        if time.monotonic() > deadline:
            counters.idle = False
            return
        await asyncio.sleep(0.05)


def _conflicts(
    before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]]
) -> tuple[int | None, int, int]:
    """(conflicts over the run or None if the services do not report them, append retries,
    instances that answered both times)."""

    def by_instance(answers: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(name, str(a.get("instance", i))): a for name, got in answers.items() for i, a in enumerate(got)}

    old, new = by_instance(before), by_instance(after)
    both = [key for key in new if key in old]
    if not both or any("conflicts" not in new[key] for key in both):
        return None, 0, len(both)
    conflicts = sum(int(new[k]["conflicts"]) - int(old[k]["conflicts"]) for k in both)
    retried = sum(int(new[k].get("retried", 0)) - int(old[k].get("retried", 0)) for k in both)
    return conflicts, retried, len(both)


def _profile_report(profile_dir: str, top: int = 12) -> str:
    lines = []
    for path in sorted(Path(profile_dir).glob("*.prof")):
        stats = pstats.Stats(str(path))
        total = stats.total_tt  # type: ignore[attr-defined]
        lines.append(f"\n--- {path.stem}: {total:.2f} s of CPU profiled (services profile with time.process_time)")
        entries = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
        for (file, line, func), (_, calls, tottime, cumtime, _) in entries:
            where = f"{Path(file).name}:{line}({func})"
            lines.append(f"  {tottime:7.3f}s own {cumtime:7.3f}s cum {calls:9d} calls  {where}")
    return "\n".join(lines)


def _goal(ok: bool) -> str:
    return "reached" if ok else "NOT reached"


def _pct(share: float) -> str:
    return f"{100 * share:.1f} %"


@dataclass
class StackRun:
    """One measured stack run: what it stored and cost, and what the services and the
    stream's consumers counted over it."""

    window: Window
    deals: int
    watch: Stopwatch
    redelivered: int
    consumers: int
    conflicts: int | None
    """None when the services' health answers carry no count."""
    retried: int
    answered: int
    """Service processes that answered the health check before and after the run."""
    polls: int
    idle: bool


def _stack_run(
    seconds: float, deals: int, events: int, watch: Stopwatch, before: Counters, after: Counters
) -> StackRun:
    cpu = {name: after.cpu[name] - before.cpu.get(name, 0.0) for name in after.cpu}
    msgs = {k: int(after.varz.get(k, 0)) - int(before.varz.get(k, 0)) for k in ("in_msgs", "out_msgs")}
    conflicts, retried, answered = _conflicts(before.health, after.health)
    redelivered = sum(
        s["redelivered"] - before.consumers.get(name, {}).get("redelivered", 0) for name, s in after.consumers.items()
    )
    return StackRun(
        Window(seconds, events, cpu, msgs),
        deals,
        watch,
        redelivered,
        len(after.consumers),
        conflicts,
        retried,
        answered,
        after.polls,
        after.idle,
    )


@dataclass
class Alone:
    """One table alone: every command -> next prompt sample, and the same split at the deals."""

    samples: list[float] = field(default_factory=list)
    boundary: list[float] = field(default_factory=list)
    """The prompt after a deal's last card, which waits for the next deal."""
    within: list[float] = field(default_factory=list)
    tables: int = 0
    deals: int = 0


def split_at_deals(watch: Stopwatch, log: list[Stored]) -> tuple[list[float], list[float]]:
    """(deal-boundary samples, within-deal samples) of one table's stopwatch and log: a sample
    is at the boundary when the last event stored before its prompt arrived (by the server's
    stamps, on this machine's clock) is a new deal, i.e. the command was a deal's last card and
    the prompt waited for its trick, the deal's end, its score and the next deal."""
    stamps = [stored.time for stored in log]
    kinds = [type(stored.event) for stored in log]
    boundary: list[float] = []
    within: list[float] = []
    for sample, arrived in zip(watch.samples, watch.at):
        last = bisect.bisect_right(stamps, arrived) - 1
        (boundary if last >= 0 and kinds[last] is DealDealt else within).append(sample)
    return boundary, within


async def _alone(nc: Client, url: str, size: dict[str, int]) -> Alone:
    """One table alone, table after table, until there are ``solo_samples`` samples."""
    alone = Alone()
    store = EventStore(nc)
    while len(alone.samples) < size["solo_samples"]:
        prefix = f"solo{alone.tables}"
        _, deals, _, watch = await run_stack(url, 1, size["solo_rounds"], prefix=prefix)
        boundary, within = split_at_deals(watch, await store.read(f"{prefix}0"))
        alone.samples += watch.samples
        alone.boundary += boundary
        alone.within += within
        alone.tables += 1
        alone.deals += deals
    return alone


async def _measure(opts: Options, profile_dir: str | None) -> tuple[list[Row], str]:
    size = _sizes(opts)
    tables, rounds, n = size["tables"], size["rounds"], opts.instances
    with EmbeddedServer(monitor_port=0) as server:
        nc = await nats.connect(server.url)
        await EventStore(nc).ensure_stream()
        await skeleton.ensure_stream(nc)
        raw_rate = await raw_publish_rate(nc, size["publishes"])
        raw_guarded = await raw_publish_rate(nc, size["publishes"], guarded=True)
        rr, rr_idle = await raw_request_reply(nc, server.url, size["round_trips"], size["paced"])
        env = {**os.environ, "SKAT_LOG_LEVEL": "warning"}
        if profile_dir:
            env["SKAT_PROFILE_DIR"] = profile_dir
        procs: dict[str, list[subprocess.Popen[bytes]]] = {
            name: [
                subprocess.Popen([sys.executable, "-m", "skatbus.cli", "service", name, "--nats", server.url], env=env)
                for _ in range(n)
            ]
            for name in SERVICES
        }
        pids: dict[str, list[int]] = {"nats-server": [server.pid or 0], "bench players": [os.getpid()]}
        pids.update({name: [p.pid for p in ps] for name, ps in procs.items()})
        responder: subprocess.Popen[bytes] | None = None

        def cpu_now() -> dict[str, float]:
            return {name: sum(_cpu_seconds(pid) for pid in ps) for name, ps in pids.items()}

        async def stack_run(prefix: str) -> StackRun:
            before, after = Counters(), Counters()

            async def begin() -> None:
                before.health = await collect_health(nc, SERVICES, expect=n)
                before.consumers = await consumer_states(nc)
                before.varz = await asyncio.to_thread(server.monitor, "varz")
                before.cpu = cpu_now()

            async def end() -> None:
                await _settle(nc, after)
                after.varz = await asyncio.to_thread(server.monitor, "varz")
                after.cpu = cpu_now()
                after.consumers = await consumer_states(nc)
                after.health = await collect_health(nc, SERVICES, expect=n)

            seconds, deals, events, watch = await run_stack(server.url, tables, rounds, prefix, begin=begin, end=end)
            return _stack_run(seconds, deals, events, watch, before, after)

        try:
            responder = await asyncio.to_thread(skeleton.start_responder, server.url)
            skeleton_pids = skeleton.pids_of(server, responder)
            await wait_instances(nc, SERVICES, n)
            await run_stack(server.url, 1, 1, prefix="warm")  # every service warm, every cache filled
            alone = await _alone(nc, server.url, size)
            steps = size["skeleton_steps"]
            await skeleton.run_tables(nc, server, tables, max(10, steps // 5), "skw", skeleton_pids)  # warm-up
            # A/B/A/B: the skeleton right before each stack run, on the same server.
            skeleton_runs: list[Window] = []
            stack_runs: list[StackRun] = []
            for tag in "ab":
                skeleton_runs.append(await skeleton.run_tables(nc, server, tables, steps, f"sk{tag}", skeleton_pids))
                stack_runs.append(await stack_run(f"bench{tag}"))
        finally:
            await nc.close()
            stop_processes([p for ps in procs.values() for p in ps])
            if responder is not None:
                skeleton.stop_responder(responder)
    rows = _rows(
        size=size,
        instances=n,
        raw_rate=raw_rate,
        raw_guarded=raw_guarded,
        rr=rr,
        rr_idle=rr_idle,
        alone=alone,
        skeleton_runs=skeleton_runs,
        stack_runs=stack_runs,
        processes={name: len(ps) for name, ps in pids.items()},
    )
    report = _profile_report(profile_dir) if profile_dir else ""
    return rows, report


def _sum(windows: Iterable[Window]) -> Window:
    total = Window(0.0, 0)
    for w in windows:
        total = total + w
    return total


def _drift(later: float, first: float) -> str:
    return f"{100 * (later / first - 1):+.1f} %"


def _rows(
    *,
    size: dict[str, int],
    instances: int,
    raw_rate: float,
    raw_guarded: float,
    rr: list[float],
    rr_idle: list[float],
    alone: Alone,
    skeleton_runs: list[Window],
    stack_runs: list[StackRun],
    processes: dict[str, int],
) -> list[Row]:
    tables = size["tables"]
    skel = _sum(skeleton_runs)
    stack = _sum(run.window for run in stack_runs)
    events, seconds = stack.events, stack.seconds
    deals = sum(run.deals for run in stack_runs)
    per_deal = events / deals
    ceiling = raw_rate / per_deal
    rate = deals / seconds
    share = rate / ceiling
    floor_share = stack.rate / skel.rate
    commands = sum(run.watch.commands for run in stack_runs)
    per_command = events / commands if commands else float("nan")
    command_share = floor_share / per_command
    rr50, rr99 = _percentile(rr, 0.5), _percentile(rr, 0.99)
    order = {id(w): 2 * i + 1 for i, w in enumerate(skeleton_runs)}
    order.update({id(r.window): 2 * i + 2 for i, r in enumerate(stack_runs)})
    runs = 2 * len(stack_runs)
    rows = [
        Row(
            f"raw acked JetStream publishes, {RAW_WORKERS} in flight, no headers",
            raw_rate,
            "msgs/s",
            note=f"one nats-py connection on the bench's event loop, {RAW_WORKERS} concurrent js.publish"
            " of 60 B, each to its own subject; file storage",
        ),
        Row(
            f"raw acked JetStream publishes, {RAW_WORKERS} in flight, guard headers",
            raw_guarded,
            "msgs/s",
            relative=raw_guarded / raw_rate,
            vs=f"{_pct(raw_guarded / raw_rate)} of the unguarded",
            note="the same with Nats-Msg-Id and Nats-Expected-Last-Subject-Sequence(-Subject),"
            " as on every append of the stack",
        ),
        Row(
            "raw ceiling",
            ceiling,
            "deals/s",
            note=f"unguarded raw publishes / {per_deal:.1f} stored events per deal: appends alone,"
            " no request/reply, no prompt",
        ),
    ]
    for i, w in enumerate(skeleton_runs):
        rows.append(
            Row(
                f"skeleton stored events/s, run {order[id(w)]} of {runs}",
                w.rate,
                "events/s",
                vs="" if i == 0 else f"baseline drift {_drift(w.rate, skeleton_runs[0].rate)} from run 1",
                note=f"{w.events} events at {tables} tables in {w.seconds:.2f} s;"
                " per event: command request, guarded append, reply, prompt; no game logic;"
                " the services idle on the same server",
            )
        )
    for i, run in enumerate(stack_runs):
        w = run.window
        vs = f"= {_pct(w.rate / skeleton_runs[i].rate)} of skeleton run {order[id(skeleton_runs[i])]}"
        if i:
            vs += f"; drift {_drift(w.rate, stack_runs[0].window.rate)} from run 2"
        rows.append(
            Row(
                f"stack stored events/s, run {order[id(w)]} of {runs}",
                w.rate,
                "events/s",
                relative=w.rate / skeleton_runs[i].rate,
                vs=vs,
                note=f"{w.events} events, {run.deals} deals at {tables} tables in {w.seconds:.2f} s",
            )
        )
    rows.append(
        Row(
            SHARE_LABEL,
            100 * floor_share,
            "%",
            relative=floor_share,
            vs=f"goal >= {_pct(FLOOR_SHARE_GOAL)} (issue 22): {_goal(floor_share >= FLOOR_SHARE_GOAL)}",
            note=f"runs summed: stack {stack.rate:,.0f} events/s, skeleton {skel.rate:,.0f} events/s,"
            f" both with {tables} tables in flight, {instances} process{'es' if instances > 1 else ''} per service;"
            f" the stack stores {per_command:.2f} events per command (tricks, deal ends, scores, deals are"
            f" appended without one), the skeleton 1: per command the stack reaches {_pct(command_share)}",
        )
    )
    rows += [
        Row(
            "stack deals/s",
            rate,
            "deals/s",
            relative=share,
            vs=f"= {_pct(share)} of the raw ceiling (goal >= {_pct(CEILING_SHARE_GOAL)}): {_goal(share >= CEILING_SHARE_GOAL)}",
            note=f"{deals} deals at {tables} tables in {seconds:.1f} s over {len(stack_runs)} runs,"
            f" {instances} process{'es' if instances > 1 else ''} per service",
        ),
        Row(
            "raw request/reply p50",
            rr50 * 1e6,
            "us",
            vs="the unit of the latency goals",
            note=f"{len(rr)} round trips to a responder in another process",
        ),
        Row(
            "raw request/reply p99",
            rr99 * 1e6,
            "us",
            relative=rr99 / rr50,
            vs=times(rr99 / rr50, "raw request/reply p50"),
        ),
    ]
    if rr_idle:
        idle50 = _percentile(rr_idle, 0.5)
        rows.append(
            Row(
                f"raw request/reply p50, each after {IDLE_BEFORE * 1e3:.0f} ms idle",
                idle50 * 1e6,
                "us",
                relative=idle50 / rr50,
                vs=times(idle50 / rr50, "raw request/reply p50"),
                note=f"{len(rr_idle)} round trips; what waking idle processes costs here, for reading"
                " the one-table figures (their steps wake processes that slept), not a goal unit",
            )
        )

    def latency(name: str, samples: list[float], q: float, goal: float | None, note: str) -> Row:
        value = _percentile(samples, q) if samples else float("nan")
        multiple = value / rr50
        vs = times(multiple, "raw request/reply p50")
        if goal is not None:
            vs += f" (goal <= {goal:.0f}x): {_goal(multiple <= goal)}"
        return Row(name, value * 1e6, "us", relative=multiple, vs=vs, note=note)

    solo = f"{alone.tables} table{'s' if alone.tables > 1 else ''} one after another, {alone.deals} deals"
    loaded = [s for run in stack_runs for s in run.watch.samples]
    rows += [
        latency(
            "command -> next prompt p50, one table alone",
            alone.samples,
            0.5,
            LATENCY_P50_GOAL,
            f"{len(alone.samples)} samples, {solo}",
        ),
        latency(
            "command -> next prompt p99, one table alone",
            alone.samples,
            0.99,
            LATENCY_P99_GOAL,
            f"{len(alone.samples)} samples; {_percentile(alone.samples, 0.99) / rr99:.1f}x raw request/reply p99",
        ),
        latency(
            "command -> next prompt median at the deal boundary, one table alone",
            alone.boundary,
            0.5,
            None,
            f"{len(alone.boundary)} samples: the prompt after a deal's last card (its trick, the deal's end,"
            " its score and the next deal: five appends through play, scoring and the dealer)",
        ),
        latency(
            "command -> next prompt p99 within a deal, one table alone",
            alone.within,
            0.99,
            None,
            f"{len(alone.within)} samples: every one but the deal boundaries",
        ),
        latency(
            f"command -> next prompt p50, {tables} tables",
            loaded,
            0.5,
            None,
            f"{len(loaded)} samples over the stack runs; under full load: mostly queueing, no goal",
        ),
        latency(f"command -> next prompt p99, {tables} tables", loaded, 0.99, None, f"{len(loaded)} samples"),
    ]

    # Messages through the server, from its own counters.
    polls = sum(run.polls for run in stack_runs)
    for direction, key in (("into", "in_msgs"), ("out of", "out_msgs")):
        per_event = stack.msgs[key] / events
        goal = MESSAGES_BEFORE[direction] / 2
        rows.append(
            Row(
                f"messages {direction} the server per stored event",
                per_event,
                "msgs",
                relative=per_event / MESSAGES_BEFORE[direction],
                vs=f"goal <= {goal:.1f} (half of {MESSAGES_BEFORE[direction]:g} before issue 13): {_goal(per_event <= goal)}",
                note=f"skeleton {skel.msgs[key] / skel.events:.2f}; {stack.msgs[key] / deals:.0f} per deal;"
                f" nats-server /varz {key} over the stack runs, the bench's {polls} consumer-info"
                f" request{'s' if polls > 1 else ''} included",
            )
        )

    # Conflicts and redeliveries over the stack runs.
    counted = [run.conflicts for run in stack_runs]
    conflicts = None if None in counted else sum(c for c in counted if c is not None)
    retried = sum(run.retried for run in stack_runs)
    answered = min(run.answered for run in stack_runs)
    expected = sum(processes[name] for name in SERVICES)
    redelivered = sum(run.redelivered for run in stack_runs)
    per_1000 = 1000 / events
    if conflicts is None:
        rows.append(
            Row(
                "conflicts per 1,000 stored events",
                float("nan"),
                "",
                vs="not measured",
                note="the services' health answers carry no 'conflicts' count;"
                f" health answers of {answered} of {expected} service processes",
            )
        )
    else:
        rows.append(
            Row(
                "conflicts per 1,000 stored events",
                conflicts * per_1000,
                "",
                note=f"{conflicts} appends beaten by another writer, {retried} append retries;"
                f" health answers of {answered} of {expected} service processes",
            )
        )
    idle = all(run.idle for run in stack_runs)
    rows.append(
        Row(
            "redeliveries per 1,000 stored events",
            redelivered * per_1000,
            "",
            note=f"{redelivered} over {stack_runs[-1].consumers} consumers of stream {STREAM} (num_redelivered)"
            + ("" if idle else "; consumers still busy 3 s after the last table closed"),
        )
    )
    if conflicts is not None:
        faults = (conflicts + redelivered) * per_1000
        rows.append(
            Row(
                "conflicts + redeliveries per 1,000 stored events",
                faults,
                "",
                vs=f"goal <= {FAULTS_PER_1000_GOAL:g}: {_goal(faults <= FAULTS_PER_1000_GOAL)}",
            )
        )

    # CPU: per process (a service's instances summed), in total; then the skeleton's.
    cpu = stack.cpu
    total_cpu = sum(cpu.values())
    services_cpu = sum(cpu[name] for name in SERVICES)
    rows.append(Row("CPU used / wall time", total_cpu / seconds, "cores", note=f"{os.cpu_count()} cores here"))
    total_us = 1e6 * total_cpu / events
    skel_us = 1e6 * sum(skel.cpu.values()) / skel.events
    note = f"nats-server, bench players and services; the skeleton's {skel_us:.0f} us"
    if instances > 1:
        note += "; goal with instances: within 10 % of a --instances 1 run's figure"
    rows.append(
        Row(
            "CPU us per stored event, all processes",
            total_us,
            "us",
            vs=f"goal <= {CPU_PER_EVENT_GOAL_US:.0f} us: {_goal(total_us <= CPU_PER_EVENT_GOAL_US)}",
            note=note,
        )
    )
    served = services_cpu + cpu.get("nats-server", 0.0)
    skel_served = sum(skel.cpu.values()) - skel.cpu.get("skeleton players", 0.0)
    rows.append(
        Row(
            "CPU us per stored event, services + server",
            1e6 * served / events,
            "us",
            note=f"without the bench players; the skeleton's responder + server {1e6 * skel_served / skel.events:.0f} us",
        )
    )
    for name, used in sorted(cpu.items(), key=lambda kv: -kv[1]):
        count = processes[name]
        label = f"  {name}" + (f" ({count} processes)" if count > 1 else "")
        share_cpu = 100 * used / total_cpu if total_cpu else 0.0
        rows.append(
            Row(label, 1e6 * used / events, "us", note=f"CPU us per stored event, {share_cpu:.0f} % of the CPU used")
        )
    rows += skeleton.cost_rows(skel, "skeleton", f"s {' and '.join(str(order[id(w)]) for w in skeleton_runs)}")
    return rows


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
