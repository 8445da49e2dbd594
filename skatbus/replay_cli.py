"""``skat replay``: the command line over ``replay`` (reading, stepping, verifying) and
``replay_html`` (the page). Kept apart so that neither of those needs argparse or the other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from services.connection import add_arguments as add_connection_arguments

from .replay import (
    TableLog,
    archive_tables,
    game_title,
    load,
    log_game,
    read_archive,
    show_to,
    step_through,
    summary,
    verify,
)
from .replay_html import write_html
from .replay_nav import INTERRUPTED, Reader, navigate, table_lines


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="step through, summarise, verify or render a table's log",
        description="Replay a table from an archive.jsonl or the live store.",
    )
    p.add_argument("source", help="an archive.jsonl file, or a table id in the live store")
    p.add_argument(
        "--table", default=None, help="the table in the archive, by id or by its number in --list (default: the first)"
    )
    p.add_argument("--list", action="store_true", help="list the archive's tables, numbered")
    p.add_argument("--deal", type=int, default=None, help="only this deal (1-based)")
    p.add_argument("--to", type=int, default=None, help="show the table after event N (its position in the log)")
    p.add_argument(
        "--summary",
        action="store_true",
        help="one line per deal and the totals (an archive without --table: every table)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-derive everything; exit 1 at the first bad event (an archive without --table: every table)",
    )
    p.add_argument("--html", default=None, metavar="OUT.html", help="write a self-contained step-by-step page")
    add_connection_arguments(p, "server URL(s) for a live table (default: $SKAT_NATS_URL)")
    p.set_defaults(handler=run)
    p.epilog = (
        "On a terminal the replay is interactive: Enter steps, b goes back, t/d/p move by trick and deal, "
        "N jumps to deal N, l lists an archive's tables, ? shows every key. Ctrl-C ends it with exit code 130."
    )


def _fail(message: object) -> int:
    print(f"skat replay: {message}", file=sys.stderr)
    return 2


def _games(logs: list[TableLog]) -> dict[str, int]:
    """How many tables of each game, in the order the games first appear."""
    counts: dict[str, int] = {}
    for log in logs:
        game = log_game(log)
        counts[game] = counts.get(game, 0) + 1
    return counts


def _skat_only(logs: list[TableLog]) -> bool:
    return set(_games(logs)) <= {"skat"}


def verify_tables(logs: list[TableLog], out: TextIO) -> int:
    """``--verify`` on a whole archive: every table, each bad one named; exit 1 if any is.
    An archive with tables of another game names each bad table's game and counts the
    tables by game."""
    if len(logs) == 1:  # one table: its own verdict, as with --table
        verdict = verify(logs[0])
        print(verdict.message if verdict.ok else f"{logs[0].table}: {verdict.message}", file=out)
        return 0 if verdict.ok else 1
    skat_only = _skat_only(logs)
    bad = 0
    for log in logs:
        verdict = verify(log)
        if not verdict.ok:
            bad += 1
            game = "" if skat_only else f" ({game_title(log_game(log))})"
            print(f"{log.table}{game}: {verdict.message}", file=out)
    events = sum(len(log.events) for log in logs)
    if bad:
        print(f"{bad} of {len(logs)} tables do not verify", file=out)
        return 1
    games = "" if skat_only else "; " + ", ".join(f"{n} {game_title(g)}" for g, n in _games(logs).items())
    print(f"all {len(logs)} tables verify ({events} events{games})", file=out)
    return 0


def summary_tables(logs: list[TableLog], out: TextIO) -> int:
    """``--summary`` on a whole archive: every table's deals and totals (a Thirty-one table:
    its line), one after another, each headed with its game if the archive holds another game
    than Skat; exit 1 if any table's log breaks the rules (its deals up to the break are still
    shown)."""
    code = 0
    titled = not _skat_only(logs)
    games = [log_game(log) for log in logs]
    broken: list[str] = []
    for i, log in enumerate(logs):
        if i and "skat" in (games[i], games[i - 1]):  # a Skat table's block stands apart
            print(file=out)
        done = summary(log, out, titled)
        if done:
            broken.append(log.table)
        code = max(code, done)
    if len(logs) > 1:
        print(f"\n{len(logs)} tables", file=out)
    if broken:
        print(f"{len(broken)} of {len(logs)} tables cannot be read whole: {', '.join(broken)}", file=out)
    return code


def _table_of(path: Path, wanted: str) -> str:
    """``--table``: an id of the archive, else a number from ``--list``."""
    tables = archive_tables(path)
    if wanted in tables or not wanted.isdigit():
        return wanted
    n = int(wanted)
    if not 1 <= n <= len(tables):
        raise ValueError(f"{path}: no table {wanted!r} (the archive has tables 1..{len(tables)}; see --list)")
    return tables[n - 1]


def _choose(logs: list[TableLog], read: Reader, out: TextIO) -> int | None:
    """Ask which of an archive's tables to replay (Enter: the first); None to quit."""
    for line in table_lines(logs):
        print(line, file=out)
    while True:
        try:
            answer = read(f"table (1..{len(logs)}, Enter: 1, q: quit) > ").strip()
        except EOFError:
            return None
        if answer.lower() in ("q", "quit"):
            return None
        if not answer:
            return 0
        if answer.isdigit() and 1 <= int(answer) <= len(logs):
            return int(answer) - 1
        named = [i for i, log in enumerate(logs) if log.table == answer]
        if named:
            return named[0]
        print(f"no table {answer!r}", file=out)


