"""The command line of ``skat play``: which game, who sits where, and the game's rules.

Every game option defaults to "not given" (None), so that an option of the other game is
refused with a reason instead of being ignored: ``--kontra`` at a Thirty-one table, or
``--coins`` at a Skat table, is a mistake, one line and exit code 2 (``UsageError``), found
before anything starts. Thirty-one's options are its rules' fields by their names
(``protocol.thirty_one.rules.ThirtyOneRules``, the rules page's table of options), spelled as
flags as ``skat tournament`` spells them: ``min_knock`` is ``--min-knock``, ``county`` false is
``--no-county`` (each switch also has its other half here: ``--county``). A rule the rules refuse (``--min-knock 40``) is refused
with the rules' own reason, in the flag's spelling.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from protocol.subjects import check_token

from ..errors import UsageError

SKAT: Final = "skat"
THIRTY_ONE: Final = "thirty-one"
GAMES: Final = (SKAT, THIRTY_ONE)
TURN_SECONDS: Final = 120.0
"""A person's time for a move (the bots take as long as they take): longer than a bot table's."""

SKAT_FLAGS: Final = {"rounds": "--rounds", "kontra": "--kontra", "players": "--players"}
T31_FLAGS: Final = {
    "coins": "--coins",
    "county": "--county",
    "three_of_a_kind": "--three-of-a-kind",
    "straight_flush": "--straight-flush",
    "min_knock": "--min-knock",
    "knock_in_first_round": "--knock-in-first-round",
    "throw_down": "--throw-down",
    "stock_out": "--stock-out",
    "max_turns": "--max-turns",
    "max_deals": "--max-deals",
}
"""Each game's own options: rules field -> flag (``turn_seconds`` is both games')."""


def add_play_arguments(p: argparse.ArgumentParser) -> None:
    """``skat play``'s own arguments (the page's ``--listen`` and ``--tls-*`` come from ``cli``)."""
    _one_line_errors(p)
    p.add_argument("--game", choices=GAMES, default=SKAT, help="the game to play (default: skat)")
    p.add_argument(
        "--vs",
        default="heuristic,heuristic",
        metavar="BOT,BOT",
        help="the other seats' built-in bots, in seat order (Skat: two, or three with --players 4; Thirty-one: 1 to 8)",
    )
    p.add_argument(
        "--name",
        "--player",
        dest="player",
        default="you",
        metavar="NAME",
        help="your name at the table: the player id the others, the log and the saved run know you by (default: you)",
    )
    p.add_argument("--seat", type=int, default=0, metavar="N", help="your seat, 0 first (default 0: the first turn)")
    p.add_argument(
        "--turn-seconds", type=float, default=TURN_SECONDS, help="seconds you (and the bots) have for each move"
    )
    skat = p.add_argument_group("Skat's options")
    skat.add_argument("--rounds", type=int, default=None, help="rounds to play (a round is one deal per player; 1)")
    skat.add_argument("--kontra", action="store_const", const=True, default=None, help="allow Kontra and Re")
    skat.add_argument("--players", type=int, choices=[3, 4], default=None, help="players at the table (3)")
    t31 = p.add_argument_group("Thirty-one's options (the rules page's names)")
    flag = argparse.BooleanOptionalAction
    t31.add_argument("--coins", type=int, default=None, metavar="N", help="coins each player starts with (3)")
    t31.add_argument("--county", action=flag, default=None, help="play on without coins until a life is owed (on)")
    t31.add_argument(
        "--three-of-a-kind",
        nargs="?",
        const="30",
        choices=["off", "30", "30.5"],
        default=None,
        help="three cards of one rank are worth 30 (or with 30.5: 30 1/2); default off",
    )
    t31.add_argument("--straight-flush", action=flag, default=None, help="a run of one suit is worth 30, Q-K-A 31")
    t31.add_argument("--min-knock", type=int, default=None, metavar="N", help="the least hand value to knock with (0)")
    t31.add_argument("--knock-in-first-round", action=flag, default=None, help="knocking in the first round (on)")
    t31.add_argument("--throw-down", action=flag, default=None, help="hands dealt unseen; look, or throw down unseen")
    t31.add_argument(
        "--stock-out", choices=["reshuffle", "void"], default=None, help="what an empty stock does (reshuffle)"
    )
    t31.add_argument("--max-turns", type=int, default=None, metavar="N", help="a deal of this many turns is void (300)")
    t31.add_argument(
        "--max-deals", type=int, default=None, metavar="N", help="the game ends after this many deals (500)"
    )


def _one_line_errors(p: argparse.ArgumentParser) -> None:
    """Argparse's own mistakes (``--seat two``, ``--game chess``) as one line too, not a usage block."""

    def error(message: str) -> NoReturn:
        p.exit(2, f"{p.prog}: {message}\n")

    setattr(p, "error", error)  # noqa: B010  (an instance's method: mypy refuses the assignment)


