"""What every table does, whatever its game: opening, log position, pauses, time-outs, closing.

``TableBase`` folds the table lifecycle's events (``table_opened/2``, ``timed_out``,
``seat_withdrawn``, ``table_paused``, ``table_resumed``, ``table_closed``) and keeps the counts
the services rely on (``events``, ``missed``, ``defaulting``); a game's state subclasses it and
adds its own events through ``handlers``. The rules of the lifecycle are the ones Skat tables
have always followed (``protocol.table``): between a seat's time-out and its default action
only that seat's withdrawal or action may come; a paused table takes no action; a seat
withdrawn after ``max_timeouts`` missed turns in a row is played by the default action.

Folded with the events' stored times (``apply(event, at)``), a table also keeps every seat's
clock (``clock``, ``protocol.clocks``): what is left of its budget under the rules' time control,
which shortens its turn (``turn_seconds``), and its think times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from .clocks import SeatClocks, Step
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
from .explain import newer_event


class LogError(Exception):
    """The log does not follow the rules at event ``position`` (0-based)."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(f"event {position}: {reason}")
        self.position = position
        self.reason = reason


class NewerEvent(LogError):
    """The log holds an event of a newer skatbus (``UnknownEvent``): not a broken rule, a
    version to upgrade to. Raised where a fold that skipped it then trips over what follows."""


def blamed_on_newer(newer: tuple[int, UnknownEvent] | None, error: LogError) -> LogError:
    """``error``, or the ``NewerEvent`` that names the unknown event skipped before it: what
    follows an event this version cannot read cannot be judged by it, so "the log must start
    with table_opened" after a newer ``table_opened`` would send a reader after a bug that is
    not there (``protocol.explain.newer_event``)."""
    if newer is None or isinstance(error, NewerEvent):
        return error
    position, event = newer
    return NewerEvent(position, newer_event(event))


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
        self.newer: tuple[int, UnknownEvent] | None = None
        """The first event skipped as unknown and its position: a later break is blamed on it."""
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
        self.clock: SeatClocks | None = None
        """Every seat's clock, from the stored times ``apply`` was given (``protocol.clocks``)."""

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

    def missed_turn(self, seat: int) -> list[Event]:
        """What ``seat`` missing its deadline records before its default action: the time-out
        (unless the log holds it already: its events are appended one at a time) and, when this
        made ``max_timeouts`` turns in a row, the seat's withdrawal. The same for every game."""
        events: list[Event] = []
        missed = self.missed[seat]
        if self.defaulting != seat:
            events.append(PlayerTimedOut(seat=seat))
            missed += 1
        limit = self.rules.max_timeouts
        if limit and missed == limit and not self.announced[seat]:
            events.append(SeatWithdrawn(seat=seat, missed=limit))
        return events

    def turn_seconds(self, seat: int | None) -> float:
        """How long ``seat`` has for its turn: the table's turn time, no more than is left of
        its budget under a time control; nothing if withdrawn or if its time-out is recorded
        but not yet its default action."""
        per_move = self.per_move(seat)
        return per_move if seat is None or self.clock is None else self.clock.allowance(seat, per_move)

    def per_move(self, seat: int | None) -> float:
        """The per-move deadline alone (``turn_seconds`` without the budget)."""
        if seat is not None and (self.defaulting == seat or self.withdrawn(seat)):
            return 0.0
        return float(self.rules.turn_seconds)

    def clock_step(self, event: Event | UnknownEvent) -> tuple[Step, int, float]:
        """What ``event`` is to its seat's clock, asked before it is folded: the kind of step,
        the seat, and the per-move deadline the seat had (``SeatClocks.step``)."""
        kind = type(event)
        seat = getattr(event, "seat", -1)
        if kind is PlayerTimedOut:
            return "timeout", seat, self.per_move(seat)
        if kind in self.seat_actions:
            return ("default" if self.defaulting == seat else "move"), seat, self.per_move(seat)
        return "other", -1, 0.0

    # --- folding ---------------------------------------------------------------------------

    def apply(self, event: Event | UnknownEvent, at: float | None = None) -> None:
        """Fold one event, stored at Unix time ``at`` if known (for the clocks); raises
        ``LogError`` (the state is then unusable) if it breaks the rules."""
        step = self.clock_step(event) if self.clock is not None else None
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
                    self.newer = self.newer or (position, event)  # type: ignore[assignment]
                    self.events += 1
                    return
                raise LogError(position, f"not an event of {self.game}: {kind.__name__}")
            if not self.n and kind is not TableOpenedV2:
                raise LogError(position, "the log must start with table_opened")
            handler(self, event)
        except LogError as exc:
            raise blamed_on_newer(self.newer, exc) from None
        except (KeyError, IndexError, ValueError, AssertionError, TypeError, msgspec.ValidationError) as exc:
            raise blamed_on_newer(self.newer, LogError(position, f"{kind.__name__}: {exc}")) from exc
        self.events += 1
        if step is not None and self.clock is not None:
            self.clock.step(step[0], step[1], at, step[2])
        elif self.clock is not None:  # just opened: the clock starts at the opening's time
            self.clock.last = at
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
        self.clock = SeatClocks(getattr(rules, "time_control", None), self.n)
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
        new.clock = self.clock.copy() if self.clock is not None else None


_LIFECYCLE: dict[type, Callable[[Any, Any], None]] = {
    TableOpenedV2: TableBase._opened,
    PlayerTimedOut: TableBase._timed_out,
    SeatWithdrawn: TableBase._withdrawn,
    TablePaused: TableBase._paused,
    TableResumed: TableBase._resumed,
    TableClosed: TableBase._closed,
}
