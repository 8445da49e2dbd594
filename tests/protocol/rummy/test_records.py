"""Rummy records (protocol.rummy.records): the fixtures of tests/data/rummy judged through the
engine, a record written from a played game and read back, and every kind of fault named by
its deal, action and reason in one line (RECORDS.md, the rummy part)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from protocol.rummy import RummyRules, legal, new_match, play, start_deal
from protocol.rummy.records import (
    DEAL_FIELDS,
    GAME_FIELDS,
    RefusedAt,
    check,
    compare,
    parse_line,
    read_record,
    record_of,
    replay,
    written_rules,
)

DATA = Path(__file__).parent.parent.parent / "data" / "rummy"


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]


def notes(name: str) -> list[Any]:
    return [pytest.param(r, id=r["note"][:50]) for r in load(name)]


@pytest.mark.parametrize("record", notes("agree"))
def test_agreeing_fixtures(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == "agree", verdict.describe()
    if record.get("expect") == "incomplete":
        assert verdict.stopped and "not scored" in verdict.describe()


@pytest.mark.parametrize("record", notes("refused"))
def test_refused_fixtures(record: dict[str, Any]) -> None:
    """The same deal and position as the oracle's fixtures expect (they count from 0)."""
    expect = record["expect"]
    with pytest.raises(RefusedAt) as info:
        replay(record)
    exc = info.value
    deal = None if exc.deal is None else exc.deal - 1
    action = None if exc.action is None else exc.action - 1
    assert (deal, action) == (expect["deal"], expect["position"]), exc.reason
    verdict = check(record)
    assert verdict.status == "error" and "\n" not in verdict.reason
    if exc.action is not None:
        assert verdict.reason.startswith(f"deal {exc.deal}, action {exc.action} ")


@pytest.mark.parametrize("record", notes("differ"))
def test_differing_fixtures(record: dict[str, Any]) -> None:
    verdict = check(record)
    assert verdict.status == "differ"
    assert [d.field for d in verdict.differences] == record["expect"]
    assert verdict.describe().startswith("differs: " + record["expect"][0] + ": record ")


def played(seed: int, **options: Any) -> tuple[dict[str, Any], Any]:
    """A game played to its end by random legal actions, and its record."""
    rng = random.Random(seed)
    rules = RummyRules(**options)
    match = new_match(rules)
    decks: list[list[str]] = []
    lines: list[list[tuple[int, Any]]] = []
    while not match.complete:
        deck = list(rules.pack)
        rng.shuffle(deck)
        match = start_deal(match, deck)
        decks.append(deck)
        lines.append([])
        while match.deal is not None:
            action = rng.choice(legal(match.deal))
            lines[-1].append((match.deal.seat, action))
            match = play(match, action)
    return record_of(match, ["ann", "bob", "cyd"][: rules.players], decks, lines), match


@pytest.mark.parametrize(
    "options",
    [
        {"variant": "a", "players": 3, "target": 60},
        {"variant": "b", "players": 2, "packs": 2, "target": 100},
        {"variant": "c", "players": 3, "joker_doubling": "net", "target": 80},
        {"variant": "d", "players": 2, "ace_joins_low": False, "max_deals": 2},
    ],
)
def test_a_played_game_is_written_and_agrees(options: dict[str, Any]) -> None:
    record, match = played(7, **options)
    assert list(record) == ["game", "players", "rules", "deals", "result"]
    assert list(record["deals"][0]) == ["dealer", "deck", "actions", "result"]
    assert list(record["deals"][0]["result"]) == list(DEAL_FIELDS)
    assert list(record["result"]) == list(GAME_FIELDS) and record["result"]["complete"] is True
    line = json.dumps(record, ensure_ascii=False)
    verdict = check(parse_line(line))
    assert verdict.status == "agree" and verdict.complete and verdict.deals == len(match.results), verdict.describe()
    assert record["rules"]["packs"] in (1, 2) and record["rules"]["layoff_credit"] in ("layer", "owner")
    assert RummyRules(**record["rules"]) == match.rules.resolved()
    assert all(not a.split(" ", 1)[1].startswith("draw") for d in record["deals"] for a in d["actions"])


def test_written_rules_spell_out_the_variant_defaults() -> None:
    assert written_rules(RummyRules(variant="b", players=5))["packs"] == 2
    assert written_rules(RummyRules(variant="a"))["layoff_credit"] == "layer"


