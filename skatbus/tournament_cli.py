"""Command-line front ends of the tournament runner: ``skat tournament`` and ``skat run``.

Every mistake in what they are given (flags, a ``--config`` file, a ``--resume`` that does not
fit) is found before anything starts and raised as ``UsageError``: one line, exit code 2.
A run is interrupted by Ctrl-C or SIGTERM without a traceback: its open tables are paused (no
clock runs on while nobody watches), the bots and, with the built-in stack, the services and
the server are stopped, and the line to resume it is printed.

``--game`` picks the game (Skat, the default, or Thirty-one). Each game has its own options
(``GAME_OPTIONS``): one given for the other game is refused, saying whose it is, and so is a
built-in bot the game does not have.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from protocol import fairness, registry, seating
from protocol.clocks import TimeControl, parse_time_control
from protocol.skat.rules import Rules
from protocol.subjects import check_token
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.tournament import SKAT, TournamentConfig, schedule, series_sizes
from services import logs
from services.connection import (
    ConnectionSettings,
    add_connect_timeout,
    check_connect_timeout,
    connect_patience,
    from_args,
    open_connection,
    safe_servers,
)
from services.connection import add_arguments as add_connection_arguments

from .bot_loader import BotLoadError, is_spec
from .bot_loader import make as make_class
from .bot_loader import parse as parse_spec
from .bots import BOTS, bot_games, bots_of, unknown_bot
from .errors import UsageError
from .outputs import writable_dir

THIRTY_ONE = "thirty-one"
GAMES = (SKAT, THIRTY_ONE)
"""The games a tournament can play (``--game``)."""
DEFAULT_BOTS = ("heuristic", "stepping-random", "random", "random")
"""Seats left to built-in bots when ``--bots`` is not given are filled from this, in order."""
DEFAULT_GAME_BOTS: dict[str, tuple[str, ...]] = {
    SKAT: DEFAULT_BOTS,
    THIRTY_ONE: ("heuristic", "random", "random", "heuristic", "random", "heuristic", "random", "heuristic", "random"),
}
"""Per game, what fills the seats ``--bots`` leaves (up to the most seats its tables have)."""
DEFAULT_PLAYERS = 3
DEFAULT_ROUNDS = 8
GAME_OPTIONS: dict[str, dict[str, tuple[str, Any]]] = {
    SKAT: {
        "rounds": ("--rounds", None),
        "profile": ("--profile", None),
        "kontra": ("--kontra", False),
        "ramsch": ("--ramsch", False),
        "bock": ("--bock", False),
        "seeger_fabian": ("--standard", True),
    },
    THIRTY_ONE: {
        "coins": ("--coins", None),
        "min_knock": ("--min-knock", None),
        "throw_down": ("--throw-down", False),
        "stock_out": ("--stock-out", None),
        "three_of_a_kind": ("--three-of-a-kind", None),
        "straight_flush": ("--straight-flush", False),
        "county": ("--no-county", True),
        "knock_in_first_round": ("--no-knock-in-first-round", True),
        "max_deals": ("--max-deals", None),
    },
}
"""Per game, its own options: dest -> (the flag, its value when not given)."""
CONFIG_OPTIONS = frozenset(
    {"bots", "remote", "id", "groups", "duplicate", "seed", "players", "turn_seconds", "max_timeouts", "game",
     "time_control", "series", "pairing", "nonce_seconds", *(name for options in GAME_OPTIONS.values() for name in options)}
)  # fmt: skip
"""Options that make up a tournament's configuration (``--resume`` keeps the stored one)."""
MAX_TABLE_SUFFIX = len("-g999r3")
MAX_SERIES = 99
ALL_REMOTE = "*"
"""``--human`` without names: every --remote player is a person."""
DEFAULT_MAX_TIMEOUTS = 5
DEFAULT_SERIES = 3
"""Series of a tournament with more entrants than a table seats, when --series is not given."""
DEFAULT_NONCE_SECONDS = 30.0
"""Turns in a row a seat may miss before it is withdrawn (``Rules.max_timeouts``)."""
MAKE_SEED = 'python -c "import secrets; print(secrets.token_hex(16))"'
"""How to make a seed that passes ``seed_weakness`` (128 random bits as 32 hex digits)."""
PAUSE_WITHIN = 6.0
"""Seconds an interrupted run spends at most on pausing its open tables, connecting included."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    skat_bots = ", ".join(sorted(BOTS))
    t31_bots = ", ".join(sorted(bots_of(THIRTY_ONE)))
    p.add_argument(
        "--game",
        default=None,
        metavar="GAME",
        help="the game its tables play: skat (default) or thirty-one (played to the last survivor, ranked by "
        "places); each has its own options below",
    )
    p.add_argument(
        "--bots",
        default=None,
        metavar="NAME,...",
        help=f"built-in bots (Skat: {skat_bots}; Thirty-one: {t31_bots}), or a Python class of your own played "
        "in-process, MODULE:CLASS or PATH.py:CLASS, named after its class or NAME=MODULE:CLASS "
        "(docs/in-process-bots.md); one per seat the --remote players "
        "leave, in seat order; a name given twice plays as NAME and NAME-2 (default: the first seats of "
        f"{','.join(DEFAULT_BOTS)}; Thirty-one: {','.join(DEFAULT_GAME_BOTS[THIRTY_ONE][:3])},...)",
    )
    p.add_argument(
        "--remote",
        action="append",
        default=[],
        metavar="ID[:json]",
        help="a remote player, which connects by itself as player ID (skat bot ... --player ID, or your own bot) "
        "and takes the next seat, before the built-in bots; repeat it for more; :json for JSON updates",
    )
    p.add_argument(
        "--human",
        nargs="?",
        const=ALL_REMOTE,
        default=None,
        metavar="ID,...",
        help="the --remote players are people (or only the ones named): with the built-in stack, the live page "
        "gets a seat for each, played in the browser with that player's own permissions (its address is printed)",
    )
    p.add_argument(
        "--id",
        default=None,
        help="tournament id (default: a new one: the time and 64 random bits, nothing of the seed)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="ID",
        help="continue the interrupted tournament ID (from the same --out store); its configuration is kept",
    )
    p.add_argument(
        "--groups",
        type=int,
        default=3,
        help="one table's seats only: sets of deals (each played once per seat rotation in duplicate mode)",
    )
    p.add_argument(
        "--series",
        type=int,
        default=None,
        metavar="N",
        help="seat the entrants anew in each of N series at tables of --players (any number of entrants; "
        "default 3 when there are more entrants than a table seats): every table of a series plays the same "
        "deals (duplicate), standings per series and overall, and a crosstable",
    )
    p.add_argument(
        "--pairing",
        choices=("round-robin", "swiss"),
        default="round-robin",
        help="with --series: every pair at one table about equally often, all drawn before the first deal "
        "(round-robin, the default), or each series by the standings so far (swiss)",
    )
    p.add_argument(
        "--nonce-seconds",
        type=float,
        default=None,
        metavar="S",
        help="seconds remote entrants have to give their nonces before the first deal (provably fair deals: "
        "docs/protocol.md; default 30 with remote players, closing sooner once every one has given its nonce)",
    )
    p.add_argument(
        "--sign-key",
        default=None,
        metavar="FILE",
        help="the NKey seed that signs the results (default: with --auth DIR, DIR's services key; else "
        "OUT/signing.nk, made on first use)",
    )
    p.add_argument(
        "--no-duplicate",
        dest="duplicate",
        action="store_false",
        help="no seat rotation of the same deals (always off with remote players)",
    )
    p.add_argument(
        "--seed",
        default=None,
        help="decides every card (default: 'skatbus' for built-in bots only, else a random one of 128 bits); "
        "with remote players it must be secret and carry 128 bits: 32+ hex digits or a 22+ character "
        f"base64url token, e.g. from {MAKE_SEED}",
    )
    p.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help=f"players per table: Skat 3 or 4, Thirty-one 2 to 9 (default {DEFAULT_PLAYERS})",
    )
    skat = p.add_argument_group("Skat (--game skat)")
    skat.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"rounds per table (a round is one deal per player; default {DEFAULT_ROUNDS})",
    )
    skat.add_argument(
        "--profile", choices=["isko", "classic"], default=None, help="scoring rules: ISkO (default) or classic"
    )
    skat.add_argument("--kontra", action="store_true", help="allow Kontra and Re")
    skat.add_argument("--ramsch", action="store_true", help="play Ramsch when everybody passes")
    skat.add_argument("--bock", action="store_true", help="Bock rounds (doubled scores) after big games")
    skat.add_argument(
        "--standard", dest="seeger_fabian", action="store_false", help="rank by the standard list, not Seeger-Fabian"
    )
    t31 = p.add_argument_group("Thirty-one (--game thirty-one; every table is played to the last survivor)")
    t31.add_argument("--coins", type=int, default=None, metavar="N", help="coins each player starts with (default 3)")
    t31.add_argument(
        "--min-knock",
        type=int,
        default=None,
        metavar="N",
        help="the least hand value to knock with, 0-31 (default 0: any)",
    )
    t31.add_argument("--throw-down", action="store_true", help="hands dealt unseen; a player may throw down blind")
    t31.add_argument(
        "--stock-out",
        default=None,
        metavar="reshuffle|void",
        help="an empty stock: reshuffle the discards into a new stock (default) or the deal is void",
    )
    t31.add_argument(
        "--three-of-a-kind",
        nargs="?",
        const="30",
        default=None,
        metavar="30|30.5",
        help="three cards of one rank are worth 30 (or with 30.5: 30 1/2); default off",
    )
    t31.add_argument(
        "--straight-flush", action="store_true", help="three consecutive cards of one suit are worth 30 (Q-K-A 31)"
    )
    t31.add_argument(
        "--no-county",
        dest="county",
        action="store_false",
        help="a player is out with his last coin (default: he plays on without coins until he owes one)",
    )
    t31.add_argument(
        "--no-knock-in-first-round",
        dest="knock_in_first_round",
        action="store_false",
        help="nobody knocks before every player has had a turn",
    )
    t31.add_argument(
        "--max-deals",
        type=int,
        default=None,
        metavar="N",
        help="a table that reaches N deals ends, its players ranked by coins (default 500)",
    )
    p.add_argument(
        "--turn-seconds",
        type=float,
        default=30.0,
        help="seconds a player has for each move before the default move is played for it",
    )
    p.add_argument(
        "--time-control",
        default=None,
        metavar="B+I",
        help="a time control per table besides --turn-seconds: each seat has B seconds for all its moves at a "
        "table and gains I seconds after each move (chess notation, e.g. 120+2); a seat whose budget runs out "
        "is timed out and plays on with the increment alone (docs/time-control.md)",
    )
    p.add_argument(
        "--max-timeouts",
        type=int,
        default=DEFAULT_MAX_TIMEOUTS,
        metavar="N",
        help="withdraw a seat that misses N turns in a row: it forfeits (ranked below every entrant that "
        f"finished) and its moves are played at once by default; 0: never (default {DEFAULT_MAX_TIMEOUTS})",
    )
    add_connection_arguments(
        p,
        "use the services on this server (or comma-separated list; default: $SKAT_NATS_URL, else start a local stack)",
    )
    p.add_argument(
        "--auth",
        default=None,
        metavar="DIR",
        help="start the local stack with the users `skat auth --out DIR` wrote (remote players then need "
        "their DIR/<ID>.nk); not with --nats",
    )
    add_connect_timeout(p)
    p.add_argument("--out", default="runs", help="directory for the results (and, for the local stack, its store)")
    p.add_argument(
        "--no-web",
        dest="web",
        action="store_false",
        help="with the built-in stack, do not serve the live page (skat web) on a loopback port meanwhile",
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a TOML or JSON file with any of these options (keys as the flags, e.g. "
        'rounds = 12, kontra = true, bots = "heuristic,random,random"); flags given win',
    )


# --- the --config file ---------------------------------------------------------------------------


def apply_config_file(
    args: argparse.Namespace, parser_defaults: dict[str, Any], actions: list[argparse.Action] | None = None
) -> None:
    """Fill the options not given on the command line from ``--config`` (TOML or JSON).
    A file that cannot be read, does not parse, names an unknown option or gives one a value
    of the wrong type is a ``UsageError`` naming the file (and the option)."""
    if not args.config:
        return
    values = _read_config(args.config)
    by_dest = {a.dest: a for a in actions or []}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in parser_defaults or name in ("config", "help", "resume"):
            raise UsageError(f"{args.config}: unknown option {key!r}")
        if name == "bots" and isinstance(value, list):
            value = ",".join(map(str, value))
        value = _checked(args.config, key, value, parser_defaults[name], by_dest.get(name))
        if getattr(args, name) == parser_defaults[name]:  # given on the command line: that wins
            setattr(args, name, value)


def _read_config(path: str) -> dict[str, Any]:
    import tomllib

    import msgspec

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--config {path}: {exc.strerror or exc.__class__.__name__}") from None
    try:
        values = tomllib.loads(raw.decode()) if path.endswith(".toml") else msgspec.json.decode(raw)
    except (tomllib.TOMLDecodeError, msgspec.DecodeError, UnicodeDecodeError) as exc:
        kind = "TOML" if path.endswith(".toml") else "JSON"
        raise UsageError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(values, dict):
        raise UsageError(f"{path}: want a table of options (key = value)")
    return values


def _checked(path: str, key: str, value: Any, default: Any, action: argparse.Action | None) -> Any:
    """``value`` if it has the type the flag takes (ints pass for floats), else a UsageError."""
    if isinstance(default, bool) or isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        want: tuple[type, ...] = (bool,)
    elif isinstance(default, float) or (action is not None and action.type is float):
        want = (int, float)
    elif isinstance(default, int) or (action is not None and action.type is int):
        want = (int,)
    elif isinstance(default, list):
        want = (list,)
    else:
        want = (str,)
    if not isinstance(value, want) or (isinstance(value, bool) and bool not in want):
        names = {bool: "true or false", int: "a whole number", float: "a number", list: "a list", str: "a string"}
        raise UsageError(f"{path}: {key} = {value!r}: want {names[want[-1]]}")
    if action is not None and action.choices is not None and value not in action.choices:
        raise UsageError(f"{path}: {key} = {value!r}: want one of {', '.join(map(str, action.choices))}")
    if isinstance(value, list):
        return [str(v) for v in value]
    if float in want and isinstance(value, int | float):
        return float(value)
    return value


# --- checking what was given -----------------------------------------------------------------------


def game_of(args: argparse.Namespace) -> str:
    """The game the options ask for (``--game``; Skat when not given)."""
    return getattr(args, "game", None) or SKAT


def _title(game: str) -> str:
    return registry.get(game).title


def other_games_option(args: argparse.Namespace, game: str) -> str | None:
    """Why an option given belongs to another game than ``game`` (None if none does): one
    line naming the flag and the game it is for."""
    for other, options in GAME_OPTIONS.items():
        if other == game:
            continue
        for dest, (flag, unset) in options.items():
            if getattr(args, dest, unset) != unset:
                return f"{flag} is an option of {_title(other)}, not of {_title(game)}: drop it" + (
                    f" (or play --game {other})" if game == game_of(args) else ""
                )
    return None


def seat_range(game: str) -> tuple[int, int]:
    """Fewest and most players a table of ``game`` seats (Skat: 3 or 4)."""
    return (3, 4) if game == SKAT else registry.get(game).seats


def players_of(args: argparse.Namespace) -> int:
    """Players per table (``--players``, else ``DEFAULT_PLAYERS``)."""
    return int(args.players) if getattr(args, "players", None) is not None else DEFAULT_PLAYERS


def humans_of(args: argparse.Namespace) -> list[str]:
    """The --remote players that are people (``--human``: all of them; ``--human ID,...``: those)."""
    remote = [r.partition(":")[0] for r in args.remote]
    if not args.human:
        return []
    if args.human == ALL_REMOTE:
        return remote
    named = _names(args.human)
    stray = [n for n in named if n not in remote]
    if stray:
        raise UsageError(f"--human {','.join(stray)}: not a --remote player (give --remote {stray[0]} too)")
    return named


def check_args(args: argparse.Namespace) -> None:
    """Numbers and combinations that cannot make a tournament, before anything is created."""
    if getattr(args, "time_control", None) is not None:
        try:  # spelt one way from here on, so that --resume compares like with like
            args.time_control = str(parse_time_control(args.time_control))
        except ValueError as exc:
            raise UsageError(f"--time-control: {exc}") from None
    if args.human and not args.remote:
        raise UsageError("--human seats people as the --remote players: give --remote ID for each")
    humans_of(args)
    if args.human and (args.nats or os.environ.get("SKAT_NATS_URL")):
        raise UsageError("--human serves the seats from the built-in stack's page; with --nats run skat web --seat ID")
    if args.human and not getattr(args, "web", True):
        raise UsageError("--human needs the live page: drop --no-web")
    if args.resume is not None:
        try:
            check_token("tournament", args.resume)
        except ValueError as exc:
            raise UsageError(f"--resume: {exc}") from None
        return
    game = game_of(args)
    if game not in GAMES:
        raise UsageError(f"--game {game}: the games are {', '.join(GAMES)}")
    wrong = other_games_option(args, game)
    if wrong:
        raise UsageError(wrong)
    low, high = seat_range(game)
    players = players_of(args)
    if not low <= players <= high:
        seat = f"{low} or {high}" if high == low + 1 else f"{low} to {high}"
        raise UsageError(f"--players {players}: {_title(game)} tables seat {seat} players")
    if args.groups < 1:
        raise UsageError(f"--groups must be at least 1, not {args.groups}: a tournament needs tables")
    if args.series is not None and not 1 <= args.series <= MAX_SERIES:
        raise UsageError(f"--series must be from 1 to {MAX_SERIES}, not {args.series}")
    if args.nonce_seconds is not None and not 0 <= args.nonce_seconds <= 3600:
        raise UsageError(f"--nonce-seconds must be from 0 to 3600, not {args.nonce_seconds}")
    if game == SKAT and args.rounds is not None and args.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, not {args.rounds}: every table plays whole rounds")
    if game == THIRTY_ONE:
        _check_thirty_one(args)
    if not args.turn_seconds > 0 or args.turn_seconds == float("inf"):
        raise UsageError(f"--turn-seconds must be a number of seconds above 0, not {args.turn_seconds}")
    if args.max_timeouts < 0:
        raise UsageError(f"--max-timeouts must be 0 (never withdraw a seat) or more, not {args.max_timeouts}")
    check_connect_timeout(args)
    if args.auth and (args.nats or os.environ.get("SKAT_NATS_URL")):
        raise UsageError("--auth starts a local stack with those users; with --nats, that server has its own")
    if args.id is not None:
        try:
            check_token("tournament", args.id + "-g0r0")
        except ValueError:
            raise UsageError(
                f"--id {args.id!r}: want letters, digits, '_' or '-', at most {64 - MAX_TABLE_SUFFIX} of them"
            ) from None
    entrants, _, _ = seats(args)
    series = series_of(args, len(entrants))
    if series:
        try:
            schedule(config_like(args, entrants, series))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.seed is not None and not args.seed.strip():
        raise UsageError("--seed must not be empty: leave it out for the default (a random one with remote players)")
    if args.remote and args.seed is not None:
        why = seed_weakness(args.seed)
        if why:
            raise UsageError(
                f"--seed: {why}; with remote players the seed must be secret and carry 128 bits (it decides every "
                f"card): make one with {MAKE_SEED}, or leave --seed out for a random one"
            )


def config_like(args: argparse.Namespace, entrants: list[str], series: int) -> TournamentConfig:
    """A stand-in of the configuration, to check that the entrants can be seated."""
    game = game_of(args)
    extra: dict[str, Any] = {"rules": skat_rules(args)} if game == SKAT else {"game": game}
    remote = {r.partition(":")[0] for r in args.remote}
    return TournamentConfig(
        id="check",
        entrants=entrants,
        bots={e: e for e in entrants if e not in remote},
        series=series,
        table_size=players_of(args),
        pairing=args.pairing,
        duplicate=args.duplicate and (series > 0 or not remote),
        **extra,
    )


def _check_thirty_one(args: argparse.Namespace) -> None:
    """Thirty-one's numbers, each refused with its flag (the rules' own check would name a field)."""
    if args.coins is not None and args.coins < 1:
        raise UsageError(f"--coins must be 1 or more, not {args.coins}")
    if args.min_knock is not None and not 0 <= args.min_knock <= 31:
        raise UsageError(f"--min-knock must be 0 (knock with any hand) to 31, not {args.min_knock}")
    if args.max_deals is not None and args.max_deals < 1:
        raise UsageError(f"--max-deals must be at least 1, not {args.max_deals}")
    if args.stock_out is not None and args.stock_out not in ("reshuffle", "void"):
        raise UsageError(f"--stock-out {args.stock_out}: want reshuffle or void")
    if args.three_of_a_kind is not None and args.three_of_a_kind not in ("off", "30", "30.5"):
        raise UsageError(f"--three-of-a-kind {args.three_of_a_kind}: want 30 or 30.5 (or off)")


def seed_weakness(seed: str) -> str | None:
    """Why ``seed`` may carry fewer than 128 bits, or None if it passes.

    A seed is judged by the alphabet it is written in, as the output of a random generator
    would be: only hex digits, 4 bits each, so 32 or more (``secrets.token_hex(16)``); else
    only base64url characters (A-Z a-z 0-9 - _), 6 bits each, so 22 or more
    (``secrets.token_urlsafe(16)``), mixing upper- and lower-case letters as random base64url
    does (all but about 1 in 40,000 such tokens): that refuses a lower-case passphrase such as
    ``my-secret-league-seed-2026``. Anything else is refused, and so is an obviously repetitive
    string: fewer than 8 different characters, a repeated part (``abcabc...``), or mostly equal
    or consecutive neighbours (``aaaa``, ``abcd``, ``1234``). Random seeds of those lengths
    pass all of it (checked on 200,000 of each). No test can see that a string was chosen by a
    person: this one catches the usual mistakes, the operator keeps the seed secret."""
    n = len(seed)
    if re.fullmatch(r"[0-9a-fA-F]+", seed):
        if n < 32:
            return f"{n} hex digits carry {4 * n} bits at most, want 32 or more"
        raw = bytes.fromhex(seed[: n - n % 2])
        if all(32 <= b < 127 for b in raw):
            return "it is text written in hex (a date, a word), not random bytes"
    elif re.fullmatch(r"[A-Za-z0-9_-]+", seed):
        if n < 22:
            return f"{n} base64url characters carry {6 * n} bits at most, want 22 or more"
        if seed.lower() == seed or seed.upper() == seed:
            return "it does not mix upper- and lower-case letters as a random base64url token does"
    else:
        return "want a hex string (32+ digits) or a base64url token (22+ characters of A-Z a-z 0-9 - _)"
    if len(set(seed)) < 8:
        return f"it uses only {len(set(seed))} different characters"
    if re.search(r"(.)\1{6}", seed):
        return "it holds a run of seven or more equal characters"
    for period in range(1, n // 2 + 1):
        if all(seed[i] == seed[i - period] for i in range(period, n)):
            return f"it repeats {seed[:period]!r}"
    near = sum(abs(ord(a) - ord(b)) <= 1 for a, b in zip(seed, seed[1:], strict=False))
    if 3 * near > 2 * (n - 1):
        return "it is mostly runs of equal or consecutive characters"
    return None


def looks_like_bot(player: str) -> str | None:
    """The built-in bot a remote player's id could be taken for, or None. Built-in seats are
    named after their bot (``random``, and ``random-2``... for more of one), so an id that is
    such a name up to case, ``-``/``_`` and a number (``Heuristic``, ``random-2``,
    ``stepping_random3``) would mix the two up in the standings and the ratings."""

    def plain(name: str) -> str:
        return re.sub(r"[-_]", "", name.lower())

    base = plain(re.sub(r"[-_]?\d+$", "", player))
    every = sorted({name for game in GAMES for name in bots_of(game)})  # of every game: one ratings list
    return next((bot for bot in every if plain(bot) == base), None)


def seats(args: argparse.Namespace) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """The entrants in seat order (the ``--remote`` players first, in the order given, then
    the built-in bots), each bot's name, and the remote players' update formats. Every seat
    must be taken exactly once: a count that does not fit is refused, never trimmed."""
    entrants: list[str] = []
    formats: dict[str, Any] = {}
    for remote in args.remote:
        pid, _, fmt = remote.partition(":")
        try:
            check_token("player", pid)
        except ValueError as exc:
            raise UsageError(f"--remote {remote!r}: {exc}") from None
        if fmt not in ("", "json", "msgpack"):
            raise UsageError(f"--remote {remote!r}: the format after ':' is json or msgpack, not {fmt!r}")
        if pid in entrants:
            raise UsageError(f"--remote {pid} is given twice")
        bot = looks_like_bot(pid)
        if bot is not None:
            raise UsageError(
                f"--remote {pid}: looks like the built-in bot {bot!r} (its seats are named {bot}, {bot}-2, ...); "
                "give the remote player an id of its own"
            )
        entrants.append(pid)
        if fmt:
            formats[pid] = fmt
    game = game_of(args)
    players = players_of(args)
    low, high = seat_range(game)
    free = players - len(entrants)
    if args.series is not None or (args.bots is not None and len(_names(args.bots)) + len(entrants) > players):
        # Many entrants: any number, seated over series (at least one table's worth).
        names = _names(args.bots) if args.bots is not None else list(DEFAULT_GAME_BOTS[game][: max(free, 0)])
        if len(names) + len(entrants) < low:
            raise UsageError(f"{len(names) + len(entrants)} entrants: a {_title(game)} table seats at least {low}")
        return _with_bots(entrants, formats, names, game)
    if free < 0:
        more = " (--players 4 for four)" if game == SKAT and players == 3 else ""
        if game != SKAT and len(entrants) <= high:
            more = f" (--players {len(entrants)} for {len(entrants)})"
        raise UsageError(f"{len(entrants)} --remote players do not fit at {players}-player tables{more}")
    if args.bots is None:
        names = list(DEFAULT_GAME_BOTS[game][:free])
    else:
        names = _names(args.bots)
        if len(names) != free:
            remote = f" and {len(entrants)} --remote" if entrants else ""
            fits = low <= len(names) + len(entrants) <= high
            raise UsageError(
                f"--bots names {len(names)} bot{'s' * (len(names) != 1)}{remote} for {players} seats: "
                + (f"give --players {len(names) + len(entrants)}" if fits else "")
                + (" or " if fits else "")
                + f"name {free} bot{'s' * (free != 1)}"
            )
    return _with_bots(entrants, formats, names, game)


def _names(bots: str) -> list[str]:
    return [b.strip() for b in bots.split(",") if b.strip()]


def _with_bots(
    entrants: list[str], formats: dict[str, Any], names: Sequence[str], game: str
) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """The remote entrants, then one built-in entrant per bot name (a name given again plays as
    NAME-2, NAME-3, ...)."""
    known = bots_of(game)
    bots: dict[str, str] = {}
    for name in names:
        if is_spec(name):
            _with_class(entrants, bots, name, game)
            continue
        if name not in known:
            if game == SKAT and not bot_games(name):
                raise UsageError(f"--bots: unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")
            raise UsageError(f"--bots: {unknown_bot(name, game)}")
        pid, n = name, 2
        while pid in entrants:
            pid, n = f"{name}-{n}", n + 1
        entrants.append(pid)
        bots[pid] = name
    return entrants, bots, formats


def _with_class(entrants: list[str], bots: dict[str, str], spec: str, game: str) -> None:
    """One in-process entrant: the class ``spec`` names, loaded, checked to play ``game`` and
    made once (a constructor that raises is found now, before a server is started:
    ``skatbus.bot_loader``), seated under its ``NAME=`` or its class's name (``-2``, ``-3``,
    ... for a second one of that class); the configuration stores the spec without the name."""
    try:
        make_class(spec, "", game)
        parsed = parse_spec(spec)
    except BotLoadError as exc:
        raise UsageError(f"--bots {exc}") from None
    base = parsed.entrant
    bot = looks_like_bot(base)
    if bot is not None:
        raise UsageError(
            f"--bots {spec}: the entrant name {base!r} looks like the built-in bot {bot!r}; name it, e.g. "
            f"mine={parsed.bot}"
        )
    if parsed.name and base in entrants:
        raise UsageError(f"--bots {spec}: the name {base!r} is taken by another entrant")
    pid, n = base, 2
    while pid in entrants:
        pid, n = f"{base}-{n}", n + 1
    try:
        check_token("player", pid)
    except ValueError as exc:
        raise UsageError(f"--bots {spec}: {exc}") from None
    entrants.append(pid)
    bots[pid] = parsed.bot


def new_id(now: float | None = None) -> str:
    """A tournament id of its own: ``t-<local time>-<16 random hex>``. Nothing in it comes
    from the seed: the id is public (table names carry it), and even a short hash of a weak
    seed let a player find the seed from its own first hand, then every deal after it. The
    time sorts runs/ (and orders the ratings); 64 random bits keep two runs in the same second
    apart. So a new run never takes an earlier one's id, or its results directory."""
    stamp = time.strftime("%y%m%d-%H%M%S", time.localtime(now))
    return f"t-{stamp}-{secrets.token_hex(8)}"


