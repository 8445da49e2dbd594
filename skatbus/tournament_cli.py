"""Command-line front ends of the tournament runner: ``skat tournament`` and ``skat run``."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import secrets
from typing import Any

from protocol.rules import Rules
from protocol.tournament import TournamentConfig
from services import logs
from services.connection import ConnectionSettings, from_args, open_connection, safe_servers
from services.connection import add_arguments as add_connection_arguments

from .bots import BOTS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bots",
        default="heuristic,stepping-random,random",
        help="built-in bots by name, one per seat (names repeat: random, random-2, ...)",
    )
    p.add_argument(
        "--remote",
        action="append",
        default=[],
        metavar="ID[:json]",
        help="a remote player that connects by itself (replaces one bot seat); :json for JSON updates",
    )
    p.add_argument("--id", default=None, help="tournament id (default: from the seed)")
    p.add_argument("--resume", default=None, metavar="ID", help="continue a tournament that was interrupted")
    p.add_argument(
        "--groups", type=int, default=3, help="sets of deals (each played once per seat rotation in duplicate mode)"
    )
    p.add_argument("--rounds", type=int, default=8, help="rounds per table (a round is one deal per player)")
    p.add_argument("--no-duplicate", dest="duplicate", action="store_false", help="no seat rotation of the same deals")
    p.add_argument(
        "--seed",
        default=None,
        help="decides every card; keep it secret when remote players take part "
        "(default: 'skatbus' for built-in bots only, else a random one)",
    )
    p.add_argument("--profile", choices=["isko", "classic"], default="isko")
    p.add_argument("--kontra", action="store_true")
    p.add_argument("--ramsch", action="store_true")
    p.add_argument("--bock", action="store_true")
    p.add_argument(
        "--standard", dest="seeger_fabian", action="store_false", help="rank by the standard list, not Seeger-Fabian"
    )
    p.add_argument("--players", type=int, choices=[3, 4], default=3, help="players per table")
    p.add_argument("--turn-seconds", type=float, default=30.0)
    add_connection_arguments(
        p,
        "use the services on this server (or comma-separated list; default: $SKAT_NATS_URL, else start a local stack)",
    )
    p.add_argument("--out", default="runs", help="directory for the results")
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a TOML or JSON file with any of these options (keys as the flags, e.g. "
        'rounds = 12, kontra = true, bots = "heuristic,random,random"); flags given win',
    )


def apply_config_file(args: argparse.Namespace, parser_defaults: dict[str, Any]) -> None:
    """Fill the options not given on the command line from ``--config`` (TOML or JSON)."""
    if not args.config:
        return
    import tomllib

    import msgspec

    raw = open(args.config, "rb").read()
    values: dict[str, Any] = tomllib.loads(raw.decode()) if args.config.endswith(".toml") else msgspec.json.decode(raw)
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in parser_defaults:
            raise SystemExit(f"{args.config}: unknown option {key!r}")
        if name == "bots" and isinstance(value, list):
            value = ",".join(map(str, value))
        if getattr(args, name) == parser_defaults[name]:  # given on the command line: that wins
            setattr(args, name, value)


def config_from(args: argparse.Namespace) -> TournamentConfig:
    names = [b.strip() for b in args.bots.split(",") if b.strip()]
    entrants: list[str] = []
    bots: dict[str, str] = {}
    formats: dict[str, Any] = {}
    for remote in args.remote:
        pid, _, fmt = remote.partition(":")
        entrants.append(pid)
        if fmt:
            formats[pid] = fmt
    for name in names[: max(0, args.players - len(entrants))]:
        if name not in BOTS:
            raise SystemExit(f"unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")
        pid, n = name, 2
        while pid in entrants:
            pid, n = f"{name}-{n}", n + 1
        entrants.append(pid)
        bots[pid] = name
    rules = Rules(
        profile=args.profile,
        kontra=args.kontra,
        ramsch=args.ramsch,
        bock=args.bock,
        seeger_fabian=args.seeger_fabian,
        rounds=args.rounds,
        players=args.players,
        turn_seconds=args.turn_seconds,
    )
    seed = args.seed or ("skatbus" if not args.remote else secrets.token_hex(16))
    # The id is public (table names carry it), so it must not give the seed away.
    tid = args.id or "t-" + hashlib.sha256(seed.encode()).hexdigest()[:10]
    return TournamentConfig(
        id=tid,
        entrants=entrants,
        bots=bots,
        formats=formats,
        rules=rules,
        groups=args.groups,
        duplicate=args.duplicate,
        seed=seed,
    )


async def _run(args: argparse.Namespace, intro: bool, settings: ConnectionSettings | None) -> int:
    from services.main import LocalStack

    from .tournament import format_standings, run_tournament

    config = None if args.resume else config_from(args)
    stack = None
    if settings is None:
        # `skat run` plays in a throwaway store; a named tournament keeps its store for --resume.
        stack = LocalStack(store_dir=None if intro else os.path.join(args.out, "store"))
        settings = ConnectionSettings((await stack.__aenter__(),))
        if intro:
            print(
                f"Started a local nats-server ({safe_servers(settings.servers, scheme=True)}) and the five services "
                "(dealer, bidding, play, scoring, views)."
            )
    try:
        nc = await open_connection(settings, name="skat-tournament")
        try:
            if config is not None and intro:
                tables = config.groups * (config.rules.players if config.duplicate else 1)
                print(
                    f"Tournament {config.id}: {', '.join(config.entrants)}; {tables} tables of "
                    f"{config.rules.deals} deals{' (duplicate: every deal once per seat rotation)' if config.duplicate else ''}.\n"
                )
            results = await run_tournament(nc, config, resume=args.resume, out_dir=args.out)
        finally:
            await nc.close()
    finally:
        if stack is not None:
            await stack.__aexit__(None, None, None)
    print()
    print(format_standings(results))
    files = results["files"]
    print(
        f"\nResults: {files['results']}\n         {files['standings_csv']}\nEvents:  {files['archive']} (every table's log, one event per line)"
    )
    if intro:
        first = results["tables"][0]["table"] if results["tables"] else "TABLE"
        print(
            f"\nNext: replay a table     .venv/bin/skat replay {files['archive']} --table {first}"
            f"\n      (or --summary, --verify, --html deal.html)"
            "\n      plug in your bot    docs/protocol.md; .venv/bin/skat bot heuristic --player ID --nats URL;"
            " examples/node-bot"
            "\n      a bigger one        .venv/bin/skat tournament --groups 10 --rounds 12"
        )
    return 0


def tournament_main(args: argparse.Namespace, intro: bool = False) -> int:
    """Run (or resume) a tournament. Connection settings are checked first, so a missing
    credentials file is one line on stderr (``SettingsError``), not a failure mid-way."""
    settings = from_args(args, default=None)
    logs.configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))
    try:
        import uvloop

        return uvloop.run(_run(args, intro, settings))
    except ImportError:
        return asyncio.run(_run(args, intro, settings))
