"""``skat match A B``: is bot A better than bot B? Paired duplicate deals until an SPRT decides.

The pairs of built-in bots are played through the pure engine (``skatbus.match``); with
``--remote`` the candidate A is a remote player and the pairs are played through the services
(``skatbus.match_services``), on ``--nats`` or on a local stack started for the match. The
test is ``skatbus.sprt``'s; a progress line every ``--every`` pairs shows the LLR between its
bounds, as fishtest does, and the last line is the verdict. docs/match.md explains how to read
them. Exit code 0 whatever the verdict (H0, H1 or inconclusive: ``--json`` has it as
``outcome``), 2 for a mistake in what was given, 130 when stopped by Ctrl-C or SIGTERM (after
printing the partial result), 1 when the services failed half-way (the pairs so far reported).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

from nats.aio.client import Client

from protocol.subjects import check_token
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

from .cli_parser import seed_text
from .errors import UsageError
from .match import (
    DEFAULT_EVERY,
    DEFAULT_MAX_PAIRS,
    DEFAULT_SEED,
    GAMES,
    SKAT,
    Match,
    MatchResult,
    Outcome,
    cost_line,
    default_h1,
    header_line,
    play_match,
    progress_line,
    verdict_line,
)
from .match_services import DEFAULT_MAX_TIMEOUTS, DEFAULT_TURN_SECONDS, ServicesMatchResult, ServicesReport
from .sprt import MIN_PAIRS, SprtSpec
from .standings_text import command_lines, fitted, spelled_out

T = TypeVar("T")

LOCAL_CONNECT_WAIT = 60.0
"""Seconds a match on its own local stack waits for the remote to connect before the first pair."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "match",
        help="is bot A better than bot B? paired duplicate deals until a sequential test (SPRT) decides",
        description="Play bot A (the candidate) against built-in bot B (the baseline) on paired duplicate deals "
        "until a sequential probability ratio test accepts H0 (A is not better by H1) or H1 (A is better by at "
        "least H1), printing the log-likelihood ratio as it goes: built-in bots through the pure engine, a "
        "--remote A through the services. See docs/match.md.",
    )
    p.add_argument(
        "candidate",
        metavar="A",
        help="the bot under test: a built-in bot (e.g. heuristic), a class of your own played in-process "
        "(MODULE:CLASS or PATH.py:CLASS, docs/in-process-bots.md), or with --remote a player id",
    )
    p.add_argument(
        "baseline",
        metavar="B",
        help="the bot it is compared with (e.g. stepping-random; a class of your own, MODULE:CLASS, too)",
    )
    p.add_argument("--game", default=SKAT, metavar="GAME", help=f"the game: {', '.join(GAMES)} (default skat)")
    p.add_argument("--h0", default="0", help="the mean difference under H0 (default 0)")
    p.add_argument(
        "--h1",
        default=None,
        help="the mean difference under H1: the smallest gain worth finding (default: Skat 5 Seeger-Fabian "
        "points per deal; Thirty-one 0.1 place points per game per place, 0.2 at a table of 3)",
    )
    p.add_argument("--alpha", default="0.05", help="chance of accepting H1 when H0 holds (default 0.05)")
    p.add_argument("--beta", default="0.05", help="chance of accepting H0 when H1 holds (default 0.05)")
    p.add_argument(
        "--min-pairs",
        default=str(MIN_PAIRS),
        help=f"pairs before the test may stop (default {MIN_PAIRS}; the variance of fewer is unreliable)",
    )
    p.add_argument(
        "--max-pairs",
        default=str(DEFAULT_MAX_PAIRS),
        help=f"stop 'inconclusive' after this many pairs (default {DEFAULT_MAX_PAIRS})",
    )
    p.add_argument(
        "--players",
        default=None,
        help="Thirty-one: players at the table, 2-9 (default 3); Skat plays at tables of 3",
    )
    p.add_argument(
        "--seed", type=seed_text, default=DEFAULT_SEED, help=f"seed of the cards and the bots (default {DEFAULT_SEED})"
    )
    p.add_argument(
        "--reseed-candidate",
        action="store_true",
        help="seed the candidate's random choices apart from the baseline's (default: alike, so that a bot "
        "against itself differs by nothing); with A = B this measures the bot's own noise (an A/A test)",
    )
    p.add_argument(
        "--jobs",
        default="1",
        help="worker processes (default 1; with --remote: pairs played at once); the result does not depend on it",
    )
    p.add_argument(
        "--every", default=str(DEFAULT_EVERY), help=f"pairs between progress lines (default {DEFAULT_EVERY})"
    )
    p.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="also write the result as JSON to FILE ('-': to stdout, the text going to stderr)",
    )
    remote = p.add_argument_group("a remote candidate (played through the services)")
    remote.add_argument(
        "--remote",
        action="store_true",
        help="A is a remote player: a bot that connects by itself as player id A (skat bot BOT --player A, or "
        "your own); the pairs are played at tables of the services, the baseline seated by this command",
    )
    remote.add_argument(
        "--turn-seconds",
        default=None,
        metavar="SECONDS",
        help=f"seconds A has for each move; a missed move is played by default and counts as A's "
        f"(default {DEFAULT_TURN_SECONDS:g})",
    )
    remote.add_argument(
        "--max-timeouts",
        default=None,
        metavar="N",
        help="moves missed in a row at one table that withdraw A there and end the match after that pair "
        f"(default {DEFAULT_MAX_TIMEOUTS}; at least 1)",
    )
    remote.add_argument(
        "--connect-wait",
        default=None,
        metavar="SECONDS",
        help=f"before the first pair, wait up to this long for A to connect (its hello); default "
        f"{LOCAL_CONNECT_WAIT:g} with the local stack, 0 with --nats (start A first)",
    )
    add_connection_arguments(
        p,
        "with --remote: the services on this server (comma-separated list; default: $SKAT_NATS_URL, else a "
        "local nats-server and services started for the match and stopped after it)",
    )
    add_connect_timeout(p)
    p.set_defaults(handler=cmd_match)


