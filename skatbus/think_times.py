"""Think times per player, from tables' logs and the times their events were stored.

What is measured, per move a player made itself (not a default move after a time-out): the
time from the event before it in the table's log (the one that gave it the turn: the deal, a
trick, the move before, a resumption) to the move's own stored time, as the server stamped
both. That includes the trip of the prompt to the player and of its command back, as a chess
clock does. A move the log cannot time is left out and counted as ``unmeasured``: when a stored
time is missing (an archive written before archives had them, an imported record), or when the
move came later than its deadline allowed, which only happens after the services were away
while it was the player's turn (``protocol.clocks``: that time is not the player's). Time-outs
are not moves; they are counted in the standings, and under a time control the ones where the
budget ran out are ``budget_out``.

The fold is the tables' own (``protocol.clocks.SeatClocks`` inside each game's state), so what
is measured here is what the services charged to a clock. Pure functions over events and
stamps: ``tournament.write_results`` puts them in results.json, ``skat report`` shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from protocol.archive import decode_event, decode_line
from protocol.clocks import ThinkTimes, summarize
from protocol.events import Event, UnknownEvent
from protocol.lifecycle import LogError
from protocol.registry import is_opening, new_state

TableTimes = tuple[Sequence[Event | UnknownEvent], Sequence[float | None]]
"""A table's events and, for each, when it was stored (Unix time; None: not known)."""


class _Tally:
    def __init__(self) -> None:
        self.samples: list[float] = []
        self.unmeasured = 0
        self.budget_out = 0


def think_times(tables: Iterable[TableTimes]) -> dict[str, ThinkTimes]:
    """Per player (in the order they first sit down), over every table: how many moves were
    measured, their median, 95th percentile and longest think time, and the unmeasured ones.
    A table whose log does not fold counts up to where it breaks."""
    tally: dict[str, _Tally] = {}
    for events, times in tables:
        state: Any = None
        for i, event in enumerate(events):
            at = times[i] if i < len(times) else None
            if state is None:
                if not is_opening(event):
                    break
                try:
                    state = new_state(event)
                except ValueError:  # a game this skatbus does not play: that table measures nothing
                    break
            try:
                state.apply(event, at)
            except LogError:
                break
            if i == 0:
                for player in state.players:
                    tally.setdefault(player, _Tally())
            sample = state.clock.sample if state.clock is not None else None
            if sample is not None:
                tally[state.players[sample[0]]].samples.append(sample[1])
        clock = getattr(state, "clock", None)
        if clock is not None:
            for seat, player in enumerate(state.players):
                tally[player].unmeasured += clock.unmeasured[seat]
                tally[player].budget_out += clock.flagged[seat]
    return {player: summarize(t.samples, t.unmeasured, t.budget_out) for player, t in tally.items()}


def think_times_json(tables: Iterable[TableTimes]) -> dict[str, dict[str, Any]]:
    """``think_times`` as results.json holds it: player -> moves, median, p95, longest (seconds),
    unmeasured, budget_out."""
    return {player: msgspec.to_builtins(t) for player, t in think_times(tables).items()}


def archive_think_times(path: Path) -> dict[str, dict[str, Any]]:
    """``think_times_json`` of an archive file: its lines' ``at`` are the stored times (an
    archive without them measures nothing). Lines that cannot be read are skipped."""
    tables: dict[str, tuple[list[Event | UnknownEvent], list[float | None]]] = {}
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                line = decode_line(raw)
                event = decode_event(line.event)
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
                continue
            events, times = tables.setdefault(line.table, ([], []))
            if line.index != len(events):
                continue  # out of order or repeated: the fold would not follow it
            events.append(event)
            times.append(line.time)
    return think_times_json(tables.values())


def _seconds(value: Any) -> str:
    return "-" if not isinstance(value, int | float) else f"{value:.3f}"


def format_think_times(section: dict[str, dict[str, Any]]) -> str:
    """The printed table of think times (results.json's ``think_times``), or "" when no move
    was measured."""
    if not any(isinstance(row, dict) and row.get("moves") for row in section.values()):
        return ""
    lines = [
        "think times (s)",
        f"    {'player':<16} {'moves':>6} {'median':>8} {'p95':>8} {'longest':>8} {'unmeasured':>10}"
        f" {'budget out':>10}",
    ]
    for player, row in section.items():
        if not isinstance(row, dict):
            continue
        lines.append(
            f"    {player:<16} {int(row.get('moves') or 0):>6} {_seconds(row.get('median')):>8} "
            f"{_seconds(row.get('p95')):>8} {_seconds(row.get('longest')):>8} "
            f"{int(row.get('unmeasured') or 0):>10} {int(row.get('budget_out') or 0):>10}"
        )
    return "\n".join(lines)
