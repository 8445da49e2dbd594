"""Command-line front ends of the tournament runner: ``skat tournament`` and ``skat run``.

Every mistake in what they are given (flags, a ``--config`` file, a ``--resume`` that does not
fit) is found before anything starts and raised as ``UsageError``: one line, exit code 2.
A run is interrupted by Ctrl-C or SIGTERM without a traceback: its open tables are paused (no
clock runs on while nobody watches), the bots and, with the built-in stack, the services and
the server are stopped, and the line to resume it is printed.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.rules import Rules
from protocol.subjects import check_token
from protocol.tournament import TournamentConfig
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

from .bots import BOTS
from .errors import UsageError
from .outputs import writable_dir

DEFAULT_BOTS = ("heuristic", "stepping-random", "random", "random")
"""Seats left to built-in bots when ``--bots`` is not given are filled from this, in order."""
CONFIG_OPTIONS = frozenset(
    {"bots", "remote", "id", "groups", "rounds", "duplicate", "seed", "profile", "kontra", "ramsch", "bock",
     "seeger_fabian", "players", "turn_seconds", "max_timeouts"}
)  # fmt: skip
"""Options that make up a tournament's configuration (``--resume`` keeps the stored one)."""
MAX_TABLE_SUFFIX = len("-g999r3")
DEFAULT_MAX_TIMEOUTS = 5
"""Turns in a row a seat may miss before it is withdrawn (``Rules.max_timeouts``)."""
MAKE_SEED = 'python -c "import secrets; print(secrets.token_hex(16))"'
"""How to make a seed that passes ``seed_weakness`` (128 random bits as 32 hex digits)."""
PAUSE_WITHIN = 6.0
"""Seconds an interrupted run spends at most on pausing its open tables, connecting included."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bots",
        default=None,
        metavar="NAME,...",
        help=f"built-in bots ({', '.join(sorted(BOTS))}), one per seat the --remote players leave, in seat order; "
        "a name given twice plays as NAME and NAME-2 (default: the first seats of "
        f"{','.join(DEFAULT_BOTS)})",
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
        action="store_true",
        help="the --remote players are people: with the built-in stack, the live page gets a seat for each, "
        "played in the browser with that player's own permissions (its address is printed)",
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
        "--groups", type=int, default=3, help="sets of deals (each played once per seat rotation in duplicate mode)"
    )
    p.add_argument("--rounds", type=int, default=8, help="rounds per table (a round is one deal per player)")
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
        "--profile", choices=["isko", "classic"], default="isko", help="scoring rules: ISkO (default) or classic"
    )
    p.add_argument("--kontra", action="store_true", help="allow Kontra and Re")
    p.add_argument("--ramsch", action="store_true", help="play Ramsch when everybody passes")
    p.add_argument("--bock", action="store_true", help="Bock rounds (doubled scores) after big games")
    p.add_argument(
        "--standard", dest="seeger_fabian", action="store_false", help="rank by the standard list, not Seeger-Fabian"
    )
    p.add_argument("--players", type=int, choices=[3, 4], default=3, help="players per table")
    p.add_argument(
        "--turn-seconds",
        type=float,
        default=30.0,
        help="seconds a player has for each move before the default move is played for it",
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


def check_args(args: argparse.Namespace) -> None:
    """Numbers and combinations that cannot make a tournament, before anything is created."""
    if args.human and not args.remote:
        raise UsageError("--human seats people as the --remote players: give --remote ID for each")
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
    if args.groups < 1:
        raise UsageError(f"--groups must be at least 1, not {args.groups}: a tournament needs tables")
    if args.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, not {args.rounds}: every table plays whole rounds")
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
    seats(args)
    if args.remote and args.seed is not None:
        why = seed_weakness(args.seed)
        if why:
            raise UsageError(
                f"--seed: {why}; with remote players the seed must be secret and carry 128 bits (it decides every "
                f"card): make one with {MAKE_SEED}, or leave --seed out for a random one"
            )


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
    return next((bot for bot in sorted(BOTS) if plain(bot) == base), None)


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
    free = args.players - len(entrants)
    if free < 0:
        raise UsageError(
            f"{len(entrants)} --remote players do not fit at {args.players}-player tables"
            + ("" if args.players == 4 else " (--players 4 for four)")
        )
    if args.bots is None:
        names = list(DEFAULT_BOTS[:free])
    else:
        names = [b.strip() for b in args.bots.split(",") if b.strip()]
        if len(names) != free:
            remote = f" and {len(entrants)} --remote" if entrants else ""
            raise UsageError(
                f"--bots names {len(names)} bot{'s' * (len(names) != 1)}{remote} for {args.players} seats: "
                + (f"give --players {len(names) + len(entrants)}" if len(names) + len(entrants) in (3, 4) else "")
                + (" or " if len(names) + len(entrants) in (3, 4) else "")
                + f"name {free} bot{'s' * (free != 1)}"
            )
    bots: dict[str, str] = {}
    for name in names:
        if name not in BOTS:
            raise UsageError(f"--bots: unknown bot {name!r}; built-in bots: {', '.join(sorted(BOTS))}")
        pid, n = name, 2
        while pid in entrants:
            pid, n = f"{name}-{n}", n + 1
        entrants.append(pid)
        bots[pid] = name
    return entrants, bots, formats


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
    rules = Rules(
        profile=args.profile,
        kontra=args.kontra,
        ramsch=args.ramsch,
        bock=args.bock,
        seeger_fabian=args.seeger_fabian,
        rounds=args.rounds,
        players=args.players,
        turn_seconds=args.turn_seconds,
        max_timeouts=args.max_timeouts,
    )
    # Built-in bots only: reproducible by default. With remote players: 128 random bits.
    seed = args.seed or ("skatbus" if not args.remote else secrets.token_hex(16))
    return TournamentConfig(
        id=args.id or new_id(),
        entrants=entrants,
        bots=bots,
        formats=formats,
        rules=rules,
        groups=args.groups,
        # Seat rotations of one deal would show a remote entrant the same cards at several
        # tables (at once, or again later): duplicate mode is for built-in bots only.
        duplicate=args.duplicate and not args.remote,
        seed=seed,
    )


def resume_conflict(args: argparse.Namespace, defaults: dict[str, Any], stored: TournamentConfig) -> str | None:
    """Why the options given with ``--resume`` do not fit the stored tournament (None if they
    do, or if none was given): a resumed tournament keeps its configuration."""
    given = sorted(n for n in CONFIG_OPTIONS if n in defaults and getattr(args, n, None) != defaults[n])
    if not given:
        return None
    stored_values: dict[str, Any] = {
        "id": stored.id,
        "groups": stored.groups,
        "duplicate": stored.duplicate,
        "seed": stored.seed,
        **{f: getattr(stored.rules, f) for f in ("profile", "kontra", "ramsch", "bock", "seeger_fabian", "players")},
        "rounds": stored.rules.rounds,
        "turn_seconds": stored.rules.turn_seconds,
        "max_timeouts": stored.rules.max_timeouts,
    }
    for name in given:
        if name in ("bots", "remote"):
            try:
                entrants, bots, formats = seats(argparse.Namespace(**{**vars(args), "players": stored.rules.players}))
            except UsageError:
                entrants, bots, formats = [], {}, {}
            if (entrants, bots, formats) != (stored.entrants, stored.bots, dict(stored.formats)):
                return f"it was created with the seats {', '.join(stored.entrants)}; drop --{name}"
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
        if args.human and not args.auth:  # people play: users of our own, so nobody else reads the hands
            from .web.cli import people_auth

            humans = [r.partition(":")[0] for r in args.remote]
            own_auth = await asyncio.to_thread(people_auth, humans, store)
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
                paused = await _pause_interrupted(created[0], target, again)
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


async def _pause_interrupted(config: TournamentConfig, settings: ConnectionSettings, again: asyncio.Event) -> str:
    """Pause every open table of the interrupted tournament (reason "tournament <id>
    interrupted"), so that no seat times out while nobody plays: best effort, within
    ``PAUSE_WITHIN`` seconds in all (a second signal stops waiting). ``--resume`` resumes
    them. Returns what to add to the interrupted line (empty if no table was open)."""
    from protocol.tournament import schedule

    from .tournament import set_paused

    tables = [t.table for t in schedule(config)]  # a table not opened or finished answers so: skipped

    async def pause() -> dict[str, Any]:
        nc = await open_connection(settings, patience=2.0, name="skat-tournament-pause")
        try:
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
    hint = f"their clocks run on until `skat pause {config.id}`"
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
    if args.human:
        # The people's stack keeps its store under its own users' account: resume it the same way.
        if args.bots is not None:
            flags.append(f"--bots {args.bots}")
        flags += [f"--remote {r}" for r in args.remote] + ["--human"]
    print(f"interrupted{paused}; resume with: skat tournament {' '.join(flags)}", file=sys.stderr, flush=True)


async def _live_page(args: argparse.Namespace, stack: Any) -> Any:
    """The live page (``skat web``) on a free loopback port while the built-in stack plays, so a
    run can be watched, with a seat for every ``--remote`` player with ``--human``; None with
    ``--no-web`` (and no ``--human``)."""
    humans = [r.partition(":")[0] for r in args.remote] if args.human else []
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
                print("Resuming:", end=" ")
                _announce(state_config, stack, settings)
        if config is not None:
            _announce(config, stack, settings)
        results = await run_tournament(nc, config, resume=args.resume, out_dir=args.out, on_created=on_created)
    finally:
        await nc.close()
        if page is not None:
            await page.stop()
    print()
    print(format_standings(results))
    files = results["files"]
    print(
        f"\nResults: {files['results']}\n         {files['standings_csv']}\nEvents:  {files['archive']} (every table's log, one event per line)"
    )
    if "ratings" in files:
        print(f"Ratings: {files['ratings']} (across every tournament here: skat ratings --runs {args.out})")
    if intro:
        first = results["tables"][0]["table"] if results["tables"] else "TABLE"
        print(
            f"\nNext: replay a table     .venv/bin/skat replay {files['archive']} --table {first}"
            f"\n      (or --summary, --verify, --html deal.html)"
            f"\n      a report page       .venv/bin/skat report {Path(files['results']).parent}"
            "\n      plug in your bot    docs/bots.md, docs/protocol.md; .venv/bin/skat check-bot ID;"
            " examples/node-bot"
            "\n      a bigger one        .venv/bin/skat tournament --groups 10 --rounds 12"
        )
    return 0


async def _stored_config(tlog: Any, tid: str) -> TournamentConfig | None:
    from protocol.tournament import fold_tournament

    await tlog.ensure_stream()
    return fold_tournament(await tlog.read(tid)).config


def _announce(config: TournamentConfig, stack: Any, settings: ConnectionSettings) -> None:
    """The tournament's id, its seats and tables, and for every remote player how to connect."""
    tables = config.groups * (config.rules.players if config.duplicate else 1)
    seating = ", ".join(e if e in config.bots else f"{e} (remote)" for e in config.entrants)
    remote = [e for e in config.entrants if e not in config.bots]
    mode = " (duplicate: every deal once per seat rotation)" if config.duplicate else ""
    if remote and not config.duplicate:
        mode = " (no duplicate rotations with remote players: they would see one deal's hands at several tables)"
    print(f"Tournament {config.id}: {seating}; {tables} tables of {config.rules.deals} deals{mode}.\n", flush=True)
    if not remote:
        return
    url = safe_servers(settings.servers, scheme=True)
    auth = getattr(stack, "auth", None) if stack is not None else None
    for player in remote:
        files = ""
        if auth is not None:
            files = f" --creds {auth.seed_file(player)}" + (f" --tls-ca {auth.ca_file}" if auth.tls else "")
        print(
            f"Remote player {player}: connect to {url}, e.g. skat bot heuristic --player {player} --nats {url}{files}"
        )
    where = "this machine only (loopback)" if stack is not None and auth is None else url
    limit = config.rules.max_timeouts
    withdrawn = f"; {limit} in a row withdraw it: it forfeits" if limit else ""
    print(
        f"(the tables open now: a remote player's moves time out, {config.rules.turn_seconds:g} s each, "
        f"until it connects{withdrawn}; reachable from {where})\n",
        flush=True,
    )


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
    logs.configure(level=os.environ.get("SKAT_LOG_LEVEL", "warning"))
    try:
        import uvloop

        return uvloop.run(_run(args, intro, settings, defaults or {}))
    except ImportError:
        return asyncio.run(_run(args, intro, settings, defaults or {}))