def test_a_deal_in_progress_is_written_without_a_result() -> None:
    rules = RummyRules(variant="c", players=2)
    match = start_deal(new_match(rules), rules.pack)
    assert match.deal is not None
    action = legal(match.deal)[-1]
    seat = match.deal.seat
    match = play(match, action)
    record = record_of(match, ["ann", "bob"], [rules.pack], [[f"{seat} {action}"]])
    assert "result" not in record["deals"][0]
    verdict = check(record)
    assert verdict.status == "agree" and verdict.stopped == "deal 1 stops after action 1"
    assert verdict.describe() == "agree (incomplete: deal 1 stops after action 1, not scored)"
    with pytest.raises(ValueError, match="deck and actions"):
        record_of(match, ["ann", "bob"], [], [])


def base_record() -> dict[str, Any]:
    return played(3, variant="c", players=3, max_deals=2)[0]


def refusal(record: dict[str, Any]) -> tuple[int | None, int | None, str]:
    with pytest.raises(RefusedAt) as info:
        replay(record)
    return info.value.deal, info.value.action, info.value.reason


def test_faults_name_their_place() -> None:
    rec = base_record()
    m = copy.deepcopy(rec)
    m["deals"][0]["actions"].insert(2, "9 discard C2")
    assert refusal(m)[:2] == (1, 3) and "the seat 0 to 2" in refusal(m)[2]
    m = copy.deepcopy(rec)
    m["deals"][0]["actions"][0] = m["deals"][0]["actions"][0].split()[0] + " fold"
    deal, action, reason = refusal(m)
    assert (deal, action) == (1, 1) and reason.startswith('deal 1, action 1 "') and "not an action" in reason
    m = copy.deepcopy(rec)
    m["deals"][0]["deck"][0] = m["deals"][0]["deck"][1]
    deal, action, reason = refusal(m)
    assert (deal, action) == (1, None) and "twice" in reason and "missing" in reason
    m = copy.deepcopy(rec)
    del m["deals"][0]["actions"][-1]
    assert refusal(m)[0:2] == (1, len(m["deals"][0]["actions"]) + 1)
    assert "only a record's last deal may stop" in refusal(m)[2]
    m = copy.deepcopy(rec)
    m["deals"].append(copy.deepcopy(rec["deals"][0]))
    assert refusal(m)[0:2] == (3, None) and "the game ended after deal 2 (M26)" in refusal(m)[2]
    m = copy.deepcopy(rec)
    m["deals"][0]["actions"].append(m["deals"][0]["actions"][-1])
    deal, action, reason = refusal(m)
    assert (deal, action) == (1, len(m["deals"][0]["actions"])) and "the deal is over" in reason
    for bad, text in (
        ({**rec, "game": "thirty-one"}, "game"),
        ({**rec, "players": ["ann", "ann", "cyd"]}, "twice"),
        ({**rec, "rules": {"variant": "e"}}, "rules:"),
        ({**rec, "rules": {"variant": "c", "packs": 2}}, "M45"),
        ({**rec, "deals": {}}, "deals"),
        ([], "JSON object"),
    ):
        assert check(bad).status == "error" and text in check(bad).reason, check(bad).reason


def test_differences_one_field_each() -> None:
    rec = base_record()
    m = copy.deepcopy(rec)
    m["deals"][0]["result"]["score"][1] += 1
    m["deals"][0]["dealer"] = 0
    m["result"]["complete"] = 1  # true is not 1
    fields = [d.field for d in check(m).differences]
    assert fields == ["deals[0].dealer", "deals[0].result.score", "result.complete"]
    m = copy.deepcopy(rec)
    del m["deals"][0]["result"]["out"]
    d = check(m).differences
    assert [x.field for x in d] == ["deals[0].result.out"] and str(d[0]).startswith(
        "deals[0].result.out: record (missing)"
    )
    assert compare(read_record(rec), replay(rec)) == []
    assert check(m).to_json()["status"] == "differ"


@pytest.mark.parametrize("record", notes("played"))
def test_played_fixtures_agree(record: dict[str, Any]) -> None:
    """Whole games of every variant the engine played (make_played.py) still agree."""
    verdict = check(record)
    assert verdict.status == "agree" and verdict.complete, verdict.describe()