def config_from(args: argparse.Namespace) -> TournamentConfig:
    """The tournament the (checked) options describe."""
    entrants, bots, formats = seats(args)
    game = game_of(args)
    # Built-in bots only: reproducible by default. With remote players: 128 random bits.
    seed = args.seed or ("skatbus" if not args.remote else fairness.new_server_seed())
    series = series_of(args, len(entrants))
    common: dict[str, Any] = {
        "id": args.id or new_id(),
        "entrants": entrants,
        "bots": bots,
        "formats": formats,
        "groups": args.groups,
        # Seat rotations of one deal would show a remote entrant the same cards at several
        # tables (at once, or again later): rotations are for built-in bots only. A series seats
        # every entrant once, so its tables may share deals whoever plays; with remote entrants
        # their feeds are withheld from the players (protocol.tournament.table_feed).
        "duplicate": args.duplicate and (series > 0 or not args.remote),
        "seed": seed,
        "series": series,
        "table_size": players_of(args) if series else 0,
        "pairing": args.pairing,
        "fair": fairness.SCHEME,
        "commitment": fairness.commitment(seed),
        "nonce_seconds": nonce_seconds(args),
    }
    if game == SKAT:
        return TournamentConfig(**common, rules=skat_rules(args))
    return TournamentConfig(**common, game=game, game_rules=msgspec.to_builtins(thirty_one_rules(args)))


