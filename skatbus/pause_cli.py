"""``skat pause ID`` and ``skat resume ID``: stop a tournament's clocks, or a single table's,
and start them again.

ID is a tournament id (its tables come from the tournament's log, ``SKATTOUR``: every table
not yet finished) or a table id. Each table is asked of the dealer (``skat.admin.pause``,
``protocol.wire.PauseTable``); while a table is paused no deadline runs, no command is taken
and nothing is derived, and on resuming the seat to move gets a whole turn. One line is
printed per table. Exit code 0 when every table is as asked (or closed, or not opened yet), 1
when one did not answer or refused, 2 for a mistake in what was given (a bad id, an id that
is neither a tournament nor a table, a reason that is too long).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from protocol.subjects import check_token
from services.connection import add_arguments as add_connection_arguments
from services.connection import add_connect_timeout, check_connect_timeout, connect_patience, from_args, open_connection

from .errors import UsageError

MAX_REASON = 200
"""What the dealer takes (``PauseTable.reason``): it is shown to the players."""


def register(subparsers: Any) -> None:
    for name, verb, what in (
        ("pause", "pause", "stop the clocks of a tournament's open tables (or of one table): nobody times out"),
        ("resume", "resume", "start the clocks of a paused tournament's tables (or of one table) again"),
    ):
        p = subparsers.add_parser(
            name,
            help=what,
            description=f"{verb.capitalize()} every table of tournament ID that is not finished, or table ID, "
            "through the dealer (skat.admin.pause); one line per table.",
        )
        p.add_argument("id", metavar="ID", help="a tournament id (skat tournament prints it) or a table id")
        if name == "pause":
            p.add_argument(
                "--reason",
                default="paused by the operator",
                help=f"shown to the players while the table is paused (at most {MAX_REASON} characters)",
            )
        if name == "resume":
            p.add_argument(
                "--force",
                action="store_true",
                help="resume a tournament's tables even when no runner plays its built-in bots (they would "
                "time out and forfeit)",
            )
        add_connection_arguments(p)
        add_connect_timeout(p)
        p.set_defaults(handler=cmd_pause, paused=name == "pause")


def cmd_pause(args: argparse.Namespace) -> int:
    try:
        check_token("tournament or table", args.id)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    reason = getattr(args, "reason", "")
    if len(reason) > MAX_REASON:
        raise UsageError(f"--reason is at most {MAX_REASON} characters, not {len(reason)}")
    check_connect_timeout(args)
    settings = from_args(args)
    assert settings is not None
    return asyncio.run(_pause(args, settings, reason))


async def _pause(args: argparse.Namespace, settings: Any, reason: str) -> int:
    from protocol.tournament import fold_tournament

    from .tournament import TournamentLog, pause_outcome, set_paused

    nc = await open_connection(settings, patience=connect_patience(args.connect_timeout), name=f"skat-{args.command}")
    try:
        state = fold_tournament(await TournamentLog(nc).read(args.id))
        tables = [t.table for t in state.pending] if state.config is not None else [args.id]
        if state.config is not None and not tables:
            print(f"tournament {args.id} has finished: no table to {args.command}")
            return 0
        if state.config is not None and state.config.bots and not args.paused and not args.force:
            if not await _runner_present(nc, args.id):
                raise UsageError(
                    f"tournament {args.id} has built-in bots and no runner plays them now: resume it with "
                    f"skat tournament --resume {args.id} (which resumes its tables), or --force"
                )
        replies = await set_paused(nc, tables, args.paused, reason, timeout=2.0, patience=5.0)
    finally:
        await nc.close()
    if state.config is None:
        reply = replies[args.id]
        if reply is not None and not reply.ok and reply.code == "no_table":
            raise UsageError(f"{args.id}: there is no tournament and no table by this id on this server")
    failed = 0
    for table, reply in replies.items():
        print(f"{table}: {pause_outcome(reply, args.paused)}")
        failed += reply is None or (not reply.ok and reply.code not in ("table_closed", "no_table"))
    return 1 if failed else 0


async def _runner_present(nc: Any, tid: str) -> bool:
    """Whether the runner of tournament ``tid`` is running (it plays the built-in bots: resumed
    without it, they would time out, be withdrawn and forfeit)."""
    from .tournament import runner_subject

    try:
        await nc.request(runner_subject(tid), b"", timeout=1.5)
        return True
    except Exception:
        return False
