"""What every table does, whatever its game: opening, log position, pauses, time-outs, closing.

``TableBase`` folds the table lifecycle's events (``table_opened/2``, ``timed_out``,
``seat_withdrawn``, ``table_paused``, ``table_resumed``, ``table_closed``) and keeps the counts
the services rely on (``events``, ``missed``, ``defaulting``); a game's state subclasses it and
adds its own events through ``handlers``. The rules of the lifecycle are the ones Skat tables
have always followed (``protocol.table``): between a seat's time-out and its default action
only that seat's withdrawal or action may come; a paused table takes no action; a seat
withdrawn after ``max_timeouts`` missed turns in a row is played by the default action.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from .events import (
    Event,
    PlayerTimedOut,
    SeatWithdrawn,
    TableClosed,
    TableOpenedV2,
    TablePaused,
    TableResumed,
    UnknownEvent,
)


class LogError(Exception):
    """The log does not follow the rules at event ``position`` (0-based)."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(f"event {position}: {reason}")
        self.position = position
        self.reason = reason


class TableBase:
    """The lifecycle part of a table's state. Subclasses set ``game`` (the name in
    ``table_opened/2``), ``rules_type``, ``handlers`` (their events' fold functions),
    ``seat_actions`` (the event types that are a seat's action) and implement ``to_move``."""

    game: ClassVar[str] = ""
    rules_type: ClassVar[type[msgspec.Struct]]
    handlers: ClassVar[dict[type, Callable[[Any, Any], None]]] = {}
    seat_actions: ClassVar[tuple[type[Event], ...]] = ()
    seats_range: ClassVar[tuple[int, int]] = (2, 9)

    def __init__(self) -> None:
        self.table = ""
        self.players: list[str] = []
        self.rules: Any = self.rules_type()
        self.seed = ""
        self.n = 0
        self.events = 0
        self.unknown = 0
        self.formats: dict[str, str] = {}
        self.feed = "public"
        """Where its spectator feed goes (``protocol.events.FEEDS``)."""
        self.closed = False
        self.close_reason = ""
        self.paused = False
        self.pause_reason = ""
        self.timeouts: list[int] = []
        self.missed: list[int] = []
        """Per seat, the turns it missed in a row (its default action does not reset it)."""
        self.defaulting = -1
        """The seat whose time-out was just recorded and whose default action is still owed."""
        self.announced: list[bool] = []

    # --- questions -------------------------------------------------------------------------

    @property
    def opened(self) -> bool:
        return self.n > 0

    @property
    def to_move(self) -> int | None:
        raise NotImplementedError

    def withdrawn(self, seat: int) -> bool:
        limit = self.rules.max_timeouts
        return bool(limit) and 0 <= seat < len(self.missed) and self.missed[seat] >= limit

    def turn_seconds(self, seat: int | None) -> float:
        if seat is not None and (self.defaulting == seat or self.withdrawn(seat)):
            return 0.0
        return float(self.rules.turn_seconds)

    # --- folding ---------------------------------------------------------------------------

    def apply(self, event: Event | UnknownEvent) -> None:
        """Fold one event; raises ``LogError`` (the state is then unusable) if it breaks the rules."""
        position = self.events
        kind = type(event)
        handler = self.handlers.get(kind) or _LIFECYCLE.get(kind)
        try:
            if self.defaulting >= 0 and not self._completes_time_out(event):
                raise LogError(
                    position, f"{kind.__name__} between seat {self.defaulting}'s time-out and its default action"
                )
            if handler is None:
                if kind is UnknownEvent:
                    self.unknown += 1
                    self.events += 1
                    return
                raise LogError(position, f"not an event of {self.game}: {kind.__name__}")
            if not self.n and kind is not TableOpenedV2:
                raise LogError(position, "the log must start with table_opened")
            handler(self, event)
        except LogError:
            raise
        except (KeyError, IndexError, ValueError, AssertionError, TypeError, msgspec.ValidationError) as exc:
            raise LogError(position, f"{kind.__name__}: {exc}") from exc
        self.events += 1
        self.folded(event)

    def folded(self, event: Event | UnknownEvent) -> None:
        """Called after every event is folded (a game keeps its deal's history here)."""

    def _completes_time_out(self, event: Event | UnknownEvent) -> bool:
        kind = type(event)
        if kind is SeatWithdrawn or kind is PlayerTimedOut or kind in self.seat_actions:
            return getattr(event, "seat", -1) == self.defaulting
        return kind is UnknownEvent

    def acted(self, seat: int) -> None:
        """A seat's action: its own resets its count of missed turns; its default action does not."""
        if self.defaulting == seat:
            self.defaulting = -1
        elif self.missed:
            self.missed[seat] = 0

    def check_can_act(self) -> None:
        """Raise ``LogError`` unless a seat may act now (open, not paused)."""
        if self.closed:
            raise LogError(self.events, "the table is closed")
        if self.paused:
            raise LogError(self.events, "the table is paused")

    def _opened(self, e: TableOpenedV2) -> None:
        if self.opened:
            raise LogError(self.events, "table already opened")
        if e.game != self.game:
            raise LogError(self.events, f"a table of {e.game!r} read as {self.game!r}")
        rules = msgspec.convert(e.rules, self.rules_type)
        low, high = self.seats_for(rules)
        if not low <= len(e.players) <= high:
            raise LogError(self.events, f"{len(e.players)} players: a table of {self.game} seats {low} to {high}")
        if len(set(e.players)) != len(e.players):
            raise LogError(self.events, "a player sits twice")
        self.table, self.players, self.rules, self.seed = e.table, list(e.players), rules, e.seed
        self.formats = dict(e.formats)
        self.feed = e.feed
        self.n = len(e.players)
        self.timeouts = [0] * self.n
        self.missed = [0] * self.n
        self.announced = [False] * self.n
        self.opened_with(rules)

    def seats_for(self, rules: Any) -> tuple[int, int]:
        return self.seats_range

    def opened_with(self, rules: Any) -> None:
        """The game's own set-up once the table is opened."""

    def _timed_out(self, e: PlayerTimedOut) -> None:
        if self.to_move != e.seat:
            raise LogError(self.events, f"seat {e.seat} timed out but it was not its turn")
        self.timeouts[e.seat] += 1
        self.missed[e.seat] += 1
        self.defaulting = e.seat

    def _withdrawn(self, e: SeatWithdrawn) -> None:
        limit = self.rules.max_timeouts
        if (
            not limit
            or e.seat != self.defaulting
            or self.missed[e.seat] != limit
            or e.missed != limit
            or self.announced[e.seat]
        ):
            raise LogError(
                self.events,
                f"seat {e.seat} withdrawn, but it has not just missed {limit or 'a limit of'} turns in a row",
            )
        self.announced[e.seat] = True

    def _paused(self, e: TablePaused) -> None:
        if self.closed or self.paused or self.defaulting >= 0:
            raise LogError(self.events, "only an open table that is not paused can be paused")
        self.paused, self.pause_reason = True, e.reason

    def _resumed(self, e: TableResumed) -> None:
        if not self.paused:
            raise LogError(self.events, "table_resumed, but the table is not paused")
        self.paused, self.pause_reason = False, ""

    def _closed(self, e: TableClosed) -> None:
        if self.closed:
            raise LogError(self.events, "table already closed")
        self.closed = True
        self.close_reason = e.reason

    def copy_base(self, new: TableBase) -> None:
        """Copy the lifecycle's mutable parts into ``new`` (a shallow copy of ``self``)."""
        new.players = list(self.players)
        new.formats = dict(self.formats)
        new.timeouts = list(self.timeouts)
        new.missed = list(self.missed)
        new.announced = list(self.announced)


_LIFECYCLE: dict[type, Callable[[Any, Any], None]] = {
    TableOpenedV2: TableBase._opened,
    PlayerTimedOut: TableBase._timed_out,
    SeatWithdrawn: TableBase._withdrawn,
    TablePaused: TableBase._paused,
    TableResumed: TableBase._resumed,
    TableClosed: TableBase._closed,
}