def series_of(args: argparse.Namespace, entrants: int) -> int:
    """Series to seat the entrants over (``--series``; 3 when there are more entrants than a
    table seats), or 0: the entrants are one table's seats."""
    if args.series is not None:
        return int(args.series)
    return DEFAULT_SERIES if entrants > players_of(args) else 0


def nonce_seconds(args: argparse.Namespace) -> float:
    """How long remote entrants may give nonces (``--nonce-seconds``; 30 s with remote players)."""
    if args.nonce_seconds is not None:
        return float(args.nonce_seconds)
    return DEFAULT_NONCE_SECONDS if args.remote else 0.0


def skat_rules(args: argparse.Namespace) -> Rules:
    return Rules(
        profile=args.profile or "isko",
        kontra=args.kontra,
        ramsch=args.ramsch,
        bock=args.bock,
        seeger_fabian=args.seeger_fabian,
        rounds=DEFAULT_ROUNDS if args.rounds is None else args.rounds,
        players=players_of(args),
        turn_seconds=args.turn_seconds,
        max_timeouts=args.max_timeouts,
        time_control=time_control_of(args),
    )


def time_control_of(args: argparse.Namespace) -> TimeControl | None:
    """``--time-control`` (checked by ``check_args``), or None."""
    given = getattr(args, "time_control", None)
    return parse_time_control(given) if given else None


