"""``skat check-bot ID``: does a remote bot play the protocol the way the platform uses it?

A bot author starts their bot separately, as player ``ID``, connected through a relay that
check-bot opens on 127.0.0.1 (so that check-bot can drop the bot's connection, and only the
bot's). check-bot then opens one table per check with the bot and two built-in bots, and
watches every message to and from the bot: its updates, commands, replies and hellos. Its own
connection is a services' one (no user in the embedded stack, ``skat-services`` with ``skat
auth``), which may see all of them, and which also lets it act as the platform: it sends a
prompt twice, sends a prompt the table has already moved past, and cuts the bot's connection
just before a prompt goes out. The two built-in bots are check-bot's own, so it can hold a table
still (by keeping one of them thinking) while it watches what the bot does.

The report says, per check, what was expected, what happened and what to fix. Exit code 0 when
every check passed (or was skipped), 1 when one failed, 2 when the checks could not run at all
(a usage mistake, an unreachable server).

``python -m skatbus.check_bot --transcript`` records one short deal as the messages a JSON
player sends and receives: the example in docs/protocol.md (``--write FILE`` puts it there).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import re
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn, TextIO
from urllib.parse import urlsplit

import msgspec
import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol.commands import Bid, Pass
from protocol.events import MSGPACK, DealScored, Event, PlayerTimedOut, TableClosed, UnknownEvent
from protocol.rules import Rules
from protocol.subjects import (
    ADMIN_OPEN,
    check_token,
    hello_subject,
    is_inbox,
    parse_command_subject,
    parse_view_subject,
    public_subject,
    view_subject,
)
from protocol.wire import Hello, OpenTable, Reply, Update, decode, decode_command, encode, sniff
from services.connection import ConnectionSettings, SettingsError, from_args, open_connection
from services.connection import add_arguments as add_connection_arguments
from services.main import LocalStack, wait_ready
from services.store import patiently

from .bots import HashedBot
from .player import RETRY_CODES, RemotePlayer

CHECKS: Final[dict[str, str]] = {
    "connect": "connects to the server",
    "hello": "says hello when it connects",
    "inbox": "asks for every reply in its own inbox",
    "msgpack": "answers prompts sent in msgpack",
    "json": "answers prompts sent in JSON",
    "at": "stamps every command with the index of its prompt",
    "refusals": "sends only commands the table accepts",
    "repeat": "answers a prompt sent twice only once",
    "stale": "lets a superseded prompt go after its stale refusal",
    "reconnect": "says hello after a dropped connection and answers the prompt it missed",
    "deadline": "answers within a short deadline",
}
"""Every check, in the order of the report."""
TABLE_CHECKS: Final = ("msgpack", "json", "repeat", "stale", "reconnect", "deadline")
"""The checks that play a table of their own (``--only`` chooses among them; the others judge
the traffic of whichever tables ran)."""
TURN_SECONDS: Final = 10.0
RECONNECT_TURN_SECONDS: Final = 20.0
"""Room for a client's reconnect back-off (2 s by default in nats.go, nats.js and nats-py)."""
HELLO_WAIT: Final = 10.0
WATCH: Final = 1.5
"""Seconds a table is held still while check-bot watches the bot's reaction to what it sent."""
TABLE_LIMIT: Final = 120.0
MOVED_ON: Final = frozenset({"stale", "no_deal", "table_closed", "not_seated", "out_of_turn"})
"""What a command for a prompt the table has moved past is answered: stale, unless the deal or
the table ended first, or the service that judged it had not read the latest event yet (then
the old position looks current, and the command is out of turn). Not the bot's mistake when
the prompt was superseded."""

INBOX_FIX: Final = (
    'connect with the inbox prefix _INBOX.{id} (nats.go: nats.CustomInboxPrefix("_INBOX.{id}"), nats.js: '
    'inboxPrefix: "_INBOX.{id}", nats-py: inbox_prefix="_INBOX.{id}"): the services answer only into '
    "_INBOX.{id}.…, and with skat auth the server lets you subscribe to nothing else, so without it every "
    "request times out"
)
MSGPACK_FIX: Final = (
    'decode msgpack updates (the default encoding), or ask for JSON: send {{"format": "json"}} as the body '
    "of your hello before your first table opens; if your operator seats you with JSON updates (skat tournament "
    "--remote {id}:json), run check-bot with --json"
)
JSON_FIX: Final = (
    "read JSON updates: they leave out every field at its default (your_turn false, legal empty, deadline 0, "
    "index 0, ...), so read a missing field as its default; event types in history carry a version "
    "(card_played/1)"
)
AT_FIX: Final = 'add "at": <the prompt\'s index> to every command (update.index of the prompt it answers)'
LEGAL_FIX: Final = (
    'answer only prompts (your_turn true) and pick one of view.legal, unchanged but for "at" (resign and '
    "show are the only commands allowed that are not listed)"
)
HELLO_FIX: Final = (
    "after connecting and after every reconnect, send a request to skat.hello.{id} (empty body, or "
    '{{"format": "json"}} / {{"format": "msgpack"}}), once your subscription to skat.view.{id}.* is in place'
)
DEDUPE_FIX: Final = (
    "remember the highest prompt index you answered (per table) and ignore a prompt at or below it: the "
    "services send a pending prompt again after a reconnect (yours or theirs) and after every hello"
)
STALE_FIX: Final = (
    "treat stale as final: the table has moved past that prompt, drop it (retry only busy, unavailable, "
    "rate_limited and no_table; stale after your own retry means the first attempt landed)"
)
RECONNECT_FIX: Final = (
    "reconnect forever with a short wait (nats.go: nats.MaxReconnects(-1), nats.js: maxReconnectAttempts: -1, "
    "nats-py: max_reconnect_attempts=-1)"
)
DEADLINE_FIX: Final = (
    "answer well before update.deadline (Unix time in seconds, not milliseconds): tables may give as little "
    "as {short:g} s per move"
)


class CheckError(Exception):
    """The checks cannot go on (a refused table, a server that went away): one line for the user."""


# --- what check-bot sees -------------------------------------------------------------------


@dataclass
class Prompt:
    """An update with ``your_turn``, sent to the bot by the services or by check-bot."""

    table: str
    index: int
    t: float
    fmt: str
    data: bytes
    update: Update
    by_checker: bool = False


@dataclass
class Answer:
    t: float
    ok: bool
    code: str = ""
    reason: str = ""


@dataclass
class Sent:
    """A command the bot sent, and the services' answer once seen."""

    table: str
    t: float
    fmt: str
    data: bytes
    reply_to: str
    command: Any = None
    error: str = ""
    answer: Answer | None = None

    @property
    def at(self) -> int:
        return int(getattr(self.command, "at", -1)) if self.command is not None else -1

    def describe(self) -> str:
        """The command as the bot sent it (JSON, or msgpack shown as JSON), shortened."""
        if self.command is None:
            return f"unreadable command {self.data[:60]!r}"
        text = msgspec.json.encode(self.command).decode()
        return f"{text[:120]} ({self.fmt})"


