"""``skat report`` of Thirty-one tables: an archive by itself, a Thirty-one tournament's result
folder, and an archive of both games.

The tables are whole games played through the engine (``thirty_one_tables``); the tournament
is written by the runner's own ``write_results``. Every number the page shows is checked
against what the engine's fold gives (``protocol.registry.fold``) or what the events say,
counted here: places and place points (players at the table minus place, as the tournament
scores them), knocks and whether they cost the knocker, 31s, throw-downs, hands shown and their
values, lives, eliminations, coins, time-outs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import registry
from protocol.events import Event, PlayerTimedOut
from protocol.thirty_one import hand_value, points
from protocol.thirty_one.events import T31DealEnded, T31DealScored, T31Dealt, T31Knocked, T31Threw
from protocol.thirty_one.rules import ThirtyOneRules
from protocol.tournament import TournamentConfig, TournamentCreated, TournamentState, schedule, table_finished
from skatbus.cli import main as cli_main
from skatbus.replay import read_archive
from skatbus.tournament import write_results

from .thirty_one_tables import example_12, play, tables, write_archive


@pytest.fixture(scope="module")
def logs() -> dict[str, list[Event]]:
    return tables()


@pytest.fixture(scope="module")
def archive_page(tmp_path_factory: pytest.TempPathFactory, logs: dict[str, list[Event]]) -> tuple[Path, str]:
    """``skat report archive.jsonl`` of the Thirty-one tables alone (no results.json)."""
    path = write_archive(tmp_path_factory.mktemp("t31") / "archive.jsonl", logs)
    assert cli_main(["report", str(path)]) == 0
    return path.parent, (path.parent / "report.html").read_text(encoding="utf-8")


def _section(page: str, section_id: str) -> str:
    return page.split(f'id="{section_id}"', 1)[1].split("</section>", 1)[0]


def _cells(row: str) -> list[str]:
    """A row's cells as text (tags dropped)."""
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]


def _rows(section: str) -> dict[str, list[str]]:
    return {p: _cells(row) for p, row in re.findall(r'<tr data-player="([^"]+)">(.*?)</tr>', section)}


def _expected_places(logs: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, Any]]:
    """Per player over the closed tables, from the fold: place points (players - place), wins,
    places, coins."""
    out: dict[str, dict[str, Any]] = {}
    for events in logs.values():
        state = registry.fold(events)
        assert state.closed
        n = len(state.players)
        for seat, name in enumerate(state.players):
            row = out.setdefault(name, {"points": 0, "tables": 0, "wins": 0, "places": [], "coins": 0})
            place = state.places()[seat]
            row["points"] += n - place
            row["tables"] += 1
            row["wins"] += place == 1
            row["places"].append(place)
            row["coins"] += state.coins[seat]
    return out


def _expected_stats(logs: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, float]]:
    """Per player, counted from the events."""
    out: dict[str, dict[str, float]] = {}
    for events in logs.values():
        players = list(events[0].players)
        rules = msgspec.convert(events[0].rules, ThirtyOneRules)
        zero = dict.fromkeys(
            ("deals", "knocks", "knocks_lost", "31s", "throws", "throws_lost", "shown", "shown_points", "lives", "out"),
            0.0,
        )
        for p in players:
            out.setdefault(p, dict(zero))
        knocker = thrower = -1
        for e in events:
            if isinstance(e, T31Dealt):
                knocker = thrower = -1
                for seat in e.order:
                    out[players[seat]]["deals"] += 1
            elif isinstance(e, T31Knocked):
                knocker = e.seat
                out[players[e.seat]]["knocks"] += 1
            elif isinstance(e, T31Threw):
                thrower = e.seat
                out[players[e.seat]]["throws"] += 1
            elif isinstance(e, T31DealEnded):
                for seat, hand in enumerate(e.shown):
                    if hand and e.end == "thirty_one":
                        out[players[seat]]["31s"] += 1
                    elif hand:
                        out[players[seat]]["shown"] += 1
                        out[players[seat]]["shown_points"] += points(hand_value(hand, rules))
            elif isinstance(e, T31DealScored):
                for seat, lost in enumerate(e.lives):
                    out[players[seat]]["lives"] += lost
                for seat in e.eliminated:
                    out[players[seat]]["out"] += 1
                if knocker >= 0 and e.lives[knocker]:
                    out[players[knocker]]["knocks_lost"] += 1
                if thrower >= 0 and e.lives[thrower]:
                    out[players[thrower]]["throws_lost"] += 1
    return out


