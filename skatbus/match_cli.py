"""``skat match A B``: is bot A better than bot B? Paired duplicate deals until an SPRT decides.

The pairs are played through the pure engine (``skatbus.match``), the test is
``skatbus.sprt``'s; a progress line every ``--every`` pairs shows the LLR between its bounds,
as fishtest does, and the last line is the verdict. docs/match.md explains how to read them.
Exit code 0 whatever the verdict (H0, H1 or inconclusive: ``--json`` has it as ``outcome``),
2 for a mistake in what was given, 130 when stopped by Ctrl-C or SIGTERM (after printing the
partial result).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

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
from .sprt import MIN_PAIRS, SprtSpec


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "match",
        help="is bot A better than bot B? paired duplicate deals until a sequential test (SPRT) decides",
        description="Play built-in bot A (the candidate) against B (the baseline) on paired duplicate deals "
        "through the pure engine until a sequential probability ratio test accepts H0 (A is not better by H1) "
        "or H1 (A is better by at least H1), printing the log-likelihood ratio as it goes. See docs/match.md.",
    )
    p.add_argument("candidate", metavar="A", help="the bot under test (e.g. heuristic)")
    p.add_argument("baseline", metavar="B", help="the bot it is compared with (e.g. stepping-random)")
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
    p.add_argument("--seed", default=DEFAULT_SEED, help=f"seed of the cards and the bots (default {DEFAULT_SEED})")
    p.add_argument(
        "--reseed-candidate",
        action="store_true",
        help="seed the candidate's random choices apart from the baseline's (default: alike, so that a bot "
        "against itself differs by nothing); with A = B this measures the bot's own noise (an A/A test)",
    )
    p.add_argument("--jobs", default="1", help="worker processes (default 1); the result does not depend on it")
    p.add_argument(
        "--every", default=str(DEFAULT_EVERY), help=f"pairs between progress lines (default {DEFAULT_EVERY})"
    )
    p.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="also write the result as JSON to FILE ('-': to stdout, the text going to stderr)",
    )
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
    match = Match(args.game, args.candidate, args.baseline, spec, max_pairs, args.seed, players, args.reseed_candidate)
    try:
        match.check()
    except ValueError as exc:
        raise UsageError(_as_options(str(exc))) from None
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
    if args.json is not None and args.json != "-":
        _check_writable(Path(args.json))
    text: TextIO = sys.stderr if args.json == "-" else sys.stdout

    def say(line: str) -> None:
        print(line, file=text, flush=True)

    say(header_line(match))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        result = play_match(match, jobs, every, lambda r: say(progress_line(r)))
    finally:
        signal.signal(signal.SIGTERM, previous)
    say(verdict_line(result))
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


def _write_json(result: MatchResult, where: str | None) -> None:
    if where is None:
        return
    text = json.dumps(result.to_json(), indent=2)
    if where == "-":
        print(text, flush=True)
    else:
        Path(where).write_text(text + "\n")