@dataclass
class HelloSeen:
    t: float
    data: bytes
    reply_to: str
    answer: dict[str, Any] | None = None


@dataclass
class Traffic:
    """Every message to and from one player, as check-bot's connection sees it (in order)."""

    nc: Client
    player: str
    prompts: dict[str, list[Prompt]] = field(default_factory=dict)
    """Prompts the services sent, per table (a prompt sent again shows again)."""
    by_checker: dict[str, list[Prompt]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    hellos: list[HelloSeen] = field(default_factory=list)
    events: dict[str, list[tuple[int, Event | UnknownEvent]]] = field(default_factory=dict)
    log: list[tuple[str, str, str, bytes]] = field(default_factory=list)
    """(``send`` or ``receive``, subject, reply subject, data) from the player's side, in order."""
    on_prompt: dict[str, Callable[[Prompt], Awaitable[None]]] = field(default_factory=dict)
    _waiting: dict[str, Sent | HelloSeen] = field(default_factory=dict)
    _subs: list[Any] = field(default_factory=list)

    async def start(self) -> None:
        p = self.player
        for subject, cb in (
            (f"skat.view.{p}.*", self._on_view),
            (f"skat.cmd.{p}.*", self._on_command),
            (f"_INBOX.{p}.>", self._on_inbox),
            (hello_subject(p), self._on_hello),
        ):
            self._subs.append(await self.nc.subscribe(subject, cb=cb))
        await self.nc.flush()

    async def watch(self, table: str) -> None:
        """Follow a table's public feed (its events, to see time-outs and ends)."""
        self.events.setdefault(table, [])
        self._subs.append(await self.nc.subscribe(public_subject(table), cb=self._on_public))
        await self.nc.flush()

    async def stop(self) -> None:
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()

    async def _on_view(self, msg: Msg) -> None:
        try:
            _, table = parse_view_subject(msg.subject)
            update: Update = decode(msg.data, Update)
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
            return
        self.log.append(("receive", msg.subject, "", msg.data))
        if update.your_turn:
            prompt = Prompt(table, update.index, time.time(), sniff(msg.data), msg.data, update)
            self.prompts.setdefault(table, []).append(prompt)
            hook = self.on_prompt.get(table)
            if hook is not None:
                await hook(prompt)

    async def _on_command(self, msg: Msg) -> None:
        try:
            _, table = parse_command_subject(msg.subject)
        except ValueError:
            return
        sent = Sent(table, time.time(), sniff(msg.data), msg.data, msg.reply or "")
        try:
            sent.command, _ = decode_command(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            sent.error = str(exc)[:200]
        self.sent.append(sent)
        self.log.append(("send", msg.subject, msg.reply or "", msg.data))
        if msg.reply:
            self._waiting[msg.reply] = sent

    async def _on_hello(self, msg: Msg) -> None:
        hello = HelloSeen(time.time(), msg.data, msg.reply or "")
        self.hellos.append(hello)
        self.log.append(("send", msg.subject, msg.reply or "", msg.data))
        if msg.reply:
            self._waiting[msg.reply] = hello

    async def _on_inbox(self, msg: Msg) -> None:
        asked = self._waiting.pop(msg.subject, None)
        if asked is None:
            return
        self.log.append(("receive", msg.subject, "", msg.data))
        try:
            if isinstance(asked, Sent):
                reply: Reply = decode(msg.data, Reply)
                asked.answer = Answer(time.time(), reply.ok, reply.code, reply.reason)
            else:
                asked.answer = msgspec.json.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass

    async def _on_public(self, msg: Msg) -> None:
        table = msg.subject.rpartition(".")[2]
        try:
            index = int((msg.headers or {}).get("Skat-Index", "-1"))
            event = MSGPACK.decode(msg.data)
        except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
            return
        self.events.setdefault(table, []).append((index, event))

    async def send_prompt(self, table: str, update: Update, fmt: str, data: bytes | None = None) -> Prompt:
        """Act as the platform: publish ``update`` to the bot's view subject."""
        data = data if data is not None else encode(update, fmt)
        await self.nc.publish(view_subject(self.player, table), data)
        await self.nc.flush()
        prompt = Prompt(table, update.index, time.time(), fmt, data, update, by_checker=True)
        self.by_checker.setdefault(table, []).append(prompt)
        return prompt

    # --- questions about what was seen ---------------------------------------------------

    def first_prompts(self, table: str) -> list[Prompt]:
        """The services' prompts at a table, each index once (the first time it was sent)."""
        seen: dict[int, Prompt] = {}
        for p in self.prompts.get(table, []):
            seen.setdefault(p.index, p)
        return sorted(seen.values(), key=lambda p: p.index)

    def commands(self, table: str, at: int | None = None) -> list[Sent]:
        return [s for s in self.sent if s.table == table and (at is None or s.at == at)]

    def accepted(self, table: str, index: int) -> Sent | None:
        return next((s for s in self.commands(table, index) if s.answer and s.answer.ok), None)

    def timed_out(self, table: str, seat: int) -> list[int]:
        """Log positions at which ``seat`` was timed out (each is the index of a prompt)."""
        return [i for i, e in self.events.get(table, []) if isinstance(e, PlayerTimedOut) and e.seat == seat]

    def has(self, table: str, kind: type[Event]) -> bool:
        return any(isinstance(e, kind) for _, e in self.events.get(table, []))


# --- the relay ---------------------------------------------------------------------------------


class Relay:
    """A TCP relay on 127.0.0.1 to the server: the bot connects through it, so check-bot can cut
    the bot's connection (and refuse new ones for a while) with the server and services up."""

    def __init__(self, upstream: tuple[str, int], port: int) -> None:
        self.upstream = upstream
        self.port = port
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()
        self.connections: list[float] = []
        """When each connection came in."""

    async def open(self) -> None:
        if self.server is None:
            self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port)

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.append(time.time())
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self.links |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()
            self.links.discard(writer)

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        server, self.server = self.server, None
        if server is not None:
            server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2.0)


# --- the other two seats -----------------------------------------------------------------------


class HeldBot:
    """A built-in bot that check-bot can keep thinking: while it does, its table stands still
    (it is this seat's turn), so check-bot can send the bot something and watch what follows."""

    def __init__(self, seed: str, holds: dict[str, Callable[[Update], Awaitable[None]]]) -> None:
        self.bot = HashedBot(seed)
        self.holds = holds

    async def act(self, obs: Update) -> Any:
        hold = self.holds.get(obs.view.table)
        if hold is not None:
            await hold(obs)
        return self.bot.act(obs)


# --- the report ----------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    status: str  # PASS, FAIL or SKIP
    happened: str
    expected: str = ""
    fix: str = ""