def thirty_one_rules(args: argparse.Namespace) -> ThirtyOneRules:
    """Thirty-one's rules from the options (every option left out has the rules' default)."""
    given: dict[str, Any] = {
        "county": args.county,
        "throw_down": args.throw_down,
        "straight_flush": args.straight_flush,
        "knock_in_first_round": args.knock_in_first_round,
        "turn_seconds": args.turn_seconds,
        "max_timeouts": args.max_timeouts,
        "time_control": time_control_of(args),
    }
    for name in ("coins", "min_knock", "stock_out", "three_of_a_kind", "max_deals"):
        if getattr(args, name) is not None:
            given[name] = getattr(args, name)
    try:
        return ThirtyOneRules(**given)
    except ValueError as exc:  # checked before (check_args); the rules' own words otherwise
        raise UsageError(f"Thirty-one rules: {exc}") from None


def stored_options(stored: TournamentConfig) -> dict[str, Any]:
    """The options a stored tournament was created with, by dest, as the flags give them."""
    values: dict[str, Any] = {
        "id": stored.id,
        "groups": stored.groups,
        "duplicate": stored.duplicate,
        "seed": stored.seed,
        "game": stored.game,
        "players": stored.table_size if stored.many else stored.seats,
        "series": stored.series or None,
        "pairing": stored.pairing,
        "nonce_seconds": stored.nonce_seconds,
    }
    rules = stored.table_rules()
    for name in [*GAME_OPTIONS.get(stored.game, {}), "turn_seconds", "max_timeouts"]:
        if name != "players":
            values[name] = getattr(rules, name)
    control = getattr(rules, "time_control", None)
    values["time_control"] = str(control) if control is not None else None
    return values