def test_example_12_reported(tmp_path: Path) -> None:
    """The rules page's worked example 12, "a whole game" (A, B, C; 3 coins each):

    | deal | dealer | what happens | lives lost | coins A B C | kitty |
    | 1 | C | A knocks on his first turn; shown A 25, B 17, C 22 | B 1 | 3 2 3 | 1 |
    | 2 | A | C makes 31 | A 1, B 1 | 2 1 3 | 3 |
    | 3 | B | B knocks; shown A 23, B 20, C 28: B alone lowest | B 2: ..., eliminated (3rd) | 2 0 3 | 4 |
    | 4 | C | C knocks; shown A 14, C 26 | A 1 | 1 - 3 | 5 |
    | 5 | A | A knocks; shown A 27, C 27: the knocker tied | C 1 | 1 - 2 | 6 |
    | 6 | C | A knocks; shown A 19, C 24: A alone lowest | A 2: ..., eliminated (2nd) | 0 - 2 | 7 |

    "C wins and takes the kitty: 2 + 7 = 9 coins". Place points at a table of three: 3 - place."""
    path = write_archive(tmp_path / "archive.jsonl", {"golden": example_12()})
    assert cli_main(["report", str(path)]) == 0
    page = (tmp_path / "report.html").read_text()
    standings = _rows(_section(page, "t31-standings"))
    assert list(standings) == ["C", "A", "B"]
    assert [standings[p][2] for p in "CAB"] == ["2", "1", "0"]
    assert [standings[p][6] for p in "CAB"] == ["1", "0", "0"]
    assert [standings[p][9] for p in "CAB"] == ["9.00", "0.00", "0.00"]
    stats = _rows(_section(page, "t31-stats"))
    # deals dealt in; knocks (the knocker lost); 31s; hands shown and their mean; lives per deal; eliminated
    assert [stats[p][1] for p in "ABC"] == ["6", "3", "6"]
    assert [stats[p][2] for p in "ABC"] == ["1/3", "1/1", "0/1"]  # A lost in deal 6, B in deal 3
    assert [stats[p][3] for p in "ABC"] == ["0", "0", "1"]
    assert [stats[p][5] for p in "ABC"] == ["5", "2", "5"]
    means = [(25 + 23 + 14 + 27 + 19) / 5, (17 + 20) / 2, (22 + 28 + 26 + 27 + 24) / 5]
    assert [stats[p][6] for p in "ABC"] == [f"{m:.1f}" for m in means]
    per_deal = [(1 + 1 + 2) / 6, (1 + 1 + 2) / 3, 1 / 6]
    assert [stats[p][7] for p in "ABC"] == [f"{v:.2f}" for v in per_deal]
    assert [stats[p][8] for p in "ABC"] == ["1", "1", "0"]


def test_the_page_is_self_contained_and_parses(archive_page: tuple[Path, str]) -> None:
    _, page = archive_page
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and " src=" not in page

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.open: list[str] = []
            self.ids: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("section", "table", "tr", "details"):
                self.open.append(tag)
            self.ids += [v or "" for k, v in attrs if k == "id"]

        def handle_endtag(self, tag: str) -> None:
            if tag in ("section", "table", "tr", "details"):
                assert self.open.pop() == tag

    tags = Tags()
    tags.feed(page)
    assert not tags.open
    assert {"t31-standings", "t31-lives", "t31-stats", "time-outs", "t31-tables"} <= set(tags.ids)
    assert "standings" not in tags.ids and "games" not in tags.ids  # no Skat table, no Skat section


def test_standings_are_the_folds_places(archive_page: tuple[Path, str], logs: dict[str, list[Event]]) -> None:
    _, page = archive_page
    rows = _rows(_section(page, "t31-standings"))
    expected = _expected_places(logs)
    assert set(rows) == set(expected)
    per_table = []
    for player, cells in rows.items():
        e = expected[player]
        assert cells[2] == str(e["points"])
        assert cells[3].split(" ")[0] == f"{e['points'] / e['tables']:.2f}"
        assert cells[5] == str(e["tables"]) and cells[6] == str(e["wins"])
        assert cells[7] == f"{sum(e['places']) / len(e['places']):.2f}"
        assert cells[9] == f"{e['coins'] / e['tables']:.2f}"
        per_table.append(e["points"] / e["tables"])
    assert per_table == sorted(per_table, reverse=True)  # ranked by place points per table
    assert "computed from the tables' logs" in _section(page, "t31-standings")


