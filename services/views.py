"""The projector: sends every seat its private view and turn prompt, and publishes each table's
redacted public feed. It writes nothing to the log; it only reads it.

Several instances share the tables by partition (``services.ownership``), so each table's
prompts and public feed come from one instance at a time, in log order. Every instance hears
every hello and re-sends the pending prompts of its own tables."""

from __future__ import annotations

import os
from typing import Final

import msgspec
from nats.aio.msg import Msg
from nats.js.api import KeyValueConfig
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from protocol.events import (
    MSGPACK,
    DealDealt,
    DealScored,
    Event,
    TableClosed,
    UnknownEvent,
)
from protocol.subjects import (
    is_inbox,
    parse_hello_subject,
    public_subject,
    view_subject,
)
from protocol.views import SPECTATOR, redact, view
from protocol.wire import Hello, Update, encode

from .ratelimit import PlayerLimits
from .runtime import Service, Table
from .store import patiently, replicas_setting

PREFERENCES: Final = "skat-players"
"""Key-value bucket: each player's own choice of encoding (key: player id), so that it
survives a restart of the views service and needs no operator."""
MAX_HELLO_BYTES: Final = 1024


class Views(Service):
    name = "views"
    triggers = ("*",)
    # Views writes nothing: on a restart it re-sends every open table's prompt (recovery), so
    # it needs no redelivery and saves the server an acknowledgement per event.
    acknowledges = False

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._sent: dict[str, int] = {}
        self._public: dict[str, list[tuple[int, bytes]]] = {}
        self._new_deal_or_result: dict[str, bool] = {}
        self._formats: dict[str, str | None] = {}
        """Players' own encoding choices as read from the bucket (None: no choice made)."""
        self._preferences: KeyValue | None = None
        self.hellos = PlayerLimits(rate=float(os.environ.get("SKAT_HELLO_RATE", "5")))
        """Hellos per second and player: a bot says hello when it (re)connects, not more."""

    def on_applied(self, table: Table, index: int, event: Event | UnknownEvent) -> None:
        if isinstance(event, UnknownEvent):
            return
        self._public.setdefault(table.id, []).append((index, MSGPACK.encode(redact(event, SPECTATOR))))
        if isinstance(event, (DealDealt, DealScored, TableClosed)):
            self._new_deal_or_result[table.id] = True

    def forget(self, table_id: str) -> None:
        self._sent.pop(table_id, None)
        self._public.pop(table_id, None)
        self._new_deal_or_result.pop(table_id, None)

    async def start(self) -> None:
        # Before the consumer starts: the first prompts must already go out in the right encoding.
        config = KeyValueConfig(bucket=PREFERENCES, history=1, replicas=replicas_setting())
        # A cluster still electing its leaders answers 503 for a few seconds.
        self._preferences = await patiently(
            lambda: self.store.js.create_key_value(config), self.store.patience, f"opening the {PREFERENCES} bucket"
        )
        await super().start()

    async def on_start(self) -> None:
        # Every player, seated or not, may say hello (it also carries the choice of encoding,
        # made before the first table opens), so hellos come through one wildcard
        # subscription, and each player's hellos are limited on their own small budget.
        self._subs.append(await self.nc.subscribe("skat.hello.*", cb=self._on_hello_msg))

    async def on_reconnected(self) -> None:
        """Prompts published while we (or the players) were away reached nobody: send every
        pending prompt again, with its original deadline (players drop repeats by index)."""
        for table in list(self.tables.values()):
            state = table.state
            if state.n and state.to_move is not None and not state.closed:
                await self._send(table, state.to_move, state.players[state.to_move], your_turn=True)

    async def _on_hello_msg(self, msg: Msg) -> None:
        """Checked in order, before any work: a valid player id, its rate limit, the size."""
        try:
            player = parse_hello_subject(msg.subject)
        except ValueError:
            return
        if self.hellos.allow(player) and len(msg.data) <= MAX_HELLO_BYTES:
            self._spawn(self._on_hello(msg, player))

    async def _on_hello(self, msg: Msg, player: str) -> None:
        """A player (re)connected: remember its choice of encoding, if it made one, then send
        it again every prompt it has pending. The answer goes to its own inbox only."""
        answer: dict[str, object] = {}
        if msg.data.strip():
            try:
                hello = msgspec.json.decode(msg.data, type=Hello)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                answer["error"] = f"cannot read the hello: {exc}"[:300]
            else:
                if hello.format:
                    await self._set_format(player, hello.format)
        sent = 0
        for table in list(self.tables.values()):
            state = table.state
            if player in state.players and state.to_move == state.players.index(player):
                await self._send(table, state.players.index(player), player, your_turn=True)
                sent += 1
        answer["prompts"] = sent
        # Every instance hears every hello and re-sends the prompts of its own tables; one
        # answers (the owner of partition 0, or any while nobody is known to own it).
        if self.ownership.owner_of(0) not in (None, self.member):
            return
        if is_inbox(msg.reply, player):
            await self.nc.publish(msg.reply, encode(answer, "json"))

    async def _set_format(self, player: str, fmt: str) -> None:
        if self._formats.get(player) != fmt:
            assert self._preferences is not None
            await self._preferences.put(player, fmt.encode())
        self._formats[player] = fmt

    async def _format(self, table: Table, player: str) -> str:
        """The player's own choice if it made one, else what the table was opened with."""
        if player not in self._formats and self._preferences is not None:
            if len(self._formats) > 100_000:
                self._formats.clear()
            try:
                choice = ((await self._preferences.get(player)).value or b"").decode()
            except KeyNotFoundError:
                choice = ""
            except Exception as exc:  # the bucket is briefly away: the table's choice, ask again later
                self._warn_once("preferences_unavailable", error=repr(exc))
                return table.state.formats.get(player, "msgpack")
            self._formats[player] = choice if choice in ("json", "msgpack") else None
        return self._formats.get(player) or table.state.formats.get(player, "msgpack")

    async def _send(self, table: Table, seat: int, player: str, your_turn: bool) -> None:
        state = table.state
        update = Update(
            view=view(state, seat),
            your_turn=your_turn,
            deadline=table.last_time() + state.rules.turn_seconds if your_turn else 0.0,
            index=state.events,
        )
        await self.nc.publish(view_subject(player, table.id), encode(update, await self._format(table, player)))

    async def after_change(self, table: Table) -> None:
        # Per table, taken before the first await: another table's handler may run meanwhile.
        subject = public_subject(table.id)
        for index, data in self._public.pop(table.id, []):
            # The position lets spectators drop repeats (a restarted projector sends again).
            await self.nc.publish(subject, data, headers={"Skat-Index": str(index)})
        state = table.state
        if not state.n or self._sent.get(table.id) == state.events:
            return
        mover = state.to_move
        # Every seat gets its view when its cards change hands (a new deal, a finished one);
        # otherwise only the seat to move gets one, its turn prompt. Everything in between is
        # on the public feed, and each prompt carries the deal's history so far: sending every
        # seat a full view after every event cost three times the traffic and grew with the deal.
        everyone = self._new_deal_or_result.get(table.id, False)
        for seat, player in enumerate(state.players):
            if seat == mover or everyone:
                await self._send(table, seat, player, your_turn=seat == mover)
        # Marked only once sent (under the table's lock): a failure leaves it to the next try.
        self._sent[table.id] = state.events
        self._new_deal_or_result.pop(table.id, None)
