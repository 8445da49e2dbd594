"""Interactive ``skat replay``: move through a table's log in both directions.

A table of 27 deals has 800-odd events; stepping through them one Enter at a time, forward
only, is no way to find the deal someone asks about. So the interactive replay draws the table
at every event once (``frames``), then moves a cursor over the drawings: back and forth by an
event, to the next trick, to the next or previous deal, to deal N or event N, and across an
archive's tables. Reading is line-based (a command and Enter), so the same loop runs under a
terminal, a pipe or a test's scripted input.

Ctrl-C ends the replay with exit code 130 (the shell's code for an interrupt) and no
traceback; end of input (Ctrl-D) or ``q`` ends it with 0.

A table of another game is drawn by its game's replay module (``replay.game_replay``): its
``describe``, ``snapshot`` and ``render_state``, where ``t`` stops (``STOPS``) and what starts and
scores a deal (``DEAL_STARTS``, ``DEAL_SCORED``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TextIO

from protocol.events import DealDealt, DealScored, TableOpened, TableOpenedV2, TrickTaken
from protocol.skat.table import LogError

from .replay import (
    TableLog,
    UnknownGame,
    breaks,
    describe,
    game_replay,
    game_title,
    log_game,
    render_state,
    replay,
    snapshot,
    table_note,
)

KEYS = (
    "Enter/n: next event  b: back  t: next trick  d: next deal  p: previous deal  "
    "N: deal N  e N: event N  l: tables  l N: table N  q: quit  ?: help"
)
"""The help line, shown at the start and on ``?``."""

INTERRUPTED = 130
"""Exit code of a replay ended by Ctrl-C."""

CLEAR = "\033[H\033[2J"


@dataclass(frozen=True)
class Frame:
    """The table right after one event, drawn once so going back costs nothing."""

    position: int
    deal: int
    """The deal the event belongs to (0 before the first)."""
    stop: bool
    """A trick taken or a deal scored: where ``t`` stops."""
    deal_start: bool
    line: str
    board: tuple[str, ...]


def frames(log: TableLog) -> tuple[list[Frame], LogError | None]:
    """Every event drawn, up to the first one that breaks the rules (and that error)."""
    try:
        other = game_replay(log)
    except UnknownGame as exc:
        return [], LogError(0, str(exc))
    if other is not None:
        return _game_frames(other, log)
    out: list[Frame] = []
    try:
        for step in replay(log):
            state, event = step.state, step.event
            out.append(
                Frame(
                    position=step.position,
                    deal=state.deal_no,
                    stop=isinstance(event, (TrickTaken, DealScored)),
                    deal_start=isinstance(event, DealDealt),
                    line=f"[{step.position:4}] {describe(event, state)}",
                    board=tuple(render_state(snapshot(state, event))),
                )
            )
    except LogError as exc:
        return out, exc
    return out, None


def _game_frames(module: ModuleType, log: TableLog) -> tuple[list[Frame], LogError | None]:
    """``frames`` of a table of another game, drawn by its replay module."""
    out: list[Frame] = []
    try:
        for step in module.steps(log):
            state, event = step.state, step.event
            out.append(
                Frame(
                    position=step.position,
                    deal=state.deal_no,
                    stop=isinstance(event, module.STOPS),
                    deal_start=isinstance(event, module.DEAL_STARTS),
                    line=f"[{step.position:4}] {module.describe(event, state)}",
                    board=tuple(module.render_state(module.snapshot(state, event))),
                )
            )
    except LogError as exc:
        return out, exc
    return out, None


def keys_for(log: TableLog) -> str:
    """The help line for a table: its game's where that game has its own."""
    try:
        other = game_replay(log)
    except UnknownGame:
        return KEYS
    return str(getattr(other, "KEYS", KEYS)) if other is not None else KEYS


def table_line(number: int, log: TableLog, titled: bool = False) -> str:
    """One table of an archive as the table list shows it (``titled``: with its game)."""
    opened = next((e for e in log.events if isinstance(e, (TableOpened, TableOpenedV2))), None)
    players = ", ".join(opened.players) if opened is not None else "?"
    try:
        other = game_replay(log)
    except UnknownGame:
        other = None
    scored = DealScored if other is None else other.DEAL_SCORED
    deals = sum(isinstance(e, scored) for e in log.events)
    line = f"{number:>3}  {log.table:<24} {players:<40} {deals:>3} deals {len(log.events):>5} events"
    return (line + f"  {game_title(log_game(log))}" if titled else line) + table_note(log)


def table_lines(logs: Sequence[TableLog], current: int | None = None) -> list[str]:
    """The numbered list of an archive's tables (``*`` marks the one shown); each names its
    game when the archive holds another game than Skat."""
    titled = any(log_game(log) != "skat" for log in logs)
    return [("*" if i == current else " ") + table_line(i + 1, log, titled) for i, log in enumerate(logs)]


