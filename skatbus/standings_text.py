"""The standings as a terminal shows them: every line at most 80 columns, every abbreviation
of the header spelled out below the table.

The printed end of ``skat tournament``, ``skat run`` and ``skat local`` is read in a terminal
of 80 columns as often as in a wide one; a line that wraps there breaks every column after it.
So the table's figures get the room they need (measured, not guessed), the player column what
is left, and a name longer than that is shortened in the middle (``stepping-…dom-2``: the end
of a name is what tells ``random-2`` from ``random-3``); the full names are in results.json and
standings.csv. What does not fit a row (the games a player declared, how place points are made,
the warnings) follows the table, wrapped.

The games by type are listed in Skat order (grand, the suits, the nulls, Ramsch:
``protocol.skat.games.skat_order``), as everywhere else in the project.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.skat.games import skat_order
from protocol.tournament import PLACE_POINTS, SKAT, ranked_by_places

WIDTH = 80
"""The widest line printed: a terminal's usual width."""

NAME_MIN = 8
"""The narrowest the player column gets, however many figures a row has."""

HELP_LEGEND = (
    "The standings at the end: SF is Seeger-Fabian points (the ranking), SF/deal Seeger-Fabian points per deal "
    "with half its 95 % interval, won/decl the games won of those declared, ramsch the Ramsch deals lost of those "
    "played, passed the deals passed in, time-outs the turns missed; Thirty-one: place pts/table, place points per "
    "table. The progress line shows the leaders so far by the same figures."
)
"""What ``skat run --help`` and ``skat tournament --help`` say of the abbreviations."""


@dataclass
class Column:
    """One column of a table: its header and its cells, right-aligned unless ``left``."""

    header: str
    cells: list[str]
    left: bool = False

    @property
    def width(self) -> int:
        return max([len(self.header), *(len(c) for c in self.cells)])

    def cell(self, i: int) -> str:
        text = self.cells[i] if i < len(self.cells) else ""
        return f"{text:<{self.width}}" if self.left else f"{text:>{self.width}}"

    def head(self) -> str:
        return f"{self.header:<{self.width}}" if self.left else f"{self.header:>{self.width}}"


def shorten(name: str, width: int) -> str:
    """``name`` in at most ``width`` characters: cut in the middle, keeping its end."""
    if len(name) <= width:
        return name
    if width <= 1:
        return name[:width]
    tail = (width - 1) // 2
    return name[: width - 1 - tail] + "…" + (name[-tail:] if tail else "")


def table(names: Sequence[str], columns: Sequence[Column], width: int = WIDTH) -> tuple[list[str], int]:
    """Ranked rows (``#``, the player, ``columns``) of at most ``width`` characters (as long as
    the figures themselves fit), and the width the player column got."""
    rank_width = max(2, len(str(len(names))))
    figures = sum(1 + c.width for c in columns)
    room = width - rank_width - 2 - figures
    name_width = max(NAME_MIN, min(room, max([len("player"), *(len(n) for n in names)])))
    lines = [(f"{'#':>{rank_width}}  {'player':<{name_width}}" + "".join(" " + c.head() for c in columns)).rstrip()]
    for i, name in enumerate(names):
        row = f"{i + 1:>{rank_width}}  {shorten(name, name_width):<{name_width}}"
        lines.append((row + "".join(" " + c.cell(i) for c in columns)).rstrip())
    return lines, name_width


def wrapped(text: str, width: int = WIDTH, indent: str = "  ", first: str = "") -> list[str]:
    """``text`` as lines of at most ``width`` (continuations indented), words kept whole."""
    lines = textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False)
    return lines or [first.rstrip()]


def _interval(means: Sequence[str], halves: Sequence[str | None]) -> list[str]:
    """``mean ± half`` cells with the means and the ``±`` signs aligned."""
    mean_width = max((len(m) for m in means), default=0)
    half_width = max((len(h) for h in halves if h is not None), default=0)
    return [
        f"{m:>{mean_width}}" + (f" ± {h:>{half_width}}" if h is not None else " " * (half_width + 3) * bool(half_width))
        for m, h in zip(means, halves, strict=True)
    ]


def _name(s: dict[str, Any]) -> str:
    return f"{s['player']} (forfeit)" if s.get("forfeit") else str(s["player"])


