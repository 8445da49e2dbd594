"""The report: PASS, FAIL (expected, happened, what to fix) or SKIP per check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TextIO

from .common import CHECKS

# --- the report ----------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    status: str  # PASS, FAIL or SKIP
    happened: str
    expected: str = ""
    fix: str = ""


def _pass(name: str, happened: str) -> Result:
    return Result(name, "PASS", happened)


def _fail(name: str, expected: str, happened: str, fix: str) -> Result:
    return Result(name, "FAIL", happened, expected, fix)


def _skip(name: str, why: str) -> Result:
    return Result(name, "SKIP", why)


def write_report(player: str, results: dict[str, Result], out: TextIO, game: str = "skat") -> None:
    """The report, headed by the command that made it (``--game`` unless Skat, the default)."""
    flag = "" if game == "skat" else f" --game {game}"
    print(f"\nskat check-bot {player}{flag}:", file=out)
    for name in CHECKS:
        r = results.get(name)
        if r is None:
            continue
        print(f"  {r.status}  {name:<10} {CHECKS[name]}", file=out)
        if r.status == "FAIL":
            print(f"        expected: {r.expected}", file=out)
            print(f"        happened: {r.happened}", file=out)
            print(f"        fix:      {r.fix}", file=out)
        else:
            print(f"        {r.happened}", file=out)
    counts = {s: sum(r.status == s for r in results.values()) for s in ("PASS", "FAIL", "SKIP")}
    print(
        f"{len(results)} checks: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped",
        file=out,
    )
