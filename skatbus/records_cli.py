"""``skat iss check | import | export``: the command line over ``skatbus.records``.

Only argument parsing and printing live here; what the commands do is in ``records``, where
code and tests can call it without a command line. A file that cannot be opened reaches
``skat``'s main, which says so in one line (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from protocol.archive import decode_event, decode_line
from protocol.clocks import parse_stamp
from protocol.events import DealDealt, TableOpened
from protocol.skat.iss import IssRecord, Verdict
from protocol.skat.table import LogError

from .archive_reader import Warnings
from .outputs import open_output, writable_dir, write_failed
from .records import (
    ArchiveLine,
    ImportFailed,
    Tally,
    archive_line,
    describe,
    export_events,
    iss_date,
    numbered_records,
    open_text,
    read_archive,
    record_events,
    skipped_lines,
    table_id,
    verdict_for,
    verdict_json,
    verdicts,
)


def cmd_check(args: argparse.Namespace) -> int:
    """``skat iss check FILE [--json]``: exit 1 if any record differs or cannot be replayed."""
    out = sys.stdout
    tally = Tally()
    with open_text(args.file) as lines:
        for lineno, v in verdicts(lines, args.jobs):
            tally.add(v)
            out.write((json.dumps(verdict_json(lineno, v)) if args.json else describe(lineno, v)) + "\n")
    if args.json:
        out.write(json.dumps({"summary": tally.summary()}) + "\n")
    else:
        out.write(tally.summary_line() + "\n")
    return 1 if tally.failed else 0


def cmd_import(args: argparse.Namespace) -> int:
    """``skat iss import FILE --out DIR``: DIR/archive.jsonl, one table per imported record.
    A DIR that is a file or cannot be written in is one line before anything is read."""
    out_dir = writable_dir(args.out)
    path = out_dir / "archive.jsonl"
    tally = Tally()
    imported = 0
    with open_text(args.file) as lines, open(path, "wb") as sink:
        for lineno, item in numbered_records(lines):
            v = verdict_for(item)
            if v.status in ("agree", "differ"):
                assert isinstance(item, IssRecord)
                try:
                    log = record_events(item)
                except (ImportFailed, LogError) as exc:
                    v = Verdict(game_id=v.game_id, status="error", reason=f"not imported: {exc}")
                else:
                    table = table_id(item)
                    played = iss_played(item.header.get("DT"))  # the deal's start, when the record says
                    sink.writelines(
                        archive_line(table, i, e, at=played if isinstance(e, TableOpened | DealDealt) else None)
                        for i, e in enumerate(log)
                    )
                    imported += 1
            tally.add(v)
            if v.status != "agree":
                print(describe(lineno, v) + ("  (imported anyway)" if v.status == "differ" else ""))
    print(f"imported {imported} tables into {path}")
    print(tally.summary_line())
    return 1 if tally.failed else 0


def cmd_export(args: argparse.Namespace) -> int:
    """``skat iss export ARCHIVE.jsonl --out FILE.sgf``: every exportable deal as a record.
    An output that cannot be written (a directory, under a file, read-only) is one line before
    the archive is read; a write failing half-way (a full disk) is one line too."""
    date = iss_date()
    played = DealTimes()
    written = skipped = 0
    reasons: Counter[str] = Counter()
    notes: list[str] = []
    damaged = Warnings()
    unfinished: list[str] = []
    stopped: set[str] = set()
    """The tables a damaged line named, and every table read (one never read: all its deals lost)."""
    seen: set[str] = set()
    out_path = Path(args.out)
    with open_text(args.file) as lines:
        sink = open_output(out_path)
        try:
            events = _noting_tables(read_archive(played.noting(lines), damaged, stopped), seen)
            for table, deal, record, why in export_events(events, date, notes, unfinished):
                if record is None:  # said once per reason below, not once per deal
                    skipped += 1
                    reasons[why] += 1
                else:
                    record = played.dated(record, table, deal, date)
                    try:
                        sink.write(record + "\n")
                    except OSError as exc:
                        raise write_failed(out_path, exc) from None
                    written += 1
        except (ValueError, LogError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            try:
                sink.close()  # where a buffered write meets a full disk
            except OSError as exc:
                raise write_failed(out_path, exc) from None
    undated = [played.undated_line()] if played.undated else []
    for line in [*skipped_lines(reasons), *notes, *undated]:  # each said once, on stderr
        print(line, file=sys.stderr)
    for line in damaged.lines():  # as every reader of an archive words a damaged line
        print(f"skat iss export: warning: {line}", file=sys.stderr)
    print(f"exported {written} deals to {out_path}; {skipped} not exportable")
    # 1 only when deals were kept from the export (docs/operations.md): a table dropped at an
    # event it cannot fold, or a damaged line with a table left short of its deals; a cut
    # closing line after the last deal costs nothing, so it is a warning and exit 0 (a table
    # whose every line is lost, though, may have had deals)
    dropped = any(n.startswith("table ") for n in notes)
    return 1 if dropped or (damaged and (unfinished or stopped - seen)) else 0


def _noting_tables(lines: Iterable[ArchiveLine], seen: set[str]) -> Iterator[ArchiveLine]:
    """``lines`` as they are, each one's table noted in ``seen`` on the way."""
    for line in lines:
        seen.add(line.table)
        yield line