def _warnings(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for warning in results.get("warnings", []):
        lines.extend(wrapped(str(warning), first="warning: "))
    return lines


def format_standings(results: dict[str, Any]) -> str:
    """The standings of a Skat tournament (a game ranked by places: ``format_place_standings``):
    Seeger-Fabian points, per deal with the half-width of their 95 % interval, deals, games
    won of those declared, the Ramsch deals lost of those played and the deals passed in (where
    there were any), time-outs (where there were any); ``(forfeit)`` after an entrant that was
    withdrawn (it ranks below every entrant that finished). Then what the abbreviations mean,
    the games each player declared by type, and the warnings."""
    if ranked_by_places(str(results.get("game") or SKAT)):
        return format_place_standings(results)
    rows = results["standings"]
    ramsch_rule = bool(((results.get("config") or {}).get("rules") or {}).get("ramsch"))
    columns = [
        Column("SF", [f"{s['seeger_fabian']:+d}" for s in rows]),
        Column(
            "SF/deal (95 %)",
            _interval(
                [f"{s['per_deal']:+.1f}" for s in rows],
                [None if s["ci95"] is None else f"{s['ci95']:.1f}" for s in rows],
            ),
        ),
        Column("deals", [str(s["deals"]) for s in rows]),
        Column("won/decl", [f"{s['won']}/{s['declared']}" for s in rows]),
    ]
    legend = [
        "SF: Seeger-Fabian points (the ranking)",
        "SF/deal: per deal, ± half its 95 % interval",
        "won/decl: games won of those declared",
    ]
    if ramsch_rule or any(s.get("ramsch") for s in rows):
        columns.append(Column("ramsch", [f"{s.get('ramsch_lost', 0)}/{s.get('ramsch', 0)}" for s in rows]))
        legend.append("ramsch: Ramsch deals lost of those played")
    if any(s.get("passed_in") for s in rows):
        columns.append(Column("passed", [str(s.get("passed_in", 0)) for s in rows]))
        legend.append("passed: deals passed in (everybody passed, nobody played)")
    if any(s.get("timeouts") for s in rows):
        columns.append(Column("time-outs", [str(s.get("timeouts", 0)) for s in rows]))
        legend.append("time-outs: turns missed (the default move was played)")
    lines, name_width = table([_name(s) for s in rows], columns)
    lines.extend(wrapped("(" + "; ".join(legend) + ".)", indent=" "))
    declared = [(i, s) for i, s in enumerate(rows, 1) if s.get("by_game")]
    if declared:
        lines.append("Games declared, won/played:")
        rank_width = max(2, len(str(len(rows))))
        lead = rank_width + 2 + name_width + 2
        for rank, s in declared:
            games = ", ".join(  # no-break spaces: a game's name and figures stay on one line
                f"{g} {v['won']}/{v['played']}".replace(" ", "\N{NO-BREAK SPACE}")
                for g, v in sorted(s["by_game"].items(), key=lambda kv: skat_order(kv[0]))
            )
            first = f"{rank:>{rank_width}}  {shorten(_name(s), name_width):<{name_width}}  "
            lines.extend(
                line.replace("\N{NO-BREAK SPACE}", " ") for line in wrapped(games, first=first, indent=" " * lead)
            )
    lines.extend(_warnings(results))
    return "\n".join(lines)


def _ordinal(place: int) -> str:
    return f"{place}{'th' if 10 <= place % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(place % 10, 'th')}"


def format_place_standings(results: dict[str, Any]) -> str:
    """The standings of a game ranked by places: place points per table with the half-width
    of their 95 % interval, tables, wins, mean coins at the end, deals dealt in, time-outs
    (where there were any) and how often each place was taken; then what the abbreviations
    mean, how place points are made, and the warnings."""
    rows = results["standings"]
    last = max((int(p) for s in rows for p in s["places"]), default=1)
    columns = [
        Column(
            "place pts/table",
            _interval(
                [f"{s['per_table']:.2f}" for s in rows],
                [None if s["ci95"] is None else f"{s['ci95']:.2f}" for s in rows],
            ),
        ),
        Column("tables", [str(s["tables"]) for s in rows]),
        Column("wins", [str(s["wins"]) for s in rows]),
        Column("coins", [f"{s['mean_coins']:.2f}" for s in rows]),
        Column("deals", [str(s["deals"]) for s in rows]),
    ]
    legend = [
        "place pts/table: place points per table, ± half their 95 % interval",
        "coins: the mean coins left at the end",
    ]
    if any(s.get("timeouts") for s in rows):
        columns.append(Column("time-outs", [str(s.get("timeouts", 0)) for s in rows]))
        legend.append("time-outs: turns missed (the default move was played)")
    places = ["/".join(str(s["places"].get(str(p), s["places"].get(p, 0))) for p in range(1, last + 1)) for s in rows]
    columns.append(Column("places", places, left=True))
    order = "/".join(_ordinal(p) for p in range(1, last + 1))
    legend.append(f"places: the tables it finished {order}")
    lines, _ = table([_name(s) for s in rows], columns)
    lines.extend(wrapped(f"({results.get('scoring') or PLACE_POINTS})", indent=" "))
    lines.extend(wrapped("(" + "; ".join(legend) + ".)", indent=" "))
    lines.extend(_warnings(results))
    return "\n".join(lines)


# --- the other lines of a run's end: the match's verdict, the tournament's files -----------------

SPELLED = {"SF/deal": "Seeger-Fabian points per deal"}
"""The abbreviated units a match reports in, in words (as the standings' legend spells them)."""


def spelled_out(line: str, unit: str, define: bool = False) -> str:
    """``line`` with ``unit`` in words; ``define``: once, followed by the abbreviation, which the
    lines after it (a match's progress) keep using."""
    words = SPELLED.get(unit)
    if words is None:
        return line
    return line.replace(unit, f"{words} ({unit})", 1) if define else line.replace(unit, words)


def fitted(line: str, width: int = WIDTH) -> list[str]:
    """A line of prose as lines of at most ``width`` (continuations indented by two); one that
    fits is kept as it is, its own spacing included."""
    return [line] if len(line) <= width else wrapped(line, width)


def command_lines(command: str, indent: str, first: str = "", width: int = WIDTH) -> list[str]:
    """A shell command after ``first`` (a label, or ``indent``), in lines of at most ``width``:
    broken between words with `` \\`` and continued two further in, so that every line still
    pastes into a shell. A word longer than a line is left whole."""
    lines, line, at_start = [], first or indent, True
    for word in command.split():
        if not at_start and len(line) + 1 + len(word) + 2 > width:
            lines.append(line + " \\")
            line, at_start = indent + "  ", True
        line += word if at_start else " " + word
        at_start = False
    return [*lines, line]


def _labelled(label: str, value: str, pad: int) -> list[str]:
    """``Label:  value``, the value after ``pad`` columns, wrapped under itself."""
    return wrapped(value, indent=" " * pad, first=f"{label:<{pad}}")


def format_run_files(results: dict[str, Any], out_dir: str, next_steps: bool) -> str:
    """Where a tournament's results went (and, with ``next_steps``, what to do with them), every
    line at most ``WIDTH``: paths and keys on lines of their own, commands broken as a shell
    reads them."""
    from pathlib import Path

    files = results["files"]
    run_dir = str(Path(files["results"]).parent)
    lines = [
        *_labelled("Results:", files["results"], 9),
        " " * 9 + files["standings_csv"],
        *_labelled("Events:", f"{files['archive']} (every table's log, one event per line)", 9),
    ]
    if "ratings" in files:
        lines += _labelled("Ratings:", f"{files['ratings']} (across every tournament here)", 9)
        lines += command_lines(f"skat ratings --runs {out_dir}", " " * 9, first=" " * 9 + "see them: ")
    if "fairness" in results:
        fair = results["fairness"]
        nonces = len(fair["nonces"])
        committed = f"(revealed now; committed as {fair['commitment'][:16]}..., {nonces} nonce{'s' * (nonces != 1)})"
        lines += _labelled("Seed:", f"{fair['seed']} {committed}", 9)
    if "signed_by" in results:
        lines += _labelled("Signed:", f"by {results['signed_by']}", 9)
        lines += command_lines(f"skat verify {run_dir}", " " * 9, first=" " * 9 + "check it all: ")
    if next_steps:
        skat = ".venv/bin/skat"
        game = str(results.get("game") or SKAT)
        steps: list[tuple[str, str, str]] = [
            (
                "replay a table",
                f"{skat} replay {files['archive']} --table 1",
                "(or --summary, --verify, --html deal.html)",
            ),
            ("a report page", f"{skat} report {run_dir}", ""),
        ]
        if game == SKAT:
            steps.append(
                ("plug in your bot", f"{skat} check-bot ID", "docs/bots.md, docs/protocol.md, examples/node-bot")
            )
            steps.append(("a bigger one", f"{skat} tournament --groups 10 --rounds 12", ""))
        else:
            steps.append(("a bigger one", f"{skat} tournament --game {game} --groups 10 --players 4", ""))
        lines.append("")
        for i, (what, command, note) in enumerate(steps):
            label = f"{'Next:' if i == 0 else '':<6}{what:<18}"
            if len(label) + len(command) <= WIDTH:
                lines.append(label + command)
            else:
                lines.append(label.rstrip())
                lines += command_lines(command, " " * 8)
            if note:
                lines += wrapped(note, indent=" " * 8, first=" " * 8)
    return "\n".join(lines)