def resume_conflict(args: argparse.Namespace, defaults: dict[str, Any], stored: TournamentConfig) -> str | None:
    """Why the options given with ``--resume`` do not fit the stored tournament (None if they
    do, or if none was given): a resumed tournament keeps its configuration, and its game."""
    given = sorted(n for n in CONFIG_OPTIONS if n in defaults and getattr(args, n, None) != defaults[n])
    if not given:
        return None
    stored_values = stored_options(stored)
    for name in given:
        if name in ("bots", "remote"):
            again = argparse.Namespace(**{**vars(args), "players": stored.seats, "game": stored.game})
            try:
                entrants, bots, formats = seats(again)
            except UsageError:
                entrants, bots, formats = [], {}, {}
            if (entrants, bots, formats) != (stored.entrants, stored.bots, dict(stored.formats)):
                return f"it was created with the seats {', '.join(stored.entrants)}; drop --{name}"
        elif name not in stored_values:
            flag = next(f for options in GAME_OPTIONS.values() for d, (f, _) in options.items() if d == name)
            return f"it is a {_title(stored.game)} tournament, and {flag} is not one of its options; drop {flag}"
        elif getattr(args, name) != stored_values[name]:
            shown = "(secret)" if name == "seed" else repr(stored_values[name])
            return f"it was created with {name.replace('_', '-')} = {shown}; drop --{name.replace('_', '-')}"
    return None


