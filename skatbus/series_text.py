"""What a tournament of many entrants adds to the printed results: the series and the crosstable.

The overall standings are printed as for any tournament (``skatbus.tournament.format_standings``);
after them come each series' leaders, the seating's balance and the crosstable: one row per
entrant in the order of the standings, one column per entrant numbered by that rank, and in each
cell the tables the two shared as ``ahead-behind`` (how often the row's entrant finished above and
below the column's; ``.`` where they never sat together).
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.seating import Balance
from protocol.tournament import SKAT, ranked_by_places

LEADERS = 4
"""Entrants shown per series."""


def format_series(results: dict[str, Any]) -> str:
    """The series, the seating's balance and the crosstable, as lines of text (empty for a
    tournament of one seat set)."""
    if "series" not in results:
        return ""
    by_places = ranked_by_places(str(results.get("game") or SKAT))
    lines = []
    for series in results["series"]:
        shown = []
        for rank, s in enumerate(series["standings"][:LEADERS], 1):
            figure = f"{s['per_table']:.2f}" if by_places else f"{s['seeger_fabian']:+d}"
            shown.append(f"{rank}. {s['player']} {figure}")
        more = len(series["standings"]) - LEADERS
        lines.append(f"Series {series['series']}: " + "  ".join(shown) + (f"  (+{more} more)" if more > 0 else ""))
    balance = results.get("schedule", {}).get("balance")
    if balance:
        lines.append(f"Seating: {_balance_line(balance)}")
    for series, reason in results.get("schedule", {}).get("redrawn", {}).items():
        lines.append(f"Series {series} was drawn when due: {reason}")
    lines.append("")
    lines.extend(_crosstable_lines(results))
    return "\n".join(lines)


def _balance_line(balance: dict[str, Any]) -> str:
    """The seating's balance as results.json holds it, in the words the start of the run used
    (``protocol.seating.Balance.describe``: one wording, in one place)."""
    return msgspec.convert(balance, Balance).describe()


def _crosstable_lines(results: dict[str, Any]) -> list[str]:
    order = [s["player"] for s in results["standings"]]
    cross = results.get("crosstable", {})
    width = max(len(p) for p in order) if order else 6
    head = f"{'':>2}  {'crosstable (won-lost)':<{width}} " + " ".join(f"{n:>4}" for n in range(1, len(order) + 1))
    lines = [head]
    for rank, a in enumerate(order, 1):
        cells = []
        for b in order:
            r = cross.get(a, {}).get(b)
            if a == b:
                cells.append(f"{'':>4}")
            elif r is None:
                cells.append(f"{'.':>4}")
            else:
                cells.append(f"{r['ahead']}-{r['behind']:<1}".rjust(4))
        lines.append(f"{rank:>2}  {a:<{width}} " + " ".join(cells))
    return lines