def test_statistics_are_counted_from_the_events(archive_page: tuple[Path, str], logs: dict[str, list[Event]]) -> None:
    _, page = archive_page
    rows = _rows(_section(page, "t31-stats"))
    expected = _expected_stats(logs)
    assert set(rows) == set(expected)
    for player, cells in rows.items():
        e = expected[player]
        assert cells[1] == f"{e['deals']:g}"
        assert cells[2] == (f"{e['knocks_lost']:g}/{e['knocks']:g}" if e["knocks"] else "-")
        assert cells[3] == f"{e['31s']:g}"
        assert cells[4] == (f"{e['throws_lost']:g}/{e['throws']:g}" if e["throws"] else "-")
        assert cells[5] == f"{e['shown']:g}"
        mean = e["shown_points"] / e["shown"]
        assert cells[6] == (str(int(mean)) if mean.is_integer() else f"{mean:.1f}")
        per_deal = e["lives"] / e["deals"]
        assert cells[7] == (str(int(per_deal)) if per_deal.is_integer() else f"{per_deal:.2f}")
        assert cells[8] == f"{e['out']:g}"
    assert sum(e["throws"] for e in expected.values()) and sum(e["31s"] for e in expected.values())


def test_the_lives_chart_ends_at_each_players_lives(
    archive_page: tuple[Path, str], logs: dict[str, list[Event]]
) -> None:
    _, page = archive_page
    chart = page.split('<svg id="t31-running"', 1)[1].split("</svg>", 1)[0]
    lines = re.findall(r'<polyline class="series" data-label="([^"]+)" points="([^"]+)"', chart)
    deals = sum(isinstance(e, T31DealScored) for events in logs.values() for e in events)
    expected = _expected_stats(logs)
    assert sorted(p for p, _ in lines) == sorted(expected)
    for player, pts in lines:
        assert len(pts.split()) == deals + 1
        assert f"<title>{player}: {expected[player]['lives']:g}</title>" in chart
    assert chart.count('<line class="marker"') == len(logs)


def test_every_deal_of_every_table(archive_page: tuple[Path, str], logs: dict[str, list[Event]]) -> None:
    run, page = archive_page
    section = _section(page, "t31-tables")
    for table, events in logs.items():
        block = section.split(f'data-table="{table}"', 1)[1].split('<div class="table-block"', 1)[0]
        assert f'href="replay/{table}.html"' in block and (run / "replay" / f"{table}.html").is_file()
        state = registry.fold(events)
        players = state.players
        ranked = sorted(range(len(players)), key=lambda s: (state.places()[s], s))
        head = re.sub(r"<[^>]+>", "", block.split("<details>", 1)[0])
        assert (
            "places: " + ", ".join(f"{state.places()[s]} {players[s]} ({state.coins[s]} coins)" for s in ranked) in head
        )
        rows = re.findall(r"<tr><td>(?:<a [^>]*>)?\d+.*?</tr>", block)
        assert len(rows) == len(state.sheet)
        dealt = {e.deal: e.order for e in events if isinstance(e, T31Dealt)}
        for row, sheet in zip(rows, state.sheet, strict=True):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
            assert re.sub(r"<[^>]+>", "", cells[0]) == str(sheet.deal)
            assert cells[1] == players[sheet.dealer]
            for seat in range(len(players)):
                cell = cells[3 + seat]
                if seat not in dealt[sheet.deal]:
                    assert cell == "-"
                else:
                    assert re.sub(r"<[^>]+>", "", cell).split()[-1] == str(sheet.coins[seat])
                    assert (f"-{sheet.lives[seat]}" in cell) == bool(sheet.lives[seat])
            assert cells[3 + len(players)] == str(sheet.kitty)
            assert cells[4 + len(players)] == ", ".join(players[s] for s in sheet.eliminated)


def test_time_outs_are_counted_and_linked(archive_page: tuple[Path, str], logs: dict[str, list[Event]]) -> None:
    run, page = archive_page
    counted: dict[str, int] = {}
    for events in logs.values():
        for e in events:
            if isinstance(e, PlayerTimedOut):
                player = events[0].players[e.seat]  # type: ignore[attr-defined]
                counted[player] = counted.get(player, 0) + 1
    assert counted
    section = _section(page, "time-outs")
    for player, n in counted.items():
        assert re.search(rf"{player}</td><td class='num'>{n}</td>", section)
    links = re.findall(r'<a href="(replay/[^"#]+\.html)#deal=(\d+)&amp;step=(\d+)">', section)
    assert len(links) == sum(counted.values())
    for href, deal, step in links:
        events = logs[Path(href).stem]
        start = next(i for i, e in enumerate(events) if isinstance(e, T31Dealt) and e.deal == int(deal))
        assert isinstance(events[start + int(step)], PlayerTimedOut)  # the replay page's step is the time-out