def match_from_args(args: argparse.Namespace) -> Match:
    """The match the options ask for; ``UsageError`` for the first thing wrong with them. The
    numbers arrive as text and are read here, so that a malformed one is one line too."""
    if args.game not in GAMES:
        raise UsageError(f"--game: no match for the game {args.game!r}; the games are {', '.join(GAMES)}")
    players = 3 if args.players is None else _int(args.players, "--players")
    if args.game == SKAT and players != 3:
        raise UsageError(f"--players: Skat is played at tables of 3, not {players} (--players is for Thirty-one)")
    if not 2 <= players <= 9:
        raise UsageError(f"--players must be 2 to 9, not {players}")
    h1 = default_h1(args.game, players) if args.h1 is None else _float(args.h1, "--h1")
    spec = SprtSpec(
        h1=h1,
        h0=_float(args.h0, "--h0"),
        alpha=_float(args.alpha, "--alpha"),
        beta=_float(args.beta, "--beta"),
        min_pairs=_int(args.min_pairs, "--min-pairs"),
    )
    max_pairs = _int(args.max_pairs, "--max-pairs")
    remote = getattr(args, "remote", False)
    if remote:
        try:
            check_token("player", args.candidate)
        except ValueError as exc:
            raise UsageError(f"--remote {args.candidate!r}: {exc}") from None
        if args.reseed_candidate:
            raise UsageError("--reseed-candidate seeds a built-in candidate; a --remote one makes its own choices")
    match = Match(args.game, args.candidate, args.baseline, spec, max_pairs, args.seed, players, args.reseed_candidate)
    # A remote candidate is no built-in bot: everything else is checked as for one.
    checked = dataclasses.replace(match, candidate=match.baseline) if remote else match
    try:
        checked.check()
    except ValueError as exc:
        message = _as_options(str(exc))
        if not remote and message.startswith(f"unknown bot {args.candidate!r}"):
            message += f" (a remote player? add --remote: it then connects as player {args.candidate})"
        raise UsageError(message) from None
    return match


def _int(text: str, option: str) -> int:
    """``text`` as a whole number, or a one-line ``UsageError`` naming ``option``."""
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{option}: want a whole number, not {text!r}") from None


def _float(text: str, option: str) -> float:
    """``text`` as a number, or a one-line ``UsageError`` naming ``option``."""
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"{option}: want a number, not {text!r}") from None


def _positive(text: str, option: str) -> int:
    """``text`` as a whole number of at least 1 (processes, pairs between lines)."""
    number = _int(text, option)
    if number < 1:
        raise UsageError(f"{option} must be at least 1, not {number}")
    return number


def _as_options(message: str) -> str:
    """``h1 must be ...`` reads ``--h1 must be ...`` on the command line."""
    for name in ("h0", "h1", "alpha", "beta"):
        if message.startswith(f"{name} "):
            return f"--{message}"
    if message.startswith("the minimum number of pairs"):
        return f"--min-pairs: {message}"
    return message


