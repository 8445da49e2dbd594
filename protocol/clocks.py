"""Clocks: a table's time control and every seat's think time, as a fold over stored times.

A table may play under a *time control* (``TimeControl``, chess notation ``120+2``): each seat
has a budget for the whole table and gains an increment after each of its moves, besides the
per-move deadline every table has (``turn_seconds``). The seat to move must answer within
``min(turn_seconds, what is left of its budget)``. The time control is part of the table's
rules, recorded in ``table_opened``, and what is left of each budget is a fold over the log's
stored times (``SeatClocks``): every service, after any restart or change of owner, and every
replay of the log compute the same clock from the same stamps, with nothing kept anywhere else.

What one move costs (``SeatClocks.step``): the time from the event before it (the one that
gave the seat the turn: a deal, a trick, the move before, a resumption) to the move's own
stored time, at most what the seat was allowed. A move stored later than its deadline could
have allowed (by more than ``GRACE``) can only have come after the services were away while
the seat was to move (they give the seat a whole turn once back, ``runtime.Table.deadline``):
the log cannot tell how much of it was the seat's, so it is charged nothing and its think time
is unmeasured. A time-out costs exactly what the seat was allowed, whenever it is stored. The
default move after a time-out costs nothing and earns the increment, so a seat whose budget ran
out plays on with the increment alone (docs/rules-choices.md, "Time control").

No I/O here: stamps are Unix times (floats) given by the caller.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Final, Literal

import msgspec

GRACE: Final = 1.0
"""Seconds a move may be stored after its deadline and still count as made in time: the time
between the service accepting it and the server stamping it. Later, the services must have been
away during the turn (see the module's docstring)."""

Step = Literal["move", "default", "timeout", "other"]
"""What an event is to the clock: a seat's own move, its default move after a time-out, its
time-out, or anything else (a deal, a trick, a pause, ...)."""


class TimeControl(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    """A budget per seat for the whole table, and an increment after each of its moves."""

    budget: float
    """Seconds each seat has for all its moves at the table."""
    increment: float = 0.0
    """Seconds added to a seat's budget after each of its moves (the default move after a
    time-out too)."""

    def __post_init__(self) -> None:
        if not math.isfinite(self.budget) or self.budget <= 0:
            raise ValueError("a time control's budget must be a finite number of seconds > 0")
        if not math.isfinite(self.increment) or self.increment < 0:
            raise ValueError("a time control's increment must be a finite number of seconds >= 0")

    def __str__(self) -> str:
        return f"{self.budget:g}+{self.increment:g}"


_NOTATION: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:\+\s*(\d+(?:\.\d+)?)\s*)?")


MAX_CONTROL_SECONDS: Final = 999_999
"""The largest budget or increment a time control takes: the largest whole number of seconds
(11.5 days) its notation (``str(TimeControl)``, six significant digits, which is how the rules
record and compare it) writes exactly; more would be written as ``1e+06`` and read back as
nonsense."""


def parse_time_control(text: str) -> TimeControl:
    """``"120+2"`` (120 s budget, 2 s increment) or ``"300"`` (no increment), blanks around
    the numbers allowed; ``ValueError`` for anything else, for more than
    ``MAX_CONTROL_SECONDS`` and for more digits than the notation keeps (so that what is
    parsed is what is recorded, not a rounded value)."""
    match = _NOTATION.fullmatch(text)
    if match is None:
        raise ValueError(f"a time control is BUDGET+INCREMENT in seconds (e.g. 120+2), not {text!r}")
    budget, increment = float(match[1]), float(match[2] or 0)
    for what, value in (("budget", budget), ("increment", increment)):
        if value > MAX_CONTROL_SECONDS:
            raise ValueError(f"a time control's {what} is at most {MAX_CONTROL_SECONDS} seconds, not {value:.0f}")
        if float(f"{value:g}") != value:
            raise ValueError(f"a time control's {what} has at most 6 significant digits, not {value!r}")
    return TimeControl(budget=budget, increment=increment)


class SeatClocks:
    """Every seat's clock at one table: what is left of its budget (``left``; infinite without
    a time control), when the last event was stored (``last``), and what the last step
    measured (``sample``: the seat and its think time, for statistics). Fed one event at a time
    by the table's fold (``protocol.lifecycle.TableBase.apply``, ``protocol.skat.table``)."""

    __slots__ = ("control", "left", "last", "sample", "flagged", "unmeasured")

    def __init__(self, control: TimeControl | None, seats: int) -> None:
        self.control = control
        self.left: list[float] = [control.budget if control else math.inf] * seats
        self.last: float | None = None
        self.sample: tuple[int, float] | None = None
        self.flagged: list[int] = [0] * seats
        """Per seat, its time-outs where the budget, not the per-move deadline, was the limit."""
        self.unmeasured: list[int] = [0] * seats
        """Per seat, its moves whose think time the log cannot tell (see ``step``)."""

    def allowance(self, seat: int, per_move: float) -> float:
        """How long ``seat`` may take for its turn: ``per_move`` (the table's turn time, or 0
        for a seat to be defaulted), and no more than is left of its budget."""
        return min(per_move, self.left[seat]) if self.control else per_move

    def step(self, kind: Step, seat: int, at: float | None, per_move: float) -> None:
        """Charge the event just folded, stored at ``at`` (None: unknown, which measures
        nothing and makes the next event's think time unknown too). ``per_move`` is what the
        seat was allowed per move as the turn began (the state's ``turn_seconds`` before the
        event, the budget left aside)."""
        self.sample = None
        if kind == "other" or not 0 <= seat < len(self.left):
            self.last = at
            return
        allowed = self.allowance(seat, per_move)
        charge = 0.0
        if kind == "timeout":
            charge = allowed
            if self.control and allowed >= self.left[seat]:
                self.flagged[seat] += 1
        elif kind == "move":
            took = None if at is None or self.last is None else max(0.0, at - self.last)
            if took is not None and took <= allowed + GRACE:
                charge = min(took, allowed)
                self.sample = (seat, took)
            else:
                self.unmeasured[seat] += 1
        if self.control:
            self.left[seat] = max(0.0, self.left[seat] - charge)
            if kind != "timeout":
                self.left[seat] += self.control.increment
        self.last = at

    def copy(self) -> SeatClocks:
        new = SeatClocks.__new__(SeatClocks)
        new.control, new.last, new.sample = self.control, self.last, self.sample
        new.left, new.flagged, new.unmeasured = list(self.left), list(self.flagged), list(self.unmeasured)
        return new


def remaining(clocks: SeatClocks | None, seat: int) -> float | None:
    """Seconds left of ``seat``'s budget, or None when the table has no time control."""
    if clocks is None or clocks.control is None or not 0 <= seat < len(clocks.left):
        return None
    return round(clocks.left[seat], 3)


def seat_clock(clocks: SeatClocks | None, seat: int, per_move: float) -> tuple[float, float, float] | None:
    """What a seat's update says of its clock (``protocol.wire.Update.clock``, ``increment``,
    ``turn_seconds``): the seconds left of its budget (to the millisecond), its increment and
    its per-move deadline ``per_move`` (the state's ``per_move``: the table's turn time, 0 for
    a seat played by default). None at a table without a time control. Read from the fold the
    services enforce, so a bot sees the very clock it is timed by: for the seat to move, its
    budget as its turn began."""
    left = remaining(clocks, seat)
    if left is None or clocks is None or clocks.control is None:
        return None
    return left, clocks.control.increment, float(per_move)


class ThinkTimes(msgspec.Struct, frozen=True, kw_only=True):
    """One player's think times (seconds, to the millisecond) over the moves that were measured."""

    moves: int
    median: float | None
    p95: float | None
    longest: float | None
    unmeasured: int = 0
    """Moves whose think time the log does not tell (no stored time, or made after the services
    were away)."""
    budget_out: int = 0
    """Time-outs where the player's budget, not the per-move deadline, was the limit (tables
    with a time control)."""


def summarize(samples: Sequence[float], unmeasured: int = 0, budget_out: int = 0) -> ThinkTimes:
    """Median, 95th percentile (nearest rank) and longest of ``samples``."""
    if not samples:
        return ThinkTimes(moves=0, median=None, p95=None, longest=None, unmeasured=unmeasured, budget_out=budget_out)
    ordered = sorted(samples)
    rank = max(1, math.ceil(0.95 * len(ordered)))
    return ThinkTimes(
        moves=len(ordered),
        median=round(statistics.median(ordered), 3),
        p95=round(ordered[rank - 1], 3),
        longest=round(ordered[-1], 3),
        unmeasured=unmeasured,
        budget_out=budget_out,
    )


# --- stored times as text ---------------------------------------------------------------------


def stamp_text(unix: float) -> str:
    """RFC 3339 UTC to the millisecond (``2026-12-02T08:01:02.123Z``): how archives write when
    an event was stored."""
    moment = datetime.fromtimestamp(round(unix, 3), UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_stamp(text: str) -> float:
    """Unix time of an RFC 3339 stamp (any fraction of a second, ``Z`` or an offset);
    ``ValueError`` if it is none (a time without an offset is none: it could be any zone's)."""
    head, dot, rest = text.strip().partition(".")
    frac = ""
    zone = ""
    if dot:
        digits = re.match(r"\d*", rest)
        frac = digits[0] if digits else ""
        zone = rest[len(frac) :]
    else:
        zone_at = max(head.rfind("+"), head.rfind("Z"), head.rfind("z"), head.rfind("-", 10))
        head, zone = (head[:zone_at], head[zone_at:]) if zone_at > 10 else (head, "")
    if not zone:
        raise ValueError(f"not an RFC 3339 time stamp (it has no offset): {text!r}")
    moment = datetime.fromisoformat(head + ("+00:00" if zone in ("Z", "z") else zone))
    return moment.timestamp() + (int(frac) / 10 ** len(frac) if frac else 0.0)


def stamps_of(texts: Iterable[str | None]) -> list[float | None]:
    """Unix times of archive stamps; None for a missing or unreadable one."""
    out: list[float | None] = []
    for text in texts:
        try:
            out.append(parse_stamp(text) if text else None)
        except ValueError:
            out.append(None)
    return out