@dataclass(frozen=True)
class PlaySpec:
    """What ``skat play`` was asked for, checked: the game, its rules, and the seats."""

    game: str
    rules: Any
    player: str
    seat: int
    bots: list[str]
    """The built-in bots, in the seat order of the other seats."""
    ids: list[str]
    """Their player ids (the bot's name, made unique: ``heuristic``, ``heuristic-2``)."""

    @property
    def players(self) -> list[str]:
        """Every seat's player id, the person at ``seat``."""
        return [*self.ids[: self.seat], self.player, *self.ids[self.seat :]]


def play_spec(args: argparse.Namespace) -> PlaySpec:
    """The checked request, or ``UsageError`` naming the first mistake."""
    from ..bots import bots_of, unknown_bot

    game = args.game
    own, other = (SKAT_FLAGS, T31_FLAGS) if game == SKAT else (T31_FLAGS, SKAT_FLAGS)
    for field, flag in other.items():
        value = getattr(args, field)
        if value is not None:
            raise UsageError(_not_this_game(game, field, flag, value))
    try:
        player = check_token("player", args.player)
    except ValueError as exc:
        raise UsageError(f"--name (--player): {exc}") from None
    bots = [b.strip() for b in args.vs.split(",") if b.strip()]
    known = bots_of(game)
    for bot in bots:
        if bot not in known:
            raise UsageError(f"--vs: {unknown_bot(bot, game)}")
    if game == SKAT:
        seats = args.players or 3
        if len(bots) != seats - 1:
            raise UsageError(f"--vs names {len(bots)} bots for the {seats - 1} other seats of a {seats}-player table")
    else:
        seats = len(bots) + 1
        if not 2 <= seats <= 9:
            raise UsageError(
                f"--vs names {len(bots)} bots: a Thirty-one table seats 2 to 9 players (you and 1 to 8 bots)"
            )
    if not 0 <= args.seat < seats:
        raise UsageError(f"--seat {args.seat}: a table of {seats} players has seats 0 to {seats - 1}")
    rules = _skat_rules(args, seats) if game == SKAT else _thirty_one_rules(args)
    ids: list[str] = []
    for bot in bots:
        pid, n = bot, 2
        while pid in ids or pid == player:
            pid, n = f"{bot}-{n}", n + 1
        ids.append(pid)
    return PlaySpec(game=game, rules=rules, player=player, seat=args.seat, bots=bots, ids=ids)


def _not_this_game(game: str, field: str, flag: str, value: Any) -> str:
    spelled = f"--no-{flag[2:]}" if value is False else flag
    if game == SKAT:
        return f"{spelled} is an option of Thirty-one, not of Skat (give --game thirty-one to play Thirty-one)"
    if field == "players":
        return f"{spelled} is Skat's: a Thirty-one table seats you and the --vs bots (2 to 9 players)"
    return (
        f"{spelled} is an option of Skat, not of Thirty-one; Thirty-one's options are "
        + ", ".join(T31_FLAGS.values())
        + ", --turn-seconds"
    )


def _skat_rules(args: argparse.Namespace, seats: int) -> Any:
    from protocol.skat.rules import Rules

    rounds = 1 if args.rounds is None else args.rounds
    if rounds < 1:
        raise UsageError(f"--rounds must be at least 1, not {rounds}")
    try:
        return Rules(rounds=rounds, players=seats, turn_seconds=args.turn_seconds, kontra=bool(args.kontra))
    except ValueError as exc:
        raise UsageError(_in_flags(str(exc), {**SKAT_FLAGS, "turn_seconds": "--turn-seconds"})) from None


def _thirty_one_rules(args: argparse.Namespace) -> Any:
    from protocol.thirty_one.rules import ThirtyOneRules

    given = {field: getattr(args, field) for field in T31_FLAGS if getattr(args, field) is not None}
    try:
        return ThirtyOneRules(turn_seconds=args.turn_seconds, **given)
    except (ValueError, TypeError) as exc:
        raise UsageError(_in_flags(str(exc), {**T31_FLAGS, "turn_seconds": "--turn-seconds"})) from None


def _in_flags(reason: str, flags: dict[str, str]) -> str:
    """The rules' reason with their field names spelled as this command's flags."""
    for field, flag in flags.items():
        reason = re.sub(rf"\b{field}\b", flag, reason)
    return reason
