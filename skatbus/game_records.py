"""``skat records check | export | import``: game records (docs/records.md) in and out of skatbus.

Skat has its own standard records (ISS, ``skat iss``); the other games share one JSON Lines
format, one game per line, with a ``game`` key. This module is the part that is the same for
every such game: reading the lines, finding the game's records module, counting verdicts,
grouping an archive's events by table, naming imported tables. What a record of one game means
lives in that game's module, listed in ``RECORD_MODULES``; each has ``GAME``, ``check(record)``,
``records_of(events)`` and ``events_of(record, table)``. Adding the rummy is one more line there.

Everything streams: a record is checked (or imported) and forgotten; an archive's table is kept
only until it is closed.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import importlib
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Final, Protocol, cast

import msgspec

from protocol.events import Event, TableClosed, TableOpened, TableOpenedV2, UnknownEvent
from protocol.explain import newer_event
from protocol.lifecycle import LogError, NewerEvent
from protocol.subjects import check_token

# The verdict and its parts are the same for every game's records; they live with the first
# game that has records (protocol.thirty_one.records) until a second game needs them.
from protocol.thirty_one.records import RecordError, Verdict, parse_line

from .archive_reader import Damage, NotAnArchive, entries

__all__ = [
    "RECORD_MODULES", "ExportItem", "ImportItem", "RecordGame", "Tally", "check_lines", "describe", "export_archive",
    "import_lines", "open_lines", "records_module", "verdict_json", "verdict_of",
]  # fmt: skip

RECORD_MODULES: Final[dict[str, str]] = {"thirty-one": "protocol.thirty_one.records"}
"""The games with records, by the ``game`` a record names, and the module that reads them."""

TABLE_PREFIX: Final = "record-"


class RecordGame(Protocol):
    """What ``skat records`` needs of a game's records module."""

    @property
    def GAME(self) -> str: ...

    def check(self, record: Any) -> Verdict: ...

    def records_of(self, events: Iterable[Event | UnknownEvent]) -> dict[str, Any]: ...

    def events_of(self, record: Any, table: str = ...) -> list[Event]: ...


def records_module(game: str) -> RecordGame | None:
    """The records module of ``game``, or None when the game has no records."""
    name = RECORD_MODULES.get(game)
    if name is None:
        return None
    return cast(RecordGame, importlib.import_module(name))


def _games() -> str:
    return ", ".join(RECORD_MODULES)


# --- input ---------------------------------------------------------------------------------


@contextlib.contextmanager
def open_lines(path: str) -> Iterator[IO[bytes]]:
    """The lines of ``path`` as bytes (``-``: stdin; ``.gz`` and ``.bz2`` are read as such).
    Bytes, so that a line that is not UTF-8 is that record's error, not the whole file's."""
    if path == "-":
        yield sys.stdin.buffer
        return
    opener: Any = bz2.open if path.endswith(".bz2") else gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        yield f


def numbered(lines: Iterable[bytes | str]) -> Iterator[tuple[int, bytes | str]]:
    """(line number, line) for every line that is not blank."""
    for n, line in enumerate(lines, 1):
        if line.strip():
            yield n, line


def read_line(line: bytes | str) -> tuple[Any, RecordGame]:
    """A record line's JSON value and the module of the game it names; ``RecordError`` if it
    is no JSON object or names no game with records."""
    record = parse_line(line)
    if not isinstance(record, dict):
        kind = "an array" if isinstance(record, list) else msgspec.json.encode(record).decode()
        raise RecordError(f"a record is a JSON object, not {kind}")
    game = record.get("game")
    if not isinstance(game, str):
        raise RecordError(
            f'game: a record names its game ("game": {_games()}), not {msgspec.json.encode(game).decode()}'
        )
    module = records_module(game)
    if module is None:
        raise RecordError(f'game: skatbus reads records of {_games()}, not "{game}"')
    return record, module


# --- check ---------------------------------------------------------------------------------


def verdict_of(line: bytes | str) -> Verdict:
    """The verdict on one record line."""
    try:
        record, module = read_line(line)
    except RecordError as exc:
        return Verdict(status="error", reason=exc.reason)
    return module.check(record)


def check_lines(lines: Iterable[bytes | str]) -> Iterator[tuple[int, Verdict]]:
    """(line number, verdict) per record, in file order."""
    for n, line in numbered(lines):
        yield n, verdict_of(line)


def describe(lineno: int, v: Verdict) -> str:
    """``line 3: agree``, ``line 4: differs: ...``, ``line 5: error: ...``."""
    return f"line {lineno}: {v.describe()}"


def verdict_json(lineno: int, v: Verdict) -> dict[str, Any]:
    return {"line": lineno, **v.to_json()}


@dataclass
class Tally:
    """How many records agree, differ, or could not be replayed."""

    statuses: Counter[str] = field(default_factory=Counter)

    def add(self, v: Verdict) -> None:
        self.statuses[v.status] += 1

    @property
    def records(self) -> int:
        return sum(self.statuses.values())

    @property
    def failed(self) -> bool:
        return bool(self.statuses["differ"] or self.statuses["error"])

    def summary(self) -> dict[str, int]:
        return {"records": self.records, **{s: self.statuses[s] for s in ("agree", "differ", "error")}}

    def summary_line(self) -> str:
        s = self.summary()
        return f"{s['records']} records: {s['agree']} agree, {s['differ']} differ, {s['error']} error"