# --- running -------------------------------------------------------------------------------------


async def _run(
    args: argparse.Namespace, intro: bool, settings: ConnectionSettings | None, defaults: dict[str, Any]
) -> int:
    """The run, stopped by Ctrl-C or SIGTERM without a traceback.

    The work runs as a task of its own, which a signal cancels (again, every half second:
    nats-py swallows a cancellation in places). This coroutine is never cancelled, so it can
    always pause the tournament's open tables (``_pause_interrupted``: stopping is not
    pausing, the services' clocks would run on), stop the local stack (services and server, by
    PID) and say how to resume."""
    from services.main import LocalStack

    stack = None
    own_auth = None
    if settings is None:
        # A local stack keeps its store in --out, so that an interrupted run can be resumed.
        store = os.path.join(args.out, "store")
        if args.remote and not args.auth:
            # Remote entrants (bots or people): users of our own, so that nobody else on this
            # machine reads the hands or the tournament's seed (the stack's log holds both).
            from .web.cli import people_auth

            # Every remote entrant gets a user (a remote bot connects with its key file, printed).
            remote = [r.partition(":")[0] for r in args.remote]
            own_auth = await asyncio.to_thread(people_auth, remote, store)
        stack = LocalStack(store_dir=None if args.auth else store, auth_dir=args.auth or own_auth)
    received: list[int] = []
    stop = asyncio.Event()
    again = asyncio.Event()

    def on_signal(signum: int) -> None:
        received.append(signum)
        stop.set()
        if len(received) > 1:
            again.set()  # a second Ctrl-C: no more waiting for pauses

    loop = asyncio.get_running_loop()
    # SIGHUP too: a closed terminal is an interruption like any other (pause, say how to resume),
    # unless it is ignored already (``nohup skat tournament``: meant to outlive the terminal).
    hangup = [signal.SIGHUP] if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN else []
    for sig in (signal.SIGINT, signal.SIGTERM, *hangup):
        loop.add_signal_handler(sig, on_signal, sig)
    created: list[TournamentConfig] = []
    work = asyncio.ensure_future(_tournament(args, intro, settings, defaults, stack, created.append))
    stopped = asyncio.ensure_future(stop.wait())
    paused = ""
    try:
        await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
        while not work.done():
            work.cancel()
            await asyncio.wait({work}, timeout=0.5)
        if received and created and not _finished(work):  # before a local stack stops: its dealer pauses
            target = settings if settings is not None else getattr(stack, "settings", None)
            if target is not None:
                local = None if stack is None else (getattr(stack, "store_dir", None) or "")
                paused = await _pause_interrupted(created[0], target, again, local)
    finally:
        stopped.cancel()
        if stack is not None:
            await stack.__aexit__(None, None, None)
        if own_auth is not None:
            import shutil

            await asyncio.to_thread(shutil.rmtree, own_auth, True)
    if received and not _finished(work):  # whatever the interrupted work ended with
        _say_interrupted(args, created[0].id if created else None, paused)
        return 128 + received[0]
    return work.result()


def _finished(work: asyncio.Future[Any]) -> bool:
    return not work.cancelled() and work.exception() is None


async def _pause_interrupted(
    config: TournamentConfig, settings: ConnectionSettings, again: asyncio.Event, local: str | None = None
) -> str:
    """Pause every open table of the interrupted tournament (reason "tournament <id>
    interrupted"), so that no seat times out while nobody plays: best effort, within
    ``PAUSE_WITHIN`` seconds in all (a second signal stops waiting). ``--resume`` resumes
    them. Returns what to add to the interrupted line (empty if no table was open).

    ``local``: the store of the built-in stack that stops with the runner (None: a separate
    server, whose clocks run on). Without services no clock runs, but the next stack on that
    store starts the clocks of the tables left unpaused, so the line says that instead."""
    from protocol.tournament import fold_tournament, schedule

    from .tournament import TournamentLog, set_paused

    async def pause() -> dict[str, Any]:
        nc = await open_connection(settings, patience=2.0, name="skat-tournament-pause")
        try:
            # The tables as the log has them now (a Swiss series drawn after the start, a series
            # drawn anew), else as the schedule draws them; a table not opened or finished
            # answers so and is skipped.
            try:
                state = fold_tournament(await asyncio.wait_for(TournamentLog(nc).read(config.id), 2.0))
                tables = [t.table for t in state.tables] or [t.table for t in schedule(config)]
            except Exception:
                tables = [t.table for t in schedule(config)]
            reason = f"tournament {config.id} interrupted"
            return await set_paused(nc, tables, True, reason, timeout=2.0, patience=2.0)
        finally:
            await nc.close()

    task = asyncio.ensure_future(pause())
    second = asyncio.ensure_future(again.wait())
    try:
        await asyncio.wait({task, second}, timeout=PAUSE_WITHIN, return_when=asyncio.FIRST_COMPLETED)
    finally:
        second.cancel()
    if local is None:
        hint = f"their clocks run on until `skat pause {config.id}`"
    else:  # the services stop with us: nothing runs now, but a later run on the store starts the clocks again
        on = f" on {local}" if local else ""
        hint = f"no clock runs while the built-in stack is stopped; the next `skat tournament`{on} starts them again"
    if not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
        return f"; its tables were not paused in time ({hint})"
    error = task.exception() if not task.cancelled() else asyncio.CancelledError()
    if error is not None:
        return f"; its tables could not be paused ({' '.join(str(error).split()) or type(error).__name__}: {hint})"
    replies = task.result()
    done = sum(r is not None and r.ok for r in replies.values())
    missing = sum(r is None or (not r.ok and r.code not in ("table_closed", "no_table")) for r in replies.values())
    if not done and not missing:
        return ""
    if not missing:
        return f"; its {done} open table{'s are' if done != 1 else ' is'} paused (no clock runs meanwhile)"
    return f"; {done} of its {done + missing} open tables paused, {missing} did not answer ({hint})"