def run(args: argparse.Namespace, out: TextIO | None = None, read: Reader | None = None) -> int:
    """The command. ``read`` (a prompt -> line function) makes the replay interactive even
    off a terminal, which is how tests drive it; Ctrl-C anywhere ends it with exit 130."""
    out = out or sys.stdout
    if read is None and out is sys.stdout and sys.stdin.isatty() and sys.stdout.isatty():
        read = input
    try:
        return _run(args, out, read)
    except KeyboardInterrupt:
        print(file=out)
        return INTERRUPTED


def _warn(warnings: list[str]) -> None:
    """The damaged lines of an archive, one line each on stderr: the rest is read."""
    for line in warnings:
        print(f"skat replay: warning: {line}", file=sys.stderr)


def _run(args: argparse.Namespace, out: TextIO, read: Reader | None) -> int:
    path = Path(args.source)
    warnings: list[str] = []
    whole = path.is_file() and args.table is None and not (args.html or args.to is not None)
    if args.list and not path.is_file():
        return _fail(f"{args.source}: --list needs an archive file")
    if whole and (args.list or args.verify or args.summary or read is not None):
        try:
            logs = list(read_archive(path, warnings=warnings).values())
        except (OSError, ValueError) as exc:
            return _fail(exc)
        _warn(warnings)
        if not logs:
            return _fail(f"{path}: no events")
        if args.list:
            for line in table_lines(logs):
                print(line, file=out)
            return 0
        if args.verify:
            return verify_tables(logs, out)
        if args.summary:
            return summary_tables(logs, out)
        assert read is not None
        chosen = 0 if len(logs) == 1 else _choose(logs, read, out)
        if chosen is None:
            return 0
        return navigate(logs, read, out, chosen, args.deal, clear=out.isatty())
    try:
        table = _table_of(path, args.table) if path.is_file() and args.table is not None else args.table
        log = load(args.source, table, args.nats, args.creds, args.tls_ca, warnings)
    except (OSError, ValueError) as exc:
        return _fail(exc)
    _warn(warnings)
    if args.verify:
        verdict = verify(log)
        print(verdict.message if verdict.ok else f"{log.table}: {verdict.message}", file=out)
        return 0 if verdict.ok else 1
    if args.html:
        try:
            code, message = write_html(log, Path(args.html), args.deal)
        except OSError as exc:
            return _fail(f"cannot write {args.html}: {exc.strerror or exc}")
        print(message, file=out if code == 0 else sys.stderr)
        return code
    if args.to is not None:
        return show_to(log, args.to, out)
    if args.summary:
        return summary(log, out)
    if read is not None:
        return _navigate_from(path, log, read, out, args.deal)
    return step_through(log, args.deal, out, None)


def _navigate_from(path: Path, log: TableLog, read: Reader, out: TextIO, deal: int | None) -> int:
    """Interactive ``--table``: that table first, and the archive's other tables a key away
    (``l``, ``l N``) as without ``--table``; a live table (no archive) by itself."""
    logs = [log]
    if path.is_file():
        try:
            logs = list(read_archive(path, warnings=[]).values()) or logs  # its warnings were said
        except (OSError, ValueError):
            pass  # the table itself was read: replay it alone
    start = next((i for i, other in enumerate(logs) if other.table == log.table), None)
    if start is None:
        logs, start = [log], 0
    logs[start] = log  # the very table shown before: read once, as --table named it
    return navigate(logs, read, out, start, deal, clear=out.isatty())