def cmd_match(args: argparse.Namespace) -> int:
    match = match_from_args(args)
    jobs, every = _positive(args.jobs, "--jobs"), _positive(args.every, "--every")
    if args.remote:
        remote = remote_options(args)
    else:
        _refuse_remote_options(args)
    if args.json is not None and args.json != "-":
        _check_writable(Path(args.json))
    text: TextIO = sys.stderr if args.json == "-" else sys.stdout

    def say(line: str) -> None:
        for part in fitted(line):  # at most 80 columns, as the standings
            print(part, file=text, flush=True)

    if args.remote:
        return asyncio.run(_remote_match(args, match, remote, jobs, every, say))
    say(spelled_out(header_line(match), match.unit, define=True))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        result = play_match(match, jobs, every, lambda r: say(progress_line(r)))
    finally:
        signal.signal(signal.SIGTERM, previous)
    say(spelled_out(verdict_line(result), match.unit))
    say(cost_line(result))
    _write_json(result, args.json)
    return 130 if result.outcome is Outcome.INTERRUPTED else 0


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops a match as Ctrl-C does: the pairs played so far are reported."""
    raise KeyboardInterrupt


def _check_writable(path: Path) -> None:
    """A --json file that cannot be written is said before the first pair, not after the last."""
    if path.is_dir():
        raise UsageError(f"--json {path}: is a directory")
    if not path.parent.is_dir():
        raise UsageError(f"--json {path}: no such directory {path.parent}")


def _write_json(result: MatchResult, where: str | None, extra: dict[str, Any] | None = None) -> None:
    if where is None:
        return
    text = json.dumps({**result.to_json(), **(extra or {})}, indent=2)
    if where == "-":
        print(text, flush=True)
    else:
        Path(where).write_text(text + "\n")


# --- a remote candidate, through the services ----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RemoteOptions:
    """How a remote candidate's pairs are played: where, and its clock."""

    settings: ConnectionSettings | None
    """The services' server; None: a local stack is started for the match."""
    turn_seconds: float
    max_timeouts: int
    connect_wait: float
    connect_patience: float


REMOTE_ONLY = ("turn_seconds", "max_timeouts", "connect_wait", "nats", "creds", "tls_ca", "connect_timeout")


def remote_options(args: argparse.Namespace) -> RemoteOptions:
    """The options of a --remote match; ``UsageError`` for the first thing wrong with them."""
    check_connect_timeout(args)
    settings = from_args(args, default=None)
    turn = DEFAULT_TURN_SECONDS if args.turn_seconds is None else _float(args.turn_seconds, "--turn-seconds")
    if not 0 < turn < float("inf"):
        raise UsageError(f"--turn-seconds must be a number of seconds above 0, not {args.turn_seconds}")
    most = DEFAULT_MAX_TIMEOUTS if args.max_timeouts is None else _int(args.max_timeouts, "--max-timeouts")
    if most < 1:
        raise UsageError(
            f"--max-timeouts must be at least 1, not {most}: a remote that stopped answering would be measured "
            "by its default moves for ever"
        )
    default_wait = LOCAL_CONNECT_WAIT if settings is None else 0.0
    wait = default_wait if args.connect_wait is None else _float(args.connect_wait, "--connect-wait")
    if not 0 <= wait < float("inf"):
        raise UsageError(f"--connect-wait must be 0 or more seconds, not {args.connect_wait}")
    return RemoteOptions(settings, turn, most, wait, connect_patience(args.connect_timeout))


def _refuse_remote_options(args: argparse.Namespace) -> None:
    """The services' options mean nothing to a match of built-in bots (the pure engine's)."""
    for name in REMOTE_ONLY:
        if getattr(args, name, None) is not None:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} is for a --remote candidate (built-in bots play through the pure engine)")


class _Stopped(Exception):
    """Ctrl-C or SIGTERM came before the first pair."""


