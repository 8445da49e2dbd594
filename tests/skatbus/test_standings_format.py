"""The printed standings (issue 25's smaller items): games by type in Skat order, the Ramsch
and passed-in deals counted (printed, in results.json and in standings.csv), every line of
the printed results within 80 columns, long names and many entrants included, and the
abbreviations spelled out.

The runs are real ones: tables played through the pure engine and written by the runner's own
``write_results`` (``localrun``, ``fair_runs``), so the figures checked are the ones a
tournament prints.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.events import DealScored, Event, TableOpened
from protocol.skat.games import SKAT_ORDER, skat_order
from protocol.skat.rules import Rules
from protocol.tournament import (
    ADDED_STANDING_FIELDS,
    TableFinished,
    TournamentConfig,
    TournamentCreated,
    TournamentState,
    schedule,
)
from skatbus.bots import make_bot
from skatbus.local import play_table, run_local_tournament
from skatbus.replay import read_archive
from skatbus.report import CATEGORIES
from skatbus.series_text import format_series
from skatbus.signing import load_or_create_key, sign_run
from skatbus.standings_text import shorten
from skatbus.tournament import Progress, format_standings, write_results
from skatbus.verify import verify_run

from .fair_runs import build, skat_many, thirty_one_many
from .localrun import make_run

WIDTH = 80

LONG = [
    "a-remote-bot-with-a-really-rather-long-name-1",
    "a-remote-bot-with-a-really-rather-long-name-2",
    "stepping-random-2",
    "heuristic",
]
"""Entrant names as remote players pick them (up to 64 characters), differing at the end."""


def played_run(out: Path, tid: str, rules: Rules, bots: dict[str, str], groups: int = 2) -> Path:
    """A duplicate tournament of ``bots`` (entrant -> built-in bot) through the pure engine,
    written by the runner's ``write_results``; returns its folder."""
    config = TournamentConfig(id=tid, entrants=list(bots), bots=bots, rules=rules, groups=groups, seed="format")
    state = TournamentState()
    specs = schedule(config)
    state.apply(TournamentCreated(config=config, tables=specs))
    logs: dict[str, list[Event]] = {}
    for spec in specs:
        run = play_table(
            spec.table, spec.players, [make_bot(bots[p], f"format/{p}") for p in spec.players], rules, spec.seed
        )
        logs[spec.table] = run.log
        s = run.state
        state.apply(TableFinished(table=spec.table, deals=len(s.sheet), totals=s.totals, seeger_fabian=s.sf_totals))
    write_results(config, state, logs, out / tid)
    return out / tid


def results_of(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "results.json").read_text()))


def printed(results: dict[str, Any]) -> str:
    """What ``skat tournament`` prints at the end about the standings (tournament_cli)."""
    text = format_standings(results)
    if "series" in results:
        text += "\n\n" + format_series(results)
    return text


def too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


def deal_kinds(folder: Path) -> dict[str, dict[str, int]]:
    """Per player, from the archive itself: Ramsch deals, those it lost, their list points, and
    the passed-in deals at its tables."""
    out: dict[str, dict[str, int]] = {}
    for log in read_archive(folder / "archive.jsonl").values():
        players = next(e.players for e in log.events if isinstance(e, TableOpened))
        for event in log.events:
            if not isinstance(event, DealScored):
                continue
            r = event.result
            for seat, p in enumerate(players):
                mine = out.setdefault(p, {"ramsch": 0, "ramsch_lost": 0, "ramsch_points": 0, "passed_in": 0})
                if r.kind == "ramsch":
                    mine["ramsch"] += 1
                    mine["ramsch_lost"] += r.scores[seat] < 0
                    mine["ramsch_points"] += r.scores[seat]
                elif r.kind == "passed":
                    mine["passed_in"] += 1
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    key = load_or_create_key(out / "signing.nk")
    stepping = {"s1": "stepping-random", "s2": "stepping-random", "s3": "stepping-random"}
    many = [*LONG, *(f"entrant-number-{i}" for i in range(5, 17))]
    long_many = msgspec.structs.replace(
        skat_many(),
        id="fair-long",
        entrants=many,
        bots={e: ("heuristic" if i % 2 else "stepping-random") for i, e in enumerate(many)},
    )
    return {
        "skat": make_run(out, "t-skat", every=7),
        "ramsch": played_run(out, "t-ramsch", Rules(rounds=8, seeger_fabian=True, ramsch=True), stepping),
        "passed": played_run(out, "t-passed", Rules(rounds=8, seeger_fabian=True), stepping),
        "long": played_run(
            out, "t-long", Rules(rounds=2, seeger_fabian=True), dict(zip(LONG[:3], ["random", "heuristic", "random"]))
        ),
        "many": build(out, skat_many(), key).folder,
        "many-long": build(out, long_many, key).folder,
        "thirty-one": build(out, thirty_one_many(), key, slow="p2").folder,
        "thirty-one-long": build(
            out,
            msgspec.structs.replace(
                thirty_one_many(),
                id="fair-t31-long",
                entrants=[f"{n}-{i}" for i, n in enumerate(["a-thirty-one-bot-with-a-long-name"] * 6)],
                bots={f"a-thirty-one-bot-with-a-long-name-{i}": ("heuristic" if i % 2 else "random") for i in range(6)},
            ),
            key,
        ).folder,
    }


