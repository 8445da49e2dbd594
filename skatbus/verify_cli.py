"""``skat verify RUN [--key PUBKEY] [--json]``: is a tournament's run folder what was played?

RUN is a run folder (``OUT/<tournament>``) or its results.json. One line per problem found
(``skatbus.verify``), then ``verified: ...`` (exit code 0) or ``NOT verified: N problems``
(exit code 1). A RUN that is no run folder, or whose files are missing or unreadable, is one
line on stderr and exit code 2, as is a ``--key`` that is no public NKey.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check a tournament's run folder: the deals against the commitment, every table, the results, the signature",
        description="Check a run folder written by skat tournament (OUT/<tournament>, or its results.json) from "
        "its files alone: the revealed seed against the commitment, every deal re-derived from the seed and the "
        "entrants' nonces, every table replayed under its rules, the results and standings recomputed, and the "
        "operator's signature. Prints one line per problem, then 'verified' (exit 0) or 'NOT verified' (exit 1).",
    )
    p.add_argument("run", metavar="RUN", help="a run folder (OUT/<tournament>) or its results.json")
    p.add_argument(
        "--key",
        metavar="PUBKEY",
        default=None,
        help="the operator's public NKey (U..., printed when the tournament started): the signature must be by it",
    )
    p.add_argument(
        "--commitment",
        metavar="HEX",
        default=None,
        help="the commitment you recorded when the tournament announced it: the run must hold this one",
    )
    p.add_argument(
        "--nonce",
        action="append",
        default=[],
        metavar="PLAYER=HEX",
        help="a nonce you gave (the SDK logs it as tournament_nonce_given): the deals must be made from it; repeatable",
    )
    p.add_argument("--json", action="store_true", help="print the findings as one JSON object instead")
    p.set_defaults(handler=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from .signing import check_public_key
    from .verify import verify_run

    if args.key is not None:
        try:
            check_public_key(args.key)
        except ValueError as exc:
            raise UsageError(f"--key: {exc}") from None
    nonces = {}
    for given in args.nonce:
        player, sep, nonce = given.partition("=")
        if not sep or not player or not nonce:
            raise UsageError(f"--nonce {given!r}: want PLAYER=HEX")
        nonces[player] = nonce
    found = verify_run(Path(args.run), args.key, args.commitment, nonces)
    if args.json:
        print(json.dumps(found.to_json(), indent=2))
    else:
        for note in found.notes:
            print(f"note: {note}")
        for problem in found.problems:
            print(problem)
        print(found.summary())
    sys.stdout.flush()
    return 0 if found.ok else 1