def _pass(name: str, happened: str) -> Result:
    return Result(name, "PASS", happened)


def _fail(name: str, expected: str, happened: str, fix: str) -> Result:
    return Result(name, "FAIL", happened, expected, fix)


def _skip(name: str, why: str) -> Result:
    return Result(name, "SKIP", why)


def write_report(player: str, results: dict[str, Result], out: TextIO) -> None:
    print(f"\nskat check-bot {player}:", file=out)
    for name in CHECKS:
        r = results.get(name)
        if r is None:
            continue
        print(f"  {r.status}  {name:<10} {CHECKS[name]}", file=out)
        if r.status == "FAIL":
            print(f"        expected: {r.expected}", file=out)
            print(f"        happened: {r.happened}", file=out)
            print(f"        fix:      {r.fix}", file=out)
        else:
            print(f"        {r.happened}", file=out)
    counts = {s: sum(r.status == s for r in results.values()) for s in ("PASS", "FAIL", "SKIP")}
    print(
        f"{len(results)} checks: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped",
        file=out,
    )


# --- the checks ----------------------------------------------------------------------------------


def _answers_too_many(commands: list[Sent]) -> list[Sent]:
    """The commands for one prompt beyond the first answer and its retries: a retry is due
    only after a retry code or no answer at all. (Counted, not timed: check-bot's connection
    may see a reply before the command it answers, each subscription having its own queue.)"""
    allowed, extra = 1, []
    for s in commands:
        if allowed <= 0:
            extra.append(s)
            continue
        allowed -= 1
        if s.answer is None or (not s.answer.ok and s.answer.code in RETRY_CODES):
            allowed += 1
    return extra


def _outcome(s: Sent) -> str:
    if s.answer is None:
        return "no answer"
    return "accepted" if s.answer.ok else s.answer.code


def _phase(p: Prompt) -> str:
    return p.update.view.phase


def _ago(t: float, since: float) -> str:
    return f"{t - since:.2f} s"


