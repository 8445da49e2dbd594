"""``skat report RUN``: write a tournament's report page and its tables' replay pages.

``report`` computes (plain data), ``report_html`` and ``replay_html`` draw; this module puts
the pages on disk and holds the command line.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from .replay_html import render_html
from .report import Report, ReportError, TableReport, build_report, run_files
from .report_html import render_report
from .report_thirty_one import T31TableReport

SHOWN = 8
"""Differing fields printed before the rest are counted."""


def _page_name(table: str) -> str:
    """A file name for a table's replay page (table ids are tokens; this keeps it so)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", table) + ".html"


def write_report(run: Path, out: Path | None = None, replays: bool = True) -> tuple[Path, int]:
    """Write the report (default ``RUN/report.html``, or beside an archive given by itself) and,
    with ``replays``, a replay page per table (of every game) in ``replay/`` beside it; returns
    the report's path and the pages written."""
    path, pages, _ = write_checked_report(run, out, replays)
    return path, pages


def write_checked_report(run: Path, out: Path | None = None, replays: bool = True) -> tuple[Path, int, Report]:
    """``write_report``, and the report itself: what its readers must be told (results.json
    disagreeing with the archive, damaged archive lines) is in it."""
    results_path, archive_path = run_files(run)
    out = out or (results_path or archive_path).parent / "report.html"
    report, logs = build_report(results_path, archive_path)
    pages = 0
    if replays:
        replay_dir = out.parent / "replay"
        replay_dir.mkdir(parents=True, exist_ok=True)
        tables: list[TableReport | T31TableReport] = [*report.tables]
        if report.thirty_one is not None:
            tables += report.thirty_one.tables
        for table in tables:
            page, count = render_html(logs[table.table])
            if count:
                path = replay_dir / _page_name(table.table)
                path.write_text(page, encoding="utf-8")
                table.replay = os.path.relpath(path, out.parent).replace(os.sep, "/")
                pages += 1
    out.write_text(render_report(report), encoding="utf-8")
    return out, pages, report


# --- the command line ----------------------------------------------------------------------


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write an HTML page about a tournament run: standings, charts, time-outs, replays",
        description="Write RUN/report.html (one self-contained page) and a replay page per table in RUN/replay/. "
        "Skat and Thirty-one tables are each reported with their game.",
    )
    p.add_argument("run", help="a run directory, runs/<id>/ (or its results.json), or an archive.jsonl by itself")
    p.add_argument(
        "--out", default=None, metavar="FILE.html", help="where to write the report (default RUN/report.html)"
    )
    p.add_argument("--no-replays", dest="replays", action="store_false", help="no per-table replay pages")
    p.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """``skat report RUN``: exit 2 with one line if the run cannot be read or written; exit 1
    when results.json disagrees with the archive (the page is written, says so at the top and
    shows what the archive says; the differing fields are printed here too)."""
    try:
        path, pages, report = write_checked_report(Path(args.run), Path(args.out) if args.out else None, args.replays)
    except (ReportError, ValueError) as exc:
        print(f"skat report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"skat report: {exc.filename or args.run}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for warning in report.damaged:
        print(f"skat report: warning: {warning}", file=sys.stderr)
    found = report.disagreements
    if found:
        print("skat report: results.json disagrees with the archive; the report shows the archive's:", file=sys.stderr)
        for line in found[:SHOWN]:
            print(f"  {line}", file=sys.stderr)
        if len(found) > SHOWN:
            print(f"  ... and {len(found) - SHOWN} more", file=sys.stderr)
    print(
        f"wrote {path}"
        + (f" and {pages} replay page{'s' if pages != 1 else ''} in {path.parent / 'replay'}" if pages else "")
    )
    return 1 if found else 0