class Cursor:
    """A position in a table's frames and the moves over them. A move that cannot be made
    returns why (and leaves the cursor where it is)."""

    def __init__(
        self, table: str, drawn: list[Frame], error: LogError | None = None, stops: str = "trick or score"
    ) -> None:
        self.table, self.frames, self.error = table, drawn, error
        self.stops = stops
        """What ``t`` moves to, in words."""
        self.at = 0
        self.starts = [i for i, f in enumerate(drawn) if f.deal_start]

    @property
    def frame(self) -> Frame:
        return self.frames[self.at]

    def _to(self, index: int | None, why: str) -> str | None:
        if index is None:
            return why
        self.at = index
        return None

    def forward(self) -> str | None:
        return self._to(self.at + 1 if self.at + 1 < len(self.frames) else None, self.end_message())

    def back(self) -> str | None:
        return self._to(self.at - 1 if self.at > 0 else None, "at the first event")

    def next_trick(self) -> str | None:
        found = next((i for i in range(self.at + 1, len(self.frames)) if self.frames[i].stop), None)
        return self._to(found, f"no {self.stops} after this event")

    def next_deal(self) -> str | None:
        found = next((i for i in self.starts if i > self.at), None)
        return self._to(found, "this is the last deal")

    def previous_deal(self) -> str | None:
        """The start of the deal before the one shown (before the first deal: nothing)."""
        current = self.frame.deal
        found = next((i for i in reversed(self.starts) if self.frames[i].deal < current), None)
        return self._to(found, "this is the first deal")

    def deal(self, number: int) -> str | None:
        found = next((i for i in self.starts if self.frames[i].deal == number), None)
        deals = [self.frames[i].deal for i in self.starts]
        span = f"{deals[0]}..{deals[-1]}" if deals else "none"
        return self._to(found, f"no deal {number} (deals {span})")

    def event(self, position: int) -> str | None:
        found = position if 0 <= position < len(self.frames) else None
        return self._to(found, f"no event {position} (events 0..{len(self.frames) - 1})")

    def end_message(self) -> str:
        if self.error is not None:
            return breaks(self.error)
        return "at the last event"

    def where(self) -> str:
        deals = len(self.starts)
        deal = f"deal {self.frame.deal}/{deals}" if self.frame.deal else "before the first deal"
        return f"{self.table}, {deal}, event {self.frame.position}/{len(self.frames) - 1}"


Reader = Callable[[str], str]
"""Shows a prompt and returns the line typed (``input``); raises EOFError at the end."""


def navigate(
    logs: Sequence[TableLog],
    read: Reader,
    out: TextIO,
    table: int = 0,
    deal: int | None = None,
    clear: bool = False,
) -> int:
    """Browse ``logs[table]`` (and the others, with ``l N``) until ``q``, end of input or
    Ctrl-C; ``clear`` redraws in place (a terminal). Returns the exit code."""
    try:
        return _loop(logs, read, out, table, deal, clear)
    except KeyboardInterrupt:
        print(file=out)
        return INTERRUPTED


def _open(log: TableLog) -> Cursor:
    drawn, error = frames(log)
    try:
        other = game_replay(log)
    except UnknownGame:
        other = None
    if other is not None:
        return Cursor(log.table, drawn, error, other.STOP_WORDS)
    return Cursor(log.table, drawn, error)


def _loop(logs: Sequence[TableLog], read: Reader, out: TextIO, table: int, deal: int | None, clear: bool) -> int:
    cursor = _open(logs[table])
    note = cursor.deal(deal) if deal is not None else None
    keys = keys_for(logs[table])
    extra = [keys]
    while True:
        if not cursor.frames:
            print(f"{cursor.table}: {cursor.end_message()}", file=out)
            return 1
        if clear:
            out.write(CLEAR)
        frame = cursor.frame
        print(frame.line, file=out)
        for line in frame.board:
            print(line, file=out)
        for line in extra:
            print(line, file=out)
        if note:
            print(f"({note})", file=out)
        try:
            command = read(f"{cursor.where()} [n b t d p N e l q ?] > ").strip()
        except EOFError:
            print(file=out)
            return 0
        note, extra = None, []
        word, _, arg = command.partition(" ")
        word, arg = word.lower(), arg.strip()
        if word in ("", "n", "f", "+"):
            note = cursor.forward()
        elif word in ("b", "-"):
            note = cursor.back()
        elif word == "t":
            note = cursor.next_trick()
        elif word == "d" and not arg:
            note = cursor.next_deal()
        elif word == "p":
            note = cursor.previous_deal()
        elif word.isdigit():
            note = cursor.deal(int(word))
        elif word in ("d", "g") and arg.isdigit():
            note = cursor.deal(int(arg))
        elif word == "e" and arg.isdigit():
            note = cursor.event(int(arg))
        elif word == "l" and not arg:
            extra = table_lines(logs, table)
        elif word == "l" and arg.isdigit() and 1 <= int(arg) <= len(logs):
            table = int(arg) - 1
            cursor = _open(logs[table])
            keys = keys_for(logs[table])
        elif word == "l":
            note = f"no table {arg} (tables 1..{len(logs)})"
        elif word in ("q", "quit", "exit"):
            return 0
        elif word in ("?", "h", "help"):
            extra = [keys]
        else:
            note = f"unknown command {command!r}; {keys}"
