"""Reading archive.jsonl so that a damaged line costs only its table.

An archive is many tables' events, one JSON line each (``protocol.archive``). A runner killed
while writing leaves a half-written last line; a disk or an editor can leave garbage in the
middle. Such a line must not make the whole file unreadable: every other table is intact, and
``skat replay``, ``skat verify``, ``skat report`` and the exports still read it. This module is
the one place that reads archive lines tolerantly, so every reader treats damage alike:

- a line that does not decode is a ``Damage``: its line number, its table when the line still
  tells it (a half-written line starts with ``{"table":"..."``), and why;
- that table is read up to the damage and no further (nothing after a lost event can be
  placed in its log), the others are read whole;
- the readers print one warning per damaged line (``warnings``), at most ``MAX_WARNINGS``,
  then how many more.

A file whose first line is no archive line at all is not an archive (someone gave the wrong
file): ``NotAnArchive``, which the commands turn into their one-line mistake.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final

import msgspec

from protocol.archive import decode_event, decode_line
from protocol.events import Event, UnknownEvent

AnyLogged = Event | UnknownEvent

MAX_WARNINGS: Final = 5
"""Damaged lines named one by one before the rest are counted."""
_TABLE: Final = re.compile(rb'^\s*\{\s*"table"\s*:\s*"([A-Za-z0-9_-]{1,64})"')
_INDEX: Final = re.compile(rb'"index"\s*:\s*(\d{1,9})\b')


class NotAnArchive(ValueError):
    """The file's first line is no archive line: not an archive.jsonl at all."""


@dataclass(frozen=True)
class Entry:
    """One archive line read: its number in the file, table, index and event."""

    lineno: int
    table: str
    index: int
    event: AnyLogged


@dataclass(frozen=True)
class Damage:
    """A line that does not decode: where, which table if it can be told, and why."""

    lineno: int
    table: str | None
    index: int | None
    reason: str

    def warning(self) -> str:
        """``line 41: table t-b, event 37 is cut off or damaged (...): the table is read up to there``."""
        if self.table is None:
            return f"line {self.lineno}: not an archive line ({self.reason}); its table cannot be told"
        event = f", event {self.index}" if self.index is not None else ""
        return f"line {self.lineno}: table {self.table}{event} does not decode ({self.reason}); the table is read up to there"


def _short(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _raw(line: bytes | str) -> bytes:
    return line.encode("utf-8", "replace") if isinstance(line, str) else line


def entries(lines: Iterable[bytes | str]) -> Iterator[Entry | Damage]:
    """Every non-blank line of an archive as an ``Entry`` or a ``Damage``, in file order
    (streams: nothing is kept). Raises ``NotAnArchive`` if the first line is no archive line."""
    first = True
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = decode_line(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            if first:
                raise NotAnArchive(f"line {lineno}: not an archive line ({_short(exc)})") from None
            table, index = _TABLE.match(_raw(line)), _INDEX.search(_raw(line))
            yield Damage(
                lineno,
                table.group(1).decode() if table else None,
                int(index.group(1)) if table and index else None,
                "cut off" if table and not _raw(line).rstrip().endswith(b"}") else _short(exc),
            )
            first = False
            continue
        first = False
        try:
            event = decode_event(entry.event)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            yield Damage(lineno, entry.table, entry.index, _short(exc))
            continue
        yield Entry(lineno, entry.table, entry.index, event)


@dataclass
class TableRead:
    """One table's events as read. ``problem`` is the first thing that keeps its log from being
    whole (position, reason): a missing or repeated index, or a damaged line (``damaged``)."""

    table: str
    events: list[AnyLogged] = field(default_factory=list)
    problem: tuple[int, str] | None = None
    damaged: int | None = None
    """The line number of the damaged line that ended this table's reading, if one did."""

    def fail(self, position: int, reason: str) -> None:
        if self.problem is None:
            self.problem = (position, reason)


@dataclass
class Warnings:
    """One warning per damaged line, up to ``MAX_WARNINGS``; ``lines()`` adds how many more."""

    named: list[str] = field(default_factory=list)
    more: int = 0

    def add(self, text: str) -> None:
        if len(self.named) < MAX_WARNINGS:
            self.named.append(text)
        else:
            self.more += 1

    def lines(self) -> list[str]:
        return self.named + ([f"... and {self.more} more damaged lines"] if self.more else [])

    def __bool__(self) -> bool:
        return bool(self.named)


@dataclass
class Archive:
    """An archive's tables in the order they first appear, and the warnings reading it gave."""

    tables: dict[str, TableRead] = field(default_factory=dict)
    warnings: Warnings = field(default_factory=Warnings)


def read_tables(lines: Iterable[bytes | str], table: str | None = None, first_only: bool = False) -> Archive:
    """Every table of an archive in one pass (only ``table``'s if given, only the first
    table's with ``first_only``). Positions are the archive's indices: a missing line is a
    problem at the index that is missing, not where a fold later trips."""
    out = Archive()
    stopped: set[str] = set()
    for item in entries(lines):
        if isinstance(item, Damage):
            name = item.table
            out.warnings.add(item.warning())
            if first_only and table is None and name is not None:
                table = name
            if name is None or (table is not None and name != table) or name in stopped:
                continue
            log = out.tables.get(name)
            if log is None:
                log = out.tables[name] = TableRead(name)
            log.fail(len(log.events), f"line {item.lineno} does not decode ({item.reason})")
            log.damaged = item.lineno
            stopped.add(name)  # nothing after a lost event can be placed
            continue
        name = item.table
        if first_only and table is None:
            table = name
        if (table is not None and name != table) or name in stopped:
            continue
        log = out.tables.get(name)
        if log is None:
            log = out.tables[name] = TableRead(name)
        expected = len(log.events)
        if item.index != expected:
            what = "missing" if item.index > expected else f"repeated as index {item.index}"
            log.fail(expected, f"the archive's event {expected} is {what} (line {item.lineno})")
        log.events.append(item.event)
    return out
