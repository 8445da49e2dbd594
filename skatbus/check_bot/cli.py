"""``skat check-bot ID``: running the checks, and the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import Any, TextIO
from urllib.parse import urlsplit

import nats.errors

from protocol.subjects import (
    check_token,
)
from services.connection import ConnectionSettings, SettingsError, from_args, open_connection
from services.connection import add_arguments as add_connection_arguments
from services.main import LocalStack, wait_ready

from ..cli_parser import SkatParser
from .checker import Checker
from .common import TABLE_CHECKS, CheckError
from .games import GAMES
from .relay import Relay
from .report import Result, write_report
from .transcript import transcript_main

# --- running it ----------------------------------------------------------------------------------


def _upstream(settings: ConnectionSettings) -> tuple[str, int]:
    url = settings.servers[0]
    parts = urlsplit(url if "://" in url else f"nats://{url}")
    return parts.hostname or "127.0.0.1", parts.port or 4222


async def check(
    player: str,
    settings: ConnectionSettings | None,
    out: TextIO,
    port: int = 0,
    json_only: bool = False,
    short: float = 3.0,
    wait: float = 120.0,
    only: tuple[str, ...] = TABLE_CHECKS,
    game: str = "skat",
) -> dict[str, Result]:
    """Run every check against the bot ``player`` at tables of ``game`` (the services at
    ``settings``, or an embedded stack when None); the results by check."""
    async with contextlib.AsyncExitStack() as stack:
        if settings is None:
            out.write("starting an embedded nats-server and the five services...\n")
            out.flush()
            settings = ConnectionSettings((await stack.enter_async_context(LocalStack()),))
        else:
            try:
                await wait_ready(settings, timeout=15.0)
            except (TimeoutError, OSError, nats.errors.Error) as exc:
                raise CheckError(
                    f"the services at {settings.describe()} do not answer ({exc or type(exc).__name__}); skat up starts them"
                ) from None
        nc = await open_connection(settings, no_echo=True, max_reconnect_attempts=-1, name="skat-check-bot")
        stack.push_async_callback(nc.close)
        relay = Relay(_upstream(settings), port)
        try:
            await relay.open()
        except OSError as exc:
            raise CheckError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        stack.push_async_callback(relay.cut)
        assert relay.server is not None
        relay.port = relay.server.sockets[0].getsockname()[1]
        scheme = "tls://localhost" if settings.wants_tls else "nats://127.0.0.1"
        url = f"{scheme}:{relay.port}"
        creds = " --creds YOUR.nk" if settings.creds is not None else ""
        ca = f" --tls-ca {settings.tls_ca}" if settings.tls_ca else ""
        out.write(
            f"Start your bot as player {player}, connected to {url} (a relay check-bot can cut), e.g.\n"
            f"  skat bot random{GAMES[game].flag} --player {player} --nats {url}{creds}{ca}\n"
            f"Waiting up to {wait:g} s for it to connect...\n"
        )
        out.flush()
        checker = Checker(nc, player, relay, out, json_only=json_only, short=short, wait=wait, only=only, game=game)
        return await checker.run()
    raise AssertionError("unreachable")  # pragma: no cover - the context manager does not swallow


def _parse_only(text: str | None) -> tuple[str, ...]:
    if not text:
        return TABLE_CHECKS
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in TABLE_CHECKS]
    if unknown or not names:
        raise ValueError(f"--only takes {', '.join(TABLE_CHECKS)} (comma-separated), not {text!r}")
    return names


def handle(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``skat check-bot``: 0 when every check passed, 1 when one failed, 2 when they could not run."""
    out = out or sys.stdout
    try:
        check_token("player", args.player)
        only = _parse_only(args.only)
        if not 0.5 <= args.short_deadline <= 60:
            raise ValueError("--short-deadline must be from 0.5 to 60 seconds")
        if args.wait <= 0:
            raise ValueError("--wait must be > 0")
        if not 0 <= args.port < 65536:
            raise ValueError("--port must be from 0 to 65535")
        settings = from_args(args, default=None)
    except (ValueError, SettingsError) as exc:
        print(f"skat check-bot: {exc}", file=sys.stderr)
        return 2

    async def main() -> dict[str, Result]:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def interrupt(times: int = 10) -> None:
            # Cancelled again until it ends: on Python 3.11, a cancellation that meets an
            # asyncio.wait_for whose inner future has just finished (nats-py's flush and
            # requests) is lost, and the run would go on as if nothing happened.
            if not task.done() and times > 0:
                task.cancel()
                loop.call_later(1.0, interrupt, times - 1)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, interrupt)
        return await check(
            args.player,
            settings,
            out,
            port=args.port,
            json_only=args.json,
            short=args.short_deadline,
            wait=args.wait,
            only=only,
            game=args.game,
        )

    try:
        results = asyncio.run(main())
    except asyncio.CancelledError:
        print("skat check-bot: interrupted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("skat check-bot: interrupted", file=sys.stderr)
        return 130
    except (CheckError, FileNotFoundError, TimeoutError, OSError, nats.errors.Error) as exc:
        print(f"skat check-bot: {exc}", file=sys.stderr)
        return 2
    write_report(args.player, results, out, args.game)
    return 1 if any(r.status == "FAIL" for r in results.values()) else 0


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("player", metavar="ID", help="the player id your bot plays as")
    add_connection_arguments(
        p,
        "the services to check against (a services' user: it watches the bot's subjects); "
        "default: $SKAT_NATS_URL, else an embedded stack",
    )
    p.add_argument(
        "--port", type=int, default=0, help="the relay's port on 127.0.0.1 your bot connects to (default: a free one)"
    )
    p.add_argument(
        "--json", action="store_true", help="seat the bot with JSON updates, as skat tournament --remote ID:json does"
    )
    p.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the bot to connect (default 120)")
    p.add_argument(
        "--short-deadline", type=float, default=3.0, metavar="SECONDS", help="seconds per move in the deadline check"
    )
    p.add_argument(
        "--only", default=None, metavar="CHECK[,...]", help=f"only these table checks: {', '.join(TABLE_CHECKS)}"
    )
    p.add_argument(
        "--game",
        default="skat",
        choices=tuple(GAMES),
        help="the game of the tables the bot is checked at (default skat)",
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check-bot",
        help="check a remote bot against the protocol: a pass/fail report",
        description="Check a remote bot the way the platform uses it: start the bot yourself (as player ID) "
        "when told where to connect. Exit code 0 when every check passes, 1 otherwise.",
    )
    add_check_arguments(p)
    p.set_defaults(handler=handle)


def main(argv: list[str] | None = None) -> int:
    """``python -m skatbus.check_bot``: ``--transcript``, or the same as ``skat check-bot``."""
    argv = sys.argv[1:] if argv is None else argv
    if "--transcript" in argv:
        return transcript_main(argv)
    parser = SkatParser(prog="python -m skatbus.check_bot", description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_check_arguments(parser)
    return handle(parser.parse_args(argv))