def _say_interrupted(args: argparse.Namespace, tid: str | None, paused: str = "") -> None:
    print(file=sys.stdout, flush=True)  # end a progress bar's line
    if tid is None:
        print("interrupted before the tournament was created: nothing to resume", file=sys.stderr, flush=True)
        return
    flags = [f"--resume {tid}"]
    if args.out != "runs":
        flags.append(f"--out {args.out}")
    if args.nats:
        flags.append(f"--nats {safe_servers(args.nats, scheme=True)}")
    if args.auth:
        flags.append(f"--auth {args.auth}")
    if args.remote and not args.auth and not args.nats:
        # A stack with remote entrants keeps its store under its own users' accounts: resume it
        # with the same entrants (they get new keys).
        if args.bots is not None:
            flags.append(f"--bots {args.bots}")
        flags += [f"--remote {r}" for r in args.remote]
        if args.human:
            flags.append("--human" + ("" if args.human == ALL_REMOTE else f" {args.human}"))
    print(f"interrupted{paused}; resume with: skat tournament {' '.join(flags)}", file=sys.stderr, flush=True)


async def _live_page(args: argparse.Namespace, stack: Any) -> Any:
    """The live page (``skat web``) on a free loopback port while the built-in stack plays, so a
    run can be watched, with a seat for every ``--remote`` player with ``--human``; None with
    ``--no-web`` (and no ``--human``)."""
    humans = humans_of(args)
    if not getattr(args, "web", True) and not humans:
        return None
    from .web.server import WebServer

    def seat(player: str) -> ConnectionSettings:
        # A person plays as that player, with its own key where the stack has users.
        auth = stack.auth
        return auth.settings(player, stack.server.url) if auth is not None else stack.settings  # type: ignore[no-any-return]

    page = WebServer(stack.settings, "127.0.0.1", 0, seats={p: seat(p) for p in humans})
    try:
        await page.start(patience=5.0)
    except Exception as exc:  # without people at it, the page is a convenience: go on without it
        await page.stop()
        if humans:
            raise
        print(f"(the live page did not start: {exc})")
        return None
    print(f"Watch it live in a browser: {page.spectator_url}")
    for player in humans:  # each address opens that seat only: give each person their own alone
        print(f"  {player} plays in the browser at: {page.seat_url(player)} (for {player} only)")
    return page


async def _tournament(
    args: argparse.Namespace,
    intro: bool,
    settings: ConnectionSettings | None,
    defaults: dict[str, Any],
    stack: Any,
    on_created: Callable[[TournamentConfig], None],
) -> int:
    """Start the local stack (if any; ``_run`` stops it), connect, and run the tournament."""
    from .series_text import format_series
    from .signing import public_key_of
    from .standings_text import format_run_files
    from .think_times import format_think_times
    from .tournament import TournamentLog, format_standings, run_tournament

    config = None if args.resume else config_from(args)
    if stack is not None:
        await stack.__aenter__()
        settings = stack.settings
        if intro:
            print(
                f"Started a local nats-server ({safe_servers(settings.servers, scheme=True)}) and the five "
                "services (dealer, bidding, play, scoring, views)."
            )
    assert settings is not None
    page = await _live_page(args, stack) if stack is not None else None
    nc = await open_connection(settings, patience=connect_patience(args.connect_timeout), name="skat-tournament")
    try:
        if args.resume:
            state_config = await _stored_config(TournamentLog(nc), args.resume)
            if state_config is not None:
                conflict = resume_conflict(args, defaults, state_config)
                if conflict:
                    raise UsageError(f"--resume {args.resume}: {conflict}")
                _check_classes(args.resume, state_config)
                print("Resuming:", end=" ")
                _announce(state_config, stack, settings, public_key_of(signing_key(args)))
        key = signing_key(args)
        if config is not None:
            _announce(config, stack, settings, public_key_of(key))
        results = await run_tournament(
            nc, config, resume=args.resume, out_dir=args.out, on_created=on_created, sign_key=key
        )
    finally:
        await nc.close()
        if page is not None:
            await page.stop()
    print()
    print(format_standings(results))
    if thinking := format_think_times(results.get("think_times") or {}):
        print()
        print(thinking)
    if "series" in results:
        print()
        print(format_series(results))
    print()
    print(format_run_files(results, args.out, next_steps=intro))
    return 0


def _check_classes(tid: str, config: TournamentConfig) -> None:
    """A resumed tournament plays its in-process entrants with the classes it was created
    with, by the specs it stored (a file's path as it was given: resume from the directory it
    was started in): one that no longer loads is one line, before anything is played."""
    for entrant, bot in config.bots.items():
        if is_spec(bot):
            try:
                make_class(bot, "", config.game)
            except BotLoadError as exc:
                raise UsageError(f"--resume {tid}: its entrant {entrant} is the class {exc}") from None


async def _stored_config(tlog: Any, tid: str) -> TournamentConfig | None:
    from protocol.tournament import fold_tournament

    await tlog.ensure_stream()
    return fold_tournament(await tlog.read(tid)).config


def describe_tables(config: TournamentConfig) -> str:
    """The tables in words: how many, and what a table plays."""
    if config.many:
        sizes = series_sizes(config, len(config.entrants))
        seated = "+".join(str(n) for n in sizes)
        each = f"{len(sizes)} table{'s' * (len(sizes) != 1)} ({seated} players)"
        if config.game == SKAT:
            each += f" of {config.rules.rounds} round{'s' * (config.rules.rounds != 1)}"
        how = "drawn all before the first deal" if config.pairing == "round-robin" else "Swiss, by the standings"
        return f"{config.series} series of {each}, {how}"
    tables = config.groups * (config.seats if config.duplicate else 1)
    if config.game == SKAT:
        return f"{tables} tables of {config.rules.deals} deals"
    rules = config.table_rules()
    options = ", ".join(_option_text(k, v) for k, v in _changed(rules).items())
    return (
        f"{tables} {_title(config.game)} tables of {config.seats}, each played to the last survivor (at most "
        f"{rules.max_deals} deals), {rules.coins} coin{'s' * (rules.coins != 1)} a seat"
        + (f"; {options}" if options else "")
    )


