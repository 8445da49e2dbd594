"""The ``skat`` command line."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

# Modules that add their own subcommands: each has ``register(subparsers)`` and sets a
# ``handler`` on its parsers, so a command lives next to the code it runs.
_COMMAND_MODULES: tuple[str, ...] = (
    "skatbus.records_cli",
    "skatbus.game_records_cli",
    "skatbus.replay_cli",
    "skatbus.report_cli",
    "skatbus.check_bot",
    "skatbus.ratings_cli",
    "skatbus.web.cli",
    "skatbus.pause_cli",
    "skatbus.verify_cli",
    "skatbus.match_cli",
)
_PIPED_COMMANDS = frozenset({"replay", "iss", "records", "schema"})
"""Commands whose output a person pipes into ``head`` and the like."""


def _web_companion(listen: str) -> Callable[[Any], list[subprocess.Popen[bytes]]]:
    """What ``skat up`` starts once the stack is up: the live page (``skat web``) on ``listen``,
    connected as the services are (their environment names the credential files)."""

    def start(settings: Any) -> list[subprocess.Popen[bytes]]:
        from services.children import popen
        from services.main import service_env

        cmd = [sys.executable, "-m", "skatbus.cli", "web", "--listen", listen]
        return [popen(cmd, env=service_env(settings))]  # dies with skat up, however that dies

    return start


def main(argv: list[str] | None = None) -> int:
    from services.logs import quiet_client_library

    quiet_client_library()
    from .cli_parser import SkatParser

    parser = SkatParser(prog="skat", description="Skat as an event-sourced protocol over NATS")
    sub = parser.add_subparsers(dest="command", required=True)
    from services.connection import add_arguments as add_connection_arguments
    from services.connection import add_connect_timeout

    from .standings_text import HELP_LEGEND
    from .tournament_cli import add_arguments

    run = sub.add_parser(
        "run", help="the main job: a local bot tournament through the services (make run)", epilog=HELP_LEGEND
    )
    add_arguments(run)
    tour = sub.add_parser("tournament", help="run (or --resume) a tournament through the services", epilog=HELP_LEGEND)
    add_arguments(tour)
    quick = sub.add_parser(
        "local",
        help="a quick tournament of random bots through the pure engine, no bus",
        epilog="The standings at the end: SF is Seeger-Fabian points, SF/deal Seeger-Fabian points per deal, list "
        "the score list's points, won/decl the games won of those declared, passed the deals passed in.",
    )
    quick.add_argument("--tables", type=int, default=3, help="tables played one after another")
    quick.add_argument("--rounds", type=int, default=4, help="rounds per table (3 deals each)")
    quick.add_argument("--seed", default="skatbus", help="decides every card and every random bot's choice")
    svc = sub.add_parser("service", help="run one service (dealer, bidding, play, scoring, views)")
    svc.add_argument("name", choices=["dealer", "bidding", "play", "scoring", "views"], help="which service")
    add_connection_arguments(svc)
    upp = sub.add_parser("up", help="start a nats-server (unless --nats), all five services and the live page")
    add_connection_arguments(upp, "use this server (or list) instead of starting one (or $SKAT_NATS_URL)")
    upp.add_argument("--store", default=None, help="JetStream data directory (default: a temporary one)")
    upp.add_argument(
        "--port",
        type=int,
        default=None,
        metavar="PORT",
        help="the port the server listens on, on 127.0.0.1 (default: a free one): a restart comes back on the "
        "same address; not with --nats, --auth or --cluster",
    )
    upp.add_argument(
        "--web",
        default="127.0.0.1:8470",
        metavar="HOST:PORT",
        help="where the live page (skat web) is served once the stack is up (default 127.0.0.1:8470; "
        "port 0: a free one)",
    )
    upp.add_argument("--no-web", dest="web", action="store_const", const="", help="do not start the live page")
    upp.add_argument(
        "--cluster",
        type=int,
        default=0,
        metavar="N",
        help="run a local N-node JetStream cluster on loopback instead of one server (try 3); streams get N "
        "replicas (default: one server)",
    )
    upp.add_argument(
        "--auth",
        default=None,
        metavar="DIR",
        help="run the server with the users written by `skat auth --out DIR` (players held to their own subjects)",
    )
    bot = sub.add_parser("bot", help="run a built-in bot as a remote player")
    bot.add_argument(
        "name",
        help="built-in bot: random, stepping-random, heuristic, pimc (Skat); random, heuristic (Thirty-one)",
    )
    bot.add_argument("--player", required=True, help="the player id the bot plays as")
    bot.add_argument(
        "--game",
        default=None,
        metavar="GAME",
        help="play only this game's tables (skat, thirty-one); default: every game with a built-in bot of that name",
    )
    add_connection_arguments(bot)
    bot.add_argument("--seed", default="", help="seed of the bot's random choices (default: the player id)")
    bot.add_argument(
        "--tournament",
        default=None,
        metavar="ID",
        help="stop when tournament ID is over, at once if it ended before (default: when the tournament that lists "
        "this player is over)",
    )
    bot.add_argument(
        "--forever", action="store_true", help="keep serving tables after a tournament ends (until Ctrl-C)"
    )
    for p in (bot, upp):
        add_connect_timeout(p)
    auth = sub.add_parser(
        "auth",
        help="write a nats-server configuration with one NKey user per player",
        description="Write OUT/nats-server.conf (public keys only), a seed file per user "
        "(OUT/<player>.nk, OUT/skat-services.nk; mode 0600) and OUT/skat-auth.json. "
        "Running it again keeps existing keys (add players freely) and the CA.",
    )
    auth.add_argument("--players", required=True, help="comma-separated player ids")
    auth.add_argument("--out", required=True, help="directory for the configuration and the key files")
    auth.add_argument("--store", default=None, help="JetStream data directory (default: OUT/jetstream)")
    auth.add_argument(
        "--listen",
        default=None,
        metavar="HOST:PORT",
        help="where the server listens (default 127.0.0.1:4222; 0.0.0.0:4222 for remote players, with TLS)",
    )
    auth.add_argument("--port", type=int, default=None, help="shorthand for --listen 127.0.0.1:PORT")
    auth.add_argument(
        "--tls", action="store_true", help="make a CA (OUT/ca.pem, for the players) and a server certificate"
    )
    auth.add_argument(
        "--tls-name",
        action="append",
        default=[],
        metavar="NAME",
        help="with --tls: another DNS name or IP the certificate is for (repeatable)",
    )
    auth.add_argument("--tls-cert", default=None, metavar="FILE", help="use this server certificate (PEM) instead")
    auth.add_argument("--tls-key", default=None, metavar="FILE", help="... and its private key")
    auth.add_argument(
        "--tls-ca", default=None, metavar="FILE", help="... and the CA certificate clients need (unless a public CA)"
    )
    auth.add_argument(
        "--player-connections",
        type=int,
        default=None,
        metavar="N",
        help="connections per player in the players' shared cap (default 4)",
    )
    auth.add_argument("--rotate-keys", action="store_true", help="new keys for everybody (default: keep existing ones)")
    sub.add_parser("schema", help="print the JSON Schema of every message a player sends or receives")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # not part of this installation
        module.register(sub)
    for p in (run, tour, svc, upp):
        p.add_argument(
            "--replicas",
            type=int,
            default=None,
            metavar="N",
            help="copies of every stream created (1-5; $SKAT_REPLICAS; default: min(3, the cluster's size), 1 on one server)",
        )
    args = parser.parse_args(argv)
    if getattr(args, "replicas", None) is not None:
        if not 1 <= args.replicas <= 5:
            parser.exit(2, f"skat {args.command}: --replicas must be from 1 to 5, not {args.replicas}\n")
        os.environ["SKAT_REPLICAS"] = str(args.replicas)  # for this process and the services it starts
    if args.command in _PIPED_COMMANDS and hasattr(signal, "SIGPIPE"):
        # `skat replay ... | head` ends quietly. Only here: a long-running process with the
        # default SIGPIPE dies without a word when a socket's peer goes away (a broker restart).
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return _guarded(args, lambda: _dispatch(args, parser, run, tour))


def _guarded(args: argparse.Namespace, command: Callable[[], int]) -> int:
    """Run a command, turning the user's mistakes into one line on stderr and exit code 2:
    ``UsageError`` and the settings', keys' and certificates' errors, and a file that is not
    there (or is a directory, or may not be read or written), whichever command met it. A
    server that cannot be reached is one line and exit code 1; Ctrl-C ends quietly (130).
    Anything else is a bug and keeps its traceback."""
    from services.auth import AuthError
    from services.certs import CertError
    from services.connection import SettingsError, Unreachable
    from services.main import ServiceDidNotStart
    from services.natsserver import StartRefused
    from services.store import Unavailable

    from .errors import UsageError

    try:
        return command()
    except (UsageError, SettingsError, AuthError, CertError, StartRefused) as exc:
        return _say(args, str(exc), 2)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        reason = (exc.strerror or exc.__class__.__name__).lower()
        return _say(args, f"{exc.filename}: {reason}" if exc.filename else reason, 2)
    except (Unreachable, ServiceDidNotStart) as exc:
        return _say(args, str(exc), 1)
    except Unavailable as exc:  # the store did not answer (no JetStream, or not for this user)
        return _say(args, f"{exc} (does this server run JetStream, and may this user use it?)", 1)
    except KeyboardInterrupt:
        return _say(args, "interrupted", 130)
    except BrokenPipeError:  # `skat tournament | head`: the reader is gone, so is the output
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _say(args: argparse.Namespace, message: str, code: int) -> int:
    line = " ".join(message.split())  # one line, whatever the message held
    print(f"skat {args.command}: {line}", file=sys.stderr, flush=True)
    return code


def _dispatch(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    run: argparse.ArgumentParser,
    tour: argparse.ArgumentParser,
) -> int:
    """Run the chosen command. Input mistakes raise ``UsageError``, ``SettingsError``,
    ``AuthError`` or ``CertError`` (one line on stderr, exit 2: ``_guarded``)."""
    if hasattr(args, "handler"):
        return int(args.handler(args))
    if args.command in ("run", "tournament"):
        from .tournament_cli import apply_config_file, tournament_main

        chosen = run if args.command == "run" else tour
        defaults = {a.dest: a.default for a in chosen._actions}
        apply_config_file(args, defaults, chosen._actions)
        return tournament_main(args, intro=args.command == "run", defaults=defaults)
    if args.command == "local":
        from .errors import UsageError
        from .local import run_local_tournament

        if args.tables < 1 or args.rounds < 1:
            raise UsageError(f"--tables and --rounds must be at least 1, not {args.tables} and {args.rounds}")
        if not args.seed:
            raise UsageError("--seed must not be empty (leave it out for the default)")
        run_local_tournament(tables=args.tables, rounds=args.rounds, seed=args.seed)
        return 0
    if args.command == "service":
        from services.connection import from_args
        from services.main import service_main

        settings = from_args(args)
        assert settings is not None
        return service_main(args.name, settings)
    if args.command == "up":
        from services.connection import from_args
        from services.main import up

        from .errors import UsageError

        if args.auth and (args.nats or args.creds or args.tls_ca):
            raise UsageError("--auth configures the server skat up starts; with --nats, configure that server yourself")
        if args.auth and args.store:
            raise UsageError("with --auth the store is the one `skat auth --store` wrote into the configuration")
        if args.cluster and (args.auth or args.nats):
            raise UsageError("--cluster starts its own servers: it goes with neither --auth nor --nats")
        if args.cluster and not 2 <= args.cluster <= 5:
            raise UsageError(
                f"--cluster takes 2 to 5 nodes, not {args.cluster} (one server: leave out --cluster)"
                if args.cluster == 1
                else f"--cluster takes 2 to 5 nodes, not {args.cluster}"
            )
        if args.port is not None:
            if args.nats:
                raise UsageError("--port is where the server skat up starts listens; with --nats it starts none")
            if args.auth:
                raise UsageError("with --auth the server listens where `skat auth --listen/--port` wrote")
            if args.cluster:
                raise UsageError("--port goes with one server; the nodes of a --cluster listen on free ports")
            if not 1 <= args.port <= 65535:
                raise UsageError(f"--port must be from 1 to 65535, not {args.port}")
        if args.store:  # a file, or a path that cannot be made: one line before anything starts
            from services.natsserver import StoreUnusable

            try:
                os.makedirs(args.store, exist_ok=True)
            except FileExistsError:
                raise StoreUnusable(f"--store {args.store}: not a directory") from None
            except OSError as exc:
                raise StoreUnusable(f"--store {args.store}: {(exc.strerror or str(exc)).lower()}") from None
        if args.connect_timeout is not None:  # how long the server check waits
            os.environ["SKAT_CONNECT_TIMEOUT"] = str(args.connect_timeout)
        page = _web_companion(args.web) if args.web else None
        if args.cluster:
            return up(None, args.store, None, cluster=args.cluster, companions=page)
        if args.auth:
            from services.auth import load_auth

            load_auth(args.auth).settings()  # a missing or broken directory: one line, before anything starts
            return up(None, None, args.auth, companions=page)
        settings = from_args(args, default=None)
        if settings is not None and args.port is not None:  # the server came from $SKAT_NATS_URL
            raise UsageError("--port is where the server skat up starts listens; with $SKAT_NATS_URL it starts none")
        return up(settings, args.store, None, companions=page, port=args.port)
    if args.command == "bot":
        return _bot(args)
    if args.command == "auth":
        return _auth(args)
    if args.command == "schema":
        from protocol.schema import player_schema

        print(player_schema())
        return 0
    return 2


def _bot(args: argparse.Namespace) -> int:
    """``skat bot``: check the bot and the player id, then play until Ctrl-C or SIGTERM,
    which stop it while it is still connecting too, or until its tournament is over (one line
    says so; not with ``--forever``); a server that cannot be reached or refuses the
    credentials ends it after ``--connect-timeout``, with one line."""
    from protocol.subjects import check_token
    from services import logs
    from services.connection import connect_patience, from_args

    from .errors import UsageError
    from .sdk import built_in
    from .sdk import run as run_bot

    try:
        bot = built_in(args.name, args.seed or args.player, game=args.game)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        check_token("player", args.player)
    except ValueError as exc:
        raise UsageError(f"--player: {exc}") from None
    if args.tournament is not None:
        try:
            check_token("tournament", args.tournament)
        except ValueError as exc:
            raise UsageError(f"--tournament: {exc}") from None
        if args.forever:
            raise UsageError("--tournament ID stops the bot when ID is over; --forever never stops it: give one")
    settings = from_args(args)
    logs.configure()
    patience = connect_patience(args.connect_timeout)
    ended = run_bot(bot, args.player, settings, patience=patience, tournament=args.tournament, forever=args.forever)
    if ended:
        print(f"skat bot: {ended}; {args.player} stops", flush=True)
    return 0


def _auth(args: argparse.Namespace) -> int:
    """``skat auth``: write the directory, then say what is where and what to do next."""
    from services.auth import AuthError, PlayerLimits, parse_listen, write_auth

    players = [p.strip() for p in args.players.split(",") if p.strip()]
    if not players:
        raise AuthError("--players: no player ids given")
    from protocol.subjects import check_token

    try:
        for player in players:
            check_token("player", player)
    except ValueError as exc:
        raise AuthError(str(exc)) from None
    if args.player_connections is not None and args.player_connections < 1:
        raise AuthError("--player-connections must be at least 1")
    written = write_auth(
        args.out,
        players,
        args.store,
        port=args.port,
        listen=parse_listen(args.listen) if args.listen else None,
        tls=args.tls,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_ca=args.tls_ca,
        tls_names=args.tls_name,
        limits=PlayerLimits(connections_per_player=args.player_connections or PlayerLimits().connections_per_player),
        rotate=args.rotate_keys,
    )
    for warning in written.warnings:
        print(f"skat auth: warning: {warning}", file=sys.stderr)
    out = args.out.rstrip("/")
    print(
        f"wrote {out}/nats-server.conf (public keys only, listen {written.listen}{', TLS' if written.tls else ''}), "
        f"{out}/skat-auth.json and a key file per user ({len(written.players)} player{'s' if len(written.players) != 1 else ''}):"
    )
    for player in written.players:
        print(f"  {player:<16} {written.seed_file(player)}")
    print(f"  {'(services)':<16} {written.seed_file('skat-services')}")
    if written.ca_file:
        print(f"CA for the players: {written.ca_file}")
    if args.tls and written.host in ("0.0.0.0", "::") and not args.tls_name:
        print(
            "skat auth: warning: the certificate is for localhost only; add --tls-name HOST (the name remote players "
            "connect to)",
            file=sys.stderr,
        )
    tls_flags = f" --tls-ca {written.ca_file}" if written.ca_file else ""
    print("Give each player its own .nk file (and nothing else of this directory but the CA).")
    print(f"start everything: skat up --auth {out}")
    print(
        f"a player:         skat bot random --player {written.players[0]} --nats {written.url()} "
        f"--creds {written.seed_file(written.players[0])}{tls_flags}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
