"""``skat report`` checks results.json against the archive, the record of what was played.

The runs are real (``fair_runs``: the pure engine and the runner's own ``write_results``). A test
edits results.json as someone tidying up the numbers would, and the report must say so at the
top, field by field, and show what the archive says (exit 1: written, but not to be trusted
blindly); an untouched run reports as before (exit 0).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skatbus.cli import main
from skatbus.signing import load_or_create_key

from .fair_runs import Built, build, skat_legacy, thirty_one_many


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    out = tmp_path_factory.mktemp("runs")
    key = load_or_create_key(out / "keys" / "signing.nk")
    return {"skat": build(out, skat_legacy(), key, "cid"), "thirty-one": build(out, thirty_one_many(), key, "p2")}


@pytest.fixture
def copy(built: dict[str, Built], tmp_path: Path) -> Callable[[str], Path]:
    def copied(name: str) -> Path:
        target = tmp_path / built[name].folder.name
        shutil.copytree(built[name].folder, target)
        return target

    return copied


def _edit(folder: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    path = folder / "results.json"
    results = json.loads(path.read_text())
    original = json.loads(path.read_text())
    change(results)
    path.write_text(json.dumps(results, indent=2))
    return original


def _report(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["report", str(folder), "--no-replays"])
    said = capsys.readouterr()
    return code, said.err, (folder / "report.html").read_text()


def _standings_rows(page: str) -> str:
    return page.split('id="standings"', 1)[1].split("</section>", 1)[0]


@pytest.mark.parametrize("name", ["skat", "thirty-one"])
def test_an_untouched_run_reports_as_before(
    copy: Callable[[str], Path], name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err, page = _report(copy(name), capsys)
    assert code == 0 and "disagrees" not in err
    assert 'id="disagrees"' not in page


def test_an_edited_skat_standing_is_named_and_the_archive_shown(
    copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy("skat")

    def inflate(results: dict[str, Any]) -> None:
        results["standings"][1]["seeger_fabian"] += 500

    original = _edit(folder, inflate)
    row = original["standings"][1]
    code, err, page = _report(folder, capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "skat report: results.json disagrees with the archive; the report shows the archive's:"
    want = (
        f"results.json: standings of {row['player']}: seeger_fabian {row['seeger_fabian'] + 500} "
        f"but the archive gives {row['seeger_fabian']}"
    )
    assert f"  {want}" in lines
    assert all(len(line) <= 120 for line in lines)
    top = page.index('id="disagrees"')
    assert top < page.index('id="standings"')  # said at the top
    assert want in page
    rows = _standings_rows(page)
    assert str(row["seeger_fabian"] + 500) not in rows  # the edited number is not shown as a standing
    assert "Standings from the archive (results.json disagrees)" in page


def test_an_edited_table_result_is_named(copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy("skat")

    def change(results: dict[str, Any]) -> None:
        results["tables"][0]["totals"][0] += 30

    original = _edit(folder, change)
    table = original["tables"][0]
    wrong = [table["totals"][0] + 30, *table["totals"][1:]]
    code, err, _ = _report(folder, capsys)
    assert code == 1
    assert (
        f"  results.json: table {table['table']} totals {json.dumps(wrong)} but the archive gives "
        f"{json.dumps(table['totals'])}"
    ) in err.splitlines()


def test_an_edited_thirty_one_place_is_named(copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy("thirty-one")

    def change(results: dict[str, Any]) -> None:
        results["standings"][0]["wins"] += 2

    original = _edit(folder, change)
    row = original["standings"][0]
    code, err, page = _report(folder, capsys)
    assert code == 1
    want = f"results.json: standings of {row['player']}: wins {row['wins'] + 2} but the archive gives {row['wins']}"
    assert f"  {want}" in err.splitlines() and want in page


def test_many_differences_are_counted_after_a_few(
    copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy("skat")

    def change(results: dict[str, Any]) -> None:
        for table in results["tables"]:
            table["seeger_fabian"] = [v + 1 for v in table["seeger_fabian"]]
            table["totals"] = [v + 1 for v in table["totals"]]
        for row in results["standings"]:
            row["list_points"] += 1

    _edit(folder, change)
    code, err, page = _report(folder, capsys)
    lines = err.splitlines()
    assert code == 1 and lines[-1].startswith("  ... and ") and lines[-1].endswith(" more")
    assert len(lines) == 1 + 8 + 1  # the heading, 8 fields, how many more
    assert "... and " in page


def test_a_damaged_archive_is_not_taken_as_the_truth(
    copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy("skat")
    archive = folder / "archive.jsonl"
    lines = archive.read_bytes().splitlines(keepends=True)
    archive.write_bytes(b"".join([*lines[:-1], lines[-1][: len(lines[-1]) // 2]]))
    code, err, page = _report(folder, capsys)
    assert code == 0 and "disagrees" not in err
    assert (
        "skat report: warning: results.json is not checked against the archive: 1 table(s) cannot be read whole" in err
    )


def test_a_table_of_a_newer_skatbus_is_not_a_disagreement(
    copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A table that cannot be read (its table_opened is of a newer skatbus) is missing from the
    archive's standings: that is no truth to hold results.json against (exit 0, a warning)."""
    folder = copy("skat")
    archive = folder / "archive.jsonl"
    lines = archive.read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[0])
    entry["event"]["type"] = "table_opened/9"
    archive.write_bytes(b"".join([json.dumps(entry).encode() + b"\n", *lines[1:]]))
    code, err, page = _report(folder, capsys)
    assert code == 0 and "disagrees" not in err, err
    assert "results.json is not checked against the archive: 1 table(s) cannot be read whole" in err