def schedule_balance(config: TournamentConfig) -> str:
    """How evenly the schedule seats the pairs (the series drawn before the first deal)."""
    specs = schedule(config)
    drawn = [[t.players for t in specs if t.series == s] for s in range(1, config.series + 1)]
    return seating.balance([d for d in drawn if d], config.entrants).describe()


def _option_text(name: str, value: Any) -> str:
    """``min-knock 21``, ``throw-down``, ``no county``: an option as a person reads it."""
    flag = name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else f"no {flag}"
    return f"{flag} {value}"


def _changed(rules: Any) -> dict[str, Any]:
    """The options that differ from the game's defaults (the time limits aside)."""
    default = type(rules)()
    skip = {"turn_seconds", "max_timeouts", "coins", "max_deals", "time_control"}
    return {
        f: getattr(rules, f)
        for f in rules.__struct_fields__
        if f not in skip and getattr(rules, f) != getattr(default, f)
    }


def _announce(config: TournamentConfig, stack: Any, settings: ConnectionSettings, signer: str = "") -> None:
    """The tournament's id, its seats and tables, the commitment to its seed and the key that
    will sign its results (``signer``), and for every remote player how to connect."""
    seating = ", ".join(
        (f"{e} ({config.bots[e]}, in-process)" if is_spec(config.bots[e]) else e)
        if e in config.bots
        else f"{e} (remote)"
        for e in config.entrants
    )
    remote = [e for e in config.entrants if e not in config.bots]
    mode = " (duplicate: every deal once per seat rotation)" if config.duplicate else ""
    if config.duplicate and config.game != SKAT:
        mode = " (duplicate: every set of deals once per seat rotation, alike until a table's first elimination)"
    if remote and not config.duplicate:
        mode = " (no duplicate rotations with remote players: they would see one deal's hands at several tables)"
    if config.many:
        mode = " (duplicate: every table of a series plays the same deals)" if config.duplicate else ""
        if remote and config.duplicate:
            mode = (
                " (duplicate: every table of a series plays the same deals; their spectator feeds are withheld "
                "from the players, who could otherwise watch their own deal played at another table first)"
            )
    print(f"Tournament {config.id}: {seating}; {describe_tables(config)}{mode}.", flush=True)
    if config.many and config.pairing == "round-robin":
        print(f"Seating: {schedule_balance(config)}.", flush=True)
    elif config.many:
        print("Seating: series 1 now, each later series by the standings after the one before.", flush=True)
    if config.fair:
        print(
            f"Commitment: {config.commitment} (sha256 of the secret seed, revealed at the end: skat verify checks it)",
            flush=True,
        )
    if signer:
        print(f"Signed by: {signer} (the results will be; skat verify --key checks it)", flush=True)
    print(flush=True)
    if not remote:
        return
    if config.fair:
        print(
            f"Nonces: remote players may send one until the first deal ({config.nonce_seconds:g} s at most), "
            f"to skat.cmd.<ID>.tournament.{config.id} (docs/protocol.md); skat bot does",
            flush=True,
        )
    url = safe_servers(settings.servers, scheme=True)
    auth = getattr(stack, "auth", None) if stack is not None else None
    game = "" if config.game == SKAT else f" --game {config.game}"
    for player in remote:
        files = ""
        if auth is not None:
            files = f" --creds {auth.seed_file(player)}" + (f" --tls-ca {auth.ca_file}" if auth.tls else "")
        print(
            f"Remote player {player}: connect to {url}, e.g. skat bot heuristic{game} --player {player} --nats {url}"
            f"{files}"
        )
    where = "this machine only (loopback)" if stack is not None and auth is None else url
    rules = config.table_rules()
    limit = rules.max_timeouts
    withdrawn = f"; {limit} in a row withdraw it: it forfeits" if limit else ""
    when = "now" if not config.fair or not config.nonce_seconds else "once the nonces close"
    control = getattr(rules, "time_control", None)
    clock = f" or once its {control} time control runs out" if control is not None else ""
    print(
        f"(the tables open {when}: a remote player's moves time out, {rules.turn_seconds:g} s each{clock}, "
        f"until it connects{withdrawn}; reachable from {where})\n",
        flush=True,
    )


def signing_key(args: argparse.Namespace) -> bytes:
    """The NKey seed that signs the results: ``--sign-key FILE`` (which must exist), else with
    ``--auth DIR`` the services user's key there, else ``OUT/signing.nk`` (made on first use and
    kept, so that every run in OUT is signed by one key)."""
    from .signing import load_or_create_key

    if args.sign_key:
        path = Path(args.sign_key)
        if path.is_dir():
            raise UsageError(f"--sign-key {args.sign_key}: is a directory, not an NKey seed file")
        if not path.is_file():
            raise UsageError(f"--sign-key {args.sign_key}: no such file (an NKey seed, e.g. from skat auth)")
        return load_or_create_key(path)
    if args.auth:
        from services.auth import SERVICE_USER, load_auth

        return load_or_create_key(Path(load_auth(args.auth).seed_file(SERVICE_USER)))
    return load_or_create_key(Path(args.out) / "signing.nk")


def tournament_main(args: argparse.Namespace, intro: bool = False, defaults: dict[str, Any] | None = None) -> int:
    """Run (or resume) a tournament. Options and connection settings are checked first, so a
    mistake is one line on stderr (``UsageError``, ``SettingsError``), not a failure mid-way."""
    check_args(args)
    if args.auth:
        from services.auth import load_auth

        auth = load_auth(args.auth)  # a missing or broken directory: one line, before anything starts
        for remote in args.remote:
            auth.seed_file(remote.partition(":")[0])  # a remote player the server would refuse
    if args.resume and not args.nats and not args.auth:
        store = Path(args.out) / "store"
        if not store.is_dir():
            raise UsageError(f"--resume {args.resume}: no tournament store in {store} (give --out DIR or --nats URL)")
    settings = from_args(args, default=None)
    # The results (and a local stack's store) go into --out: a file there, or a directory
    # nothing can be written in, is one line now, not a traceback after the last deal.
    writable_dir(args.out, "--out")
    signing_key(args)  # a key that cannot be read or made: one line, before anything is played
    logs.configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))
    try:
        import uvloop

        return uvloop.run(_run(args, intro, settings, defaults or {}))
    except ImportError:
        return asyncio.run(_run(args, intro, settings, defaults or {}))
