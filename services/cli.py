"""The ``skat`` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

# Modules that add their own subcommands: each has ``register(subparsers)`` and sets a
# ``handler`` on its parsers, so a command lives next to the code it runs.
_COMMAND_MODULES: tuple[str, ...] = ("services.records", "services.replay")


def main(argv: list[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `skat replay ... | head` ends quietly
    parser = argparse.ArgumentParser(prog="skat", description="Skat as an event-sourced protocol over NATS")
    sub = parser.add_subparsers(dest="command", required=True)
    from .tournament_cli import add_arguments

    run = sub.add_parser("run", help="the main job: a local bot tournament through the services (make run)")
    add_arguments(run)
    tour = sub.add_parser("tournament", help="run (or --resume) a tournament through the services")
    add_arguments(tour)
    quick = sub.add_parser("local", help="a quick tournament of random bots through the pure engine, no bus")
    quick.add_argument("--tables", type=int, default=3)
    quick.add_argument("--rounds", type=int, default=4, help="rounds per table (3 deals each)")
    quick.add_argument("--seed", default="skatbus")
    svc = sub.add_parser("service", help="run one service (dealer, bidding, play, scoring, views)")
    svc.add_argument("name", choices=["dealer", "bidding", "play", "scoring", "views"])
    svc.add_argument("--nats", default=None, help="server URL (default: $SKAT_NATS_URL or nats://127.0.0.1:4222)")
    upp = sub.add_parser("up", help="start a nats-server (unless --nats) and all five services")
    upp.add_argument("--nats", default=None, help="use this server instead of starting one (or $SKAT_NATS_URL)")
    upp.add_argument("--store", default=None, help="JetStream data directory (default: a temporary one)")
    upp.add_argument("--auth", default=None, metavar="DIR",
                     help="run the server with the users written by `skat auth --out DIR` (players held to their own subjects)")
    bot = sub.add_parser("bot", help="run a built-in bot as a remote player")
    bot.add_argument("name", help="built-in bot: random, stepping-random, heuristic")
    bot.add_argument("--player", required=True, help="the player id the bot plays as")
    bot.add_argument("--nats", default=None, help="server URL, with user:password@ for a secured server")
    bot.add_argument("--seed", default="", help="seed of the bot's random choices")
    auth = sub.add_parser("auth", help="write a nats-server configuration with one user per player")
    auth.add_argument("--players", required=True, help="comma-separated player ids")
    auth.add_argument("--out", required=True, help="directory for nats-server.conf and credentials.json")
    auth.add_argument("--store", default=None, help="JetStream data directory (default: OUT/jetstream)")
    auth.add_argument("--port", type=int, default=4222)
    sub.add_parser("schema", help="print the JSON Schema of every message a player sends or receives")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # not part of this installation
        module.register(sub)
    args = parser.parse_args(argv)
    if hasattr(args, "handler"):
        return int(args.handler(args))
    if args.command in ("run", "tournament"):
        from .tournament_cli import apply_config_file, tournament_main

        chosen = run if args.command == "run" else tour
        apply_config_file(args, {a.dest: a.default for a in chosen._actions})
        return tournament_main(args, intro=args.command == "run")
    if args.command == "local":
        from .local import run_local_tournament

        run_local_tournament(tables=args.tables, rounds=args.rounds, seed=args.seed)
        return 0
    if args.command == "service":
        from .main import service_main

        return service_main(args.name, _nats_url(args.nats))
    if args.command == "up":
        from .main import up

        if args.auth and args.nats:
            parser.error("--auth configures the server skat up starts; with --nats, configure that server yourself")
        if args.auth and args.store:
            parser.error("with --auth the store is the one `skat auth --store` wrote into the configuration")
        return up(args.nats or os.environ.get("SKAT_NATS_URL"), args.store, args.auth)
    if args.command == "bot":
        from . import logs
        from .bots import make_bot
        from .sdk import run as run_bot

        logs.configure()
        run_bot(make_bot(args.name, args.seed or args.player), args.player, _nats_url(args.nats))
        return 0
    if args.command == "auth":
        from .auth import write_auth

        players = [p.strip() for p in args.players.split(",") if p.strip()]
        users = write_auth(args.out, players, args.store, args.port)
        print(f"wrote {args.out}/nats-server.conf and {args.out}/credentials.json ({len(users) - 1} players)")
        print(f"start the server: nats-server -c {args.out}/nats-server.conf")
        return 0
    if args.command == "schema":
        from protocol.schema import player_schema

        print(player_schema())
        return 0
    return 2


def _nats_url(given: str | None) -> str:
    return given or os.environ.get("SKAT_NATS_URL", "nats://127.0.0.1:4222")


if __name__ == "__main__":
    sys.exit(main())