class Checker:
    """Runs the checks against one bot, on ``nc`` (a connection that may see and send the
    bot's subjects), and keeps their results."""

    def __init__(
        self,
        nc: Client,
        player: str,
        relay: Relay,
        out: TextIO,
        json_only: bool = False,
        short: float = 3.0,
        wait: float = 120.0,
        only: tuple[str, ...] = TABLE_CHECKS,
    ) -> None:
        self.nc = nc
        self.player = player
        self.relay = relay
        self.out = out
        self.json_only = json_only
        self.short = short
        self.wait = wait
        self.only = only
        self.results: dict[str, Result] = {}
        self.run_id = secrets.token_hex(3)
        self.others = [f"cb{self.run_id}-w", f"cb{self.run_id}-e"]
        self.holds: dict[str, Callable[[Update], Awaitable[None]]] = {}
        self.traffic = Traffic(nc, player)
        self.seats: dict[str, int] = {}
        self._players: list[RemotePlayer] = []
        self._tables = 0
        self._connected_at = 0.0
        self.relay_opened = time.time()
        self.asked_format = ""

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def fix(self, text: str) -> str:
        return text.format(id=self.player, short=self.short)

    async def run(self) -> dict[str, Result]:
        await self.traffic.start()
        self._players = [RemotePlayer(self.nc, p, HeldBot(p, self.holds)) for p in self.others]
        for p in self._players:
            await p.start()
        await self.nc.flush()
        try:
            await self._run()
        finally:
            for p in self._players:
                await p.stop()
            await self.traffic.stop()
        return self.results

    async def _run(self) -> None:
        if not await self._until(lambda: bool(self.relay.connections), self.wait):
            self.results["connect"] = _fail(
                "connect",
                f"a connection to 127.0.0.1:{self.relay.port} within {self.wait:g} s",
                "nothing connected",
                f"start your bot as player {self.player} with the server address above (and check it is running)",
            )
            for name in CHECKS:
                self.results.setdefault(name, _skip(name, "not run: the bot never connected"))
            return
        self._connected_at = self.relay.connections[0]
        self.say(f"connected; waiting up to {HELLO_WAIT:g} s for its hello")
        await self._until(lambda: any(h.answer is not None for h in self.traffic.hellos), HELLO_WAIT)
        await asyncio.sleep(0.2)  # a hello without an answer (a wrong inbox) is seen by now too
        self.results["connect"] = _pass(
            "connect", f"connected {_ago(self._connected_at, self.relay_opened)} after the relay opened"
        )
        self.results["hello"] = self._judge_hello()
        for name in TABLE_CHECKS:
            if name not in self.only:
                self.results[name] = _skip(name, "not run (--only)")
                continue
            if not self.relay.links and not await self._until(lambda: bool(self.relay.links), 10.0):
                self.results[name] = _skip(name, "not run: the bot is not connected (it went away)")
                continue
            if name in ("repeat", "stale", "reconnect", "deadline") and self._use_json() is None:
                self.results[name] = _skip(name, "not run: the bot answered no prompt, in either encoding (see above)")
                continue
            self.say(f"checking: {name} ({CHECKS[name]})")
            self.results[name] = await getattr(self, f"_check_{name}")()
        self.results["inbox"] = self._judge_inbox()
        self.results["at"] = self._judge_at()
        self.results["refusals"] = self._judge_refusals()

    @staticmethod
    async def _until(condition: Callable[[], bool], timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.02)
        return True

    # --- tables ---

    def _new_table(self, name: str) -> tuple[str, list[str], int]:
        table = f"check-{self.run_id}-{name}"
        seat = self._tables % 3
        self._tables += 1
        players = list(self.others)
        players.insert(seat, self.player)
        self.seats[table] = seat
        return table, players, seat

    async def _open(self, table: str, players: list[str], rules: Rules, json_updates: bool) -> None:
        request = OpenTable(
            table=table,
            players=players,
            rules=rules,
            seed=secrets.token_hex(8),
            formats={self.player: "json"} if json_updates else {},
        )

        async def attempt() -> Reply:
            msg = await self.nc.request(ADMIN_OPEN, encode(request), timeout=2.0)
            return decode(msg.data, Reply)  # type: ignore[no-any-return]

        await self.traffic.watch(table)
        reply = await patiently(attempt, 30.0, "opening a table (the dealer)")
        if not reply.ok:
            raise CheckError(f"the services refused to open table {table}: {reply.code}: {reply.reason}")

    async def _play(
        self,
        name: str,
        json_updates: bool,
        turn_seconds: float = TURN_SECONDS,
        kontra: bool = False,
        until: Callable[[str], bool] | None = None,
        hold: Callable[[str], Callable[[Update], Awaitable[None]]] | None = None,
        on_prompt: Callable[[str], Callable[[Prompt], Awaitable[None]]] | None = None,
    ) -> str:
        """Open a table for one check and wait until its first deal is scored (the rest plays
        on by itself), the bot is timed out there, or ``until(table)``; returns the table."""
        table, players, seat = self._new_table(name)
        if hold is not None:
            self.holds[table] = hold(table)
        if on_prompt is not None:
            self.traffic.on_prompt[table] = on_prompt(table)
        rules = Rules(rounds=1, turn_seconds=turn_seconds, kontra=kontra)
        await self._open(table, players, rules, json_updates)

        def done() -> bool:
            return (
                self.traffic.has(table, DealScored)
                or self.traffic.has(table, TableClosed)
                or bool(self.traffic.timed_out(table, seat))
                or (until is not None and until(table))
            )

        await self._until(done, TABLE_LIMIT)
        late = self.traffic.timed_out(table, seat)
        if late:  # a slow bot's command may still come: wait a little, to say how late it was
            await self._until(lambda: bool(self.traffic.commands(table, late[0])), min(5.0, turn_seconds))
        return table

    def _use_json(self) -> bool | None:
        """The encoding for the checks after the encoding checks: whichever the bot answers
        (None: neither)."""
        if self.json_only or self.asked_format == "json":
            return True
        mp, js = self.results.get("msgpack"), self.results.get("json")
        if mp is not None and mp.status == "FAIL":
            return True if js is not None and js.status == "PASS" else None
        if mp is None and js is not None and js.status == "FAIL":
            return None
        return False

    # --- judging prompts ---

    def _unanswered(self, table: str) -> list[Prompt]:
        """The services' prompts at ``table`` the bot did not answer in time (timed out, or
        past their deadline with no accepted command)."""
        timed_out = set(self.traffic.timed_out(table, self.seats[table]))
        now = time.time()
        return [
            p
            for p in self.traffic.first_prompts(table)
            if self.traffic.accepted(table, p.index) is None
            and (p.index in timed_out or (p.update.deadline and now > p.update.deadline + 1.0))
        ]

    def _what_happened(self, p: Prompt) -> tuple[str, str]:
        """What the bot did with an unanswered prompt, and what to fix."""
        turn = p.update.deadline - p.t if p.update.deadline else 0.0
        where = f"the prompt at index {p.index} ({_phase(p)}, {p.fmt}, {turn:.0f} s to answer)"
        mine = self.traffic.commands(p.table, p.index)
        if mine:
            first = mine[0]
            refused = next((s for s in mine if s.answer and not s.answer.ok and s.answer.code not in RETRY_CODES), None)
            if p.update.deadline and first.t > p.update.deadline:
                return (
                    f"{where}: your command came {_ago(first.t, p.t)} after it, past the deadline; the table had "
                    "timed you out",
                    self.fix(DEADLINE_FIX),
                )
            if refused is not None and refused.answer is not None:
                return (
                    f"{where}: your {refused.describe()} was refused: {refused.answer.code}: {refused.answer.reason}",
                    self.fix(AT_FIX if refused.answer.code == "stale" else LEGAL_FIX),
                )
            if not is_inbox(first.reply_to, self.player):
                return (
                    f"{where}: your {first.describe()} asked for its reply on {first.reply_to or '(no reply subject)'!r}, "
                    "so the services did not answer",
                    self.fix(INBOX_FIX),
                )
            return f"{where}: your {first.describe()} got no answer but a retry code", self.fix(LEGAL_FIX)
        later = [s for s in self.traffic.commands(p.table) if s.t >= p.t]
        if later:
            s = later[0]
            if s.command is None:
                return f"{where}: you sent {s.describe()} ({s.error})", self.fix(LEGAL_FIX)
            if s.at < 0:
                return f'{where}: you sent {s.describe()} without "at"', self.fix(AT_FIX)
            return f"{where}: you sent {s.describe()} with at={s.at}, not {p.index}", self.fix(AT_FIX)
        if any(s.answer and s.answer.ok and s.fmt for s in self.traffic.sent if self._fmt_of(s) == p.fmt):
            return (
                f"{where}: no command came (though you answered other {p.fmt} prompts); the table timed you out",
                self.fix(DEADLINE_FIX),
            )
        fix = MSGPACK_FIX if p.fmt == "msgpack" else JSON_FIX
        return f"{where}: no command came; the table timed you out", self.fix(fix)

    def _fmt_of(self, s: Sent) -> str:
        """The encoding of the prompt a command answers ("" if unknown)."""
        return next((p.fmt for p in self.traffic.prompts.get(s.table, []) if p.index == s.at), "")

    def _judge_table(self, name: str, table: str, expected: str, passed: str = "") -> Result:
        prompts = self.traffic.first_prompts(table)
        if not prompts:
            return _fail(
                name,
                expected,
                f"no prompt reached skat.view.{self.player}.{table} (are the services dealing?)",
                "check the stack: skat up, or run check-bot without --nats",
            )
        bad = self._unanswered(table)
        if bad:
            happened, fix = self._what_happened(bad[0])
            more = f" ({len(bad)} of {len(prompts)} prompts went unanswered)" if len(bad) > 1 else ""
            return _fail(name, expected, happened + more, fix)
        answered = [p for p in prompts if self.traffic.accepted(table, p.index) is not None]
        if not answered:
            return _fail(name, expected, "no prompt was answered before the table moved on", self.fix(LEGAL_FIX))
        slowest = max(self.traffic.commands(table, p.index)[0].t - p.t for p in answered)
        return _pass(name, passed or f"answered {len(answered)} prompts (slowest {slowest:.2f} s)")

    # --- hello, inbox, at, refusals: judged on everything seen ---

    def _judge_hello(self) -> Result:
        expected = f"a request on skat.hello.{self.player} within {HELLO_WAIT:g} s of connecting, answered"
        hellos = [h for h in self.traffic.hellos if h.t >= self._connected_at]
        first = hellos[0] if hellos else None
        if first is None or first.t > self._connected_at + HELLO_WAIT:
            return _fail(
                "hello",
                expected,
                "no hello"
                if first is None
                else f"the first hello came {_ago(first.t, self._connected_at)} after connecting",
                self.fix(HELLO_FIX),
            )
        body = first.data.strip()
        if body:
            try:
                hello = msgspec.json.decode(body, type=Hello)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                return _fail(
                    "hello", expected, f"its body {first.data[:80]!r} is not a hello: {exc}", self.fix(HELLO_FIX)
                )
            self.asked_format = hello.format
        if first.answer is None:
            if not is_inbox(first.reply_to, self.player):
                return _fail(
                    "hello",
                    expected,
                    f"the hello asked for its reply on {first.reply_to or '(no reply subject)'!r}: no answer",
                    self.fix(INBOX_FIX),
                )
            return _fail("hello", expected, "the hello got no answer", "check that the views service runs")
        chose = f", asking for {self.asked_format}" if self.asked_format else ""
        return _pass(
            "hello",
            f"said hello {_ago(first.t, self._connected_at)} after connecting{chose}; answer {json.dumps(first.answer)}",
        )

    def _judge_inbox(self) -> Result:
        requests: list[tuple[str, str]] = [("hello", h.reply_to) for h in self.traffic.hellos]
        requests += [(s.describe(), s.reply_to) for s in self.traffic.sent]
        expected = f"every request (hello, command) with a reply subject under _INBOX.{self.player}."
        if not requests:
            return _fail("inbox", expected, "the bot sent no request at all", self.fix(HELLO_FIX))
        bad = [(what, reply) for what, reply in requests if not is_inbox(reply, self.player)]
        if bad:
            what, reply = bad[0]
            sent = f"{reply!r}" if reply else "no reply subject (a publish, not a request)"
            return _fail(
                "inbox",
                expected,
                f"{len(bad)} of {len(requests)} requests did not: your {what} had {sent}",
                self.fix(INBOX_FIX),
            )
        return _pass("inbox", f"all {len(requests)} requests did")

    def _moved_past(self, s: Sent) -> bool:
        """Whether the table had moved past the prompt ``s`` answers (an event at its index)."""
        return s.at >= 0 and any(i >= s.at for i, _ in self.traffic.events.get(s.table, []))

    def _prompt_indexes(self, table: str) -> set[int]:
        return {p.index for p in self.traffic.prompts.get(table, []) + self.traffic.by_checker.get(table, [])}

    def _judge_at(self) -> Result:
        sent = [s for s in self.traffic.sent if s.command is not None]
        if not sent:
            return _skip("at", "nothing to judge: the bot sent no readable command")
        expected = '"at" on every command: the index of the prompt it answers'
        missing = [s for s in sent if s.at < 0]
        if missing:
            return _fail(
                "at",
                expected,
                f"{len(missing)} of {len(sent)} commands had none, e.g. {missing[0].describe()}",
                self.fix(AT_FIX),
            )
        wrong = [s for s in sent if s.at not in self._prompt_indexes(s.table)]
        if wrong:
            s = wrong[0]
            known = sorted(i for i in self._prompt_indexes(s.table) if i <= s.at + 3)[-3:]
            return _fail(
                "at",
                expected,
                f"your {s.describe()} has at={s.at}, but no prompt had that index (the latest before it: {known})",
                self.fix(AT_FIX),
            )
        return _pass("at", f"all {len(sent)} commands did")

    def _judge_refusals(self) -> Result:
        """First attempts refused for good (not a retry code, not stale: a stale answer is the
        table having moved on, judged by the stale and repeat checks)."""
        if not self.traffic.sent:
            return _skip("refusals", "nothing to judge: the bot sent no command")
        seen: set[tuple[str, int]] = set()
        refused: list[Sent] = []
        for s in self.traffic.sent:
            key = (s.table, s.at)
            retry = s.at >= 0 and key in seen
            seen.add(key)
            if retry or s.answer is None or s.answer.ok:
                continue
            if s.answer.code in RETRY_CODES or (s.answer.code in MOVED_ON and self._moved_past(s)):
                continue
            refused.append(s)
        expected = "no command refused (other than for a prompt the table has moved past: stale, no_deal, ...)"
        if refused:
            s = refused[0]
            assert s.answer is not None
            fix = self.fix(JSON_FIX if s.answer.code == "malformed" and s.fmt == "json" else LEGAL_FIX)
            if s.answer.code == "malformed":
                fix = 'send an object with "type" and its fields (skat schema prints them), JSON or msgpack'
            return _fail(
                "refusals",
                expected,
                f"{len(refused)} refused, e.g. your {s.describe()}: {s.answer.code}: {s.answer.reason}",
                fix,
            )
        return _pass("refusals", f"none of {len(self.traffic.sent)} commands was")

    # --- the table checks ---

    async def _check_msgpack(self) -> Result:
        expected = "a command accepted for every msgpack prompt, before its deadline"
        if self.json_only:
            return _skip(
                "msgpack", "--json: the bot is seated with JSON updates (as skat tournament --remote ID:json does)"
            )
        if self.asked_format == "json":
            return _skip("msgpack", "the bot asked for JSON in its hello, so the platform sends it no msgpack")
        table = await self._play("msgpack", json_updates=False, kontra=True)
        if self.traffic.first_prompts(table) and all(p.fmt == "json" for p in self.traffic.first_prompts(table)):
            return _skip(
                "msgpack",
                "the platform sent JSON: this player asked for JSON in a hello (the choice is kept across "
                'sessions; {"format": "msgpack"} switches back)',
            )
        return self._judge_table("msgpack", table, expected)

    async def _check_json(self) -> Result:
        expected = "a command accepted for every JSON prompt, before its deadline"
        if self.asked_format == "msgpack":
            return _skip("json", "the bot asked for msgpack in its hello, so the platform sends it no JSON")
        table = await self._play("json", json_updates=True, kontra=True)
        if self.traffic.first_prompts(table) and all(p.fmt == "msgpack" for p in self.traffic.first_prompts(table)):
            return _skip(
                "json",
                'the platform sent msgpack: this player asked for msgpack in a hello ({"format": "json"} switches)',
            )
        return self._judge_table("json", table, expected)

    async def _check_deadline(self) -> Result:
        expected = f"a command accepted for every prompt of a table with {self.short:g} s per move"
        table = await self._play("deadline", json_updates=bool(self._use_json()), turn_seconds=self.short)
        return self._judge_table("deadline", table, expected)

    async def _check_repeat(self) -> Result:
        expected = "one answer per prompt index, however often the prompt comes"
        again_at_once: set[int] = set()
        again_after: dict[int, float] = {}

        def on_prompt(table: str) -> Callable[[Prompt], Awaitable[None]]:
            async def send_twice(p: Prompt) -> None:
                if p.index not in again_at_once and len(again_at_once) < 3:
                    again_at_once.add(p.index)
                    await self.traffic.send_prompt(table, p.update, p.fmt, p.data)

            return send_twice

        def hold(table: str) -> Callable[[Update], Awaitable[None]]:
            async def resend_answered(obs: Update) -> None:
                if len(again_after) >= 2:
                    return
                for p in self.traffic.first_prompts(table):
                    if p.index not in again_after and self.traffic.accepted(table, p.index) is not None:
                        again_after[p.index] = time.time()
                        await self.traffic.send_prompt(table, p.update, p.fmt, p.data)
                        await asyncio.sleep(WATCH)
                        return

            return resend_answered

        table = await self._play(
            "repeat",
            json_updates=bool(self._use_json()),
            on_prompt=on_prompt,
            hold=hold,
            until=lambda t: len(again_after) >= 2 and self.traffic.has(t, DealScored),
        )
        self.traffic.on_prompt.pop(table, None)
        self.holds.pop(table, None)
        for index in sorted(again_at_once | set(again_after)):
            mine = self.traffic.commands(table, index)
            extra = _answers_too_many(mine)
            if extra:
                how = "after your answer had landed" if index in again_after else "right after the first"
                return _fail(
                    "repeat",
                    expected,
                    f"check-bot sent the prompt at index {index} again ({how}, as the services do after a reconnect) "
                    f"and you answered it {len(mine)} times: {', '.join(_outcome(s) for s in mine)}",
                    self.fix(DEDUPE_FIX),
                )
        if not again_at_once:
            return _fail("repeat", expected, "no prompt reached the bot at this table", "see the checks above")
        result = self._judge_table("repeat", table, expected)
        if result.status != "PASS":
            return result
        return _pass(
            "repeat",
            f"{len(again_at_once)} prompts sent twice at once and {len(again_after)} again after their answer landed: "
            "each answered once",
        )

    async def _check_stale(self) -> Result:
        expected = "a prompt the table has moved past: ignored, or answered once and dropped when refused stale"
        forged: list[Prompt] = []

        def hold(table: str) -> Callable[[Update], Awaitable[None]]:
            async def send_superseded(obs: Update) -> None:
                if forged:
                    return
                mine = self.traffic.first_prompts(table)
                if not mine or self.traffic.accepted(table, mine[-1].index) is None:
                    return
                index = obs.index - 1  # an event by another seat: the bot never had a prompt there
                if index <= mine[-1].index:
                    return
                update = msgspec.structs.replace(mine[-1].update, index=index, deadline=time.time() + TURN_SECONDS)
                forged.append(await self.traffic.send_prompt(table, update, mine[-1].fmt))
                await asyncio.sleep(WATCH)

            return send_superseded

        table = await self._play(
            "stale",
            json_updates=bool(self._use_json()),
            hold=hold,
            until=lambda t: (
                bool(forged) and time.time() > forged[0].t + WATCH + 1.0 and self.traffic.has(t, DealScored)
            ),
        )
        self.holds.pop(table, None)
        if not forged:
            result = self._judge_table("stale", table, expected)
            if result.status == "FAIL":
                return result
            return _skip("stale", "no moment came to send a superseded prompt (the bot answered too few prompts)")
        if forged[0].t + WATCH + 1.0 > time.time():
            await asyncio.sleep(forged[0].t + WATCH + 1.0 - time.time())
        p = forged[0]
        mine = self.traffic.commands(table, p.index)
        extra = _answers_too_many(mine)
        if extra:
            return _fail(
                "stale",
                expected,
                f"check-bot sent a prompt at index {p.index}, which the table had moved past; your answer was "
                f"refused ({_outcome(mine[0])}), and you sent it {len(extra)} more time{'s' if len(extra) > 1 else ''} "
                f"({', '.join(_outcome(s) for s in mine[:4])}{', ...' if len(mine) > 4 else ''})",
                self.fix(STALE_FIX),
            )
        result = self._judge_table("stale", table, expected)
        if result.status == "FAIL":
            result.happened = f"after a superseded prompt (index {p.index}): {result.happened}"
            return result
        did = f"answered it once ({_outcome(mine[0])}) and let it go" if mine else "ignored it"
        return _pass("stale", f"check-bot sent a prompt the table had moved past (index {p.index}): the bot {did}")

    async def _check_reconnect(self) -> Result:
        expected = (
            "after its connection drops: reconnect, say hello, answer the prompt sent while it was away, "
            "before its deadline"
        )
        cut: list[float] = []

        def hold(table: str) -> Callable[[Update], Awaitable[None]]:
            async def cut_the_bot(obs: Update) -> None:
                mine = self.traffic.first_prompts(table)
                if cut or not mine or self.traffic.accepted(table, mine[-1].index) is None:
                    return
                await self.relay.cut()  # before this seat moves: the bot's next prompt goes out after
                cut.append(time.time())

            return cut_the_bot

        try:
            table = await self._play(
                "reconnect",
                json_updates=bool(self._use_json()),
                turn_seconds=RECONNECT_TURN_SECONDS,
                hold=hold,
                until=lambda t: bool(cut),
            )
            self.holds.pop(table, None)
            if not cut:
                result = self._judge_table("reconnect", table, expected)
                if result.status == "FAIL":
                    return result
                return _skip("reconnect", "no moment came to drop the connection")
            self.say("  dropped the bot's connection; waiting for its next prompt to go out")

            def missed_prompt() -> Prompt | None:
                return next((p for p in self.traffic.first_prompts(table) if p.t > cut[0]), None)

            if not await self._until(lambda: missed_prompt() is not None, 30.0):
                return _skip("reconnect", "no prompt for the bot came while its connection was down")
            missed = missed_prompt()
            assert missed is not None
            await asyncio.sleep(0.5)
        finally:
            await self.relay.open()
        reopened = time.time()
        self.say("  let it connect again")
        deadline = missed.update.deadline or reopened + RECONNECT_TURN_SECONDS
        await self._until(
            lambda: (
                self.traffic.accepted(table, missed.index) is not None
                or missed.index in self.traffic.timed_out(table, self.seats[table])
            ),
            max(1.0, deadline - time.time() + 1.0),
        )
        back = [t for t in self.relay.connections if t >= reopened]
        hellos = [h for h in self.traffic.hellos if h.t >= reopened]
        answer = self.traffic.accepted(table, missed.index)
        lead = f"check-bot dropped the bot's connection; the prompt at index {missed.index} went out while it was away"
        if not back:
            return _fail(
                "reconnect",
                expected,
                f"{lead}, and it did not connect again within {deadline - reopened:.0f} s",
                self.fix(RECONNECT_FIX),
            )
        if not hellos:
            return _fail(
                "reconnect",
                expected,
                f"{lead}; it connected again after {_ago(back[0], reopened)} but said no hello, so the prompt never "
                "reached it and the table timed it out",
                self.fix(HELLO_FIX),
            )
        if answer is None:
            resent = [p for p in self.traffic.prompts.get(table, []) if p.index == missed.index and p.t >= hellos[0].t]
            happened, fix = self._what_happened(missed)
            told = (
                f"the services sent the prompt again after its hello (answer {json.dumps(hellos[0].answer)})"
                if resent
                else f"its hello (answer {json.dumps(hellos[0].answer)}) brought no prompt"
            )
            if not self.traffic.commands(table, missed.index) and resent:
                fix = (
                    f"be subscribed to skat.view.{self.player}.* again before the hello (say it from the client's "
                    "reconnected callback), and do not drop a prompt you have not answered"
                )
            return _fail("reconnect", expected, f"{lead}; {told}; {happened}", fix)
        return _pass(
            "reconnect",
            f"connected again {_ago(back[0], reopened)} after the relay reopened, said hello "
            f"(answer {json.dumps(hellos[0].answer)}), answered the missed prompt (index {missed.index}) "
            f"{max(0.0, deadline - answer.t):.1f} s before its deadline",
        )


