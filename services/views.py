"""The projector: publishes each table's redacted public feed, sends every seat its private view
when cards change hands (a new deal, a result, the table's end), and answers hellos by sending a
player's pending prompts again. Live turn prompts come from the service that appended the event
making it a seat's turn (``services.prompts``). It writes nothing to the log; it only reads it.

Several instances share the tables by partition (``services.ownership``), so each table's
public feed and views come from one instance at a time, in log order. Every instance hears
every hello and re-sends the pending prompts of its own tables."""

from __future__ import annotations

import contextlib
import os
from typing import Final

import msgspec
from nats.aio.msg import Msg

from protocol.events import MSGPACK, Event, UnknownEvent
from protocol.registry import state_game
from protocol.skat.views import SPECTATOR
from protocol.subjects import feed_subject, is_inbox, parse_hello_subject
from protocol.wire import Hello, encode

from .ratelimit import PlayerLimits
from .runtime import Service, Table

MAX_HELLO_BYTES: Final = 1024


class Views(Service):
    name = "views"
    triggers = ("*",)
    # Views writes nothing and sends no live turn prompts (their writers do): a delivery
    # lost in a restart costs a public event at most, so it needs no redelivery and saves the
    # server an acknowledgement per event.
    acknowledges = False
    sends_views = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._sent: dict[str, int] = {}
        self._public: dict[str, list[tuple[int, bytes]]] = {}
        self._new_deal_or_result: dict[str, bool] = {}
        self.hellos = PlayerLimits(rate=float(os.environ.get("SKAT_HELLO_RATE", "5")))
        """Hellos per second and player: a bot says hello when it (re)connects, not more."""

    async def on_start(self) -> None:
        # Every player, seated or not, may say hello (it also carries the choice of encoding,
        # made before the first table opens): one wildcard subscription, each player's hellos
        # limited on their own small budget. Only this service listens: while it is down a
        # hello finds no responder and the player tries again.
        self._subs.append(await self.nc.subscribe("skat.hello.*", cb=self._on_hello_msg))

    async def _on_hello_msg(self, msg: Msg) -> None:
        """Checked in order, before any work: a valid player id, its rate limit, the size."""
        try:
            player = parse_hello_subject(msg.subject)
        except ValueError:
            return
        if self.hellos.allow(player) and len(msg.data) <= MAX_HELLO_BYTES:
            self._spawn(self.on_hello(msg, player))

    def on_applied(self, table: Table, index: int, event: Event | UnknownEvent) -> None:
        if isinstance(event, UnknownEvent):
            return
        game = state_game(table.state)
        self._public.setdefault(table.id, []).append((index, MSGPACK.encode(game.redact(event, SPECTATOR))))
        if game.refreshes_views(event, table.state):
            self._new_deal_or_result[table.id] = True

    def forget(self, table_id: str) -> None:
        self._sent.pop(table_id, None)
        self._public.pop(table_id, None)
        self._new_deal_or_result.pop(table_id, None)

    async def on_hello(self, msg: Msg, player: str) -> None:
        """A player (re)connected: store its choice of encoding, if it made one, then send it
        again every prompt it has pending. The answer goes to its own inbox only."""
        answer: dict[str, object] = {}
        if msg.data.strip():
            try:
                hello = msgspec.json.decode(msg.data, type=Hello)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                answer["error"] = f"cannot read the hello: {exc}"[:300]
            else:
                if hello.format:
                    await self.prompter.save(player, hello.format)
        sent = 0
        for table in [t for t in self.tables.values() if player in t.state.players and not t.state.closed]:
            # Read the log's tail first: the prompt this player missed may be for an event
            # this projector has not been delivered yet (the prompt came from that event's writer).
            async with table.lock:
                with contextlib.suppress(Exception):
                    await self.catch_up(table)
                    await self.after_change(table)  # the public feed of what the read found
                state = table.state
                if state.to_move == state.players.index(player):
                    await self.prompter.send(table.id, state, state.to_move, self.deadline(table))
                    sent += 1
        answer["prompts"] = sent
        # Every instance hears every hello and re-sends the prompts of its own tables; one
        # answers (the owner of partition 0, or any while nobody is known to own it).
        if self.ownership.owner_of(0) not in (None, self.member):
            return
        if is_inbox(msg.reply, player):
            await self.nc.publish(msg.reply, encode(answer, "json"))

    async def after_change(self, table: Table, recovering: bool = False) -> None:
        # Per table, taken before the first await: another table's handler may run meanwhile.
        subject = feed_subject(table.id, getattr(table.state, "feed", "public"))
        for index, data in self._public.pop(table.id, []):
            # The position lets spectators drop repeats (a restarted projector sends again).
            await self.nc.publish(subject, data, headers={"Skat-Index": str(index)})
        state = table.state
        if not state.n or self._sent.get(table.id) == state.events:
            return
        # Every seat gets its view when its cards change hands (a new deal, a finished one);
        # in between, the public feed has everything, and the seat to move gets its turn
        # prompt (the deal's history so far included) from the writer of the event that made it so.
        if self._new_deal_or_result.get(table.id, False):
            for seat in range(len(state.players)):
                if seat != state.to_move:
                    await self.prompter.send(table.id, state, seat)
        # Marked only once sent (under the table's lock): a failure leaves it to the next try.
        self._sent[table.id] = state.events
        self._new_deal_or_result.pop(table.id, None)
