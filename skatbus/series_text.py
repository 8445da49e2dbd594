"""What a tournament of many entrants adds to the printed results: the series and the crosstable.

The overall standings are printed as for any tournament (``skatbus.tournament.format_standings``);
after them come each series' leaders, the seating's balance and the crosstable: one row per
entrant in the order of the standings, one column per entrant numbered by that rank, and in each
cell the tables the two shared as ``ahead-behind`` (how often the row's entrant finished above and
below the column's; ``.`` where they never sat together). Every line fits 80 columns: long lines
are wrapped, long names shortened, and a crosstable of more entrants than fit across comes in
blocks of columns.
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.seating import Balance
from protocol.tournament import SKAT, ranked_by_places

from .standings_text import WIDTH, shorten, wrapped

LEADERS = 4
"""Entrants shown per series."""

CROSS_NAME = 16
"""The widest a name gets in the crosstable (a longer one is shortened in the middle)."""

NBSP = "\N{NO-BREAK SPACE}"
"""Joins the words that must stay on one line when a line is wrapped."""


def format_series(results: dict[str, Any], width: int = WIDTH) -> str:
    """The series, the seating's balance and the crosstable, as lines of text of at most
    ``width`` characters (empty for a tournament of one seat set)."""
    if "series" not in results:
        return ""
    by_places = ranked_by_places(str(results.get("game") or SKAT))
    lines: list[str] = []
    for series in results["series"]:
        shown = []
        for rank, s in enumerate(series["standings"][:LEADERS], 1):
            figure = f"{s['per_table']:.2f}" if by_places else f"{s['seeger_fabian']:+d}"
            shown.append(f"{rank}. {s['player']} {figure}".replace(" ", NBSP))
        more = len(series["standings"]) - LEADERS
        head = f"Series {series['series']}: "
        text = "  ".join(shown) + (f"  (+{more} more)" if more > 0 else "")
        lines.extend(line.replace(NBSP, " ") for line in wrapped(text, width, " " * len(head), head))
    balance = results.get("schedule", {}).get("balance")
    if balance:
        lines.extend(wrapped(_balance_line(balance), width, first="Seating: "))
    for series, reason in results.get("schedule", {}).get("redrawn", {}).items():
        lines.extend(wrapped(reason, width, first=f"Series {series} was drawn when due: "))
    lines.append("")
    lines.extend(_crosstable_lines(results, width))
    return "\n".join(lines)


def _balance_line(balance: dict[str, Any]) -> str:
    """The seating's balance as results.json holds it, in the words the start of the run used
    (``protocol.seating.Balance.describe``: one wording, in one place)."""
    return msgspec.convert(balance, Balance).describe()


def _crosstable_lines(results: dict[str, Any], width: int = WIDTH) -> list[str]:
    """The crosstable under a line saying how to read it; with more entrants than ``width``
    has room for, in blocks of columns (each block all the rows, columns numbered on)."""
    order = [s["player"] for s in results["standings"]]
    cross = results.get("crosstable", {})
    cells: list[list[str]] = []
    for a in order:
        met = []
        for b in order:
            r = cross.get(a, {}).get(b)
            met.append("" if a == b else "." if r is None else f"{r['ahead']}-{r['behind']}")
        cells.append(met)
    cell = max([len(str(len(order))), *(len(c) for row in cells for c in row)])
    rank = max(2, len(str(len(order))))
    name = min(CROSS_NAME, max([0, *(len(p) for p in order)]))
    lead = rank + 2 + name
    per_block = max(1, (width - lead) // (2 + cell))
    lines = ["Crosstable (tables ahead-behind the column's entrant; . never met):"]
    for start in range(0, len(order), per_block):
        numbers = range(start, min(start + per_block, len(order)))
        lines.append((" " * lead + "".join(f"  {n + 1:>{cell}}" for n in numbers)).rstrip())
        for i, a in enumerate(order):
            row = f"{i + 1:>{rank}}  {shorten(a, name):<{name}}" + "".join(f"  {cells[i][n]:>{cell}}" for n in numbers)
            lines.append(row.rstrip())
    return lines
