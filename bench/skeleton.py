"""The ``skeleton`` section: the protocol's minimal message pattern, with no game logic at all.

Why: the stack's throughput means little on its own (a faster machine, a quieter neighbour,
another nats-server version all move it). What it is compared with must pay for the same
messages on the same machine in the same run: the *floor* of the protocol's own pattern. Per
step of a table:

1. a player sends a command request (``skel.cmd.<player>.<table>``, reply to its own
   ``_INBOX.<player>.…``) to a responder in another Python process, as to a service;
2. the responder appends one event to the table's log subject
   (``skel.log.<table>.step.<partition>``) with the headers ``services.store`` sends on every
   append: ``Nats-Msg-Id`` ``<table>:<index>``, ``Nats-Expected-Last-Subject-Sequence`` and
   ``…-Subject`` over the table's subject family; to stream ``SKEL``, configured by
   ``services.store.stream_config`` (file storage, duplicate window, direct gets), only its
   name and subjects differ;
3. once the append is acknowledged, it replies to the player's inbox and publishes the next
   seat's prompt (``skel.view.<player>.<table>``);
4. that player, prompted, sends the next command.

Tables are independent and run all at once (the bench gives the stack's table count); within a
table every step waits for the one before, as a game does. The responder is as lean as nats-py
allows: no task, timer or time-out per command, one wildcard inbox for every append's
acknowledgement with a dict of what each one is for, and plain publishes for the reply and the
prompt. So the figures are what the pattern itself costs on this machine, which the stack can
approach but not beat: stored events/s (counted in the stream, not by the responder), CPU us per
stored event of every process (nats-server, the players in the bench process, the responder) and
messages into and out of nats-server per stored event (``/varz``).

The ``pipeline`` section runs this next to the stack on the same server (A/B/A/B) and reports the
stack as a share of it; ``python -m bench skeleton`` runs it alone. The responder is this module
run as a program: ``python -m bench.skeleton <nats-url>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import nats
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import StreamConfig
from nats.js.errors import NotFoundError

from protocol.subjects import partition_of
from services.children import popen
from services.natsserver import EmbeddedServer
from services.store import stream_config

from . import Options, Row

STREAM = "SKEL"
PREFIX = "skel"
COMMAND = b"C" * 24
LAST_COMMAND = b"L" * 24
"""A table's last command: the responder appends and replies but prompts nobody."""
EVENT = b"e" * 60
"""About one stored event (msgpack ``card_played``)."""
REPLY = b"\x81\xa2ok\xc3"
"""msgpack ``{"ok": true}``, about what the services answer a command with."""
PROMPT = b"p" * 200
"""About one seat's turn prompt (msgpack ``Update``)."""
SEATS = 3


def player_id(table: str, seat: int) -> str:
    return f"{table}s{seat}"


def stream_config_skel() -> StreamConfig:
    """``services.store.stream_config`` with this section's name and subjects."""
    config = stream_config()
    config.name, config.subjects = STREAM, [f"{PREFIX}.log.>"]
    return config


# --------------------------------------------------------------------------- the responder


class _PubAck(msgspec.Struct):
    """JetStream's answer to a publish (what ``services.store`` decodes too)."""

    seq: int = 0
    duplicate: bool = False
    error: dict[str, object] | None = None


