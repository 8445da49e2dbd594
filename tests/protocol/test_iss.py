"""Real ISS game records replayed through the engine must reproduce the published results.

The records and their provenance are in tests/data/iss (SOURCES.md there says where each came from).
The expected classification of every line comes from provenance.tsv, which was written
independently of this engine.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from protocol.skat.iss import IssFormatError, check, parse_record, parse_result, read_records, replay

DATA = Path(__file__).parents[1] / "data" / "iss"
LINES = (DATA / "iss-records.sgf").read_text().splitlines()
PROVENANCE = list(csv.DictReader((DATA / "provenance.tsv").open(), delimiter="\t"))

# provenance.tsv class -> what the checker must say about the record.
EXPECTED_STATUS = {
    "complete (30 cards)": ("agree", None),
    "shortened (show cards/resign)": ("agree", None),
    "ended early by rule (3 cards)": ("agree", None),
    "passed": ("agree", None),
    "penalty (timeout/left before contract)": ("skipped", "penalty"),
    "timeout": ("skipped", "timeout"),
    "corrupt (?? move)": ("skipped", "corrupt"),
}


def test_every_line_has_provenance() -> None:
    assert len(LINES) == len(PROVENANCE) == 47


@pytest.mark.parametrize("row", PROVENANCE, ids=lambda r: f"line{r['line']}-{r['game_id']}")
def test_record_reproduces_published_result(row: dict[str, str]) -> None:
    record = parse_record(LINES[int(row["line"]) - 1])
    assert record.game_id == row["game_id"]
    verdict = check(record)
    status, reason = EXPECTED_STATUS[row["class"]]
    assert verdict.status == status, (verdict.reason, verdict.differences)
    if reason:
        assert verdict.reason.startswith(reason)
    if status == "agree" and row["class"] != "passed":
        # Compare field by field with provenance.tsv as well, not only with the parsed R[...].
        mine = record.result
        assert mine is not None
        assert mine.declarer == int(row["R_declarer"])
        assert mine.value == int(row["R_value"])
        assert mine.points == int(row["R_decl_points"])
        assert mine.tricks == int(row["R_decl_tricks"])


def test_resigned_records_end_by_two_resignations() -> None:
    resigned = [r for r in PROVENANCE if r["R_resigned"] == "1"]
    assert resigned, "the data set holds records ended by resignation"
    for row in resigned:
        deal = replay(parse_record(LINES[int(row["line"]) - 1]))
        assert deal.end_reason == "defenders_resigned"


def test_split_declaration_form_is_read() -> None:
    """Newer records put the declaration and the discard in two moves (ID 10327743)."""
    line = next(l for l in LINES if "ID[10327743]" in l)
    record = parse_record(line)
    assert check(record).status == "agree"


def test_result_parser() -> None:
    r = parse_result("d:2 loss v:-54 m:-2 bidok p:59 t:4 s:0 z:0 p0:0 p1:0 p2:0 l:-1 to:-1 r:0")
    assert (r.declarer, r.outcome, r.value, r.matadors, r.overbid, r.points, r.tricks) == (
        2,
        "loss",
        -54,
        -2,
        False,
        59,
        4,
    )
    assert parse_result("passed").passed


@pytest.mark.parametrize(
    "line",
    [
        "garbage",
        "(;GM[Skat]ID[1] no moves ;)",
    ],
)
def test_not_a_record_is_reported_not_crashed(line: str) -> None:
    (item,) = list(read_records([line]))
    assert isinstance(item, IssFormatError)


def test_broken_moves_are_classified_corrupt() -> None:
    good = next(l for l in LINES if "ID[541932]" in l)
    broken = good.replace("0 SA 1 S7", "0 XX 1 S7")
    record = parse_record(broken)
    assert record.status == "corrupt"
    assert check(record).status == "skipped"


def test_illegal_move_is_an_error_verdict() -> None:
    good = next(l for l in LINES if "ID[541932]" in l)
    # Seat 1 plays a card that seat 0 holds: the replay must refuse it.
    broken = good.replace("0 SA 1 S7", "0 SA 1 HA")
    verdict = check(parse_record(broken))
    assert verdict.status == "error"
    assert "not in your hand" in verdict.reason