# --- Skat order ------------------------------------------------------------------------------


def test_skat_order_is_grand_the_suits_the_nulls_then_ramsch() -> None:
    names = ["null ouvert", "diamonds", "ramsch", "defending", "clubs", "null", "grand", "hearts", "spades"]
    names += ["null hand ouvert", "null hand"]
    assert sorted(names, key=skat_order) == [
        "grand", "clubs", "spades", "hearts", "diamonds",
        "null", "null hand", "null ouvert", "null hand ouvert",
        "ramsch", "defending",
    ]  # fmt: skip
    assert SKAT_ORDER[:6] == ("grand", "clubs", "spades", "hearts", "diamonds", "null")
    assert list(CATEGORIES) == sorted(CATEGORIES, key=skat_order)  # the report's by-game table too


def test_the_standings_list_the_games_in_skat_order(runs: dict[str, Path]) -> None:
    results = results_of(runs["skat"])
    played = [list(s["by_game"]) for s in results["standings"]]
    assert any(len(games) > 3 for games in played)  # enough kinds for an order to show
    for games in played:
        assert games == sorted(games, key=skat_order), games  # results.json
    block = format_standings(results).split("Games declared, won/played:\n", 1)[1]
    per_player: dict[str, str] = {}
    for line in block.splitlines():
        if line[:2].strip():  # a rank: a player's first line
            rank = int(line.split()[0])
            player = results["standings"][rank - 1]["player"]
            per_player[player] = line.split(player, 1)[1]
        elif line.startswith(" "):  # its continuation
            per_player[player] += " " + line.strip()
    for s in results["standings"]:
        shown = [item.split()[0] for item in per_player[s["player"]].split(",")]
        assert shown == list(s["by_game"]), shown


def test_an_old_results_json_in_alphabetical_order_is_printed_in_skat_order() -> None:
    row = {"player": "ann", "seeger_fabian": 10, "per_deal": 1.0, "ci95": None, "deals": 10, "declared": 3, "won": 2}
    row["by_game"] = {g: {"played": 1, "won": 1} for g in ("clubs", "grand", "null")}
    text = format_standings({"standings": [row]})
    assert "grand 1/1, clubs 1/1, null 1/1" in text


# --- Ramsch and passed-in deals --------------------------------------------------------------


@pytest.mark.parametrize("name", ["ramsch", "passed"])
def test_ramsch_and_passed_in_deals_are_counted_everywhere(runs: dict[str, Path], name: str) -> None:
    folder = runs[name]
    results = results_of(folder)
    want = deal_kinds(folder)
    assert sum(w[name if name == "ramsch" else "passed_in"] for w in want.values()) > 0  # the run has some
    for s in results["standings"]:
        assert {k: s[k] for k in ADDED_STANDING_FIELDS} == want[s["player"]], s["player"]
    with open(folder / "standings.csv", newline="") as f:
        rows = {r["player"]: r for r in csv.DictReader(f)}
    for player, counts in want.items():
        assert {k: int(rows[player][k]) for k in ADDED_STANDING_FIELDS} == counts
    text = format_standings(results)
    header = text.splitlines()[0].split()
    column = "ramsch" if name == "ramsch" else "passed"
    assert column in header
    for line, s in zip(text.splitlines()[1:], results["standings"], strict=False):
        figure = f"{s['ramsch_lost']}/{s['ramsch']}" if name == "ramsch" else str(s["passed_in"])
        assert line.split()[header.index(column)] == figure, line  # "SF/deal (95 %)" and "+1.0 ± 4.5": 3 each
    assert f"{column}: " in text  # and said what it is