# --- running it ----------------------------------------------------------------------------------


def _upstream(settings: ConnectionSettings) -> tuple[str, int]:
    url = settings.servers[0]
    parts = urlsplit(url if "://" in url else f"nats://{url}")
    return parts.hostname or "127.0.0.1", parts.port or 4222


async def check(
    player: str,
    settings: ConnectionSettings | None,
    out: TextIO,
    port: int = 0,
    json_only: bool = False,
    short: float = 3.0,
    wait: float = 120.0,
    only: tuple[str, ...] = TABLE_CHECKS,
) -> dict[str, Result]:
    """Run every check against the bot ``player`` (the services at ``settings``, or an embedded
    stack when None); the results by check."""
    async with contextlib.AsyncExitStack() as stack:
        if settings is None:
            out.write("starting an embedded nats-server and the five services...\n")
            out.flush()
            settings = ConnectionSettings((await stack.enter_async_context(LocalStack()),))
        else:
            try:
                await wait_ready(settings, timeout=15.0)
            except (TimeoutError, OSError, nats.errors.Error) as exc:
                raise CheckError(
                    f"the services at {settings.describe()} do not answer ({exc or type(exc).__name__}); skat up starts them"
                ) from None
        nc = await open_connection(settings, no_echo=True, max_reconnect_attempts=-1, name="skat-check-bot")
        stack.push_async_callback(nc.close)
        relay = Relay(_upstream(settings), port)
        try:
            await relay.open()
        except OSError as exc:
            raise CheckError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        stack.push_async_callback(relay.cut)
        assert relay.server is not None
        relay.port = relay.server.sockets[0].getsockname()[1]
        scheme = "tls://localhost" if settings.wants_tls else "nats://127.0.0.1"
        url = f"{scheme}:{relay.port}"
        creds = " --creds YOUR.nk" if settings.creds is not None else ""
        ca = f" --tls-ca {settings.tls_ca}" if settings.tls_ca else ""
        out.write(
            f"Start your bot as player {player}, connected to {url} (a relay check-bot can cut), e.g.\n"
            f"  skat bot random --player {player} --nats {url}{creds}{ca}\n"
            f"Waiting up to {wait:g} s for it to connect...\n"
        )
        out.flush()
        checker = Checker(nc, player, relay, out, json_only=json_only, short=short, wait=wait, only=only)
        return await checker.run()
    raise AssertionError("unreachable")  # pragma: no cover - the context manager does not swallow


