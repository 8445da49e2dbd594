"""What check-bot sees of a bot: every prompt to it and every answer, hello and command from it.

Updates and commands are read with the game of their table (``watch(table, game)``; a table not
watched is read with ``default_game``): a Thirty-one ``discard`` is another command than Skat's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from protocol import registry
from protocol.events import MSGPACK, Event, PlayerTimedOut, UnknownEvent
from protocol.game import Game
from protocol.subjects import (
    hello_subject,
    parse_command_subject,
    parse_view_subject,
    public_subject,
    view_subject,
)
from protocol.wire import Reply, decode, encode, sniff

# --- what check-bot sees -------------------------------------------------------------------


@dataclass
class Prompt:
    """An update with ``your_turn``, sent to the bot by the services or by check-bot."""

    table: str
    index: int
    t: float
    fmt: str
    data: bytes
    update: Any
    """The game's update (``protocol.wire.Update`` for Skat, ``ThirtyOneUpdate``, ...)."""
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
    default_game: str = "skat"
    """The game of a table not watched (``watch``)."""
    games: dict[str, str] = field(default_factory=dict)
    """The game of each watched table."""
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

    async def watch(self, table: str, game: str | None = None) -> None:
        """Follow a table's public feed (its events, to see time-outs and ends), and read its
        updates and commands as ``game``'s (default: ``default_game``)."""
        self.games[table] = game or self.default_game
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
            update = decode(msg.data, self.game(table).update_type)
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
            sent.command, _ = self.game(table).decode_command(msg.data)
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

    def game(self, table: str) -> Game:
        """The game a table's messages are read with."""
        return registry.get(self.games.get(table, self.default_game))

    async def send_prompt(self, table: str, update: Any, fmt: str, data: bytes | None = None) -> Prompt:
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
