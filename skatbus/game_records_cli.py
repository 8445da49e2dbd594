"""``skat records check | export | import``: the command line over ``skatbus.game_records``.

Only argument parsing and printing live here. Exit codes: 0 when every record agrees (every
table is exported); 1 when one differs or is an error (a table could not be exported); 2 for a
mistake on the command line or a file that cannot be read, in one line (``skat``'s main turns
``UsageError`` and a missing or forbidden file into that line).
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import UsageError
from .game_records import (
    ArchiveUnreadable,
    Tally,
    check_lines,
    describe,
    export_archive,
    import_lines,
    open_lines,
    record_line,
    verdict_json,
)
from .outputs import writable_dir, write_failed


def _read(path: str, lines: IO[bytes]) -> Iterator[bytes]:
    """The file's lines; a read that fails half-way (a broken .gz, a device gone) is a
    ``UsageError`` naming the file."""
    name = "stdin" if path == "-" else path
    try:
        yield from lines
    except (OSError, EOFError, zlib.error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise UsageError(f"{name}: cannot be read: {reason}") from None


def cmd_check(args: argparse.Namespace) -> int:
    """``skat records check FILE [--json]``: a line per record, then the counts."""
    out = sys.stdout
    tally = Tally()
    with open_lines(args.file) as f:
        for lineno, v in check_lines(_read(args.file, f)):
            tally.add(v)
            out.write(
                (json.dumps(verdict_json(lineno, v), ensure_ascii=False) if args.json else describe(lineno, v)) + "\n"
            )
    out.write((json.dumps({"summary": tally.summary()}) if args.json else tally.summary_line()) + "\n")
    return 1 if tally.failed else 0


def cmd_export(args: argparse.Namespace) -> int:
    """``skat records export ARCHIVE [--out FILE]``: a record per table of a game with records
    (on stdout without ``--out``); every other table is a note on stderr."""
    written = failed = skipped = 0
    out_path = Path(args.out) if args.out else None
    sink: IO[bytes] | _Stdout = _open_out(out_path) if out_path is not None else _Stdout()
    try:
        with open_lines(args.file) as f:
            try:
                for item in export_archive(_read(args.file, f)):
                    if item.record is None:
                        failed += item.failed
                        skipped += not item.failed
                        what = "not exported" if item.failed else "skipped"
                        where = f"table {item.table}: {what}" if item.table else "warning"  # a line of no table
                        print(f"{where}: {item.note}", file=sys.stderr)
                        continue
                    try:
                        sink.write(record_line(item.record))
                    except OSError as exc:
                        raise write_failed(out_path or "-", exc) from None
                    written += 1
            except ArchiveUnreadable as exc:
                raise UsageError(f"{args.file}: {exc}") from None
    finally:
        try:
            sink.close()  # where a buffered write meets a full disk
        except OSError as exc:
            raise write_failed(out_path or "-", exc) from None
    where = f" to {out_path}" if out_path is not None else ""
    extra = "".join(f"; {n} {what}" for n, what in ((skipped, "skipped"), (failed, "not exported")) if n)
    print(f"exported {written} table{'s' if written != 1 else ''}{where}{extra}", file=sys.stderr)
    return 1 if failed else 0


class _Stdout:
    """stdout for record lines (bytes), whatever ``sys.stdout`` is at the time."""

    def write(self, data: bytes) -> int:
        return sys.stdout.write(data.decode("utf-8"))

    def close(self) -> None:
        sys.stdout.flush()


def _open_out(path: Path) -> IO[bytes]:
    try:
        return open(path, "wb")
    except OSError as exc:
        raise UsageError(f"--out {path}: {(exc.strerror or type(exc).__name__).lower()}") from None


def cmd_import(args: argparse.Namespace) -> int:
    """``skat records import FILE --out DIR``: DIR/archive.jsonl, one table per record that can
    be replayed (one that differs too: its results are then the rules')."""
    from protocol.archive import encode_line

    out_dir = writable_dir(args.out)
    path = out_dir / "archive.jsonl"
    tally = Tally()
    imported = 0
    with open_lines(args.file) as f, open(path, "wb") as sink:
        for item in import_lines(_read(args.file, f)):
            v = item.verdict
            tally.add(v)
            if item.events is not None:
                try:
                    sink.writelines(encode_line(item.table, i, e) for i, e in enumerate(item.events))
                except OSError as exc:
                    raise write_failed(path, exc) from None
                imported += 1
            if v.status != "agree":
                what = f" (imported anyway as {item.table})" if item.events is not None else " (not imported)"
                print(describe(item.lineno, v) + what)
    print(f"imported {imported} table{'s' if imported != 1 else ''} into {path}")
    print(tally.summary_line())
    return 1 if tally.failed else 0


def register(subparsers: Any) -> None:
    """``skat records check | export | import``."""
    records = subparsers.add_parser(
        "records",
        help="game records of Thirty-one (docs/records.md): check against the engine, export, import",
        description="Game records, one JSON object per line (docs/records.md). Skat's records are `skat iss`.",
    )
    sub = records.add_subparsers(dest="records_command", required=True)
    chk = sub.add_parser("check", help="replay every record and compare its results with the rules'")
    chk.add_argument("file", help="records, one per line ('-' for stdin; .gz and .bz2 are read as such)")
    chk.add_argument("--json", action="store_true", help="one JSON object per record and a summary object")
    chk.set_defaults(handler=cmd_check)
    exp = sub.add_parser("export", help="write a record per table of an event archive (Skat tables are skipped)")
    exp.add_argument("file", help="archive.jsonl (from `skat records import` or a tournament's runs/<id>/)")
    exp.add_argument("--out", default=None, help="the file to write (default: stdout)")
    exp.set_defaults(handler=cmd_export)
    imp = sub.add_parser("import", help="turn records into event logs (DIR/archive.jsonl, for skat replay)")
    imp.add_argument("file", help="records, one per line ('-' for stdin; .gz and .bz2 are read as such)")
    imp.add_argument("--out", required=True, help="directory for archive.jsonl")
    imp.set_defaults(handler=cmd_import)