class Responder:
    """One process's worth of "service": guarded append, reply, prompt; nothing else."""

    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.tables: dict[str, list[int]] = {}
        """table -> [index of its next event, stream sequence of its last one]."""
        self.inbox = nc.new_inbox()
        self.waiting: dict[str, tuple[str, str, str | None]] = {}
        """ack subject -> (table, the player's reply subject, the next prompt's subject)."""
        self.sent = 0
        self.appended = 0
        self.refused = 0
        self._decode = msgspec.json.Decoder(_PubAck).decode

    async def start(self) -> None:
        await self.nc.subscribe(f"{self.inbox}.*", cb=self.on_ack)
        await self.nc.subscribe(f"{PREFIX}.cmd.*.*", cb=self.on_command)
        await self.nc.flush()

    async def on_command(self, msg: Msg) -> None:
        table = msg.subject.rpartition(".")[2]
        state = self.tables.get(table)
        if state is None:
            state = self.tables[table] = [0, 0]
        index, last = state
        self.sent += 1
        ack = f"{self.inbox}.{self.sent}"
        prompt = None if msg.data == LAST_COMMAND else f"{PREFIX}.view.{player_id(table, (index + 1) % SEATS)}.{table}"
        self.waiting[ack] = (table, msg.reply, prompt)
        headers = {
            "Nats-Msg-Id": f"{table}:{index}",
            "Nats-Expected-Last-Subject-Sequence": str(last),
            "Nats-Expected-Last-Subject-Sequence-Subject": f"{PREFIX}.log.{table}.>",
        }
        await self.nc.publish(f"{PREFIX}.log.{table}.step.{partition_of(table)}", EVENT, reply=ack, headers=headers)

    async def on_ack(self, msg: Msg) -> None:
        entry = self.waiting.pop(msg.subject, None)
        if entry is None:
            return
        table, reply, prompt = entry
        ack = self._decode(msg.data)
        if ack.error is not None or ack.duplicate or not ack.seq:  # a duplicate stored nothing
            self.refused += 1
            await self.nc.publish(reply, b"refused: " + msg.data[:200])
            return
        self.appended += 1
        state = self.tables[table]
        state[0] += 1
        state[1] = ack.seq
        await self.nc.publish(reply, REPLY)
        if prompt is not None:
            await self.nc.publish(prompt, PROMPT)


async def _serve(url: str) -> None:
    async def quiet(exc: Exception) -> None:
        """The failure is reported once, by ``_main``; nats-py would log each with a traceback."""

    # A bench process: no reconnects (a server gone means the run is over); nats-py keeps
    # trying a first connection that fails, hence the time limit.
    nc = await asyncio.wait_for(nats.connect(url, allow_reconnect=False, connect_timeout=2, error_cb=quiet), 5.0)
    await Responder(nc).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


def start_responder(url: str) -> subprocess.Popen[bytes]:
    """The responder process, once it listens (it prints "ready")."""
    proc = popen([sys.executable, "-m", "bench.skeleton", url], stdout=subprocess.PIPE)  # dies with us
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != b"ready":
        proc.kill()
        proc.wait()
        raise RuntimeError(f"the skeleton's responder did not start (said {line[:200]!r})")
    return proc