def _parse_only(text: str | None) -> tuple[str, ...]:
    if not text:
        return TABLE_CHECKS
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in TABLE_CHECKS]
    if unknown or not names:
        raise ValueError(f"--only takes {', '.join(TABLE_CHECKS)} (comma-separated), not {text!r}")
    return names


def handle(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``skat check-bot``: 0 when every check passed, 1 when one failed, 2 when they could not run."""
    out = out or sys.stdout
    try:
        check_token("player", args.player)
        only = _parse_only(args.only)
        if not 0.5 <= args.short_deadline <= 60:
            raise ValueError("--short-deadline must be from 0.5 to 60 seconds")
        if args.wait <= 0:
            raise ValueError("--wait must be > 0")
        if not 0 <= args.port < 65536:
            raise ValueError("--port must be from 0 to 65535")
        settings = from_args(args, default=None)
    except (ValueError, SettingsError) as exc:
        print(f"skat check-bot: {exc}", file=sys.stderr)
        return 2

    async def main() -> dict[str, Result]:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def interrupt(times: int = 10) -> None:
            # Cancelled again until it ends: on Python 3.11, a cancellation that meets an
            # asyncio.wait_for whose inner future has just finished (nats-py's flush and
            # requests) is lost, and the run would go on as if nothing happened.
            if not task.done() and times > 0:
                task.cancel()
                loop.call_later(1.0, interrupt, times - 1)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupt)
        return await check(
            args.player,
            settings,
            out,
            port=args.port,
            json_only=args.json,
            short=args.short_deadline,
            wait=args.wait,
            only=only,
        )

    try:
        results = asyncio.run(main())
    except asyncio.CancelledError:
        print("skat check-bot: interrupted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("skat check-bot: interrupted", file=sys.stderr)
        return 130
    except (CheckError, FileNotFoundError, TimeoutError, OSError, nats.errors.Error) as exc:
        print(f"skat check-bot: {exc}", file=sys.stderr)
        return 2
    write_report(args.player, results, out)
    return 1 if any(r.status == "FAIL" for r in results.values()) else 0


class _Parser(argparse.ArgumentParser):
    """A usage mistake in one line (and exit 2), not argparse's usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("player", metavar="ID", help="the player id your bot plays as")
    add_connection_arguments(
        p,
        "the services to check against (a services' user: it watches the bot's subjects); "
        "default: $SKAT_NATS_URL, else an embedded stack",
    )
    p.add_argument(
        "--port", type=int, default=0, help="the relay's port on 127.0.0.1 your bot connects to (default: a free one)"
    )
    p.add_argument(
        "--json", action="store_true", help="seat the bot with JSON updates, as skat tournament --remote ID:json does"
    )
    p.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the bot to connect (default 120)")
    p.add_argument(
        "--short-deadline", type=float, default=3.0, metavar="SECONDS", help="seconds per move in the deadline check"
    )
    p.add_argument(
        "--only", default=None, metavar="CHECK[,...]", help=f"only these table checks: {', '.join(TABLE_CHECKS)}"
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check-bot",
        help="check a remote bot against the protocol: a pass/fail report",
        description="Check a remote bot the way the platform uses it: start the bot yourself (as player ID) "
        "when told where to connect. Exit code 0 when every check passes, 1 otherwise.",
    )
    add_check_arguments(p)
    p.error = functools.partial(_Parser.error, p)
    p.set_defaults(handler=handle)


# --- the transcript for docs/protocol.md ---------------------------------------------------------

TRANSCRIPT_BEGIN: Final = (
    "<!-- transcript:begin (python -m skatbus.check_bot --transcript --write docs/protocol.md) -->"
)
TRANSCRIPT_END: Final = "<!-- transcript:end -->"
TRANSCRIPT_PLAYER: Final = "ann"
TRANSCRIPT_TABLE: Final = "demo"


class _Passer:
    """The transcript's other two seats: never bid, then play the first legal card."""

    def act(self, obs: Update) -> Any:
        legal = obs.view.legal
        return next((a for a in legal if isinstance(a, Pass)), None) or next(
            (a for a in legal if not isinstance(a, Bid)), legal[0]
        )


class _ScriptedJsonPlayer:
    """A JSON player as a bot author in any language would write it (raw NATS, JSON only): it
    bids the lowest bid, picks up, discards, declares a grand, plays one card, then resigns;
    and it sends its pickup twice, as after a lost reply, to show the ``stale`` answer. It answers
    one prompt at a time, so that every run sends the same messages."""

    def __init__(self, nc: Client, player: str) -> None:
        self.nc = nc
        self.player = player
        self.n = 0
        self.replies: dict[str, asyncio.Future[bytes]] = {}
        self.played = False
        self.done = asyncio.Event()
        self.prompts: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.worker: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.nc.subscribe(f"_INBOX.{self.player}.*", cb=self._on_reply)
        await self.nc.subscribe(f"skat.view.{self.player}.*", cb=self._on_update)
        await self.nc.flush()
        self.worker = asyncio.ensure_future(self._work())

    async def stop(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            await asyncio.gather(self.worker, return_exceptions=True)

    async def _work(self) -> None:
        while True:
            subject, update = await self.prompts.get()
            await self._answer(subject, update)

    async def _on_reply(self, msg: Msg) -> None:
        future = self.replies.pop(msg.subject, None)
        if future is not None and not future.done():
            future.set_result(msg.data)

    async def request(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        reply = f"_INBOX.{self.player}.{self.n}"
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.replies[reply] = future
        await self.nc.publish(subject, json.dumps(body).encode(), reply=reply)
        return json.loads(await asyncio.wait_for(future, 10.0))  # type: ignore[no-any-return]

    async def _on_update(self, msg: Msg) -> None:
        update = json.loads(msg.data)
        view = update["view"]
        if view.get("phase") in ("between_deals", "closed") or view.get("deal", 0) > 1:
            self.done.set()
        if update.get("your_turn"):
            self.prompts.put_nowait((msg.subject, update))

    async def _answer(self, subject: str, update: dict[str, Any]) -> None:
        legal: list[dict[str, Any]] = update["view"].get("legal", [])
        types = [a["type"] for a in legal]
        if "bid" in types:
            action = legal[types.index("bid")]
        elif "pickup" in types:
            action = legal[types.index("pickup")]
        elif "declare" in types:
            action = next(
                (a for a in legal if a["type"] == "declare" and a["game"] == "G"), legal[types.index("declare")]
            )
        elif "play" in types and self.played:
            action = {"type": "resign"}
        else:
            action = legal[0]
            self.played = action["type"] == "play"
        command = {**action, "at": update["index"]}
        cmd_subject = subject.replace("skat.view.", "skat.cmd.", 1)
        await self.request(cmd_subject, command)
        if action["type"] == "pickup":
            await self.request(cmd_subject, command)  # the same again, as after a lost reply: stale


async def record_transcript(settings: ConnectionSettings) -> list[str]:
    """One short deal, as the JSON lines of every message the transcript player sends and
    receives (its hello, updates, commands and replies), from a real run against ``settings``."""
    recorder = await open_connection(settings, no_echo=True)
    ann_nc = await open_connection(settings, inbox_prefix=f"_INBOX.{TRANSCRIPT_PLAYER}")
    others = ["bob", "cyd"]
    traffic = Traffic(recorder, TRANSCRIPT_PLAYER)
    players = [RemotePlayer(recorder, p, _Passer()) for p in others]
    ann = _ScriptedJsonPlayer(ann_nc, TRANSCRIPT_PLAYER)
    try:
        await traffic.start()
        for p in players:
            await p.start()
        await ann.start()
        await ann.request(hello_subject(TRANSCRIPT_PLAYER), {"format": "json"})
        request = OpenTable(
            table=TRANSCRIPT_TABLE,
            players=[TRANSCRIPT_PLAYER, *others],
            rules=Rules(rounds=1, turn_seconds=60),
            seed="transcript",
        )
        reply: Reply = decode((await recorder.request(ADMIN_OPEN, encode(request), timeout=10.0)).data, Reply)
        if not reply.ok:
            raise CheckError(f"cannot open the transcript's table: {reply.code}: {reply.reason}")
        await asyncio.wait_for(ann.done.wait(), 60.0)
        await asyncio.sleep(0.3)
    finally:
        await ann.stop()
        for p in players:
            await p.stop()
        await traffic.stop()
        await ann_nc.close()
        await recorder.close()
    lines = []
    for direction, subject, reply_to, data in traffic.log:
        body = json.loads(data) if data.strip() else None
        line: dict[str, Any] = {direction: subject}
        if reply_to:
            line["reply_to"] = reply_to
        line["data"] = body
        lines.append(json.dumps(line, ensure_ascii=False))
        if (
            body is not None
            and subject.startswith("skat.view.")
            and (body["view"].get("phase") in ("between_deals", "closed") or body["view"].get("deal", 0) > 1)
        ):
            break
    return lines


def write_transcript(path: Path, lines: list[str]) -> None:
    """Put ``lines`` between the transcript markers of ``path`` (a markdown file)."""
    text = path.read_text()
    pattern = re.compile(re.escape(TRANSCRIPT_BEGIN) + r".*?" + re.escape(TRANSCRIPT_END), re.S)
    if not pattern.search(text):
        raise CheckError(f"{path}: no transcript markers ({TRANSCRIPT_BEGIN} ... {TRANSCRIPT_END})")
    block = "\n".join([TRANSCRIPT_BEGIN, "", "```json", *lines, "```", "", TRANSCRIPT_END])
    path.write_text(pattern.sub(lambda _: block, text, count=1))


def read_transcript(path: Path) -> list[str]:
    """The transcript lines between the markers of ``path``."""
    text = path.read_text()
    start = text.index(TRANSCRIPT_BEGIN) + len(TRANSCRIPT_BEGIN)
    block = text[start : text.index(TRANSCRIPT_END, start)]
    return [line for line in block.splitlines() if line.startswith("{")]


def transcript_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m skatbus.check_bot --transcript",
        description="Record one short deal as JSON lines (an embedded stack unless --nats).",
    )
    parser.add_argument("--transcript", action="store_true", required=True)
    parser.add_argument("--write", default=None, metavar="FILE.md", help="replace the transcript in this file")
    add_connection_arguments(parser)
    args = parser.parse_args(argv)
    try:
        settings = from_args(args, default=None)
    except SettingsError as exc:
        print(f"transcript: {exc}", file=sys.stderr)
        return 2

    async def main() -> list[str]:
        if settings is not None:
            return await record_transcript(settings)
        async with LocalStack() as url:
            return await record_transcript(ConnectionSettings((url,)))

    lines = asyncio.run(main())
    if args.write:
        write_transcript(Path(args.write), lines)
        print(f"wrote {len(lines)} lines into {args.write}")
    else:
        print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m skatbus.check_bot``: ``--transcript``, or the same as ``skat check-bot``."""
    argv = sys.argv[1:] if argv is None else argv
    if "--transcript" in argv:
        return transcript_main(argv)
    parser = argparse.ArgumentParser(
        prog="python -m skatbus.check_bot", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    add_check_arguments(parser)
    return handle(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