async def _until(work: Awaitable[T], stop: asyncio.Event) -> T:
    """``work``'s result, unless ``stop`` is set first: then ``work`` is cancelled and
    ``_Stopped`` raised."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    raise _Stopped


async def _remote_match(
    args: argparse.Namespace, match: Match, options: RemoteOptions, jobs: int, every: int, say: Callable[[str], None]
) -> int:
    """A match of a remote candidate: the services started (a local stack) or reached, the
    remote waited for, the pairs played (``match_services.play_services_match``), and the
    stack stopped however it ends. Ctrl-C and SIGTERM set ``stop``: before the first pair they
    end it at once, during the pairs as an interrupted match (its open tables paused)."""
    from services.main import LocalStack

    from .match_services import new_run, play_services_match

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    run = new_run()
    stack = LocalStack() if options.settings is None else None
    nc = None
    played: ServicesMatchResult | None = None
    reports: list[ServicesReport] = []
    url: str | None = None

    def progress(result: MatchResult) -> None:
        say(_remote_progress(result, reports[0] if reports else None))

    say(spelled_out(header_line(match, f"through the services, {match.candidate} remote"), match.unit, define=True))
    try:
        settings = options.settings
        if stack is not None:
            await _until(stack.__aenter__(), stop)
            settings = stack.settings
            say(
                f"Started a local nats-server ({safe_servers(settings.servers, scheme=True)}) and the five services "
                "for this match (stopped after it)."
            )
        assert settings is not None
        url = safe_servers(settings.servers, scheme=True)
        nc = await _until(open_connection(settings, patience=options.connect_patience, name="skat-match"), stop)
        game = "" if match.game == SKAT else f" --game {match.game}"

        def how_to_connect() -> None:
            say(f"Remote player {match.candidate}: connect to {url}, e.g.")
            for line in command_lines(f"skat bot heuristic{game} --player {match.candidate} --nats {url}", "  "):
                say(line)
            say(
                f"Tables {run}-<pair>-<b|c0|c1|...>; {match.candidate}'s moves: {options.turn_seconds:g} s each "
                f"(a missed one is played by default and counts as its move), {options.max_timeouts} missed in a "
                "row at a table withdraw it there and end the match after that pair."
            )

        if options.connect_wait > 0:
            await _wait_for_remote(nc, match.candidate, options.connect_wait, stop, say, how_to_connect)
        else:
            how_to_connect()
        played = await play_services_match(
            nc,
            match,
            options.turn_seconds,
            options.max_timeouts,
            jobs,
            every,
            progress,
            stop=stop,
            run=run,
            on_start=lambda source: reports.append(source.report),
        )
    except _Stopped:
        say("interrupted before the first pair: nothing played")
        extra = {"through": "services", "server": url, "services": reports[0].to_json() if reports else None}
        _write_json(MatchResult(match, outcome=Outcome.INTERRUPTED), args.json, extra)
        return 130
    finally:
        if nc is not None:
            with contextlib.suppress(Exception):
                await nc.close()
        if stack is not None:
            await stack.__aexit__(None, None, None)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    assert played is not None
    result, report = played.result, played.report
    if report.stopped:
        say(f"stopped: {report.stopped}")
    say(spelled_out(verdict_line(result), match.unit))
    say(cost_line(result))
    say(_remote_summary(report))
    _write_json(result, args.json, {"through": "services", "server": url, "services": report.to_json()})
    if result.outcome is Outcome.INTERRUPTED:
        return 130
    return 1 if report.failed else 0


async def _wait_for_remote(
    nc: Client,
    player: str,
    seconds: float,
    stop: asyncio.Event,
    say: Callable[[str], None],
    listening: Callable[[], None],
) -> None:
    """Before the first pair: until ``player`` says hello, or ``seconds`` have passed
    (``listening`` is called once its hello would be heard)."""
    from .match_services import heard_from

    def tick(left: float) -> None:
        print(f"\rWaiting for {player} to connect: {left:.0f} s left   ", end="", file=sys.stderr, flush=True)

    ticking = tick if sys.stderr.isatty() else None
    heard = await _until(heard_from(nc, player, seconds, ticking, listening), stop)
    if sys.stderr.isatty():
        print(file=sys.stderr, flush=True)
    if heard:
        say(f"{player} connected.")
    else:
        say(
            f"{player} did not say hello in {seconds:g} s: the pairs start anyway (its moves time out until it "
            "connects)."
        )


def _remote_progress(result: MatchResult, report: ServicesReport | None) -> str:
    """The progress line, with the remote's time-outs so far when there are any."""
    line = progress_line(result)
    if report is not None and report.candidate_timeouts:
        n = report.candidate_timeouts
        line += f"; {report.candidate} timed out {n} move{'s' * (n != 1)}"
    return line


def _remote_summary(report: ServicesReport) -> str:
    """The remote's moves and time-outs, and what became of the tables left open."""
    n = report.candidate_timeouts
    line = (
        f"{report.candidate}: {report.candidate_moves} moves made, {n} timed out (played by default)"
        f"{f', withdrawn at {len(report.withdrawn)} table(s)' if report.withdrawn else ''}; tables {report.run}-*"
    )
    if report.baseline_timeouts:
        line += f"; the baseline timed out {report.baseline_timeouts} moves (a machine too busy for the clock)"
    if report.paused:
        line += f"; {len(report.paused)} table(s) left open were paused (a match is not resumed)"
    if report.unpaused:
        line += f"; {len(report.unpaused)} left open did not answer the pause: {', '.join(report.unpaused)}"
    return line