def test_a_run_written_before_the_counts_still_verifies(runs: dict[str, Path], tmp_path: Path) -> None:
    """An old results.json has none of the new fields: ``skat verify`` reads it as written;
    a count that is there and wrong is still named."""
    import shutil

    folder = tmp_path / "old"
    shutil.copytree(runs["many"], folder)
    results = results_of(folder)
    for rows in [results["standings"], *(s["standings"] for s in results["series"])]:
        for s in rows:
            for k in ADDED_STANDING_FIELDS:
                del s[k]
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (folder / "signature.json").unlink()
    sign_run(folder, load_or_create_key(runs["many"].parent / "signing.nk"))  # the run's own key
    assert verify_run(folder).problems == []
    results["standings"][0]["passed_in"] = 7
    (folder / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (folder / "signature.json").unlink()
    sign_run(folder, load_or_create_key(runs["many"].parent / "signing.nk"))  # the run's own key
    problems = verify_run(folder).problems
    assert any("passed_in 7 but the archive gives 0" in p for p in problems), problems


# --- 80 columns ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["skat", "ramsch", "passed", "long", "many", "many-long", "thirty-one", "thirty-one-long"]
)
def test_every_printed_line_fits_80_columns(runs: dict[str, Path], name: str) -> None:
    text = printed(results_of(runs[name]))
    assert too_wide(text) == []
    assert len(text.splitlines()) > 3


def test_long_names_are_shortened_in_the_middle_and_stay_apart(runs: dict[str, Path]) -> None:
    results = results_of(runs["many-long"])
    text = printed(results)
    shown = [line.split()[1] for line in text.splitlines()[1 : 1 + len(results["standings"])]]
    assert len(set(shown)) == len(shown)  # ...-1 and ...-2 are still told apart
    assert any("…" in name for name in shown)
    assert shorten("a-remote-bot-with-a-really-rather-long-name-1", 15) == "a-remot…-name-1"
    numbered = [line.split() for line in text.split("Crosstable", 1)[1].splitlines()[1:]]
    blocks = [cells for cells in numbered if cells and all(c.isdigit() for c in cells)]
    assert len(blocks) == 2 and blocks[1][0] == str(len(blocks[0]) + 1)  # 16 entrants: two blocks of columns


def test_skat_local_prints_within_80_columns() -> None:
    out = io.StringIO()
    run_local_tournament(tables=4, rounds=8, seed="eighty", out=out)
    text = out.getvalue()
    assert too_wide(text) == []
    assert "ouvert" in text or "schneider" in text or "schwarz" in text or "hand" in text  # long games were played


# --- abbreviations spelled out ---------------------------------------------------------------


def test_the_standings_spell_out_their_abbreviations(runs: dict[str, Path]) -> None:
    text = format_standings(results_of(runs["skat"]))
    for words in ("SF: Seeger-Fabian points", "SF/deal: per deal", "won/decl: games won of those declared"):
        assert words in " ".join(text.split()), words
    t31 = format_standings(results_of(runs["thirty-one"]))
    assert "place pts/table: place points per table" in " ".join(t31.split())


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("out", [io.StringIO(), _Tty()], ids=["piped", "terminal"])
def test_the_progress_says_once_what_its_leaders_figures_are(out: io.StringIO) -> None:
    progress = Progress(100, out)
    progress.update(1)
    progress.update(10, "heuristic +400  random -300")
    progress.update(50, "heuristic +900  random -700")
    text = out.getvalue().replace("\r", "\n")
    legends = [line for line in text.splitlines() if line.strip().startswith(f"({Progress.leader_label}: ")]
    assert len(legends) == 1 and "Seeger-Fabian" in legends[0]
    before = text.split(legends[0])[0]
    assert f"{Progress.leader_label}: heuristic" not in before  # said before the first line that shows it