def stop_responder(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --------------------------------------------------------------------------- the players


class Players:
    """Every seat of every table, on one connection as the stack's bench players are: each
    with its own view subscription and reply inbox."""

    def __init__(self, nc: Client, tables: list[str], steps: int) -> None:
        self.nc = nc
        self.tables = tables
        self.steps = steps
        self.sent: dict[str, int] = dict.fromkeys(tables, 0)
        self.answered: dict[str, int] = dict.fromkeys(tables, 0)
        self.refusals: list[bytes] = []
        self.open = len(tables)
        self.done = asyncio.Event()
        self._subs: list[object] = []
        self._inbox: dict[str, str] = {}
        self._n = 0

    async def start(self) -> None:
        for table in self.tables:
            for seat in range(SEATS):
                player = player_id(table, seat)
                inbox = f"_INBOX.{player}.{secrets.token_hex(6)}"
                self._inbox[player] = inbox
                self._subs.append(await self.nc.subscribe(f"{inbox}.*", cb=self._on_reply))
                self._subs.append(await self.nc.subscribe(f"{PREFIX}.view.{player}.*", cb=self._on_prompt))
        await self.nc.flush()

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()  # type: ignore[attr-defined]

    async def begin(self) -> None:
        """Every table's first command, from its seat 0 (no prompt comes before it)."""
        for table in self.tables:
            await self._command(player_id(table, 0), table)

    async def _command(self, player: str, table: str) -> None:
        self.sent[table] += 1
        self._n += 1
        data = LAST_COMMAND if self.sent[table] == self.steps else COMMAND
        await self.nc.publish(f"{PREFIX}.cmd.{player}.{table}", data, reply=f"{self._inbox[player]}.{self._n}")

    async def _on_prompt(self, msg: Msg) -> None:
        _, _, player, table = msg.subject.split(".")
        if self.sent[table] < self.steps:
            await self._command(player, table)

    async def _on_reply(self, msg: Msg) -> None:
        if msg.data != REPLY:
            self.refusals.append(msg.data)
        table = msg.subject.split(".")[1].rpartition("s")[0]
        self.answered[table] += 1
        if self.answered[table] == self.steps:
            self.open -= 1
            if not self.open:
                self.done.set()


# --------------------------------------------------------------------------- measuring


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process used so far, all its threads (Linux /proc), 0
    where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass
class Window:
    """What one measured run did and cost, from counters read right before and right after it."""

    seconds: float
    events: int
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds per process group (nats-server, the players, the responder or services)."""
    msgs: dict[str, int] = field(default_factory=dict)
    """``in_msgs`` and ``out_msgs`` of nats-server's ``/varz`` over the run."""

    @property
    def rate(self) -> float:
        return self.events / self.seconds

    def __add__(self, other: Window) -> Window:
        cpu = {k: self.cpu.get(k, 0.0) + other.cpu.get(k, 0.0) for k in self.cpu.keys() | other.cpu.keys()}
        msgs = {k: self.msgs.get(k, 0) + other.msgs.get(k, 0) for k in self.msgs.keys() | other.msgs.keys()}
        return Window(self.seconds + other.seconds, self.events + other.events, cpu, msgs)


def varz_msgs(server: EmbeddedServer) -> dict[str, int]:
    varz = server.monitor("varz")
    return {k: int(varz.get(k, 0)) for k in ("in_msgs", "out_msgs")}


async def stored(nc: Client) -> int:
    """Messages in the ``SKEL`` stream: what the appends stored, counted by the server."""
    info = await nc.jetstream().stream_info(STREAM)
    return int(info.state.messages)


async def ensure_stream(nc: Client) -> None:
    js = nc.jetstream()
    try:
        await js.stream_info(STREAM)
    except NotFoundError:
        await js.add_stream(stream_config_skel())


async def run_tables(
    nc: Client,
    server: EmbeddedServer,
    tables: int,
    steps: int,
    prefix: str,
    pids: dict[str, int],
    timeout: float = 120.0,
) -> Window:
    """Play ``tables`` skeleton tables of ``steps`` steps each, all at once, through the
    responder already running; the counters are read right before the first command and right
    after the last reply. ``pids`` names the processes whose CPU is counted."""
    players = Players(nc, [f"{prefix}{t}" for t in range(tables)], steps)
    await players.start()
    try:
        before_stored = await stored(nc)
        before_msgs = await asyncio.to_thread(varz_msgs, server)
        before_cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        start = time.perf_counter()
        await players.begin()
        try:
            await asyncio.wait_for(players.done.wait(), timeout)
        except TimeoutError:
            left = {t: steps - n for t, n in players.answered.items() if n < steps}
            raise RuntimeError(f"skeleton tables unfinished after {timeout:.0f} s: {len(left)} left") from None
        seconds = time.perf_counter() - start
        after_cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
        after_msgs = await asyncio.to_thread(varz_msgs, server)
        events = await stored(nc) - before_stored
    finally:
        await players.stop()
    if players.refusals:
        raise RuntimeError(f"{len(players.refusals)} skeleton appends refused, e.g. {players.refusals[0][:200]!r}")
    if events != tables * steps:
        raise RuntimeError(f"the skeleton stored {events} events for {tables * steps} acknowledged appends")
    return Window(
        seconds,
        events,
        {name: after_cpu[name] - before_cpu[name] for name in pids},
        {k: after_msgs[k] - before_msgs[k] for k in after_msgs},
    )


def sizes(opts: Options) -> dict[str, int]:
    """The stack's table count (``pipeline``'s sizes) and the steps each skeleton table takes:
    enough for a couple of seconds at the rates seen here."""
    from .pipeline import _sizes

    size = _sizes(opts)
    return {"tables": size["tables"], "steps": size.get("skeleton_steps", 200 if opts.quick else 1000)}


def rate_row(window: Window, label: str, tables: int, vs: str = "") -> Row:
    """Stored events/s of one run (or of several, summed)."""
    return Row(
        f"{label} stored events/s",
        window.rate,
        "events/s",
        vs=vs,
        note=f"{window.events} events at {tables} tables in {window.seconds:.2f} s",
    )


def cost_rows(window: Window, label: str, servers_note: str = "") -> list[Row]:
    """Messages into and out of the server and CPU per stored event, per process and in total."""
    out = []
    for direction, key in (("into", "in_msgs"), ("out of", "out_msgs")):
        out.append(
            Row(
                f"{label} messages {direction} the server per stored event",
                window.msgs.get(key, 0) / window.events,
                "msgs",
                note=f"nats-server /varz {key} over the run{servers_note}",
            )
        )
    total = sum(window.cpu.values())
    without = total - window.cpu.get("skeleton players", 0.0)
    out.append(
        Row(
            f"{label} CPU us per stored event, all processes",
            1e6 * total / window.events,
            "us",
            note=f"responder + server, without the players: {1e6 * without / window.events:.0f} us;"
            f" {total / window.seconds:.2f} of {os.cpu_count()} cores busy",
        )
    )
    for name, used in sorted(window.cpu.items(), key=lambda kv: -kv[1]):
        share = 100 * used / total if total else 0.0
        out.append(
            Row(
                f"  {name}",
                1e6 * used / window.events,
                "us",
                note=f"CPU us per stored event, {share:.0f} % of the CPU used",
            )
        )
    return out


def pids_of(server: EmbeddedServer, responder: subprocess.Popen[bytes]) -> dict[str, int]:
    """The processes whose CPU a skeleton run counts."""
    return {"nats-server": server.pid or 0, "skeleton players": os.getpid(), "skeleton responder": responder.pid}


async def _measure(opts: Options) -> list[Row]:
    size = sizes(opts)
    with EmbeddedServer(monitor_port=0) as server:
        nc = await nats.connect(server.url)
        proc: subprocess.Popen[bytes] | None = None
        try:
            await ensure_stream(nc)
            proc = await asyncio.to_thread(start_responder, server.url)
            pids = pids_of(server, proc)
            await run_tables(nc, server, size["tables"], max(10, size["steps"] // 5), "skw", pids)  # warm-up
            window = await run_tables(nc, server, size["tables"], size["steps"], "sk", pids)
        finally:
            await nc.close()
            if proc is not None:
                stop_responder(proc)
    return [rate_row(window, "skeleton", size["tables"]), *cost_rows(window, "skeleton")]


def run(opts: Options) -> list[Row]:
    from .pipeline import _run

    result: list[Row] = _run(_measure(opts))
    return result


def _main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].startswith(("nats://", "tls://")):
        print("usage: python -m bench.skeleton nats://HOST:PORT  (the skeleton's responder process)", file=sys.stderr)
        return 2
    from services.main import _run as run_like_a_service  # uvloop when installed, as the services

    try:
        with contextlib.suppress(KeyboardInterrupt):
            run_like_a_service(_serve(argv[0]))
    except (OSError, TimeoutError, nats.errors.Error) as exc:
        print(f"skeleton responder: cannot serve on {argv[0]}: {exc!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
