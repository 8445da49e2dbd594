"""``skat report RUN``: the page holds what the run says, links land where they claim, and a
real browser draws it.

The run is played through the pure engine and written by the tournament runner's own
``write_results`` (``localrun``), with one entrant timing out now and then. Expected numbers
come from the files and the events, never from the report's own code.

Set ``SKAT_REPORT_SCREENSHOT=/some/path.png`` to keep the browser's screenshot of the page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from protocol.events import DealDealt, DealScored, PlayerTimedOut
from skatbus.cli import main as cli_main
from skatbus.replay import read_archive

from .localrun import make_run

SCREENSHOT_ENV = "SKAT_REPORT_SCREENSHOT"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("runs"), every=25)
    assert cli_main(["report", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def page(run_dir: Path) -> str:
    return (run_dir / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def results(run_dir: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((run_dir / "results.json").read_text())  # type: ignore[no-any-return]


def _section(page: str, section_id: str) -> str:
    return page.split(f'id="{section_id}"', 1)[1].split("</section>", 1)[0]


def test_the_page_is_self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and " src=" not in page
    assert page.count("<svg") >= 2 and "<style>" in page


def test_standings_in_order_with_intervals(page: str, results: dict) -> None:  # type: ignore[type-arg]
    standings = _section(page, "standings")
    rows = re.findall(r'<tr data-player="([^"]+)">(.*?)</tr>', standings)
    assert [p for p, _ in rows] == [s["player"] for s in results["standings"]]
    for (_, row), s in zip(rows, results["standings"]):
        assert f"± {s['ci95']:.1f}" in row and f"{s['per_deal']:+.1f}" in row
        assert 'class="interval"' in row and 'class="ci"' in row


def test_running_score_ends_at_each_total(page: str, results: dict) -> None:  # type: ignore[type-arg]
    chart = page.split('<svg id="running"', 1)[1].split("</svg>", 1)[0]
    lines = re.findall(r'<polyline class="series" data-label="([^"]+)" points="([^"]+)"', chart)
    assert sorted(p for p, _ in lines) == sorted(s["player"] for s in results["standings"])
    deals = sum(t["deals"] for t in results["tables"])
    for player, points in lines:
        assert len(points.split()) == deals + 1  # a point before the first deal and after each
        total = next(s["seeger_fabian"] for s in results["standings"] if s["player"] == player)
        assert f"<title>{player}: {total}</title>" in chart
    assert chart.count('<line class="marker"') == len(results["tables"])  # a table starting


def test_results_by_game_type(run_dir: Path, page: str) -> None:
    games = _section(page, "games")
    declared: dict[tuple[str, str], list[int]] = {}
    names = {"G": "grand", "C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds", "N": "null"}
    for log in read_archive(run_dir / "archive.jsonl").values():
        players = log.events[0].players  # type: ignore[union-attr]
        for e in log.events:
            if isinstance(e, DealScored) and e.result.kind == "game":
                r = e.result
                tally = declared.setdefault((players[r.declarer], names[r.game.game]), [0, 0])  # type: ignore[index, union-attr]
                tally[0] += r.won
                tally[1] += 1
    columns = re.findall(r"<th>([a-z]+)</th>", games)[1:]
    for row in re.findall(r"<tr><td><span class=\"swatch\"[^>]*></span>(.*?)</td>(.*?)</tr>", games):
        player, cells = row
        for column, cell in zip(columns, re.findall(r"<td[^>]*>(.*?)</td>", cells)):
            if (player, column) in declared:
                won, played = declared[(player, column)]
                assert f"{won}/{played}<" in cell, (player, column, cell)


def test_time_outs_counted_and_linked_to_the_moment(run_dir: Path, page: str) -> None:
    logs = read_archive(run_dir / "archive.jsonl")
    counted: dict[str, int] = {}
    for log in logs.values():
        for e in log.events:
            if isinstance(e, PlayerTimedOut):
                player = log.events[0].players[e.seat]  # type: ignore[union-attr]
                counted[player] = counted.get(player, 0) + 1
    assert counted.get("random", 0) > 0 and set(counted) == {"random"}
    section = _section(page, "time-outs")
    assert f"<td class='num'>{counted['random']}</td>" in section
    links = re.findall(r'<a href="(replay/[^"#]+\.html)#deal=(\d+)&amp;step=(\d+)">', section)
    assert len(links) == counted["random"]
    for href, deal, step in links:
        table = Path(href).stem
        events = logs[table].events
        start = next(i for i, e in enumerate(events) if isinstance(e, DealDealt) and e.deal == int(deal))
        assert isinstance(events[start + int(step)], PlayerTimedOut)  # the step is the time-out itself
        assert (run_dir / href).is_file()


def test_every_table_has_a_replay_page_and_kontra_is_marked(run_dir: Path, page: str, results: dict) -> None:  # type: ignore[type-arg]
    tables = _section(page, "tables")
    for t in results["tables"]:
        assert f'href="replay/{t["table"]}.html"' in tables
        assert (run_dir / "replay" / f"{t['table']}.html").is_file()
    kontra = sum(
        isinstance(e, DealScored) and e.result.kontra
        for log in read_archive(run_dir / "archive.jsonl").values()
        for e in log.events
    )
    assert kontra and tables.count('<span class="badge kontra">Kontra</span>') == kontra


def test_a_missing_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no such run directory" in err
    (tmp_path / "half").mkdir()
    assert cli_main(["report", str(tmp_path / "half")]) == 2
    assert "no results.json" in capsys.readouterr().err


# --- a real browser ----------------------------------------------------------------------------


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _browser(*mode: str, profile: str, size: str = "1200,800") -> subprocess.CompletedProcess[str]:
    exe = _chromium()
    assert exe is not None
    return subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            f"--window-size={size}",
            *mode,
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_the_report_in_a_real_browser(tmp_path: Path, run_dir: Path, results: dict) -> None:  # type: ignore[type-arg]
    if _chromium() is None:
        pytest.skip("chromium not found: apt-get install -y chromium (Debian) to run the browser test")
    url = (run_dir / "report.html").resolve().as_uri()
    shot = tmp_path / "report.png"
    with tempfile.TemporaryDirectory() as profile:
        dom = _browser("--dump-dom", url, profile=profile)
        assert dom.returncode == 0, dom.stderr[-2000:]
        shown = _browser(f"--screenshot={shot}", url, profile=profile, size="1200,1900")
        assert shown.returncode == 0 and shot.exists(), shown.stderr[-2000:]
        # A time-out link opens the replay page at the time-out.
        href = re.findall(r'href="(replay/[^"]+#deal=\d+&amp;step=\d+)"', dom.stdout)[0].replace("&amp;", "&")
        replay = _browser("--dump-dom", f"{run_dir.resolve().as_uri()}/{href}", profile=profile)
        assert replay.returncode == 0, replay.stderr[-2000:]
    html = dom.stdout
    assert '<svg id="running"' in html and html.count('<polyline class="series"') == len(results["standings"])
    for s in results["standings"]:
        assert f'<tr data-player="{s["player"]}">' in html
    step = href.rsplit("step=", 1)[1]
    assert f'data-step="{step}"' in replay.stdout and "timed out" in replay.stdout.split('id="event"', 1)[1][:200]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1200, 1900)
    assert len(png) > 40_000  # drawn: a blank page compresses to a few kB
    if os.environ.get(SCREENSHOT_ENV):
        keep = Path(os.environ[SCREENSHOT_ENV])
        keep.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, keep)
