"""Why a command is refused: one ``Rejection`` type and the checks every game makes first.

The order of the checks is part of what players see (a closed table says so before anything
else); every game runs ``refuse_first`` before its own rules, so a player meets the same codes
and reasons at every table."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

RejectionCode = Literal[
    "out_of_turn", "illegal", "not_seated", "no_deal", "busy", "table_closed", "malformed", "stale", "paused",
    "withdrawn",
]  # fmt: skip


class Rejection(msgspec.Struct, frozen=True, kw_only=True, repr_omit_defaults=True):
    """Why a command was refused; ``reason`` is meant for the player to read."""

    code: RejectionCode
    reason: str


def stale(state: Any, command: Any) -> Rejection | None:
    """Why a command stamped with the prompt it answers (``at``) is too late or too early for
    the table as it stands, or None. ``state`` may be a cache behind the log: a command older
    than the cache is then stale for good (the log only grows)."""
    if command.at >= 0 and command.at != state.events:
        return Rejection(
            code="stale",
            reason=f"this answers the prompt at position {command.at}, but the table is at {state.events}",
        )
    return None


def refuse_first(state: Any, seat: int) -> Rejection | None:
    """The table-level refusals, before any rule of the game: closed, not seated, paused, the
    seat's own time-out being recorded, withdrawn."""
    if state.closed:
        return Rejection(code="table_closed", reason="the table is closed")
    if not 0 <= seat < state.n:
        return Rejection(code="not_seated", reason=f"seat {seat} is not at this table")
    if state.paused:
        why = f" ({state.pause_reason})" if state.pause_reason else ""
        return Rejection(code="paused", reason=f"the table is paused{why}; you are prompted again when it resumes")
    if state.defaulting == seat:
        return Rejection(code="stale", reason="your turn timed out: the default action is being recorded")
    if state.withdrawn(seat):
        return Rejection(
            code="withdrawn",
            reason=f"you were withdrawn from this table after {state.missed[seat]} turns in a row timed out",
        )
    return None


BUSY = Rejection(code="busy", reason="the table is still recording the last action; retry")
