"""Sending players their views: each in the encoding the player chose, with its deadline.

Two kinds of service send them. The service that appended the event making it a seat's turn
(the dealer, bidding or play) sends that seat its turn prompt the moment the append is
acknowledged: no consumer hop, through the projector or the next phase's service, stands
between a move and the next prompt. The views service sends every seat its view when cards
change hands (a new deal, a result) and re-sends pending prompts when a player says hello.

A player's choice of encoding (JSON or msgpack, made in its hello) lives in the key-value
bucket ``skat-players``, so it survives restarts and needs no operator. Every sender caches it;
the views service, which answers hellos, stores a change and announces it on
``skat.formats.<player>`` (inside the services' account) so that the other senders' caches
follow at once. Only the views service listens to hellos: while it is down a hello finds no
responder at all and the player tries again, rather than waiting for an answer that cannot come.
"""

from __future__ import annotations

from typing import Any, Final

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import KeyValueConfig, StreamConfig
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from protocol.clocks import seat_clock
from protocol.registry import state_game
from protocol.subjects import is_token, view_subject
from protocol.wire import ENCODINGS, Update, encode

from .store import EventStore, cluster_replicas, ensure_stream, patiently

PREFERENCES: Final = "skat-players"
"""Key-value bucket: each player's own choice of encoding (key: player id)."""
MAX_CACHED: Final = 100_000
FORMATS_ALL: Final = "skat.formats.*"


class Prompter:
    """Views and prompts for one service process."""

    def __init__(self, nc: Client, store: EventStore, log: Any) -> None:
        self.nc = nc
        self.store = store
        self.log = log
        self.preferences: KeyValue | None = None
        self._formats: dict[str, str | None] = {}
        """Players' own choices as read from the bucket or heard in a hello (None: none made)."""
        self._warned = False

    async def open(self) -> None:
        """Open the bucket, creating it with the replicas of the cluster (``cluster_replicas``)
        if it is missing. An existing bucket is opened as it is, its replicas raised if it has
        fewer (``ensure_stream``): creating it again with another configuration would be
        refused (a bucket made by another version, or while a node was down)."""
        js = self.store.js
        config = KeyValueConfig(bucket=PREFERENCES, history=1, replicas=cluster_replicas(self.nc))
        stream = StreamConfig(name=f"KV_{PREFERENCES}", num_replicas=config.replicas)  # nats-py's name for it
        await ensure_stream(js, stream, self.store.patience, create=lambda: js.create_key_value(config))
        # A cluster still electing its leaders answers 503 for a few seconds.
        self.preferences = await patiently(
            lambda: js.key_value(PREFERENCES), self.store.patience, f"opening the {PREFERENCES} bucket"
        )

    async def save(self, player: str, fmt: str) -> None:
        """Store a player's choice in the bucket and tell the other senders (the views service
        does, once per change)."""
        if self._formats.get(player) != fmt and self.preferences is not None:
            await self.preferences.put(player, fmt.encode())
            await self.nc.publish(f"skat.formats.{player}", fmt.encode())
        self._remember(player, fmt)

    async def on_format_msg(self, msg: Msg) -> None:
        """The views service announced a player's new choice."""
        player = msg.subject.rpartition(".")[2]
        fmt = msg.data.decode(errors="replace")
        if is_token(player) and fmt in ENCODINGS:
            self._remember(player, fmt)

    def forget_formats(self) -> None:
        """Read every player's choice from the bucket again (after missing announcements)."""
        self._formats.clear()

    def _remember(self, player: str, fmt: str | None) -> None:
        if len(self._formats) > MAX_CACHED:
            self._formats.clear()
        self._formats[player] = fmt

    async def format_for(self, state: Any, player: str) -> str:
        """The player's own choice if it made one, else what the table was opened with."""
        if player not in self._formats and self.preferences is not None:
            try:
                choice = ((await self.preferences.get(player)).value or b"").decode()
            except KeyNotFoundError:
                choice = ""
            except Exception as exc:  # the bucket is briefly away: the table's choice, ask again later
                if not self._warned:
                    self._warned = True
                    self.log.warning("preferences_unavailable", error=repr(exc))
                return str(state.formats.get(player, "msgpack"))
            self._remember(player, choice if choice in ENCODINGS else None)
        return self._formats.get(player) or str(state.formats.get(player, "msgpack"))

    async def send(self, table_id: str, state: Any, seat: int, deadline: float | None = None) -> None:
        """Seat ``seat``'s view of the table: a turn prompt with its ``deadline`` (Unix time,
        ``runtime.Table.deadline``), or with None a plain view; under a time control, either
        with the seat's clock (``protocol.clocks.seat_clock``)."""
        player = state.players[seat]
        # The seat's clock from the table's own fold (the one ``deadline`` comes from): a bot
        # sees what it is timed by. Every game's state has ``clock`` and ``per_move``.
        clock = seat_clock(getattr(state, "clock", None), seat, state.per_move(seat))
        left, increment, per_move = clock if clock is not None else (None, None, None)
        update = Update(
            view=state_game(state).view(state, seat),  # type: ignore[arg-type]  # any game's view
            your_turn=deadline is not None,
            deadline=deadline or 0.0,
            index=state.events,
            clock=left,
            increment=increment,
            turn_seconds=per_move,
        )
        data = encode(update, await self.format_for(state, player))
        await self.nc.publish(view_subject(player, table_id), data)