def test_a_broken_table_is_said_and_left_out_of_the_standings(
    tmp_path: Path, logs: dict[str, list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = list(logs["t31-b"])
    k = next(i for i, e in enumerate(events) if isinstance(e, T31Knocked))
    del events[k]
    path = write_archive(tmp_path / "archive.jsonl", {"t31-a": logs["t31-a"], "t31-b": events})
    assert cli_main(["report", str(path)]) == 0
    page = (tmp_path / "report.html").read_text()
    assert f"the log breaks the rules at event {k}" in _section(page, "t31-tables")
    rows = _rows(_section(page, "t31-standings"))
    assert set(rows) == set(logs["t31-a"][0].players)  # type: ignore[attr-defined]
    assert all(cells[5] == "1" for cells in rows.values())


# --- a Thirty-one tournament's result folder ------------------------------------------------------


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A duplicate Thirty-one tournament of two groups, written by the runner's write_results."""
    config = TournamentConfig(
        id="t31-run",
        entrants=["ann", "bob", "cid"],
        game="thirty-one",
        game_rules={"coins": 2},
        groups=2,
        seed="t31run",
    )
    specs = schedule(config)
    state = TournamentState()
    state.apply(TournamentCreated(config=config, tables=specs))
    played: dict[str, list[Event]] = {}
    for spec in specs:
        log = play(spec.table, spec.players, config.table_rules(), spec.seed, knock=0.05, every=41)
        played[spec.table] = log
        state.apply(table_finished(log))
    out = tmp_path_factory.mktemp("runs") / config.id
    write_results(config, state, played, out)
    assert cli_main(["report", str(out)]) == 0
    return out


def test_a_tournament_folder_takes_its_recorded_standings(tournament: Path) -> None:
    results = json.loads((tournament / "results.json").read_text())
    page = (tournament / "report.html").read_text()
    section = _section(page, "t31-standings")
    rows = re.findall(r'<tr data-player="([^"]+)">(.*?)</tr>', section)
    assert [p for p, _ in rows] == [s["player"] for s in results["standings"]]
    for (_, row), s in zip(rows, results["standings"], strict=True):
        cells = _cells(row)
        assert cells[2] == str(s["place_points"]) and cells[5] == str(s["tables"]) and cells[6] == str(s["wins"])
    assert "as results.json records them" in section
    logs = {t: log.events for t, log in read_archive(tournament / "archive.jsonl").items()}
    expected = _expected_places(logs)  # the record agrees with the fold
    for s in results["standings"]:
        assert s["place_points"] == expected[s["player"]]["points"]
    for t in results["tables"]:
        assert (tournament / "replay" / f"{t['table']}.html").is_file()
    assert "duplicate" in page.split('<span class="sub">', 1)[1].split("</span>", 1)[0]


# --- an archive of both games ----------------------------------------------------------------


def test_both_games_each_with_their_own_sections(
    tmp_path_factory: pytest.TempPathFactory, logs: dict[str, list[Event]]
) -> None:
    """The Skat sections of a mixed archive are exactly those of its Skat tables alone."""
    from .localrun import make_run

    run = make_run(tmp_path_factory.mktemp("skat"), every=25)
    skat_only = tmp_path_factory.mktemp("skat-only") / "archive.jsonl"
    skat_only.write_bytes((run / "archive.jsonl").read_bytes())
    both = tmp_path_factory.mktemp("both") / "archive.jsonl"
    both.write_bytes((run / "archive.jsonl").read_bytes() + write_archive(both.with_suffix(".t31"), logs).read_bytes())
    for path in (skat_only, both):
        assert cli_main(["report", str(path)]) == 0
    alone = (skat_only.parent / "report.html").read_text()
    mixed = (both.parent / "report.html").read_text()
    for section in ("standings", "running-score", "games", "tables"):
        assert _section(mixed, section) == _section(alone, section)
    assert "t31-standings" not in alone and "t31-standings" in mixed
    skat_tables = len(read_archive(run / "archive.jsonl"))
    assert f"{skat_tables + len(logs)} tables ({skat_tables} Skat, {len(logs)} Thirty-one)" in mixed
    replays = {p.stem for p in (both.parent / "replay").iterdir()}
    assert set(logs) <= replays and len(replays) == skat_tables + len(logs)
