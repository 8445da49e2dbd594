"""``skat replay``: the command line over ``replay`` (reading, stepping, verifying) and
``replay_html`` (the page). Kept apart so that neither of those needs argparse or the other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from services.connection import add_arguments as add_connection_arguments

from .replay import load, read_archive, show_to, step_through, summary, verify
from .replay_html import write_html


def _enter() -> bool:
    try:
        return input().strip().lower() not in ("q", "quit")
    except EOFError:
        return False


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="step through, summarise, verify or render a table's log",
        description="Replay a table from an archive.jsonl or the live store.",
    )
    p.add_argument("source", help="an archive.jsonl file, or a table id in the live store")
    p.add_argument("--table", default=None, help="the table in the archive (default: the first)")
    p.add_argument("--deal", type=int, default=None, help="only this deal (1-based)")
    p.add_argument("--to", type=int, default=None, help="show the table after event N (its position in the log)")
    p.add_argument("--summary", action="store_true", help="one line per deal and the totals")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-derive everything; exit 1 at the first bad event (an archive without --table: every table)",
    )
    p.add_argument("--html", default=None, metavar="OUT.html", help="write a self-contained step-by-step page")
    add_connection_arguments(p, "server URL(s) for a live table (default: $SKAT_NATS_URL)")
    p.set_defaults(handler=run)


def verify_archive(path: Path, out: TextIO) -> int:
    """``--verify`` on a whole archive: every table, each bad one named; exit 1 if any is."""
    try:
        logs = read_archive(path)
    except (OSError, ValueError) as exc:
        print(f"skat replay: {exc}", file=sys.stderr)
        return 2
    if not logs:
        print(f"skat replay: {path}: no events", file=sys.stderr)
        return 2
    if len(logs) == 1:  # one table: its own verdict, as with --table
        log = next(iter(logs.values()))
        verdict = verify(log)
        print(verdict.message if verdict.ok else f"{log.table}: {verdict.message}", file=out)
        return 0 if verdict.ok else 1
    bad = 0
    for log in logs.values():
        verdict = verify(log)
        if not verdict.ok:
            bad += 1
            print(f"{log.table}: {verdict.message}", file=out)
    events = sum(len(log.events) for log in logs.values())
    if bad:
        print(f"{bad} of {len(logs)} tables do not verify", file=out)
        return 1
    print(f"all {len(logs)} tables verify ({events} events)", file=out)
    return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if args.verify and args.table is None and Path(args.source).is_file():
        return verify_archive(Path(args.source), out)
    try:
        log = load(args.source, args.table, args.nats, args.creds, args.tls_ca)
    except (OSError, ValueError) as exc:
        print(f"skat replay: {exc}", file=sys.stderr)
        return 2
    if args.verify:
        verdict = verify(log)
        print(verdict.message if verdict.ok else f"{log.table}: {verdict.message}", file=out)
        return 0 if verdict.ok else 1
    if args.html:
        code, message = write_html(log, Path(args.html), args.deal)
        print(message, file=out if code == 0 else sys.stderr)
        return code
    if args.to is not None:
        return show_to(log, args.to, out)
    if args.summary:
        return summary(log, out)
    interactive = out is sys.stdout and sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        print("Enter: next event, q Enter: quit", file=out)
    return step_through(log, args.deal, out, _enter if interactive else None)
