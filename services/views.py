"""The projector: sends every seat its private view and turn prompt, and publishes each table's
redacted public feed. It writes nothing to the log; it only reads it."""

from __future__ import annotations

from protocol.events import Event, MSGPACK, UnknownEvent
from protocol.subjects import public_subject, view_subject
from protocol.views import SPECTATOR, redact, view
from protocol.wire import Update, encode

from .runtime import Service, Table


class Views(Service):
    name = "views"
    triggers = ("*",)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._sent: dict[str, int] = {}
        self._public: list[tuple[str, bytes]] = []

    def on_applied(self, table: Table, index: int, event: Event | UnknownEvent) -> None:
        if isinstance(event, UnknownEvent):
            return
        self._public.append((public_subject(table.id), MSGPACK.encode(redact(event, SPECTATOR))))

    async def after_change(self, table: Table) -> None:
        for subject, data in self._public:
            await self.nc.publish(subject, data)
        self._public.clear()
        state = table.state
        if not state.n or self._sent.get(table.id) == state.events:
            return
        self._sent[table.id] = state.events
        mover = state.to_move
        deadline = table.last_time() + state.rules.turn_seconds if mover is not None else 0.0
        for seat, player in enumerate(state.players):
            update = Update(
                view=view(state, seat),
                your_turn=seat == mover,
                deadline=deadline if seat == mover else 0.0,
                index=state.events,
            )
            await self.nc.publish(view_subject(player, table.id), encode(update))