def iss_played(dt: str | None) -> float | None:
    """Unix time of an ISS record's ``DT`` (``2007-04-13/08:40:27/UTC``), or None: an imported
    table's opening and deal carry it as their ``at``, its moves none (ISS says when the game
    was played, not how long each move took, so no think time is made up)."""
    try:
        return datetime.strptime(dt or "", "%Y-%m-%d/%H:%M:%S/UTC").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


class DealTimes:
    """When each deal of an archive was played (its ``deal_dealt`` line's ``at``), noted as the
    lines stream past on their way to the reader, so that each exported record is dated by its
    deal and not by the export; a deal without one (an archive written before archives had
    times, or imported without dates) keeps the export's date, and that is said once."""

    def __init__(self) -> None:
        self.at: dict[tuple[str, int], str] = {}
        self.undated = 0

    def noting(self, lines: Iterable[str | bytes]) -> Iterator[str | bytes]:
        for raw in lines:
            data = raw.encode() if isinstance(raw, str) else raw
            if b'"at"' in data and b"deal_dealt/" in data:
                try:
                    line = decode_line(data)
                    event = decode_event(line.event)
                except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
                    pass  # the reader says what is wrong with it
                else:
                    if isinstance(event, DealDealt) and line.time is not None:
                        self.at[(line.table, event.deal)] = line.at or ""
            yield raw

    def dated(self, record: str, table: str, deal: int, export_date: str) -> str:
        """``record`` with its ``DT`` the time its deal was played, if the archive says."""
        at = self.at.get((table, deal))
        if not at:
            self.undated += 1
            return record
        played = datetime.fromtimestamp(parse_stamp(at), UTC)
        return record.replace(f"DT[{export_date}]", f"DT[{iss_date(played)}]", 1)

    def undated_line(self) -> str:
        return f"{self.undated} deal{'s' * (self.undated != 1)} with no stored time in the archive: dated at the export"


def register(subparsers: Any) -> None:
    """``skat iss check | import | export``."""
    iss = subparsers.add_parser("iss", help="ISS game records: check against the engine, import, export")
    sub = iss.add_subparsers(dest="iss_command", required=True)
    chk = sub.add_parser("check", help="replay every record and compare with its published result")
    chk.add_argument("file", help="records, one per line ('-' for stdin; .bz2 and .gz are read as such)")
    chk.add_argument("--json", action="store_true", help="one JSON object per record and a summary object")
    chk.add_argument("--jobs", type=int, default=1, help="replay in this many processes (default 1)")
    chk.set_defaults(handler=cmd_check)
    imp = sub.add_parser("import", help="turn records into event logs (DIR/archive.jsonl)")
    imp.add_argument("file", help="records, one per line ('-' for stdin; .bz2 and .gz are read as such)")
    imp.add_argument("--out", required=True, help="directory for archive.jsonl")
    imp.set_defaults(handler=cmd_import)
    exp = sub.add_parser("export", help="write the deals of an event archive as ISS records")
    exp.add_argument("file", help="archive.jsonl (from `skat iss import` or a tournament's runs/<id>/)")
    exp.add_argument("--out", required=True, help="the .sgf file to write")
    exp.set_defaults(handler=cmd_export)
