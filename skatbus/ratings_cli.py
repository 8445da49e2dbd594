"""``skat ratings``: the ratings of every player across the tournaments in a runs directory."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from protocol import registry

from .errors import UsageError
from .ratings import ratings_of, table_text


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "ratings",
        help="each player's rating with its 95 %% interval across every tournament in a runs directory",
        description="Rate every player over every finished table of every tournament under RUNS "
        "(OpenSkill Plackett-Luce, one match per table, ranked by Seeger-Fabian points at Skat and by "
        "places at Thirty-one; each game rated apart), rebuilt from the archives alone.",
    )
    p.add_argument("--runs", default="runs", help="the directory the tournaments wrote into (default runs)")
    p.add_argument("--json", action="store_true", help="print the ratings as JSON (as ratings.json holds them)")
    p.add_argument(
        "--game",
        default=None,
        metavar="GAME",
        help="only this game's ratings (skat, thirty-one); default: every game's, each rated apart",
    )
    p.set_defaults(handler=cmd_ratings)


def cmd_ratings(args: argparse.Namespace) -> int:
    runs = Path(args.runs)
    if args.game is not None and args.game not in registry.names():
        raise UsageError(f"--game: no game {args.game!r}; the games are {', '.join(registry.names())}")
    if not runs.is_dir():
        raise UsageError(f"{runs}: no such directory (tournaments write into runs/ by default; see --runs)")
    ratings = ratings_of(runs)
    if args.game is not None:
        ratings = ratings.of(args.game)
    if not ratings.tables:
        what = f" of {registry.get(args.game).title}" if args.game else ""
        raise UsageError(f"{runs}: no finished tournament tables{what} to rate")
    print(json.dumps(ratings.to_json(), indent=2) if args.json else table_text(ratings))
    return 0
