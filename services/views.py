"""The projector: sends every seat its private view and turn prompt, and publishes each table's
redacted public feed. It writes nothing to the log; it only reads it.

Run one instance: two would each send a share of a table's prompts and public events, in no
particular order between them (spectators can order by the ``Skat-Index`` header, players by
``Update.index``, but one projector keeps the feed in order to begin with)."""

from __future__ import annotations

from protocol.events import MSGPACK, DealDealt, DealScored, Event, TableClosed, UnknownEvent
from nats.aio.msg import Msg

from protocol.subjects import hello_subject, is_inbox, public_subject, view_subject
from protocol.views import SPECTATOR, redact, view
from protocol.wire import Update, encode

from .runtime import Service, Table


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

    async def on_start(self) -> None:
        self._subs.append(await self.nc.subscribe(hello_subject("*"), cb=self._on_hello))

    async def _on_hello(self, msg: Msg) -> None:
        """A player (re)connected: send it again every prompt it has pending."""
        player = msg.subject.rpartition(".")[2]
        sent = 0
        for table in list(self.tables.values()):
            state = table.state
            if player in state.players and state.to_move == state.players.index(player):
                await self._send(table, state.players.index(player), player, your_turn=True)
                sent += 1
        if is_inbox(msg.reply):
            await self.nc.publish(msg.reply, encode({"prompts": sent}, "json"))

    async def _send(self, table: Table, seat: int, player: str, your_turn: bool) -> None:
        state = table.state
        update = Update(
            view=view(state, seat),
            your_turn=your_turn,
            deadline=table.last_time() + state.rules.turn_seconds if your_turn else 0.0,
            index=state.events,
        )
        await self.nc.publish(view_subject(player, table.id), encode(update, state.formats.get(player, "msgpack")))

    async def after_change(self, table: Table) -> None:
        # Per table, taken before the first await: another table's handler may run meanwhile.
        subject = public_subject(table.id)
        for index, data in self._public.pop(table.id, []):
            # The position lets spectators drop repeats (a restarted projector sends again).
            await self.nc.publish(subject, data, headers={"Skat-Index": str(index)})
        state = table.state
        if not state.n or self._sent.get(table.id) == state.events:
            return
        self._sent[table.id] = state.events
        mover = state.to_move
        # Every seat gets its view when its cards change hands (a new deal, a finished one);
        # otherwise only the seat to move gets one, its turn prompt. Everything in between is
        # on the public feed, and each prompt carries the deal's history so far: sending every
        # seat a full view after every event cost three times the traffic and grew with the deal.
        everyone = self._new_deal_or_result.pop(table.id, False)
        for seat, player in enumerate(state.players):
            if seat == mover or everyone:
                await self._send(table, seat, player, your_turn=seat == mover)