# --- export --------------------------------------------------------------------------------


class ArchiveUnreadable(ValueError):
    """A line that is no archive line: nothing after it can be placed in a table."""


@dataclass(frozen=True)
class ExportItem:
    """One table of an archive: its record, or why it has none (``failed``: it should have
    one, but its log cannot be read or breaks the rules)."""

    table: str
    record: dict[str, Any] | None = None
    note: str = ""
    failed: bool = False


@dataclass
class _Table:
    game: RecordGame | None = None
    events: list[Event | UnknownEvent] = field(default_factory=list)
    problem: str = ""
    skip: str = ""
    """Why the table has no record (another game); its events are not kept."""


def export_archive(lines: Iterable[bytes | str]) -> Iterator[ExportItem]:
    """One item per table of an archive (``protocol.archive``: ``{"table", "index", "event"}``
    per line, tables may interleave), as each table closes, then the tables still open in the
    order they first appear. A line that does not decode costs only its table
    (``archive_reader``): that table is not exported (its item says the line), a line whose
    table cannot be told is an item with no table; a file that is no archive at all raises
    ``ArchiveUnreadable``."""
    tables: dict[str, _Table] = {}
    try:
        for item in entries(lines):
            if isinstance(item, Damage):
                if item.table is None:
                    yield ExportItem("", note=item.warning(), failed=True)
                    continue
                t = tables.setdefault(item.table, _Table())
                t.problem = t.problem or f"line {item.lineno}: event {item.index} does not decode ({item.reason})"
                continue
            t = tables.setdefault(item.table, _Table())
            if not (t.skip or t.problem):
                _take(t, item.lineno, item.index, item.event)
            if isinstance(item.event, TableClosed):
                yield _export(item.table, t)
                del tables[item.table]
    except NotAnArchive as exc:
        raise ArchiveUnreadable(str(exc)) from None
    for table, t in tables.items():
        yield _export(table, t)


def _take(t: _Table, lineno: int, index: int, event: Event | UnknownEvent) -> None:
    """Add one archived event to its table (or note why the table has no record)."""
    if index != len(t.events):
        t.problem = f"line {lineno}: event {len(t.events)} of the table is missing from the archive"
        return
    if isinstance(event, UnknownEvent):  # a newer skatbus wrote it: the record could not be right
        t.problem = f"event {index}: {newer_event(event)}"
        return
    if not t.events:
        t.skip, t.game = _game_of(event)
        if t.skip:
            return  # another game's table: none of its events are kept
    t.events.append(event)


def _game_of(first: Event | UnknownEvent) -> tuple[str, RecordGame | None]:
    """(why a table has no record or "", its records module) from its first event."""
    if type(first) is TableOpened:
        return "a table of skat: not written (skat iss export writes Skat's records)", None
    if type(first) is not TableOpenedV2:
        return "", None  # its fold says what is wrong
    module = records_module(first.game)
    if module is None:
        why = "skat iss export writes Skat's records" if first.game == "skat" else "this game has no records"
        return f"a table of {first.game}: not written ({why})", None
    return "", module


def _export(table: str, t: _Table) -> ExportItem:
    if t.skip:
        return ExportItem(table, note=t.skip)
    if t.problem:
        return ExportItem(table, note=t.problem, failed=True)
    if t.game is None:
        return ExportItem(table, note="does not start with table_opened", failed=True)
    try:
        return ExportItem(table, record=t.game.records_of(t.events))
    except NewerEvent as exc:
        return ExportItem(table, note=f"event {exc.position}: {exc.reason}", failed=True)
    except LogError as exc:
        return ExportItem(table, note=f"its log breaks the rules at event {exc.position}: {exc.reason}", failed=True)


def record_line(record: dict[str, Any]) -> bytes:
    """A record as one JSON line, its keys in the order the module wrote them."""
    return msgspec.json.encode(record) + b"\n"


# --- import --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportItem:
    """One record line imported: its verdict and, unless it is an error, the table's log."""

    lineno: int
    verdict: Verdict
    table: str = ""
    events: list[Event] | None = None


def import_lines(lines: Iterable[bytes | str]) -> Iterator[ImportItem]:
    """Every record as a table's log (``events_of``), with its verdict: a record that differs is
    imported with the rules' results; one that is an error is not imported. Tables are named by
    the record's ``table`` key where it is a usable table id not taken yet, else ``record-<line>``."""
    used: set[str] = set()
    for lineno, line in numbered(lines):
        try:
            record, module = read_line(line)
        except RecordError as exc:
            yield ImportItem(lineno, Verdict(status="error", reason=exc.reason))
            continue
        verdict = module.check(record)
        if verdict.status == "error":
            yield ImportItem(lineno, verdict)
            continue
        table = table_id(record.get("table"), lineno, used)
        used.add(table)
        yield ImportItem(lineno, verdict, table, module.events_of(record, table))


def table_id(wanted: Any, lineno: int, used: set[str]) -> str:
    """The id an imported record's table gets: its own ``table`` if usable, else ``record-N``."""
    if isinstance(wanted, str) and wanted not in used:
        try:
            return check_token("table", wanted)
        except ValueError:
            pass
    name = f"{TABLE_PREFIX}{lineno}"
    k = 1
    while name in used:
        k += 1
        name = f"{TABLE_PREFIX}{lineno}-{k}"
    return name
